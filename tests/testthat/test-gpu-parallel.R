# BPPARAM with the GPU engines: tiles searched on the GPUs (each tile by its own process with
# SnowParam) must equal one GPU process and the CPU. Skips without BiocParallel or a usable GPU.

skip_if_not_installed("BiocParallel")
skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

snow <- BiocParallel::SnowParam(2)
BiocParallel::bpstart(snow)  # stopped at the end of the file
serial <- BiocParallel::SerialParam()
gpus <- fsgpu::backend_info()$devices$id

with_tiles <- function(n, code) {
  old <- options(fsgpu.tiles = n)
  on.exit(options(old))
  code
}

run_of <- function(r) if (is.list(r) && !is.data.frame(r) && !is.null(r$run)) r$run else attr(r, "run")

# The result without where and how long it ran, which expect_gpu_tiles_identical() checks apart.
gpu_result_of <- function(r) {
  for (a in c("elapsed", "timings", "backend", "run")) attr(r, a) <- NULL
  if (is.list(r) && !is.data.frame(r)) r[c("elapsed", "timings", "backend", "why_cpu", "run")] <- NULL
  r
}

# The run record of a GPU run: on the GPUs asked for, none of its tiles having fallen back.
expect_gpu_run <- function(r, devices, label) {
  run <- run_of(r)
  expect_identical(run$name, "gpu", label = label)
  expect_identical(run$devices, as.integer(if (is.null(devices)) gpus else sort(unique(unlist(devices)))),
                   label = label)
  expect_identical(run$why_cpu, "", label = label)
}

# f(BPPARAM, backend, devices): the GPU without BPPARAM equals the CPU, and every tiled GPU
# run (one device set for all, or one device per tile in turn) equals both.
expect_gpu_tiles_identical <- function(f, tiles = c(3, 5)) {
  expected <- gpu_result_of(f(NULL, "cpu", NULL))
  alone <- f(NULL, "gpu", NULL)
  expect_gpu_run(alone, NULL, "one GPU process")
  expect_identical(gpu_result_of(alone), expected, label = "one GPU process")
  for (param in list(serial, snow))
    for (n in tiles)
      for (devices in list(NULL, as.list(gpus))) {
        label <- sprintf("%s, %d tiles, devices %s", class(param)[1], n, if (is.list(devices)) "per tile" else "all")
        got <- with_tiles(n, f(param, "gpu", devices))
        expect_gpu_run(got, devices, label)
        expect_identical(run_of(got)$workers, as.integer(BiocParallel::bpnworkers(param)), label = label)
        expect_identical(gpu_result_of(got), expected, label = label)
      }
}

test_that("mi_pairs and mi_matrix on GPUs from tiles equal one process and the CPU", {
  d <- with_seed(31, {
    x <- matrix(rnorm(300 * 150), 300, 150, dimnames = list(NULL, paste0("f", 1:150)))
    x[, 140] <- x[, 3]  # ties across tiles
    y <- factor(x[, 3] + x[, 70] > 0)
    list(x = x, y = y)
  })
  for (by in c("joint", "interaction"))
    expect_gpu_tiles_identical(function(bp, backend, devices)
      mi_pairs(d$x, d$y, top = 40, by = by, nbins = 6, backend = backend, devices = devices, BPPARAM = bp))
  expect_gpu_tiles_identical(function(bp, backend, devices)
    mi_pairs(d$x, d$y, threshold = 0.05, with = c(3, 140, 77), nbins = 6, backend = backend, devices = devices,
             BPPARAM = bp))
  expect_gpu_tiles_identical(function(bp, backend, devices)
    mi_matrix(d$x[, 1:90], nbins = 5, backend = backend, devices = devices, BPPARAM = bp), tiles = 4)
})

test_that("find_interactions on GPUs from tiles equals one process and the CPU (2- and 3-way)", {
  g <- with_seed(32, {
    x <- matrix(sample(0:2, 400 * 90, replace = TRUE), 400, 90)
    x[, 80] <- x[, 5]
    list(x = x, y = factor((x[, 5] > 0) != (x[, 33] > 0)))
  })
  for (k in 2:3)
    expect_gpu_tiles_identical(function(bp, backend, devices) {
      set.seed(5)
      find_interactions(g$x, g$y, dimensions = k, return_tuples = TRUE, n_contrast = 40, backend = backend,
                        devices = devices, BPPARAM = bp)
    })
})

test_that("knn_graph on GPUs from blocks of points equals one process and the CPU", {
  x <- with_seed(33, matrix(rnorm(700 * 40), 700, 40))
  x[c(100, 600), ] <- x[rep(5, 2), ]
  for (metric in c("pearson", "euclidean"))
    expect_gpu_tiles_identical(function(bp, backend, devices)
      knn_graph(x, k = 8, metric = metric, backend = backend, devices = devices, BPPARAM = bp))
  q <- x[1:50, ] + 0.001
  expect_gpu_tiles_identical(function(bp, backend, devices)
    knn_graph(x, k = 5, query = q, backend = backend, devices = devices, BPPARAM = bp), tiles = 4)
})

BiocParallel::bpstop(snow)
