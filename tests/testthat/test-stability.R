# stability_selection() against a plain R loop of select_features() on the same subsamples,
# the Nogueira estimator against a hand computation, and the subsamples themselves.

# The selections of a loop of select_features() over the subsamples of st, on the bins of all
# samples (what stability_selection() promises), method-major as st$selections.
loop_selections <- function(st, x, y, ...) {
  d <- discretize(x, method = "equal_width", nbins = st$nbins, backend = "cpu")
  unlist(lapply(st$method, function(m) lapply(st$resamples, function(s)
    select_features(x[s, , drop = FALSE], y[s], k = st$k, method = m, discretize = d, backend = "cpu",
                    quiet = TRUE, ...)$selection$index)), recursive = FALSE)
}

# Frequencies and mean ranks by hand from a list of selections.
hand_frequencies <- function(selections, p, k) {
  freq <- vapply(seq_len(p), function(f) mean(vapply(selections, function(s) f %in% s, logical(1))), numeric(1))
  ranks <- vapply(seq_len(p), function(f) vapply(selections, function(s) {
    r <- match(f, s); if (is.na(r)) k + 1 else r }, numeric(1)), numeric(length(selections)))
  list(frequency = freq, mean_rank = colMeans(ranks), median_rank = apply(ranks, 2, median))
}

test_that("each subsample's selection is select_features() on its rows, with the same ranks", {
  d <- data_informative(n = 90, p = 30, classes = 3, informative = 4)
  st <- stability_selection(d$x, d$y, k = 6, method = c("jmi", "mrmr", "cmim", "disr"), resamples = 12, seed = 3,
                            backend = "cpu", threads = 2, quiet = TRUE)
  loop <- loop_selections(st, d$x, d$y)
  expect_identical(unname(st$selections), loop)
  expect_identical(names(st$selections)[c(1, 13, 48)], c("jmi:1", "mrmr:1", "disr:12"))
  hand <- hand_frequencies(loop, ncol(d$x), 6)
  f <- st$features[order(st$features$index), ]
  expect_equal(f$frequency, hand$frequency)
  expect_equal(f$mean_rank, hand$mean_rank)
  expect_equal(f$median_rank, hand$median_rank)
  expect_equal(f$freq_mrmr, hand_frequencies(loop[13:24], ncol(d$x), 6)$frequency)
  expect_identical(f$feature, colnames(d$x))
  expect_identical(st$stable, st$features$feature[st$features$frequency >= 0.6])
  expect_equal(st$pfer, 6^2 / ((2 * 0.6 - 1) * 30))
})

test_that("ties and betagamma go through as in select_features()", {
  d <- data_ties()
  st <- stability_selection(d$x, d$y, k = 5, method = c("betagamma", "mifs"), beta = 0.5, gamma = 0.25,
                            resamples = 6, seed = 1, backend = "cpu", quiet = TRUE)
  d2 <- discretize(d$x, method = "equal_width", nbins = st$nbins, backend = "cpu")
  expect_identical(unname(st$selections[1:6]), lapply(st$resamples, function(s)
    select_features(d$x[s, ], d$y[s], k = 5, method = "betagamma", beta = 0.5, gamma = 0.25, discretize = d2,
                    backend = "cpu", quiet = TRUE)$selection$index))
  expect_identical(unname(st$selections[7:12]), lapply(st$resamples, function(s)
    select_features(d$x[s, ], d$y[s], k = 5, method = "mifs", beta = 0.5, discretize = d2, backend = "cpu",
                    quiet = TRUE)$selection$index))
})

test_that("the result does not depend on threads, workers or the input's form", {
  skip_if_not_installed("BiocParallel")
  d <- data_informative(n = 80, p = 25, classes = 2, informative = 3)
  run <- function(x, ...) stability_selection(x, d$y, k = 4, resamples = 10, seed = 7, backend = "cpu",
                                              quiet = TRUE, ...)
  one <- run(d$x, threads = 1)
  two <- run(d$x, threads = 2)
  workers <- run(d$x, BPPARAM = BiocParallel::SerialParam(), method = "jmi")
  expect_identical(two$selections, one$selections)
  expect_identical(workers$selections, one$selections)
  expect_identical(workers$features, one$features)
  expect_identical(run(as.data.frame(d$x))$selections, one$selections)
  # Sparse data: zeros are most of the entries; dense and sparse forms select alike.
  xs <- d$x
  xs[abs(xs) < 1] <- 0
  expect_identical(run(as_dgc(xs))$selections, run(xs)$selections)
  expect_identical(run(as_dgc(xs), method = c("cmi", "jmi3"))$selections,
                   run(xs, method = c("cmi", "jmi3"))$selections)
})

test_that("categorical data frames and several classes missing from no subsample", {
  d <- with_seed(5, {
    y <- factor(rep(c("a", "b", "c"), 30))
    x <- data.frame(lapply(1:12, function(j) factor(sample(letters[1:3], 90, TRUE))))
    names(x) <- paste0("f", 1:12)
    x$f2 <- factor(ifelse(y == "a", "u", as.character(x$f2)))
    list(x = x, y = y)
  })
  st <- stability_selection(d$x, d$y, k = 4, resamples = 8, seed = 2, backend = "cpu", quiet = TRUE)
  expect_identical(unname(st$selections), lapply(st$resamples, function(s)
    select_features(d$x[s, ], d$y[s], k = 4, backend = "cpu", quiet = TRUE)$selection$index))
  expect_identical(st$features$feature[1], "f2")
})

test_that("SummarizedExperiment and DelayedArray input give the matrix's result; add_results() stores it", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_informative(n = 60, p = 20, classes = 2, informative = 3)
  se <- SummarizedExperiment::SummarizedExperiment(list(expr = t(d$x)), colData = data.frame(group = d$y))
  ref <- stability_selection(d$x, d$y, k = 4, resamples = 6, seed = 1, backend = "cpu", quiet = TRUE)
  st <- stability_selection(se, class = "group", k = 4, resamples = 6, seed = 1, backend = "cpu", quiet = TRUE)
  expect_identical(st$selections, ref$selections)
  expect_identical(st$features, ref$features)
  skip_if_not_installed("DelayedArray")
  dse <- se
  SummarizedExperiment::assay(dse, "expr") <- DelayedArray::DelayedArray(t(d$x))
  expect_identical(stability_selection(dse, class = "group", k = 4, resamples = 6, seed = 1, backend = "cpu",
                                       quiet = TRUE)$selections, ref$selections)
  se2 <- add_results(se, st)
  rd <- SummarizedExperiment::rowData(se2)
  expect_equal(rd$fsgpu_stability_frequency[st$features$index], st$features$frequency)
  expect_identical(rd$fsgpu_stability_stable[st$features$index], st$features$stable)
  expect_equal(S4Vectors::metadata(se2)$fsgpu_stability$stability, st$stability)
})

test_that("subsamples are stratified complementary pairs, reproducible from the seed", {
  y <- factor(c(rep("a", 11), rep("b", 8)))
  x <- matrix(rnorm(19 * 5), 19, 5)
  before <- .Random.seed
  st <- stability_selection(x, y, k = 2, resamples = 6, seed = 9, backend = "cpu", quiet = TRUE)
  expect_identical(.Random.seed, before)  # the session's stream is left alone
  expect_identical(stability_selection(x, y, k = 2, resamples = 6, seed = 9, backend = "cpu",
                                       quiet = TRUE)$resamples, st$resamples)
  for (pair in list(1:2, 3:4, 5:6)) {
    a <- st$resamples[[pair[1]]]
    b <- st$resamples[[pair[2]]]
    expect_length(intersect(a, b), 0)
    expect_identical(as.vector(table(y[a])), c(5L, 4L))
    expect_identical(as.vector(table(y[b])), c(5L, 4L))
    expect_type(a, "integer")
    expect_false(is.unsorted(a))
  }
  plain <- stability_selection(x, y, k = 2, resamples = 5, pairs = FALSE, fraction = 0.7, seed = 1,
                               backend = "cpu", quiet = TRUE)
  expect_length(plain$resamples, 5)
  expect_true(all(vapply(plain$resamples, function(s) identical(as.vector(table(y[s])), c(7L, 5L)), logical(1))))
})

test_that("the Nogueira estimator matches a hand computation", {
  # Three selections of two among four features: {1,2}, {1,2}, {1,3}.
  # p_hat = (1, 2/3, 1/3, 0), q = 2: 1 - (3/2) * mean(p(1 - p)) / (1/2 * 1/2) = 1 - (3/2)(1/9)/(1/4) = 1/3.
  s <- nogueira <- fsgpu:::nogueira_stability(list(c(1, 2), c(1, 2), c(1, 3)), 4)
  expect_equal(s[["estimate"]], 1 / 3)
  # Its variance (Nogueira et al. 2018, the phi_i of their Theorem), written out term by term.
  z <- rbind(c(1, 1, 0, 0), c(1, 1, 0, 0), c(1, 0, 1, 0))
  p_hat <- colMeans(z)
  phi <- numeric(3)
  for (i in 1:3) {
    ki <- sum(z[i, ])
    phi[i] <- (1 / (0.5 * 0.5)) * (mean(z[i, ] * p_hat) - ki * 2 / 16 +
                                     (1 / 3) / 2 * (2 * ki * 2 / 16 - ki / 4 - 2 / 4 + 1))
  }
  v <- 4 / 9 * sum((phi - mean(phi))^2)
  expect_equal(s[["variance"]], v)
  expect_equal(s[["lower"]], 1 / 3 - qnorm(0.975) * sqrt(v))
  # identical selections are perfectly stable; an estimate needs two selections
  expect_equal(fsgpu:::nogueira_stability(list(1:3, 1:3, 1:3), 10)[["estimate"]], 1)
  expect_true(is.na(fsgpu:::nogueira_stability(list(1:3), 10)[["estimate"]]))
})

test_that("bad arguments are refused with their names", {
  d <- data_informative(n = 40, p = 10, classes = 2)
  run <- function(...) stability_selection(d$x, d$y, k = 3, backend = "cpu", quiet = TRUE, ...)
  expect_error(run(resamples = 5), "resamples must be even")
  expect_error(run(fraction = 0.7), "fraction must be 0.5 with pairs")
  expect_error(run(pairs = FALSE, fraction = 1.5), "fraction must be one number")
  expect_error(run(method = "lasso"), "method must be one or more of")
  expect_error(run(method = c("jmi", "jmi")), "twice")
  expect_error(run(threshold = 0), "threshold")
  expect_error(run(beta = 2), "beta is a parameter of mifs and betagamma")
  expect_error(stability_selection(d$x, d$y, k = 11, backend = "cpu"), "k must be between 1 and 10")
  expect_error(stability_selection(d$x, factor(c("a", rep("b", 39))), k = 2, backend = "cpu"),
               "fewer than two classes")
  expect_message(stability_selection(d$x, factor(c("a", rep("b", 20), rep("c", 19))), k = 2, resamples = 2,
                                     backend = "cpu"), "class 'a' too small to be in any subsample")
})

test_that("print, as.data.frame and plot", {
  d <- data_informative(n = 60, p = 15, classes = 2, informative = 2)
  st <- stability_selection(d$x, d$y, k = 3, resamples = 10, seed = 1, backend = "cpu", quiet = TRUE)
  expect_output(print(st), "Stability \\(Nogueira et al.\\): .*CI")
  expect_output(print(st), "PFER bound")
  expect_identical(as.data.frame(st), st$features)
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(st))
  expect_invisible(plot(st, type = "bars", n = 5))
})

test_that("progress goes to the handler between rounds of subsamples, then 1", {
  d <- data_informative(n = 60, p = 15, classes = 2, informative = 2)
  seen <- numeric()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, done), fsgpu.progress_interval = 0)
  on.exit(options(old))
  stability_selection(d$x, d$y, k = 3, resamples = 12, seed = 1, backend = "cpu", threads = 1)
  expect_false(is.unsorted(seen))
  expect_gt(length(seen), 2)
  expect_identical(tail(seen, 1), 1)
})
