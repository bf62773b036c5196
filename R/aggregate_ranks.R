# Rank aggregation: one consensus ranking from many (methods, subsamples, folds).

#' Combine rankings of features into one (Borda, robust rank aggregation)
#'
#' Turns many rankings of features, such as the selections of [stability_selection()] on every
#' subsample and method, or several [select_features()] results, into one consensus ranking.
#' Each ranking lists features best first and may hold only some of the `n_features`
#' features; a feature a ranking leaves out counts as ranked last there.
#'
#' @section Methods: With \eqn{n} rankings over \eqn{N} features, feature \eqn{f}'s
#'   normalised rank in ranking \eqn{i} is \eqn{r_i = \mathrm{position}/N}, or 1 when ranking
#'   \eqn{i} leaves \eqn{f} out.
#'   \describe{
#'     \item{`borda`}{Borda's count: the mean normalised rank, \eqn{\bar r = \frac{1}{n}\sum_i
#'       r_i} (lower is better). It orders features as the sum of Borda points \eqn{N(1 - r_i)}
#'       does, and as RobustRankAggreg's `method = "mean"`, whose score is the normal
#'       approximation \eqn{\Phi((\bar r - 1/2)\sqrt{12 n})}.}
#'     \item{`rra`}{Robust rank aggregation (Kolde et al. 2012): with \eqn{r_{(1)} \le \dots
#'       \le r_{(n)}} the sorted normalised ranks, \eqn{\rho = \min(1, n \min_j
#'       \beta_{j,n-j+1}(r_{(j)}))}, where \eqn{\beta_{a,b}} is the Beta distribution function:
#'       the Bonferroni-corrected probability that a feature ranked at random would place as
#'       well in \eqn{j} of the \eqn{n} rankings (lower is better). It rewards features that
#'       some rankings put near the top even when others leave them out, and is the score of
#'       RobustRankAggreg's `aggregateRanks(method = "RRA")`.}
#'   }
#'   Equal scores are ordered by the features' order in `x` (column index for
#'   [stability_selection()] and [select_features()] results, first appearance otherwise).
#'
#' @param x The rankings: a list of character (feature names) or integer (feature indices)
#'   vectors, best first; a list of [select_features()] results; or a
#'   [stability_selection()] result (its `selections`, over all its methods and subsamples).
#' @param method `"borda"` or `"rra"`.
#' @param n_features \eqn{N}, the number of features ranked (default: that of the results
#'   given, or the number of distinct features in `x`).
#' @return A data frame, best first, with `rank`, `feature` (and `index`, the column of the
#'   data, when `x` is a result of this package), `score` (see Methods), `count` (how many
#'   rankings hold the feature) and, for `borda`, `points` (the mean Borda points
#'   \eqn{N(1 - \bar r)}). Attributes `method`, `n_rankings` and `n_features`.
#' @references Kolde, Laur, Adler and Vilo (2012), Robust rank aggregation for gene list
#'   integration and meta-analysis, Bioinformatics 28(4).
#' @examples
#' rankings <- list(c("g1", "g2", "g3"), c("g2", "g1", "g4"), c("g1", "g4", "g2"))
#' aggregate_ranks(rankings, n_features = 10)
#' aggregate_ranks(rankings, method = "rra", n_features = 10)
#' @export
aggregate_ranks <- function(x, method = c("borda", "rra"), n_features = NULL) {
  method <- match.arg(method)
  lists <- ranking_lists(x)
  rankings <- lists$rankings
  if (!length(rankings)) stop("x holds no ranking", call. = FALSE)
  items <- unique(unlist(rankings, use.names = FALSE))
  if (is.null(n_features)) n_features <- if (is.null(lists$n_features)) length(items) else lists$n_features
  n_features <- check_count(n_features, "n_features", min = length(items),
                            what = "the distinct features in the rankings or more")
  n <- length(rankings)
  # Normalised ranks, one row per feature seen and one column per ranking; left out: 1.
  r <- matrix(1, length(items), n)
  for (i in seq_len(n)) {
    if (anyDuplicated(rankings[[i]])) stop(sprintf("ranking %d names a feature twice", i), call. = FALSE)
    r[match(rankings[[i]], items), i] <- seq_along(rankings[[i]]) / n_features
  }
  count <- tabulate(match(unlist(rankings, use.names = FALSE), items), length(items))
  score <- if (method == "borda") rowMeans(r) else apply(r, 1, rra_score)
  tie <- if (is.null(lists$index)) seq_along(items) else items
  o <- order(score, tie)
  out <- data.frame(rank = seq_along(o), feature = if (is.null(lists$names)) items[o] else lists$names[items[o]],
                    stringsAsFactors = FALSE)
  if (!is.null(lists$index)) out$index <- as.integer(items[o])
  out$score <- score[o]
  out$count <- count[o]
  if (method == "borda") out$points <- n_features * (1 - score[o])
  structure(out, method = method, n_rankings = n, n_features = n_features)
}

# The rho score of robust rank aggregation for one feature's normalised ranks.
rra_score <- function(r) {
  n <- length(r)
  j <- seq_len(n)
  min(1, n * min(stats::pbeta(sort(r), j, n - j + 1)))
}

# The rankings of x as vectors of feature names or indices, with the feature names and count
# when x comes from this package (index = TRUE: the rankings hold column indices).
ranking_lists <- function(x) {
  if (inherits(x, "fsgpu_stability"))
    return(list(rankings = unname(x$selections), names = x$features$feature[order(x$features$index)],
                n_features = x$n_features, index = TRUE))
  if (inherits(x, "fsgpu_selection")) x <- list(x)
  if (!is.list(x)) stop("x must be a list of rankings, of select_features() results, or a stability_selection() result",
                        call. = FALSE)
  if (length(x) && all(vapply(x, inherits, logical(1), "fsgpu_selection"))) {
    n <- unique(vapply(x, `[[`, numeric(1), "n_features"))
    if (length(n) != 1) stop("the select_features() results come from data with different numbers of features",
                             call. = FALSE)
    names <- character(n)
    for (s in x) names[s$selection$index] <- s$selection$feature
    return(list(rankings = lapply(x, function(s) s$selection$index), names = names, n_features = n, index = TRUE))
  }
  ok <- vapply(x, function(v) is.character(v) || (is.numeric(v) && all(v == round(v))), logical(1))
  if (!all(ok) || any(vapply(x, anyNA, logical(1))))
    stop("every ranking must be a vector of feature names or indices without NA", call. = FALSE)
  list(rankings = unname(x))
}
