# aggregate_ranks() against RobustRankAggreg, and select_features_cv() on a real microarray.

test_that("robust rank aggregation and Borda agree with RobustRankAggreg", {
  skip_if_not_installed("RobustRankAggreg")
  d <- data_informative(n = 80, p = 30, classes = 2, informative = 4)
  st <- stability_selection(d$x, d$y, k = 6, method = c("jmi", "mim", "mrmr"), resamples = 10, seed = 4,
                            backend = "cpu", quiet = TRUE)
  lists <- lapply(st$selections, function(s) colnames(d$x)[s])
  for (n_features in c(30, NA)) {
    N <- if (is.na(n_features)) length(unique(unlist(lists))) else n_features
    rra <- aggregate_ranks(lists, method = "rra", n_features = N)
    ref <- RobustRankAggreg::aggregateRanks(lists, N = N, method = "RRA")
    expect_equal(rra$score, ref$Score[match(rra$feature, ref$Name)], tolerance = 1e-12)
    borda <- aggregate_ranks(lists, method = "borda", n_features = N)
    ref <- RobustRankAggreg::aggregateRanks(lists, N = N, method = "mean")
    expect_equal(pnorm(borda$score, 0.5, sqrt(1 / 12 / length(lists))), ref$Score[match(borda$feature, ref$Name)],
                 tolerance = 1e-12)
  }
  # The stability result itself: the same rankings, over all its features, with their indices.
  # Equal scores are ordered by column index there, by first appearance in lists.
  from_result <- aggregate_ranks(st, method = "rra")
  by_name <- aggregate_ranks(lists, method = "rra", n_features = 30)
  expect_identical(from_result$score, by_name$score)
  expect_identical(from_result$score, by_name$score[match(from_result$feature, by_name$feature)])
  expect_identical(from_result$index, match(from_result$feature, colnames(d$x)))
  expect_false(is.unsorted(from_result$index[from_result$score == 1]))
})

test_that("Borda points and ties follow the definition", {
  a <- aggregate_ranks(list(c("x", "y"), c("y", "x"), c("z")), n_features = 4)
  # x: ranks 1/4, 2/4, 1 (left out) -> mean 7/12; y the same; z: 1, 1, 1/4 -> 3/4
  expect_identical(a$feature, c("x", "y", "z"))  # x and y tie: first seen first
  expect_equal(a$score, c(7 / 12, 7 / 12, 3 / 4))
  expect_equal(a$points, 4 * (1 - a$score))
  expect_identical(a$count, c(2L, 2L, 1L))
  sels <- list(select_features(data_ties()$x, data_ties()$y, k = 3, backend = "cpu", quiet = TRUE),
               select_features(data_ties()$x, data_ties()$y, k = 3, method = "mim", backend = "cpu", quiet = TRUE))
  agg <- aggregate_ranks(sels)
  expect_identical(attr(agg, "n_features"), 20L)
  expect_identical(agg$feature, colnames(data_ties()$x)[agg$index])
  expect_error(aggregate_ranks(list(c("a", "a"))), "names a feature twice")
  expect_error(aggregate_ranks(list(c("a", "b")), n_features = 1), "n_features")
  expect_error(aggregate_ranks(1:3), "x must be a list")
})

alon <- function() {
  file <- "/work/shared/data/datamicroarray/alon.csv.gz"
  if (!file.exists(file)) skip("the alon microarray is not here")
  d <- utils::read.csv(gzfile(file), check.names = FALSE)
  list(x = as.matrix(d[, -(1:2)]), y = factor(d$class))
}

test_that("select_features_cv() selects inside the training folds (alon colon microarray)", {
  d <- alon()
  cv <- select_features_cv(d$x, d$y, k_max = 6, folds = 3, repeats = 2, seed = 11, backend = "cpu", threads = 2,
                           quiet = TRUE)
  # folds: each repeat's held-out parts partition the samples, stratified
  expect_length(cv$folds, 6)
  for (r in 0:1) expect_identical(sort(unlist(cv$folds[r * 3 + 1:3])), seq_len(nrow(d$x)))
  expect_true(all(vapply(cv$folds, function(f) all(abs(table(d$y[f]) - table(d$y) / 3) < 1), logical(1))))
  # each fold's selection is select_features() on its training samples alone
  bins <- discretize(d$x, method = "equal_width", nbins = cv$nbins, backend = "cpu")
  for (i in c(1, 5)) {
    train <- setdiff(seq_len(nrow(d$x)), cv$folds[[i]])
    expect_identical(cv$selections[[i]], select_features(d$x[train, ], d$y[train], k = 6, discretize = bins,
                                                         backend = "cpu", quiet = TRUE)$selection$index)
  }
  # a fold's accuracy at k = 3, by hand with the centroid rule
  test <- cv$folds[[2]]
  train <- setdiff(seq_len(nrow(d$x)), test)
  f <- cv$selections[[2]][1:3]
  mu <- colMeans(d$x[train, f])
  sdv <- apply(d$x[train, f], 2, sd)
  z <- function(m) sweep(sweep(m, 2, mu), 2, sdv, "/")
  cen <- rowsum(z(d$x[train, f]), d$y[train]) / as.vector(table(d$y[train]))
  dist <- sapply(1:2, function(c) rowSums(sweep(z(d$x[test, f, drop = FALSE]), 2, cen[c, ])^2))
  pred <- levels(d$y)[max.col(-dist, ties.method = "first")]
  row <- cv$by_fold[cv$by_fold$`repeat` == 1 & cv$by_fold$fold == 2 & cv$by_fold$k == 3, ]
  expect_equal(row$accuracy, mean(pred == d$y[test]))
  expect_equal(row$balanced_accuracy, mean(tapply(pred == d$y[test], d$y[test], mean)))
  # the curve and the one-standard-error rule
  expect_equal(cv$curve$balanced_accuracy, as.vector(tapply(cv$by_fold$balanced_accuracy, cv$by_fold$k, mean)))
  best <- which.max(cv$curve$balanced_accuracy)
  expect_identical(cv$best_k, best)
  limit <- cv$curve$balanced_accuracy[best] - cv$curve$balanced_accuracy_se[best]
  expect_identical(cv$suggested_k, min(which(cv$curve$balanced_accuracy >= limit)))
  expect_true(all(cv$curve$accuracy > 0.5 & cv$curve$accuracy <= 1))
  expect_output(print(cv), "one-standard-error rule: k = ")
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(cv))
})

test_that("select_features_cv() takes learners by name and as functions", {
  d <- data_informative(n = 60, p = 20, classes = 3, informative = 3)
  first_class <- function(x_train, y_train, x_test) rep(levels(y_train)[1], nrow(x_test))
  cv <- select_features_cv(d$x, d$y, k_max = 3, folds = 3, learner = first_class, seed = 1, backend = "cpu",
                           quiet = TRUE)
  expect_equal(cv$curve$accuracy, rep(1 / 3, 3))
  expect_equal(cv$curve$balanced_accuracy, rep(1 / 3, 3))
  expect_identical(cv$learner, "user function")
  short <- function(x_train, y_train, x_test) y_train[1]
  expect_error(select_features_cv(d$x, d$y, k_max = 2, folds = 3, learner = short, backend = "cpu", quiet = TRUE),
               "learner returned 1 predictions")
  expect_error(select_features_cv(d$x, d$y, learner = "lda", backend = "cpu"), "learner must be")
  expect_error(select_features_cv(d$x, d$y, folds = 30, backend = "cpu"), "folds must be between 2 and 20")
  # k_max past the number of features: the error names k_max, the argument given
  expect_error(select_features_cv(d$x, d$y, k_max = 40, folds = 3, backend = "cpu", quiet = TRUE),
               "^k_max must be between 1 and 20 \\(the number of features\\), not 40$")
  for (learner in c("naive_bayes", "svm", "ranger")) {
    pkg <- if (learner == "ranger") "ranger" else "e1071"
    if (!requireNamespace(pkg, quietly = TRUE)) next
    cv <- select_features_cv(d$x, d$y, k_max = 3, folds = 3, learner = learner, seed = 1, backend = "cpu",
                             quiet = TRUE)
    expect_true(all(cv$curve$accuracy > 0.6), info = learner)
  }
})

test_that("select_features_cv() on a SummarizedExperiment, a data frame and sparse data equals the matrix", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_informative(n = 60, p = 20, classes = 2, informative = 3)
  d$x[abs(d$x) < 0.5] <- 0
  run <- function(x, ...) {
    res <- select_features_cv(x, k_max = 4, folds = 3, seed = 2, backend = "cpu", quiet = TRUE, ...)
    res[c("curve", "by_fold", "folds", "selections", "suggested_k")]
  }
  ref <- run(d$x, y = d$y)
  se <- SummarizedExperiment::SummarizedExperiment(list(expr = t(d$x)), colData = data.frame(group = d$y))
  expect_identical(run(se, class = "group"), ref)
  expect_identical(run(as.data.frame(d$x), y = d$y), ref)
  expect_identical(run(as_dgc(d$x), y = d$y), ref)
})
