# mi_pairs() on the GPU's binary tensor cores (the default kernel on sm_80 and later) against the
# CPU, bit for bit: 2 to 64 levels, classes padded to whole 256-sample chunks (sample counts
# that are no multiple of 32, 128 or 256), constant features, features of fewer levels than the
# widest, ties cut by top, and the same errors for missing values. Skips without a usable GPU.
# The comparison and skip are helper-gpu-pairs.R's, shared with test-gpu-pairs.R.

# Categorical codes (kept as categories: categorical = TRUE): `levels` levels in most features, half as many in every fifth, one constant
# feature, a copy of feature 2 in the last column (its pairs tie with feature 2's), and a class
# that follows features 1 and 4.
tensor_pairs_case <- function(n, p, levels, classes, seed) {
  with_seed(seed, {
    widths <- ifelse(seq_len(p) %% 5 == 0, max(1L, levels %/% 2L), levels)
    x <- vapply(widths, function(l) sample(0:(l - 1L), n, replace = TRUE), integer(n))
    x[, 3] <- 7L
    x[, p] <- x[, 2]
    y <- (x[, 1] + 2L * x[, 4] + sample(0:1, n, replace = TRUE, prob = c(3, 1))) %% classes
    y[seq_len(classes)] <- seq_len(classes) - 1L
    storage.mode(x) <- "integer"
    list(x = named(x), y = paste0("k", y), categorical = TRUE)
  })
}

test_that("tensor-core pairs equal the CPU's for 2 to 64 levels and odd sample counts", {
  skip_unless_gpu_pairs()
  shapes <- list(c(n = 37, p = 150, levels = 2, classes = 2), c(n = 383, p = 140, levels = 3, classes = 3),
                 c(n = 1001, p = 130, levels = 10, classes = 3), c(n = 257, p = 100, levels = 16, classes = 7),
                 c(n = 611, p = 80, levels = 33, classes = 4), c(n = 1290, p = 70, levels = 64, classes = 2))
  for (s in shapes) {
    case <- tensor_pairs_case(s[["n"]], s[["p"]], s[["levels"]], s[["classes"]], seed = 100 + s[["levels"]])
    info <- paste(names(s), s, collapse = " ")
    for (by in c("joint", "interaction")) {
      expect_pairs_gpu_equals_cpu(case, by = by, output = "matrix", info = info)
      cpu <- expect_pairs_gpu_equals_cpu(case, by = by, top = 250, info = info)
      expect_pairs_gpu_equals_cpu(case, by = by, top = 3, info = info)
      expect_pairs_gpu_equals_cpu(case, by = by, with = c(2, s[["p"]], 65), top = 40, info = info)
      col <- if (by == "joint") "mi_joint" else "interaction"
      expect_pairs_gpu_equals_cpu(case, by = by, threshold = cpu[[col]][100], info = info)
    }
    expect_identical(strip_attributes(mi_matrix(case$x, backend = "gpu", categorical = TRUE)),
                     strip_attributes(mi_matrix(case$x, backend = "cpu", categorical = TRUE)), info = info)
  }
})

test_that("tensor-core pairs keep ties in index order and refuse missing values as the CPU does", {
  skip_unless_gpu_pairs()
  case <- tensor_pairs_case(999, 120, 10, 3, seed = 120)
  gpu <- mi_pairs(case$x, case$y, backend = "gpu", top = 500)
  # Feature 120 copies feature 2: their pairs with any third feature tie and come in index order.
  tied <- gpu[gpu$index1 == 2 | gpu$index2 == 120, ]
  expect_gt(nrow(tied), 0)
  expect_identical(pairs_frame(gpu), pairs_frame(mi_pairs(case$x, case$y, backend = "cpu", top = 500)))
  x_na <- case$x
  x_na[17, 6] <- NA
  cpu_error <- tryCatch(mi_pairs(x_na, case$y, backend = "cpu", top = 5), error = conditionMessage)
  expect_error(mi_pairs(x_na, case$y, backend = "gpu", top = 5), cpu_error, fixed = TRUE)
})
