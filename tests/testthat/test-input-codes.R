# select_features() leaves the checks of x (NA, NaN, Inf) and the integer rule's count of
# distinct values to the C++ encoder (prepare_input(defer = TRUE), src/core/encode.cpp): the
# selections, notes, messages and errors must be those of the checks made in R.

# The selection as prepare_input() without deferral resolves the input (the checks in R).
select_in_r <- function(x, y, k, nbins = NULL, categorical = NULL, threads = 2) {
  binning <- fsgpu:::binning_request(nbins, NULL, categorical)
  input <- fsgpu:::prepare_input(x, y, binning = binning)
  expect_null(input$bin_above)
  fsgpu:::run_selection(input, k = k, method = "jmi", nbins = nbins, beta = NULL, gamma = NULL, fixed = NULL,
                        min_score = NULL, weights = NULL, backend = "cpu", threads = threads, devices = NULL,
                        units = "bits", quiet = FALSE)
}

# Messages said while running `code`, and its value.
with_messages <- function(code) {
  said <- character()
  value <- withCallingHandlers(code, message = function(m) {
    said <<- c(said, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = said)
}

# Both paths: the same selection, notes and messages.
expect_same_as_r <- function(x, y, k = 5, nbins = NULL, categorical = NULL, threads = 2) {
  got <- with_messages(select_features(x, y, k = k, nbins = nbins, categorical = categorical, backend = "cpu",
                                       threads = threads))
  ref <- with_messages(select_in_r(x, y, k = k, nbins = nbins, categorical = categorical, threads = threads))
  expect_identical(got$value$selection, ref$value$selection)
  expect_identical(got$value$run$notes, ref$value$run$notes)
  expect_identical(got$messages, ref$messages)
  invisible(got)
}

# Integer columns of every kind for the rule: few values, at the limit (10), above it,
# negative, a range too wide for a table (sorted), and more than 256 levels (16-bit codes).
rule_data <- function(n = 400, seed = 5) {
  with_seed(seed, {
    y <- factor(sample(c("a", "b", "c", "d"), n, replace = TRUE))
    shift <- 3L * as.integer(y)
    x <- cbind(
      sample(0:3, n, TRUE), sample(0:9, n, TRUE), sample(0:10, n, TRUE) + shift,
      sample(-50:50, n, TRUE) - shift, sample(c(-2e9, 0, 2e9, 7), n, TRUE), sample(1e9 + 0:20, n, TRUE) + shift,
      sample(0:299, n, TRUE) + 20L * shift, rpois(n, 100) + shift
    )
    storage.mode(x) <- "integer"
    list(x = named(x), y = y)
  })
}

test_that("every dense and sparse input kind gives the selection of the checks in R", {
  d <- data_informative(n = 150, p = 12, classes = 3, seed = 3)
  r <- rule_data()
  expect_same_as_r(d$x, d$y)                               # double matrix
  expect_same_as_r(round(d$x * 3), d$y, nbins = 6)         # whole doubles: binned as numbers
  expect_same_as_r(r$x, r$y)                               # integer matrix, the rule
  expect_same_as_r(r$x > 0L, r$y, k = 3)                   # logical matrix: categories
  df <- data.frame(num = d$x[, 1], int = as.integer(round(d$x[, 2] * 40)), few = as.integer(d$x[, 3] > 0),
                   fac = factor(ifelse(d$x[, 4] > 0, "hi", "lo")), lgl = d$x[, 5] > 1)
  expect_same_as_r(df, d$y, k = 4)                         # data frame columns
  expect_same_as_r(df, d$y, k = 4, nbins = 5)
  sx <- as_dgc(d$x * (abs(d$x) > 1))
  expect_same_as_r(sx, d$y)                                # dgCMatrix
})

test_that("the integer rule and categorical = decide as in R, from the counts made in C++", {
  r <- rule_data()
  got <- expect_same_as_r(r$x, r$y)
  expect_length(got$messages, 1L)
  expect_match(got$messages, "^Binning 5 integer columns with more than 10 distinct values")
  expect_identical(got$value$run$notes, c("5 integer columns binned", "3 integer columns as categories"))
  expect_same_as_r(r$x, r$y, nbins = 7)                    # bins asked: every integer column binned
  expect_same_as_r(r$x, r$y, categorical = TRUE)           # categories, the 300-level one included
  expect_same_as_r(r$x, r$y, categorical = FALSE)
  expect_same_as_r(r$x, r$y, categorical = c("g3", "g7"))  # these two categories, the rule for the rest
  expect_same_as_r(r$x, r$y, categorical = 1:3, nbins = 4)
  # a category of more than 256 levels takes 16-bit codes: the same as its factor
  wide <- as.data.frame(lapply(as.data.frame(r$x[, 7, drop = FALSE]), factor))
  expect_identical(select_features(r$x[, 7, drop = FALSE], r$y, k = 1, categorical = TRUE, backend = "cpu")$selection,
                   select_features(wide, r$y, k = 1, backend = "cpu")$selection)
})

test_that("NA, NaN and Inf stop select_features naming features and samples, on every input kind", {
  d <- data_informative(n = 30, p = 6, seed = 2)
  x <- named(d$x)
  x[2, 3] <- NA
  x[4, 1] <- Inf
  x[3, 1] <- NaN
  expect_error(select_features(x, d$y, k = 2, backend = "cpu"),
               "^x has missing or infinite values in feature 'g1' \\(sample 's3'\\), feature 'g3' \\(sample 's2'\\)$")
  xi <- matrix(1:60, 30)
  xi[7, 2] <- NA
  expect_error(select_features(xi, d$y, k = 1, backend = "cpu", nbins = 3), "in feature 'X2' \\(sample 7\\)$")
  expect_error(select_features(xi, d$y, k = 1, backend = "cpu"), "in feature 'X2' \\(sample 7\\)$")
  wide <- matrix(NA_real_, 30, 8)
  expect_error(select_features(wide, d$y, k = 1, backend = "cpu"), "feature 'X5' \\(sample 1\\) and 3 more features$")
  df <- data.frame(a = d$x[, 1], b = c(1L, NA, rep(3L, 28)), f = factor(c("u", NA, rep("v", 28))))
  expect_error(select_features(df, d$y, k = 1, backend = "cpu"), "feature 'b' \\(sample 's2'\\), feature 'f' \\(sample 's2'\\)$")
  sx <- Matrix::sparseMatrix(i = c(1, 3, 2, 5), j = c(1, 2, 3, 3), x = c(1, NaN, Inf, -Inf), dims = c(30, 3),
                             dimnames = list(paste0("p", 1:30), c("a", "b", "c")))
  expect_error(select_features(sx, d$y, k = 1, backend = "cpu"),
               "feature 'b' \\(sample 'p3'\\), feature 'c' \\(sample 'p2'\\)$")
})

test_that("the encoder's threads do not change anything", {
  r <- rule_data(n = 2000, seed = 9)
  one <- select_features(r$x, r$y, k = 6, backend = "cpu", threads = 1, quiet = TRUE)
  two <- select_features(r$x, r$y, k = 6, backend = "cpu", threads = 2, quiet = TRUE)
  expect_identical(one$selection, two$selection)
  expect_identical(one$run$notes, two$run$notes)
  expect_same_as_r(r$x, r$y, k = 6, threads = 1)
})
