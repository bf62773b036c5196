# SingleCellExperiment input. Every job takes one through its SummarizedExperiment method (S3
# dispatch follows the S4 class's inheritance); what a single-cell analysis adds is the kNN graph
# of the cells in a reduced dimension (PCA), as bluster and scran build it.

#' @rdname knn_graph
#' @param use_dimred For a `SingleCellExperiment`: the name (or index) of a `reducedDim()`,
#'   e.g. `"PCA"`, whose rows, the cells, are the points, instead of an assay. `query` is then
#'   another `SingleCellExperiment` with the same reduced dimension, or a matrix of its
#'   coordinates. [add_results()] stores the neighbour lists as `colPairs()`.
#' @param n_dimred With `use_dimred`: use only the first `n_dimred` dimensions (e.g. the
#'   first 20 principal components).
#' @export
knn_graph.SingleCellExperiment <- function(x, k = 10, metric = if (is.null(use_dimred)) "pearson" else "euclidean",
                                           output = c("index", "edges", "igraph"), mutual = FALSE, snn = FALSE,
                                           query = NULL, assay = NULL, by = c("features", "samples"),
                                           use_dimred = NULL, n_dimred = NULL, backend = NULL, threads = NULL,
                                           devices = NULL, BPPARAM = NULL, quiet = FALSE, ...) {
  check_dots_empty(...)
  if (is.null(use_dimred)) {
    if (!is.null(n_dimred)) stop("n_dimred goes with use_dimred", call. = FALSE)
    return(knn_graph.SummarizedExperiment(x, k = k, metric = metric, output = output, mutual = mutual, snn = snn,
                                          query = query, assay = assay, by = by, backend = backend, threads = threads,
                                          devices = devices, BPPARAM = BPPARAM, quiet = quiet))
  }
  if (!missing(assay) || !missing(by))
    stop("use_dimred takes the cells of a reduced dimension: give no assay or by", call. = FALSE)
  points <- dimred_points(x, use_dimred, n_dimred, "x")
  if (methods::is(query, "SingleCellExperiment")) query <- dimred_points(query, use_dimred, n_dimred, "query")
  res <- knn_graph.default(points, k = k, metric = metric, output = output, mutual = mutual, snn = snn,
                           query = query, backend = backend, threads = threads, devices = devices, BPPARAM = BPPARAM,
                           quiet = quiet)
  if (inherits(res, "fsgpu_knn") && is.null(query)) attr(res, "points") <- "samples"  # for add_results()
  res
}

# The cells x dimensions matrix of a reducedDim, rows named as the cells.
dimred_points <- function(sce, use_dimred, n_dimred, arg) {
  available <- SingleCellExperiment::reducedDimNames(sce)
  n <- length(SingleCellExperiment::reducedDims(sce))
  ok <- length(use_dimred) == 1L && !is.na(use_dimred) &&
    ((is.character(use_dimred) && use_dimred %in% available) || (is.numeric(use_dimred) && use_dimred %in% seq_len(n)))
  if (!ok)
    stop("use_dimred must name one reducedDim of ", arg, if (n) paste0("; available: ", quote_list(available))
         else paste0("; ", arg, " has none (see SingleCellExperiment::reducedDim<-)"), call. = FALSE)
  points <- as.matrix(SingleCellExperiment::reducedDim(sce, use_dimred, withDimnames = TRUE))
  if (!is.null(n_dimred)) {
    n_dimred <- check_count(n_dimred, "n_dimred", max = ncol(points), what = "the number of dimensions")
    points <- points[, seq_len(n_dimred), drop = FALSE]
  }
  points
}
