# mi_scores() against the pure-R reference, and its agreement with JMI's first step; the run
# record and quiet of all three scorers.

test_that("mi_scores equals the reference I(X;Y) on every reference data set", {
  for (case in jmi_cases()) {
    got <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
    codes <- ref_codes(case$x, case$nbins)
    want <- vapply(codes, ref_mi, numeric(1), y = as.integer(factor(case$y)))
    expect_equal(got$mi, unname(want), tolerance = 1e-9)
    expect_identical(got$index, seq_along(codes))
  }
})

test_that("mi_scores' estimators equal infotheo's definitions", {
  for (case in jmi_cases()) {
    codes <- ref_codes(case$x, case$nbins)
    y <- as.integer(factor(case$y))
    emp <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
    expect_identical(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", estimator = "emp")$mi, emp$mi)
    for (estimator in c("mm", "sg", "shrink")) {
      got <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", units = "nats", estimator = estimator)
      want <- vapply(codes, ref_mutinformation, numeric(1), y = y, estimator = estimator)
      expect_equal(got$mi, unname(want), tolerance = 1e-9, info = estimator)
      expect_identical(attr(got, "estimator"), estimator)
      expect_true(all(got$mi >= 0))
      expect_identical(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", units = "nats",
                                 estimator = estimator, threads = 3)$mi, got$mi)
    }
  }
  # Miller-Madow is the plug-in plus (m_x + m_y - m_xy - 1) / 2N nats, m the observed values.
  set.seed(5)
  x <- matrix(sample(0:3, 200 * 3, replace = TRUE), 200, 3)
  y <- factor(x[, 1] %% 2 + sample(0:1, 200, replace = TRUE))
  emp <- mi_scores(x, y, backend = "cpu", units = "nats")$mi
  cells <- vapply(1:3, function(j) length(unique(paste(x[, j], y))), numeric(1))
  expect_equal(mi_scores(x, y, backend = "cpu", units = "nats", estimator = "mm")$mi,
               pmax(0, emp + (4 + 3 - cells - 1) / 400), tolerance = 1e-12)
})

test_that("mi_scores' shrink estimator takes log m for uniform tables and 0 for constants", {
  # A uniform table has an infinite shrinkage intensity: H = log m, as infotheo.
  x <- cbind(uniform = rep(0:3, 25), constant = 1L, half = rep(0:1, each = 50))
  y <- factor(rep(c("a", "b"), 50))
  got <- mi_scores(x, y, backend = "cpu", units = "nats", estimator = "shrink")
  want <- vapply(1:3, function(j) ref_mutinformation(x[, j], as.integer(y), "shrink"), numeric(1))
  expect_equal(got$mi, want, tolerance = 1e-12)
  expect_identical(got$mi[2], 0)
})

test_that("mi_scores refuses unknown estimators", {
  case <- jmi_cases()$informative
  expect_error(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", estimator = "chao"),
               "estimator must be one of")
  expect_error(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", estimator = c("mm", "sg")),
               "estimator must be one of")
})

test_that("mi_scores is what JMI selects first, in bits and nats, for any thread count", {
  case <- jmi_cases()$informative
  mi <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", threads = 1)
  sel <- select_features(case$x, case$y, k = 1, nbins = case$nbins, backend = "cpu")
  expect_identical(sel$selection$score, max(mi$mi))
  expect_identical(sel$selection$index, which.max(mi$mi))
  expect_equal_but_run(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", threads = 3), mi)
  nats <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", units = "nats")
  expect_equal(nats$mi, mi$mi * log(2))
})

test_that("mi_scores on the GPU equals the CPU bitwise", {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
  for (case in jmi_cases()[c("informative", "sparse", "many_classes")]) {
    cpu <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
    gpu <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "gpu")
    expect_identical(gpu$mi, cpu$mi)
    # shrink has no GPU form: an error when asked for, the CPU when chosen automatically.
    expect_error(mi_scores(case$x, case$y, nbins = case$nbins, backend = "gpu", estimator = "shrink"),
                 "runs on the CPU only")
    auto <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "auto", estimator = "shrink")
    expect_identical(attr(auto, "backend"), "cpu")
    expect_identical(auto$mi, mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", estimator = "shrink")$mi)
    for (estimator in c("mm", "sg")) {
      expect_identical(mi_scores(case$x, case$y, nbins = case$nbins, backend = "gpu", estimator = estimator)$mi,
                       mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", estimator = estimator)$mi,
                       info = estimator)
    }
  }
})

test_that("mi_scores on a SummarizedExperiment scores its rows", {
  skip_if_not_installed("SummarizedExperiment")
  case <- jmi_cases()$informative
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)),
                                                   colData = data.frame(type = case$y))
  expect_equal_but_run(mi_scores(se, class = "type", nbins = case$nbins, backend = "cpu"),
                       mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu"))
})

test_that("the scores record where they ran and print it on one line", {
  case <- jmi_cases()$informative
  for (scores in list(mi_scores(case$x, case$y, backend = "cpu", threads = 2),
                      cmi_scores(case$x, case$y, z = "g2", backend = "cpu", threads = 2),
                      jmi_scores(case$x, case$y, z = "g2", backend = "cpu", threads = 2))) {
    expect_s3_class(scores, c("fsgpu_scores", "data.frame"), exact = TRUE)
    run <- attr(scores, "run")
    expect_s3_class(run, "fsgpu_backend_used")
    expect_identical(run[c("name", "threads", "devices", "why_cpu", "workers")],
                     list(name = "cpu", threads = 2L, devices = integer(), why_cpu = "", workers = 1L))
    expect_gte(run$elapsed, 0)
    shown <- capture.output(print(scores))
    expect_match(shown[1], "^Ran on CPU, 2 threads in ")
    expect_identical(shown[-1], capture.output(print(as.data.frame(scores))))
    expect_identical(class(as.data.frame(scores)), "data.frame")
    expect_null(attr(as.data.frame(scores), "run"))  # the scores alone: two runs compare equal
  }
  scores <- mi_scores(case$x, case$y, backend = "cpu")
  expect_identical(as.data.frame(scores), as.data.frame(mi_scores(case$x, case$y, backend = "cpu", threads = 1)))
  attr(scores, "run") <- NULL
  expect_identical(capture.output(print(scores)), capture.output(print(as.data.frame(scores))))
})

test_that("quiet = TRUE silences the scores' messages and the progress of a discretization", {
  case <- jmi_cases()$informative
  y <- factor(case$y, levels = c(levels(factor(case$y)), "unused"))
  scorers <- list(function(...) mi_scores(...), function(...) cmi_scores(..., z = "g2"),
                  function(...) jmi_scores(..., z = "g2"))
  seen <- character()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, job), fsgpu.progress_interval = 0)
  on.exit(options(old))
  for (scorer in scorers) {
    expect_message(loud <- scorer(case$x, y, backend = "cpu"), "Dropped unused levels")
    expect_silent(quiet <- scorer(case$x, y, backend = "cpu", quiet = TRUE))
    expect_equal_but_run(quiet, loud)
    seen <- character()
    scorer(case$x, case$y, discretize = "caim", backend = "cpu")
    expect_true(any(grepl("Discretizing", seen)))
    seen <- character()
    scorer(case$x, case$y, discretize = "caim", backend = "cpu", quiet = TRUE)
    expect_identical(seen, character())
    expect_error(scorer(case$x, case$y, backend = "cpu", quiet = NA), "quiet must be TRUE or FALSE")
  }
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)), colData = data.frame(type = y))
  for (scorer in scorers) {
    expect_message(scorer(se, class = "type", backend = "cpu"), "Dropped unused levels")
    expect_silent(scorer(se, class = "type", backend = "cpu", quiet = TRUE))
  }
})

# Random data of one seed: binned numeric features, a constant one and a copy of the class.
normalize_case <- function(seed) {
  with_seed(seed, {
    n <- 150
    y <- factor(sample(c("a", "b", "c", "d")[seq_len(2 + seed %% 3)], n, replace = TRUE))
    x <- matrix(rnorm(n * 8), n, 8, dimnames = list(NULL, paste0("g", 1:8)))
    x[, 2] <- x[, 2] + as.integer(y)
    x[, 5] <- 1
    x[, 7] <- as.integer(y)
    list(x = x, y = y, nbins = 3 + seed %% 5)
  })
}

test_that("normalised mi_scores equal the reference ratios on every data set and several seeds", {
  cases <- c(jmi_cases(), lapply(1:4, normalize_case))
  for (normalize in c("su", "nmi", "gain_ratio")) {
    for (case in cases) {
      got <- mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize, backend = "cpu")
      want <- ref_mi_scores(case$x, case$y, normalize, nbins = case$nbins)
      expect_identical(names(got), c("feature", "index", normalize))
      expect_equal(got[[normalize]], want[[normalize]], tolerance = 1e-9, info = normalize)
    }
  }
})

test_that("normalised scores are ratios: 1 for a copy of the class, 0 for a constant, the same in nats", {
  case <- normalize_case(1)
  for (normalize in c("su", "nmi", "gain_ratio")) {
    bits <- mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize, backend = "cpu", threads = 1)
    expect_identical(bits[[normalize]][5], 0)
    expect_equal(bits[[normalize]][7], 1, tolerance = 1e-12)
    expect_true(all(bits[[normalize]] >= 0 & bits[[normalize]] <= 1 + 1e-12))
    nats <- mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize, backend = "cpu", units = "nats",
                      threads = 2)
    expect_identical(nats[[normalize]], bits[[normalize]])
  }
  expect_equal_but_run(mi_scores(case$x, case$y, nbins = case$nbins, normalize = "none", backend = "cpu"),
                       mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu"))
})

test_that("the three normalisations are I(X;Y) over 2 / (H(X) + H(Y)), H(X,Y) and H(X)", {
  # FSelectorRcpp's symuncert and gainratio and praznik's normalised MI, from entropies alone.
  case <- normalize_case(2)
  y <- as.integer(case$y)
  mi <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")$mi
  codes <- ref_codes(case$x, case$nbins)
  hx <- vapply(codes, ref_entropy, numeric(1))
  hxy <- vapply(codes, function(v) ref_entropy(v, y), numeric(1))
  score <- function(normalize) mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize,
                                         backend = "cpu")[[normalize]]
  informative <- hx > 0
  expect_equal(score("su")[informative], unname(2 * mi / (hx + ref_entropy(y)))[informative], tolerance = 1e-9)
  expect_equal(score("nmi")[informative], unname(mi / hxy)[informative], tolerance = 1e-9)
  expect_equal(score("gain_ratio")[informative], unname(mi / hx)[informative], tolerance = 1e-9)
})

test_that("normalised mi_scores on a SummarizedExperiment score its rows", {
  skip_if_not_installed("SummarizedExperiment")
  case <- jmi_cases()$informative
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)), colData = data.frame(type = case$y))
  expect_equal_but_run(mi_scores(se, class = "type", nbins = case$nbins, normalize = "su", backend = "cpu"),
                       mi_scores(case$x, case$y, nbins = case$nbins, normalize = "su", backend = "cpu"))
})

test_that("an unknown normalisation is an error listing the known ones", {
  case <- jmi_cases()$informative
  expect_error(mi_scores(case$x, case$y, normalize = "symuncert", backend = "cpu"),
               "normalize must be one of 'none', 'su', 'nmi', 'gain_ratio'")
  expect_error(mi_scores(case$x, case$y, normalize = c("su", "nmi"), backend = "cpu"), "normalize must be one of")
})

test_that("normalised mi_scores on the GPU equal the CPU bitwise", {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
  for (case in c(jmi_cases()[c("informative", "sparse", "many_classes", "constant")], lapply(1:2, normalize_case))) {
    for (normalize in c("su", "nmi", "gain_ratio")) {
      cpu <- mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize, backend = "cpu")
      gpu <- mi_scores(case$x, case$y, nbins = case$nbins, normalize = normalize, backend = "gpu")
      expect_identical(gpu[[normalize]], cpu[[normalize]], info = normalize)
    }
  }
})

test_that("add_results() stores normalised scores under their own name", {
  skip_if_not_installed("SummarizedExperiment")
  case <- jmi_cases()$informative
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)), colData = data.frame(type = case$y))
  su <- mi_scores(se, class = "type", nbins = case$nbins, normalize = "su", backend = "cpu")
  se <- add_results(se, su)
  expect_identical(SummarizedExperiment::rowData(se)$fsgpu_su, su$su)
})

test_that("normalised scores are refused with an estimator other than the plug-in", {
  x <- matrix(c(1, 2, 3, 4, 1, 2, 3, 4), 8, 1)
  expect_error(mi_scores(x, rep(c("a", "b"), 4), nbins = 2, normalize = "su", estimator = "mm", backend = "cpu"),
               "estimator = \"emp\"")
})
