# Information-theoretic feature selection (JMI; the FEAST family arrives with issue 3).

#' Select features by joint mutual information
#'
#' Ranks features by the joint mutual information criterion (JMI) of FEAST: the first
#' feature maximises \eqn{I(X;Y)}; each further feature maximises the sum over the features
#' already selected, \eqn{\sum_S I(X,S;Y)}. Information is computed exactly from integer
#' counts, so equal scores tie exactly (the lowest column index wins) and the CPU and GPU
#' backends return identical selections and bitwise-identical scores. The selection stops
#' early, with fewer than `k` features, when no remaining feature scores above 0 (FEAST would
#' repeat its first feature instead).
#'
#' Numeric columns are cut into `nbins` bins of equal width between their minimum and
#' maximum (the maximum goes to the last bin); integer, logical and factor columns are
#' categories and are used as they are. For sparse matrices only the stored entries are
#' visited and the zeros' counts are derived.
#'
#' @param x Samples in rows, features in columns: a numeric, integer or logical matrix, a
#'   data frame (numeric, integer, logical or factor columns), a sparse `Matrix` (such as a
#'   `dgCMatrix`), or a `SummarizedExperiment` (features are its rows, see below).
#' @param y Class labels: a factor, character, integer or logical vector with one element per
#'   sample.
#' @param k Number of features to select.
#' @param method Selection criterion; `"jmi"`.
#' @param nbins Number of equal-width bins for numeric columns. The default, `NULL`, takes
#'   the cube root of the number of samples, rounded up (as infotheo does), and at least 2:
#'   5 bins for 100 samples, 22 for 10,000.
#' @param backend `"auto"` (the GPU when one is present and the job is large), `"cpu"` or
#'   `"gpu"`. Defaults to `getOption("fsgpu.backend")`, then the environment variable
#'   `FSGPU_BACKEND`, then `"auto"`.
#' @param threads CPU threads; see [fsgpu_threads()].
#' @param devices GPU ids to split the features across (default: all, see [backend_info()]).
#' @param units `"bits"` (as FEAST) or `"nats"`.
#' @param progress Show progress on the console (default: in interactive sessions).
#' @param ... Passed on by methods.
#' @return An object of class `fsgpu_selection`: a list with `selection`, a data frame with
#'   columns `rank`, `feature` (name), `index` (column of `x`, 1-based) and `score`, in
#'   selection order, and the parameters used (`method`, `k`, `nbins`, `units`, `backend`,
#'   `threads`, `devices`), the data's shape (`n_samples`, `n_features`, `classes`), `elapsed`
#'   seconds, `timings` (seconds spent encoding the data, preparing the engine, e.g. copying
#'   codes to the GPUs, on the first step and on all later steps) and `stopped_early`. It has `print`, `as.data.frame` and `plot` methods.
#' @references Yang and Moody (1999), Data visualization and feature selection: new algorithms
#'   for non-Gaussian data. Brown, Pocock, Zhao and Lujan (2012), Conditional likelihood
#'   maximisation: a unifying framework for information theoretic feature selection, JMLR 13.
#'   Gonzalez-Dominguez, Exposito and Bolon-Canedo (2020), CUDA-JMI: acceleration of feature
#'   selection on heterogeneous systems.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 50), 100, 50, dimnames = list(NULL, paste0("g", 1:50)))
#' x[, 7] <- x[, 7] + 2 * (y == "b")
#' sel <- select_features(x, y, k = 5, backend = "cpu")
#' sel
#' as.data.frame(sel)
#' @export
select_features <- function(x, ...) UseMethod("select_features")

#' @rdname select_features
#' @export
select_features.default <- function(x, y, k = 10, method = "jmi", nbins = NULL, backend = NULL,
                                    threads = NULL, devices = NULL, units = c("bits", "nats"),
                                    progress = interactive(), ...) {
  check_dots_empty(...)
  run_selection(prepare_input(x, y), k = k, method = method, nbins = nbins, backend = backend,
                threads = threads, devices = devices, units = units, progress = progress)
}

run_selection <- function(input, k, method, nbins, backend, threads, devices, units, progress) {
  method <- match.arg(method, "jmi")
  k <- check_count(k, "k", max = input$n_features, what = "the number of features")
  run <- resolve_run(input, nbins, backend, threads, devices, units, steps = k)

  elapsed <- system.time(
    res <- fsgpu_select_jmi(input$x, input$y, length(input$classes), k, run$nbins, run$backend, run$threads,
                            run$devices, run$memory_limit, isTRUE(progress)),
    gcFirst = FALSE
  )[["elapsed"]]
  structure(list(
    selection = data.frame(rank = seq_along(res$features), feature = input$feature_names[res$features],
                           index = res$features, score = res$scores * run$scale, stringsAsFactors = FALSE),
    method = method, k = k, nbins = run$nbins, units = run$units, backend = run$backend,
    threads = run$threads, devices = run$devices,
    n_samples = input$n_samples, n_features = input$n_features, classes = input$classes,
    elapsed = elapsed, timings = res$timings, stopped_early = length(res$features) < k
  ), class = "fsgpu_selection")
}

#' @exportS3Method print fsgpu_selection
print.fsgpu_selection <- function(x, n = 10, ...) {
  where <- if (x$backend == "gpu") {
    d <- backend_info()$devices
    paste0("gpu: ", paste(unique(d$name[d$id %in% x$devices]), collapse = ", "))
  } else {
    sprintf("cpu: %d thread%s", x$threads, if (x$threads == 1) "" else "s")
  }
  cat(sprintf("%s selection: %d of %s features (%s samples, %d classes, %d bins)\n",
              toupper(x$method), nrow(x$selection), format(x$n_features, big.mark = ","),
              format(x$n_samples, big.mark = ","), length(x$classes), x$nbins))
  cat(sprintf("%s, %.3g s\n", where, x$elapsed))
  if (x$stopped_early)
    cat(sprintf("Stopped after %d of k = %d: no remaining feature adds information.\n", nrow(x$selection), x$k))
  shown <- utils::head(x$selection, n)
  names(shown)[names(shown) == "score"] <- paste0("score (", x$units, ")")
  print(shown, row.names = FALSE)
  if (nrow(x$selection) > n) cat(sprintf("... and %d more\n", nrow(x$selection) - n))
  invisible(x)
}

#' @export
as.data.frame.fsgpu_selection <- function(x, ...) x$selection

#' @export
plot.fsgpu_selection <- function(x, main = NULL, ...) {
  s <- x$selection
  if (is.null(main)) main <- sprintf("%s selection", toupper(x$method))
  graphics::plot(s$rank, s$score, type = "b", pch = 19, xlab = "rank", main = main,
                 ylab = sprintf("score (%s)", x$units), ...)
  invisible(x)
}

# The settings every job resolves the same way: bins, backend (for a job of `steps` passes
# over the data), threads, devices, the GPU memory limit and the unit of information.
resolve_run <- function(input, nbins, backend, threads, devices, units, steps) {
  units <- match.arg(units, c("bits", "nats"))
  if (is.null(nbins)) nbins <- default_nbins(input$n_samples)
  backend <- resolve_backend(backend, work = as.numeric(input$n_samples) * input$n_features * steps)
  list(
    nbins = check_count(nbins, "nbins", min = 2, max = 65535),
    backend = backend,
    threads = fsgpu_threads(threads),
    devices = if (backend == "gpu") resolve_devices(devices) else integer(),
    memory_limit = as.numeric(getOption("fsgpu.gpu_memory_limit", 0)),
    units = units,
    scale = if (units == "nats") log(2) else 1
  )
}

# Bins for numeric columns when the user gives none: the cube root of the sample count.
default_nbins <- function(n_samples) max(2L, as.integer(ceiling(n_samples^(1 / 3) - 1e-9)))

# A whole number in [min, max], as an integer, or an error naming the argument.
check_count <- function(value, arg, min = 1, max = .Machine$integer.max, what = NULL) {
  if (!is.numeric(value) || length(value) != 1 || is.na(value) || value != round(value))
    stop(sprintf("%s must be a whole number", arg), call. = FALSE)
  if (value < min || value > max)
    stop(sprintf("%s must be between %s and %s%s, not %s", arg, format(min), format(max),
                 if (is.null(what)) "" else paste0(" (", what, ")"), format(value)), call. = FALSE)
  as.integer(value)
}

check_dots_empty <- function(...) {
  if (...length()) {
    nm <- names(list(...))
    stop("unknown arguments: ", paste(if (is.null(nm)) "(unnamed)" else nm, collapse = ", "), call. = FALSE)
  }
}
