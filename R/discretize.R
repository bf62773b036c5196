# Discretization: cut points per feature by CAIM, CACC, Ameva or MDLP (supervised) or by equal
# width or frequency; predict() applies them to new data. Other jobs take `discretize =`.

discretize_methods <- c("caim", "cacc", "ameva", "mdlp", "equal_width", "equal_freq")
unsupervised_discretize_methods <- c("equal_width", "equal_freq")

#' Discretize numeric features: CAIM, CACC, Ameva, MDLP, equal width or frequency
#'
#' Finds cut points for every feature and returns them with the interval codes of the data.
#' The supervised methods choose cuts that tell about the class; the cut points are kept, so
#' [predict()][predict.fsgpu_discretization] applies them to new data. Every feature is
#' discretized on its own, on all CPU threads or on the GPUs, with identical results.
#'
#' @section Methods: Candidate cuts are the midpoints between adjacent distinct values of a
#'   feature. Intervals are closed on the right, \eqn{(c_{k-1}, c_k]}: a value equal to a cut
#'   falls in the interval below it; values outside the training range fall in the first or
#'   last interval.
#' \describe{
#'   \item{`caim`}{Kurgan and Cios (2004). Starting from one interval, the candidate whose
#'     scheme has the highest CAIM \eqn{= \frac{1}{k}\sum_r \max_c q_{rc}^2 / M_r} is added
#'     while CAIM grows, and unconditionally while there are fewer intervals than classes (the
#'     first \eqn{S - 1} cuts are forced).}
#'   \item{`cacc`}{Tsai, Lee and Yang (2008): the same loop with the class-attribute
#'     contingency coefficient \eqn{\sqrt{y / (y + M)}}, \eqn{y = \chi^2 / \ln k}, also with
#'     \eqn{S - 1} forced cuts, \eqn{k} being the number of intervals of the scheme scored.
#'     R's `discretization` package (1.0-1.1, `disc.Topdown(method = 2)`) divides by
#'     \eqn{\ln(k + 1)} instead (its `cacc()` takes the logarithm of one more than the number
#'     of intervals; its manual page says \eqn{\ln k}), which penalises intervals less, so
#'     it may keep cutting where the paper's loop stops: on ALL's probe set 723_s_at, B-cell
#'     BCR/ABL against NEG, it makes 35 cuts, the paper's rule 27.}
#'   \item{`ameva`}{Gonzalez-Abril et al. (2009): the same loop with
#'     \eqn{\chi^2 / (k (S - 1))}, without forced cuts.}
#'   \item{`mdlp`}{Fayyad and Irani (1993): recursive binary splits at the cut of least class
#'     entropy, each kept when it passes the minimum description length test.}
#'   \item{`equal_width`, `equal_freq`}{`nbins` intervals of equal width between the minimum
#'     and maximum (the binning [select_features()] applies to numeric columns: a value on a
#'     boundary goes to the interval above it), or holding about equal numbers of values (ties
#'     stay together, so there may be fewer). These need no class.}
#' }
#' Ties between candidates go to the lowest cut. Criteria are doubles; candidates whose gains
#' differ by less than \eqn{10^{-9}} of the scheme's sum of terms count as tied, and a scheme
#' replaces the previous one only when its criterion is larger by more than \eqn{10^{-9}}
#' relative, so that rounding never decides (MDLP compares exact integer entropies). The
#' number of classes \eqn{S} is that of the feature's non-missing values; a feature whose
#' values all belong to one class gets no cut.
#'
#' @param x Samples in rows, features in columns: a numeric (double, integer or logical)
#'   matrix, a data frame of numeric columns, a sparse `Matrix`, or a `SummarizedExperiment`
#'   (features are its rows).
#' @param y Class labels, one per sample (factor, character, integer or logical): needed by
#'   the supervised methods, not used by `equal_width` and `equal_freq`.
#' @param method `"caim"` (default), `"cacc"`, `"ameva"`, `"mdlp"`, `"equal_width"` or
#'   `"equal_freq"`; see Methods.
#' @param nbins For `equal_width` and `equal_freq`: the number of intervals (default: the
#'   cube root of the number of samples, rounded up, as [select_features()]).
#' @param na `"fail"` (default): missing values are an error, as in the other jobs;
#'   `"omit"`: each feature is discretized from its non-missing values and missing values get
#'   `NA` codes.
#' @param backend `"auto"`, `"cpu"` or `"gpu"`, as in [select_features()].
#' @param threads CPU threads; see [fsgpu_threads()].
#' @param devices GPU ids to split the features across.
#' @param quiet `TRUE` shows no progress bar; see [fsgpu_progress].
#' @param ... Passed on by methods.
#' @return An object of class `fsgpu_discretization`, a list with
#'   \describe{
#'     \item{`cuts`}{a named list: each feature's inner cut points, ascending;}
#'     \item{`features`}{a data frame with one row per feature: `feature`, `intervals`,
#'       `criterion` (the final CAIM, CACC or Ameva value; for MDLP the information of the
#'       intervals about the class, \eqn{I(Y; interval)} in bits; `NA` for the unsupervised
#'       methods and for features without cuts by a one-class feature), `lower` and `upper`
#'       (the training range) and `missing` (values left out);}
#'     \item{`codes`}{the interval codes of `x` (integers from 1, `NA` where `x` is missing),
#'       samples x features;}
#'   }
#'   and `method`, `nbins`, `na`, `classes`, `n_samples`, `backend`, `threads`, `devices`,
#'   `elapsed`, `timings` (seconds spent finding the cuts, with the GPU's phases, and coding
#'   the data) and `run` (where the job ran and why, as in [select_features()]). It has
#'   `print`, `as.data.frame` and `predict` methods.
#' @references Kurgan and Cios (2004), CAIM discretization algorithm, IEEE TKDE 16. Tsai, Lee
#'   and Yang (2008), A discretization algorithm based on class-attribute contingency
#'   coefficient, Information Sciences 178. Gonzalez-Abril, Cuberos, Velasco and Ortega (2009),
#'   Ameva: an autonomous discretization algorithm, Expert Systems with Applications 36.
#'   Fayyad and Irani (1993), Multi-interval discretization of continuous-valued attributes
#'   for classification learning, IJCAI. Cano, Luna, Ventura and Cios (2016), Parallel
#'   CAIM discretization on GPUs.
#' @examples
#' set.seed(1)
#' y <- factor(rep(c("a", "b", "c"), each = 40))
#' x <- cbind(g1 = rnorm(120) + 2 * as.integer(y), g2 = rnorm(120))
#' d <- discretize(x, y, method = "caim", backend = "cpu")
#' d
#' d$cuts$g1
#' head(d$codes)
#' # the same cuts on new data; values outside the training range go to the end intervals
#' predict(d, cbind(g1 = c(-10, 3, 10), g2 = 0))
#' predict(d, cbind(g1 = c(-10, 3, 10), g2 = 0), type = "factor")
#' @export
discretize <- function(x, ...) UseMethod("discretize")

#' @rdname discretize
#' @export
discretize.default <- function(x, y = NULL, method = "caim", nbins = NULL, na = c("fail", "omit"), backend = NULL,
                               threads = NULL, devices = NULL, quiet = FALSE, ...) {
  check_dots_empty(...)
  method <- check_discretize_method(method)
  na <- match.arg(na)
  check_numeric_columns(x, "x")
  input <- normalise_x(x, "x")
  if (method %in% unsupervised_discretize_methods) y <- NULL
  else if (is.null(y)) stop(sprintf("method = \"%s\" needs the class labels y", method), call. = FALSE)
  quiet_if(quiet, {
    if (!is.null(y)) input <- c(input, encode_classes(y, input$n_samples, input$sample_names, "y"))
    run_discretize(input, method, nbins, na, backend, threads, devices, quiet)
  })
}

#' @rdname discretize
#' @param class For a `SummarizedExperiment`: the `colData` column holding the class labels
#'   (not needed by `equal_width` and `equal_freq`).
#' @param assay For a `SummarizedExperiment` (features are its rows): the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @export
discretize.SummarizedExperiment <- function(x, class = NULL, method = "caim", assay = NULL, nbins = NULL,
                                            na = c("fail", "omit"), backend = NULL, threads = NULL, devices = NULL,
                                            quiet = FALSE, ...) {
  check_dots_empty(...)
  method <- check_discretize_method(method)
  na <- match.arg(na)
  if (method %in% unsupervised_discretize_methods) class <- NULL
  else if (is.null(class)) stop(sprintf("method = \"%s\" needs class, the colData column of the class labels", method),
                                call. = FALSE)
  quiet_if(quiet, {
    input <- prepare_se_input(x, class, assay, allow_missing = TRUE)
    fit <- if (isTRUE(input$delayed)) delayed_discretize(input, method, nbins, na, backend, threads, devices, quiet)
           else run_discretize(input, method, nbins, na, backend, threads, devices, quiet)
    fit$assay <- input$assay  # predict() and discretize = on an SE read the same assay
    with_notes(fit, input$notes)
  })
}

# A discretization fitted on one assay of a SummarizedExperiment cuts that assay's values: another
# assay (counts against logcounts, say) would be cut at the wrong places without a word.
check_same_assay <- function(fit, input) {
  if (is.null(fit$assay) || is.null(input$assay) || identical(fit$assay, input$assay)) return(invisible())
  stop(sprintf("the discretization was fitted on %s, and this job reads %s: give assay = %s", assay_label(fit$assay),
               assay_label(input$assay), deparse(fit$assay)), call. = FALSE)
}

check_discretize_method <- function(method) {
  if (!is.character(method) || length(method) != 1 || !method %in% discretize_methods)
    stop("method must be one of ", quote_list(discretize_methods, max = 10), call. = FALSE)
  method
}

# Factor and character columns have no order to cut: name them.
check_numeric_columns <- function(x, arg) {
  if (!is.data.frame(x)) return(invisible())
  bad <- !vapply(x, function(v) is.null(dim(v)) && (is.numeric(v) || is.logical(v)) && !is.factor(v), logical(1))
  if (any(bad))
    stop(arg, " has columns that are not numeric: ", quote_list(names(x)[bad]), "; discretize takes numbers",
         call. = FALSE)
}

# Missing values are an error unless na = "omit"; infinite values always are. x is scanned in
# C++, in place, on `threads` threads (fsgpu_bad_values()); R only names the culprits.
check_discretize_values <- function(input, na, arg, threads) {
  bad <- fsgpu_bad_values(input$x, input$n_samples, threads)
  if (length(bad$infinite_cols))
    stop_nonfinite(bad$infinite_rows, bad$infinite_cols, input, arg, what = "infinite values")
  if (na == "fail" && length(bad$missing_cols)) {
    stop_nonfinite(bad$missing_rows, bad$missing_cols, input, arg, what = "missing values",
                   hint = "; use na = \"omit\" to discretize each feature from its non-missing values")
  }
}

run_discretize <- function(input, method, nbins, na, backend, threads, devices, quiet = FALSE) {
  check_discretize_values(input, na, "x", fsgpu_threads(threads))
  supervised <- !method %in% unsupervised_discretize_methods
  if (supervised) {
    if (!is.null(nbins)) stop(sprintf("nbins is for equal_width and equal_freq, not %s", method), call. = FALSE)
    nbins <- 0L
  } else {
    nbins <- check_count(if (is.null(nbins)) default_nbins(input$n_samples) else nbins, "nbins", min = 2, max = 65535)
  }
  classes <- if (supervised) length(input$classes) else 1L
  chosen <- choose_backend(backend, work = as.numeric(input$n_samples) * input$n_features * (classes + 16))
  run <- list(backend = chosen$backend, threads = fsgpu_threads(threads),
              devices = if (chosen$backend == "gpu") resolve_devices(devices) else integer())
  engine <- engine_mode(backend, chosen$backend)
  progress <- job_progress(sprintf("Discretizing %s features (%s)", format(input$n_features, big.mark = ","),
                                   method_label(method)), quiet)
  start <- proc.time()[["elapsed"]]
  res <- fsgpu_discretize(input$x, input$n_samples, if (supervised) input$y else integer(), classes, method,
                          nbins, engine, run$threads, run$devices, as.numeric(getOption("fsgpu.gpu_memory_limit", 0)),
                          progress)
  progress_done(progress)
  cut_done <- proc.time()[["elapsed"]]
  codes <- fsgpu_discretize_codes(input$x, input$n_samples, res$cuts, res$lo, res$hi, method, nbins, run$threads)
  end <- proc.time()[["elapsed"]]
  names(res$cuts) <- input$feature_names
  dimnames(codes) <- list(input$sample_names, input$feature_names)
  structure(list(
    cuts = res$cuts,
    features = data.frame(feature = input$feature_names, intervals = unname(lengths(res$cuts)) + 1L,
                          criterion = res$criterion, lower = res$lo, upper = res$hi, missing = res$missing,
                          stringsAsFactors = FALSE),
    codes = codes,
    method = method, nbins = if (supervised) NULL else nbins, na = na,
    classes = if (supervised) input$classes, n_samples = input$n_samples,
    backend = res$backend, threads = run$threads, devices = run$devices,
    elapsed = end - start, timings = c(res$timings, codes = end - cut_done),
    run = backend_used(res$backend, run$threads, run$devices, end - start,
                       if (nzchar(res$why_cpu)) res$why_cpu else chosen$why_cpu)
  ), class = "fsgpu_discretization")
}

#' Apply a discretization's cut points to new data
#'
#' @param object A result of [discretize()].
#' @param newdata Data with the same features: a matrix, data frame or sparse `Matrix` with
#'   samples in rows (columns matched by name when both have names, otherwise by position),
#'   or a `SummarizedExperiment` (features in rows). Missing values give `NA`; values beyond
#'   the training range fall in the first or last interval.
#' @param type `"codes"`: an integer matrix of interval numbers (samples x features);
#'   `"factor"`: a data frame of factors whose levels name the intervals.
#' @param threads CPU threads.
#' @param assay For a `SummarizedExperiment`: the assay. By default the assay the
#'   discretization was fitted on, when it was fitted on a `SummarizedExperiment`; else
#'   `"logcounts"` when there is one, else the first.
#' @param ... Unused.
#' @return Interval codes of `newdata` as chosen by `type`.
#' @export
predict.fsgpu_discretization <- function(object, newdata, type = c("codes", "factor"), threads = NULL, assay = NULL,
                                         ...) {
  check_dots_empty(...)
  type <- match.arg(type)
  input <- if (methods::is(newdata, "SummarizedExperiment")) {
    prepare_se_input(newdata, NULL, if (is.null(assay)) object$assay else assay, allow_missing = TRUE)
  } else {
    check_numeric_columns(newdata, "newdata")
    normalise_x(newdata, "newdata")
  }
  features <- names(object$cuts)
  named <- !is.null(colnames(newdata)) || methods::is(newdata, "SummarizedExperiment")
  if (named && all(features %in% input$feature_names)) {
    index <- match(features, input$feature_names)
  } else if (named && !all(grepl("^X[0-9]+$", features))) {
    stop("newdata lacks features ", quote_list(setdiff(features, input$feature_names)), call. = FALSE)
  } else if (input$n_features != length(features)) {
    stop(sprintf("newdata has %d features, the discretization %d", input$n_features, length(features)), call. = FALSE)
  } else {
    index <- seq_along(features)
  }
  codes <- if (isTRUE(input$delayed)) delayed_predict_codes(input, object, index, threads) else {
    input <- subset_features(input, index)
    fsgpu_discretize_codes(input$x, input$n_samples, unname(object$cuts), object$features$lower,
                           object$features$upper, object$method, if (is.null(object$nbins)) 0L else object$nbins,
                           fsgpu_threads(threads))
  }
  dimnames(codes) <- list(input$sample_names, features)
  if (type == "codes") return(codes)
  closed_left <- object$method == "equal_width"
  out <- lapply(seq_along(features), function(j) {
    labels <- interval_labels(object$cuts[[j]], closed_left)
    factor(labels[codes[, j]], levels = labels)
  })
  names(out) <- features
  as.data.frame(out, row.names = input$sample_names, optional = TRUE)
}

# Names of the intervals between cuts, with as many digits as it takes to tell them apart.
interval_labels <- function(cuts, closed_left = FALSE) {
  if (!length(cuts)) return("(-Inf, Inf)")
  for (digits in 4:17) {
    shown <- trimws(formatC(cuts, digits = digits, format = "g"))
    if (!anyDuplicated(shown)) break
  }
  lower <- c("-Inf", shown)
  upper <- c(shown, "Inf")
  if (closed_left) paste0(c("(", rep("[", length(cuts))), lower, ", ", upper, ")")
  else paste0("(", lower, ", ", upper, c(rep("]", length(cuts)), ")"))
}

method_label <- function(method) {
  switch(method, caim = "CAIM", cacc = "CACC", ameva = "Ameva", mdlp = "MDLP", equal_width = "Equal-width",
         equal_freq = "Equal-frequency")
}

#' @exportS3Method print fsgpu_discretization
print.fsgpu_discretization <- function(x, n = 10, ...) {
  f <- x$features
  cat(sprintf("%s discretization of %s features (%s samples%s)\n", method_label(x$method),
              format(nrow(f), big.mark = ","), format(x$n_samples, big.mark = ","),
              if (is.null(x$classes)) "" else sprintf(", %d classes", length(x$classes))))
  cat(format(x$run), "\n", sep = "")
  cat(sprintf("Intervals per feature: %s (median %s)%s\n",
              if (min(f$intervals) == max(f$intervals)) min(f$intervals) else paste(min(f$intervals), "to", max(f$intervals)),
              stats::median(f$intervals),
              if (sum(f$missing)) sprintf("; %s missing values left out", format(sum(f$missing), big.mark = ",")) else ""))
  shown <- utils::head(f, n)
  shown$cuts <- vapply(x$cuts[seq_len(nrow(shown))], function(c) {
    if (!length(c)) return("")
    s <- paste(trimws(formatC(utils::head(c, 4), digits = 4, format = "g")), collapse = ", ")
    if (length(c) > 4) paste0(s, ", ... (", length(c) - 4, " more)") else s
  }, character(1))
  if (all(is.na(shown$criterion))) shown$criterion <- NULL
  if (!any(shown$missing)) shown$missing <- NULL
  print(shown, row.names = FALSE, digits = 4)
  if (nrow(f) > n) cat(sprintf("... and %s more\n", format(nrow(f) - n, big.mark = ",")))
  invisible(x)
}

#' @export
as.data.frame.fsgpu_discretization <- function(x, ...) {
  out <- x$features
  out$cuts <- unname(x$cuts)
  out
}

# Interval codes in place of the numeric (double) columns of a prepared input, for the jobs'
# `discretize =` argument: a method name (fitted here, on the input's class when supervised) or
# a fitted discretization (applied to the features of the same names). By now integer columns
# that are to be binned are doubles (resolve_columns()); the categorical ones, logical and
# factor columns stay categories. The input gains `discretization`.
apply_discretization <- function(input, discretize, nbins, backend, threads, devices, quiet = FALSE) {
  if (inherits(discretize, "fsgpu_discretization")) check_same_assay(discretize, input)
  if (isTRUE(input$delayed)) return(delayed_codes(input, discretize, nbins, backend, threads, devices, quiet))
  if (is.null(discretize)) return(input)
  numeric <- numeric_column_indices(input)
  if (inherits(discretize, "fsgpu_discretization")) {
    missing <- setdiff(input$feature_names[numeric], names(discretize$cuts))
    if (length(missing)) {
      stop("the discretization has no cut points for ", quote_list(missing),
           if (any(input$kinds[match(missing, input$feature_names)] %in% "double"))
             "; categorical = (their names) keeps integer columns as categories",
           call. = FALSE)
    }
    if (!is.null(nbins)) stop("nbins has no use with a fitted discretization", call. = FALSE)
    fit <- discretize
    sub <- subset_features(input, numeric)
    keep <- match(sub$feature_names, names(fit$cuts))
    codes <- fsgpu_discretize_codes(sub$x, sub$n_samples, unname(fit$cuts[keep]), fit$features$lower[keep],
                                    fit$features$upper[keep], fit$method, if (is.null(fit$nbins)) 0L else fit$nbins,
                                    fsgpu_threads(threads))
  } else {
    method <- check_discretize_method(discretize)
    if (is.null(input$classes) && !method %in% unsupervised_discretize_methods)
      stop(sprintf("discretize = \"%s\" needs a class; without one use \"equal_width\" or \"equal_freq\"", method),
           call. = FALSE)
    if (!length(numeric)) {
      message(sprintf("discretize = \"%s\" has nothing to cut: every feature is a category", method))
      return(input)
    }
    sub <- subset_features(input, numeric)
    fit <- run_discretize(sub, method, if (method %in% unsupervised_discretize_methods) nbins else {
      if (!is.null(nbins)) stop(sprintf("nbins is for equal-width binning; discretize = \"%s\" chooses its own intervals",
                                        method), call. = FALSE)
      NULL
    }, "fail", backend, threads, devices, quiet)
    codes <- fit$codes
  }
  input$x <- replace_columns(input, numeric, codes)
  input$discretization <- fit
  input
}

# Columns that equal-width binning would cut: double columns (all of a dgCMatrix).
numeric_column_indices <- function(input) {
  x <- input$x
  if (methods::is(x, "dgCMatrix")) return(seq_len(input$n_features))
  if (is.list(x)) return(which(vapply(x, is.double, logical(1))))
  if (is.double(x)) seq_len(input$n_features) else integer()
}

replace_columns <- function(input, index, codes) {
  x <- input$x
  if (!length(index)) return(x)
  if (is.list(x)) {
    x[index] <- lapply(seq_along(index), function(j) codes[, j])
    return(x)
  }
  unname(codes)  # every column of a double or sparse matrix is numeric
}
