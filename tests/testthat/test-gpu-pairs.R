# mi_pairs() and mi_matrix() on the GPU against their CPU twins: every value, order and
# column must be bitwise identical. Skips without a usable GPU (helper-gpu-pairs.R, shared with
# test-gpu-mi_pairs-tensor.R).

# Categorical features with `levels` levels each (a vector: per feature), `classes` classes of
# unequal sizes, and exact ties across tiles: copies of informative features far apart.
gpu_pairs_categorical <- function(n, p, levels, classes, seed) {
  with_seed(seed, {
    sizes <- seq_len(classes)  # class c about c times as frequent as class 1
    y <- sample(seq_len(classes), n, replace = TRUE, prob = sizes)
    levels <- rep_len(levels, p)
    x <- vapply(levels, function(l) sample(0:(l - 1L), n, replace = TRUE), integer(n))
    x[, 2] <- (y * 7L + sample(0:1, n, replace = TRUE)) %% levels[2]
    x[, 5] <- (y + x[, 9]) %% levels[5]
    x[, 3] <- 0L
    x[, p] <- x[, 2]                 # a copy in the last tile
    x[, min(p - 1L, 70L)] <- x[, 5]  # a copy in the second tile
    storage.mode(x) <- "integer"
    list(x = named(x), y = paste0("c", y), nbins = NULL)
  })
}

# Numeric features (binned), some shifted by class, a constant and a copy.
gpu_pairs_numeric <- function(n, p, classes, seed, nbins = 10) {
  with_seed(seed, {
    y <- sample(seq_len(classes), n, replace = TRUE, prob = rev(seq_len(classes)))
    x <- matrix(rnorm(n * p), n, p)
    hit <- c(1, 4, 66, p)
    x[, hit] <- x[, hit] + outer(y, c(0.5, 1, 0.3, 0.8))
    x[, 10] <- 1.5
    x[, min(130, p - 1)] <- x[, 4]
    list(x = named(x), y = y, nbins = nbins)
  })
}

gpu_pairs_cases <- function() {
  list(
    binary_67 = gpu_pairs_categorical(67, 150, 2, 2, seed = 81),
    ternary_1100 = gpu_pairs_categorical(1100, 300, 3, 3, seed = 82),
    ten_1030 = gpu_pairs_categorical(1030, 150, 10, 4, seed = 83),
    forty_67 = gpu_pairs_categorical(67, 90, 40, 5, seed = 84),
    forty_1200 = gpu_pairs_categorical(1200, 100, 40, 5, seed = 85),
    mixed_levels_300 = gpu_pairs_categorical(300, 140, c(2, 3, 10, 40, 64, 5), 3, seed = 86),
    whole_words_160 = c(list(y = rep(c("a", "b", "c"), c(32, 64, 64))),
                        gpu_pairs_categorical(160, 80, 4, 2, seed = 87)[c("x", "nbins")]),
    numeric_1050 = gpu_pairs_numeric(1050, 150, 5, seed = 88),
    numeric_67 = gpu_pairs_numeric(67, 140, 2, seed = 89)
  )
}

test_that("GPU pairs equal the CPU's: all pairs, top, threshold, both measures", {
  skip_unless_gpu_pairs()
  for (name in names(cases <- gpu_pairs_cases())) {
    case <- cases[[name]]
    for (by in c("joint", "interaction")) {
      info <- paste(name, by)
      expect_pairs_gpu_equals_cpu(case, by = by, output = "matrix", info = info)
      cpu <- expect_pairs_gpu_equals_cpu(case, by = by, top = 100, p_adjust = "BH", info = info)
      expect_pairs_gpu_equals_cpu(case, by = by, top = 1, info = info)
      col <- if (by == "joint") "mi_joint" else "interaction"
      expect_pairs_gpu_equals_cpu(case, by = by, threshold = cpu[[col]][60], info = info)
      expect_pairs_gpu_equals_cpu(case, by = by, threshold = cpu[[col]][30], top = 10, info = info)
    }
  }
})

test_that("GPU pairs equal the CPU's with `with`, across tiles", {
  skip_unless_gpu_pairs()
  cases <- gpu_pairs_cases()
  for (name in c("binary_67", "ternary_1100", "forty_67", "numeric_1050")) {
    case <- cases[[name]]
    p <- ncol(case$x)
    for (w in list(1L, c(64L, 65L), c(p, 2L, 70L, 129L), seq(1, p, by = 3))) {
      w <- w[w <= p]
      for (by in c("joint", "interaction")) {
        info <- paste(name, by, paste(w, collapse = ","))
        expect_pairs_gpu_equals_cpu(case, with = w, by = by, top = 500, info = info)
        expect_pairs_gpu_equals_cpu(case, with = colnames(case$x)[w], by = by, top = 7, info = info)
        cpu <- pairs_on("cpu", case, with = w, by = by, top = 50)
        expect_pairs_gpu_equals_cpu(case, with = w, by = by, threshold = cpu[[if (by == "joint") "mi_joint"
                                                                              else "interaction"]][50], info = info)
      }
    }
  }
})

test_that("GPU mi_matrix equals the CPU's", {
  skip_unless_gpu_pairs()
  cases <- gpu_pairs_cases()
  for (name in names(cases)) {
    case <- cases[[name]]
    gpu <- mi_matrix(case$x, nbins = case$nbins, backend = "gpu")
    expect_identical(attr(gpu, "backend"), "gpu")
    expect_identical(strip_attributes(gpu), strip_attributes(mi_matrix(case$x, nbins = case$nbins, backend = "cpu")),
                     info = name)
  }
  case <- cases$numeric_1050
  expect_identical(strip_attributes(mi_matrix(case$x, features = c(150, 3, 64, 65), nbins = 10, backend = "gpu")),
                   strip_attributes(mi_matrix(case$x, features = c(150, 3, 64, 65), nbins = 10, backend = "cpu")))
  expect_identical(mi_network(case$x, "aracne", output = "matrix", nbins = 10, backend = "gpu"),
                   mi_network(case$x, "aracne", output = "matrix", nbins = 10, backend = "cpu"))
})

test_that("GPU mi_matrix equals the CPU's with infotheo's estimators", {
  skip_unless_gpu_pairs()
  cases <- gpu_pairs_cases()
  for (name in names(cases)) {
    case <- cases[[name]]
    for (estimator in c("mm", "sg")) {
      gpu <- mi_matrix(case$x, nbins = case$nbins, backend = "gpu", estimator = estimator)
      expect_identical(attr(gpu, "backend"), "gpu")
      expect_identical(strip_attributes(gpu),
                       strip_attributes(mi_matrix(case$x, nbins = case$nbins, backend = "cpu", estimator = estimator)),
                       info = paste(name, estimator))
    }
  }
  # shrink has no GPU form: an error when asked for, the CPU when chosen automatically.
  case <- cases[[1]]
  expect_error(mi_matrix(case$x, nbins = case$nbins, backend = "gpu", estimator = "shrink"), "runs on the CPU only")
  auto <- mi_matrix(case$x, nbins = case$nbins, backend = "auto", estimator = "shrink")
  expect_identical(attr(auto, "backend"), "cpu")
  expect_identical(strip_attributes(auto),
                   strip_attributes(mi_matrix(case$x, nbins = case$nbins, backend = "cpu", estimator = "shrink")))
})

test_that("GPU equals CPU on sparse input, and sparse equals dense", {
  skip_unless_gpu_pairs()
  sp <- data_sparse(n = 1000, p = 130, seed = 90)
  case <- list(x = sp$x, y = sp$y, nbins = 10)
  dense <- list(x = as.matrix(sp$x), y = sp$y, nbins = 10)
  for (by in c("joint", "interaction")) {
    expect_pairs_gpu_equals_cpu(case, by = by, output = "matrix")
    expect_pairs_gpu_equals_cpu(case, by = by, top = 200)
    expect_pairs_gpu_equals_cpu(case, by = by, with = c(5, 22, 41, 100), top = 1000)
    expect_identical(pairs_frame(pairs_on("gpu", case, by = by, top = 200)),
                     pairs_frame(pairs_on("gpu", dense, by = by, top = 200)))
  }
  expect_identical(strip_attributes(mi_matrix(sp$x, nbins = 10, backend = "gpu")),
                   strip_attributes(mi_matrix(sp$x, nbins = 10, backend = "cpu")))
})

test_that("GPU equals CPU on every visible device set and in nats", {
  skip_unless_gpu_pairs()
  case <- gpu_pairs_cases()$ternary_1100
  ids <- fsgpu::backend_info()$devices$id
  expect_pairs_gpu_equals_cpu(case, top = 300, devices = ids)
  expect_pairs_gpu_equals_cpu(case, output = "matrix", by = "interaction", devices = ids)
  for (id in ids) expect_pairs_gpu_equals_cpu(case, top = 300, devices = id)
  expect_pairs_gpu_equals_cpu(case, top = 300, units = "nats", by = "interaction")
  expect_identical(strip_attributes(mi_matrix(case$x, backend = "gpu", devices = ids)),
                   strip_attributes(mi_matrix(case$x, backend = "cpu")))
})

test_that("GPU on a SummarizedExperiment equals the CPU", {
  skip_unless_gpu_pairs()
  skip_if_not_installed("SummarizedExperiment")
  case <- gpu_pairs_cases()$ten_1030
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)), colData = data.frame(type = case$y))
  expect_identical(pairs_frame(mi_pairs(se, class = "type", top = 50, backend = "gpu")),
                   pairs_frame(mi_pairs(case$x, case$y, top = 50, backend = "cpu")))
  expect_identical(strip_attributes(mi_matrix(se, backend = "gpu")),
                   strip_attributes(mi_matrix(case$x, backend = "cpu")))
})

test_that("features of more than 64 levels are refused by the GPU pair search", {
  skip_unless_gpu_pairs()
  case <- gpu_pairs_categorical(400, 70, 4, 3, seed = 91)
  case$x[, 12] <- with_seed(93, sample(rep_len(0:64, 400)))  # 65 levels, kept as categories
  expect_error(pairs_on("gpu", case, top = 10, categorical = TRUE), "up to 64 levels, not 65")
  expect_error(pairs_on("gpu", case, output = "matrix", categorical = TRUE), "up to 64 levels")
  expect_error(mi_matrix(case$x, backend = "gpu", categorical = TRUE), "up to 64 levels")
  # The CPU takes them.
  expect_identical(nrow(pairs_on("cpu", case, top = 10, categorical = TRUE)), 10L)
  # Numeric data with more than 64 bins likewise; 64 levels are fine.
  num <- gpu_pairs_numeric(500, 80, 3, seed = 92, nbins = 100)
  expect_error(pairs_on("gpu", num, top = 10), "up to 64 levels")
  num$nbins <- 64
  expect_pairs_gpu_equals_cpu(num, top = 100)
})

test_that("backend = 'auto' takes the GPU, or the CPU for features of more than 64 levels", {
  skip_unless_gpu_pairs()
  old <- options(fsgpu.gpu_min_work = 0)  # any job is large enough for the GPU
  on.exit(options(old))
  case <- gpu_pairs_categorical(400, 70, 4, 3, seed = 94)
  auto <- pairs_on("auto", case, top = 50)
  expect_identical(attr(auto, "backend"), "gpu")
  expect_identical(pairs_frame(auto), pairs_frame(pairs_on("cpu", case, top = 50)))
  expect_identical(attr(mi_matrix(case$x, backend = "auto"), "backend"), "gpu")
  case$x[, 12] <- with_seed(95, sample(rep_len(0:64, 400)))  # 65 levels, kept as categories
  auto <- pairs_on("auto", case, top = 50, categorical = TRUE)
  expect_identical(attr(auto, "backend"), "cpu")
  expect_identical(pairs_frame(auto), pairs_frame(pairs_on("cpu", case, top = 50, categorical = TRUE)))
  m <- mi_matrix(case$x, backend = "auto", categorical = TRUE)
  expect_identical(attr(m, "backend"), "cpu")
  expect_identical(strip_attributes(m), strip_attributes(mi_matrix(case$x, backend = "cpu", categorical = TRUE)))
  expect_identical(attr(pairs_on("auto", case, output = "matrix", categorical = TRUE), "backend"), "cpu")
})
