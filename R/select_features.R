# Information-theoretic feature selection: JMI and the rest of the FEAST family.

#' Select features by an information-theoretic criterion
#'
#' Ranks features greedily by one of the criteria of FEAST (Brown et al. 2012) and praznik:
#' the first feature maximises the relevance \eqn{I(X;Y)}; each further feature maximises the
#' criterion given the features \eqn{S} already selected. Information is computed exactly
#' from integer counts, so mathematically equal scores tie exactly (the lowest column index
#' wins), and the CPU and GPU backends return identical selections and bitwise-identical
#' scores.
#'
#' @section Criteria: With \eqn{S} ranging over the selected features (plug-in estimates):
#' \describe{
#'   \item{`mim`}{\eqn{I(X;Y)}: relevance alone.}
#'   \item{`jmi`}{\eqn{\sum_S I(X,S;Y)} (FEAST's unnormalised sum).}
#'   \item{`disr`}{\eqn{\sum_S I(X,S;Y)/H(X,S,Y)}: a ratio, with no unit.}
#'   \item{`mrmr`}{\eqn{I(X;Y) - \frac{1}{|S|}\sum_S I(X;S)}.}
#'   \item{`mifs`}{\eqn{I(X;Y) - \beta\sum_S I(X;S)} (`beta`, default 1).}
#'   \item{`cife`}{\eqn{I(X;Y) - \sum_S I(X;S) + \sum_S I(X;S|Y)}.}
#'   \item{`condred`}{\eqn{I(X;Y) + \sum_S I(X;S|Y)}.}
#'   \item{`betagamma`}{\eqn{I(X;Y) - \beta\sum_S I(X;S) + \gamma\sum_S I(X;S|Y)} (`beta` and
#'     `gamma` required).}
#'   \item{`icap`}{\eqn{I(X;Y) + \sum_S \min(0, I(X;S|Y) - I(X;S))}.}
#'   \item{`cmim`}{\eqn{\min(I(X;Y), \min_S I(X;Y|S))}.}
#'   \item{`cmi`}{\eqn{I(X;Y|S_1,\dots,S_m)}: conditioned on the joint variable of every
#'     selected feature, whose states multiply with each step (up to the number of samples).}
#'   \item{`jmim`}{\eqn{\min_S I(X,S;Y)} (praznik's JMIM).}
#'   \item{`njmim`}{\eqn{\min_S I(X,S;Y)/H(X,S,Y)} (praznik's NJMIM): a ratio.}
#'   \item{`jmi3`}{\eqn{\sum_{\{U,W\} \subseteq S} I(X,U,W;Y)}, over the pairs of selected
#'     features (praznik's third-order JMI3, Sechidis et al. 2019, with plug-in estimates). With
#'     one feature selected there is no pair: the second feature is JMI's, \eqn{I(X,S_1;Y)}.
#'     A step makes one pass over the data per selected feature, so \eqn{k} features cost
#'     about \eqn{k^2/2} passes.}
#'   \item{`jim`}{\eqn{\sum_S G(X,S;Y)} (praznik's JIM), JMI with the Gini impurity gain
#'     \eqn{G(A;Y) = \sum_{a,y} p(a,y)^2/p(a) - \sum_y p(y)^2} in place of information; its
#'     first feature maximises \eqn{G(X;Y)}. Impurity has no unit: scores are the same in bits
#'     and nats. Sparse features cost all their samples on the CPU.}
#' }
#' The first feature's score is \eqn{I(X;Y)} for every criterion but `jim`. Selections equal
#' FEAST's (praznik's for JMIM, NJMIM, JMI3 and JIM) given the same discrete data, except that
#' FEAST repeats feature 1 where JMI or DISR run out of information (and praznik takes no
#' feature of score 0 where JMI3 or JIM run out of it); here the selection stops instead.
#'
#' Scores of the criteria that cannot go negative (`mim`, `jmi`, `disr`, `cmim`, `cmi`, `jmim`,
#' `njmim`, `jmi3`, `jim`) stop the selection early, with fewer than `k` features, when no
#' candidate scores above `min_score` (default 0); the others (`mrmr`, `mifs`, `cife`,
#' `condred`, `betagamma`, `icap`) go on to `k`, as FEAST does, unless `min_score` is given. Criteria built from sums
#' and minima of information are exact integers internally; DISR, NJMIM and non-integer
#' `beta`/`gamma` are computed in double precision with the same operations on CPU and GPU.
#' JIM sums fixed-point terms \eqn{n(a,y)^2/n(a)} (32 fraction bits, each rounded down), so
#' its scores, too, are exact sums that are bitwise equal on CPU and GPU.
#'
#' Numeric columns are cut into `nbins` bins of equal width between their minimum and
#' maximum (the maximum goes to the last bin); logical and factor columns are categories and
#' are used as they are. For sparse matrices only the stored entries are visited and the
#' zeros' counts are derived.
#'
#' @section Integer columns: Integer storage says nothing of what the numbers are (counts,
#'   intensities, codes), so an integer column is
#'   \itemize{
#'     \item binned, as double columns are, when bins are asked for: `nbins` or `discretize`
#'       given;
#'     \item otherwise binned when it has more distinct values than 10 (or than the default
#'       number of bins when that is larger, above 1,000 samples), or than half the samples
#'       (and 4),
#'       with one message naming such columns;
#'     \item otherwise a category (each value a level), as genotype codes 0/1/2 or small
#'       counts are.
#'   }
#'   `categorical` overrides this per column. The printout says what was done (`Input: 7,129
#'   integer columns binned`). Binned integer data give exactly the results of the same
#'   values stored as doubles. [read_delimited()] and [read_arff()] apply the same rule when
#'   they read whole numbers.
#'
#' @param x Samples in rows, features in columns: a numeric, integer or logical matrix, a
#'   data frame (numeric, integer, logical or factor columns), a sparse `Matrix` (such as a
#'   `dgCMatrix`), or a `SummarizedExperiment` (features are its rows, see below).
#' @param y Class labels: a factor, character, integer or logical vector with one element per
#'   sample.
#' @param k Number of features to select, `fixed` ones included.
#' @param method The criterion, see Criteria: `"jmi"` (default), `"mim"`, `"mrmr"`, `"mifs"`,
#'   `"cife"`, `"condred"`, `"betagamma"`, `"icap"`, `"cmim"`, `"disr"`, `"cmi"`, `"jmim"`,
#'   `"njmim"`, `"jmi3"` or `"jim"`.
#' @param nbins Number of equal-width bins for numeric columns, double or integer (see
#'   Integer columns). The default, `NULL`, takes the cube root of the number of samples,
#'   rounded up (as infotheo does), and at least 2: 5 bins for 100 samples, 22 for 10,000.
#' @param beta,gamma The weights of the redundancy terms of `mifs` (`beta`) and `betagamma`
#'   (both); other methods take none.
#' @param fixed Features (names or column indices) selected first, in this order, whatever
#'   they score; the criterion then takes them into account as selected features. Their
#'   scores are what the criterion gives them at their step, and they never stop the selection.
#' @param min_score The selection stops when the best remaining score is at or below this
#'   value (in `units`; for `disr` and `njmim`, after the first step, a ratio; for `jim`, an
#'   impurity gain). Default: 0 for
#'   the criteria that cannot go negative, `-Inf` (never stop) for the others.
#' @param weights Optional non-negative weight per sample, as FEAST's weighted criteria
#'   (`mim`, `jmi`, `disr`, `cmim`, `cmi` only): each cell of a contingency table counts with
#'   the summed weight of its samples. Weighted information is computed in double precision
#'   on the CPU; `backend = "gpu"` with weights is an error.
#' @param backend `"auto"` (the GPU when one is present and the job is large), `"cpu"` or
#'   `"gpu"`. Defaults to `getOption("fsgpu.backend")`, then the environment variable
#'   `FSGPU_BACKEND`, then `"auto"`.
#' @param threads CPU threads; see [fsgpu_threads()].
#' @param devices GPU ids to split the features across (default: all, see [backend_info()]).
#' @param units `"bits"` (as FEAST) or `"nats"`.
#' @param quiet `TRUE` shows no progress bar and no messages; by default a progress bar appears
#'   in interactive sessions for jobs of more than a few seconds. See [fsgpu_progress].
#' @param discretize How to cut numeric columns instead of `nbins` equal-width bins: a method
#'   of [discretize()] (`"caim"`, `"cacc"`, `"ameva"`, `"mdlp"`, `"equal_freq"`, ...), fitted
#'   here on `x` and `y`, or a discretization fitted before (its cut points are applied to
#'   the features of the same names, e.g. to score test data with training cuts). Logical
#'   and factor columns, and those `categorical` names, stay categories. The result keeps the
#'   discretization.
#' @param categorical Which columns are categories, whatever `nbins` says: `TRUE` (all: double
#'   columns too, each distinct value a level), `FALSE` (none: integer columns are binned,
#'   with the default bins when `nbins` is not given), or a selection of features (names,
#'   column indices, or one `TRUE`/`FALSE` per feature) whose other columns follow the rule of
#'   Integer columns. The default, `NULL`, applies that rule. Factor and logical columns are
#'   always categories. A sparse matrix with categorical columns is made dense.
#' @param ... Passed on by methods.
#' @return An object of class `fsgpu_selection`: a list with `selection`, a data frame with
#'   columns `rank`, `feature` (name), `index` (column of `x`, 1-based), `score` and `fixed`
#'   (whether the feature was forced), in selection order, and the parameters used (`method`,
#'   `k`, `beta`, `gamma`, `min_score`, `weighted`, `nbins`, `units`, `backend`, `threads`,
#'   `devices`), the data's shape (`n_samples`, `n_features`, `classes`), `elapsed` seconds,
#'   `timings` (seconds spent encoding the data, preparing the engine, e.g. copying codes to
#'   the GPUs, on the first step and on all later steps), `stopped_early` and `run`, where the
#'   job ran: `name` (`"cpu"` or `"gpu"`), `threads`, `devices`, `device_names`, `why_cpu` (why
#'   `backend = "auto"` did not take a GPU, `""` otherwise), `workers` (with `BPPARAM` in the
#'   jobs that take it, the BiocParallel workers, `threads` then being each tile's; else 1) and
#'   `elapsed`. It has `print`,
#'   `as.data.frame` and `plot` methods.
#' @references Brown, Pocock, Zhao and Lujan (2012), Conditional likelihood maximisation: a
#'   unifying framework for information theoretic feature selection, JMLR 13. Yang and Moody
#'   (1999) (JMI); Peng, Long and Ding (2005) (mRMR); Battiti (1994) (MIFS); Lin and Tang
#'   (2006) (CIFE); Jakulin (2005) (ICAP); Fleuret (2004) (CMIM); Meyer and Bontempi (2006)
#'   (DISR); Bennasar, Hicks and Setchi (2015) (JMIM, NJMIM); Sechidis, Azzimonti, Pocock,
#'   Corani, Weatherall and Brown (2019), Efficient feature selection using shrinkage
#'   estimators, Machine Learning 108 (JMI3); Kursa (2021), praznik (JMI3, JIM). Gonzalez-Dominguez, Exposito and
#'   Bolon-Canedo (2020), CUDA-JMI: acceleration of feature selection on heterogeneous systems.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 50), 100, 50, dimnames = list(NULL, paste0("g", 1:50)))
#' x[, 7] <- x[, 7] + 2 * (y == "b")
#' x[, 8] <- x[, 7] + rnorm(100, sd = 0.1)  # redundant with g7
#' sel <- select_features(x, y, k = 5, backend = "cpu")
#' sel
#' as.data.frame(sel)
#' # mRMR penalises g8's redundancy with g7; g3 is kept whatever it scores
#' select_features(x, y, k = 5, method = "mrmr", fixed = "g3", backend = "cpu")
#' @export
select_features <- function(x, ...) UseMethod("select_features")

#' @rdname select_features
#' @export
select_features.default <- function(x, y, k = 10, method = "jmi", nbins = NULL, beta = NULL, gamma = NULL,
                                    fixed = NULL, min_score = NULL, weights = NULL, backend = NULL,
                                    threads = NULL, devices = NULL, units = c("bits", "nats"),
                                    quiet = FALSE, discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_selection(prepare_input(x, y, binning = binning, defer = is.null(discretize)), k = k, method = method, nbins = nbins,
                                beta = beta, gamma = gamma, fixed = fixed, min_score = min_score, weights = weights,
                                backend = backend, threads = threads, devices = devices, units = units,
                                quiet = quiet, discretize = discretize))
}

selection_methods <- c("jmi", "mim", "mrmr", "mifs", "cife", "condred", "betagamma", "icap", "cmim",
                       "disr", "cmi", "jmim", "njmim", "jmi3", "jim")
never_negative_methods <- c("mim", "jmi", "disr", "cmim", "cmi", "jmim", "njmim", "jmi3", "jim")
ratio_methods <- c("disr", "njmim")
# Criteria whose scores, the first included, are not information: no unit.
impurity_methods <- "jim"
weighted_methods <- c("mim", "jmi", "disr", "cmim", "cmi")

run_selection <- function(input, k, method, nbins, beta, gamma, fixed, min_score, weights, backend, threads,
                          devices, units, quiet, discretize = NULL) {
  if (!is.character(method) || length(method) != 1 || !method %in% selection_methods)
    stop("method must be one of ", quote_list(selection_methods), call. = FALSE)
  k <- check_count(k, "k", max = input$n_features, what = "the number of features")
  coef <- resolve_coefficients(method, beta, gamma)
  fixed <- resolve_features(fixed, input, "fixed")
  if (length(fixed) > k) stop(sprintf("fixed has %d features, more than k = %d", length(fixed), k), call. = FALSE)
  weights <- check_weights(weights, method, input$n_samples)
  why_cpu <- NULL
  if (!is.null(weights)) {
    if (identical(backend, "gpu")) stop("weights are computed on the CPU only; use backend = \"cpu\" or \"auto\"",
                                        call. = FALSE)
    if (requested_backend(backend) == "auto") why_cpu <- "weighted information is computed on the CPU"
    backend <- "cpu"
  }
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- resolve_run(input, nbins, backend, threads, devices, units, steps = k)
  if (!is.null(why_cpu)) run$why_cpu <- why_cpu
  if (is.null(min_score)) min_score <- if (method %in% never_negative_methods) 0 else -Inf
  if (!is.numeric(min_score) || length(min_score) != 1 || is.na(min_score))
    stop("min_score must be one number (or -Inf)", call. = FALSE)
  # Scores are in bits inside; ratios and impurity have no unit and are compared as they are.
  min_bits <- if (method %in% c(ratio_methods, impurity_methods)) min_score else min_score / run$scale

  progress <- job_progress(sprintf("Selecting %d features (%s)", k, toupper(method)), quiet)
  elapsed <- system.time(
    res <- fsgpu_select(input$x, input$y, length(input$classes), k, method, coef$beta, coef$gamma, fixed, min_bits,
                        weights, run$nbins, run$backend, run$threads, run$devices, run$memory_limit, progress,
                        input$bin_above),
    gcFirst = FALSE
  )[["elapsed"]]
  progress_done(progress)
  input <- finish_input(input, res$input)
  n <- length(res$features)
  in_units <- if (method %in% ratio_methods) seq_len(n) == 1L else rep(!method %in% impurity_methods, n)
  structure(list(
    selection = data.frame(rank = seq_len(n), feature = input$feature_names[res$features],
                           index = res$features, score = ifelse(in_units, res$scores * run$scale, res$scores),
                           fixed = seq_len(n) <= length(fixed), stringsAsFactors = FALSE),
    method = method, k = k, beta = coef$shown_beta, gamma = coef$shown_gamma, min_score = min_score,
    weighted = !is.null(weights), nbins = run$nbins, discretization = input$discretization, units = run$units,
    backend = run$backend,
    threads = run$threads, devices = run$devices,
    n_samples = input$n_samples, n_features = input$n_features, classes = input$classes,
    elapsed = elapsed, timings = res$timings, stopped_early = n < k,
    run = backend_used(run$backend, run$threads, run$devices, elapsed, run$why_cpu, notes = input$notes)
  ), class = "fsgpu_selection")
}

# beta and gamma of the linear criteria (MIFS, CIFE, CondRed, BetaGamma); the engine's
# values for the others are unused. shown_* are what the result reports (NULL when unused).
resolve_coefficients <- function(method, beta, gamma) {
  check_coefficient <- function(v, arg) {
    if (!is.numeric(v) || length(v) != 1 || !is.finite(v)) stop(arg, " must be one finite number", call. = FALSE)
    as.numeric(v)
  }
  takes_beta <- method %in% c("mifs", "betagamma")
  takes_gamma <- method == "betagamma"
  if (!is.null(beta) && !takes_beta) stop("beta is a parameter of mifs and betagamma, not ", method, call. = FALSE)
  if (!is.null(gamma) && !takes_gamma) stop("gamma is a parameter of betagamma, not ", method, call. = FALSE)
  if (method == "betagamma" && (is.null(beta) || is.null(gamma)))
    stop("betagamma needs both beta and gamma (cife is beta = gamma = 1, condred beta = 0, gamma = 1)", call. = FALSE)
  if (takes_beta && is.null(beta)) beta <- 1  # MIFS's usual weight
  if (takes_beta) beta <- check_coefficient(beta, "beta")
  if (takes_gamma) gamma <- check_coefficient(gamma, "gamma")
  engine <- switch(method, mifs = c(beta, 0), cife = c(1, 1), condred = c(0, 1), betagamma = c(beta, gamma), c(1, 0))
  list(beta = engine[1], gamma = engine[2], shown_beta = if (takes_beta) beta, shown_gamma = if (takes_gamma) gamma)
}

# Features named or indexed by the user, as 1-based column indices (integer(0) for NULL).
# A factor stands for its labels; a name shared by several columns is ambiguous.
resolve_features <- function(features, input, arg) {
  if (is.null(features) || length(features) == 0) return(integer())
  if (is.factor(features)) features <- as.character(features)
  if (is.character(features)) {
    index <- match(features, input$feature_names)
    if (anyNA(index)) stop(sprintf("%s: no feature named %s", arg, quote_list(features[is.na(index)])), call. = FALSE)
    shared <- unique(features[features %in% input$feature_names[duplicated(input$feature_names)]])
    if (length(shared))
      stop(sprintf("%s: %s names several features; give their indices or make the names unique", arg,
                   quote_list(shared)), call. = FALSE)
  } else if (is.numeric(features) && !anyNA(features) && all(features == round(features))) {
    bad <- features < 1 | features > input$n_features
    if (any(bad)) stop(sprintf("%s: column indices must be between 1 and %d, not %s", arg, input$n_features,
                               paste(features[bad], collapse = ", ")), call. = FALSE)
    index <- as.integer(features)
  } else {
    stop(arg, " must be feature names or column indices", call. = FALSE)
  }
  if (anyDuplicated(index))
    stop(sprintf("%s: %s given more than once", arg, quote_list(input$feature_names[index[duplicated(index)]])),
         call. = FALSE)
  index
}

check_weights <- function(weights, method, n_samples) {
  if (is.null(weights)) return(NULL)
  if (!method %in% weighted_methods)
    stop("weights work with ", quote_list(weighted_methods), ", not ", method, call. = FALSE)
  if (!is.numeric(weights) || length(weights) != n_samples)
    stop(sprintf("weights must be numeric with one weight per sample (%d), not %d values", n_samples,
                 length(weights)), call. = FALSE)
  bad <- which(!is.finite(weights) | weights < 0)
  if (length(bad))
    stop(sprintf("weights must be finite and not negative; see sample%s %s", if (length(bad) > 1) "s" else "",
                 paste(utils::head(bad, 5), collapse = ", ")), call. = FALSE)
  as.numeric(weights)
}

#' @exportS3Method print fsgpu_selection
print.fsgpu_selection <- function(x, n = 10, ...) {
  params <- c(if (!is.null(x$beta)) sprintf("beta = %g", x$beta), if (!is.null(x$gamma)) sprintf("gamma = %g", x$gamma),
              if (isTRUE(x$weighted)) "weighted")
  cat(sprintf("%s%s selection: %d of %s features (%s samples, %d classes, %s)\n",
              toupper(x$method), if (length(params)) paste0(" (", paste(params, collapse = ", "), ")") else "",
              nrow(x$selection), format(x$n_features, big.mark = ","),
              format(x$n_samples, big.mark = ","), length(x$classes), binning_label(x$nbins, x$discretization)))
  cat(format(x$run), "\n", sep = "")
  if (x$stopped_early)
    cat(sprintf("Stopped after %d of k = %d: no remaining feature scores above %g.\n", nrow(x$selection), x$k,
                x$min_score))
  shown <- utils::head(x$selection, n)
  unitless <- x$method %in% c(ratio_methods, impurity_methods)
  names(shown)[names(shown) == "score"] <- if (unitless) "score" else paste0("score (", x$units, ")")
  if (!any(shown$fixed)) shown$fixed <- NULL
  print(shown, row.names = FALSE)
  if (nrow(x$selection) > n) cat(sprintf("... and %d more\n", nrow(x$selection) - n))
  invisible(x)
}

# How numeric columns were cut, for printing.
binning_label <- function(nbins, discretization) {
  if (is.null(discretization)) return(sprintf("%d bins", nbins))
  sprintf("%s intervals, median %s", method_label(discretization$method), stats::median(discretization$features$intervals))
}

#' @export
as.data.frame.fsgpu_selection <- function(x, ...) x$selection

# The settings every job resolves the same way: bins, backend (for a job of `steps` passes
# over the data), threads, devices, the GPU memory limit and the unit of information.
resolve_run <- function(input, nbins, backend, threads, devices, units, steps, forked_workers = FALSE) {
  units <- match.arg(units, c("bits", "nats"))
  if (is.null(nbins)) nbins <- default_nbins(input$n_samples)
  chosen <- choose_backend(backend, work = as.numeric(input$n_samples) * input$n_features * steps, forked_workers)
  backend <- chosen$backend
  list(
    nbins = check_count(nbins, "nbins", min = 2, max = 65535),
    backend = backend,
    why_cpu = chosen$why_cpu,
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
