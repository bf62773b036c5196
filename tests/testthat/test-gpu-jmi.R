# The GPU engine against its CPU twin: selections and scores must be bitwise identical.

skip_if_no_gpu <- function() {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
}

select_on <- function(backend, case, ...) {
  as.data.frame(select_features(case$x, case$y, k = case$k, nbins = case$nbins,
                                backend = backend, ...))
}

expect_gpu_equals_cpu <- function(case, ...) {
  expect_identical(select_on("gpu", case, ...), select_on("cpu", case))
}

# Runs code with a small GPU memory budget, so that features stream through in blocks.
with_gpu_memory_limit <- function(bytes, code) {
  old <- options(fsgpu.gpu_memory_limit = bytes)
  on.exit(options(old))
  code
}

test_that("GPU equals CPU on every reference data set", {
  skip_if_no_gpu()
  for (case in jmi_cases()) expect_gpu_equals_cpu(case)
})

test_that("GPU equals CPU on dense and sparse forms of the same data", {
  skip_if_no_gpu()
  for (case in jmi_cases()[c("informative", "ties", "constant", "sparse")]) {
    sparse <- case
    sparse$x <- as_dgc(case$x)
    dense <- case
    dense$x <- as.matrix(case$x)
    expect_gpu_equals_cpu(sparse)
    expect_gpu_equals_cpu(dense)
    expect_identical(select_on("gpu", sparse), select_on("gpu", dense))
  }
})

test_that("GPU equals CPU with many classes and with codes wider than a byte", {
  skip_if_no_gpu()
  expect_gpu_equals_cpu(c(data_many_classes(classes = 40), k = 10, nbins = 32))
  wide <- c(data_wide_codes(), k = 6, nbins = 64)
  expect_gpu_equals_cpu(wide)
  expect_identical(select_on("gpu", wide)$index[1], 3L)
  expect_gpu_equals_cpu(c(data_informative(), k = 10, nbins = 300))
})

test_that("GPU equals CPU when features stream through in small blocks", {
  skip_if_no_gpu()
  cases <- c(jmi_cases()[c("informative", "sparse", "mixed_df")],
             list(wide = c(data_wide_codes(), k = 5, nbins = 64)))
  with_gpu_memory_limit(20000, for (case in cases) expect_gpu_equals_cpu(case))
})

test_that("GPU equals CPU on a bigger random case", {
  skip_if_no_gpu()
  big <- c(data_big(), k = 20, nbins = 64)
  expect_gpu_equals_cpu(big)
  sparse <- big
  sparse$x <- as_dgc(pmax(big$x - 1.5, 0))  # about 7% non-zero
  expect_gpu_equals_cpu(sparse)
})

test_that("several GPUs give the result of one", {
  skip_if_no_gpu()
  skip_if_not(nrow(fsgpu::backend_info()$devices) >= 2, "fewer than two GPUs")
  for (case in c(jmi_cases()[c("informative", "sparse")], list(c(data_big(), k = 20, nbins = 64)))) {
    expect_gpu_equals_cpu(case, devices = c(0, 1))
  }
})

test_that("GPU equals CPU on an integer matrix of small codes, wide enough for the bit-plane counts", {
  skip_if_no_gpu()
  # One device holds every code: the selected feature's tables are built there, and the host's
  # codes are freed while the steps run (except for CMI and JMI3, which join features on the host).
  set.seed(19)
  n <- 1500L
  y <- sample(0:5, n, replace = TRUE)
  x <- matrix(sample(0:15, n * 2200L, replace = TRUE), n)
  for (j in 1:6) x[, j * 7L] <- (y * j + sample(0:2, n, replace = TRUE)) %% 16L
  for (method in c("jmi", "mrmr", "cmim", "jim", "cmi", "jmi3")) {
    gpu <- select_features(x, y, k = 8, method = method, backend = "gpu", categorical = TRUE)
    cpu <- select_features(x, y, k = 8, method = method, backend = "cpu", categorical = TRUE)
    expect_identical(as.data.frame(gpu), as.data.frame(cpu), info = method)
  }
})
