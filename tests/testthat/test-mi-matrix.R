# mi_matrix() and mi_network() on the CPU against the pure-R references (helper-pairs.R).

network_methods <- c("aracne", "clr", "mrnet", "mrnetb", "threshold")

# The reference network of a method from an MI matrix.
ref_network <- function(method, mim, eps = 0, threshold = 0) {
  m <- unname(mim)
  attributes(m) <- list(dim = dim(mim))
  w <- switch(method,
    aracne = ref_aracne(m, eps),
    clr = ref_clr(m),
    mrnet = ref_mrnet(m),
    mrnetb = ref_mrnetb(m),
    threshold = ref_threshold_network(m, threshold))
  dimnames(w) <- dimnames(mim)
  w
}

expect_network_equal <- function(got, want, info = NULL) {
  expect_identical(dim(got), dim(want), info = info)
  expect_identical(dimnames(got), dimnames(want), info = info)
  expect_identical(got > 0, want > 0, info = info)  # the same edges
  expect_equal(got, want, tolerance = 1e-12, info = info)
  expect_true(isSymmetric(unname(got), tol = 0), info = info)
  expect_true(all(diag(got) == 0), info = info)
}

test_that("mi_matrix equals the reference on categorical data, entropies on the diagonal", {
  for (seed in 51:52) {
    d <- data_pairs_categorical(seed = seed)
    got <- mi_matrix(d$x, backend = "cpu")
    expect_identical(dimnames(got), list(colnames(d$x), colnames(d$x)))
    expect_identical(attr(got, "units"), "bits")
    expect_identical(attr(got, "backend"), "cpu")
    expect_equal(strip_attributes(got), ref_mi_matrix(d$x), tolerance = 1e-9, ignore_attr = TRUE)
    expect_true(isSymmetric(unclass(strip_attributes(got)), tol = 0))
    expect_equal(unname(diag(got)), vapply(ref_code_list(d$x), ref_entropy, numeric(1)), tolerance = 1e-9)
    # Constant features: no entropy, no information with anything.
    expect_identical(unname(got[4, ]), numeric(12))
    expect_identical(unname(got[, 9]), numeric(12))
    # Exact copies and relabelled copies: bitwise-equal rows.
    expect_identical(unname(got[6, -c(2, 6)]), unname(got[2, -c(2, 6)]))
    expect_identical(unname(got[11, -c(2, 11)]), unname(got[2, -c(2, 11)]))
    expect_identical(got[2, 6], got[2, 2])
  }
  # Factors and data frames give the same matrix.
  d <- data_pairs_categorical(seed = 51)
  df <- as.data.frame(lapply(as.data.frame(d$x), factor))
  expect_identical(strip_attributes(mi_matrix(df, backend = "cpu")), strip_attributes(mi_matrix(d$x, backend = "cpu")))
})

test_that("mi_matrix bins numeric columns with equal width", {
  d <- data_informative(n = 90, p = 7, classes = 3, informative = 3, seed = 53)
  d$x[, 6] <- -1  # constant
  for (nbins in c(3, 8)) {
    got <- mi_matrix(d$x, nbins = nbins, backend = "cpu")
    expect_identical(attr(got, "nbins"), as.integer(nbins))
    expect_equal(strip_attributes(got), ref_mi_matrix(ref_codes(d$x, nbins)), tolerance = 1e-9, ignore_attr = TRUE)
  }
  # The default: the cube root of the sample count, rounded up.
  expect_identical(attr(mi_matrix(d$x, backend = "cpu"), "nbins"), 5L)
  # Sparse and data frame forms of the same numbers.
  sp <- data_sparse(n = 120, seed = 54)
  sp$x <- sp$x[, c(1:15, 22, 30, 31, 41)]  # with the empty, full, negative and stored-zero columns
  dense <- as.matrix(sp$x)
  expect_identical(strip_attributes(mi_matrix(sp$x, nbins = 6, backend = "cpu")),
                   strip_attributes(mi_matrix(dense, nbins = 6, backend = "cpu")))
  expect_identical(strip_attributes(mi_matrix(as.data.frame(dense), nbins = 6, backend = "cpu")),
                   strip_attributes(mi_matrix(dense, nbins = 6, backend = "cpu")))
  expect_equal(strip_attributes(mi_matrix(sp$x, nbins = 6, backend = "cpu")),
               ref_mi_matrix(ref_codes(dense, 6)), tolerance = 1e-9, ignore_attr = TRUE)
})

test_that("mi_matrix: nats, threads, and a subset of features", {
  d <- data_pairs_categorical(seed = 55)
  bits <- mi_matrix(d$x, backend = "cpu")
  nats <- mi_matrix(d$x, units = "nats", backend = "cpu")
  expect_identical(attr(nats, "units"), "nats")
  expect_equal(strip_attributes(nats), strip_attributes(bits) * log(2), tolerance = 1e-14)
  expect_identical(strip_attributes(mi_matrix(d$x, backend = "cpu", threads = 2)),
                   strip_attributes(mi_matrix(d$x, backend = "cpu", threads = 1)))
  wide <- data_pairs_categorical(n = 30, p = 400, seed = 56)
  expect_identical(strip_attributes(mi_matrix(wide$x, backend = "cpu", threads = 2)),
                   strip_attributes(mi_matrix(wide$x, backend = "cpu", threads = 1)))
  for (features in list(c(5L, 2L, 3L), c("g12", "g1"), 1:12)) {
    got <- mi_matrix(d$x, features = features, backend = "cpu")
    index <- if (is.character(features)) match(features, colnames(d$x)) else features
    expect_identical(strip_attributes(got), strip_attributes(bits)[index, index, drop = FALSE])
  }
  expect_identical(strip_attributes(mi_matrix(d$x, features = factor(c("g12", "g1")), backend = "cpu")),
                   strip_attributes(bits)[c(12, 1), c(12, 1)])
  dup <- d$x
  colnames(dup)[c(3, 5)] <- "g3"
  expect_error(mi_matrix(dup, features = c("g1", "g3"), backend = "cpu"), "features: 'g3' names several features")
  expect_error(mi_matrix(d$x, features = "nope", backend = "cpu"), "features: no feature named 'nope'")
  expect_error(mi_matrix(d$x, features = 0, backend = "cpu"), "features: column indices must be between 1 and 12")
  expect_error(mi_matrix(d$x, nbins = 0, backend = "cpu"), "nbins must be between")
  expect_error(mi_matrix(d$x[, 1, drop = FALSE], backend = "cpu"), "at least two features")
  expect_error(mi_matrix(d$x, features = "g3", backend = "cpu"), "at least two features")
  x_na <- d$x
  x_na[2, 2] <- NA
  expect_error(mi_matrix(x_na, backend = "cpu"), "missing or infinite values in feature 'g2'")
  expect_error(mi_matrix(d$x, class = "a", backend = "cpu"), "unknown arguments: class")
})

test_that("mi_matrix of a SummarizedExperiment uses its rows as features", {
  skip_if_not_installed("SummarizedExperiment")
  d <- data_pairs_categorical(seed = 57)
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(d$x), twice = t(d$x) * 2L))
  expect_identical(strip_attributes(mi_matrix(se, backend = "cpu")), strip_attributes(mi_matrix(d$x, backend = "cpu")))
  expect_identical(strip_attributes(mi_matrix(se, assay = "twice", features = c("g3", "g7"), backend = "cpu")),
                   strip_attributes(mi_matrix(d$x, features = c("g3", "g7"), backend = "cpu")))
  num <- data_informative(n = 60, p = 6, seed = 58)
  se_num <- SummarizedExperiment::SummarizedExperiment(list(expr = t(num$x)))
  expect_identical(strip_attributes(mi_matrix(se_num, nbins = 4, backend = "cpu")),
                   strip_attributes(mi_matrix(num$x, nbins = 4, backend = "cpu")))
  expect_identical(strip_attributes(mi_network(se_num, "clr", output = "matrix", nbins = 4, backend = "cpu")),
                   strip_attributes(mi_network(num$x, "clr", output = "matrix", nbins = 4, backend = "cpu")))
})

# Every column of x as categories (ref_codes() bins integer columns, as the jobs do with nbins).
ref_category_codes <- function(x) {
  columns <- if (is.data.frame(x)) as.list(x) else lapply(seq_len(ncol(x)), function(j) x[, j])
  lapply(columns, ref_categorical)
}

test_that("mi_matrix's estimators equal infotheo's definitions, diagonal included", {
  d <- data_pairs_categorical(n = 70, seed = 53)
  num <- data_informative(n = 90, p = 7, seed = 54)
  for (case in list(list(x = d$x, nbins = NULL), list(x = num$x, nbins = 6))) {
    codes <- if (is.null(case$nbins)) ref_category_codes(case$x) else ref_codes(case$x, case$nbins)
    emp <- mi_matrix(case$x, nbins = case$nbins, backend = "cpu")
    expect_identical(strip_attributes(mi_matrix(case$x, nbins = case$nbins, backend = "cpu", estimator = "emp")),
                     strip_attributes(emp))
    for (estimator in c("mm", "sg", "shrink")) {
      got <- mi_matrix(case$x, nbins = case$nbins, units = "nats", backend = "cpu", estimator = estimator)
      want <- ref_mutinformation_matrix(codes, estimator)
      expect_equal(unname(strip_attributes(got)), want, tolerance = 1e-9, info = estimator)
      expect_identical(attr(got, "estimator"), estimator)
      expect_identical(strip_attributes(mi_matrix(case$x, nbins = case$nbins, units = "nats", backend = "cpu",
                                                  estimator = estimator, threads = 2)), strip_attributes(got))
      # mi_network passes the estimator on to mi_matrix.
      expect_identical(mi_network(case$x, "clr", nbins = case$nbins, estimator = estimator, output = "matrix",
                                  backend = "cpu"),
                       mi_network(mim = mi_matrix(case$x, nbins = case$nbins, estimator = estimator, backend = "cpu"),
                                  method = "clr", output = "matrix"))
    }
  }
  expect_error(mi_matrix(d$x, backend = "cpu", estimator = "chao"), "estimator must be one of")
  # Many categories (kept so: categorical = TRUE): pairs counted class by class (count_large) give the same
  # shrink estimates.
  many <- with_seed(71, matrix(sample(0:99, 300 * 4, replace = TRUE), 300, 4))
  expect_equal(unname(strip_attributes(mi_matrix(many, units = "nats", backend = "cpu", estimator = "shrink", categorical = TRUE))),
               ref_mutinformation_matrix(ref_category_codes(many), "shrink"), tolerance = 1e-9)
})

test_that("networks of a random symmetric matrix equal the references", {
  for (seed in 61:63) {
    mim <- random_mim(9, seed)
    for (method in network_methods) {
      got <- mi_network(mim = mim, method = method, threshold = 0.5, output = "matrix")
      expect_network_equal(got, ref_network(method, mim, threshold = 0.5), info = paste(method, seed))
    }
    for (eps in c(0.02, 0.1, 0.3)) {
      expect_network_equal(mi_network(mim = mim, method = "aracne", eps = eps, output = "matrix"),
                           ref_network("aracne", mim, eps = eps), info = paste(eps, seed))
    }
  }
  # A bigger one for the threaded network code.
  mim <- random_mim(70, 64)
  for (method in c("aracne", "mrnet", "mrnetb")) {
    one <- mi_network(mim = mim, method = method, output = "matrix", threads = 1)
    expect_network_equal(one, ref_network(method, mim), info = method)
    expect_identical(mi_network(mim = mim, method = method, output = "matrix", threads = 2), one)
  }
})

test_that("MRNETB of a real expression slice equals the reference", {
  skip_if_not_installed("ALL")
  skip_if_not_installed("Biobase")
  all <- new.env()
  utils::data("ALL", package = "ALL", envir = all)
  expr <- Biobase::exprs(all$ALL)
  top <- order(apply(expr, 1, stats::var), decreasing = TRUE)[1:40]
  x <- t(expr[top, ])
  mim <- mi_matrix(x, nbins = 5, backend = "cpu")
  got <- mi_network(mim = mim, method = "mrnetb", output = "matrix")
  expect_network_equal(got, ref_network("mrnetb", strip_attributes(mim)))
  expect_true(sum(got > 0) > 0)
  # Backward elimination keeps other edges than forward selection.
  expect_false(identical(got > 0, mi_network(mim = mim, method = "mrnet", output = "matrix") > 0))
})

test_that("networks of mi_matrix equal the references, from x or from mim", {
  d <- data_pairs_categorical(n = 80, seed = 65)
  num <- data_informative(n = 100, p = 9, informative = 4, seed = 66)
  num$x[, 8] <- num$x[, 7] + rnorm(100, sd = 0.2)
  for (case in list(list(x = d$x, nbins = NULL), list(x = num$x, nbins = 5))) {
    mim <- mi_matrix(case$x, nbins = case$nbins, backend = "cpu")
    for (method in network_methods) {
      t <- stats::median(mim[upper.tri(mim)])
      got <- mi_network(mim = mim, method = method, threshold = t, output = "matrix")
      expect_network_equal(got, ref_network(method, strip_attributes(mim), threshold = t), info = method)
      from_x <- mi_network(case$x, method = method, threshold = t, output = "matrix", nbins = case$nbins,
                           backend = "cpu")
      expect_identical(from_x, got)
    }
  }
  # nats: the MI matrix in nats, and eps and threshold with it.
  mim <- mi_matrix(num$x, nbins = 5, units = "nats", backend = "cpu")
  expect_identical(mi_network(num$x, "aracne", eps = 0.01, units = "nats", output = "matrix", nbins = 5,
                              backend = "cpu"),
                   mi_network(mim = mim, method = "aracne", eps = 0.01, output = "matrix"))
})

test_that("edges and igraph outputs carry the matrix's edges", {
  mim <- random_mim(8, 67)
  for (method in network_methods) {
    w <- ref_network(method, mim, threshold = 0.6)
    edges <- mi_network(mim = mim, method = method, threshold = 0.6, output = "edges")
    want <- ref_edges(w, mim, rownames(mim))
    expect_identical(names(edges), c("from", "to", "weight", "mi"))
    expect_identical(edges[c("from", "to")], want[c("from", "to")], info = method)
    expect_equal(edges$weight, want$weight, tolerance = 1e-12)
    expect_identical(edges$mi, want$mi)
    expect_true(all(edges$weight > 0))
    skip_if_not_installed("igraph")
    g <- mi_network(mim = mim, method = method, threshold = 0.6)
    expect_true(igraph::is_igraph(g))
    expect_false(igraph::is_directed(g))
    expect_equal(igraph::vcount(g), 8)
    expect_identical(igraph::V(g)$name, rownames(mim))
    expect_equal(igraph::ecount(g), nrow(edges))
    expect_identical(igraph::E(g)$weight, edges$weight)
    expect_identical(igraph::E(g)$mi, edges$mi)
    ends <- igraph::ends(g, igraph::E(g))
    expect_identical(unname(ends[, 1]), edges$from)
    expect_identical(unname(ends[, 2]), edges$to)
    adjacency <- as.matrix(igraph::as_adjacency_matrix(g, attr = "weight", sparse = FALSE))
    expect_equal(adjacency[rownames(mim), rownames(mim)], w, tolerance = 1e-12, ignore_attr = TRUE)
  }
})

test_that("a network with no edge still has every vertex", {
  mim <- random_mim(5, 68)
  edges <- mi_network(mim = mim, method = "threshold", threshold = 10, output = "edges")
  expect_identical(nrow(edges), 0L)
  expect_identical(names(edges), c("from", "to", "weight", "mi"))
  skip_if_not_installed("igraph")
  g <- mi_network(mim = mim, method = "threshold", threshold = 10)
  expect_equal(igraph::vcount(g), 5)
  expect_equal(igraph::ecount(g), 0)
})

test_that("known answers: ARACNE's triangle, eps, CLR's flat row, MRNET's ties", {
  # A chain 1 - 2 - 3: the weak edge (1, 3) of the triangle goes, unless eps covers the gap.
  mim <- matrix(c(5, 0.9, 0.3,
                  0.9, 5, 0.8,
                  0.3, 0.8, 5), 3, byrow = TRUE)
  w <- mi_network(mim = mim, method = "aracne", output = "matrix")
  expect_identical(unname(w), matrix(c(0, 0.9, 0, 0.9, 0, 0.8, 0, 0.8, 0), 3))
  expect_identical(rownames(w), c("X1", "X2", "X3"))
  expect_identical(unname(mi_network(mim = mim, method = "aracne", eps = 0.49, output = "matrix"))[1, 3], 0)
  expect_identical(unname(mi_network(mim = mim, method = "aracne", eps = 0.55, output = "matrix"))[1, 3], 0.3)
  expect_identical(unname(mi_network(mim = mim, method = "aracne", eps = 0.6, output = "matrix"))[1, 3], 0.3)
  # Equal edges: nothing is strictly the weakest, nothing goes.
  flat <- matrix(0.4, 4, 4)
  expect_identical(sum(mi_network(mim = flat, method = "aracne", output = "matrix") > 0), 12L)
  # Larger eps never removes more.
  mim <- random_mim(10, 69)
  counts <- vapply(c(0, 0.05, 0.1, 0.2, 0.5, 1), function(eps) {
    sum(mi_network(mim = mim, method = "aracne", eps = eps, output = "matrix") > 0)
  }, numeric(1))
  expect_true(all(diff(counts) >= 0))
  expect_identical(counts[6], 90)
  # CLR: a row that is flat off the diagonal has sd 0 and z 0.
  mim <- random_mim(6, 70)
  mim[1, -1] <- mim[-1, 1] <- 0.5
  got <- mi_network(mim = mim, method = "clr", output = "matrix")
  expect_network_equal(got, ref_network("clr", mim))
  z_j <- function(j) {
    r <- mim[j, -j]
    max(0, (0.5 - mean(r)) / stats::sd(r))
  }
  expect_equal(unname(got[1, 2:6]), vapply(2:6, z_j, numeric(1)), tolerance = 1e-12)
  # MRNET with every MI equal: each target picks its lowest other first, then only scores 0:
  # a star around feature 1.
  star <- mi_network(mim = flat, method = "mrnet", output = "matrix")
  want <- matrix(0, 4, 4)
  want[1, 2:4] <- want[2:4, 1] <- 0.4
  expect_identical(unname(star), want)
  # MRNET stops at a negative score: target 1 picks 2, then 3 scores 0.1 - 0.9 < 0.
  mim <- matrix(c(1, 0.5, 0.1,
                  0.5, 1, 0.9,
                  0.1, 0.9, 1), 3, byrow = TRUE)
  w <- unname(mi_network(mim = mim, method = "mrnet", output = "matrix"))
  expect_identical(w[1, 2], 0.5)
  expect_identical(w[2, 3], 0.9)
  expect_identical(w[1, 3], 0)  # 1 never picks 3; 3 picks 2 (0.9), then 1 scores 0.1 - 0.5 < 0
})

test_that("the diagonal of mim is ignored", {
  mim <- random_mim(7, 71)
  other <- mim
  diag(other) <- c(0, 100, -3, 0.5, 7, 1e-9, 2)
  nas <- mim
  diag(nas) <- NA
  for (method in network_methods) {
    want <- mi_network(mim = mim, method = method, threshold = 0.4, output = "matrix")
    expect_identical(mi_network(mim = other, method = method, threshold = 0.4, output = "matrix"), want)
    expect_identical(mi_network(mim = nas, method = method, threshold = 0.4, output = "matrix"), want)
  }
  # mi_pairs' matrix (NA on the diagonal) is a valid mim.
  d <- data_pairs_categorical(seed = 72)
  pm <- mi_pairs(d$x, d$y, output = "matrix", backend = "cpu")
  expect_network_equal(mi_network(mim = pm, method = "clr", output = "matrix"),
                       ref_network("clr", replace(strip_attributes(pm), is.na(pm), 0)))
})

test_that("mi_network rejects bad matrices and arguments", {
  mim <- random_mim(5, 73)
  asym <- mim
  asym[1, 2] <- asym[1, 2] + 1e-9
  expect_error(mi_network(mim = asym, method = "aracne", output = "matrix"), "mim must be symmetric")
  expect_error(mi_network(mim = mim[, -1], method = "clr", output = "matrix"), "square numeric matrix")
  expect_error(mi_network(mim = mim[1:2, 1:2], method = "clr", output = "matrix"), "at least 3 x 3")
  expect_error(mi_network(mim = matrix(letters[1:9], 3), method = "clr", output = "matrix"), "square numeric")
  expect_error(mi_network(mim = as.vector(mim), method = "clr", output = "matrix"), "square numeric")
  na <- mim
  na[2, 3] <- na[3, 2] <- NA
  expect_error(mi_network(mim = na, method = "mrnet", output = "matrix"), "missing or infinite values")
  inf <- mim
  inf[2, 3] <- inf[3, 2] <- Inf
  expect_error(mi_network(mim = inf, method = "mrnet", output = "matrix"), "missing or infinite values")
  expect_error(mi_network(method = "aracne"), "give x \\(the data\\) or mim")
  expect_error(mi_network(matrix(rnorm(60), 20), mim = mim, method = "aracne"), "not both")
  dup <- mim
  dimnames(dup) <- list(c("a", "b", "a", "c", "d"), c("a", "b", "a", "c", "d"))
  expect_error(mi_network(mim = dup, method = "clr"), "mim has duplicated names 'a'")
  rownames(dup) <- NULL
  expect_error(mi_network(mim = dup, method = "clr"), "mim has duplicated names 'a'")
  expect_error(mi_network(mim = mim, method = "aracne", eps = -0.1), "eps must not be negative")
  expect_error(mi_network(mim = mim, method = "aracne", eps = NA), "eps must be one finite number")
  expect_error(mi_network(mim = mim, method = "aracne", eps = c(0, 1)), "eps must be one finite number")
  expect_error(mi_network(mim = mim, method = "threshold", threshold = Inf), "threshold must be one finite number")
  expect_error(mi_network(mim = mim, method = "louvain"), "should be one of")
  expect_error(mi_network(mim = mim, method = "clr", output = "graph"), "should be one of")
  expect_error(mi_network(mim = mim, method = "clr", nbins = 4), "unknown arguments: nbins")
  # A data frame mim and one without names are fine.
  expect_identical(mi_network(mim = as.data.frame(mim), method = "clr", output = "matrix"),
                   mi_network(mim = mim, method = "clr", output = "matrix"))
  expect_identical(rownames(mi_network(mim = unname(mim), method = "clr", output = "matrix")), paste0("X", 1:5))
})
