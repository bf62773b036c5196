# knn_graph() on the GPU against its CPU twin: neighbours and distances must be identical,
# resident and streamed, for self and query searches. Skips without a usable GPU.

skip_unless_gpu_knn <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

expect_gpu_knn_equals_cpu <- function(x, ..., devices = NULL, info = NULL) {
  gpu <- knn_graph(x, ..., backend = "gpu", devices = devices)
  cpu <- knn_graph(x, ..., backend = "cpu")
  expect_identical(attr(gpu, "backend"), "gpu", info = info)
  expect_identical(unclass(gpu)[1:2], unclass(cpu)[1:2], info = info)
  invisible(cpu)
}

test_that("GPU neighbours equal the CPU's for every metric and k", {
  skip_unless_gpu_knn()
  x <- data_knn(n = 700, dim = 37, seed = 63)
  for (metric in c("pearson", "spearman", "cosine", "euclidean", "manhattan"))
    for (k in c(1, 10, 150)) expect_gpu_knn_equals_cpu(x, k = k, metric = metric, info = paste(metric, k))
  expect_gpu_knn_equals_cpu(data_knn(n = 40, dim = 5), k = 39, metric = "pearson", info = "k = n - 1")
})

test_that("GPU equals CPU for queries, ties, a large k, streaming and every device", {
  skip_unless_gpu_knn()
  x <- data_knn(n = 1200, dim = 20, seed = 64)
  q <- x[1:50, ] + 0.05
  for (metric in c("pearson", "euclidean", "manhattan"))
    expect_gpu_knn_equals_cpu(x, k = 12, metric = metric, query = q, info = paste("query", metric))
  lattice <- as.matrix(expand.grid(0:4, 0:4, 0:4, 0:3))  # many exactly tied distances
  for (metric in c("euclidean", "manhattan", "cosine"))
    expect_gpu_knn_equals_cpu(lattice, k = 15, metric = metric, info = paste("lattice", metric))
  expect_gpu_knn_equals_cpu(x, k = 1000, metric = "pearson", info = "k = 1000")
  old <- options(fsgpu.gpu_memory_limit = 2^21)  # reference rows stream through in blocks
  on.exit(options(old))
  for (metric in c("pearson", "euclidean"))
    expect_gpu_knn_equals_cpu(x, k = 9, metric = metric, info = paste("streamed", metric))
  options(old)
  ids <- fsgpu::backend_info()$devices$id
  expect_gpu_knn_equals_cpu(x, k = 9, devices = ids, info = "all devices")
})

test_that("GPU SNN and mutual graphs equal the CPU's", {
  skip_unless_gpu_knn()
  x <- data_knn(n = 500, seed = 65)
  for (args in list(list(snn = "rank"), list(mutual = TRUE)))
    expect_identical(do.call(knn_graph, c(list(x, k = 8, output = "edges", backend = "gpu"), args)),
                     do.call(knn_graph, c(list(x, k = 8, output = "edges", backend = "cpu"), args)))
})

test_that("GPU equals CPU on data built against the tensor-core pass's bound", {
  skip_unless_gpu_knn()
  set.seed(66)
  base <- matrix(rnorm(100 * 40), 100, 40)
  # near duplicates: copies moved by 1e-9 of themselves (tied in half precision, apart in double)
  near <- rbind(base, base * (1 + 1e-9), base + 1e-12)
  # huge and tiny rows, 1e-30 .. 1e30
  scaled <- base * 10^rep(seq(-30, 30, by = 6), length.out = 100)
  # constant rows among varying ones, all at distance 1 from everything (ties by index)
  constant <- rbind(base[1:40, ], matrix(rep(1:5, length.out = 160), 160, 40))
  # groups of exact copies, k reaching into a group
  copies <- base[rep(1:13, length.out = 520), 1:12]
  # many dimensions: the query rows no longer fit the block's shared memory
  wide <- matrix(rnorm(300 * 700), 300, 700)
  for (metric in c("pearson", "cosine", "spearman")) {
    expect_gpu_knn_equals_cpu(near, k = 20, metric = metric, info = paste("near duplicates", metric))
    expect_gpu_knn_equals_cpu(scaled, k = 20, metric = metric, info = paste("huge and tiny", metric))
    expect_gpu_knn_equals_cpu(constant, k = 150, metric = metric, quiet = TRUE, info = paste("constant rows", metric))
    expect_gpu_knn_equals_cpu(copies, k = 33, metric = metric, info = paste("copies", metric))
  }
  expect_gpu_knn_equals_cpu(wide, k = 20, metric = "pearson", info = "700 dimensions")
  for (k in c(31, 32, 33, 96, 127, 128)) {  # heaps of k + 96 around the 128-row tiles
    expect_gpu_knn_equals_cpu(copies[1:257, ], k = k, metric = "pearson", info = paste("tile edge, k =", k))
  }
})

test_that("GPU equals CPU at the tensor-core pass's chunk edges and from kept host blocks", {
  skip_unless_gpu_knn()
  set.seed(67)
  # dimensions around the pass's 64-dimension chunks (rows padded to a multiple of 64)
  for (dim in c(63, 64, 65, 128, 129)) {
    x <- matrix(rnorm(300 * dim), 300, dim)
    x[2, ] <- x[1, ] * (1 + 1e-9)  # a near duplicate
    expect_gpu_knn_equals_cpu(x, k = 20, metric = "pearson", info = paste(dim, "dimensions"))
  }
  # 29 MB of double rows: a host block kept from call to call and page-locked, copied directly;
  # the second search on the device buffers the first left
  big <- matrix(rnorm(12000 * 300), 12000, 300)
  cpu <- expect_gpu_knn_equals_cpu(big, k = 20, metric = "pearson", info = "12,000 x 300")
  expect_identical(unclass(knn_graph(big, k = 20, metric = "pearson", backend = "gpu"))[1:2], unclass(cpu)[1:2])
})
