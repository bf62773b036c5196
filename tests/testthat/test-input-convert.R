# stability_selection() and select_features_cv() leave the columns to bin (integers) and to make
# categories (doubles named by categorical=) to the encoder (prepare_input(convert = FALSE)):
# x goes to the glue as given, with bin_above, and their results, notes and messages are those of
# the conversion in R. The integer rule's count runs in C++ for every job (fsgpu_more_values_than()).

# A stability selection on the input prepared with or without the conversion in R.
stability_on <- function(x, y, convert, nbins = NULL, categorical = NULL) {
  binning <- fsgpu:::binning_request(nbins, NULL, categorical)
  said_by(fsgpu:::run_stability(fsgpu:::prepare_input(x, y, binning = binning, convert = convert), k = 3,
                                method = c("jmi", "mrmr"), resamples = 6, fraction = 0.5, pairs = TRUE,
                                threshold = 0.6, alpha = 0.05, seed = 3, nbins = nbins, beta = NULL, gamma = NULL,
                                min_score = NULL, backend = "cpu", threads = 2, devices = NULL, quiet = TRUE,
                                discretize = NULL, BPPARAM = NULL))
}

without_run <- function(res) res[setdiff(names(res), c("elapsed", "run"))]

test_that("stability selection converts columns in the encoder with the results of R's conversion", {
  r <- rule_data()
  d <- data_informative(n = 300, p = 6, classes = 3, seed = 8)
  x <- cbind(round(d$x, 1), r$x)
  colnames(x) <- c(paste0("d", 1:6), colnames(r$x))
  binning <- fsgpu:::binning_request(NULL, NULL, c("d2", "d5"))
  input <- suppressMessages(fsgpu:::prepare_input(x, r$y, binning = binning, convert = FALSE))
  expect_s3_class(input$x, "fsgpu_columns")
  expect_identical(suppressMessages(fsgpu:::prepare_input(r$x, r$y, binning = fsgpu:::binning_request(NULL, NULL, NULL),
                                                          convert = FALSE))$x[[2]], c(-1L, -1L, 0L, 0L, -1L, 0L))
  expect_identical(input$x[[2]], c(-1L, -2L, -1L, -1L, -2L, rep(-1L, 7)))  # cbind() made r$x doubles
  for (case in list(list(x = r$x), list(x = r$x, nbins = 4), list(x = x, categorical = c("d2", "d5", "g1")),
                    list(x = as_dgc(x * (abs(x) > 1)), categorical = "d3"),
                    list(x = data.frame(a = x[, 1], b = r$x[, 6], f = factor(r$x[, 1]))))) {
    got <- stability_on(case$x, r$y, FALSE, case$nbins, case$categorical)
    ref <- stability_on(case$x, r$y, TRUE, case$nbins, case$categorical)
    expect_identical(got$messages, ref$messages)
    expect_identical(without_run(got$value), without_run(ref$value))
    expect_identical(got$value$run$notes, ref$value$run$notes)
  }
})

test_that("select_features_cv() on integers to bin gives the cross-validation of the same doubles", {
  r <- rule_data()
  cv <- function(x) {
    without_run(select_features_cv(x, r$y, k_max = 4, folds = 3, seed = 2, nbins = 4, backend = "cpu",
                                   threads = 2, quiet = TRUE))
  }
  expect_identical(cv(r$x), cv(r$x * 1))
  got <- said_by(select_features_cv(r$x, r$y, k_max = 4, folds = 3, seed = 2, backend = "cpu", quiet = FALSE))
  expect_match(got$messages[1], "^Binning 3 integer columns with more than 10 distinct values \\('g3', 'g4', 'g6'\\)")
})

test_that("the integer rule's count in C++ is R's", {
  r <- rule_data()
  x <- r$x
  x[c(2, 9), 6] <- NA
  columns <- seq_len(ncol(x))
  for (limit in c(3L, 10L, 100L, 299L)) {
    expect_identical(fsgpu:::fsgpu_more_values_than(x, columns, limit, 2L),
                     vapply(columns, function(j) ref_more_values_than(x[, j], limit), logical(1)))
  }
  df <- list(c(NA, 1L, 1L), c(NA_integer_, NA_integer_, NA_integer_), c(-2147483647L, 2147483647L, 0L))
  expect_identical(fsgpu:::fsgpu_more_values_than(df, 1:3, 2L, 1L), c(FALSE, FALSE, TRUE))
})

test_that("stability_selection() and select_features_cv() convert no column in R (without discretize)", {
  r <- rule_data()
  x <- cbind(r$x * 1, r$x)  # doubles, then integers the rule bins
  colnames(x) <- paste0("f", seq_len(ncol(x)))
  xi <- data.frame(x[, 1:6], r$x)
  suppressMessages(trace("convert_columns", where = asNamespace("fsgpu"), print = FALSE,
                         tracer = quote(stop("converted in R"))))
  on.exit(suppressMessages(untrace("convert_columns", where = asNamespace("fsgpu"))))
  expect_no_error(suppressMessages(stability_selection(xi, r$y, k = 3, resamples = 4, seed = 1, backend = "cpu",
                                                       categorical = "f2", quiet = TRUE)))
  expect_no_error(suppressMessages(select_features_cv(xi, r$y, k_max = 3, folds = 3, seed = 1, backend = "cpu",
                                                      categorical = "f2", quiet = TRUE)))
  expect_error(suppressMessages(stability_selection(xi, r$y, k = 3, resamples = 4, seed = 1, backend = "cpu",
                                                    discretize = "equal_width", categorical = "f2", quiet = TRUE)),
               "converted in R")
})

