# mi_scores(), cmi_scores(), jmi_scores() and mi_pairs() leave the checks of x (NA, NaN, Inf)
# and the integer rule's count of distinct values to the C++ encoder, as select_features() does
# (prepare_input(defer = TRUE); test-input-codes.R): their results, notes, messages and errors
# must be those of the checks made in R. The shared helpers are in helper-inputs.R.

test_that("every input kind gives the scores and pairs of the checks in R", {
  d <- data_informative(n = 120, p = 8, classes = 3, seed = 3)
  r <- rule_data()
  expect_jobs_as_r(d$x, d$y, z = "g2")                               # double matrix
  expect_jobs_as_r(round(d$x * 3), d$y, z = 1, nbins = 6)            # whole doubles: binned
  expect_jobs_as_r(r$x, r$y, z = "g3")                               # integer matrix, the rule
  expect_jobs_as_r(r$x, r$y, z = "g4", nbins = 5)                    # bins asked: all binned
  expect_jobs_as_r(r$x, r$y, z = "g1", categorical = c("g3", "g6"))
  expect_jobs_as_r(r$x, r$y, z = "g1", categorical = TRUE)
  expect_jobs_as_r(r$x > 0L, r$y, z = 2)                             # logical matrix
  expect_jobs_as_r(r$x, r$y, z = as.integer(r$x[, 3]))               # z as values
  df <- data.frame(num = d$x[, 1], int = as.integer(round(d$x[, 2] * 40)), few = as.integer(d$x[, 3] > 0),
                   fac = factor(ifelse(d$x[, 4] > 0, "hi", "lo")), lgl = d$x[, 5] > 1)
  expect_jobs_as_r(df, d$y, z = "fac")                               # data frame columns
  expect_jobs_as_r(df, d$y, z = "int", nbins = 4)
  expect_jobs_as_r(as_dgc(d$x * (abs(d$x) > 1)), d$y, z = "g1")      # dgCMatrix
  expect_jobs_as_r(d$x, d$y, z = "g1", categorical = 1:2)            # double categories: codes made in C++
  for (e in c("mm", "sg", "shrink")) expect_job_as_r("mi", r$x, r$y, estimator = e)
  expect_job_as_r("mi", r$x, r$y, normalize = "su")
})

test_that("binned integers score as the same doubles, and the rule says so once", {
  r <- rule_data()
  x <- r$x[, c(3, 4, 6)]
  got <- said_by(mi_scores(x, r$y, backend = "cpu"))
  expect_length(got$messages, 1L)
  expect_match(got$messages, "^Binning 3 integer columns with more than 10 distinct values")
  expect_identical(attr(got$value, "run")$notes, "3 integer columns binned")
  expect_identical(got$value$mi, mi_scores(x * 1, r$y, backend = "cpu")$mi)
  expect_identical(cmi_scores(x, r$y, z = 1, nbins = 6, backend = "cpu")$cmi,
                   cmi_scores(x * 1, r$y, z = 1, nbins = 6, backend = "cpu")$cmi)
  pairs <- mi_pairs(x, r$y, nbins = 6, backend = "cpu")
  expect_identical(as.data.frame(pairs), as.data.frame(mi_pairs(x * 1, r$y, nbins = 6, backend = "cpu")))
  expect_true(attr(pairs, "binned"))
})

test_that("NA, NaN and Inf stop every job naming features and samples, as the checks in R", {
  d <- data_informative(n = 30, p = 6, seed = 2)
  x <- named(d$x)
  x[2, 3] <- NA
  x[4, 1] <- Inf
  x[3, 1] <- NaN
  got <- expect_job_as_r("mi", x, d$y)
  expect_identical(unclass(got$value),
                   "x has missing or infinite values in feature 'g1' (sample 's3'), feature 'g3' (sample 's2')")
  expect_jobs_as_r(x, d$y, z = "g2")
  xi <- matrix(1:60, 30)
  xi[7, 2] <- NA
  expect_jobs_as_r(xi, d$y, z = 1)
  expect_jobs_as_r(xi, d$y, z = 1, nbins = 3)
  expect_jobs_as_r(matrix(NA_real_, 30, 8), d$y, z = 1)              # "and 3 more features"
  df <- data.frame(a = d$x[, 1], b = c(1L, NA, rep(3L, 28)), f = factor(c("u", NA, rep("v", 28))))
  expect_jobs_as_r(df, d$y, z = "a")
  sx <- Matrix::sparseMatrix(i = c(1, 3, 2, 5), j = c(1, 2, 3, 3), x = c(1, NaN, Inf, -Inf), dims = c(30, 3),
                             dimnames = list(paste0("p", 1:30), c("a", "b", "c")))
  got <- expect_job_as_r("pairs", sx, d$y)
  expect_match(got$value, "feature 'b' \\(sample 'p3'\\), feature 'c' \\(sample 'p2'\\)$")
})

test_that("a SummarizedExperiment's dense assay gives the scores, pairs and errors of the checks in R", {
  skip_if_not_installed("SummarizedExperiment")
  r <- rule_data(n = 80)
  se <- rule_se(r)
  counts <- SummarizedExperiment::assay(se, "counts")
  # read in place: no transposed copy in R
  binning <- fsgpu:::binning_request(NULL, NULL, NULL)
  expect_s3_class(fsgpu:::prepare_se_input(se, "type", binning = binning, defer = TRUE)$x, "fsgpu_transposed")
  expect_jobs_as_r(se, "type", z = "g2")
  expect_jobs_as_r(se, "type", z = "g2", nbins = 4)
  expect_jobs_as_r(se, "type", z = "g2", categorical = "g6")
  expect_matrix_as_r(se)
  plain <- SummarizedExperiment::SummarizedExperiment(list(a = unname(counts * 0.5), b = counts > 100L),
                                                      colData = S4Vectors::DataFrame(type = r$y))
  expect_jobs_as_r(plain, "type", z = 1)                             # double, no dimnames
  expect_jobs_as_r(plain, "type", z = 1, categorical = 2:3)          # double categories, read in place
  SummarizedExperiment::assay(plain, "a") <- NULL
  expect_jobs_as_r(plain, "type", z = 2)                             # logical
  counts[3, 5] <- NA
  SummarizedExperiment::assay(se, "counts") <- counts
  got <- expect_job_as_r("mi", se, "type")
  expect_identical(unclass(got$value), "assay 'counts' has missing or infinite values in feature 'g3' (sample 'c5')")
  expect_jobs_as_r(se, "type", z = "g2")
})

test_that("mi_matrix() gives the matrix, notes and errors of the checks in R", {
  d <- data_informative(n = 120, p = 6, classes = 3, seed = 4)
  r <- rule_data()
  expect_matrix_as_r(d$x)
  expect_matrix_as_r(r$x)
  expect_matrix_as_r(r$x, nbins = 5, estimator = "mm")
  expect_matrix_as_r(r$x, categorical = "g6")
  expect_matrix_as_r(as_dgc(d$x * (abs(d$x) > 1)))
  expect_matrix_as_r(data.frame(a = d$x[, 1], b = as.integer(d$x[, 2] > 0), f = factor(d$x[, 3] > 0)))
  x <- named(d$x)
  x[5, 4] <- -Inf
  x[2, 6] <- NA
  expect_matrix_as_r(x)
  # NA outside `features` still stops it, as before
  expect_error(mi_matrix(x, features = 1:3, backend = "cpu"), "feature 'g4' \\(sample 's5'\\)")
})

test_that("select_features() on a SummarizedExperiment's dense assay: the selection and errors of the checks in R", {
  skip_if_not_installed("SummarizedExperiment")
  r <- rule_data(n = 80)
  se <- rule_se(r)
  counts <- SummarizedExperiment::assay(se, "counts")
  binning <- fsgpu:::binning_request(NULL, NULL, NULL)
  in_r <- function() {
    fsgpu:::run_selection(fsgpu:::prepare_se_input(se, "type", binning = binning), k = 4, method = "jmi",
                          nbins = NULL, beta = NULL, gamma = NULL, fixed = NULL, min_score = NULL, weights = NULL,
                          backend = "cpu", threads = 2, devices = NULL, units = "bits", quiet = FALSE)
  }
  got <- said_by(select_features(se, "type", k = 4, backend = "cpu", threads = 2))
  ref <- said_by(in_r())
  expect_identical(got$messages, ref$messages)
  expect_identical(got$value$selection, ref$value$selection)
  expect_identical(got$value$run$notes, ref$value$run$notes)
  counts[2, 7] <- Inf
  SummarizedExperiment::assay(se, "counts") <- counts
  got <- said_by(select_features(se, "type", k = 4, backend = "cpu"))
  expect_identical(got$value, said_by(in_r())$value)
  expect_match(got$value, "^assay 'counts' has missing or infinite values in feature 'g2' \\(sample 'c7'\\)$")
})
