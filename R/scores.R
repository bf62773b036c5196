# Information of each feature with the class: alone (mi_scores), given a variable Z
# (cmi_scores) and jointly with Z (jmi_scores). One pass over the data each.

#' Mutual information of every feature with the class
#'
#' `mi_scores()` computes \eqn{I(X;Y)} for every feature, the relevance that every criterion's
#' first step maximises (and MIM ranks by); `cmi_scores()` computes \eqn{I(X;Y|Z)}, what a
#' feature tells about the class beyond a variable \eqn{Z}; `jmi_scores()` computes
#' \eqn{I(X,Z;Y)}, what a feature and \eqn{Z} tell together. Values are exact from integer
#' counts: CPU and GPU give bitwise-identical results. Numeric columns are binned as in
#' [select_features()].
#'
#' @inheritParams select_features
#' @param z The conditioning variable: one feature of `x` (a name, or a column index), or a
#'   vector with one value per sample (double values are binned into `nbins` equal-width
#'   bins; integer values as integer columns are, see [select_features()], with `categorical
#'   = TRUE` or `FALSE` applying to them; logical, factor and character values are
#'   categories).
#' @param quiet `TRUE` shows no progress bar and no messages (such as a note about dropped
#'   class levels). The scores take one pass over the data and show no bar of their own; a
#'   `discretize` method fitted here, or an on-disk assay coded in blocks, may. See
#'   [fsgpu_progress].
#' @return A data frame (of class `fsgpu_scores`, which prints where the job ran first) in column
#'   order with `feature` (name), `index` (1-based) and `mi`, `cmi` or `jmi` (in `units`), with
#'   attributes `nbins`, `units`, `backend`, `run` (where the job ran and why, as in
#'   [select_features()]) and, with `discretize`, `discretization`.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 5), 100, 5, dimnames = list(NULL, paste0("g", 1:5)))
#' x[, 2] <- x[, 2] + 2 * (y == "b")
#' x[, 3] <- x[, 2] + rnorm(100, sd = 0.2)
#' mi_scores(x, y, backend = "cpu")
#' # given g2, its near-copy g3 adds little
#' cmi_scores(x, y, z = "g2", backend = "cpu")
#' jmi_scores(x, y, z = "g2", backend = "cpu")
#' @export
mi_scores <- function(x, ...) UseMethod("mi_scores")

#' @rdname mi_scores
#' @export
mi_scores.default <- function(x, y, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                              units = c("bits", "nats"), quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning), "mi", NULL, nbins, backend, threads, devices,
                             units, quiet, discretize))
}

#' @rdname mi_scores
#' @export
mi_scores.SummarizedExperiment <- function(x, class, assay = NULL, nbins = NULL, backend = NULL, threads = NULL,
                                           devices = NULL, units = c("bits", "nats"), quiet = FALSE,
                                           discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning), "mi", NULL, nbins, backend, threads,
                             devices, units, quiet, discretize))
}

#' @rdname mi_scores
#' @export
cmi_scores <- function(x, ...) UseMethod("cmi_scores")

#' @rdname mi_scores
#' @export
cmi_scores.default <- function(x, y, z, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                               units = c("bits", "nats"), quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning), "cmi", z, nbins, backend, threads, devices, units,
                             quiet, discretize))
}

#' @rdname mi_scores
#' @export
cmi_scores.SummarizedExperiment <- function(x, class, z, assay = NULL, nbins = NULL, backend = NULL,
                                            threads = NULL, devices = NULL, units = c("bits", "nats"),
                                            quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning), "cmi", z, nbins, backend, threads,
                             devices, units, quiet, discretize))
}

#' @rdname mi_scores
#' @export
jmi_scores <- function(x, ...) UseMethod("jmi_scores")

#' @rdname mi_scores
#' @export
jmi_scores.default <- function(x, y, z, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                               units = c("bits", "nats"), quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning), "jmi", z, nbins, backend, threads, devices, units,
                             quiet, discretize))
}

#' @rdname mi_scores
#' @export
jmi_scores.SummarizedExperiment <- function(x, class, z, assay = NULL, nbins = NULL, backend = NULL,
                                            threads = NULL, devices = NULL, units = c("bits", "nats"),
                                            quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning), "jmi", z, nbins, backend, threads,
                             devices, units, quiet, discretize))
}

run_scores <- function(input, kind, z, nbins, backend, threads, devices, units, quiet, discretize) {
  z <- if (kind != "mi") resolve_z(z, input)
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- resolve_run(input, nbins, backend, threads, devices, units, steps = 1)
  elapsed <- system.time(
    values <- if (kind == "mi") {
      fsgpu_mi_scores(input$x, input$y, length(input$classes), run$nbins, run$backend, run$threads, run$devices,
                      run$memory_limit)
    } else {
      fsgpu_conditional_scores(input$x, input$y, length(input$classes), z$feature, z$column, kind, run$nbins,
                               run$backend, run$threads, run$devices, run$memory_limit)
    },
    gcFirst = FALSE
  )[["elapsed"]]
  out <- data.frame(feature = input$feature_names, index = seq_len(input$n_features), stringsAsFactors = FALSE)
  out[[kind]] <- values * run$scale
  # A data frame still (add_results() and user code take it as one), whose class prints the run.
  structure(out, class = c("fsgpu_scores", "data.frame"), nbins = run$nbins, units = run$units,
            backend = run$backend, run = backend_used(run$backend, run$threads, run$devices, elapsed, run$why_cpu,
                                                      notes = input$notes),
            discretization = input$discretization)
}

#' @exportS3Method print fsgpu_scores
print.fsgpu_scores <- function(x, ...) {
  if (!is.null(attr(x, "run"))) cat(format(attr(x, "run")), "\n", sep = "")
  NextMethod()
}

#' @export
as.data.frame.fsgpu_scores <- function(x, ...) data_alone(x)

# z as the engine takes it: a feature of x (feature, 1-based) or one column of its own
# (column: a list holding a double vector to bin or integer categories).
resolve_z <- function(z, input) {
  if (missing(z) || is.null(z)) stop("z is missing: give a feature of x or one value per sample", call. = FALSE)
  if (length(z) == 1L && input$n_samples > 1L) return(list(feature = resolve_features(z, input, "z"), column = NULL))
  if (length(z) != input$n_samples)
    stop(sprintf("z must be one feature of x or have one value per sample (%d), not %d values", input$n_samples,
                 length(z)), call. = FALSE)
  bad <- which(is.na(z) | (is.double(z) & !is.finite(z)))
  if (length(bad))
    stop(sprintf("z has missing or infinite values; see sample%s %s", if (length(bad) > 1) "s" else "",
                 paste(utils::head(bad, 5), collapse = ", ")), call. = FALSE)
  list(feature = 0L, column = list(z_values(z, input$binning, input$n_samples)))
}
