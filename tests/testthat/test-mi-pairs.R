# mi_pairs() on the CPU against the pure-R reference (helper-pairs.R): values, order, top,
# threshold, with, the matrix output, tests, units, input forms, threads and errors.

all_pairs <- function(d, ..., by = "joint") {
  mi_pairs(d$x, d$y, top = choose(ncol(d$x), 2), by = by, backend = "cpu", ...)
}

# The result's rows matched to the reference's rows (which are in index order).
in_index_order <- function(p) p[order(p$index1, p$index2), , drop = FALSE]

expect_pairs_match_reference <- function(got, ref, classes) {
  got <- in_index_order(got)
  expect_identical(got$index1, ref$index1)
  expect_identical(got$index2, ref$index2)
  for (col in c("mi_joint", "mi1", "mi2", "interaction")) {
    expect_equal(got[[col]], ref[[col]], tolerance = 1e-9, info = col)
  }
  expect_equal(got$df, (ref$cells - 1) * (classes - 1))
}

test_that("every pair's information equals the reference", {
  for (seed in 31:33) {
    for (classes in 2:3) {
      d <- data_pairs_categorical(classes = classes, seed = seed)
      got <- all_pairs(d)
      expect_s3_class(got, "fsgpu_pairs")
      expect_identical(nrow(got), 66L)
      expect_identical(attr(got, "n_pairs"), choose(12, 2))
      expect_identical(got$feature1, colnames(d$x)[got$index1])
      expect_identical(got$feature2, colnames(d$x)[got$index2])
      expect_true(all(got$index1 < got$index2))
      expect_pairs_match_reference(got, ref_mi_pairs_all(d$x, d$y), classes)
      expect_true(pairs_ordered(got, "mi_joint"))
    }
  }
})

test_that("numeric columns are binned with equal width before the pairs are counted", {
  d <- data_informative(n = 80, p = 8, classes = 3, informative = 2, seed = 41)
  d$x[, 5] <- 2.5  # constant
  for (nbins in c(2, 5)) {
    got <- all_pairs(d, nbins = nbins)
    expect_identical(attr(got, "nbins"), as.integer(nbins))
    expect_pairs_match_reference(got, ref_mi_pairs_all(ref_codes(d$x, nbins), d$y), 3)
  }
})

test_that("the order is exact: equal values tie bitwise and go by index1, then index2", {
  d <- data_pairs_categorical()
  got <- all_pairs(d)
  expect_true(pairs_ordered(got, "mi_joint"))
  ref <- ref_mi_pairs_all(d$x, d$y)
  # The reference agrees with the order, up to its rounding.
  ordered_ref <- ref$mi_joint[match(paste(got$index1, got$index2), paste(ref$index1, ref$index2))]
  expect_true(all(diff(ordered_ref) <= 1e-9))
  # 6 is a copy of 2, 11 a relabelled copy of 2, 12 a copy of 5: their pairs tie exactly.
  value <- function(a, b, col = "mi_joint") {
    got[[col]][got$index1 == min(a, b) & got$index2 == max(a, b)]
  }
  for (k in setdiff(seq_len(12), c(2, 6, 11))) {
    for (col in c("mi_joint", "interaction")) {
      expect_identical(value(6, k, col), value(2, k, col))
      expect_identical(value(11, k, col), value(2, k, col))
    }
  }
  expect_identical(value(12, 3), value(5, 3))
  # The best pair is (2, 10), tied with (6, 10) and (10, 11): returned in index order.
  top3 <- got[1:3, ]
  expect_identical(top3$mi_joint[1], top3$mi_joint[3])
  expect_identical(paste(top3$index1, top3$index2), c("2 10", "6 10", "10 11"))
})

test_that("top = k returns exactly the k best, cutting through ties by index", {
  d <- data_pairs_categorical()
  for (by in c("joint", "interaction")) {
    all <- pairs_frame(all_pairs(d, by = by))
    for (k in c(1, 2, 3, 5, 17, 65, 66)) {
      got <- mi_pairs(d$x, d$y, top = k, by = by, backend = "cpu")
      expect_identical(attr(got, "n_pairs"), 66)
      expect_identical(pairs_frame(got), all[seq_len(k), ], info = paste(by, k))
    }
    # More than there are: every pair.
    expect_identical(pairs_frame(mi_pairs(d$x, d$y, top = 500, by = by, backend = "cpu")), all)
  }
  # The default is the best 1000.
  wide <- data_pairs_categorical(n = 40, p = 50, seed = 35)
  expect_identical(nrow(mi_pairs(wide$x, wide$y, backend = "cpu")), 1000L)
})

test_that("by = 'interaction' ranks by the interaction information, synergy first", {
  d <- data_pairs_categorical(seed = 32)
  joint <- all_pairs(d, by = "joint")
  inter <- all_pairs(d, by = "interaction")
  expect_identical(attr(inter, "by"), "interaction")
  expect_true(pairs_ordered(inter, "interaction"))
  expect_identical(pairs_frame(in_index_order(inter)), pairs_frame(in_index_order(joint)))
  expect_pairs_match_reference(inter, ref_mi_pairs_all(d$x, d$y), 3)
  expect_equal(inter$interaction, inter$mi_joint - inter$mi1 - inter$mi2, tolerance = 1e-12)
})

test_that("threshold returns every pair at or above it, alone or with top", {
  d <- data_pairs_categorical(seed = 33)
  for (by in c("joint", "interaction")) {
    col <- if (by == "joint") "mi_joint" else "interaction"
    all <- pairs_frame(all_pairs(d, by = by))
    values <- all[[col]]
    # Thresholds between distinct values (so that no value is on the edge) and below all.
    distinct <- sort(unique(values))
    between <- (distinct[-1] + distinct[-length(distinct)]) / 2
    cuts <- c(min(values) - 1, between[unique(round(seq(1, length(between), length.out = 8)))])
    for (t in cuts) {
      want <- all[values >= t, , drop = FALSE]
      rownames(want) <- NULL
      got <- mi_pairs(d$x, d$y, threshold = t, by = by, backend = "cpu")
      expect_identical(pairs_frame(got), want, info = paste(by, t))
      expect_identical(attr(got, "n_pairs"), 66)
      for (k in c(1, 4)) {
        got_k <- mi_pairs(d$x, d$y, threshold = t, top = k, by = by, backend = "cpu")
        expect_identical(pairs_frame(got_k), want[seq_len(min(k, nrow(want))), , drop = FALSE])
      }
    }
    # Above every value: no pair, with the columns all the same.
    none <- mi_pairs(d$x, d$y, threshold = max(values) + 1, by = by, backend = "cpu")
    expect_identical(nrow(none), 0L)
    expect_identical(names(none), names(all))
    expect_identical(attr(none, "n_pairs"), 66)
  }
  # A negative threshold on the interaction keeps redundant pairs too.
  inter <- all_pairs(d, by = "interaction")
  expect_identical(nrow(mi_pairs(d$x, d$y, threshold = -10, by = "interaction", backend = "cpu")), 66L)
  expect_true(any(inter$interaction < 0))
})

test_that("a threshold equal to a reported value keeps that pair", {
  # "at least this": a pair whose reported value is the threshold is returned.
  d <- data_pairs_categorical(seed = 33)
  for (by in c("joint", "interaction")) {
    col <- if (by == "joint") "mi_joint" else "interaction"
    for (units in c("bits", "nats")) {
      all <- all_pairs(d, by = by, units = units)
      for (v in unique(all[[col]])) {
        got <- mi_pairs(d$x, d$y, threshold = v, by = by, units = units, backend = "cpu")
        expect_identical(nrow(got), sum(all[[col]] >= v), info = sprintf("%s %s %.17g", by, units, v))
      }
    }
  }
})

test_that("an empty result has the columns' usual types", {
  d <- data_pairs_categorical(seed = 33)
  full <- all_pairs(d, p_adjust = "BH")
  none <- mi_pairs(d$x, d$y, threshold = 100, p_adjust = "BH", backend = "cpu")
  expect_identical(nrow(none), 0L)
  expect_identical(vapply(none, typeof, ""), vapply(full, typeof, ""))
  expect_identical(pairs_frame(none), pairs_frame(full)[0, ])
})

test_that("with = features gives each pair that involves one of them once", {
  d <- data_pairs_categorical(seed = 34)
  all <- pairs_frame(all_pairs(d))
  for (w in list(3L, c(7L, 2L), c(1L, 12L, 5L), 1:12)) {
    in_with <- all$index1 %in% w | all$index2 %in% w
    want <- all[in_with, , drop = FALSE]
    rownames(want) <- NULL
    m <- length(w)
    got <- mi_pairs(d$x, d$y, with = w, top = 1000, backend = "cpu")
    expect_identical(pairs_frame(got), want, info = paste(w, collapse = ","))
    expect_identical(attr(got, "n_pairs"), m * (12 - m) + m * (m - 1) / 2)
    expect_false(anyDuplicated(paste(got$index1, got$index2)) > 0)
    expect_true(all(got$index1 < got$index2))
    # By name, the same.
    expect_identical(pairs_frame(mi_pairs(d$x, d$y, with = colnames(d$x)[w], top = 1000, backend = "cpu")),
                     pairs_frame(got))
    # With top and threshold as well.
    t <- stats::median(want$mi_joint)
    got_t <- mi_pairs(d$x, d$y, with = w, threshold = t, top = 3, backend = "cpu")
    expect_identical(pairs_frame(got_t), utils::head(want[want$mi_joint >= t, ], 3), ignore_attr = TRUE)
    expect_identical(got_t$index1, utils::head(want$index1[want$mi_joint >= t], 3))
    inter <- mi_pairs(d$x, d$y, with = w, by = "interaction", top = 1000, backend = "cpu")
    expect_true(pairs_ordered(inter, "interaction"))
    expect_identical(pairs_frame(in_index_order(inter)), pairs_frame(in_index_order(got)))
  }
})

test_that("output = 'matrix' holds every pair's value, NA on the diagonal", {
  d <- data_pairs_categorical(seed = 31)
  ref <- ref_mi_pairs_all(d$x, d$y)
  for (by in c("joint", "interaction")) {
    col <- if (by == "joint") "mi_joint" else "interaction"
    m <- mi_pairs(d$x, d$y, by = by, output = "matrix", backend = "cpu")
    expect_identical(dim(m), c(12L, 12L))
    expect_identical(dimnames(m), list(colnames(d$x), colnames(d$x)))
    expect_identical(attr(m, "by"), by)
    expect_identical(attr(m, "backend"), "cpu")
    expect_true(all(is.na(diag(m))))
    expect_true(isSymmetric(unclass(strip_attributes(m)), tol = 0))
    expect_equal(m[cbind(ref$index1, ref$index2)], ref[[col]], tolerance = 1e-9)
    pairs <- all_pairs(d, by = by)
    expect_identical(m[cbind(pairs$index1, pairs$index2)], pairs[[col]])
    expect_identical(m[cbind(pairs$index2, pairs$index1)], pairs[[col]])
  }
  nats <- mi_pairs(d$x, d$y, output = "matrix", units = "nats", backend = "cpu")
  expect_equal(strip_attributes(nats), strip_attributes(mi_pairs(d$x, d$y, output = "matrix", backend = "cpu")) *
                 log(2), tolerance = 1e-14)
  expect_identical(attr(nats, "units"), "nats")
})

test_that("p_value is the G-test of the pair against the class", {
  for (classes in 2:3) {
    d <- data_pairs_categorical(classes = classes, seed = 36)
    got <- in_index_order(all_pairs(d))
    ref <- ref_mi_pairs_all(d$x, d$y)
    n <- nrow(d$x)
    df <- (ref$cells - 1) * (classes - 1)
    want <- ifelse(df > 0, stats::pchisq(2 * n * log(2) * ref$mi_joint, pmax(df, 1), lower.tail = FALSE), 1)
    expect_equal(got$p_value, want, tolerance = 1e-7)
    expect_identical(got$df, df)
    # Two constant features (4 and 9): one cell, no degrees of freedom, p = 1.
    const <- got$index1 == 4 & got$index2 == 9
    expect_identical(got$df[const], 0)
    expect_identical(got$p_value[const], 1)
    expect_identical(got$mi_joint[const], 0)
  }
  expect_null(all_pairs(data_pairs_categorical())$p_adjusted)
})

test_that("p_adjust adjusts over all pairs tested", {
  d <- data_pairs_categorical(n = 80, classes = 2, seed = 37)
  all <- all_pairs(d)
  n_pairs <- attr(all, "n_pairs")
  for (method in setdiff(stats::p.adjust.methods, "none")) {
    full <- all_pairs(d, p_adjust = method)
    expect_identical(attr(full, "p_adjust"), method)
    expect_equal(full$p_adjusted, stats::p.adjust(all$p_value, method, n = n_pairs), info = method)
    # On part of the pairs: exact for Bonferroni, never below the full set's otherwise.
    part <- mi_pairs(d$x, d$y, top = 7, p_adjust = method, backend = "cpu")
    expect_identical(pairs_frame(part)[, names(all)], pairs_frame(all)[1:7, ])
    if (method == "bonferroni") {
      expect_equal(part$p_adjusted, pmin(1, part$p_value * n_pairs))
    } else {
      expect_true(all(part$p_adjusted >= full$p_adjusted[1:7] - 1e-15), info = method)
    }
    w <- mi_pairs(d$x, d$y, with = c(2, 5), top = 1000, p_adjust = method, backend = "cpu")
    expect_equal(w$p_adjusted, stats::p.adjust(w$p_value, method, n = attr(w, "n_pairs")), info = method)
  }
})

test_that("units = 'nats' scales the information by log(2) and leaves the tests alone", {
  d <- data_pairs_categorical(seed = 38)
  for (by in c("joint", "interaction")) {
    bits <- all_pairs(d, by = by, p_adjust = "BH")
    nats <- all_pairs(d, by = by, p_adjust = "BH", units = "nats")
    expect_identical(attr(nats, "units"), "nats")
    for (col in c("mi_joint", "mi1", "mi2", "interaction")) {
      expect_equal(nats[[col]], bits[[col]] * log(2), tolerance = 1e-14, info = col)
    }
    for (col in c("feature1", "feature2", "index1", "index2", "df", "p_value", "p_adjusted")) {
      expect_identical(nats[[col]], bits[[col]], info = col)
    }
  }
  # The threshold is in the units too.
  bits <- all_pairs(d)
  t <- stats::median(bits$mi_joint)
  expect_identical(nrow(mi_pairs(d$x, d$y, threshold = t * log(2) * (1 - 1e-9), units = "nats", backend = "cpu")),
                   sum(bits$mi_joint >= t))
})

test_that("data frames, sparse and integer matrices give what their dense twins give", {
  d <- data_pairs_categorical(seed = 39)
  base <- pairs_frame(all_pairs(d))
  df_int <- as.data.frame(d$x)
  df_fac <- as.data.frame(lapply(df_int, factor))
  expect_identical(pairs_frame(all_pairs(list(x = df_int, y = d$y))), base)
  expect_identical(pairs_frame(all_pairs(list(x = df_fac, y = d$y))), base)
  # Binary columns as logicals.
  bin <- d$x[, apply(d$x, 2, function(v) length(unique(v)) == 2)]
  lgl <- bin == max(bin)
  dimnames(lgl) <- dimnames(bin)
  expect_identical(pairs_frame(all_pairs(list(x = lgl, y = d$y))), pairs_frame(all_pairs(list(x = bin, y = d$y))))
  # Class labels as factor, character or integer codes.
  expect_identical(pairs_frame(all_pairs(list(x = d$x, y = factor(d$y)))), base)
  expect_identical(pairs_frame(all_pairs(list(x = d$x, y = match(d$y, unique(d$y)) + 5L))), base)

  # Numeric data: dense, sparse (dgCMatrix, also from Matrix::sparseMatrix) and data frame.
  num <- with_seed(40, {
    x <- matrix(0, 70, 9)
    fill <- runif(length(x)) < 0.3
    x[fill] <- rexp(sum(fill))
    x[, 4] <- 0
    x[, 7] <- -x[, 7]
    list(x = named(x), y = rep(c("a", "b", "c"), length.out = 70))
  })
  dense <- pairs_frame(all_pairs(num, nbins = 4))
  nz <- which(num$x != 0, arr.ind = TRUE)
  sm <- Matrix::sparseMatrix(i = nz[, 1], j = nz[, 2], x = num$x[nz], dims = dim(num$x),
                             dimnames = dimnames(num$x))
  expect_s4_class(sm, "dgCMatrix")
  expect_identical(pairs_frame(all_pairs(list(x = sm, y = num$y), nbins = 4)), dense)
  expect_identical(pairs_frame(all_pairs(list(x = as_dgc(num$x), y = num$y), nbins = 4)), dense)
  expect_identical(pairs_frame(all_pairs(list(x = as.data.frame(num$x), y = num$y), nbins = 4)), dense)
  expect_pairs_match_reference(all_pairs(num, nbins = 4), ref_mi_pairs_all(ref_codes(num$x, 4), num$y), 3)
  # The sparse form in the other modes too.
  for (by in c("joint", "interaction")) {
    expect_identical(pairs_frame(mi_pairs(sm, num$y, with = c("g2", "g7"), by = by, top = 9, nbins = 4,
                                          backend = "cpu")),
                     pairs_frame(mi_pairs(num$x, num$y, with = c("g2", "g7"), by = by, top = 9, nbins = 4,
                                          backend = "cpu")))
    expect_identical(strip_attributes(mi_pairs(sm, num$y, by = by, output = "matrix", nbins = 4, backend = "cpu")),
                     strip_attributes(mi_pairs(num$x, num$y, by = by, output = "matrix", nbins = 4,
                                               backend = "cpu")))
  }
  # A categorical integer matrix as a sparse double matrix, with as many bins as values: the
  # same codes up to their labels, hence the same pairs.
  small <- d$x[, -c(4, 11)]  # values 0..3 only
  expect_identical(pairs_frame(mi_pairs(as_dgc(small * 1), d$y, top = 100, nbins = 4, backend = "cpu")),
                   pairs_frame(mi_pairs(small, d$y, top = 100, backend = "cpu")))
})

test_that("one thread and two give identical pairs", {
  d <- data_pairs_categorical(n = 30, p = 560, classes = 3, seed = 42)  # more than one slice of pairs
  for (by in c("joint", "interaction")) {
    one <- mi_pairs(d$x, d$y, top = 60, by = by, backend = "cpu", threads = 1)
    two <- mi_pairs(d$x, d$y, top = 60, by = by, backend = "cpu", threads = 2)
    expect_identical(pairs_frame(two), pairs_frame(one))
    expect_true(pairs_ordered(one, if (by == "joint") "mi_joint" else "interaction"))
    t <- one[[if (by == "joint") "mi_joint" else "interaction"]][40]
    expect_identical(pairs_frame(mi_pairs(d$x, d$y, threshold = t, by = by, backend = "cpu", threads = 2)),
                     pairs_frame(mi_pairs(d$x, d$y, threshold = t, by = by, backend = "cpu", threads = 1)))
    expect_identical(pairs_frame(mi_pairs(d$x, d$y, with = c(5, 300), top = 50, by = by, backend = "cpu",
                                          threads = 2)),
                     pairs_frame(mi_pairs(d$x, d$y, with = c(5, 300), top = 50, by = by, backend = "cpu",
                                          threads = 1)))
  }
  small <- data_pairs_categorical(seed = 43)
  expect_identical(strip_attributes(mi_pairs(small$x, small$y, output = "matrix", backend = "cpu", threads = 2)),
                   strip_attributes(mi_pairs(small$x, small$y, output = "matrix", backend = "cpu", threads = 1)))
})

test_that("the best of many pairs are the best of all pairs", {
  # Enough pairs that the collector trims while it searches.
  d <- data_pairs_categorical(n = 30, p = 200, classes = 2, seed = 44)
  all <- pairs_frame(mi_pairs(d$x, d$y, top = choose(200, 2), backend = "cpu"))
  expect_true(pairs_ordered(all))
  for (k in c(1, 10, 333)) {
    expect_identical(pairs_frame(mi_pairs(d$x, d$y, top = k, backend = "cpu")), all[seq_len(k), ])
  }
})

test_that("a SummarizedExperiment's rows are the features and a colData column the class", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_pairs_categorical(seed = 45)
  reversed <- d$x[, 12:1]
  colnames(reversed) <- colnames(d$x)
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(d$x), other = t(reversed)),
                                                   colData = data.frame(type = d$y, row.names = rownames(d$x)))
  expect_identical(pairs_frame(mi_pairs(se, class = "type", top = 20, backend = "cpu")),
                   pairs_frame(mi_pairs(d$x, d$y, top = 20, backend = "cpu")))
  expect_identical(pairs_frame(mi_pairs(se, class = "type", with = "g3", by = "interaction", top = 1000,
                                        p_adjust = "BH", backend = "cpu")),
                   pairs_frame(mi_pairs(d$x, d$y, with = "g3", by = "interaction", top = 1000, p_adjust = "BH",
                                        backend = "cpu")))
  expect_identical(strip_attributes(mi_pairs(se, class = "type", output = "matrix", backend = "cpu")),
                   strip_attributes(mi_pairs(d$x, d$y, output = "matrix", backend = "cpu")))
  expect_identical(pairs_frame(mi_pairs(se, class = "type", assay = "other", threshold = 0.2, backend = "cpu")),
                   pairs_frame(mi_pairs(reversed, d$y, threshold = 0.2, backend = "cpu")))
  expect_error(mi_pairs(se, class = "nope", backend = "cpu"), "class must name one colData column")
})

test_that("y = xor of two binary features: that pair is first by both measures", {
  x <- with_seed(46, matrix(sample(0:1, 300 * 20, replace = TRUE), 300, 20,
                            dimnames = list(NULL, paste0("snp", 1:20))))
  y <- factor(xor(x[, 3], x[, 7]))
  h_y <- ref_entropy(as.integer(y))
  for (by in c("joint", "interaction")) {
    got <- mi_pairs(x, y, top = 5, by = by, backend = "cpu")
    expect_identical(c(got$feature1[1], got$feature2[1]), c("snp3", "snp7"))
    expect_identical(c(got$index1[1], got$index2[1]), c(3L, 7L))
    expect_equal(got$mi_joint[1], h_y, tolerance = 1e-9)
    expect_equal(got$interaction[1], h_y - got$mi1[1] - got$mi2[1], tolerance = 1e-12)
    expect_lt(got$mi1[1], 0.01)
    expect_lt(got$mi2[1], 0.01)
    expect_gt(got$mi_joint[1], 10 * got$mi_joint[2])
    expect_lt(got$p_value[1], 1e-50)
  }
  with3 <- mi_pairs(x, y, with = "snp3", top = 3, backend = "cpu")
  expect_identical(with3$index2[1], 7L)
})

test_that("bad input stops with a clear message", {
  d <- data_pairs_categorical(seed = 47)
  expect_error(mi_pairs(d$x[, 1, drop = FALSE], d$y, backend = "cpu"), "at least two features")
  x_na <- d$x
  x_na[5, 3] <- NA
  expect_error(mi_pairs(x_na, d$y, backend = "cpu"), "missing or infinite values in feature 'g3'")
  y_na <- d$y
  y_na[4] <- NA
  expect_error(mi_pairs(d$x, y_na, backend = "cpu"), "y has missing values")
  expect_error(mi_pairs(d$x, d$y[-1], backend = "cpu"), "y has length")
  expect_error(mi_pairs(d$x, d$y, p_adjust = "nope", backend = "cpu"), "p_adjust must be one of")
  expect_error(mi_pairs(d$x, d$y, p_adjust = c("BH", "holm"), backend = "cpu"), "p_adjust must be one of")
  expect_error(mi_pairs(d$x, d$y, p_adjust = NA, backend = "cpu"), "p_adjust must be one of")
  for (top in list(0, -1, 1.5, NA, "a", c(1, 2))) {
    expect_error(mi_pairs(d$x, d$y, top = top, backend = "cpu"), "top must be", info = format(top))
  }
  for (threshold in list("a", NA_real_, c(0.1, 0.2))) {
    expect_error(mi_pairs(d$x, d$y, threshold = threshold, backend = "cpu"), "threshold must be one number")
  }
  expect_error(mi_pairs(d$x, d$y, output = "matrix", top = 5, backend = "cpu"), "takes no top, threshold or with")
  expect_error(mi_pairs(d$x, d$y, output = "matrix", threshold = 0, backend = "cpu"), "takes no top")
  expect_error(mi_pairs(d$x, d$y, output = "matrix", with = 1, backend = "cpu"), "takes no top")
  expect_error(mi_pairs(d$x, d$y, with = "nope", backend = "cpu"), "with: no feature named 'nope'")
  expect_error(mi_pairs(d$x, d$y, with = 13, backend = "cpu"), "with: column indices must be between 1 and 12")
  expect_error(mi_pairs(d$x, d$y, with = c(2, 2), backend = "cpu"), "with: 'g2' given more than once")
  expect_error(mi_pairs(d$x, d$y, with = TRUE, backend = "cpu"), "with must be feature names or column indices")
  expect_error(mi_pairs(d$x, d$y, by = "synergy", backend = "cpu"), "should be one of")
  expect_error(mi_pairs(d$x, d$y, output = "list", backend = "cpu"), "should be one of")
  expect_error(mi_pairs(d$x, d$y, units = "dits", backend = "cpu"), "should be one of")
  expect_error(mi_pairs(d$x, d$y, nbins = 1, backend = "cpu"), "nbins must be between")
  expect_error(mi_pairs(d$x, d$y, backend = "tpu"), "backend must be")
  expect_error(mi_pairs(d$x, d$y, k = 3, backend = "cpu"), "unknown arguments: k")
  expect_error(mi_pairs(d$x, rep("a", nrow(d$x)), backend = "cpu"), "at least two classes")
})

test_that("with: a factor stands for its labels, a name of several columns is an error", {
  d <- data_pairs_categorical(seed = 51)
  expect_identical(pairs_frame(mi_pairs(d$x, d$y, with = factor(c("g7", "g3")), top = 1000, backend = "cpu")),
                   pairs_frame(mi_pairs(d$x, d$y, with = c("g7", "g3"), top = 1000, backend = "cpu")))
  x <- d$x
  colnames(x)[c(2, 9)] <- "g2"
  expect_error(mi_pairs(x, d$y, with = "g2", backend = "cpu"), "with: 'g2' names several features")
  expect_error(mi_pairs(x, d$y, with = factor(c("g1", "g2")), backend = "cpu"), "with: 'g2' names several features")
  # Unique names and indices still work beside duplicated ones.
  expect_identical(pairs_frame(mi_pairs(x, d$y, with = "g3", top = 1000, backend = "cpu"))[, -(1:2)],
                   pairs_frame(mi_pairs(d$x, d$y, with = 3, top = 1000, backend = "cpu"))[, -(1:2)])
  expect_identical(pairs_frame(mi_pairs(x, d$y, with = 9, top = 1000, backend = "cpu"))[, -(1:2)],
                   pairs_frame(mi_pairs(d$x, d$y, with = 9, top = 1000, backend = "cpu"))[, -(1:2)])
})

test_that("p_adjust = 'hommel' is refused beyond 10,000 pairs tested", {
  d <- data_pairs_categorical(n = 30, p = 150, seed = 52)  # 11,175 pairs
  expect_error(mi_pairs(d$x, d$y, p_adjust = "hommel", backend = "cpu"),
               "hommel.*quadratic.*11,175.*\"hochberg\".*\"BH\"")
  expect_error(mi_pairs(d$x, d$y, top = 5, with = 1:110, p_adjust = "hommel", backend = "cpu"), "10,395 here")
  few <- mi_pairs(d$x, d$y, with = 1:2, top = 5, p_adjust = "hommel", backend = "cpu")  # 297 pairs
  expect_identical(attr(few, "n_pairs"), 297)
  expect_equal(few$p_adjusted, stats::p.adjust(few$p_value, "hommel", n = 297))
  expect_identical(nrow(mi_pairs(d$x, d$y, top = 5, p_adjust = "hochberg", backend = "cpu")), 5L)
})

test_that("only a tile of a BPPARAM search returns its pairs' exact keys (16 bytes a pair)", {
  d <- data_ties()
  input <- fsgpu:::prepare_input(d$x, d$y)
  args <- list(x = input$x, y = input$y, n_classes = length(input$classes), with = integer(), measure = "joint",
               top = -1, has_threshold = FALSE, threshold = 0, scale = 1, nbins = 4L, backend = "cpu", threads = 1L,
               devices = integer(), memory_limit = 0)
  whole <- do.call(fsgpu:::fsgpu_mi_pairs, args)
  expect_false(any(c("key_high", "key_low") %in% names(whole)))
  tile <- do.call(fsgpu:::fsgpu_mi_pairs, c(args, with_keys = TRUE))
  same <- setdiff(names(whole), "timings")
  expect_identical(tile[same], whole[same])
  expect_identical(order(-tile$key_high, -tile$key_low, tile$i, tile$j), seq_along(tile$i))
})

test_that("the print method shows the header and the best pairs", {
  d <- data_pairs_categorical(seed = 48)
  got <- mi_pairs(d$x, d$y, top = 12, backend = "cpu")
  out <- capture.output(print(got, n = 3))
  expect_match(out[1], "Feature pairs by joint MI I\\(Y; Xi,Xj\\): 12 of 66 tested \\(60 samples, 3 classes")
  expect_match(out[length(out)], "and 9 more")
  expect_s3_class(as.data.frame(got), "data.frame")
  expect_false(inherits(as.data.frame(got), "fsgpu_pairs"))
  # The pairs alone: results of two runs compare equal as data frames (the run record differs).
  expect_null(attr(as.data.frame(got), "run"))
  expect_identical(as.data.frame(got), as.data.frame(mi_pairs(d$x, d$y, top = 12, backend = "cpu", threads = 1)))
})
