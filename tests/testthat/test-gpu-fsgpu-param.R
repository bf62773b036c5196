# FsgpuParam on the GPU against the CPU: kNN and range searches, with and without a prebuilt
# index, must return identical neighbours and distances (and so BiocNeighbors' own, see
# test-fsgpu-param.R). Skips without a usable GPU.

skip_if_not_installed("BiocNeighbors")
skip_unless_gpu_param <- function() skip_if_not(isTRUE(backend_info()$gpu_available), "no GPU")

test_that("FsgpuParam's kNN on the GPU equals the CPU", {
  skip_unless_gpu_param()
  set.seed(14)
  x <- matrix(rnorm(2000 * 30), 2000, 30)
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    gpu <- FsgpuParam(d, backend = "gpu")
    cpu <- FsgpuParam(d, backend = "cpu")
    expect_identical(BiocNeighbors::findKNN(x, k = 15, BNPARAM = gpu), BiocNeighbors::findKNN(x, k = 15, BNPARAM = cpu),
                     info = d)
    expect_identical(BiocNeighbors::queryKNN(x, x[1:50, ] + 0.01, k = 5, BNPARAM = gpu),
                     BiocNeighbors::queryKNN(x, x[1:50, ] + 0.01, k = 5, BNPARAM = cpu), info = d)
    expect_identical(BiocNeighbors::findKNN(x, k = 7, subset = 2000:1990, BNPARAM = gpu),
                     BiocNeighbors::findKNN(x, k = 7, subset = 2000:1990, BNPARAM = cpu), info = d)
    # an index searched again and again: its points stay on the GPU after the first search
    index <- BiocNeighbors::buildIndex(x, BNPARAM = gpu)
    for (again in 1:2) {
      expect_identical(BiocNeighbors::findKNN(BNINDEX = index, k = 15), BiocNeighbors::findKNN(x, k = 15, BNPARAM = cpu),
                       info = d)
      expect_identical(BiocNeighbors::queryKNN(BNINDEX = index, query = x[1:50, ] + 0.01, k = 5),
                       BiocNeighbors::queryKNN(x, x[1:50, ] + 0.01, k = 5, BNPARAM = cpu), info = d)
      expect_identical(BiocNeighbors::findNeighbors(BNINDEX = index, threshold = 3, subset = 1:100),
                       BiocNeighbors::findNeighbors(x, threshold = 3, subset = 1:100, BNPARAM = cpu), info = d)
    }
  }
  lattice <- as.matrix(expand.grid(0:5, 0:5, 0:5, 0:3))  # exact ties everywhere
  expect_identical(suppressWarnings(BiocNeighbors::findKNN(lattice, k = 10, BNPARAM = FsgpuParam(backend = "gpu"))),
                   suppressWarnings(BiocNeighbors::findKNN(lattice, k = 10, BNPARAM = FsgpuParam(backend = "cpu"))))
})

test_that("FsgpuParam's range search on the GPU equals the CPU", {
  skip_unless_gpu_param()
  set.seed(15)
  x <- matrix(runif(3000 * 12), 3000, 12)
  q <- matrix(runif(200 * 12), 200, 12)
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    t <- c(Euclidean = 0.6, Manhattan = 1.6, Cosine = 0.15)[[d]]
    gpu <- FsgpuParam(d, backend = "gpu")
    cpu <- FsgpuParam(d, backend = "cpu")
    ours <- BiocNeighbors::findNeighbors(x, threshold = t, BNPARAM = gpu)
    expect_identical(ours, BiocNeighbors::findNeighbors(x, threshold = t, BNPARAM = cpu), info = d)
    expect_gt(sum(lengths(ours$index)), nrow(x))
    ts <- rep(c(t / 2, t, 2 * t), length.out = 200)
    expect_identical(BiocNeighbors::queryNeighbors(x, q, threshold = ts, BNPARAM = gpu),
                     BiocNeighbors::queryNeighbors(x, q, threshold = ts, BNPARAM = cpu), info = d)
    index <- BiocNeighbors::buildIndex(x, BNPARAM = gpu)
    expect_identical(BiocNeighbors::queryNeighbors(BNINDEX = index, query = q, threshold = t, get.index = FALSE,
                                                   get.distance = FALSE),
                     BiocNeighbors::queryNeighbors(x, q, threshold = t, get.index = FALSE, get.distance = FALSE,
                                                   BNPARAM = cpu), info = d)
  }
  # thresholds exactly at lattice distances: every boundary pair decided exactly
  lattice <- as.matrix(expand.grid(0:5, 0:5, 0:5, 0:3))
  for (t in c(1, sqrt(2), 2))
    expect_identical(BiocNeighbors::findNeighbors(lattice, threshold = t, BNPARAM = FsgpuParam(backend = "gpu")),
                     BiocNeighbors::findNeighbors(lattice, threshold = t, BNPARAM = FsgpuParam(backend = "cpu")),
                     info = t)
  # reference points streamed in blocks through a small memory limit
  old <- options(fsgpu.gpu_memory_limit = 2^19)
  on.exit(options(old))
  expect_identical(BiocNeighbors::queryNeighbors(x, q, threshold = 0.6, BNPARAM = FsgpuParam(backend = "gpu")),
                   BiocNeighbors::queryNeighbors(x, q, threshold = 0.6, BNPARAM = FsgpuParam(backend = "cpu")))
})
