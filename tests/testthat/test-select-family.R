# The FEAST family on the CPU engine against the pure-R reference ref_select (helper-reference.R),
# on the data of helper-data.R. family_settings() lists the criteria and their parameters.

family_cpu <- function(case, setting, ...) {
  do.call(select_features, c(list(case$x, case$y, k = case$k, nbins = case$nbins, backend = "cpu"),
                             setting, list(...)))
}

family_reference <- function(case, setting, ...) {
  do.call(ref_select, c(list(case$x, case$y, case$k, nbins = case$nbins), setting, list(...)))
}

expect_family_matches <- function(sel, ref, what) {
  got <- as.data.frame(sel)
  expect_identical(got$index, as.integer(ref$index), info = what)
  expect_lt(max(abs(got$score - ref$score), 0), 1e-9)
  expect_identical(got$rank, seq_len(nrow(got)), info = what)
}

# The criteria that accept sample weights.
weighted_methods <- c("mim", "jmi", "disr", "cmim", "cmi")

# Small cases for the weighted reference. Weighted sums are not integer counts, so of the tie cases
# only "ties" is here: its tied features are copies with the same codes, summed in the same order,
# where ties_categorical's relabelled copies may differ in the last bits.
weighted_cases <- function() jmi_cases()[c("ties", "constant", "singletons", "categorical_df", "mixed_df")]

test_that("every criterion equals the reference on every data set", {
  for (case_name in names(jmi_cases())) {
    case <- jmi_cases()[[case_name]]
    for (setting in family_settings()) {
      what <- paste(setting$method, case_name)
      sel <- family_cpu(case, setting, threads = 2)
      expect_s3_class(sel, "fsgpu_selection")
      expect_identical(sel$method, setting$method)
      expect_identical(sel$backend, "cpu")
      ref <- family_reference(case, setting)
      expect_family_matches(sel, ref, what)
      got <- as.data.frame(sel)
      expect_identical(got$feature, colnames(case$x)[got$index], info = what)
      expect_identical(got$fixed, rep(FALSE, nrow(got)), info = what)
      expect_identical(sel$stopped_early, nrow(got) < case$k, info = what)
    }
  }
})

test_that("every criterion gives the same result with 1 and 2 threads", {
  for (case in jmi_cases()) {
    for (setting in family_settings()) {
      one <- as.data.frame(family_cpu(case, setting, threads = 1))
      expect_identical(as.data.frame(family_cpu(case, setting, threads = 2)), one, info = setting$method)
    }
  }
})

test_that("a matrix and the same data as a dgCMatrix give identical results for every criterion", {
  for (case in jmi_cases()[c("ties", "constant", "sparse")]) {
    sparse <- case
    sparse$x <- as_dgc(as.matrix(case$x))
    dense <- case
    dense$x <- as.matrix(case$x)
    for (setting in family_settings()) {
      expect_identical(as.data.frame(family_cpu(sparse, setting)), as.data.frame(family_cpu(dense, setting)),
                       info = setting$method)
    }
  }
})

test_that("the first feature is the one of highest I(X;Y), scored I(X;Y), for every criterion but JIM", {
  case <- jmi_cases()$informative
  mi <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
  for (setting in family_settings()[names(family_settings()) != "jim"]) {
    first <- as.data.frame(family_cpu(case, setting))[1, ]
    expect_identical(first$index, which.max(mi$mi), info = setting$method)
    expect_identical(first$score, max(mi$mi), info = setting$method)
  }
})

test_that("CIFE, CondRed and MIFS are BetaGamma with fixed beta and gamma", {
  # The same criterion reached by two paths through the engine: same selection, same scores.
  for (case in jmi_cases()[c("informative", "ties_categorical", "constant")]) {
    betagamma <- function(beta, gamma) {
      as.data.frame(family_cpu(case, list(method = "betagamma", beta = beta, gamma = gamma)))
    }
    same_as <- function(got, want) {
      expect_identical(got$index, want$index)
      expect_equal(got$score, want$score, tolerance = 1e-12)
    }
    same_as(as.data.frame(family_cpu(case, list(method = "cife"))), betagamma(1, 1))
    same_as(as.data.frame(family_cpu(case, list(method = "condred"))), betagamma(0, 1))
    same_as(as.data.frame(family_cpu(case, list(method = "mifs", beta = 0.4))), betagamma(0.4, 0))
  }
})

test_that("MIFS's beta defaults to 1 and is used when given; BetaGamma keeps its parameters", {
  case <- jmi_cases()$many_classes
  sel <- family_cpu(case, list(method = "mifs"))
  expect_equal(sel$beta, 1)
  expect_identical(as.data.frame(sel), as.data.frame(family_cpu(case, list(method = "mifs", beta = 1))))
  for (beta in c(0.25, 2)) {
    setting <- list(method = "mifs", beta = beta)
    sel <- family_cpu(case, setting)
    expect_equal(sel$beta, beta)
    expect_family_matches(sel, family_reference(case, setting), paste("mifs beta", beta))
  }
  sel <- family_cpu(case, list(method = "betagamma", beta = 0.6, gamma = 0.3))
  expect_equal(c(sel$beta, sel$gamma), c(0.6, 0.3))
  unused <- function(v) is.null(v) || (length(v) == 1 && is.na(v))
  sel <- family_cpu(case, list(method = "jmi"))
  expect_true(unused(sel$beta))
  expect_true(unused(sel$gamma))
})

test_that("fixed features come first, in the given order, scored by the criterion", {
  case <- jmi_cases()$informative
  case$k <- 6
  # Feature 39 is noise that no criterion picks among its first 6; 17 is noise too.
  fixed <- c(39L, 17L)
  for (setting in family_settings()) {
    free <- family_reference(case, setting)
    expect_false(39L %in% free$index)
    sel <- family_cpu(case, setting, fixed = fixed)
    expect_family_matches(sel, family_reference(case, setting, fixed = fixed), setting$method)
    got <- as.data.frame(sel)
    expect_identical(got$index[1:2], fixed)
    expect_identical(got$fixed, rep(c(TRUE, FALSE), c(2, nrow(got) - 2)))
    by_name <- family_cpu(case, setting, fixed = colnames(case$x)[fixed])
    expect_identical(as.data.frame(by_name), got)
  }
})

test_that("fixed features of a data.frame are named by its columns", {
  case <- jmi_cases()$mixed_df
  for (setting in family_settings()[c("jmi", "mrmr", "cmi", "njmim")]) {
    sel <- family_cpu(case, setting, fixed = c("num2", "lgl"))
    expect_family_matches(sel, family_reference(case, setting, fixed = c(4L, 5L)), setting$method)
    expect_identical(as.data.frame(sel)$feature[1:2], c("num2", "lgl"))
  }
})

test_that("fixed features never stop the selection, even when they score 0", {
  d <- data_uninformative()
  for (method in c("jmi", "mim", "cmim", "cmi", "jmim")) {
    sel <- select_features(d$x, d$y, k = 3, nbins = 4, method = method, fixed = c(3, 2), backend = "cpu")
    got <- as.data.frame(sel)
    expect_identical(got$index, c(3L, 2L), info = method)
    expect_equal(got$score, c(0, 0), info = method)
    expect_identical(got$fixed, c(TRUE, TRUE))
    expect_true(sel$stopped_early)
  }
})

test_that("k equal to the number of fixed features selects exactly them", {
  case <- jmi_cases()$ties
  case$k <- 3
  for (setting in family_settings()[c("jmi", "icap")]) {
    got <- as.data.frame(family_cpu(case, setting, fixed = c(20, 1, 8)))
    expect_identical(got$index, c(20L, 1L, 8L))
    expect_identical(got$fixed, rep(TRUE, 3))
  }
})

test_that("criteria that cannot go negative stop at 0 by default, the others go on to k", {
  d <- data_uninformative()
  case <- list(x = d$x, y = d$y, k = 3, nbins = 4)
  for (setting in family_settings()) {
    sel <- family_cpu(case, setting)
    got <- as.data.frame(sel)
    expect_family_matches(sel, family_reference(case, setting), setting$method)
    expect_equal(sel$min_score, ref_default_min_score(setting$method), info = setting$method)
    if (ref_default_min_score(setting$method) == 0) {
      expect_identical(nrow(got), 0L, info = setting$method)
      expect_true(sel$stopped_early)
    } else {
      expect_identical(nrow(got), 3L, info = setting$method)
      expect_false(sel$stopped_early)
    }
  }
})

# A threshold halfway between two middle scores of a selection, far from every score it met.
between_scores <- function(scores) {
  u <- sort(unique(signif(scores, 8)))
  i <- max(1L, length(u) %/% 2L)
  if (length(u) < 2L) u[1] / 2 else (u[i] + u[i + 1L]) / 2
}

test_that("a given min_score stops any criterion when the best candidate is not above it", {
  case <- jmi_cases()$informative
  for (setting in family_settings()) {
    threshold <- between_scores(family_reference(case, setting)$score)
    sel <- family_cpu(case, setting, min_score = threshold)
    ref <- family_reference(case, setting, min_score = threshold)
    expect_family_matches(sel, ref, setting$method)
    expect_equal(sel$min_score, threshold)
    expect_identical(sel$stopped_early, nrow(ref) < case$k)
    expect_true(all(as.data.frame(sel)$score > threshold))
  }
  # MIM's scores fall step by step: it keeps exactly those above the threshold.
  all_mim <- family_reference(case, list(method = "mim"))
  threshold <- mean(all_mim$score[3:4])  # between two scores: rounding cannot decide the test
  got <- as.data.frame(family_cpu(case, list(method = "mim"), min_score = threshold))
  expect_identical(got$index, as.integer(all_mim$index[all_mim$score > threshold]))
})

test_that("min_score is read in the units asked for", {
  case <- jmi_cases()$informative
  for (setting in family_settings()[c("mim", "mrmr", "cmim")]) {
    threshold <- between_scores(family_reference(case, setting)$score)
    bits <- family_cpu(case, setting, min_score = threshold)
    nats <- family_cpu(case, setting, min_score = threshold * log(2), units = "nats")
    expect_identical(as.data.frame(nats)$index, as.data.frame(bits)$index)
  }
})

test_that("nats are bits times log(2), except the unitless ratios of DISR and NJMIM and JIM's impurity", {
  for (case in jmi_cases()[c("many_classes", "mixed_df")]) {
    for (setting in family_settings()) {
      bits <- as.data.frame(family_cpu(case, setting))
      nats <- as.data.frame(family_cpu(case, setting, units = "nats"))
      expect_identical(nats$index, bits$index)
      scale <- rep(log(2), nrow(bits))
      if (ref_unitless(setting$method)) scale[-1] <- 1  # the first step's I(X;Y) is information
      if (ref_impurity(setting$method)) scale[] <- 1    # Gini impurity gains from the first step on
      expect_equal(nats$score, bits$score * scale, tolerance = 1e-14, info = setting$method)
    }
  }
})

test_that("weighted selections equal the weighted reference", {
  for (case_name in names(weighted_cases())) {
    case <- weighted_cases()[[case_name]]
    n <- nrow(case$x)
    weights <- with_seed(31, runif(n, 0, 2))
    weights[c(2, 7)] <- 0  # zero weights are allowed
    for (method in weighted_methods) {
      sel <- family_cpu(case, list(method = method), weights = weights)
      expect_identical(sel$backend, "cpu")
      expect_family_matches(sel, family_reference(case, list(method = method), weights = weights),
                            paste(method, case_name, "weighted"))
    }
  }
})

test_that("weights all equal to 1 give the unweighted selection", {
  for (case in jmi_cases()) {
    for (method in weighted_methods) {
      plain <- as.data.frame(family_cpu(case, list(method = method)))
      ones <- as.data.frame(family_cpu(case, list(method = method), weights = rep(1, nrow(case$x))))
      expect_identical(ones$index, plain$index, info = method)
      expect_equal(ones$score, plain$score, tolerance = 1e-9, info = method)
    }
  }
})

test_that("weighted selections do not depend on the thread count and run on the CPU under auto", {
  case <- jmi_cases()$sparse
  weights <- with_seed(32, rexp(nrow(case$x)))
  for (method in weighted_methods) {
    one <- family_cpu(case, list(method = method), weights = weights, threads = 1)
    two <- family_cpu(case, list(method = method), weights = weights, threads = 2)
    expect_identical(as.data.frame(two), as.data.frame(one))
    auto <- select_features(case$x, case$y, k = case$k, nbins = case$nbins, method = method,
                            weights = weights, backend = "auto")
    expect_identical(auto$backend, "cpu")
    expect_identical(as.data.frame(auto), as.data.frame(one))
  }
})

test_that("bad weights, and weights for a criterion without them, are errors", {
  d <- data_informative()
  n <- nrow(d$x)
  select <- function(weights, method = "jmi") {
    select_features(d$x, d$y, k = 3, method = method, weights = weights, backend = "cpu")
  }
  for (method in setdiff(names(family_settings()), weighted_methods)) {
    args <- c(list(d$x, d$y, k = 3, weights = rep(1, n), backend = "cpu"), family_settings()[[method]])
    expect_error(do.call(select_features, args), "weights", info = method)
  }
  expect_error(select(replace(rep(1, n), 5, -0.5)), "weights")
  expect_error(select(replace(rep(1, n), 5, NA)), "weights")
  expect_error(select(replace(rep(1, n), 5, Inf)), "weights")
  expect_error(select(rep(1, n - 1)), "weights")
  expect_error(select(rep(1, n + 1)), "weights")
  expect_error(select(rep("1", n)), "weights")
})

test_that("BetaGamma needs beta and gamma", {
  d <- data_informative()
  select <- function(...) select_features(d$x, d$y, k = 3, method = "betagamma", backend = "cpu", ...)
  expect_error(select(), "beta|gamma")
  expect_error(select(gamma = 1), "beta")
  expect_error(select(beta = 1), "gamma")
})

test_that("an unknown method is an error listing the known ones", {
  d <- data_informative()
  expect_error(select_features(d$x, d$y, k = 3, method = "relief", backend = "cpu"), "relief|mrmr")
  expect_error(select_features(d$x, d$y, k = 3, method = c("jmi", "mim"), backend = "cpu"))
})

test_that("too many, unknown or repeated fixed features are errors naming the problem", {
  d <- data_informative()
  select <- function(fixed, k = 3) select_features(d$x, d$y, k = k, fixed = fixed, backend = "cpu")
  expect_error(select(c(1, 2, 3), k = 2), "fixed")
  expect_error(select(c("g1", "nope")), "nope")
  expect_error(select(c("g3", "g5", "g3")), "g3")
  expect_error(select(c(4, 4)))
  expect_error(select(41))
  expect_error(select(0))
})

test_that("print shows a selection of any criterion, fixed features included", {
  case <- jmi_cases()$informative
  for (setting in family_settings()[c("mrmr", "cmim", "njmim")]) {
    expect_output(print(family_cpu(case, setting, fixed = "g9")), "g9")
  }
})

test_that("a SummarizedExperiment selects like the matrix of its transposed assay, for any criterion", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_informative()
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(expr = t(d$x)), colData = data.frame(type = d$y, row.names = rownames(d$x)))
  for (setting in family_settings()[c("mrmr", "betagamma", "cmi")]) {
    from_se <- do.call(select_features, c(list(se, class = "type", k = 5, fixed = "g12", backend = "cpu"), setting))
    from_x <- do.call(select_features, c(list(d$x, d$y, k = 5, fixed = "g12", backend = "cpu"), setting))
    expect_identical(as.data.frame(from_se), as.data.frame(from_x))
  }
})

test_that("JIM's first feature has the highest Gini impurity gain G(X;Y), and is scored by it", {
  for (case in jmi_cases()[c("informative", "many_classes", "mixed_df")]) {
    codes <- ref_codes(case$x, case$nbins)
    gain <- vapply(codes, function(v) ref_gini(v, as.integer(factor(case$y))), numeric(1))
    first <- as.data.frame(family_cpu(case, family_settings()$jim))[1, ]
    expect_identical(first$index, unname(ref_argmax(gain)))
    expect_lt(abs(first$score - max(gain)), 1e-9)
  }
})

test_that("JMI3's second feature is JMI's, and its third maximises I(X,S1,S2;Y)", {
  case <- jmi_cases()$informative
  jmi3 <- as.data.frame(family_cpu(case, family_settings()$jmi3))
  jmi <- as.data.frame(family_cpu(case, family_settings()$jmi))
  expect_identical(jmi3[1:2, ], jmi[1:2, ])
  codes <- ref_codes(case$x, case$nbins)
  y <- as.integer(factor(case$y))
  third <- vapply(codes, function(v) ref_mi(ref_key(v, codes[[jmi3$index[1]]], codes[[jmi3$index[2]]]), y), numeric(1))
  third[jmi3$index[1:2]] <- -Inf
  expect_identical(jmi3$index[3], unname(ref_argmax(third)))
  expect_lt(abs(jmi3$score[3] - max(third)), 1e-9)
})

test_that("JIM and JMI3 stop when nothing scores above 0, and take no weights", {
  d <- data_uninformative()
  for (method in c("jim", "jmi3")) {
    sel <- select_features(d$x, d$y, k = 3, method = method, nbins = 4, backend = "cpu")
    expect_identical(nrow(as.data.frame(sel)), 0L)
    expect_true(sel$stopped_early)
    expect_error(select_features(d$x, d$y, k = 2, method = method, weights = rep(1, 8), backend = "cpu"),
                 "weights work with")
  }
})

test_that("JIM's scores print without a unit", {
  case <- jmi_cases()$informative
  out <- capture.output(print(family_cpu(case, family_settings()$jim)))
  expect_false(any(grepl("bits", out)))
  expect_true(any(grepl("JIM selection", out)))
})
