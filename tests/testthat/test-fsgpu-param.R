# FsgpuParam: BiocNeighbors' findKNN()/queryKNN() on fsgpu's exact kNN, checked against
# BiocNeighbors' own exhaustive search (data without distance ties) and through bluster.

skip_without_bluster <- function() {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("bluster")
  skip_if_not_installed("igraph")
}

test_that("findKNN and queryKNN equal ExhaustiveParam's for every distance", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(11)
  x <- matrix(rnorm(300 * 8), 300, 8)
  q <- x[1:25, ] + 0.1
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    ours <- BiocNeighbors::findKNN(x, k = 7, BNPARAM = FsgpuParam(d, backend = "cpu"))
    ref <- BiocNeighbors::findKNN(x, k = 7, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d))
    expect_identical(ours$index, ref$index, info = d)
    expect_equal(ours$distance, ref$distance, tolerance = 1e-10, info = d)
    ours <- BiocNeighbors::queryKNN(x, q, k = 4, BNPARAM = FsgpuParam(d, backend = "cpu"))
    ref <- BiocNeighbors::queryKNN(x, q, k = 4, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d))
    expect_identical(ours$index, ref$index, info = d)
    expect_equal(ours$distance, ref$distance, tolerance = 1e-10, info = d)
  }
})

test_that("findKNN honours get.index, get.distance, last, subset, transposed and caps k", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(12)
  x <- matrix(rnorm(80 * 5), 80, 5, dimnames = list(paste0("p", 1:80), NULL))
  param <- FsgpuParam(backend = "cpu", threads = 1)
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  same <- function(...) {
    ours <- BiocNeighbors::findKNN(x, ..., BNPARAM = param)
    ref <- BiocNeighbors::findKNN(x, ..., BNPARAM = exhaustive)
    expect_identical(names(ours), names(ref))
    expect_identical(ours$index, ref$index)
    expect_equal(ours$distance, ref$distance, tolerance = 1e-10)
  }
  same(k = 5, last = 2)
  same(k = 5, get.distance = FALSE)
  same(k = 5, get.index = FALSE)
  same(k = 5, subset = c(9, 3))
  same(k = 5, subset = c("p4", "p70"), last = 1)
  same(k = 5, subset = seq_len(80) %% 7 == 0)
  same(k = 3, warn.ties = FALSE)
  ours <- BiocNeighbors::queryKNN(x, t(x[1:4, ]), k = 3, transposed = TRUE, BNPARAM = param)
  ref <- BiocNeighbors::queryKNN(x, t(x[1:4, ]), k = 3, transposed = TRUE, BNPARAM = exhaustive)
  expect_identical(ours$index, ref$index)
  expect_warning(capped <- BiocNeighbors::findKNN(x[1:6, ], k = 10, BNPARAM = param), "'k' capped")
  expect_identical(dim(capped$index), c(6L, 5L))
  expect_error(BiocNeighbors::findKNN(x, k = 3, BNPARAM = param, precomputed = list()), "builds no index")
})

test_that("FsgpuParam checks its arguments and prints", {
  skip_if_not_installed("BiocNeighbors")
  p <- FsgpuParam("Manhattan", backend = "cpu", threads = 2, devices = 0)
  expect_s4_class(p, "BiocNeighborParam")
  expect_identical(BiocNeighbors::bndistance(p), "Manhattan")
  expect_output(show(p), "class: FsgpuParam.*distance: Manhattan.*backend: cpu.*threads: 2.*devices: 0")
  expect_error(FsgpuParam("Hamming"), "should be one of")
  expect_error(FsgpuParam(backend = "tpu"), "backend must be")
  expect_error(FsgpuParam(devices = -1), "devices must be")
  expect_error(FsgpuParam(threads = 0), "threads must be")
  expect_error(FsgpuParam(quiet = NA), "quiet must be TRUE or FALSE")
  expect_output(show(FsgpuParam()), "quiet: TRUE")
})

test_that("FsgpuParam is quiet by default, and shows progress and messages with quiet = FALSE", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(14)
  x <- rbind(0, matrix(rnorm(50 * 4), 50, 4))  # a zero row: a message under Cosine
  seen <- character()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, job), fsgpu.progress_interval = 0)
  on.exit(options(old))
  expect_silent(quiet <- BiocNeighbors::findKNN(x, k = 3, BNPARAM = FsgpuParam("Cosine", backend = "cpu")))
  expect_identical(seen, character())
  loud <- FsgpuParam("Cosine", backend = "cpu", quiet = FALSE)
  expect_message(shown <- BiocNeighbors::findKNN(x, k = 3, BNPARAM = loud), "1 constant row")
  expect_true(any(grepl("nearest neighbours", seen)))
  expect_identical(shown, quiet)
  expect_message(BiocNeighbors::queryKNN(x, x[1:2, ], k = 3, BNPARAM = loud), "constant rows")
})

test_that("bluster builds the same graphs and clusters with FsgpuParam", {
  skip_without_bluster()
  set.seed(13)
  centres <- matrix(rnorm(4 * 6, sd = 4), 4, 6)
  x <- centres[rep(1:4, each = 60), ] + matrix(rnorm(240 * 6), 240, 6)
  param <- FsgpuParam(backend = "cpu")
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  ours <- bluster::makeSNNGraph(x, k = 10, BNPARAM = param)
  ref <- bluster::makeSNNGraph(x, k = 10, BNPARAM = exhaustive)
  expect_identical(igraph::as_edgelist(ours), igraph::as_edgelist(ref))
  expect_identical(igraph::E(ours)$weight, igraph::E(ref)$weight)
  expect_identical(igraph::as_edgelist(bluster::makeKNNGraph(x, k = 8, BNPARAM = param)),
                   igraph::as_edgelist(bluster::makeKNNGraph(x, k = 8, BNPARAM = exhaustive)))
  clusters <- bluster::clusterRows(x, bluster::NNGraphParam(k = 10, BNPARAM = param))
  expect_identical(clusters, bluster::clusterRows(x, bluster::NNGraphParam(k = 10, BNPARAM = exhaustive)))
  expect_identical(length(unique(clusters)), 4L)
})

test_that("FsgpuParam on the GPU equals the CPU", {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not(isTRUE(backend_info()$gpu_available), "no GPU")
  set.seed(14)
  x <- matrix(rnorm(2000 * 30), 2000, 30)
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    expect_identical(BiocNeighbors::findKNN(x, k = 15, BNPARAM = FsgpuParam(d, backend = "gpu")),
                     BiocNeighbors::findKNN(x, k = 15, BNPARAM = FsgpuParam(d, backend = "cpu")), info = d)
    expect_identical(BiocNeighbors::queryKNN(x, x[1:50, ] + 0.01, k = 5, BNPARAM = FsgpuParam(d, backend = "gpu")),
                     BiocNeighbors::queryKNN(x, x[1:50, ] + 0.01, k = 5, BNPARAM = FsgpuParam(d, backend = "cpu")),
                     info = d)
  }
})
