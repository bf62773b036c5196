# The CPU engine against the pure-R reference (helper-reference.R) on the data of helper-data.R.

select_cpu <- function(case, ...) {
  select_features(case$x, case$y, k = case$k, nbins = case$nbins, backend = "cpu", ...)
}

expect_matches_reference <- function(sel, case) {
  got <- as.data.frame(sel)
  ref <- ref_jmi(case$x, case$y, case$k, case$nbins)
  expect_identical(got$index, as.integer(ref$index))
  expect_lt(max(abs(got$score - ref$score), 0), 1e-9)
  expect_identical(got$rank, seq_len(nrow(got)))
  expect_identical(got$feature, colnames(case$x)[got$index])
}

test_that("CPU selections equal the pure-R reference", {
  for (case in jmi_cases()) {
    sel <- select_cpu(case, threads = 2)
    expect_s3_class(sel, "fsgpu_selection")
    expect_identical(sel$method, "jmi")
    expect_identical(sel$backend, "cpu")
    expect_equal(sel$k, case$k)
    expect_equal(sel$nbins, case$nbins)
    expect_matches_reference(sel, case)
  }
})

test_that("results do not depend on the thread count and repeat exactly", {
  for (case in jmi_cases()) {
    one <- as.data.frame(select_cpu(case, threads = 1))
    for (threads in 2:3) expect_identical(as.data.frame(select_cpu(case, threads = threads)), one)
    expect_identical(as.data.frame(select_cpu(case, threads = 1)), one)
  }
})

test_that("a matrix and the same data as a dgCMatrix give identical results", {
  dense <- jmi_cases()[c("informative", "ties", "constant", "many_classes", "singletons")]
  for (case in dense) {
    sparse <- case
    sparse$x <- as_dgc(case$x)
    expect_identical(as.data.frame(select_cpu(sparse)), as.data.frame(select_cpu(case)))
  }
  case <- jmi_cases()$sparse
  densified <- case
  densified$x <- as.matrix(case$x)
  expect_identical(as.data.frame(select_cpu(densified)), as.data.frame(select_cpu(case)))
})

test_that("mostly-zero columns bin the same dense and sparse", {
  case <- list(x = as.matrix(data_sparse()$x), y = data_sparse()$y, k = 20, nbins = 64)
  case$x[case$x != 0] <- case$x[case$x != 0] + 5  # a gap between the zeros and the values
  sparse <- case
  sparse$x <- as_dgc(case$x)
  expect_matches_reference(select_cpu(sparse), case)
  expect_identical(as.data.frame(select_cpu(sparse)), as.data.frame(select_cpu(case)))
})

test_that("selection stops early when no feature scores above 0", {
  d <- data_uninformative()
  sel <- select_features(d$x, d$y, k = 3, backend = "cpu")
  expect_identical(nrow(as.data.frame(sel)), 0L)
  expect_identical(nrow(ref_jmi(d$x, d$y, 3)), 0L)
  expect_true(sel$stopped_early)
  expect_output(print(sel), "Stopped")
})

test_that("k outside 1..number of features is an error", {
  d <- data_informative()
  expect_error(select_features(d$x, d$y, k = ncol(d$x) + 1, backend = "cpu"), "k must be")
  expect_error(select_features(d$x, d$y, k = 0, backend = "cpu"), "k must be")
  expect_error(select_features(d$x, d$y, k = -2, backend = "cpu"), "k must be")
  expect_error(select_features(d$x, d$y, k = 2.5, backend = "cpu"), "k must be")
})

test_that("k equal to the number of features ranks them all", {
  case <- jmi_cases()$categorical_df
  expect_identical(nrow(as.data.frame(select_cpu(case))), ncol(case$x))
})

test_that("print shows the selection", {
  case <- jmi_cases()$informative
  sel <- select_cpu(case)
  expect_output(print(sel), "10 of 40 features")
  expect_output(print(sel), colnames(case$x)[as.data.frame(sel)$index[1]])
})

test_that("nats are bits times log(2)", {
  case <- jmi_cases()$many_classes
  bits <- as.data.frame(select_cpu(case))
  nats <- as.data.frame(select_cpu(case, units = "nats"))
  expect_identical(nats$index, bits$index)
  expect_equal(nats$score, bits$score * log(2), tolerance = 1e-14)
})

test_that("a SummarizedExperiment selects like the matrix of its transposed assay", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_informative()
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(expr = t(d$x)), colData = data.frame(type = d$y, row.names = rownames(d$x)))
  expect_identical(
    as.data.frame(select_features(se, class = "type", k = 5, assay = 1, backend = "cpu")),
    as.data.frame(select_features(d$x, d$y, k = 5, backend = "cpu")))
  s <- data_sparse()
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(counts = Matrix::t(s$x)), colData = data.frame(group = s$y, row.names = rownames(s$x)))
  expect_identical(
    as.data.frame(select_features(se, class = "group", k = 5, assay = "counts", backend = "cpu")),
    as.data.frame(select_features(s$x, s$y, k = 5, backend = "cpu")))
})
