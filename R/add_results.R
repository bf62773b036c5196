# Writing results back into a SummarizedExperiment: per-feature values as rowData columns,
# graphs and tables in metadata() (or rowPairs()/colPairs() of a SingleCellExperiment), the
# parameters of every run in metadata().

#' Store a result in the SummarizedExperiment it was computed from
#'
#' Every job's result goes back into the object the same way, as Bioconductor's
#' `scuttle::addPerFeatureQCMetrics()` does: `add_results()` returns `x` with the per-feature
#' values as new `rowData()` columns, named `<name>_<value>`, and the parameters of the run
#' (method, bins, units, backend, threads, ...) as `metadata(x)[[name]]`. Graphs and tables,
#' which are not one value per feature, go to `metadata(x)[[name]]` whole, except the
#' neighbour lists of a [knn_graph()] on a `SingleCellExperiment`, which become `rowPairs()`
#' (features) or `colPairs()` (cells) named `name`, with the parameters in metadata.
#'
#' Features are matched to the rows of `x` by name (so a result computed on some of the rows,
#' e.g. `x[1:100, ]`, fills those rows; the others get `NA`), or by position when `x` has no
#' row names (the result must then cover every row). A second call with the same `name`
#' replaces the columns.
#'
#' @section What goes where (default `name` in brackets):
#' \describe{
#'   \item{[select_features()] (`"fsgpu_selection"`)}{rowData `_rank` (integer, `NA` when not
#'     selected) and `_score`; metadata: the parameters (`method`, `k`, `nbins`, `units`,
#'     `backend`, ... and `discretization`, the method of a `discretize =` run).}
#'   \item{[stability_selection()] (`"fsgpu_stability"`)}{rowData `_frequency` (and
#'     `_freq_<method>` with several methods), `_mean_rank`, `_median_rank`, `_stable`;
#'     metadata: the parameters, `pfer`, `stability` and the number of `resamples`.}
#'   \item{[mi_scores()], [cmi_scores()], [jmi_scores()] (`"fsgpu_mi"`, `"fsgpu_cmi"`,
#'     `"fsgpu_jmi"`; normalised scores `"fsgpu_su"`, `"fsgpu_nmi"`, `"fsgpu_gain_ratio"`)}{rowData
#'     column `name` itself; metadata: `nbins`, `units`, `backend`.}
#'   \item{[discretize()] (`"fsgpu_discretization"`)}{rowData `_cuts` (a list column: each
#'     feature's cut points), `_intervals`, `_criterion`, `_lower`, `_upper`; a new assay
#'     `<name>_codes` holding the interval codes (features x samples, `NA` for features not
#'     discretized); metadata: `method`, `nbins`, `na`, `classes`, `backend`.}
#'   \item{[find_interactions()] (`"fsgpu_interactions"`)}{rowData `_gain`, `_p_value`,
#'     `_p_adjusted`, `_relevant`; metadata: `params`, `df`, `alpha`, `backend`.}
#'   \item{[mi_pairs()] (`"fsgpu_pairs"`), [mi_matrix()] (`"fsgpu_mi_matrix"`), [mi_network()]
#'     and igraph graphs (`"fsgpu_graph"`)}{metadata: the result itself.}
#'   \item{[knn_graph()] (`"fsgpu_knn"`)}{neighbour lists (`output = "index"`) and kNN edge
#'     lists (`output = "edges"`): on a `SingleCellExperiment`, `rowPairs()` or `colPairs()`
#'     `name`, a `SelfHits` with one pair per point and neighbour and columns `distance` and
#'     `rank` (an SNN edge list: `weight`, each pair once), with the parameters in metadata;
#'     on other objects, metadata holds the result itself.}
#' }
#'
#' @param x A `SummarizedExperiment` (or a `SingleCellExperiment`).
#' @param result The result of an fsgpu job run on `x` (or on some of its rows).
#' @param name The prefix of the new rowData columns and the name of the metadata entry, assay
#'   or pairs; by default one per job (see above).
#' @param by For a kNN result: whether its points are the `"features"` (rows) or the
#'   `"samples"` (columns) of `x`. By default taken from the result when [knn_graph()] ran on
#'   `x`, otherwise from the points' names.
#' @param ... Unused.
#' @return `x` with the result added.
#' @examples
#' if (requireNamespace("SummarizedExperiment", quietly = TRUE)) {
#'   set.seed(1)
#'   counts <- matrix(rnorm(40 * 30), 40, 30, dimnames = list(paste0("g", 1:40), NULL))
#'   group <- rep(c("a", "b"), each = 15)
#'   counts[3, ] <- counts[3, ] + 2 * (group == "b")
#'   se <- SummarizedExperiment::SummarizedExperiment(list(expr = counts),
#'                                                    colData = data.frame(group = group))
#'   se <- add_results(se, select_features(se, class = "group", k = 5, backend = "cpu"))
#'   se <- add_results(se, mi_scores(se, class = "group", backend = "cpu"))
#'   se <- add_results(se, discretize(se, class = "group", method = "caim", backend = "cpu"))
#'   head(SummarizedExperiment::rowData(se))
#'   S4Vectors::metadata(se)$fsgpu_selection$method
#'   SummarizedExperiment::assayNames(se)
#' }
#' @export
add_results <- function(x, result, name = NULL, ...) {
  if (!requireNamespace("SummarizedExperiment", quietly = TRUE) || !requireNamespace("S4Vectors", quietly = TRUE))
    stop("add_results() needs the SummarizedExperiment and S4Vectors packages", call. = FALSE)
  if (!methods::is(x, "SummarizedExperiment")) stop("x must be a SummarizedExperiment", call. = FALSE)
  if (!is.null(name) && (!is.character(name) || length(name) != 1 || is.na(name) || !nzchar(name)))
    stop("name must be one non-empty string", call. = FALSE)
  UseMethod("add_results", result)
}

#' @rdname add_results
#' @export
add_results.fsgpu_selection <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  if (is.null(name)) name <- "fsgpu_selection"
  s <- result$selection
  rows <- feature_rows(x, s$feature, s$index, result$n_features)
  x <- set_row_columns(x, name, list(rank = s$rank, score = s$score), rows)
  params <- result[c("method", "k", "beta", "gamma", "min_score", "weighted", "nbins", "units", "backend", "threads",
                     "devices", "n_samples", "n_features", "classes", "stopped_early")]
  params$discretization <- result$discretization$method
  set_metadata(x, name, params)
}

#' @rdname add_results
#' @export
add_results.fsgpu_stability <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  if (is.null(name)) name <- "fsgpu_stability"
  f <- result$features
  rows <- feature_rows(x, f$feature, f$index, result$n_features)
  x <- set_row_columns(x, name, f[setdiff(names(f), c("feature", "index"))], rows)
  params <- result[c("method", "k", "pairs", "fraction", "seed", "threshold", "pfer", "q", "stability", "nbins",
                     "n_samples", "n_features", "classes")]
  params$resamples <- length(result$resamples)
  params$discretization <- result$discretization$method
  params$backend <- result$run$name
  set_metadata(x, name, params)
}

#' @rdname add_results
#' @export
add_results.data.frame <- function(x, result, name = NULL, by = NULL, ...) {
  check_dots_empty(...)
  kind <- intersect(c("mi", "cmi", "jmi", normalizations[-1]), names(result))
  if (all(c("feature", "index") %in% names(result)) && length(kind) == 1L) {
    if (is.null(name)) name <- paste0("fsgpu_", kind)
    rows <- feature_rows(x, result$feature, result$index, nrow(result))
    rd <- SummarizedExperiment::rowData(x)
    rd[[name]] <- NA_real_
    rd[[name]][rows] <- result[[kind]]
    SummarizedExperiment::rowData(x) <- rd
    params <- attributes(result)[c("nbins", "units", "backend")]
    params$discretization <- attr(result, "discretization")$method
    return(set_metadata(x, name, params))
  }
  if (all(c("from", "to") %in% names(result))) return(add_knn(x, result, name, by))
  stop("result is not an fsgpu result: expected mi_scores(), cmi_scores() or jmi_scores() scores, or knn_graph() ",
       "edges", call. = FALSE)
}

#' @rdname add_results
#' @export
add_results.fsgpu_discretization <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  if (is.null(name)) name <- "fsgpu_discretization"
  f <- result$features
  rows <- feature_rows(x, f$feature, seq_len(nrow(f)), nrow(f))
  x <- set_row_columns(x, name, list(cuts = unname(result$cuts), intervals = f$intervals, criterion = f$criterion,
                                     lower = f$lower, upper = f$upper), rows)
  samples <- sample_columns(x, rownames(result$codes), nrow(result$codes))
  codes <- matrix(NA_integer_, nrow(x), ncol(x), dimnames = dimnames(x))
  codes[rows, samples] <- t(result$codes)
  SummarizedExperiment::assay(x, paste0(name, "_codes"), withDimnames = FALSE) <- codes
  set_metadata(x, name, result[c("method", "nbins", "na", "classes", "n_samples", "backend", "threads", "devices")])
}

#' @rdname add_results
#' @export
add_results.fsgpu_interactions <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  if (is.null(name)) name <- "fsgpu_interactions"
  s <- result$scores
  rows <- feature_rows(x, s$variable, s$index, nrow(s))
  x <- set_row_columns(x, name, as.list(s[c("gain", "p_value", "p_adjusted", "relevant")]), rows)
  set_metadata(x, name, result[c("params", "df", "alpha", "backend")])
}

#' @rdname add_results
#' @export
add_results.fsgpu_pairs <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  set_metadata(x, if (is.null(name)) "fsgpu_pairs" else name, result)
}

#' @rdname add_results
#' @export
add_results.matrix <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  if (is.null(attr(result, "units")) || !isSymmetric(unname(result)))
    stop("result is not an fsgpu result: the only matrix result is mi_matrix()'s", call. = FALSE)
  set_metadata(x, if (is.null(name)) "fsgpu_mi_matrix" else name, result)
}

#' @rdname add_results
#' @export
add_results.igraph <- function(x, result, name = NULL, ...) {
  check_dots_empty(...)
  set_metadata(x, if (is.null(name)) "fsgpu_graph" else name, result)
}

#' @rdname add_results
#' @export
add_results.fsgpu_knn <- function(x, result, name = NULL, by = NULL, ...) {
  check_dots_empty(...)
  add_knn(x, result, name, by)
}

#' @rdname add_results
#' @export
add_results.default <- function(x, result, name = NULL, ...) {
  stop(sprintf("result is not an fsgpu result (class '%s')", class(result)[1L]), call. = FALSE)
}

# Rows of x (1-based) for a result's features: by name when x has row names, otherwise by the
# result's index, which then must cover every row.
feature_rows <- function(x, features, index, n_features) {
  names <- rownames(x)
  if (is.null(names)) {
    if (n_features != nrow(x))
      stop(sprintf("x has no row names and %d rows, the result %d features: compute it on x, or name the rows",
                   nrow(x), n_features), call. = FALSE)
    return(index)
  }
  if (anyDuplicated(names)) stop("x has duplicated row names: features cannot be matched by name", call. = FALSE)
  rows <- match(features, names)
  if (anyNA(rows)) stop("the result has features that are not rows of x: ", quote_list(features[is.na(rows)]),
                        call. = FALSE)
  rows
}

# Columns of x for a result's samples (names, or positions when either side has none).
sample_columns <- function(x, samples, n_samples) {
  if (is.null(samples) || is.null(colnames(x))) {
    if (n_samples != ncol(x))
      stop(sprintf("the result has %d samples, x %d columns", n_samples, ncol(x)), call. = FALSE)
    return(seq_len(n_samples))
  }
  columns <- match(samples, colnames(x))
  if (anyNA(columns)) stop("the result has samples that are not columns of x: ", quote_list(samples[is.na(columns)]),
                           call. = FALSE)
  columns
}

# rowData columns <name>_<value>, NA (or empty cut points) for the rows the result lacks.
set_row_columns <- function(x, name, values, rows) {
  rd <- SummarizedExperiment::rowData(x)
  for (v in names(values)) {
    value <- values[[v]]
    column <- if (is.list(value)) rep(list(numeric()), nrow(x)) else rep(value[NA_integer_], nrow(x))
    column[rows] <- value
    rd[[paste(name, v, sep = "_")]] <- column
  }
  SummarizedExperiment::rowData(x) <- rd
  x
}

set_metadata <- function(x, name, value) {
  meta <- S4Vectors::metadata(x)
  meta[[name]] <- value
  S4Vectors::metadata(x) <- meta
  x
}

# A kNN result (neighbour lists or an edge list) into x: rowPairs/colPairs of a
# SingleCellExperiment, metadata otherwise.
add_knn <- function(x, result, name, by) {
  if (is.null(name)) name <- "fsgpu_knn"
  if (!methods::is(x, "SingleCellExperiment")) return(set_metadata(x, name, result))
  if (inherits(result, "fsgpu_knn")) {
    if (isFALSE(attr(result, "self")))
      stop("the neighbours of query points are not pairs of x's points: add_results() takes knn_graph() ",
           "results without query", call. = FALSE)
    n_points <- nrow(result$index)
    k <- ncol(result$index)
    points <- rownames(result$index)
    edges <- data.frame(from = rep(seq_len(n_points), times = k), to = as.vector(result$index),
                        distance = as.vector(result$distance), rank = rep(seq_len(k), each = n_points))
    edges <- edges[order(edges$from, edges$rank), ]
    if (!is.null(points)) edges[c("from", "to")] <- list(points[edges$from], points[edges$to])
    params <- attributes(result)[c("metric", "k", "backend")]
  } else {
    n_points <- NULL
    points <- if (is.character(result$from)) unique(c(result$from, result$to))
    edges <- result[c("from", "to", intersect(c("distance", "rank", "weight"), names(result)))]
    params <- list()
  }
  by <- knn_points(x, by, attr(result, "points"), points, n_points)
  nodes <- if (by == "features") rownames(x) else colnames(x)
  n <- if (by == "features") nrow(x) else ncol(x)
  if (is.character(edges$from)) {
    edges$from <- match(edges$from, nodes)
    edges$to <- match(edges$to, nodes)
  } else if (max(edges$from, edges$to) > n) {
    stop(sprintf("the graph has more points than x has %s", by), call. = FALSE)
  }
  hits <- S4Vectors::SelfHits(edges$from, edges$to, nnode = n)
  S4Vectors::mcols(hits) <- S4Vectors::DataFrame(edges[setdiff(names(edges), c("from", "to"))])
  if (by == "features") SingleCellExperiment::rowPair(x, name) <- hits else SingleCellExperiment::colPair(x, name) <- hits
  set_metadata(x, name, c(params, list(by = by)))
}

# Whether a graph's points are the features or the samples of x: the by argument, else what
# knn_graph() recorded, else the side of x whose names hold all the points' names.
knn_points <- function(x, by, recorded, points, n_points) {
  if (!is.null(by)) return(match.arg(by, c("features", "samples")))
  if (!is.null(recorded)) return(recorded)
  on_rows <- !is.null(points) && !is.null(rownames(x)) && all(points %in% rownames(x))
  on_columns <- !is.null(points) && !is.null(colnames(x)) && all(points %in% colnames(x))
  if (on_rows != on_columns) return(if (on_rows) "features" else "samples")
  if (is.null(points) && !is.null(n_points) && (n_points == nrow(x)) != (n_points == ncol(x)))
    return(if (n_points == nrow(x)) "features" else "samples")
  stop("cannot tell whether the graph's points are the features or the samples of x: give by", call. = FALSE)
}
