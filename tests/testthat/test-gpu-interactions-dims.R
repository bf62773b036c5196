# find_interactions() on the GPU for 1-, 4- and 5-way tuples and for more classes than the pair
# and triple kernels take: gains, tuples, contrast gains, interesting tuples and BPPARAM tiles
# identical to the CPU bit for bit. Skips without a usable GPU.

skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

dims_case <- function(n, p, m, classes, seed) {
  with_seed(seed, {
    x <- matrix(sample(0:(m - 1), n * p, replace = TRUE), n, p, dimnames = list(NULL, paste0("v", 1:p)))
    y <- (x[, 2] + x[, p - 1]) %% classes
    y[sample(n, n %/% 3)] <- sample(0:(classes - 1), n %/% 3, replace = TRUE)
    x[, p] <- x[, 2]  # a copy: exact ties
    list(x = x, y = factor(y), m = m)
  })
}

expect_same_dims <- function(cpu, gpu, info) {
  expect_identical(gpu$backend, "gpu", info = info)
  expect_identical(cpu$backend, "cpu", info = info)
  expect_identical(gpu$scores, cpu$scores, info = info)
  expect_identical(gpu$contrast_gain, cpu$contrast_gain, info = info)
  expect_identical(gpu$tuples, cpu$tuples, info = info)
  expect_identical(gpu$interesting_tuples, cpu$interesting_tuples, info = info)
}

test_that("1-, 4- and 5-way searches on the GPU equal the CPU for 2-4 levels and 2-6 classes", {
  cases <- list(list(k = 1, n = 1024, p = 2000, m = 3, cl = 2), list(k = 1, n = 300, p = 500, m = 4, cl = 6),
                list(k = 4, n = 1024, p = 30, m = 3, cl = 2), list(k = 4, n = 333, p = 24, m = 2, cl = 3),
                list(k = 4, n = 200, p = 16, m = 4, cl = 4), list(k = 5, n = 517, p = 18, m = 3, cl = 2),
                list(k = 5, n = 200, p = 20, m = 2, cl = 5), list(k = 2, n = 300, p = 80, m = 3, cl = 6),
                list(k = 3, n = 200, p = 40, m = 3, cl = 5))
  for (case in cases) {
    d <- dims_case(case$n, case$p, case$m, case$cl, seed = case$n + case$k)
    info <- sprintf("k = %d, n = %d, m = %d, %d classes", case$k, case$n, case$m, case$cl)
    args <- list(d$x, d$y, dimensions = case$k, levels = d$m, return_tuples = case$k > 1, seed = 1,
                 n_contrast = 12, threshold = if (case$k > 1) 2)
    set.seed(3)
    cpu <- do.call(find_interactions, c(args, backend = "cpu", threads = 2))
    set.seed(3)
    gpu <- do.call(find_interactions, c(args, backend = "gpu"))
    expect_same_dims(cpu, gpu, info)
  }
})

test_that("4-way numeric data over several discretizations on the GPU give the CPU's result", {
  set.seed(4)
  x <- matrix(rnorm(500 * 25), 500, 25)
  y <- factor(x[, 3] * x[, 20] > 0)
  for (divisions in 1:2) {
    set.seed(5)
    cpu <- find_interactions(x, y, dimensions = 4, divisions = divisions, discretizations = 2, top = 5,
                             backend = "cpu")
    set.seed(5)
    gpu <- find_interactions(x, y, dimensions = 4, divisions = divisions, discretizations = 2, top = 5,
                             backend = "gpu")
    expect_same_dims(cpu, gpu, sprintf("divisions = %d", divisions))
  }
})

test_that("4-way GPU tiles over BPPARAM equal one process and the CPU", {
  skip_if_not_installed("BiocParallel")
  d <- dims_case(400, 26, 3, 2, seed = 9)
  run <- function(backend, bp = NULL) {
    set.seed(5)
    find_interactions(d$x, d$y, dimensions = 4, levels = 3, return_tuples = TRUE, n_contrast = 10, backend = backend,
                      BPPARAM = bp)
  }
  cpu <- run("cpu")
  old <- options(fsgpu.tiles = 3)
  on.exit(options(old))
  tiled <- run("gpu", BiocParallel::SerialParam())
  expect_identical(tiled$scores, cpu$scores)
  expect_identical(tiled$contrast_gain, cpu$contrast_gain)
})
