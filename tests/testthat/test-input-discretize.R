# discretize()'s input checks run in C++ over x read in place (fsgpu_bad_values()): every input
# kind (double, integer and logical matrices, data frames, dgCMatrix) gives the errors the
# checks in R gave, naming features and samples, and the same cuts and codes.

test_that("every input kind of discretize() gives the cuts and codes of the double matrix", {
  d <- data_informative(n = 90, p = 6, classes = 3, seed = 6)
  x <- round(d$x * (abs(d$x) > 0.8), 1)
  ref <- discretize(x, d$y, method = "mdlp", backend = "cpu", threads = 2)
  same <- function(input) {
    got <- discretize(input, d$y, method = "mdlp", backend = "cpu", threads = 2)
    expect_identical(got$cuts, ref$cuts)
    expect_identical(got$codes, ref$codes)
  }
  same(as.data.frame(x))
  same(as_dgc(x))
  ints <- matrix(as.integer(x * 10), nrow(x), dimnames = dimnames(x))
  expect_identical(discretize(ints, method = "equal_width", nbins = 4, backend = "cpu")$codes,
                   discretize(ints * 1, method = "equal_width", nbins = 4, backend = "cpu")$codes)
  expect_identical(discretize(x > 0, method = "equal_freq", backend = "cpu")$codes,
                   discretize((x > 0) * 1, method = "equal_freq", backend = "cpu")$codes)
})

test_that("NA, NaN and Inf stop discretize() naming features and samples, whatever the input kind", {
  x <- named(matrix(as.double(1:120), 30, 4))
  x[4, 2] <- NA
  x[2, 2] <- NaN
  x[9, 3] <- Inf
  x[7, 3] <- NA
  x[5, 4] <- -Inf
  infinite <- "x has infinite values in feature 'g3' (sample 's9'), feature 'g4' (sample 's5')"
  missing <- paste0("x has missing values in feature 'g2' (sample 's2'), feature 'g3' (sample 's7'); ",
                    "use na = \"omit\" to discretize each feature from its non-missing values")
  error_of <- function(x, na = "fail") {
    tryCatch({
      discretize(x, method = "equal_width", na = na, backend = "cpu", threads = 2)
      "no error"
    }, error = conditionMessage)
  }
  for (input in list(x, as.data.frame(x), as_dgc(x))) {
    expect_identical(error_of(input), infinite)
    expect_identical(error_of(input, "omit"), infinite)
  }
  x[is.infinite(x)] <- 0
  for (input in list(x, as.data.frame(x), as_dgc(x))) {
    expect_identical(error_of(input), missing)
    expect_identical(error_of(input, "omit"), "no error")
  }
  ints <- matrix(1:60, 20, dimnames = list(NULL, c("a", "b", "c")))
  ints[c(3, 8), c(2, 3)] <- NA
  expect_identical(error_of(ints), paste0("x has missing values in feature 'b' (sample 3), feature 'c' (sample 3); ",
                                          "use na = \"omit\" to discretize each feature from its non-missing values"))
  expect_identical(error_of(ints > 30L), error_of(ints))                      # logical
  expect_identical(error_of(data.frame(a = c(1, 2, 3), b = c(TRUE, NA, FALSE))),
                   paste0("x has missing values in feature 'b' (sample 2); ",
                          "use na = \"omit\" to discretize each feature from its non-missing values"))
  fit <- discretize(x, method = "equal_width", na = "omit", backend = "cpu")
  expect_identical(fit$features$missing, c(0L, 2L, 1L, 0L))
})
