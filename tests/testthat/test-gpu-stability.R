# Stability selection and cross-validation on the GPU against the CPU: the same subsamples give
# the same selections, hence identical frequencies, ranks and curves.

skip_if_no_gpu <- function() {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
}

without_run <- function(res) res[setdiff(names(res), c("run", "elapsed"))]

test_that("stability_selection() on the GPU equals the CPU (dense, sparse, several methods)", {
  skip_if_no_gpu()
  d <- data_informative(n = 120, p = 60, classes = 3, informative = 5)
  run <- function(x, backend, ...) stability_selection(x, d$y, k = 8, resamples = 10, seed = 2, backend = backend,
                                                       quiet = TRUE, ...)
  methods <- c("jmi", "mrmr", "cmim", "disr", "cmi", "jmi3", "jim")
  expect_identical(without_run(run(d$x, "gpu", method = methods)), without_run(run(d$x, "cpu", method = methods)))
  xs <- d$x
  xs[abs(xs) < 1] <- 0
  expect_identical(without_run(run(as_dgc(xs), "gpu")), without_run(run(as_dgc(xs), "cpu")))
  expect_identical(run(d$x, "gpu")$run$name, "gpu")
})

test_that("select_features_cv() on the GPU equals the CPU", {
  skip_if_no_gpu()
  d <- data_informative(n = 90, p = 40, classes = 2, informative = 4)
  cv <- function(backend) select_features_cv(d$x, d$y, k_max = 6, folds = 3, seed = 1, backend = backend,
                                             quiet = TRUE)
  expect_identical(without_run(cv("gpu")), without_run(cv("cpu")))
})

test_that("the batched GPU kernel equals the CPU on plain subsamples, sparse tables and thresholds", {
  skip_if_no_gpu()
  # 400 samples: sparse features with more than 32 entries in a subsample take the count tables,
  # the sparser ones the warp's match path; plain subsamples (pairs = FALSE).
  d <- data_informative(n = 400, p = 50, classes = 4, informative = 6)
  xs <- d$x
  xs[abs(xs) < 0.8] <- 0
  xs[, 1:10][abs(xs[, 1:10]) < 1.8] <- 0
  run <- function(x, backend, ...) stability_selection(x, d$y, k = 10, resamples = 12, pairs = FALSE,
                                                       fraction = 0.6, seed = 3, backend = backend, quiet = TRUE, ...)
  methods <- c("jmi", "mim", "icap", "jmim", "njmim")
  expect_identical(without_run(run(as_dgc(xs), "gpu", method = methods)),
                   without_run(run(as_dgc(xs), "cpu", method = methods)))
  expect_identical(without_run(run(d$x, "gpu", method = "mrmr", min_score = 0.05)),
                   without_run(run(d$x, "cpu", method = "mrmr", min_score = 0.05)))
})
