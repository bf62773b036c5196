# fsgpu's exact kNN behind BiocNeighbors' interface: a parameter class whose findKNN() and
# queryKNN() methods run knn_graph()'s engine, so that Bioconductor code that takes a BNPARAM
# (bluster, scran, scater, SingleR...) runs on the CPU threads or GPUs of fsgpu.

#' @importClassesFrom BiocNeighbors BiocNeighborParam
#' @importMethodsFrom BiocNeighbors findKNN queryKNN
#' @importFrom methods new show callNextMethod setClass setMethod setValidity
NULL

# BiocNeighbors' distance names, and the metric of knn_graph() that computes each.
fsgpu_param_distances <- c(Euclidean = "euclidean", Manhattan = "manhattan", Cosine = "cosine")

#' Exact nearest neighbours from fsgpu for BiocNeighbors and bluster
#'
#' `FsgpuParam()` is a `BiocNeighborParam` of BiocNeighbors: give it as `BNPARAM` to
#' `BiocNeighbors::findKNN()` and `queryKNN()`, and to everything built on them, such as
#' `bluster::makeKNNGraph()`, `bluster::makeSNNGraph()` and
#' `bluster::clusterRows(x, bluster::NNGraphParam(BNPARAM = FsgpuParam()))`. The search is
#' [knn_graph()]'s exact one, on the CPU threads or GPUs chosen here; the rows of `X` are the
#' points.
#'
#' The results have BiocNeighbors' format: `index` (1-based, a point is never its own
#' neighbour) and `distance` matrices, one row per point (or per `subset` point), nearest
#' first, restricted to the last `last` columns and to what `get.index` and `get.distance` ask
#' for. Distances are BiocNeighbors' own: Euclidean, Manhattan, and for `"Cosine"` the
#' Euclidean distance between the rows scaled to unit length, \eqn{\sqrt{2(1 - \cos)}}. A `k`
#' beyond the number of points minus one is capped, with a warning, as BiocNeighbors does.
#' Equal distances are ordered by row index, always, so `warn.ties` has nothing to warn
#' about and is ignored; `BPPARAM` is ignored too (fsgpu uses `threads` CPU threads or the
#' GPUs). There is no prebuilt index: `precomputed` and `raw.index` are not supported, and
#' `subset` finds the neighbours of every point and keeps those asked for.
#'
#' @param distance `"Euclidean"` (default), `"Manhattan"` or `"Cosine"`.
#' @param backend `"auto"`, `"cpu"` or `"gpu"`, as in [select_features()]; `NULL` for the
#'   session's default (`options(fsgpu.backend)`).
#' @param threads CPU threads; `NULL` for [fsgpu_threads()]'s default.
#' @param devices GPU ids; `NULL` for all.
#' @param quiet `TRUE` (default) shows no progress bar and no message (such as a note about
#'   zero rows under `"Cosine"`), as BiocNeighbors' own parameters show none: the searches run
#'   inside other packages' functions, often many times, where a bar or a note per search
#'   would be noise the caller cannot turn off. `FALSE` shows them, as [knn_graph()] does.
#' @return An object of class `FsgpuParam`.
#' @examples
#' if (requireNamespace("BiocNeighbors", quietly = TRUE)) {
#'   set.seed(1)
#'   cells <- matrix(rnorm(200 * 10), 200, 10)
#'   param <- FsgpuParam(backend = "cpu")
#'   param
#'   nn <- BiocNeighbors::findKNN(cells, k = 5, BNPARAM = param)
#'   head(nn$index)
#'   BiocNeighbors::queryKNN(cells, cells[1:3, ] + 0.01, k = 2, BNPARAM = param)$index
#'   if (requireNamespace("bluster", quietly = TRUE)) {
#'     clusters <- bluster::clusterRows(cells, bluster::NNGraphParam(k = 10, BNPARAM = param))
#'     table(clusters)
#'   }
#' }
#' @export
FsgpuParam <- function(distance = c("Euclidean", "Manhattan", "Cosine"), backend = NULL, threads = NULL,
                       devices = NULL, quiet = TRUE) {
  distance <- match.arg(distance)
  check_quiet(quiet)
  if (!is.null(backend) && (!is.character(backend) || length(backend) != 1 || !backend %in% c("auto", "cpu", "gpu")))
    stop('backend must be "auto", "cpu" or "gpu" (or NULL)', call. = FALSE)
  if (!is.null(threads)) threads <- fsgpu_threads(threads)
  if (!is.null(devices) && (!is.numeric(devices) || anyNA(devices) || any(devices != round(devices)) ||
                            any(devices < 0) || anyDuplicated(devices)))
    stop("devices must be distinct GPU ids (see backend_info())", call. = FALSE)
  methods::new("FsgpuParam", distance = distance, backend = if (is.null(backend)) character() else backend,
               threads = if (is.null(threads)) integer() else as.integer(threads),
               devices = if (is.null(devices)) integer() else as.integer(devices), quiet = quiet)
}

#' @rdname FsgpuParam
#' @slot backend,threads,devices As given to `FsgpuParam()`; empty for the defaults.
#' @slot quiet As given to `FsgpuParam()`.
#' @export
setClass("FsgpuParam", contains = "BiocNeighborParam",
         slots = c(backend = "character", threads = "integer", devices = "integer", quiet = "logical"),
         prototype = list(quiet = TRUE))

setValidity("FsgpuParam", function(object) {
  if (length(object@distance) != 1 || !object@distance %in% names(fsgpu_param_distances))
    return(paste("distance must be one of", paste(names(fsgpu_param_distances), collapse = ", ")))
  TRUE
})

#' @rdname FsgpuParam
#' @param object An `FsgpuParam`.
#' @export
setMethod("show", "FsgpuParam", function(object) {
  methods::callNextMethod()
  cat(sprintf("backend: %s\n", if (length(object@backend)) object@backend else "default"))
  cat(sprintf("threads: %s\n", if (length(object@threads)) object@threads else "default"))
  cat(sprintf("devices: %s\n", if (length(object@devices)) paste(object@devices, collapse = ", ") else "all"))
  cat(sprintf("quiet: %s\n", object@quiet))
})

#' @rdname FsgpuParam
#' @param X A numeric matrix whose rows are the points.
#' @param k The number of neighbours.
#' @param BNINDEX Not supported (there is no prebuilt index).
#' @param BNPARAM An `FsgpuParam`.
#' @param ... `get.index`, `get.distance`, `last`, `subset`, `warn.ties`, `BPPARAM`,
#'   `precomputed`, `raw.index` and, for `queryKNN()`, `transposed`, as in
#'   `BiocNeighbors::findKNN()` and `BiocNeighbors::queryKNN()` (see Details).
#' @export
setMethod("findKNN", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"), function(X, k, ..., BNINDEX, BNPARAM) {
  fsgpu_bn_search(X, NULL, k, BNPARAM, ...)
})

#' @rdname FsgpuParam
#' @param query A numeric matrix of query points (rows; columns with `transposed = TRUE`),
#'   whose neighbours among the rows of `X` are found.
#' @export
setMethod("queryKNN", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"),
         function(X, query, k, ..., BNINDEX, BNPARAM) {
  fsgpu_bn_search(X, query, k, BNPARAM, ...)
})

# findKNN (query NULL) and queryKNN with BiocNeighbors' arguments on knn_graph()'s engine.
fsgpu_bn_search <- function(X, query, k, param, get.index = TRUE, get.distance = TRUE, last = k, BPPARAM = NULL,
                            precomputed = NULL, transposed = FALSE, subset = NULL, raw.index = FALSE,
                            warn.ties = TRUE) {
  if (!is.null(precomputed) || isTRUE(raw.index))
    stop("FsgpuParam builds no index: precomputed and raw.index are not supported", call. = FALSE)
  X <- points_of(as.matrix(X), "X", min_rows = 1)
  if (!is.null(query)) {
    query <- as.matrix(query)
    if (isTRUE(transposed)) query <- t(query)
  }
  n_found <- if (is.null(query)) nrow(X) - 1 else nrow(X)
  if (!is.numeric(k) || length(k) != 1 || is.na(k) || k < 1 || k != round(k))
    stop("k must be a positive whole number", call. = FALSE)
  if (k > n_found) {
    warning(sprintf("'k' capped at the number of observations%s", if (is.null(query)) " minus 1" else ""),
            call. = FALSE)
    k <- n_found
    last <- min(last, k)
  }
  if (!is.numeric(last) || length(last) != 1 || is.na(last) || last < 1 || last > k || last != round(last))
    stop("last must be a whole number from 1 to k", call. = FALSE)
  res <- quiet_if(param@quiet, run_knn(X, k, fsgpu_param_distances[[param@distance]], "index", FALSE, FALSE, query,
                                       if (length(param@backend)) param@backend,
                                       if (length(param@threads)) param@threads,
                                       if (length(param@devices)) param@devices, quiet = param@quiet))
  rows <- if (is.null(subset)) seq_len(nrow(res$index)) else subset_rows(subset, if (is.null(query)) X else query)
  columns <- seq.int(k - last + 1, k)
  out <- list()
  if (isTRUE(get.index)) out$index <- unname(res$index[rows, columns, drop = FALSE])
  if (isTRUE(get.distance)) {
    d <- unname(res$distance[rows, columns, drop = FALSE])
    # BiocNeighbors' cosine distance is the Euclidean one of unit rows: sqrt(2 (1 - cos)).
    out$distance <- if (param@distance == "Cosine") sqrt(2 * pmax(d, 0)) else d
  }
  out
}

# subset= of BiocNeighbors: row indices, names or a logical vector.
subset_rows <- function(subset, points) {
  all <- seq_len(nrow(points))
  names(all) <- rownames(points)
  rows <- tryCatch(all[subset], error = function(e) NA_integer_)
  if (anyNA(rows)) stop("subset must be indices, names or a logical vector of the points", call. = FALSE)
  unname(rows)
}
