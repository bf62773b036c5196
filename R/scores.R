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
#' @section Normalised scores: `mi_scores(normalize = )` divides \eqn{I(X;Y)} by an entropy,
#' which makes features of many and of few values comparable. The ratios have no unit (`units`
#' does not change them) and are 0 where the entropy is 0:
#' \describe{
#'   \item{`"su"`}{symmetric uncertainty, \eqn{2 I(X;Y) / (H(X) + H(Y))}, in \eqn{[0, 1]}:
#'     FSelectorRcpp's `information_gain(type = "symuncert")`.}
#'   \item{`"nmi"`}{normalised mutual information, \eqn{I(X;Y) / H(X,Y)}, in \eqn{[0, 1]}:
#'     praznik's normalisation (`nmiMatrix()`; the criterion of `njmiScores()` with no
#'     \eqn{Z}).}
#'   \item{`"gain_ratio"`}{the gain ratio \eqn{I(X;Y) / H(X)}: FSelectorRcpp's
#'     `information_gain(type = "gainratio")`, which gives `NaN` for a constant feature where
#'     this gives 0 (as FSelector's `gain.ratio()`).}
#' }
#' `"none"` (the default) is \eqn{I(X;Y)} itself, FSelectorRcpp's `type = "infogain"` (which
#' reports nats).
#'
#' @inheritParams select_features
#' @param z The conditioning variable: one feature of `x` (a name, or a column index), or a
#'   vector with one value per sample (double values are binned into `nbins` equal-width
#'   bins; integer values as integer columns are, see [select_features()], with `categorical
#'   = TRUE` or `FALSE` applying to them; logical, factor and character values are
#'   categories).
#' @param normalize `"none"` (the default) for \eqn{I(X;Y)}, or `"su"`, `"nmi"` or
#'   `"gain_ratio"` for its ratio to an entropy: see Normalised scores. Ratios of plug-in
#'   entropies, so only with `estimator = "emp"`.
#' @param estimator For `mi_scores()`: the estimator of the entropies that make up
#'   \eqn{I(X;Y) = H(X) + H(Y) - H(X,Y)}, those of infotheo, for \eqn{m} observed values with
#'   counts \eqn{n_i} summing to \eqn{N}:
#'   \describe{
#'     \item{`"emp"`}{the plug-in estimate from the empirical distribution (the default);}
#'     \item{`"mm"`}{Miller-Madow: each entropy plus \eqn{(m - 1)/2N} nats;}
#'     \item{`"sg"`}{infotheo's "Schurmann-Grassberger", the posterior mean of the entropy under a
#'       symmetric Dirichlet prior \eqn{a}, \eqn{\sum_i (n_i + a)(\psi(N + ma + 1) - \psi(n_i + a + 1))
#'       / (N + ma)}, with \eqn{a = 1/m} as infotheo's code computes it (an integer division: 0
#'       whenever \eqn{m > 1}), so \eqn{\psi(N + 1) - \sum_i (n_i/N) \psi(n_i + 1)};}
#'     \item{`"shrink"`}{the same posterior mean with \eqn{a = \lambda/(1 - \lambda) N/m} for
#'       the James-Stein shrinkage intensity \eqn{\lambda = m(N^2 - \sum_i n_i^2) / ((N - 1)(m
#'       \sum_i n_i^2 - N^2))}, and \eqn{\log m} when \eqn{\lambda \ge 1} (a constant variable
#'       has entropy 0, where infotheo gives `NaN`). It depends on each whole table, so it is
#'       estimated table by table on the CPU: `backend = "gpu"` is an error and `"auto"` takes
#'       the CPU.}
#'   }
#'   Each equals `infotheo::mutinformation(X, Y, method = estimator)` (in nats) on the same
#'   codes, including its rule that a negative estimate (which the bias corrections can give) is
#'   reported as 0. `"emp"`, `"mm"` and `"sg"` are exact from integer counts, CPU and GPU bitwise
#'   equal.
#' @param quiet `TRUE` shows no progress bar and no messages (such as a note about dropped
#'   class levels). The scores take one pass over the data and show no bar of their own; a
#'   `discretize` method fitted here, or an on-disk assay coded in blocks, may. See
#'   [fsgpu_progress].
#' @return A data frame (of class `fsgpu_scores`, which prints where the job ran first) in column
#'   order with `feature` (name), `index` (1-based) and `mi`, `cmi` or `jmi` (in `units`), with
#'   attributes `nbins`, `units`, `estimator`, `backend`, `run` (where the job ran and why, as in
#'   [select_features()]) and, with `discretize`, `discretization`.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 5), 100, 5, dimnames = list(NULL, paste0("g", 1:5)))
#' x[, 2] <- x[, 2] + 2 * (y == "b")
#' x[, 3] <- x[, 2] + rnorm(100, sd = 0.2)
#' mi_scores(x, y, backend = "cpu")
#' # Miller-Madow's bias correction, as infotheo's estimator = "mm"
#' mi_scores(x, y, backend = "cpu", estimator = "mm")
#' # given g2, its near-copy g3 adds little
#' cmi_scores(x, y, z = "g2", backend = "cpu")
#' jmi_scores(x, y, z = "g2", backend = "cpu")
#' # symmetric uncertainty: I(X;Y) relative to the entropies of X and Y
#' mi_scores(x, y, normalize = "su", backend = "cpu")
#' @export
mi_scores <- function(x, ...) UseMethod("mi_scores")

#' @rdname mi_scores
#' @export
mi_scores.default <- function(x, y, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                              units = c("bits", "nats"), quiet = FALSE, discretize = NULL,
                              normalize = c("none", "su", "nmi", "gain_ratio"),
                              estimator = c("emp", "mm", "sg", "shrink"), categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning,
                                           defer = is.null(discretize)), "mi", NULL, nbins, backend, threads, devices,
                             units, quiet, discretize, normalize = normalize, estimator = estimator))
}

#' @rdname mi_scores
#' @export
mi_scores.SummarizedExperiment <- function(x, class, assay = NULL, nbins = NULL, backend = NULL, threads = NULL,
                                           devices = NULL, units = c("bits", "nats"), quiet = FALSE,
                                           discretize = NULL, normalize = c("none", "su", "nmi", "gain_ratio"),
                                           estimator = c("emp", "mm", "sg", "shrink"), categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning,
                                              defer = is.null(discretize)), "mi", NULL, nbins, backend, threads,
                             devices, units, quiet, discretize, normalize = normalize, estimator = estimator))
}

#' @rdname mi_scores
#' @export
cmi_scores <- function(x, ...) UseMethod("cmi_scores")

#' @rdname mi_scores
#' @export
cmi_scores.default <- function(x, y, z, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                               units = c("bits", "nats"), quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning,
                                           defer = is.null(discretize)), "cmi", z, nbins, backend, threads, devices,
                             units, quiet, discretize))
}

#' @rdname mi_scores
#' @export
cmi_scores.SummarizedExperiment <- function(x, class, z, assay = NULL, nbins = NULL, backend = NULL,
                                            threads = NULL, devices = NULL, units = c("bits", "nats"),
                                            quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning,
                                              defer = is.null(discretize)), "cmi", z, nbins, backend, threads,
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
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_input(x, y, binning = binning,
                                           defer = is.null(discretize)), "jmi", z, nbins, backend, threads, devices,
                             units, quiet, discretize))
}

#' @rdname mi_scores
#' @export
jmi_scores.SummarizedExperiment <- function(x, class, z, assay = NULL, nbins = NULL, backend = NULL,
                                            threads = NULL, devices = NULL, units = c("bits", "nats"),
                                            quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_scores(prepare_se_input(x, class, assay, binning = binning,
                                              defer = is.null(discretize)), "jmi", z, nbins, backend, threads,
                             devices, units, quiet, discretize))
}

# What mi_scores(normalize = ) offers; given all of them (the default), "none".
normalizations <- c("none", "su", "nmi", "gain_ratio")

run_scores <- function(input, kind, z, nbins, backend, threads, devices, units, quiet, discretize,
                       normalize = "none", estimator = "emp") {
  normalize <- resolve_normalize(normalize)
  estimator <- match_estimator(estimator)
  if (normalize != "none" && estimator != "emp") {
    stop("normalize = \"", normalize, "\" is a ratio of plug-in entropies: use estimator = \"emp\"", call. = FALSE)
  }
  # With deferred checks, z's message (z_values()) waits for x's, which follows the engine.
  force(input)  # its own messages (prepare_input()) are said now
  z_said <- list()
  z <- if (kind != "mi") withCallingHandlers(resolve_z(z, input), message = function(m) {
    if (is.null(input$bin_above)) return()
    z_said[[length(z_said) + 1L]] <<- m
    invokeRestart("muffleMessage")
  })
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- cpu_for_estimator(resolve_run(input, nbins, backend, threads, devices, units, steps = 1), backend, estimator)
  elapsed <- system.time(
    values <- if (kind == "mi") {
      fsgpu_mi_scores(input$x, input$y, length(input$classes), run$nbins, run$backend, run$threads, run$devices,
                      run$memory_limit, normalize, estimator, input$bin_above)
    } else {
      fsgpu_conditional_scores(input$x, input$y, length(input$classes), z$feature, z$column, kind, run$nbins,
                               run$backend, run$threads, run$devices, run$memory_limit, input$bin_above)
    },
    gcFirst = FALSE
  )[["elapsed"]]
  # Deferred checks (prepare_input(defer = TRUE)): the glue's report, as an attribute.
  input <- finish_input(input, attr(values, "input"))
  attr(values, "input") <- NULL
  for (m in z_said) message(m)
  out <- data.frame(feature = input$feature_names, index = seq_len(input$n_features), stringsAsFactors = FALSE)
  # infotheo::mutinformation(X, Y) reports a negative bias-corrected estimate as 0.
  if (estimator != "emp") values <- pmax(values, 0)
  # Normalised scores are ratios without unit, named after the normalisation.
  if (normalize == "none") out[[kind]] <- values * run$scale else out[[normalize]] <- values
  # A data frame still (add_results() and user code take it as one), whose class prints the run.
  structure(out, class = c("fsgpu_scores", "data.frame"), nbins = run$nbins, units = run$units, estimator = estimator,
            backend = run$backend, run = backend_used(run$backend, run$threads, run$devices, elapsed, run$why_cpu,
                                                      notes = input$notes),
            discretization = input$discretization)
}

resolve_normalize <- function(normalize) {
  if (identical(normalize, normalizations)) return("none")
  if (!is.character(normalize) || length(normalize) != 1 || !normalize %in% normalizations)
    stop("normalize must be one of ", quote_list(normalizations), call. = FALSE)
  normalize
}

#' @exportS3Method print fsgpu_scores
print.fsgpu_scores <- function(x, ...) {
  if (!is.null(attr(x, "run"))) cat(format(attr(x, "run")), "\n", sep = "")
  NextMethod()
}

#' @export
as.data.frame.fsgpu_scores <- function(x, ...) data_alone(x)

# The entropy estimator: one of infotheo's names (estimators.h).
estimators <- c("emp", "mm", "sg", "shrink")
match_estimator <- function(estimator) {
  if (!is.character(estimator) || !length(estimator) || anyNA(estimator) ||
      (length(estimator) > 1 && !identical(estimator, estimators)) || !estimator[1] %in% estimators)
    stop("estimator must be one of \"emp\", \"mm\", \"sg\" or \"shrink\"", call. = FALSE)
  estimator[1]
}

# The shrink estimator has no GPU form (estimators.h): a GPU asked for is an error, an automatic
# choice of the GPU takes the CPU and says why.
cpu_for_estimator <- function(run, backend, estimator) {
  if (estimator != "shrink" || run$backend != "gpu") return(run)
  if (requested_backend(backend) == "gpu")
    stop("estimator = \"shrink\" runs on the CPU only (its shrinkage intensity depends on each whole table): ",
         "use backend = \"cpu\" or \"auto\", or another estimator", call. = FALSE)
  run$backend <- "cpu"
  run$devices <- integer()
  run$why_cpu <- "estimator = \"shrink\" runs on the CPU only"
  if (!is.null(run$engine)) run$engine <- "cpu"
  run
}

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
