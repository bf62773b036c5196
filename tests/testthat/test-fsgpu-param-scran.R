# scran on FsgpuParam: its graph builders and clusterCells() search neighbours through
# BiocNeighbors, so with BNPARAM = FsgpuParam() they must give what BiocNeighbors' own exact
# search gives (data without distance ties).

skip_if_not_installed("scran")
skip_if_not_installed("bluster")
skip_if_not_installed("SingleCellExperiment")

scran_cells <- function() {
  set.seed(21)
  centres <- matrix(rnorm(3 * 40, sd = 3), 3, 40)
  counts <- matrix(rpois(40 * 150, lambda = exp(centres[rep(1:3, each = 50), ] / 3)), 40, 150,
                   byrow = TRUE, dimnames = list(paste0("g", 1:40), paste0("c", 1:150)))
  sce <- SingleCellExperiment::SingleCellExperiment(list(logcounts = log1p(counts)))
  SingleCellExperiment::reducedDim(sce, "PCA") <- stats::prcomp(t(log1p(counts)), rank. = 8)$x
  sce
}

edges_of <- function(g) igraph::as_data_frame(g)

test_that("scran's SNN and kNN graphs on FsgpuParam equal those on the exhaustive search", {
  sce <- scran_cells()
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  for (type in c("rank", "jaccard")) {
    ours <- scran::buildSNNGraph(sce, k = 8, type = type, use.dimred = "PCA", BNPARAM = FsgpuParam(backend = "cpu"))
    ref <- scran::buildSNNGraph(sce, k = 8, type = type, use.dimred = "PCA", BNPARAM = exhaustive)
    expect_identical(edges_of(ours), edges_of(ref), label = type)
  }
  # Genes x cells, as scran takes expression; the principal components have no tied distances.
  pcs <- t(SingleCellExperiment::reducedDim(sce, "PCA"))
  ours <- scran::buildKNNGraph(pcs, k = 6, d = NA, BNPARAM = FsgpuParam("Manhattan", backend = "cpu"))
  ref <- scran::buildKNNGraph(pcs, k = 6, d = NA, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = "Manhattan"))
  expect_identical(edges_of(ours), edges_of(ref))
})

test_that("scran's clusterCells on FsgpuParam finds the exhaustive search's clusters", {
  sce <- scran_cells()
  cluster_with <- function(param)
    scran::clusterCells(sce, use.dimred = "PCA", BLUSPARAM = bluster::SNNGraphParam(k = 10, BNPARAM = param))
  ours <- cluster_with(FsgpuParam(backend = "cpu", threads = 2))
  expect_identical(ours, cluster_with(BiocNeighbors::ExhaustiveParam()))
  expect_gte(nlevels(ours), 3)
})

test_that("scran's graphs on the GPU equal those on the CPU", {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
  sce <- scran_cells()
  graph_on <- function(backend)
    edges_of(scran::buildSNNGraph(sce, k = 8, use.dimred = "PCA", BNPARAM = FsgpuParam(backend = backend)))
  expect_identical(graph_on("gpu"), graph_on("cpu"))
})
