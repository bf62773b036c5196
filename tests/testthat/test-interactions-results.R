# find_interactions()'s results, built in C++ in one pass (p-values, their adjustment, the scores
# and tuples data frames): bit for bit what the same steps in plain R give.

# The p-values, scores and ranked tuples of a search as R computed them before, from the search's
# gains (real, then contrast), tuples and discretizations.
reference_results <- function(res, tuples = NULL, top = NULL) {
  p <- res$params
  k <- p$dimensions
  gain <- c(res$scores$gain, res$contrast_gain)
  n <- nrow(res$scores)
  stat <- pmax(2 * log(2) * gain, 1e-8)
  tail <- stats::pchisq(stat, res$df, lower.tail = FALSE)
  mode <- if (k > 1) "exp" else if (p$discretizations == 1) "raw" else
    if ((p$levels - 1) * p$discretizations < 12) "lin" else "exp"
  in_fit <- if (p$n_contrast > 0) seq_along(gain) > n else rep(TRUE, length(gain))
  alpha <- 1
  pv <- tail
  if (mode != "raw" && sum(in_fit) >= 4) {
    v <- tail[in_fit][order(stat[in_fit])]
    alpha <- fsgpu:::fsgpu_mdfs_alpha(v, mode, p$n_contrast > 0, 8)
    pv <- pmin(1, if (mode == "exp") -expm1(stats::pchisq(stat, res$df, log.p = TRUE) / alpha) else tail / alpha)
  }
  pv <- pv[seq_len(n)]
  adjusted <- stats::p.adjust(pv, p$p_adjust)
  scores <- data.frame(variable = res$scores$variable, index = seq_len(n), gain = gain[seq_len(n)], p_value = pv,
                       p_adjusted = adjusted, relevant = adjusted < p$level, stringsAsFactors = FALSE)
  if (!is.null(tuples)) {
    names <- res$scores$variable
    scores$tuple <- do.call(paste, c(lapply(seq_len(k), function(i) names[tuples[, i]]), sep = " x "))
    for (i in seq_len(k)) scores[[paste0("tuple_", i)]] <- tuples[, i]
    scores$discretization <- res$scores$discretization
  }
  ranked <- NULL
  if (!is.null(tuples)) {
    ranked <- scores[order(-scores$gain, scores$index), , drop = FALSE]
    rownames(ranked) <- NULL
    ranked <- utils::head(ranked, if (is.null(top)) nrow(ranked) else top)
  }
  list(scores = scores, tuples = ranked, alpha = alpha)
}

expect_reference_results <- function(res, with_tuples = FALSE, top = NULL, info = NULL) {
  tuples <- if (with_tuples) as.matrix(res$scores[paste0("tuple_", seq_len(res$params$dimensions))])
  ref <- reference_results(res, tuples, top)
  expect_identical(res$scores, ref$scores, info = info)
  expect_identical(res$tuples, ref$tuples, info = info)
  expect_identical(res$alpha, ref$alpha, info = info)
  expect_identical(res$relevant, res$scores$variable[res$scores$relevant], info = info)
}

results_data <- function(n = 150, p = 14, seed = 4) {
  with_seed(seed, {
    x <- matrix(sample(0:2, n * p, replace = TRUE), n, p, dimnames = list(NULL, paste0("v", seq_len(p))))
    y <- factor(xor(x[, 3] > 0, x[, 6] > 0) | stats::runif(n) < 0.2)
    values <- matrix(stats::rnorm(n * p), n, p)
    values[, 2] <- values[, 2] + as.integer(y)
    list(x = x, y = y, values = values)
  })
}

test_that("scores, p-values and adjustments equal R's for every p-value mode and method", {
  d <- results_data()
  run <- function(x, ...) {
    set.seed(3)
    find_interactions(x, d$y, seed = 8, backend = "cpu", threads = 2, quiet = TRUE, ...)
  }
  for (method in c("holm", "bonferroni", "none", "BH", "hochberg")) {
    for (contrast in c(FALSE, TRUE)) {
      info <- sprintf("%s, contrast = %s", method, contrast)
      expect_reference_results(run(d$x, dimensions = 1, contrast = contrast, p_adjust = method), info = info)
      expect_reference_results(run(d$x, dimensions = 2, contrast = contrast, p_adjust = method), info = info)
      expect_reference_results(run(d$values, dimensions = 1, discretizations = 3, contrast = contrast,
                                   p_adjust = method), info = info)  # "lin"
      expect_reference_results(run(d$values, dimensions = 1, divisions = 4, discretizations = 3,
                                   contrast = contrast, p_adjust = method), info = info)  # "exp"
    }
  }
  # Fewer than four variables to fit: the plain chi-squared tails.
  res <- run(d$x[, 1:3], dimensions = 2, contrast = FALSE)
  expect_identical(res$alpha, 1)
  expect_reference_results(res)
})

test_that("tuples, top and ties are ranked as R's order(-gain, index)", {
  d <- results_data(p = 9)
  d$x[, 9] <- d$x[, 3]  # its gains tie with v3's
  d$x[, 8] <- d$x[, 6]
  for (k in 2:3) {
    for (top in c(1, 4, 50)) {
      res <- find_interactions(d$x, d$y, dimensions = k, top = top, contrast = FALSE, backend = "cpu", threads = 1)
      expect_reference_results(res, with_tuples = TRUE, top = top, info = sprintf("k = %d", k))
    }
    res <- find_interactions(d$x, d$y, dimensions = k, return_tuples = TRUE, backend = "cpu", threads = 1)
    expect_reference_results(res, with_tuples = TRUE, info = sprintf("k = %d, contrast", k))
    expect_identical(res$tuples$index[res$tuples$variable %in% c("v3", "v9")][1:2], c(3L, 9L))
  }
})

test_that("NA and non-ASCII names are kept and pasted into tuples as R pastes them", {
  d <- results_data(p = 6)
  colnames(d$x) <- c("v1", NA, "b\u00e9ta", "v4", "\u00e5", "v6")
  res <- find_interactions(d$x, d$y, dimensions = 2, return_tuples = TRUE, contrast = FALSE, backend = "cpu",
                           threads = 1)
  expect_reference_results(res, with_tuples = TRUE)
  expect_true(any(grepl("NA", res$scores$tuple, fixed = TRUE)))
  expect_identical(res$scores$variable, colnames(d$x))
})

test_that("Holm's adjustment equals p.adjust() on large inputs with ties, zeros and ones", {
  p <- with_seed(5, c(stats::runif(60000)^4, rep(c(0, 1e-320, 0.5, 1), 5000), -0)[sample(80001)])
  expect_identical(fsgpu:::fsgpu_holm(p), stats::p.adjust(p, "holm"))
  # Only the p-values below 4 / n are sorted when they are at most half: here about 15,000 of
  # 80,001; a search's p-values, almost none; and all when most are that small.
  null <- with_seed(7, stats::runif(200000))
  expect_identical(fsgpu:::fsgpu_holm(null), stats::p.adjust(null, "holm"))
  tiny <- with_seed(8, c(stats::runif(30000)^40, stats::runif(20001))[sample(50001)])
  expect_identical(fsgpu:::fsgpu_holm(tiny), stats::p.adjust(tiny, "holm"))
  edge <- c(rep(4 / 10, 5), rep(0.1, 5))  # half below 4 / n, and the rest exactly at it
  expect_identical(fsgpu:::fsgpu_holm(edge), stats::p.adjust(edge, "holm"))
  expect_identical(fsgpu:::fsgpu_holm(numeric(0)), numeric(0))
  expect_identical(fsgpu:::fsgpu_holm(rep(0.01, 7)), stats::p.adjust(rep(0.01, 7), "holm"))
})

test_that("the scores of many variables are the same on any number of threads, ranked as R orders them", {
  n <- 150000
  gain <- with_seed(8, round(stats::rexp(n) * 4, 2))  # many ties
  tuples <- rbind(seq_len(n), c(seq_len(n - 1) + 1L, 1L))
  scores <- function(threads, mode = "exp")
    fsgpu:::fsgpu_interaction_scores(gain, n, 2 * log(2), 4, mode, FALSE, 8L, "holm", 0.05,
                                     paste0("v", seq_len(n)), tuples, rep(1L, n), threads)
  one <- scores(1L)
  expect_identical(scores(2L), one)
  expect_identical(scores(3L, "raw"), scores(1L, "raw"))
  expect_identical(one$ranked, order(-gain, seq_len(n)))
  expect_identical(one$scores$p_adjusted, stats::p.adjust(one$scores$p_value, "holm"))
})

test_that("the p-value fit gives the same alpha on any number of threads", {
  v <- with_seed(6, stats::pchisq(sort(stats::rchisq(20000, 4) * 1.3), 4, lower.tail = FALSE))
  for (mode in c("exp", "lin")) {
    for (last_only in c(FALSE, TRUE)) {
      one <- fsgpu:::fsgpu_mdfs_alpha(v, mode, last_only, 8L, 1L)
      expect_identical(fsgpu:::fsgpu_mdfs_alpha(v, mode, last_only, 8L, 3L), one)
      expect_identical(fsgpu:::fsgpu_mdfs_alpha(v, mode, last_only, 8L, 2L), one)
    }
  }
})
