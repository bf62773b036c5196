# cmi_scores() and jmi_scores() against the pure-R references ref_cmi_scores and ref_jmi_scores.

scorers <- list(
  cmi = list(engine = function(...) cmi_scores(...), reference = ref_cmi_scores),
  jmi = list(engine = function(...) jmi_scores(...), reference = ref_jmi_scores)
)

expect_scores_match <- function(got, ref, column, case, what) {
  expect_s3_class(got, "data.frame")
  expect_identical(got$index, seq_len(ncol(case$x)), info = what)
  expect_identical(got$feature, colnames(case$x), info = what)
  expect_lt(max(abs(got[[column]] - ref[[column]])), 1e-9)
}

# Conditioning vectors with one value per sample, of every kind z may take.
z_vectors <- function(case) {
  n <- nrow(case$x)
  cls <- as.integer(factor(case$y))
  with_seed(41, list(
    double = rnorm(n) + cls,                                          # binned
    integer = sample(0:3, n, replace = TRUE) + cls,                  # categorical
    factor = factor(sample(c("p", "q", "r"), n, replace = TRUE), levels = c("r", "q", "p", "unused")),
    logical = runif(n) < 0.5,
    character = sample(c("lo", "hi"), n, replace = TRUE)
  ))
}

test_that("scores conditioned on a feature of x, by name and by index, equal the reference", {
  for (case_name in names(jmi_cases())) {
    case <- jmi_cases()[[case_name]]
    j <- ncol(case$x) %/% 2L + 1L
    for (name in names(scorers)) {
      scorer <- scorers[[name]]
      ref <- scorer$reference(case$x, case$y, j, nbins = case$nbins)
      by_name <- scorer$engine(case$x, case$y, colnames(case$x)[j], nbins = case$nbins, backend = "cpu")
      expect_scores_match(by_name, ref, name, case, paste(name, case_name))
      expect_equal_but_run(scorer$engine(case$x, case$y, j, nbins = case$nbins, backend = "cpu"), by_name)
      expect_equal_but_run(scorer$engine(case$x, case$y, as.double(j), nbins = case$nbins, backend = "cpu"), by_name)
    }
  }
})

test_that("a feature as z scores as its values given as a vector", {
  # Binned with the same nbins and rule, the column and the vector are the same variable.
  for (case in jmi_cases()[c("informative", "constant", "mixed_df", "sparse")]) {
    for (j in c(1L, 3L)) {
      column <- if (is.data.frame(case$x)) case$x[[j]] else as.matrix(case$x)[, j]
      for (name in names(scorers)) {
        engine <- scorers[[name]]$engine
        expect_identical(engine(case$x, case$y, column, nbins = case$nbins, backend = "cpu")[[name]],
                         engine(case$x, case$y, j, nbins = case$nbins, backend = "cpu")[[name]])
      }
    }
  }
})

test_that("scores conditioned on a vector of each kind equal the reference", {
  for (case_name in c("informative", "ties_categorical", "singletons", "categorical_df", "sparse")) {
    case <- jmi_cases()[[case_name]]
    for (kind in names(z_vectors(case))) {
      z <- z_vectors(case)[[kind]]
      for (name in names(scorers)) {
        scorer <- scorers[[name]]
        got <- scorer$engine(case$x, case$y, z, nbins = case$nbins, backend = "cpu")
        expect_scores_match(got, scorer$reference(case$x, case$y, z, nbins = case$nbins), name, case,
                            paste(name, case_name, kind))
      }
    }
  }
})

test_that("the feature z itself scores I(Z;Y|Z) = 0 and I(Z,Z;Y) = I(Z;Y)", {
  case <- jmi_cases()$many_classes
  mi <- mi_scores(case$x, case$y, nbins = case$nbins, backend = "cpu")
  expect_equal(cmi_scores(case$x, case$y, 9, nbins = case$nbins, backend = "cpu")$cmi[9], 0)
  expect_equal(jmi_scores(case$x, case$y, 9, nbins = case$nbins, backend = "cpu")$jmi[9], mi$mi[9],
               tolerance = 1e-12)
  # A constant z conditions on nothing: I(X;Y|Z) = I(X,Z;Y) = I(X;Y).
  constant <- rep(2.5, nrow(case$x))
  expect_equal(cmi_scores(case$x, case$y, constant, nbins = case$nbins, backend = "cpu")$cmi, mi$mi,
               tolerance = 1e-12)
  expect_equal(jmi_scores(case$x, case$y, constant, nbins = case$nbins, backend = "cpu")$jmi, mi$mi,
               tolerance = 1e-12)
})

test_that("scores carry their settings, convert to nats and do not depend on the thread count", {
  case <- jmi_cases()$informative
  for (name in names(scorers)) {
    engine <- scorers[[name]]$engine
    bits <- engine(case$x, case$y, "g2", nbins = case$nbins, backend = "cpu", threads = 1)
    expect_identical(attr(bits, "nbins"), as.integer(case$nbins))
    expect_identical(attr(bits, "units"), "bits")
    expect_identical(attr(bits, "backend"), "cpu")
    expect_equal_but_run(engine(case$x, case$y, "g2", nbins = case$nbins, backend = "cpu", threads = 2), bits)
    nats <- engine(case$x, case$y, "g2", nbins = case$nbins, backend = "cpu", units = "nats")
    expect_identical(attr(nats, "units"), "nats")
    expect_equal(nats[[name]], bits[[name]] * log(2), tolerance = 1e-14)
  }
})

test_that("the default nbins bins x and a numeric z alike", {
  case <- jmi_cases()$informative
  nbins <- attr(mi_scores(case$x, case$y, backend = "cpu"), "nbins")
  z <- z_vectors(case)$double
  for (name in names(scorers)) {
    got <- scorers[[name]]$engine(case$x, case$y, z, backend = "cpu")
    expect_identical(attr(got, "nbins"), nbins)
    expect_scores_match(got, scorers[[name]]$reference(case$x, case$y, z, nbins = nbins), name, case, name)
  }
})

test_that("a z that is neither a feature nor one value per sample is an error", {
  case <- jmi_cases()$informative
  n <- nrow(case$x)
  for (name in names(scorers)) {
    engine <- function(z) scorers[[name]]$engine(case$x, case$y, z, backend = "cpu")
    expect_error(engine(rnorm(n - 1)), "z")
    expect_error(engine(c(1, 2)), "z")
    expect_error(engine("nope"), "nope")
    expect_error(engine(ncol(case$x) + 1))
    expect_error(engine(0))
    expect_error(engine(replace(rnorm(n), 4, NA)), "z|NA")
    expect_error(engine(factor(replace(rep(c("a", "b"), length.out = n), 7, NA))), "z|NA")
    expect_error(engine(NA_character_))
  }
})

test_that("scores of a SummarizedExperiment are those of the matrix of its transposed assay", {
  skip_if_not_installed("SummarizedExperiment")
  case <- jmi_cases()$informative
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(case$x)), colData = data.frame(type = case$y))
  z <- z_vectors(case)$factor
  expect_equal_but_run(cmi_scores(se, class = "type", z = "g4", nbins = case$nbins, backend = "cpu"),
                       cmi_scores(case$x, case$y, "g4", nbins = case$nbins, backend = "cpu"))
  expect_equal_but_run(jmi_scores(se, class = "type", z = z, nbins = case$nbins, backend = "cpu"),
                       jmi_scores(case$x, case$y, z, nbins = case$nbins, backend = "cpu"))
})
