# find_interactions()'s input path (every kind of x read in place by the engine, checked in one C++
# pass) and the CPU engine's fused pair kernel: the same results from every kind of input and
# thread count, errors that name the variable and object, pairs against the definition.

input_search <- function(x, y, threads = 1, ...) {
  set.seed(11)  # the contrast variables' sources
  find_interactions(x, y, seed = 5, backend = "cpu", threads = threads, quiet = TRUE, ...)
}

same_search <- function(a, b) {
  expect_identical(a$scores, b$scores)
  expect_identical(a$contrast_gain, b$contrast_gain)
}

input_data <- function(missing = FALSE) {
  with_seed(21, {
    n <- 130
    codes <- matrix(sample(0:2, n * 12, replace = TRUE), n, 12,
                    dimnames = list(paste0("o", seq_len(n)), paste0("v", 1:12)))
    y <- factor(xor(codes[, 2] > 0, codes[, 5] > 1))
    values <- matrix(rnorm(n * 12), n, 12, dimnames = dimnames(codes))
    values[, 3] <- values[, 3] + as.integer(y)
    if (missing) {
      codes[sample(length(codes), 40)] <- NA
      values[sample(length(values), 40)] <- NA
    }
    list(codes = codes, values = values, y = y)
  })
}

test_that("codes give the same search from every kind of input and thread count", {
  for (missing in c(FALSE, TRUE)) {
    d <- input_data(missing)
    for (k in 1:3) {
      ref <- input_search(d$codes, d$y, dimensions = k)
      same_search(input_search(d$codes, d$y, threads = 2, dimensions = k), ref)
      same_search(input_search(d$codes * 1, d$y, dimensions = k, levels = 3), ref)
      same_search(input_search(as.data.frame(d$codes), d$y, dimensions = k), ref)
      if (!missing) {
        same_search(input_search(Matrix::Matrix(d$codes * 1, sparse = TRUE), d$y, dimensions = k, levels = 3), ref)
      }
    }
    lev <- input_search(d$codes, d$y, dimensions = 2, missing = "level")
    same_search(input_search(as.data.frame(d$codes), d$y, dimensions = 2, missing = "level"), lev)
  }
  d <- input_data()
  logical <- d$codes > 0
  same_search(input_search(logical, d$y, dimensions = 2), input_search(logical * 1L, d$y, dimensions = 2))
})

test_that("numbers give the same search from every kind of input and thread count", {
  for (missing in c(FALSE, TRUE)) {
    d <- input_data(missing)
    for (k in 1:2) {
      ref <- input_search(d$values, d$y, dimensions = k, divisions = 2, discretizations = 2)
      same_search(input_search(d$values, d$y, threads = 2, dimensions = k, divisions = 2, discretizations = 2), ref)
      same_search(input_search(as.data.frame(d$values), d$y, dimensions = k, divisions = 2, discretizations = 2), ref)
    }
  }
  d <- input_data()
  sparse <- d$values
  sparse[abs(sparse) < 0.8] <- 0
  same_search(input_search(Matrix::Matrix(sparse, sparse = TRUE), d$y, dimensions = 2),
              input_search(sparse, d$y, dimensions = 2))
  # A data frame of integer and double columns is numbers, as as.matrix() makes it.
  mixed <- data.frame(d$values[, 1:6], d$codes[, 7:12])
  same_search(input_search(mixed, d$y, dimensions = 2), input_search(as.matrix(mixed), d$y, dimensions = 2))
})

test_that("a SummarizedExperiment's assay is read in place, dense, sparse or delayed", {
  skip_if_not_installed("SummarizedExperiment")
  d <- input_data(missing = TRUE)
  values <- d$values
  values[is.na(values)] <- 0
  se <- SummarizedExperiment::SummarizedExperiment(
    list(codes = t(d$codes), values = t(values), sparse = Matrix::Matrix(t(d$codes * 1), sparse = TRUE)),
    colData = data.frame(class = d$y))
  run_se <- function(assay, ...) {
    set.seed(11)
    find_interactions(se, "class", assay = assay, seed = 5, backend = "cpu", threads = 2, quiet = TRUE, ...)
  }
  same_search(run_se("codes", dimensions = 2), input_search(d$codes, d$y, dimensions = 2))
  same_search(run_se("values", dimensions = 2), input_search(values, d$y, dimensions = 2))
  same_search(run_se("sparse", dimensions = 2, levels = 3), input_search(d$codes, d$y, dimensions = 2, levels = 3))
  skip_if_not_installed("DelayedArray")
  delayed <- SummarizedExperiment::SummarizedExperiment(
    list(codes = DelayedArray::DelayedArray(t(d$codes)), values = DelayedArray::DelayedArray(t(values))),
    colData = data.frame(class = d$y))
  run_delayed <- function(assay, ...) {
    set.seed(11)
    find_interactions(delayed, "class", assay = assay, seed = 5, backend = "cpu", threads = 2, quiet = TRUE, ...)
  }
  same_search(run_delayed("codes", dimensions = 2), input_search(d$codes, d$y, dimensions = 2))
  same_search(run_delayed("values", dimensions = 2), input_search(values, d$y, dimensions = 2))
})

test_that("packed PLINK genotypes give the integer matrix's search", {
  d <- input_data(missing = TRUE)
  dir <- tempfile("plink")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  packed <- read_plink(write_plink(file.path(dir, "toy"), d$codes), packed = TRUE)$genotypes
  for (k in 1:2)
    for (missing in c("exclude", "level")) {
      set.seed(11)
      a <- find_interactions(packed, d$y, dimensions = k, missing = missing, backend = "cpu", threads = 1, quiet = TRUE)
      b <- input_search(d$codes, d$y, dimensions = k, missing = missing, levels = 3)
      expect_identical(a$scores$gain, b$scores$gain)
      expect_identical(a$contrast_gain, b$contrast_gain)
      set.seed(11)
      expect_identical(a$scores, find_interactions(packed, d$y, dimensions = k, missing = missing, backend = "cpu",
                                                   threads = 2, quiet = TRUE)$scores)
    }
})

test_that("bad values get errors naming the variable and the object", {
  d <- input_data()
  x <- d$values
  x[7, 4] <- Inf
  expect_error(input_search(x, d$y), "infinite values \\(variable 'v4', object 7\\)")
  expect_error(input_search(as.data.frame(x), d$y), "infinite values \\(variable 'v4', object 7\\)")
  expect_error(input_search(Matrix::Matrix(x, sparse = TRUE), d$y), "infinite values \\(variable 'v4', object 7\\)")
  codes <- d$codes
  codes[9, 6] <- -1L
  codes[3, 8] <- -2L
  expect_error(input_search(codes, d$y), "codes must be 0 or more \\(variable 'v6', object 9: -1\\)")
  expect_error(input_search(as.data.frame(codes), d$y), "variable 'v6', object 9")
  fractions <- d$codes * 1
  fractions[2, 10] <- 1.5
  expect_error(input_search(fractions, d$y, levels = 3), "fractions \\(variable 'v10', object 2: 1.5\\)")
  expect_error(input_search(d$codes, d$y, levels = 2), "x has the code 2, but levels = 2")
  expect_error(input_search(matrix(letters[1:10], 5), factor(1:5)), "numeric")
  expect_error(input_search(data.frame(a = 1:5, b = letters[1:5]), factor(1:5)), "non-numeric columns: 'b'")
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(list(values = t(x)), colData = data.frame(class = d$y))
  expect_error(find_interactions(se, "class", backend = "cpu", quiet = TRUE),
               "infinite values \\(variable 'v4', object 7\\)")
})

test_that("the pass that builds the bit planes finds bad values anywhere, the first in column order", {
  # 300 variables: the workers take them in chunks in any order; the error still names the first.
  codes <- with_seed(31, matrix(sample(0:2, 90 * 300, replace = TRUE), 90, 300,
                                dimnames = list(NULL, paste0("v", 1:300))))
  y <- factor(rep(1:2, 45))
  codes[sample(length(codes), 50)] <- NA  # missing values are no problem
  search <- function(x, threads = 2, ...) input_search(x, y, threads = threads, contrast = FALSE, ...)
  for (threads in 1:2) {
    bad <- codes
    bad[90, 300] <- -3L  # the last object of the last variable
    expect_error(search(bad, threads), "codes must be 0 or more \\(variable 'v300', object 90: -3\\)")
    bad[1, 1] <- -1L  # the first of the first now comes first
    expect_error(search(bad, threads), "\\(variable 'v1', object 1: -1\\)")
    bad <- codes
    bad[60, 290] <- -1L
    bad[5, 150] <- -2L
    bad[7, 150] <- -4L
    expect_error(search(bad, threads, dimensions = 2), "\\(variable 'v150', object 5: -2\\)")
    expect_error(search(as.data.frame(bad), threads), "\\(variable 'v150', object 5: -2\\)")
    # Doubles as codes: fractions and infinite values, whichever comes first in the column.
    real <- codes * 1
    real[90, 300] <- Inf
    expect_error(search(real, threads, levels = 3), "infinite values \\(variable 'v300', object 90\\)")
    real[89, 300] <- 0.5
    expect_error(search(real, threads, levels = 3), "fractions \\(variable 'v300', object 89: 0.5\\)")
    # Numbers: infinite values only.
    values <- with_seed(32, matrix(rnorm(90 * 300), 90, 300, dimnames = dimnames(codes)))
    values[90, 300] <- -Inf
    values[3, 299] <- NaN
    expect_error(search(values, threads), "infinite values \\(variable 'v300', object 90\\)")
    expect_error(search(as.data.frame(values), threads, dimensions = 2), "variable 'v300', object 90")
  }
  # An object without a class is checked too.
  y_na <- y
  y_na[90] <- NA
  bad <- codes
  bad[90, 300] <- -1L
  expect_error(suppressMessages(input_search(bad, y_na, contrast = FALSE)), "variable 'v300', object 90")
  # Too many levels, and more than `levels`, found in the last column: the largest code is named.
  big <- codes
  big[90, 300] <- 16L
  expect_error(input_search(big, y, contrast = FALSE), "levels")
  big[90, 300] <- 5L
  big[1, 299] <- 4L
  expect_error(input_search(big, y, contrast = FALSE, levels = 3), "x has the code 5, but levels = 3")
  # A problem comes before the levels: as when x was checked first.
  big[2, 299] <- -1L
  expect_error(input_search(big, y, contrast = FALSE, levels = 3), "codes must be 0 or more \\(variable 'v299'")
})

test_that("codes whose levels only some variables show give the search of their levels given", {
  # The planes are built with the levels of 64 columns spread over x (here 0, 3, 6, ... of 200):
  # a code 3 in v2 alone, or missing values in v2 alone, make the search build them again.
  d <- with_seed(33, {
    x <- matrix(sample(0:2, 150 * 200, replace = TRUE), 150, 200,
                dimnames = list(paste0("o", 1:150), paste0("v", 1:200)))
    list(x = x, y = factor(xor(x[, 2] > 1, x[, 5] > 0)))
  })
  high <- d$x
  high[sample(150, 20), 2] <- 3L
  for (k in 1:2) {
    res <- input_search(high, d$y, dimensions = k)
    expect_identical(res$params$levels, 4L)
    same_search(res, input_search(high, d$y, dimensions = k, levels = 4))
  }
  gaps <- d$x
  gaps[sample(150, 10), 2] <- NA
  dir <- tempfile("plink")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  packed <- read_plink(write_plink(file.path(dir, "gaps"), gaps), packed = TRUE)$genotypes
  for (k in 1:2) {
    res <- input_search(gaps, d$y, dimensions = k, missing = "level")
    expect_identical(res$params$levels, 4L)
    set.seed(11)
    from_bed <- find_interactions(packed, d$y, dimensions = k, missing = "level", backend = "cpu", threads = 2,
                                  quiet = TRUE)
    expect_identical(res$scores$gain, from_bed$scores$gain)
    expect_identical(res$contrast_gain, from_bed$contrast_gain)
  }
})

pair_codes <- function(n, p, m, classes, seed, missing = 0) {
  with_seed(seed, {
    x <- matrix(sample(0:(m - 1), n * p, replace = TRUE), n, p, dimnames = list(NULL, paste0("v", 1:p)))
    y <- (x[, 1] + x[, 2]) %% classes
    y[sample(n, n %/% 4)] <- sample(0:(classes - 1), n %/% 4, replace = TRUE)
    if (missing > 0) x[sample(length(x), round(missing * length(x)))] <- NA
    list(x = x, y = factor(y))
  })
}

test_that("the pair kernel equals the definition for 2 to 4 levels and classes, with missing values", {
  for (case in list(list(m = 2, cl = 2), list(m = 3, cl = 2), list(m = 4, cl = 2), list(m = 3, cl = 3),
                    list(m = 2, cl = 4), list(m = 4, cl = 4), list(m = 5, cl = 2))) {
    d <- pair_codes(203, 6, case$m, case$cl, seed = case$m * 10 + case$cl, missing = 0.02)
    d$x[, 1:2] <- pair_codes(203, 2, case$m, case$cl, seed = 3)$x  # variables without NA
    d$x[, 6] <- d$x[, 2]  # a copy: its pairs tie with those of v2
    for (threads in 1:2) {
      res <- find_interactions(d$x, d$y, dimensions = 2, levels = case$m, contrast = FALSE, return_tuples = TRUE,
                               backend = "cpu", threads = threads, quiet = TRUE)
      expect_equal(res$scores$gain, ref_best_gains(d$x, d$y, 2, case$m), tolerance = 1e-8)
      for (v in seq_len(6)) {
        t <- c(res$scores$tuple_1[v], res$scores$tuple_2[v])
        expect_true(v %in% t)
        expect_equal(ref_tuple_gains(d$x, d$y, t, case$m)[match(v, t)], res$scores$gain[v], tolerance = 1e-8)
        if (v %in% 3:5) expect_false(6 %in% t)  # (2, v) ties with (v, 6): the first wins
      }
    }
  }
})

test_that("the pair kernel's wide popcount (16 words and more per class) equals the definition", {
  d <- pair_codes(2300, 5, 3, 2, seed = 8, missing = 0.001)
  d$x[, 1:3] <- pair_codes(2300, 3, 3, 2, seed = 9)$x
  for (threads in 1:2) {
    res <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, contrast = FALSE, backend = "cpu",
                             threads = threads, quiet = TRUE)
    expect_equal(res$scores$gain, ref_best_gains(d$x, d$y, 2, 3), tolerance = 1e-8)
  }
})

test_that("integer64 columns of a data frame are read as their values (codes), not their bits", {
  skip_if_not_installed("bit64")
  d <- input_data()
  big <- as.data.frame(d$codes)
  big$v2 <- bit64::as.integer64(big$v2)
  big$v5 <- bit64::as.integer64(big$v5)
  same_search(input_search(big, d$y, dimensions = 2), input_search(as.data.frame(d$codes), d$y, dimensions = 2))
  big$v5[3] <- bit64::as.integer64(-1)
  expect_error(input_search(big, d$y), "codes must be 0 or more \\(variable 'v5', object 3")
})

test_that("the C++ default names and Holm adjustment are R's, bit for bit", {
  expect_identical(fsgpu:::fsgpu_default_names("V", 10012L), paste0("V", seq_len(10012)))
  expect_identical(fsgpu:::fsgpu_default_names("V", 0L), character(0))
  # Made as read: by element, by subset, all at once, changed, saved and read back.
  lazy <- fsgpu:::fsgpu_default_names("V", 20)
  expect_identical(lazy[[13]], "V13")
  expect_identical(lazy[c(20, 2)], c("V20", "V2"))
  expect_identical(match("V7", lazy), 7L)
  expect_identical(sort(lazy), sort(paste0("V", 1:20)))
  lazy[3] <- "third"
  expect_identical(lazy[1:4], c("V1", "V2", "third", "V4"))
  file <- tempfile(fileext = ".rds")
  saveRDS(fsgpu:::fsgpu_default_names("V", 5), file)
  expect_identical(readRDS(file), paste0("V", 1:5))
  unlink(file)
  p <- with_seed(3, c(runif(500), rep(c(0, 0.02, 0.5, 1), 50), 1e-300)[sample(701)])
  expect_identical(fsgpu:::fsgpu_holm(p), stats::p.adjust(p, "holm"))
  expect_identical(fsgpu:::fsgpu_holm(0.25), 0.25)
  # Unnamed x: variables V1, V2, ...; NA p-values (none from the search) would go to p.adjust().
  d <- input_data()
  res <- input_search(unname(d$codes), d$y, dimensions = 1, p_adjust = "holm")
  expect_identical(res$scores$variable, paste0("V", 1:12))
  expect_identical(res$scores$p_adjusted, stats::p.adjust(res$scores$p_value, "holm"))
})
