# Information of feature pairs: with the class (mi_pairs), between features (mi_matrix), and
# the networks built on the latter (mi_network).

#' Joint mutual information of feature pairs with the class
#'
#' For every pair of features \eqn{X_i, X_j} (or every pair that involves a feature of `with`),
#' computes the joint mutual information \eqn{I(Y; X_i,X_j)} with the class, the single
#' features' \eqn{I(Y;X_i)} and \eqn{I(Y;X_j)}, and the interaction information
#' \eqn{I(Y;X_i,X_j) - I(Y;X_i) - I(Y;X_j)}, and returns the best pairs. Pairs are searched in
#' batches and only the best are kept, so the \eqn{N^2/2} values are never held in memory
#' (unless `output = "matrix"`). Values are exact from integer counts: CPU and GPU give
#' bitwise-identical results, and equal values are ordered by feature index.
#'
#' @section Interaction information: Positive values mean synergy (the pair tells more about
#'   the class than its features separately: XOR-like interactions), negative values
#'   redundancy. This is Jakulin's sign convention, as in McGill's interaction information;
#'   the co-information of `infotheo::interinformation()` and praznik has the opposite sign.
#'
#' @section GPU: Every pair's counts \eqn{n(x_i, x_j, y)} are products of the features' one-hot
#'   bit planes. On GPUs with binary tensor cores (compute capability 8.0 and later: A100, H100)
#'   the tensor cores multiply them (256 samples of a class per instruction); older GPUs count
#'   with AND and popcount. Both compute the values on the GPU from the same exact integer sums
#'   as the CPU, and only the pairs that can still enter the result come back to the host.
#'   Features may have up to 64 levels on the GPU.
#'
#' @section Tests: \eqn{G = 2 N \ln 2 \, I(Y; X_i,X_j)} (information in bits) is asymptotically
#'   \eqn{\chi^2} with \eqn{(c - 1)(k - 1)} degrees of freedom under independence of the class
#'   and the pair, where \eqn{c} is the number of observed \eqn{(x_i, x_j)} combinations and
#'   \eqn{k} the number of classes. `p_adjust` applies [stats::p.adjust()] over all pairs
#'   tested (`n_pairs`), not only those returned: exact for `"bonferroni"`; for the other
#'   methods, when only part of the pairs is returned, the adjusted values are never smaller
#'   than those of the full set (conservative).
#'
#' @inheritParams select_features
#' @param top The number of best pairs to return. When `threshold` is given and `top` is not,
#'   every pair at or above the threshold is returned.
#' @param threshold Return only pairs whose `by` value is at least this (in `units`).
#' @param with Features (names or indices): only pairs that involve at least one of them.
#' @param by The measure that ranks pairs: `"joint"`, \eqn{I(Y;X_i,X_j)}, or
#'   `"interaction"`, the interaction information (synergy first).
#' @param p_adjust A method of [stats::p.adjust()] for the column `p_adjusted`, or `"none"`.
#'   `"hommel"` is refused when more than 10,000 pairs are tested: its time grows with the
#'   square of their number (hours for a million pairs); `"hochberg"` rests on the same
#'   assumptions with slightly less power, and `"BH"` controls the false discovery rate.
#' @param output `"pairs"` (a data frame) or `"matrix"`: the full symmetric matrix of the `by`
#'   measure, for up to 10,000 features (`NA` on the diagonal).
#' @param BPPARAM `NULL` (one process), or a `BiocParallel::BiocParallelParam` (e.g.
#'   `SnowParam(4)` on one machine, `BatchtoolsParam()` on a cluster) to spread the search over
#'   its workers: the rows of the search are cut into tiles of about equal work (three per
#'   worker; `options(fsgpu.tiles = n)` sets their number), each searched by the normal engine
#'   on a worker, and the tiles' best pairs merged. The result is identical to `BPPARAM =
#'   NULL`'s. Workers need fsgpu installed (they find the library of this session); `threads`
#'   is then per worker (default: this machine's cores shared among the workers), `devices`
#'   may be a list of GPU id sets given to the tiles in turn, and the backend is chosen here.
#'   The workers get the binned codes rather than double values.
#' @return For `output = "pairs"`, a data frame of class `fsgpu_pairs`, best first, with
#'   columns `feature1`, `feature2` (names), `index1`, `index2` (columns of `x`, `index1 <
#'   index2`), `mi_joint`, `mi1`, `mi2`, `interaction` (in `units`), `df`, `p_value` and, with
#'   `p_adjust`, `p_adjusted`; attributes `n_pairs` (pairs tested), `by`, `nbins`, `units`,
#'   `backend`, `elapsed`, `timings` (seconds spent encoding the data, preparing the
#'   codes and per-feature sums, and searching the pairs, GPU set-up included) and `run` (where
#'   the job ran and why, as in [select_features()]). It has `print` and `plot` methods. For
#'   `output = "matrix"`, a features x features matrix with attributes `by`, `nbins`, `units`,
#'   `backend` and `run`.
#' @references Sluga, Curk, Zupan and Lotric (2017), Heterogeneous computing architecture for
#'   fast detection of SNP-SNP interactions, BMC Bioinformatics 18. Jakulin and Bratko (2003),
#'   Analyzing attribute dependencies, PKDD.
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:1, 300 * 20, replace = TRUE), 300, 20,
#'             dimnames = list(NULL, paste0("snp", 1:20)))
#' y <- factor(xor(x[, 3], x[, 7]))  # a pure interaction: neither SNP alone tells anything
#' pairs <- mi_pairs(x, y, top = 5, backend = "cpu")
#' pairs
#' mi_pairs(x, y, by = "interaction", top = 3, backend = "cpu")
#' mi_pairs(x, y, with = "snp3", top = 3, backend = "cpu")
#' # the same pairs from tiles run by BiocParallel workers
#' if (requireNamespace("BiocParallel", quietly = TRUE))
#'   mi_pairs(x, y, top = 5, backend = "cpu", BPPARAM = BiocParallel::SerialParam())
#' @export
mi_pairs <- function(x, ...) UseMethod("mi_pairs")

#' @rdname mi_pairs
#' @export
mi_pairs.default <- function(x, y, top = 1000, threshold = NULL, with = NULL, by = c("joint", "interaction"),
                             p_adjust = "none", output = c("pairs", "matrix"), nbins = NULL, backend = NULL,
                             threads = NULL, devices = NULL, units = c("bits", "nats"), discretize = NULL,
                             BPPARAM = NULL, quiet = FALSE, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  # Tiles on BPPARAM's workers take the checked input (prepare_input() without defer).
  defer <- is.null(discretize) && is.null(BPPARAM)
  quiet_if(quiet, run_pairs(prepare_input(x, y, binning = binning, defer = defer), top = if (!missing(top)) top,
                            threshold = threshold, with = with, by = by, p_adjust = p_adjust, output = output,
                            nbins = nbins, backend = backend, threads = threads, devices = devices, units = units,
                            discretize = discretize, BPPARAM = BPPARAM, quiet = quiet))
}

#' @rdname mi_pairs
#' @param class For a `SummarizedExperiment`: the `colData` column holding the class labels.
#' @param assay For a `SummarizedExperiment` (features are its rows): the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @export
mi_pairs.SummarizedExperiment <- function(x, class, top = 1000, threshold = NULL, with = NULL,
                                          by = c("joint", "interaction"), p_adjust = "none",
                                          output = c("pairs", "matrix"), assay = NULL, nbins = NULL, backend = NULL,
                                          threads = NULL, devices = NULL, units = c("bits", "nats"),
                                          discretize = NULL, BPPARAM = NULL, quiet = FALSE, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  defer <- is.null(discretize) && is.null(BPPARAM)
  quiet_if(quiet, run_pairs(prepare_se_input(x, class, assay, binning = binning, defer = defer),
                            top = if (!missing(top)) top,
                            threshold = threshold, with = with, by = by, p_adjust = p_adjust, output = output,
                            nbins = nbins, backend = backend, threads = threads, devices = devices, units = units,
                            discretize = discretize, BPPARAM = BPPARAM, quiet = quiet))
}

run_pairs <- function(input, top, threshold, with, by, p_adjust, output, nbins, backend, threads, devices, units,
                      discretize = NULL, BPPARAM = NULL, quiet = FALSE) {
  bp <- bp_setup(BPPARAM, devices, threads)
  devices <- bp_all_devices(devices)
  by <- match.arg(by, c("joint", "interaction"))
  output <- match.arg(output, c("pairs", "matrix"))
  if (input$n_features < 2) stop("x needs at least two features to form pairs", call. = FALSE)
  if (!is.character(p_adjust) || length(p_adjust) != 1 || !p_adjust %in% stats::p.adjust.methods)
    stop("p_adjust must be one of ", quote_list(stats::p.adjust.methods, max = 10), call. = FALSE)
  with <- resolve_features(with, input, "with")
  if (!is.null(threshold) && (!is.numeric(threshold) || length(threshold) != 1 || is.na(threshold)))
    stop("threshold must be one number", call. = FALSE)
  if (output == "matrix") {
    if (input$n_features > 10000)
      stop(sprintf("output = \"matrix\" is for up to 10,000 features, not %s; use top or threshold",
                   format(input$n_features, big.mark = ",")), call. = FALSE)
    if (!is.null(top) || !is.null(threshold) || length(with))
      stop("output = \"matrix\" holds every pair: it takes no top, threshold or with", call. = FALSE)
  }
  top <- if (output == "matrix" || (is.null(top) && !is.null(threshold))) -1 else
    check_count(if (is.null(top)) 1000 else top, "top", max = .Machine$integer.max)
  # stats::p.adjust's Hommel takes time quadratic in n: hours for a million pairs.
  n_tested <- if (length(with)) {
    length(with) * (input$n_features - length(with)) + choose(length(with), 2)
  } else {
    choose(input$n_features, 2)
  }
  if (output == "pairs" && p_adjust == "hommel" && n_tested > 10000)
    stop(sprintf(paste0("p_adjust = \"hommel\" takes time quadratic in the number of pairs tested, %s here; ",
                        "it is for up to 10,000 pairs: use \"hochberg\" (the same Simes-based assumptions, ",
                        "slightly less power) or \"BH\""), format(n_tested, big.mark = ",", scientific = FALSE)),
         call. = FALSE)
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- resolve_pair_run(input, nbins, backend, threads, devices, units, isTRUE(bp$forked))
  args <- list(x = input$x, y = input$y, n_classes = length(input$classes), with = with, measure = by, top = top,
               has_threshold = !is.null(threshold), threshold = if (is.null(threshold)) 0 else threshold,
               scale = run$scale, nbins = run$nbins, backend = run$engine, threads = run$threads,
               devices = run$devices, memory_limit = run$memory_limit, bin_above = input$bin_above)
  # Progress from the engine; tiles on workers report none.
  progress <- if (is.null(bp)) job_progress(sprintf("Searching %s feature pairs", format(n_tested, big.mark = ",")),
                                            quiet)
  elapsed <- system.time(
    res <- if (is.null(bp)) do.call(fsgpu_mi_pairs, c(args, list(progress = progress))) else
      bp_mi_pairs(bp, args, n_rows = if (length(with)) length(unique(with)) else input$n_features, input$n_features),
    gcFirst = FALSE
  )[["elapsed"]]
  progress_done(progress)
  input <- finish_input(input, res$input)
  run$backend <- res$backend
  used <- backend_used(res$backend, bp_threads(bp, run$threads), run$devices, elapsed,
                       if (nzchar(res$why_cpu)) res$why_cpu else run$why_cpu, bp_workers(bp), input$notes)
  if (output == "matrix") {
    values <- res[[if (by == "joint") "mi_joint" else "interaction"]] * run$scale
    m <- matrix(NA_real_, input$n_features, input$n_features,
                dimnames = list(input$feature_names, input$feature_names))
    m[cbind(res$i, res$j)] <- values
    m[cbind(res$j, res$i)] <- values
    return(structure(m, by = by, nbins = run$nbins, units = run$units, backend = run$backend, run = used))
  }
  df <- (res$cells - 1) * (length(input$classes) - 1)
  g <- 2 * input$n_samples * log(2) * res$mi_joint
  out <- data.frame(feature1 = input$feature_names[res$i], feature2 = input$feature_names[res$j],
                    index1 = res$i, index2 = res$j, mi_joint = res$mi_joint * run$scale, mi1 = res$mi1 * run$scale,
                    mi2 = res$mi2 * run$scale, interaction = res$interaction * run$scale, df = df,
                    p_value = rep(1, length(df)), stringsAsFactors = FALSE)
  tested <- df > 0  # a pair with one observed joint level tells nothing: p = 1
  out$p_value[tested] <- stats::pchisq(g[tested], df[tested], lower.tail = FALSE)
  if (p_adjust != "none") out$p_adjusted <- stats::p.adjust(out$p_value, p_adjust, n = max(res$n_pairs, nrow(out)))
  structure(out, class = c("fsgpu_pairs", "data.frame"), n_pairs = res$n_pairs, by = by, p_adjust = p_adjust,
            nbins = run$nbins, units = run$units, backend = run$backend, elapsed = elapsed,
            timings = res$timings, run = used, binned = has_numeric_columns(input), discretization = input$discretization,
            n_samples = input$n_samples, n_features = input$n_features, classes = input$classes)
}

#' @exportS3Method print fsgpu_pairs
print.fsgpu_pairs <- function(x, n = 10, ...) {
  cat(sprintf("Feature pairs by %s: %s of %s tested (%s samples, %d classes, %s)\n",
              if (attr(x, "by") == "joint") "joint MI I(Y; Xi,Xj)" else "interaction information",
              format(nrow(x), big.mark = ","), format(attr(x, "n_pairs"), big.mark = ","),
              format(attr(x, "n_samples"), big.mark = ","), length(attr(x, "classes")),
              if (isTRUE(attr(x, "binned"))) sprintf("%d bins", attr(x, "nbins")) else "categorical features"))
  cat(format(attr(x, "run")), "\n", sep = "")
  cat(sprintf("Information in %s; interaction > 0 is synergy.\n", attr(x, "units")))
  shown <- utils::head(as.data.frame(x), n)
  print(shown, row.names = FALSE, digits = 4)
  if (nrow(x) > n) cat(sprintf("... and %s more\n", format(nrow(x) - n, big.mark = ",")))
  invisible(x)
}

# Whether some columns are numeric, so that nbins applies (integer columns are categories).
has_numeric_columns <- function(input) {
  if (isTRUE(input$binned)) return(TRUE)  # a DelayedArray binned by blocks (delayed.R)
  if (!is.null(input$bin_above)) return(any(input$kinds == "double"))  # deferred: x as given
  x <- input$x
  if (is.list(x)) any(vapply(x, is.double, logical(1))) else methods::is(x, "dgCMatrix") || is.double(x)
}

#' @export
as.data.frame.fsgpu_pairs <- function(x, ...) data_alone(x)

#' Mutual information between every pair of features
#'
#' `mi_matrix()` computes \eqn{I(X_i;X_j)} for every pair of features (no class involved),
#' exactly from integer counts, on CPU or GPU with identical results. The diagonal holds each
#' feature's entropy \eqn{H(X_i) = I(X_i;X_i)}.
#'
#' @section Comparison with minet: The matrix equals
#'   `minet::build.mim(x, estimator = "mi.empirical", disc = "equalwidth", nbins = b)` only
#'   when all three of these hold: the values are in nats (`units = "nats"`; minet has no
#'   bits), both use the same number of bins `b` (minet's default is \eqn{\sqrt{N}} bins,
#'   fsgpu's the cube root of the number of samples \eqn{N}: give `nbins` to both), and
#'   fsgpu's diagonal is set to 0 (minet's diagonal is 0). With `estimator`, it equals
#'   `infotheo::mutinformation(codes, method = estimator)` for the same codes (in nats),
#'   diagonal included, and minet's estimators `"mi.mm"` and `"mi.sg"` in the same way.
#'
#' @inheritParams select_features
#' @param estimator The estimator of the entropies in \eqn{I(X_i;X_j) = H(X_i) + H(X_j) -
#'   H(X_i,X_j)} and on the diagonal: `"emp"` (plug-in, the default), `"mm"` (Miller-Madow),
#'   `"sg"` (infotheo's "Schurmann-Grassberger") or `"shrink"` (James-Stein shrinkage, on the CPU
#'   only), as described in [mi_scores()]. Unlike [mi_scores()], and like infotheo's matrix,
#'   negative estimates are kept.
#' @param x Samples in rows, features in columns (a matrix, data frame or sparse `Matrix`), or
#'   a `SummarizedExperiment` (features are the rows of `assay`).
#' @param discretize `"equal_width"` or `"equal_freq"` (with `nbins`), or a fitted [discretize()]
#'   result, to cut numeric columns instead of equal-width binning; without a class, the
#'   supervised methods do not apply.
#' @param features Features (names or indices) to include; default all.
#' @param assay For a `SummarizedExperiment`: the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @param BPPARAM `NULL`, or a `BiocParallel::BiocParallelParam` to spread the pairs over its
#'   workers in tiles of rows, as in [mi_pairs()]; the matrix is identical.
#' @return A symmetric features x features matrix (in `units`) with attributes `nbins`,
#'   `units`, `estimator`, `backend` and `run` (where the job ran and why, as in [select_features()]).
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200 * 4), 200, 4, dimnames = list(NULL, paste0("g", 1:4)))
#' x[, 2] <- x[, 1] + rnorm(200, sd = 0.3)
#' round(mi_matrix(x, backend = "cpu"), 3)
#' if (requireNamespace("BiocParallel", quietly = TRUE))
#'   round(mi_matrix(x, backend = "cpu", BPPARAM = BiocParallel::SerialParam()), 3)
#' @export
mi_matrix <- function(x, ...) UseMethod("mi_matrix")

#' @rdname mi_matrix
#' @export
mi_matrix.default <- function(x, features = NULL, nbins = NULL, backend = NULL, threads = NULL, devices = NULL,
                              units = c("bits", "nats"), discretize = NULL, BPPARAM = NULL, quiet = FALSE,
                              estimator = c("emp", "mm", "sg", "shrink"), categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  # The checks cover all of x, also outside `features`; tiles on BPPARAM's workers take checked input.
  defer <- is.null(discretize) && is.null(BPPARAM) && is.null(features)
  quiet_if(quiet, run_mi_matrix(prepare_unsupervised_input(x, binning = binning, defer = defer), features, nbins,
                                backend, threads, devices, units, discretize, BPPARAM, quiet, estimator))
}

#' @rdname mi_matrix
#' @export
mi_matrix.SummarizedExperiment <- function(x, features = NULL, assay = NULL, nbins = NULL, backend = NULL,
                                           threads = NULL, devices = NULL, units = c("bits", "nats"),
                                          discretize = NULL, BPPARAM = NULL, quiet = FALSE,
                                          estimator = c("emp", "mm", "sg", "shrink"), categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  defer <- is.null(discretize) && is.null(BPPARAM) && is.null(features)
  quiet_if(quiet, run_mi_matrix(prepare_se_input(x, NULL, assay, binning = binning, defer = defer), features, nbins,
                                backend, threads, devices, units, discretize, BPPARAM, quiet, estimator))
}

run_mi_matrix <- function(input, features, nbins, backend, threads, devices, units, discretize = NULL,
                          BPPARAM = NULL, quiet = FALSE, estimator = "emp") {
  estimator <- match_estimator(estimator)
  bp <- bp_setup(BPPARAM, devices, threads)
  devices <- bp_all_devices(devices)
  index <- resolve_features(features, input, "features")
  if (length(index)) input <- subset_features(input, index)
  if (input$n_features < 2) stop("mi_matrix needs at least two features", call. = FALSE)
  input <- apply_discretization(input, discretize, nbins, backend, threads, devices, quiet)
  run <- cpu_for_estimator(resolve_pair_run(input, nbins, backend, threads, devices, units, isTRUE(bp$forked)),
                           backend, estimator)
  args <- list(x = input$x, n_samples = input$n_samples, nbins = run$nbins, backend = run$engine,
               threads = run$threads, devices = run$devices, memory_limit = run$memory_limit, estimator = estimator,
               bin_above = input$bin_above)
  # Progress from the engine; tiles on workers report none.
  progress <- if (is.null(bp)) job_progress(sprintf("Mutual information of %s feature pairs",
                                                    format(choose(input$n_features, 2), big.mark = ",")), quiet)
  elapsed <- system.time(
    m <- if (is.null(bp)) do.call(fsgpu_mi_matrix, c(args, list(progress = progress))) else
      bp_mi_matrix(bp, args, input$n_features),
    gcFirst = FALSE
  )[["elapsed"]]
  progress_done(progress)
  input <- finish_input(input, attr(m, "input"))
  ran <- attr(m, "backend")
  fell_back <- attr(m, "why_cpu")
  used <- backend_used(ran, bp_threads(bp, run$threads), run$devices, elapsed,
                       if (nzchar(fell_back)) fell_back else run$why_cpu, bp_workers(bp), input$notes)
  m <- m * run$scale
  attributes(m) <- list(dim = dim(m), dimnames = list(input$feature_names, input$feature_names))
  structure(m, nbins = run$nbins, units = run$units, estimator = estimator, backend = ran, run = used)
}

# resolve_run() for a pair search, whose work grows with features squared; `engine` is what
# the glue gets: "auto-gpu" lets it fall back to the CPU for features with more levels than the
# GPU search takes, which only the encoded data reveal, or when the GPU has too little memory.
resolve_pair_run <- function(input, nbins, backend, threads, devices, units, forked_workers = FALSE) {
  pairs <- as.numeric(input$n_features) * (input$n_features - 1) / 2
  run <- resolve_run(input, nbins, backend, threads, devices, units, steps = pairs / input$n_features / 4,
                     forked_workers)
  run$engine <- engine_mode(backend, run$backend)
  run
}

#' Mutual information networks: ARACNE, CLR, MRNET, MRNETB
#'
#' Infers a network of features from their pairwise mutual information ([mi_matrix()]) with
#' the definitions of minet (Meyer, Lafitte and Bontempi 2008):
#' \describe{
#'   \item{`aracne`}{Every pair is an edge weighted by its MI, except that in every triangle
#'     the weakest edge is removed when it is below both others by more than `eps` (the data
#'     processing inequality): edge \eqn{(i,j)} goes when some \eqn{k} has
#'     \eqn{I_{ik} - eps > I_{ij}} and \eqn{I_{jk} - eps > I_{ij}}.}
#'   \item{`clr`}{Weight \eqn{\sqrt{z_i^2 + z_j^2}}, where \eqn{z_i = \max(0, (I_{ij} -
#'     \mu_i)/\sigma_i)} with the mean and standard deviation of row \eqn{i} off the diagonal
#'     (minet's `clr(skipDiagonal = 1)`). Where a row's standard deviation is 0 (all its MI
#'     values equal), its \eqn{z_i} is 0; minet gives `NaN` there.}
#'   \item{`mrnet`}{For every feature as target, a forward mRMR selection among the others
#'     (score \eqn{I_{ij} - } the mean MI of \eqn{j} with those already picked) while the best
#'     score is not negative; the weight of \eqn{(i,j)} is the larger score with which one
#'     picked the other. Ties go to the lowest index at every pick. minet differs on a tie for
#'     a target's first pick: it does not reset its running argmax between targets, so the
#'     tie goes to the previous target's last pick when that is among the tied.}
#'   \item{`mrnetb`}{MRNETB (Meyer, Marbach, Roy and Kellis 2010): mRMR by backward elimination
#'     and sequential replacement instead of forward selection. For every feature \eqn{i} as
#'     target, the set \eqn{S} starts with all the other features; a feature \eqn{k} scores
#'     \eqn{I_{ik} - \sum_{l \in S, l \ne k} I_{kl} / |S|} (inside \eqn{S} or out). While
#'     \eqn{|S| > 1} and the lowest score in \eqn{S} is negative, that feature leaves; then, while
#'     the best feature outside \eqn{S} scores strictly above the worst inside, the two swap (at
#'     most \eqn{n - 1} times). The weight of \eqn{(i,j)} is the larger final score with which
#'     one kept the other, 0 when neither is positive. Ties go to the lowest index. minet's
#'     `mrnetb()` differs in ways its code shows: it keeps the target itself in \eqn{S} (counted
#'     in \eqn{|S|}, and liable to be eliminated), makes the first replacement swap without
#'     checking that it improves, and sets no limit on the swaps.}
#'   \item{`threshold`}{Edges where the MI is at least `threshold`.}
#' }
#' Edges have positive weight; the diagonal is ignored.
#'
#' @inheritParams mi_matrix
#' @param x Data as for [mi_matrix()], or `NULL` when `mim` is given (giving both is an error).
#' @param method `"aracne"`, `"clr"`, `"mrnet"`, `"mrnetb"` or `"threshold"`.
#' @param eps ARACNE's tolerance (in the units of the MI matrix).
#' @param threshold For `method = "threshold"`: the smallest MI of an edge (in the units of the
#'   MI matrix).
#' @param mim A mutual information matrix to use instead of computing one from `x`: a
#'   symmetric matrix with unique names (or none), such as [mi_matrix()] or
#'   `minet::build.mim()` returns. It is used as is: in its own units, its diagonal ignored.
#' @param units The units of the MI matrix computed from `x`, `"bits"` or `"nats"`. Ignored
#'   when `mim` is given.
#' @param output `"igraph"` (an undirected weighted graph; needs the igraph package),
#'   `"edges"` (a data frame `from`, `to`, `weight`, `mi`) or `"matrix"` (the weights).
#' @param ... Passed to [mi_matrix()] (`nbins`, `categorical`, `estimator`, `backend`, `threads`, `devices`,
#'   `assay`, `quiet`) when the MI matrix is computed from `x`: `estimator = "mm"` or `"sg"` builds the
#'   network on infotheo's bias-corrected estimates, as minet's `build.mim(estimator = "mi.mm")`
#'   (`"shrink"`: `"mi.shrink"`).
#' @return The network as chosen by `output`; edges carry `weight` (the method's score) and
#'   `mi`.
#' @references Meyer, Lafitte and Bontempi (2008), minet: a R/Bioconductor package for
#'   inferring large transcriptional networks using mutual information, BMC Bioinformatics 9.
#'   Margolin et al. (2006) (ARACNE); Faith et al. (2007) (CLR); Meyer, Kontos, Lafitte and
#'   Bontempi (2007) (MRNET). Meyer, Marbach, Roy and Kellis (2010), Information-theoretic
#'   inference of gene networks using backward elimination, BIOCOMP (MRNETB).
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(300 * 6), 300, 6, dimnames = list(NULL, paste0("g", 1:6)))
#' x[, 2] <- x[, 1] + rnorm(300, sd = 0.5)  # a chain g1 - g2 - g3
#' x[, 3] <- x[, 2] + rnorm(300, sd = 0.5)
#' mi_network(x, "aracne", output = "edges", backend = "cpu")
#' mi_network(x, "mrnetb", output = "edges", backend = "cpu")
#' @export
mi_network <- function(x = NULL, method = c("aracne", "clr", "mrnet", "mrnetb", "threshold"), eps = 0, threshold = 0,
                       mim = NULL, output = c("igraph", "edges", "matrix"), threads = NULL, units = c("bits", "nats"),
                       ...) {
  method <- match.arg(method)
  output <- match.arg(output)
  units <- match.arg(units)
  if (is.null(mim)) {
    if (is.null(x)) stop("give x (the data) or mim (a mutual information matrix)", call. = FALSE)
    mim <- mi_matrix(x, threads = threads, units = units, ...)
  } else {
    if (!is.null(x)) stop("give x (the data) or mim (a mutual information matrix), not both", call. = FALSE)
    check_dots_empty(...)
    mim <- check_mim(mim)
  }
  for (arg in c("eps", "threshold")) {
    v <- get(arg)
    if (!is.numeric(v) || length(v) != 1 || !is.finite(v)) stop(arg, " must be one finite number", call. = FALSE)
  }
  if (eps < 0) stop("eps must not be negative", call. = FALSE)
  n <- nrow(mim)
  plain <- unname(mim)
  attributes(plain) <- list(dim = dim(mim))
  weights <- if (method == "threshold") {
    w <- ifelse(plain >= threshold, plain, 0)
    diag(w) <- 0
    w
  } else {
    fsgpu_mi_network(plain, method, eps, fsgpu_threads(threads))
  }
  dimnames(weights) <- dimnames(mim)
  if (output == "matrix") return(weights)
  upper <- which(upper.tri(weights) & weights > 0, arr.ind = TRUE)
  edges <- data.frame(from = rownames(mim)[upper[, 1]], to = rownames(mim)[upper[, 2]],
                      weight = weights[upper], mi = plain[upper], stringsAsFactors = FALSE)
  edges <- edges[order(-edges$weight, upper[, 1], upper[, 2]), , drop = FALSE]
  rownames(edges) <- NULL
  if (output == "edges") return(edges)
  if (!requireNamespace("igraph", quietly = TRUE))
    stop("output = \"igraph\" needs the igraph package; use output = \"edges\"", call. = FALSE)
  igraph::graph_from_data_frame(edges, directed = FALSE,
                                vertices = data.frame(name = rownames(mim), stringsAsFactors = FALSE))
}

# A user's MI matrix: square, symmetric, finite, with unique names (made up when absent).
check_mim <- function(mim) {
  if (is.data.frame(mim)) mim <- as.matrix(mim)
  if (!is.matrix(mim) || !is.numeric(mim) || nrow(mim) != ncol(mim) || nrow(mim) < 3)
    stop("mim must be a square numeric matrix of at least 3 x 3", call. = FALSE)
  if (!all(is.finite(mim[upper.tri(mim)]))) stop("mim has missing or infinite values off the diagonal", call. = FALSE)
  if (!isSymmetric(unname(mim), tol = 0, check.attributes = FALSE)) stop("mim must be symmetric", call. = FALSE)
  storage.mode(mim) <- "double"
  names <- rownames(mim)
  if (is.null(names)) names <- colnames(mim)
  if (is.null(names)) names <- paste0("X", seq_len(nrow(mim)))
  if (anyDuplicated(names))
    stop("mim has duplicated names ", quote_list(unique(names[duplicated(names)])),
         "; the network's vertices need unique names", call. = FALSE)
  dimnames(mim) <- list(names, names)
  mim
}
