# fsgpu's exact kNN behind BiocNeighbors' interface: a parameter class whose findKNN() and
# queryKNN() methods run knn_graph()'s engine, so that Bioconductor code that takes a BNPARAM
# (bluster, scran, scater, SingleR...) runs on the CPU threads or GPUs of fsgpu.

#' @importClassesFrom BiocNeighbors BiocNeighborParam BiocNeighborIndex
#' @importMethodsFrom BiocNeighbors findKNN queryKNN findNeighbors queryNeighbors buildIndex
#' @importFrom methods new show callNextMethod setClass setMethod setValidity
NULL

# BiocNeighbors' distance names, and the metric of fsgpu's engine that computes each (Cosine:
# Euclidean on rows scaled to unit length, as BiocNeighbors computes it).
fsgpu_param_distances <- c(Euclidean = "euclidean", Manhattan = "manhattan", Cosine = "euclidean")

#' Exact nearest neighbours from fsgpu for BiocNeighbors, bluster, scran and SingleR
#'
#' `FsgpuParam()` is a `BiocNeighborParam` of BiocNeighbors: give it as `BNPARAM` to
#' `BiocNeighbors::buildIndex()`, `findKNN()`, `queryKNN()`, `findNeighbors()` and
#' `queryNeighbors()`, and to everything built on them, such as `bluster::makeSNNGraph()`,
#' `bluster::clusterRows(x, bluster::NNGraphParam(BNPARAM = FsgpuParam()))` or
#' `SingleR::SingleR(test, ref, labels, BNPARAM = FsgpuParam())`. The searches are fsgpu's exact
#' ones, on the CPU threads or GPUs chosen here; the rows of `X` are the points.
#'
#' `buildIndex()` returns an [FsgpuIndex][FsgpuIndex-class], which the searches take as `BNINDEX`
#' (or `precomputed`) to search the same points again without preparing them again.
#'
#' The results are BiocNeighbors' (version 1.16), value for value. kNN searches return `index`
#' (1-based; a point is never its own neighbour) and `distance` matrices, one row per point (or
#' per `subset` point), nearest first, restricted to the last `last` columns and to what
#' `get.index` and `get.distance` ask for. Range searches (`findNeighbors()`,
#' `queryNeighbors()`) return lists of every point within `threshold` (one threshold, or one per
#' point), the point itself included by `findNeighbors()`, in index order; with
#' `get.index = FALSE` and `get.distance = FALSE` the number of such points. Distances are
#' computed as BiocNeighbors computes them, so that they are identical, not merely equal:
#' Euclidean as the square root of the squared differences summed one dimension after another
#' (and a point is within `threshold` when that sum is at most `threshold^2`), Manhattan as the
#' absolute differences summed in the same order, and Cosine as the Euclidean distance between
#' the rows divided by their L2 norms, \eqn{\sqrt{2(1 - \cos)}} (a row of zeros is an error,
#' as in BiocNeighbors). Neighbours are ordered by distance (Euclidean: by the sum of squares),
#' then by index. A `k` beyond the number of points (minus one) is capped with a warning; with
#' `warn.ties = TRUE` (the default) a search warns, once, when the distances of a point's
#' `k + 1` nearest neighbours include two equal ones (the order of the tied neighbours is then
#' their index order). Inputs without columns give distances of 0 and inputs without rows
#' empty results, as in BiocNeighbors. `raw.index` returns the same indices (the index keeps
#' the points in their order). `BPPARAM` is ignored: fsgpu uses `threads` CPU threads or the
#' GPUs.
#'
#' Differences from BiocNeighbors 1.16: exact ties (equal sums) go to the lower index, as in
#' `ExhaustiveParam`, where `KmknnParam` and `VptreeParam` break them in their own internal
#' order; range results are in index order, where `KmknnParam`'s are in its internal order (the
#' same points and distances); and the queries of a `"Cosine"` index given as `BNINDEX` are
#' divided by their norms, as when the index is built in the same call, where BiocNeighbors
#' 1.16 leaves them as given (its query code then takes the distance to be Euclidean).
#'
#' @param distance `"Euclidean"` (default), `"Manhattan"` or `"Cosine"`.
#' @param backend `"auto"`, `"cpu"` or `"gpu"`, as in [select_features()]; `NULL` for the
#'   session's default (`options(fsgpu.backend)`).
#' @param threads CPU threads; `NULL` for [fsgpu_threads()]'s default.
#' @param devices GPU ids; `NULL` for all.
#' @param quiet `TRUE` (default) shows no progress bar, as BiocNeighbors' own parameters show
#'   none: the searches run inside other packages' functions, often many times, where a bar
#'   per search would be noise the caller cannot turn off. `FALSE` shows them, as
#'   [knn_graph()] does.
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
#'   # every point within distance 2 of the first three (each is its own neighbour)
#'   BiocNeighbors::findNeighbors(cells, threshold = 2, subset = 1:3, BNPARAM = param)$index
#'   # an index, searched twice
#'   index <- BiocNeighbors::buildIndex(cells, BNPARAM = param)
#'   BiocNeighbors::findKNN(BNINDEX = index, k = 2)$distance[1:3, ]
#'   BiocNeighbors::queryNeighbors(BNINDEX = index, query = cells[1:2, ] + 0.1, threshold = 1.5)$index
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

# BiocNeighbors' coercion of points: a double matrix with the points in columns.
bn_columns <- function(X, transposed = FALSE) {
  if (!isTRUE(transposed)) X <- t(X)
  if (!is.matrix(X)) X <- as.matrix(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  X
}

# BiocNeighbors' Cosine preparation: each column (point) divided by its L2 norm.
bn_unit_columns <- function(X) {
  norms <- sqrt(colSums(X^2))
  if (any(norms == 0)) stop("L2 norms of zero detected for distance='Cosine'", call. = FALSE)
  sweep(X, 2, norms, "/", check.margin = FALSE)
}
