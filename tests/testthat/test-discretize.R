# discretize() and predict() on the CPU against the pure-R references of helper-discretize.R.

expect_matches_reference <- function(x, y, method, nbins = NULL, na = "fail", info = NULL) {
  d <- discretize(x, y, method = method, nbins = nbins, na = na, backend = "cpu")
  cls <- if (is.null(y)) rep(1L, nrow(x)) else y
  for (j in seq_len(ncol(x))) {
    ref <- ref_discretize_feature(x[, j], cls, method, nbins = if (is.null(nbins)) 5 else nbins)
    where <- paste(info, method, colnames(x)[j])
    expect_equal(unname(d$cuts[[j]]), ref$cuts, tolerance = 1e-12, info = where)
    if (method %in% c("caim", "cacc", "ameva", "mdlp") && !is.na(ref$criterion))
      expect_equal(d$features$criterion[j], ref$criterion, tolerance = 1e-9, info = where)
    expect_identical(unname(d$codes[, j]), ifelse(is.na(x[, j]), NA_integer_,
                                                  if (method == "equal_width") d$codes[, j] else ref_interval(x[, j], ref$cuts)),
                     info = where)
  }
  invisible(d)
}

test_that("every method matches its pure-R reference", {
  cases <- list(three = data_discretize(), two = data_discretize(n = 60, classes = 2, seed = 42),
                five = data_discretize(n = 150, classes = 5, seed = 43))
  for (name in names(cases)) {
    case <- cases[[name]]
    for (method in c("caim", "cacc", "ameva", "mdlp")) expect_matches_reference(case$x, case$y, method, info = name)
    for (nbins in c(2, 4, 7)) {
      expect_matches_reference(case$x, NULL, "equal_freq", nbins = nbins, info = name)
      expect_matches_reference(case$x, NULL, "equal_width", nbins = nbins, info = name)
    }
  }
})

test_that("many classes, and fewer distinct values than classes", {
  case <- with_seed(44, {
    y <- factor(sample(letters[1:12], 120, replace = TRUE))
    x <- cbind(a = as.integer(y) + rnorm(120) / 3, b = sample(1:4, 120, replace = TRUE), c = rnorm(120))
    list(x = x, y = y)
  })
  for (method in c("caim", "cacc", "ameva", "mdlp")) expect_matches_reference(case$x, case$y, method, info = "twelve")
  d <- discretize(case$x, case$y, backend = "cpu")
  # CAIM forces S - 1 = 11 cuts where there are candidates enough, all 3 where there are 4 values
  expect_gte(d$features$intervals[1], 12L)
  expect_identical(d$features$intervals[2], 4L)
})

test_that("forced cuts, one class and constant features", {
  y <- factor(rep(c("a", "b", "c", "d"), each = 10))
  x <- cbind(noise = with_seed(45, rnorm(40)), one_value = 1, binary = rep(0:1, 20))
  d <- expect_matches_reference(x, y, "caim")
  expect_gte(d$features$intervals[1], 4L)  # S - 1 = 3 cuts forced in noise
  expect_identical(d$features$intervals[2:3], c(1L, 2L))
  expect_true(all(d$codes[, "one_value"] == 1L))
  # a feature whose non-missing values are all of one class gets no cut
  z <- cbind(v = c(1:20, rep(NA, 20)))
  yz <- factor(rep(c("a", "b"), each = 20))
  for (method in c("caim", "cacc", "ameva", "mdlp")) {
    dz <- discretize(z, yz, method = method, na = "omit", backend = "cpu")
    expect_length(dz$cuts$v, 0)
    expect_true(is.na(dz$features$criterion))
  }
  # Ameva has no forced cuts: an uninformative feature may stay whole
  flat <- cbind(v = rep(1:4, 10))
  expect_identical(discretize(flat, rep(c("a", "b"), each = 4, times = 5), method = "ameva",
                              backend = "cpu")$features$intervals, 1L)
})

test_that("ties between candidates go to the lowest cut", {
  # Symmetric data: cutting after 2 or after 4 gives the same scheme value
  x <- cbind(v = c(1, 2, 3, 4, 5, 6))
  y <- factor(c("a", "a", "b", "b", "a", "a"))
  for (method in c("caim", "cacc", "ameva", "mdlp")) {
    d <- discretize(x, y, method = method, backend = "cpu")
    expect_equal(unname(d$cuts$v), ref_discretize_feature(x[, 1], y, method)$cuts, info = method)
  }
  expect_equal(discretize(x, y, backend = "cpu")$cuts$v[1], 2.5)
})

test_that("missing values: an error by default, left out per feature with na = 'omit'", {
  case <- data_discretize(seed = 46)
  x <- case$x
  x[c(3, 10, 11), "shifted"] <- NA
  x[5, "noise"] <- NaN
  expect_error(discretize(x, case$y, backend = "cpu"), "missing values in feature 'shifted' \\(sample 3\\).*na = \"omit\"")
  for (method in c("caim", "mdlp", "equal_freq")) {
    d <- expect_matches_reference(x, if (method == "equal_freq") NULL else case$y, method, na = "omit",
                                  nbins = if (method == "equal_freq") 4)
    expect_identical(d$features$missing[1:2], c(3L, 1L))
    expect_true(all(is.na(d$codes[c(3, 10, 11), "shifted"])))
  }
  all_missing <- cbind(a = c(NA, NA, NA, NA), b = c(1, 2, 3, 4))
  d <- discretize(all_missing, c("x", "y", "x", "y"), na = "omit", backend = "cpu")
  expect_true(is.na(d$features$lower[1]) && all(is.na(d$codes[, 1])))
  expect_error(discretize(cbind(a = c(1, Inf, 2)), c(1, 2, 1)), "infinite values in feature 'a' \\(sample 2\\)")
})

test_that("predict applies the cuts: training codes, new values, NA, names and positions", {
  case <- data_discretize(seed = 47)
  for (method in c("caim", "cacc", "ameva", "mdlp", "equal_width", "equal_freq")) {
    d <- discretize(case$x, case$y, method = method, backend = "cpu")
    expect_identical(predict(d, case$x), d$codes, info = method)
    expect_identical(predict(d, case$x[, rev(colnames(case$x))]), d$codes, info = method)  # matched by name
    expect_identical(predict(d, as.data.frame(case$x)), d$codes, info = method)
  }
  d <- discretize(case$x, case$y, backend = "cpu")
  k <- d$features$intervals
  new <- rbind(case$x[1:2, ], -1e6, 1e6, NA)
  codes <- predict(d, new)
  expect_identical(unname(codes[3, ]), rep(1L, ncol(new)))  # below the range: the first interval
  expect_identical(unname(codes[4, ]), k)                   # above: the last
  expect_true(all(is.na(codes[5, ])))
  # a value equal to a cut goes to the interval below it
  cut <- d$cuts$shifted[1]
  expect_identical(unname(predict(d, rbind(replace(case$x[1, ], 1, cut)))[1, 1]), 1L)
  expect_identical(unname(predict(d, rbind(replace(case$x[1, ], 1, cut + 1e-9)))[1, 1]), 2L)
  f <- predict(d, new, type = "factor")
  expect_s3_class(f$shifted, "factor")
  expect_identical(nlevels(f$shifted), k[1])
  expect_identical(as.integer(f$shifted), unname(codes[, "shifted"]))
  expect_error(predict(d, case$x[, 1:3]), "newdata lacks features")
  unnamed <- unname(case$x)
  du <- discretize(unnamed, case$y, backend = "cpu")
  expect_identical(unname(predict(du, unnamed)), unname(du$codes))
  expect_error(predict(du, unnamed[, 1:2]), "newdata has 2 features, the discretization 8")
})

test_that("equal_width codes are the selection's bins", {
  case <- data_discretize(seed = 48)
  for (nbins in c(3, 8)) {
    d <- discretize(case$x, method = "equal_width", nbins = nbins, backend = "cpu")
    for (j in seq_len(ncol(case$x))) expect_identical(unname(d$codes[, j]) - 1L, ref_bin(case$x[, j], nbins))
  }
  expect_identical(interval_labels(c(1, 2), closed_left = TRUE), c("(-Inf, 1)", "[1, 2)", "[2, Inf)"))
  expect_identical(interval_labels(c(1, 2)), c("(-Inf, 1]", "(1, 2]", "(2, Inf)"))
  expect_identical(interval_labels(c(1.00001, 1.00002)), c("(-Inf, 1.00001]", "(1.00001, 1.00002]", "(1.00002, Inf)"))
})

test_that("threads, dense, sparse, data frames and integer matrices give the same cuts", {
  case <- data_discretize(n = 200, seed = 49)
  ref <- discretize(case$x, case$y, backend = "cpu", threads = 1)
  for (threads in 2:3) expect_identical(discretize(case$x, case$y, backend = "cpu", threads = threads)$cuts, ref$cuts)
  expect_identical(discretize(as.data.frame(case$x), case$y, backend = "cpu")$cuts, ref$cuts)
  sparse <- case$x
  sparse[abs(sparse) < 0.8] <- 0
  expect_identical(discretize(as_dgc(sparse), case$y, backend = "cpu")$cuts,
                   discretize(sparse, case$y, backend = "cpu")$cuts)
  ints <- matrix(as.integer(round(case$x[, 1:3] * 3)), nrow(case$x), dimnames = list(NULL, colnames(case$x)[1:3]))
  expect_identical(discretize(ints, case$y, backend = "cpu")$cuts,
                   discretize(ints * 1.0, case$y, backend = "cpu")$cuts)
})

test_that("bad input gets clear errors", {
  case <- data_discretize(seed = 50)
  expect_error(discretize(case$x), "needs the class labels y")
  expect_error(discretize(case$x, case$y, method = "chimerge"), "method must be one of")
  expect_error(discretize(case$x, case$y, nbins = 4), "nbins is for equal_width and equal_freq, not caim")
  expect_error(discretize(case$x, method = "equal_freq", nbins = 1), "nbins must be between 2")
  expect_error(discretize(data.frame(a = 1:3, b = factor(c("u", "v", "u"))), c(1, 2, 1)),
               "columns that are not numeric: 'b'")
  expect_error(discretize(case$x, case$y[-1]), "has length 89 but x has 90 samples")
  expect_error(discretize(case$x, rep("a", 90)), "at least two classes")
  expect_error(discretize(case$x, case$y, na = "drop"), "should be one of")
})

test_that("print and as.data.frame show cuts, intervals and criteria", {
  case <- data_discretize(seed = 51)
  d <- discretize(case$x, case$y, backend = "cpu")
  out <- capture.output(print(d))
  expect_match(out[1], "CAIM discretization of 8 features \\(90 samples, 3 classes\\)")
  expect_match(out[2], "Ran on CPU, [0-9]+ threads? in ")
  expect_match(out[3], "Intervals per feature")
  df <- as.data.frame(d)
  expect_identical(names(df), c("feature", "intervals", "criterion", "lower", "upper", "missing", "cuts"))
  expect_identical(df$cuts, unname(d$cuts))
  expect_identical(df$intervals, unname(lengths(d$cuts)) + 1L)
})

test_that("a SummarizedExperiment's rows are discretized", {
  skip_if_not_installed("SummarizedExperiment")
  case <- data_discretize(seed = 52)
  se <- SummarizedExperiment::SummarizedExperiment(list(values = t(case$x)),
                                                   colData = data.frame(type = case$y))
  d <- discretize(se, class = "type", backend = "cpu")
  expect_identical(d$cuts, discretize(case$x, case$y, backend = "cpu")$cuts)
  expect_identical(predict(d, se), d$codes)
  expect_identical(discretize(se, method = "equal_freq", nbins = 3, backend = "cpu")$cuts,
                   discretize(case$x, method = "equal_freq", nbins = 3, backend = "cpu")$cuts)
  expect_error(discretize(se, backend = "cpu"), "needs class")
})

test_that("discretize = ... cuts the numeric columns of the other jobs", {
  case <- data_discretize(n = 150, seed = 53)
  x <- case$x[, c("shifted", "noise", "rounded", "integers")]
  d <- discretize(x, case$y, method = "caim", backend = "cpu")
  sel <- select_features(x, case$y, k = 3, discretize = "caim", backend = "cpu")
  expect_identical(sel$selection, select_features(d$codes, case$y, k = 3, backend = "cpu")$selection)
  expect_identical(sel$discretization$cuts, d$cuts)
  expect_match(capture.output(print(sel))[1], "CAIM intervals")
  # a fitted discretization: its cuts, applied to the features of the same names
  expect_identical(select_features(x, case$y, k = 3, discretize = d, backend = "cpu")$selection, sel$selection)
  expect_identical(select_features(x[, 4:1], case$y, k = 3, discretize = d, backend = "cpu")$selection$feature,
                   sel$selection$feature)
  mi <- mi_scores(x, case$y, discretize = "mdlp", backend = "cpu")
  expect_identical(mi$mi, mi_scores(discretize(x, case$y, method = "mdlp", backend = "cpu")$codes, case$y,
                                    backend = "cpu")$mi)
  expect_identical(attr(mi, "discretization")$method, "mdlp")
  expect_identical(jmi_scores(x, case$y, z = "noise", discretize = d, backend = "cpu")$jmi,
                   jmi_scores(d$codes, case$y, z = "noise", backend = "cpu")$jmi)
  # equal-frequency bins take nbins
  ef <- select_features(x, case$y, k = 2, discretize = "equal_freq", nbins = 4, backend = "cpu")
  expect_identical(ef$discretization$nbins, 4L)
  # factor columns stay categories; integer columns are cut too, unless named in categorical
  df <- data.frame(a = x[, 1], f = factor(case$y), i = as.integer(x[, 4]))
  dd <- select_features(df, case$y, k = 3, discretize = "caim", backend = "cpu")
  expect_identical(names(dd$discretization$cuts), c("a", "i"))
  dd <- select_features(df, case$y, k = 3, discretize = "caim", categorical = "i", backend = "cpu")
  expect_identical(names(dd$discretization$cuts), "a")
  expect_error(select_features(x, case$y, k = 2, discretize = "caim", nbins = 5, backend = "cpu"), "nbins is for equal-width")
  expect_error(select_features(cbind(x, extra = 1), case$y, k = 2, discretize = d, backend = "cpu"), "no cut points for .extra.")
  expect_error(select_features(x, case$y, k = 2, discretize = "chimerge", backend = "cpu"), "method must be one of")
})

test_that("mi_pairs and mi_matrix take discretize = too", {
  case <- data_discretize(n = 150, seed = 54)
  x <- case$x[, c("shifted", "noise", "rounded", "integers", "tiny")]
  d <- discretize(x, case$y, method = "mdlp", backend = "cpu")
  p <- mi_pairs(x, case$y, top = 5, discretize = "mdlp", backend = "cpu")
  expect_identical(pairs_frame(p), pairs_frame(mi_pairs(d$codes, case$y, top = 5, backend = "cpu")))
  expect_identical(attr(p, "discretization")$cuts, d$cuts)
  ef <- discretize(x, method = "equal_freq", nbins = 4, backend = "cpu")
  expect_identical(strip_attributes(mi_matrix(x, discretize = "equal_freq", nbins = 4, backend = "cpu")),
                   strip_attributes(mi_matrix(ef$codes, backend = "cpu")))
  expect_error(mi_matrix(x, discretize = "caim", backend = "cpu"), "needs a class")
})

test_that("CACC on ALL's 723_s_at follows the paper, with or without a tie tolerance", {
  # Issue 21: R discretization's disc.Topdown(method = 2) cuts this probe differently. The
  # paper's loop (helper-discretize.R), with the package's tolerance or with plain `>` as
  # discretization compares, gives fsgpu's cuts for both class variables.
  skip_if_not_installed("ALL")
  skip_if_not_installed("Biobase")
  all <- new.env()
  utils::data("ALL", package = "ALL", envir = all)
  v <- Biobase::exprs(all$ALL)["723_s_at", ]
  for (cl in c("BT", "mol.biol")) {
    y <- factor(all$ALL[[cl]])
    got <- discretize(matrix(v, ncol = 1, dimnames = list(NULL, "723_s_at")), y, method = "cacc", backend = "cpu",
                      quiet = TRUE)$cuts[[1]]
    for (tol in c(1e-9, 0)) expect_equal(unname(got), ref_topdown(v, as.integer(y), "cacc", tol = tol)$cuts,
                                         info = paste(cl, tol))
  }
})

test_that("CACC divides chi2 by ln k, where R discretization divides by ln(k + 1)", {
  # Tsai, Lee and Yang (2008) define cacc = sqrt(y / (y + M)) with y = chi2 / ln k for a scheme of
  # k intervals, as discretization's own manual page of cacc() says; its code divides by
  # ln(k + 1) (helper-discretize.R), which penalises intervals less, so it keeps cutting where
  # the paper stops. Values 1..8 with classes b b a b b b b a: the forced first cut is 7.5
  # (chi2 = 24/7); the best second cut, 3.5 (chi2 = 40/9), scores 0.5795 < 0.6181 with ln 3 and
  # ln 2, so the paper stops, while with ln 4 and ln 3 it scores 0.5349 > 0.5297 and
  # discretization goes on to the pure scheme 2.5, 3.5, 7.5.
  x <- cbind(v = as.numeric(1:8))
  y <- factor(c("b", "b", "a", "b", "b", "b", "b", "a"))
  d <- discretize(x, y, method = "cacc", backend = "cpu")
  expect_equal(d$cuts$v, 7.5)
  expect_equal(d$cuts$v, ref_topdown(x[, 1], y, "cacc")$cuts)
  chi2 <- 24 / 7
  expect_equal(d$features$criterion, sqrt(chi2 / log(2) / (chi2 / log(2) + 8)), tolerance = 1e-12)
  expect_equal(ref_discretization_cacc(x[, 1], y), c(2.5, 3.5, 7.5))
  # issue 21's probe: B-cell ALL, BCR/ABL against NEG (as in the README), 27 cuts by the paper
  # and 35 by discretization's rule
  skip_if_not_installed("ALL")
  skip_if_not_installed("Biobase")
  all <- new.env()
  utils::data("ALL", package = "ALL", envir = all)
  b <- substr(all$ALL$BT, 1, 1) == "B" & all$ALL$mol.biol %in% c("BCR/ABL", "NEG")
  v <- Biobase::exprs(all$ALL)["723_s_at", b]
  yb <- droplevels(all$ALL$mol.biol[b])
  got <- discretize(cbind(p = v), yb, method = "cacc", backend = "cpu", quiet = TRUE)$cuts$p
  expect_length(got, 27)
  expect_equal(got, ref_topdown(unname(v), yb, "cacc")$cuts)
  expect_length(ref_discretization_cacc(v, yb), 35)
})
