# How many features to keep: selection inside cross-validation folds, scored on held-out samples.

#' Cross-validated accuracy of a selection, for every number of features
#'
#' Estimates how well a classifier does with the first \eqn{k} features of a selection, for
#' \eqn{k = 1, \dots,} `k_max`, without the optimism of choosing the features on the samples
#' they are judged on: the samples are split into `folds` (stratified by class, `repeats`
#' times), the features are selected on each training part only, and a `learner` trained on
#' the first \eqn{k} of them predicts the held-out part. The selections of all folds run at
#' once, as [stability_selection()] runs its subsamples.
#'
#' The result is the curve of accuracy and balanced accuracy (the mean of the per-class
#' recalls) over \eqn{k}, with their standard deviation and standard error over the folds; the
#' `best_k` that maximises the mean of `metric`; and the `suggested_k` of the one-standard-error
#' rule (Breiman et al. 1984; Hastie, Tibshirani and Friedman, section 7.10): the smallest
#' \eqn{k} whose mean is within one standard error of the best.
#'
#' @section Learners: A learner is a `function(x_train, y_train, x_test)` that returns the
#'   predicted classes of the rows of `x_test` (a factor or character vector); `x_train` and
#'   `x_test` are data frames of the selected columns (in selection order, values as in `x`),
#'   `y_train` a factor. Built in, by name:
#'   \describe{
#'     \item{`"centroid"`}{(default, no package needed) nearest class centroid: each feature
#'       is centred and scaled by its training mean and standard deviation, a sample goes to the
#'       class with the nearest mean (Euclidean); factor columns count as their level codes.}
#'     \item{`"naive_bayes"`, `"svm"`}{`e1071::naiveBayes()`; `e1071::svm()` with a linear
#'       kernel (Debian: r-cran-e1071).}
#'     \item{`"ranger"`}{a random forest of 200 trees, `ranger::ranger()` (r-cran-ranger),
#'       seeded from the folds' seed.}
#'   }
#'
#' @section Binning: The selection bins (or categories) are those of all samples, as
#'   [stability_selection()] does: equal-width bins use each feature's range over all samples,
#'   which involves no class label. Supervised discretization is not offered here, since it
#'   would let the held-out labels choose the cuts.
#'
#' @inheritParams stability_selection
#' @param k_max The largest number of features tried.
#' @param method One criterion of [select_features()].
#' @param folds Number of folds (at most the size of the smallest class).
#' @param repeats How many times the folds are drawn anew.
#' @param learner A function (see Learners) or the name of a built-in learner.
#' @param metric What `best_k` and `suggested_k` maximise: `"balanced_accuracy"` or
#'   `"accuracy"`.
#' @param seed An integer seed for the folds (and the ranger learner), or `NULL` to continue
#'   R's random stream.
#' @return An object of class `fsgpu_cv`: a list with `curve` (a data frame: `k`, `accuracy`,
#'   `accuracy_sd`, `accuracy_se`, `balanced_accuracy`, `balanced_accuracy_sd`,
#'   `balanced_accuracy_se`), `by_fold` (`repeat`, `fold`, `k`, `accuracy`,
#'   `balanced_accuracy`), `best_k`, `suggested_k`, `metric`, `folds` (the held-out sample
#'   indices of each fold, repeat-major), `selections` (the feature indices selected on each
#'   training part), the parameters (`method`, `k_max`, `learner`, `repeats`, `seed`,
#'   `nbins`), the data's shape and `run`. It has `print`, `as.data.frame` (the curve) and
#'   `plot` methods.
#' @examples
#' set.seed(1)
#' y <- factor(rep(c("a", "b"), 40))
#' x <- matrix(rnorm(80 * 30), 80, 30, dimnames = list(NULL, paste0("g", 1:30)))
#' x[, 1:3] <- x[, 1:3] + 1.2 * (y == "b")
#' cv <- select_features_cv(x, y, k_max = 8, folds = 4, seed = 1, backend = "cpu", threads = 1)
#' cv
#' plot(cv)
#' # a learner of one's own: the class of the nearest training sample
#' nearest <- function(x_train, y_train, x_test) {
#'   d <- as.matrix(stats::dist(rbind(x_test, x_train)))[seq_len(nrow(x_test)), -seq_len(nrow(x_test))]
#'   y_train[apply(d, 1, which.min)]
#' }
#' select_features_cv(x, y, k_max = 5, folds = 4, learner = nearest, seed = 1, backend = "cpu")
#' @export
select_features_cv <- function(x, ...) UseMethod("select_features_cv")

#' @rdname select_features_cv
#' @export
select_features_cv.default <- function(x, y, k_max = 20, method = "jmi", folds = 5, repeats = 1,
                                       learner = "centroid", metric = c("balanced_accuracy", "accuracy"), seed = NULL,
                                       nbins = NULL, beta = NULL, gamma = NULL, min_score = NULL, backend = NULL,
                                       threads = NULL, devices = NULL, quiet = FALSE, categorical = NULL,
                                       BPPARAM = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, NULL, categorical)
  columns <- function(f, rows) {
    v <- x[rows, f, drop = FALSE]
    as.data.frame(if (methods::is(v, "Matrix")) as.matrix(v) else v)
  }
  quiet_if(quiet, run_cv(prepare_input(x, y, binning = binning, convert = FALSE), columns = columns, k_max = k_max,
                         method = method,
                         folds = folds, repeats = repeats, learner = learner, metric = metric, seed = seed,
                         nbins = nbins, beta = beta, gamma = gamma, min_score = min_score, backend = backend,
                         threads = threads, devices = devices, quiet = quiet, BPPARAM = BPPARAM))
}

#' @rdname select_features_cv
#' @export
select_features_cv.SummarizedExperiment <- function(x, class, k_max = 20, assay = NULL, method = "jmi", folds = 5,
                                                    repeats = 1, learner = "centroid",
                                                    metric = c("balanced_accuracy", "accuracy"), seed = NULL,
                                                    nbins = NULL, beta = NULL, gamma = NULL, min_score = NULL,
                                                    backend = NULL, threads = NULL, devices = NULL, quiet = FALSE,
                                                    categorical = NULL, BPPARAM = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, NULL, categorical)
  input <- prepare_se_input(x, class, assay, binning = binning, convert = FALSE)
  a <- SummarizedExperiment::assay(x, input$assay, withDimnames = TRUE)
  columns <- function(f, rows) as.data.frame(t(as.matrix(a[f, rows, drop = FALSE])))
  quiet_if(quiet, run_cv(input, columns = columns, k_max = k_max, method = method, folds = folds, repeats = repeats,
                         learner = learner, metric = metric, seed = seed, nbins = nbins, beta = beta, gamma = gamma,
                         min_score = min_score, backend = backend, threads = threads, devices = devices,
                         quiet = quiet, BPPARAM = BPPARAM))
}

# columns(f, rows): the values of features f (column indices) of samples rows, as a data frame.
run_cv <- function(input, columns, k_max, method, folds, repeats, learner, metric, seed, nbins, beta, gamma, min_score,
                   backend, threads, devices, quiet, BPPARAM) {
  metric <- match.arg(metric, c("balanced_accuracy", "accuracy"))
  if (!is.character(method) || length(method) != 1) stop("method must be one criterion", call. = FALSE)
  learn <- resolve_learner(learner)
  folds <- check_count(folds, "folds", min = 2, max = min(table(input$y)), what = "the size of the smallest class")
  repeats <- check_count(repeats, "repeats")
  held_out <- with_seed(seed, draw_folds(input$y, folds, repeats))
  training <- lapply(held_out, function(test) setdiff(seq_len(input$n_samples), test))
  out <- run_subsamples(input, training, k = k_max, method = method, nbins = nbins, beta = beta, gamma = gamma,
                        min_score = min_score, backend = backend, threads = threads, devices = devices, quiet = quiet,
                        discretize = NULL, BPPARAM = BPPARAM, k_arg = "k_max",
                        job = sprintf("Cross-validated selection: %d folds x %d", folds, repeats))
  y <- factor(input$classes[input$y + 1L], levels = input$classes)
  ranger_seed <- if (is.null(seed)) NA_integer_ else as.integer(seed)
  scores <- lapply(seq_along(held_out), function(i) {
    test <- held_out[[i]]
    train <- training[[i]]
    sel <- out$selections[[i]]
    t(vapply(seq_len(out$k), function(j) {
      f <- sel[seq_len(min(j, length(sel)))]
      predicted <- learn(columns(f, train), y[train], columns(f, test), ranger_seed)
      if (length(predicted) != length(test))
        stop(sprintf("learner returned %d predictions for %d held-out samples", length(predicted), length(test)),
             call. = FALSE)
      truth <- y[test]
      hit <- as.character(predicted) == as.character(truth)
      c(accuracy = mean(hit), balanced_accuracy = mean(tapply(hit, droplevels(truth), mean)))
    }, numeric(2)))
  })
  by_fold <- data.frame(`repeat` = rep((seq_along(held_out) - 1L) %/% folds + 1L, each = out$k),
                        fold = rep((seq_along(held_out) - 1L) %% folds + 1L, each = out$k),
                        k = rep(seq_len(out$k), length(held_out)), do.call(rbind, scores), check.names = FALSE)
  summarise <- function(v) {
    m <- matrix(v, nrow = out$k)
    cbind(rowMeans(m), apply(m, 1, stats::sd), apply(m, 1, stats::sd) / sqrt(ncol(m)))
  }
  acc <- summarise(by_fold$accuracy)
  bal <- summarise(by_fold$balanced_accuracy)
  curve <- data.frame(k = seq_len(out$k), accuracy = acc[, 1], accuracy_sd = acc[, 2], accuracy_se = acc[, 3],
                      balanced_accuracy = bal[, 1], balanced_accuracy_sd = bal[, 2], balanced_accuracy_se = bal[, 3])
  mean_of <- curve[[metric]]
  se_of <- curve[[paste0(metric, "_se")]]
  best <- which.max(mean_of)
  structure(list(
    curve = curve, by_fold = by_fold, best_k = best,
    suggested_k = which(mean_of >= mean_of[best] - se_of[best])[1], metric = metric,
    folds = held_out, selections = unname(out$selections), method = method, k_max = out$k,
    learner = if (is.character(learner)) learner else "user function", repeats = repeats, seed = seed,
    nbins = out$nbins, n_samples = input$n_samples, n_features = input$n_features, classes = input$classes,
    feature_names = input$feature_names, elapsed = out$elapsed, run = out$run
  ), class = "fsgpu_cv")
}

# Held-out sample indices (sorted, 1-based) of `folds` stratified folds, `repeats` times.
draw_folds <- function(y, folds, repeats) {
  by_class <- split(seq_along(y), y)
  unlist(lapply(seq_len(repeats), function(r) {
    fold_of <- integer(length(y))
    for (s in by_class) fold_of[s[sample.int(length(s))]] <- rep_len(seq_len(folds), length(s))
    lapply(seq_len(folds), function(f) which(fold_of == f))
  }), recursive = FALSE)
}

# A learner as function(x_train, y_train, x_test, seed): a user's function (which takes no
# seed) or a built-in one by name.
resolve_learner <- function(learner) {
  if (is.function(learner)) return(function(x_train, y_train, x_test, seed) learner(x_train, y_train, x_test))
  builtin <- c("centroid", "naive_bayes", "svm", "ranger")
  if (!is.character(learner) || length(learner) != 1 || !learner %in% builtin)
    stop("learner must be a function(x_train, y_train, x_test) or one of ", quote_list(builtin), call. = FALSE)
  need <- function(pkg) if (!requireNamespace(pkg, quietly = TRUE))
    stop(sprintf("learner \"%s\" needs the %s package (Debian: r-cran-%s)", learner, pkg, tolower(pkg)), call. = FALSE)
  switch(learner,
    centroid = function(x_train, y_train, x_test, seed) nearest_centroid(x_train, y_train, x_test),
    naive_bayes = { need("e1071"); function(x_train, y_train, x_test, seed)
      stats::predict(e1071::naiveBayes(x_train, y_train), x_test) },
    svm = { need("e1071"); function(x_train, y_train, x_test, seed)
      stats::predict(e1071::svm(x_train, y_train, kernel = "linear", scale = vapply(x_train, stats::sd, 1) > 0),
                     x_test) },
    ranger = { need("ranger"); function(x_train, y_train, x_test, seed) {
      fit <- ranger::ranger(x = x_train, y = y_train, num.trees = 200, num.threads = 1,
                            seed = if (is.na(seed)) NULL else seed)
      stats::predict(fit, x_test)$predictions
    } })
}

# Nearest class centroid on features standardised by their training mean and sd (a constant
# feature is only centred).
nearest_centroid <- function(x_train, y_train, x_test) {
  as_numbers <- function(d) vapply(d, as.numeric, numeric(nrow(d)))
  a <- matrix(as_numbers(x_train), nrow(x_train))
  b <- matrix(as_numbers(x_test), nrow(x_test))
  center <- colMeans(a)
  scale <- apply(a, 2, stats::sd)
  scale[!is.finite(scale) | scale == 0] <- 1
  a <- sweep(sweep(a, 2, center), 2, scale, "/")
  b <- sweep(sweep(b, 2, center), 2, scale, "/")
  y_train <- droplevels(y_train)
  centroids <- rowsum(a, y_train) / as.vector(table(y_train))
  d <- vapply(seq_len(nrow(centroids)), function(c) colSums((t(b) - centroids[c, ])^2), numeric(nrow(b)))
  d <- matrix(d, nrow(b))
  levels(y_train)[max.col(-d, ties.method = "first")]
}

#' @exportS3Method print fsgpu_cv
print.fsgpu_cv <- function(x, ...) {
  cat(sprintf("Cross-validated %s selection: k = 1..%d, %d folds x %d, learner %s (%s samples, %s features)\n",
              toupper(x$method), x$k_max, length(x$folds) / x$repeats, x$repeats, x$learner,
              format(x$n_samples, big.mark = ","), format(x$n_features, big.mark = ",")))
  cat(format(x$run), "\n", sep = "")
  label <- gsub("_", " ", x$metric)
  cat(sprintf("Best %s %.3f at k = %d; one-standard-error rule: k = %d (%.3f)\n", label,
              x$curve[[x$metric]][x$best_k], x$best_k, x$suggested_k, x$curve[[x$metric]][x$suggested_k]))
  print(x$curve[, c("k", "accuracy", "accuracy_se", "balanced_accuracy", "balanced_accuracy_se")], row.names = FALSE,
        digits = 3)
  invisible(x)
}

#' @export
as.data.frame.fsgpu_cv <- function(x, ...) x$curve

#' @rdname select_features_cv
#' @details `plot()` draws the mean of `metric` over \eqn{k} with bars of one standard error,
#'   and marks `best_k` (dotted) and `suggested_k` (dashed).
#' @export
plot.fsgpu_cv <- function(x, ...) {
  m <- x$curve[[x$metric]]
  se <- x$curve[[paste0(x$metric, "_se")]]
  graphics::plot(x$curve$k, m, type = "b", pch = 19, ylim = range(c(m - se, m + se), na.rm = TRUE),
                 xlab = "features kept (k)", ylab = paste("cross-validated", gsub("_", " ", x$metric)), ...)
  spread <- se > 0  # a zero-length bar has no direction to draw
  graphics::arrows(x$curve$k[spread], (m - se)[spread], x$curve$k[spread], (m + se)[spread], angle = 90, code = 3,
                   length = 0.03)
  graphics::abline(v = x$best_k, lty = 3)
  graphics::abline(v = x$suggested_k, lty = 2)
  invisible(x)
}
