# The FEAST family and the scorers on the GPU against their CPU twins: selections and scores
# must be bitwise identical. family_settings() (helper-reference.R) lists the criteria.

# testthat runs each file on its own, and this one before test-gpu-jmi.R: its own skip and limit.
skip_unless_gpu <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

# Runs code with a small GPU memory budget, so that features stream through in blocks.
with_gpu_memory_budget <- function(bytes, code) {
  old <- options(fsgpu.gpu_memory_limit = bytes)
  on.exit(options(old))
  code
}

family_on <- function(backend, case, setting, ...) {
  as.data.frame(do.call(select_features, c(list(case$x, case$y, k = case$k, nbins = case$nbins,
                                                backend = backend), setting, list(...))))
}

# `...` goes to both backends, `devices` to the GPU only.
expect_family_gpu_equals_cpu <- function(case, setting, ..., devices = NULL) {
  expect_identical(family_on("gpu", case, setting, ..., devices = devices), family_on("cpu", case, setting, ...),
                   info = setting$method)
}

test_that("GPU equals CPU for every criterion on every reference data set", {
  skip_unless_gpu()
  for (case in jmi_cases()) {
    for (setting in family_settings()) expect_family_gpu_equals_cpu(case, setting)
  }
})

test_that("GPU equals CPU with fixed features, by index and by name", {
  skip_unless_gpu()
  for (case in jmi_cases()[c("informative", "ties", "mixed_df", "sparse")]) {
    p <- ncol(case$x)
    for (setting in family_settings()) {
      expect_family_gpu_equals_cpu(case, setting, fixed = c(p, 2L))
      expect_family_gpu_equals_cpu(case, setting, fixed = colnames(case$x)[c(3L, p - 1L)])
    }
  }
})

test_that("GPU equals CPU in nats and with a given min_score", {
  skip_unless_gpu()
  case <- jmi_cases()$many_classes
  for (setting in family_settings()) {
    expect_family_gpu_equals_cpu(case, setting, units = "nats")
    cpu <- family_on("cpu", case, setting)
    expect_family_gpu_equals_cpu(case, setting, min_score = stats::median(cpu$score))
  }
})

test_that("GPU equals CPU when features stream through in small blocks", {
  skip_unless_gpu()
  cases <- c(jmi_cases()[c("informative", "sparse", "mixed_df")],
             list(wide = c(data_wide_codes(), k = 5, nbins = 64)))
  with_gpu_memory_budget(20000, {
    for (case in cases) {
      for (setting in family_settings()) expect_family_gpu_equals_cpu(case, setting)
      expect_family_gpu_equals_cpu(case, family_settings()$cmi, fixed = c(2L, 1L))
    }
  })
})

test_that("GPU equals CPU on dense and dgCMatrix forms of the same data", {
  skip_unless_gpu()
  for (case in jmi_cases()[c("informative", "ties", "constant", "sparse")]) {
    sparse <- case
    sparse$x <- as_dgc(as.matrix(case$x))
    dense <- case
    dense$x <- as.matrix(case$x)
    for (setting in family_settings()) {
      expect_family_gpu_equals_cpu(sparse, setting)
      expect_identical(family_on("gpu", sparse, setting), family_on("gpu", dense, setting))
    }
  }
})

test_that("GPU equals CPU with many classes and with codes wider than a byte", {
  skip_unless_gpu()
  cases <- list(c(data_many_classes(classes = 40), k = 8, nbins = 32), c(data_wide_codes(), k = 5, nbins = 64))
  for (case in cases) {
    for (setting in family_settings()) expect_family_gpu_equals_cpu(case, setting)
  }
})

test_that("GPU equals CPU on a bigger random case", {
  skip_unless_gpu()
  big <- c(data_big(), k = 8, nbins = 64)
  for (setting in family_settings()[c("mrmr", "icap", "cmim", "disr", "cmi", "njmim")]) {
    expect_family_gpu_equals_cpu(big, setting)
  }
})

test_that("GPU equals CPU for JMI3 and JIM with count tables beyond shared memory, dense and sparse", {
  skip_unless_gpu()
  # 250 bins: JIM's two tables of 250 x 250 cells and JMI3's pairs of features do not fit in
  # shared memory, so the kernels count in global memory.
  big <- c(data_big(p = 600), k = 6, nbins = 250)
  sparse <- big
  sparse$x[abs(sparse$x) < 1] <- 0
  sparse$x <- as_dgc(sparse$x)
  for (case in list(big, sparse)) {
    for (setting in family_settings()[c("jmi3", "jim")]) expect_family_gpu_equals_cpu(case, setting)
  }
})

test_that("several GPUs give the result of one for every criterion", {
  skip_unless_gpu()
  skip_if_not(nrow(fsgpu::backend_info()$devices) >= 2, "fewer than two GPUs")
  for (case in jmi_cases()[c("informative", "sparse")]) {
    for (setting in family_settings()) expect_family_gpu_equals_cpu(case, setting, devices = c(0, 1))
  }
})

test_that("cmi_scores and jmi_scores on the GPU equal the CPU bitwise", {
  skip_unless_gpu()
  for (case in jmi_cases()[c("informative", "ties_categorical", "many_classes", "mixed_df", "sparse")]) {
    n <- nrow(case$x)
    zs <- list(feature = colnames(case$x)[2], index = ncol(case$x),
               double = with_seed(42, rnorm(n)), factor = factor(rep_len(c("a", "b", "c"), n)))
    for (z in zs) {
      for (scorer in list(cmi_scores, jmi_scores)) {
        cpu <- scorer(case$x, case$y, z, nbins = case$nbins, backend = "cpu")
        gpu <- scorer(case$x, case$y, z, nbins = case$nbins, backend = "gpu")
        expect_identical(attr(gpu, "backend"), "gpu")
        expect_identical(attr(gpu, "run")$name, "gpu")
        attributes(gpu)[c("backend", "run")] <- attributes(cpu)[c("backend", "run")]
        expect_identical(gpu, cpu)
      }
    }
  }
})

test_that("scorers stream through a small GPU memory budget", {
  skip_unless_gpu()
  case <- jmi_cases()$sparse
  with_gpu_memory_budget(20000, {
    for (scorer in list(cmi_scores, jmi_scores)) {
      cpu <- scorer(case$x, case$y, "g22", nbins = case$nbins, backend = "cpu")
      gpu <- scorer(case$x, case$y, "g22", nbins = case$nbins, backend = "gpu")
      expect_identical(gpu[[3]], cpu[[3]])
    }
  })
})

test_that("weights on the GPU are an error", {
  skip_unless_gpu()
  case <- jmi_cases()$informative
  for (method in c("jmi", "cmim")) {
    expect_error(select_features(case$x, case$y, k = 3, method = method, weights = rep(1, nrow(case$x)),
                                 backend = "gpu"), "weights")
  }
})
