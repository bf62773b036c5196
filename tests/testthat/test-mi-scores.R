# mi_scores() against the pure-R reference, and its agreement with JMI's first step.

test_that("mi_scores equals the reference I(X;Y) on every reference data set", {
  for (case in jmi_cases()) {
    got <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
    codes <- ref_codes(case$x, case$nbins)
    want <- vapply(codes, ref_mi, numeric(1), y = as.integer(factor(case$y)))
    expect_equal(got$mi, unname(want), tolerance = 1e-9)
    expect_identical(got$index, seq_along(codes))
  }
})

test_that("mi_scores is what JMI selects first, in bits and nats, for any thread count", {
  case <- jmi_cases()$informative
  mi <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", threads = 1)
  sel <- select_features(case$x, case$y, k = 1, nbins = case$nbins, backend = "cpu")
  expect_identical(sel$selection$score, max(mi$mi))
  expect_identical(sel$selection$index, which.max(mi$mi))
  expect_identical(mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", threads = 3), mi)
  nats <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu", units = "nats")
  expect_equal(nats$mi, mi$mi * log(2))
})

test_that("mi_scores on the GPU equals the CPU bitwise", {
  skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")
  for (case in jmi_cases()[c("informative", "sparse", "many_classes")]) {
    cpu <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
    gpu <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "gpu")
    expect_identical(gpu$mi, cpu$mi)
  }
})

test_that("mi_scores on a SummarizedExperiment scores its rows", {
  skip_if_not_installed("SummarizedExperiment")
  case <- jmi_cases()$informative
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)),
                                                   colData = data.frame(type = case$y))
  expect_identical(mi_scores(se, class = "type", nbins = case$nbins, backend = "cpu"),
                   mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu"))
})
