# find_interactions() on the GPU against the CPU: gains, tuples, contrast gains and p-values
# identical bit for bit. Skips without a usable GPU.

skip_unless_gpu_interactions <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

gpu_interaction_case <- function(n, p, m, classes, seed) {
  with_seed(seed, {
    x <- matrix(sample(0:(m - 1), n * p, replace = TRUE), n, p, dimnames = list(NULL, paste0("v", 1:p)))
    y <- (x[, 2] + x[, p - 1]) %% classes
    y[sample(n, n %/% 3)] <- sample(0:(classes - 1), n %/% 3, replace = TRUE)
    x[, p] <- x[, 2]  # a copy across tiles: exact ties
    list(x = x, y = factor(y), m = m)
  })
}

expect_same_search <- function(cpu, gpu) {
  expect_identical(gpu$backend, "gpu")
  expect_identical(cpu$backend, "cpu")
  expect_identical(gpu$scores, cpu$scores)
  expect_identical(gpu$contrast_gain, cpu$contrast_gain)
  expect_identical(gpu$tuples, cpu$tuples)
}

test_that("pairs and triples: the GPU equals the CPU for 2-4 levels and 2-4 classes", {
  skip_unless_gpu_interactions()
  cases <- list(list(n = 1024, p = 300, m = 3, cl = 2), list(n = 333, p = 150, m = 2, cl = 2),
                list(n = 517, p = 130, m = 4, cl = 3), list(n = 200, p = 90, m = 3, cl = 4),
                list(n = 64, p = 70, m = 2, cl = 3))
  for (case in cases) {
    d <- gpu_interaction_case(case$n, case$p, case$m, case$cl, seed = case$n)
    for (k in 2:3) {
      p <- if (k == 3) min(case$p, 120) else case$p
      args <- list(d$x[, seq_len(p)], d$y, dimensions = k, levels = d$m, return_tuples = TRUE, seed = 1, n_contrast = 40)
      set.seed(3)
      cpu <- do.call(find_interactions, c(args, backend = "cpu", threads = 2))
      set.seed(3)
      gpu <- do.call(find_interactions, c(args, backend = "gpu"))
      expect_same_search(cpu, gpu)
    }
  }
})

test_that("numeric data over several discretizations, and two devices, give the CPU's result", {
  skip_unless_gpu_interactions()
  set.seed(4)
  x <- matrix(rnorm(700 * 200), 700, 200)
  y <- factor(x[, 10] * x[, 150] > 0)
  for (k in 2:3) {
    set.seed(5)
    cpu <- find_interactions(x, y, dimensions = k, divisions = if (k == 2) 2 else 1, discretizations = 3,
                             top = 20, backend = "cpu")
    set.seed(5)
    gpu <- find_interactions(x, y, dimensions = k, divisions = if (k == 2) 2 else 1, discretizations = 3,
                             top = 20, backend = "gpu")
    expect_same_search(cpu, gpu)
    expect_true(all(c("V10", "V150") %in% gpu$relevant))
  }
  devices <- fsgpu::backend_info()$devices$id
  set.seed(5)
  twice <- find_interactions(x, y, dimensions = 2, top = 20, backend = "gpu", devices = devices)
  set.seed(5)
  cpu <- find_interactions(x, y, dimensions = 2, top = 20, backend = "cpu")
  expect_identical(twice$scores, cpu$scores)
})

test_that("what the GPU cannot take falls back to the CPU under auto, and is an error under gpu", {
  skip_unless_gpu_interactions()
  d <- gpu_interaction_case(100, 12, 3, 2, seed = 8)
  d$x[3, 4] <- NA
  expect_error(find_interactions(d$x, d$y, levels = 3, backend = "gpu"), "missing")
  old <- options(fsgpu.gpu_min_work = 0)
  on.exit(options(old))
  res <- find_interactions(d$x, d$y, levels = 3)
  expect_identical(res$backend, "cpu")
  expect_match(res$why_cpu, "missing")
  expect_error(find_interactions(d$x[, 1:6], d$y, dimensions = 4, levels = 3, backend = "gpu"), "missing")
  expect_identical(find_interactions(d$x[-3, 1:6], d$y[-3], dimensions = 4, levels = 3, backend = "gpu")$backend, "gpu")
})

test_that("the mice genotypes give the CPU's answer on the GPU", {
  skip_unless_gpu_interactions()
  dir <- mice_data_dir()
  skip_if(is.null(dir), "mice data not found")
  geno <- read_plink(file.path(dir, "mice"), packed = TRUE)
  pheno <- utils::read.delim(gzfile(file.path(dir, "mice_pheno.tsv.gz")))
  colour <- pheno$CoatColour[match(geno$genotypes$sample_names, pheno$IID)]
  y <- factor(ifelse(colour == "black", "black", "other"))
  set.seed(1)
  gpu <- find_interactions(geno$genotypes, y, dimensions = 2, top = 10, backend = "gpu")
  set.seed(1)
  cpu <- find_interactions(geno$genotypes, y, dimensions = 2, top = 10, backend = "cpu")
  expect_same_search(cpu, gpu)
})

test_that("interesting tuples (threshold =): the GPU lists the CPU's rows bit for bit", {
  skip_unless_gpu_interactions()
  cases <- list(list(n = 1024, p = 300, m = 3, cl = 2), list(n = 333, p = 150, m = 2, cl = 2),
                list(n = 517, p = 130, m = 4, cl = 3), list(n = 200, p = 90, m = 3, cl = 4))
  for (case in cases) {
    d <- gpu_interaction_case(case$n, case$p, case$m, case$cl, seed = case$n)
    for (k in 2:3) {
      p <- if (k == 3) min(case$p, 120) else case$p
      # Every tuple (past the device's first buffer: a batch runs again), a threshold, and the
      # tuples of a few interesting variables (with at least one, or only them).
      for (filter in list(list(threshold = 0), list(threshold = 5),
                          list(threshold = 2, interesting_vars = c(2, 7, p - 1)),
                          list(threshold = 0, interesting_vars = seq(1, p, by = 3), require_all_vars = TRUE))) {
        args <- c(list(d$x[, seq_len(p)], d$y, dimensions = k, levels = d$m, seed = 1, n_contrast = 40), filter)
        set.seed(3)
        cpu <- do.call(find_interactions, c(args, backend = "cpu", threads = 2))
        set.seed(3)
        gpu <- do.call(find_interactions, c(args, backend = "gpu"))
        info <- sprintf("n = %d, m = %d, %d classes, k = %d, threshold %g, %d interesting", case$n, case$m, case$cl, k,
                        filter$threshold, length(filter$interesting_vars))
        expect_identical(gpu$backend, "gpu", info = info)
        expect_identical(gpu$interesting_tuples, cpu$interesting_tuples, info = info)
        expect_identical(gpu$scores, cpu$scores, info = info)
        if (filter$threshold == 0 && is.null(filter$interesting_vars))
          expect_equal(nrow(gpu$interesting_tuples), k * choose(p, k), info = info)
      }
    }
  }
})

test_that("interesting tuples over several discretizations on the GPU, and the limit on rows", {
  skip_unless_gpu_interactions()
  set.seed(4)
  x <- matrix(rnorm(700 * 200), 700, 200)
  y <- factor(x[, 10] * x[, 150] > 0)
  for (k in 2:3) {
    args <- list(x[, seq_len(if (k == 2) 200 else 90)], y, dimensions = k, divisions = if (k == 2) 2 else 1,
                 discretizations = 3, threshold = 4, seed = 8)
    set.seed(5)
    cpu <- do.call(find_interactions, c(args, backend = "cpu"))
    set.seed(5)
    gpu <- do.call(find_interactions, c(args, backend = "gpu"))
    expect_identical(gpu$interesting_tuples, cpu$interesting_tuples)
    expect_true(any(gpu$interesting_tuples$discretization > 1))
  }
  old <- options(fsgpu.max_interesting_tuples = 1000)
  on.exit(options(old))
  expect_error(find_interactions(x, y, dimensions = 2, threshold = 1e-6, backend = "gpu"), "exceed the threshold")
})
