# Stability selection: one criterion (or several) on many subsamples at once, the features'
# selection frequencies, the error bound of the stable set and the stability of the procedure.

#' Stability selection: how often each feature is selected on subsamples
#'
#' Runs [select_features()] on many subsamples of the data, all at once (see Speed), and
#' reports how often each feature is selected: the selection frequency of Meinshausen and
#' Bühlmann (2010), with the complementary pairs of Shah and Samworth (2013) by default; the
#' features whose frequency reaches `threshold`, with the bound on the expected number of
#' false selections among them; and the stability of the whole procedure, the estimator of
#' Nogueira, Sechidis and Brown (2018) with its confidence interval.
#'
#' @section Subsamples: Subsamples are drawn within each class (stratified), so that every
#'   subsample keeps the class proportions. With `pairs = TRUE` (Shah and Samworth's
#'   complementary pairs) each draw splits every class in two halves of `floor(n_class / 2)`
#'   samples, and both halves are subsamples: `resamples` must be even and `fraction` 0.5.
#'   With `pairs = FALSE` each subsample takes `floor(fraction * n_class)` samples of every
#'   class, independently. The subsamples come from R's random number generator (after
#'   `set.seed(seed)` when `seed` is given, leaving the session's stream as it was), so the
#'   same seed gives the same subsamples, and the same result, on the CPU and the GPU and for
#'   any number of threads or workers.
#'
#' @section Binning: The data are binned (or discretized) once, on all samples, and every
#'   subsample is selected on those codes. Subsample `r` is therefore exactly
#'   `select_features(x[s, ], y[s], k, method, discretize = d)` with `s <- res$resamples[[r]]`
#'   and `d` the binning of the whole data: `res$discretization` when `discretize` was given,
#'   otherwise `discretize(x, method = "equal_width", nbins = res$nbins)`. Its features are
#'   `res$selections[[r]]` (in selection order), and its ranks and frequencies are those
#'   reported here. (A supervised `discretize` method fitted on all samples has seen every
#'   subsample's labels: prefer the default bins when that matters.)
#'
#' @section Frequencies, ranks and the stable set: A feature's `frequency` is the share of all
#'   selections (every method on every subsample) that contain it, and `freq_<method>` that of
#'   one method's selections. Its rank in a selection is its position there; a selection that
#'   does not contain it counts as rank `k + 1`, so `mean_rank` and `median_rank` are over all
#'   selections. The stable set holds the features with `frequency >= threshold`. For
#'   `threshold` above 0.5, `pfer` is the bound of Meinshausen and Bühlmann on the expected
#'   number of falsely selected features in it, \eqn{q^2 / ((2 \pi - 1) p)}, with \eqn{q} the
#'   mean number of features a selection holds and \eqn{p} the number of features; with
#'   complementary pairs Shah and Samworth show that it holds under weaker assumptions (their
#'   equation 8).
#'
#' @section Stability: The estimator \eqn{\hat\Phi} of Nogueira, Sechidis and Brown (2018),
#'   from the \eqn{M} selections as rows of a binary matrix: \eqn{1 - \frac{1}{p}\sum_f
#'   s_f^2 / (\frac{\bar q}{p}(1 - \frac{\bar q}{p}))}, with \eqn{s_f^2 = \frac{M}{M-1}\hat
#'   p_f(1 - \hat p_f)} the unbiased variance of feature \eqn{f}'s selection and \eqn{\bar
#'   q} the mean selection size. It is 1 when every selection is the same, about 0 for
#'   selections drawn at random; `stability` holds it with the normal confidence interval of
#'   the paper's Theorem (level `1 - alpha`). With several methods the selections of all of
#'   them are pooled.
#'
#' @section Speed: The data are encoded once. On the CPU the subsamples' selections run side by
#'   side on the threads, each on the shared codes of its rows (gathered, not re-encoded), one
#'   engine per thread, so that 100 selections cost little more than 100 / threads single
#'   selections without any R-level loop. On the GPU (`backend = "gpu"`) the subsamples run one
#'   after another, each on the devices. With `BPPARAM` the subsamples are split across
#'   BiocParallel workers; the results are the same.
#'
#' @inheritParams select_features
#' @param k Number of features each selection takes.
#' @param method One or more criteria of [select_features()]; with several, every subsample is
#'   selected by each, and frequencies pool them (`freq_<method>` gives each one's).
#' @param resamples Number of subsamples (with `pairs`, even: `resamples / 2` pairs).
#' @param fraction The share of each class a subsample takes (0.5 with `pairs`).
#' @param pairs Complementary pairs (Shah and Samworth) rather than independent subsamples.
#' @param threshold The selection frequency a feature needs to be in the stable set.
#' @param alpha One minus the level of the stability's confidence interval.
#' @param seed An integer seed for the subsamples, or `NULL` to continue R's random stream.
#' @param beta,gamma,min_score As in [select_features()], for the methods that take them.
#' @param BPPARAM A BiocParallel parameter object to spread the subsamples over workers, or
#'   `NULL` (the threads of this session). Each worker runs its share on `threads` threads
#'   (by default this machine's cores shared among the workers).
#' @param class For a `SummarizedExperiment`: the `colData` column holding the classes.
#' @param assay For a `SummarizedExperiment`: the assay to use (default: the first).
#' @return An object of class `fsgpu_stability`: a list with `features`, a data frame with one
#'   row per feature (`feature`, `index`, `frequency`, `freq_<method>` for each method when
#'   there are several, `mean_rank`, `median_rank`, `stable`), sorted by frequency (then mean
#'   rank, then index); `stable`, the names of the stable set in that order; `threshold`,
#'   `pfer`, `q` (mean selection size); `stability`, a named vector (`estimate`, `lower`,
#'   `upper`, `variance`); `resamples`, a list of the subsamples' sample indices (1-based
#'   integer vectors); `selections`, the list of selected feature indices, in selection order,
#'   of every method and subsample (method-major: names `<method>:<subsample>`); and the
#'   parameters (`method`, `k`, `pairs`, `fraction`, `seed`, `nbins`, `discretization`),
#'   the data's shape (`n_samples`, `n_features`, `classes`), `elapsed` and `run` (see
#'   [select_features()]). It has `print`, `as.data.frame` (the `features` table) and `plot`
#'   methods, and [add_results()] stores it in a SummarizedExperiment.
#' @references Meinshausen and Bühlmann (2010), Stability selection, JRSS B 72. Shah and
#'   Samworth (2013), Variable selection with error control: another look at stability
#'   selection, JRSS B 75. Nogueira, Sechidis and Brown (2018), On the stability of feature
#'   selection algorithms, JMLR 18(174).
#' @seealso [aggregate_ranks()] to combine the rankings, [select_features_cv()] for how many
#'   features to keep.
#' @examples
#' set.seed(1)
#' y <- factor(rep(c("a", "b"), 50))
#' x <- matrix(rnorm(100 * 40), 100, 40, dimnames = list(NULL, paste0("g", 1:40)))
#' x[, 3] <- x[, 3] + 1.5 * (y == "b")
#' x[, 9] <- x[, 9] - 1.0 * (y == "b")
#' st <- stability_selection(x, y, k = 5, resamples = 20, seed = 1, backend = "cpu", threads = 1)
#' st
#' head(as.data.frame(st))
#' plot(st)
#' # a subsample's selection, rerun alone
#' s <- st$resamples[[1]]
#' d <- discretize(x, method = "equal_width", nbins = st$nbins)
#' select_features(x[s, ], y[s], k = 5, discretize = d, backend = "cpu")$selection$index
#' st$selections[[1]]
#' @export
stability_selection <- function(x, ...) UseMethod("stability_selection")

#' @rdname stability_selection
#' @export
stability_selection.default <- function(x, y, k = 10, method = "jmi", resamples = 100, fraction = 0.5, pairs = TRUE,
                                        threshold = 0.6, alpha = 0.05, seed = NULL, nbins = NULL, beta = NULL,
                                        gamma = NULL, min_score = NULL, backend = NULL, threads = NULL, devices = NULL,
                                        quiet = FALSE, discretize = NULL, categorical = NULL, BPPARAM = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_stability(prepare_input(x, y, binning = binning, convert = !is.null(discretize)), k = k,
                                method = method,
                                resamples = resamples, fraction = fraction, pairs = pairs, threshold = threshold,
                                alpha = alpha, seed = seed, nbins = nbins, beta = beta, gamma = gamma,
                                min_score = min_score, backend = backend, threads = threads, devices = devices,
                                quiet = quiet, discretize = discretize, BPPARAM = BPPARAM))
}

#' @rdname stability_selection
#' @export
stability_selection.SummarizedExperiment <- function(x, class, k = 10, assay = NULL, method = "jmi", resamples = 100,
                                                     fraction = 0.5, pairs = TRUE, threshold = 0.6, alpha = 0.05,
                                                     seed = NULL, nbins = NULL, beta = NULL, gamma = NULL,
                                                     min_score = NULL, backend = NULL, threads = NULL,
                                                     devices = NULL, quiet = FALSE, discretize = NULL,
                                                     categorical = NULL, BPPARAM = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical)
  quiet_if(quiet, run_stability(prepare_se_input(x, class, assay, binning = binning, convert = !is.null(discretize)),
                                k = k, method = method,
                                resamples = resamples, fraction = fraction, pairs = pairs, threshold = threshold,
                                alpha = alpha, seed = seed, nbins = nbins, beta = beta, gamma = gamma,
                                min_score = min_score, backend = backend, threads = threads, devices = devices,
                                quiet = quiet, discretize = discretize, BPPARAM = BPPARAM))
}

run_stability <- function(input, k, method, resamples, fraction, pairs, threshold, alpha, seed, nbins, beta, gamma,
                          min_score, backend, threads, devices, quiet, discretize, BPPARAM) {
  if (!is.logical(pairs) || length(pairs) != 1 || is.na(pairs)) stop("pairs must be TRUE or FALSE", call. = FALSE)
  if (!is.numeric(threshold) || length(threshold) != 1 || !(threshold > 0 && threshold <= 1))
    stop("threshold must be one number in (0, 1]", call. = FALSE)
  if (!is.numeric(alpha) || length(alpha) != 1 || !(alpha > 0 && alpha < 1))
    stop("alpha must be one number in (0, 1)", call. = FALSE)
  resamples <- check_count(resamples, "resamples", min = 2)
  samples <- with_seed(seed, draw_subsamples(input$y, input$classes, resamples, fraction, pairs))
  out <- run_subsamples(input, samples, k = k, method = method, nbins = nbins, beta = beta, gamma = gamma,
                        min_score = min_score, backend = backend, threads = threads, devices = devices, quiet = quiet,
                        discretize = discretize, BPPARAM = BPPARAM,
                        job = sprintf("Stability selection: %d subsamples x %s", resamples,
                                      paste(toupper(method), collapse = "+")))
  features <- selection_frequencies(out$selections, out$methods, input$n_features, out$k)
  features <- data.frame(feature = input$feature_names, index = seq_len(input$n_features), features,
                         check.names = FALSE, stringsAsFactors = FALSE)
  features <- features[order(-features$frequency, features$mean_rank, features$index), , drop = FALSE]
  features$stable <- features$frequency >= threshold
  rownames(features) <- NULL
  q <- mean(lengths(out$selections))
  structure(list(
    features = features, stable = features$feature[features$stable], threshold = threshold,
    pfer = if (threshold > 0.5) q^2 / ((2 * threshold - 1) * input$n_features) else NA_real_, q = q,
    stability = nogueira_stability(out$selections, input$n_features, alpha),
    resamples = samples, selections = out$selections,
    method = out$methods, k = out$k, pairs = pairs, fraction = if (pairs) 0.5 else fraction, seed = seed,
    nbins = out$nbins, discretization = out$discretization, alpha = alpha,
    n_samples = input$n_samples, n_features = input$n_features, classes = input$classes,
    elapsed = out$elapsed, run = out$run
  ), class = "fsgpu_stability")
}

# Evaluates expr after set.seed(seed), putting R's random stream back as it was; with no
# seed, continues the stream.
with_seed <- function(seed, expr) {
  if (is.null(seed)) return(expr)
  if (!is.numeric(seed) || length(seed) != 1 || is.na(seed)) stop("seed must be one integer or NULL", call. = FALSE)
  old <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) get(".Random.seed", envir = globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else
    assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed)
  expr
}

# Stratified subsamples (sorted 1-based indices) of the samples whose 0-based classes are y
# (labels `classes`):
# complementary halves of every class (pairs), or fraction of every class, drawn anew each time.
draw_subsamples <- function(y, classes, resamples, fraction, pairs) {
  by_class <- split(seq_along(y), y)
  if (pairs) {
    if (resamples %% 2) stop("resamples must be even with pairs = TRUE (each pair gives two)", call. = FALSE)
    if (!isTRUE(all.equal(fraction, 0.5))) stop("fraction must be 0.5 with pairs = TRUE", call. = FALSE)
  } else if (!is.numeric(fraction) || length(fraction) != 1 || !(fraction > 0 && fraction < 1)) {
    stop("fraction must be one number between 0 and 1", call. = FALSE)
  }
  size <- vapply(by_class, function(s) as.integer(floor(length(s) * if (pairs) 0.5 else fraction)), integer(1))
  if (sum(size > 0) < 2)
    stop(sprintf("a subsample would hold fewer than two classes (class sizes %s; fraction %g)",
                 paste(lengths(by_class), collapse = ", "), if (pairs) 0.5 else fraction), call. = FALSE)
  if (any(size == 0))
    message(sprintf("class%s %s too small to be in any subsample", if (sum(size == 0) > 1) "es" else "",
                    quote_list(classes[as.integer(names(by_class))[size == 0] + 1L])))
  draw <- function() lapply(seq_along(by_class), function(c) by_class[[c]][sample.int(length(by_class[[c]]))])
  if (!pairs) return(lapply(seq_len(resamples), function(r) {
    shuffled <- draw()
    sort(unlist(lapply(seq_along(shuffled), function(c) shuffled[[c]][seq_len(size[c])])))
  }))
  unlist(lapply(seq_len(resamples / 2), function(r) {
    shuffled <- draw()
    list(sort(unlist(lapply(seq_along(shuffled), function(c) shuffled[[c]][seq_len(size[c])]))),
         sort(unlist(lapply(seq_along(shuffled), function(c) shuffled[[c]][size[c] + seq_len(size[c])]))))
  }), recursive = FALSE)
}

# The selections of every method on every subsample (1-based sample indices), as the glue
# returns them, on this session's threads or GPUs or spread over BPPARAM's workers. Returns
# the selections (method-major, named "<method>:<subsample>"), the methods, k, the bins and
# discretization used, the elapsed seconds and the run record. k_arg: the name of the caller's
# argument that k comes from, for its errors.
run_subsamples <- function(input, samples, k, method, nbins, beta, gamma, min_score, backend, threads, devices, quiet,
                           discretize, BPPARAM, job, k_arg = "k") {
  if (!is.character(method) || !length(method) || anyNA(method) || !all(method %in% selection_methods))
    stop("method must be one or more of ", quote_list(selection_methods), call. = FALSE)
  if (anyDuplicated(method)) stop("method names a criterion twice", call. = FALSE)
  k <- check_count(k, k_arg, max = input$n_features, what = "the number of features")
  if (!is.null(beta) && !any(method %in% c("mifs", "betagamma")))
    stop("beta is a parameter of mifs and betagamma", call. = FALSE)
  if (!is.null(gamma) && !"betagamma" %in% method) stop("gamma is a parameter of betagamma", call. = FALSE)
  coefs <- lapply(method, function(m) resolve_coefficients(m, if (m %in% c("mifs", "betagamma")) beta,
                                                              if (m == "betagamma") gamma))
  bounds <- vapply(method, function(m) {
    s <- if (!is.null(min_score)) min_score else if (m %in% never_negative_methods) 0 else -Inf
    if (!is.numeric(s) || length(s) != 1 || is.na(s)) stop("min_score must be one number (or -Inf)", call. = FALSE)
    s
  }, numeric(1))
  bp <- bp_setup(BPPARAM, devices, threads)
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- resolve_run(input, nbins, backend, if (is.null(bp)) threads else bp$threads, devices, "bits",
                     steps = k * length(samples) * length(method), forked_workers = !is.null(bp) && bp$forked)
  args <- list(x = input$x, y = input$y, n_classes = length(input$classes), samples = samples, methods = method,
               beta = vapply(coefs, `[[`, numeric(1), "beta"), gamma = vapply(coefs, `[[`, numeric(1), "gamma"),
               min_score = unname(bounds), k = k, nbins = run$nbins, backend = run$backend, threads = run$threads,
               devices = run$devices, memory_limit = run$memory_limit)
  progress <- if (is.null(bp)) job_progress(job, quiet)
  elapsed <- system.time(
    res <- if (is.null(bp)) do.call(fsgpu_select_subsamples, c(args, list(progress = progress))) else
      subsamples_on_workers(bp, args),
    gcFirst = FALSE
  )[["elapsed"]]
  progress_done(progress)
  selections <- lapply(res, `[[`, "features")
  names(selections) <- paste0(rep(method, each = length(samples)), ":", seq_along(samples))
  list(selections = selections, methods = method, k = k, nbins = run$nbins, discretization = input$discretization,
       elapsed = elapsed,
       run = backend_used(run$backend, bp_threads(bp, run$threads), run$devices, elapsed, run$why_cpu,
                          workers = bp_workers(bp), notes = input$notes))
}

# The glue over BiocParallel workers: the subsamples in consecutive shares, one call each; the
# selections come back in the order of one call over all of them.
subsamples_on_workers <- function(bp, args) {
  n <- length(args$samples)
  shares <- split(seq_len(n), cut(seq_len(n), min(n, bp$n_tiles), labels = FALSE))
  tiles <- lapply(shares, function(s) list(samples = args$samples[s], threads = bp$threads))
  lib <- normalizePath(dirname(system.file(package = "fsgpu")), mustWork = FALSE)
  res <- BiocParallel::bptry(BiocParallel::bplapply(unname(tiles), tile_worker, glue = "fsgpu_select_subsamples",
                                                    args = c(args[names(args) != "samples"], list(progress = NULL)),
                                                    lib = lib, BPPARAM = bp$param))
  ok <- BiocParallel::bpok(res)
  if (!all(ok)) {
    first <- which(!ok)[1]
    stop(sprintf("subsamples %d to %d failed on their worker: %s", min(shares[[first]]), max(shares[[first]]),
                 conditionMessage(res[[first]])), call. = FALSE)
  }
  # Each call returns its share method-major: put them back in the order of one call.
  n_methods <- length(args$methods)
  unlist(lapply(seq_len(n_methods), function(m) unlist(lapply(seq_along(shares), function(t) {
    len <- length(shares[[t]])
    res[[t]][(m - 1) * len + seq_len(len)]
  }), recursive = FALSE)), recursive = FALSE)
}

# Per feature: selection frequency over all selections (and per method when there are
# several), mean and median rank with k + 1 for a selection that does not hold the feature.
selection_frequencies <- function(selections, methods, n_features, k) {
  m <- length(selections)
  index <- unlist(selections, use.names = FALSE)
  rank <- unlist(lapply(selections, seq_along), use.names = FALSE)
  count <- tabulate(index, n_features)
  out <- list(frequency = count / m)
  if (length(methods) > 1) {
    per <- length(selections) / length(methods)
    for (i in seq_along(methods)) {
      s <- selections[(i - 1) * per + seq_len(per)]
      out[[paste0("freq_", methods[i])]] <- tabulate(unlist(s, use.names = FALSE), n_features) / per
    }
  }
  rank_sum <- vapply(split(rank, factor(index, levels = seq_len(n_features))), sum, numeric(1))
  out$mean_rank <- unname((rank_sum + (m - count) * (k + 1)) / m)
  median_rank <- rep(k + 1, n_features)
  for (f in which(count > 0)) median_rank[f] <- stats::median(c(rank[index == f], rep(k + 1, m - count[f])))
  out$median_rank <- median_rank
  as.data.frame(out, check.names = FALSE)
}

# The stability estimator of Nogueira, Sechidis and Brown (2018) over the selections (feature
# index vectors) among n_features, with its variance and normal confidence interval.
nogueira_stability <- function(selections, n_features, alpha = 0.05) {
  m <- length(selections)
  z <- matrix(0, m, n_features)
  for (i in seq_len(m)) z[i, selections[[i]]] <- 1
  p_hat <- colMeans(z)
  sizes <- rowSums(z)
  q_bar <- mean(sizes)
  denom <- (q_bar / n_features) * (1 - q_bar / n_features)
  if (m < 2 || denom == 0)
    return(c(estimate = NA_real_, lower = NA_real_, upper = NA_real_, variance = NA_real_))
  estimate <- 1 - (m / (m - 1)) * mean(p_hat * (1 - p_hat)) / denom
  # Each selection's term of the estimator's influence (the paper's phi_i), whose spread gives
  # the asymptotic variance.
  phi <- (as.vector(z %*% p_hat) / n_features - sizes * q_bar / n_features^2 +
            estimate / 2 * (2 * sizes * q_bar / n_features^2 - sizes / n_features - q_bar / n_features + 1)) / denom
  variance <- 4 / m^2 * sum((phi - mean(phi))^2)
  half <- stats::qnorm(1 - alpha / 2) * sqrt(variance)
  c(estimate = estimate, lower = estimate - half, upper = estimate + half, variance = variance)
}

#' @exportS3Method print fsgpu_stability
print.fsgpu_stability <- function(x, n = 10, ...) {
  cat(sprintf("Stability selection: %s, k = %d, %d %s (%s samples, %s features, %d classes)\n",
              paste(toupper(x$method), collapse = " + "), x$k, length(x$resamples),
              if (x$pairs) "subsamples in complementary pairs" else sprintf("subsamples of %g", x$fraction),
              format(x$n_samples, big.mark = ","), format(x$n_features, big.mark = ","), length(x$classes)))
  cat(format(x$run), "\n", sep = "")
  s <- x$stability
  cat(sprintf("Stability (Nogueira et al.): %.3f, %g%% CI [%.3f, %.3f]\n", s[["estimate"]], 100 * (1 - x$alpha),
              s[["lower"]], s[["upper"]]))
  cat(sprintf("Stable set (frequency >= %g): %d features%s\n", x$threshold, length(x$stable),
              if (is.na(x$pfer)) "" else sprintf("; expected false selections at most %.3g (PFER bound, q = %.3g)",
                                                 x$pfer, x$q)))
  print(utils::head(x$features, n), row.names = FALSE, digits = 3)
  if (nrow(x$features) > n) cat(sprintf("... and %s more\n", format(nrow(x$features) - n, big.mark = ",")))
  invisible(x)
}

#' @export
as.data.frame.fsgpu_stability <- function(x, ...) x$features

#' @rdname stability_selection
#' @details `plot()` draws the selection frequencies: `type = "path"` draws, for the
#'   `n` most frequent features, the share of selections that hold each among their first
#'   \eqn{j} features, \eqn{j = 1, \dots, k} (the frequency path), with the threshold;
#'   `type = "bars"` draws their frequencies as bars.
#' @param type `"path"` or `"bars"`.
#' @param n How many features to draw.
#' @export
plot.fsgpu_stability <- function(x, type = c("path", "bars"), n = 10, ...) {
  type <- match.arg(type)
  top <- utils::head(x$features, n)
  if (type == "bars") {
    old <- graphics::par(mar = c(4, max(4, 0.6 * max(nchar(top$feature))), 2, 1))
    on.exit(graphics::par(old))
    graphics::barplot(rev(top$frequency), names.arg = rev(top$feature), horiz = TRUE, las = 1, xlim = c(0, 1),
                      xlab = "selection frequency", col = ifelse(rev(top$stable), "steelblue", "grey80"), ...)
    graphics::abline(v = x$threshold, lty = 2)
    return(invisible(x))
  }
  # frequency of being among the first j of a selection
  path <- vapply(top$index, function(f) {
    ranks <- vapply(x$selections, function(s) { r <- match(f, s); if (is.na(r)) x$k + 1L else r }, integer(1))
    vapply(seq_len(x$k), function(j) mean(ranks <= j), numeric(1))
  }, numeric(x$k))
  path <- matrix(path, nrow = x$k)
  graphics::matplot(seq_len(x$k), path, type = "l", lty = 1, col = seq_len(ncol(path)), ylim = c(0, 1),
                    xlab = "features selected (j)", ylab = "share of selections holding the feature in their first j",
                    ...)
  graphics::abline(h = x$threshold, lty = 2)
  graphics::legend("topleft", legend = top$feature, col = seq_len(ncol(path)), lty = 1, bty = "n", cex = 0.8)
  invisible(x)
}
