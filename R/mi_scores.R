# Mutual information of each feature with the class.

#' Mutual information of every feature with the class
#'
#' Computes \eqn{I(X;Y)} for every feature, the relevance that JMI's first step maximises (and
#' MIM ranks by), exactly from integer counts: CPU and GPU give bitwise-identical values.
#' Numeric columns are binned as in [select_features()].
#'
#' @inheritParams select_features
#' @return A data frame in column order with `feature` (name), `index` (1-based) and `mi`
#'   (in `units`), with attributes `nbins`, `units` and `backend`.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 5), 100, 5, dimnames = list(NULL, paste0("g", 1:5)))
#' x[, 2] <- x[, 2] + 2 * (y == "b")
#' mi_scores(x, y, backend = "cpu")
#' @export
mi_scores <- function(x, ...) UseMethod("mi_scores")

#' @rdname mi_scores
#' @export
mi_scores.default <- function(x, y, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                              units = c("bits", "nats"), ...) {
  check_dots_empty(...)
  run_mi_scores(prepare_input(x, y), nbins, backend, threads, devices, units)
}

#' @rdname mi_scores
#' @export
mi_scores.SummarizedExperiment <- function(x, class, assay = 1L, nbins = NULL, backend = NULL, threads = NULL,
                                           devices = NULL, units = c("bits", "nats"), ...) {
  check_dots_empty(...)
  run_mi_scores(prepare_se_input(x, class, assay), nbins, backend, threads, devices, units)
}

run_mi_scores <- function(input, nbins, backend, threads, devices, units) {
  run <- resolve_run(input, nbins, backend, threads, devices, units, steps = 1)
  mi <- fsgpu_mi_scores(input$x, input$y, length(input$classes), run$nbins, run$backend, run$threads,
                        run$devices, run$memory_limit)
  structure(data.frame(feature = input$feature_names, index = seq_len(input$n_features), mi = mi * run$scale,
                       stringsAsFactors = FALSE),
            nbins = run$nbins, units = run$units, backend = run$backend)
}
