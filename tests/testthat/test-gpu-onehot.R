# Dense features of at most 16 levels, 16 or more a multiprocessor, are counted from bit planes
# on the GPU's tensor cores (src/cuda/joint_counts.cu plane_counts_kernel), the others with
# shared-memory atomics: selections and scores must equal the CPU's bitwise either way, with
# the input checks made by the C++ encoder.

skip_if_no_gpu <- function() {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
}

# Integer codes 0..levels-1, the first five features following the class.
onehot_codes <- function(n, p, levels, classes, seed) {
  with_seed(seed, {
    y <- factor(sample(seq_len(classes), n, replace = TRUE))
    x <- matrix(sample.int(levels, n * p, replace = TRUE) - 1L, n, p)
    for (f in 1:5) {
      keep <- runif(n) < 0.7
      x[keep, f] <- (as.integer(y[keep]) * (f + 1L)) %% levels
    }
    list(x = x, y = y)
  })
}

test_that("GPU equals CPU on dense codes of 2 to 32 levels, many features and few", {
  skip_if_no_gpu()
  shapes <- list(c(n = 700, p = 2500, levels = 16, classes = 7), c(n = 3001, p = 40, levels = 32, classes = 5),
                 c(n = 257, p = 300, levels = 8, classes = 3), c(n = 5000, p = 12, levels = 2, classes = 2))
  for (s in shapes) {
    d <- onehot_codes(s[["n"]], s[["p"]], s[["levels"]], s[["classes"]], seed = s[["n"]])
    for (method in c("jmi", "mrmr", "cmim", "disr", "cmi")) {
      gpu <- select_features(d$x, d$y, k = 8, method = method, backend = "gpu", categorical = TRUE)
      cpu <- select_features(d$x, d$y, k = 8, method = method, backend = "cpu", categorical = TRUE)
      expect_identical(gpu$selection, cpu$selection)
    }
    expect_identical(mi_scores(d$x, d$y, backend = "gpu", categorical = TRUE)$mi,
                     mi_scores(d$x, d$y, backend = "cpu", categorical = TRUE)$mi)
  }
})
