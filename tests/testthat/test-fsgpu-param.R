# FsgpuParam: BiocNeighbors' buildIndex(), findKNN()/queryKNN() and findNeighbors()/
# queryNeighbors() on fsgpu's exact searches, checked against BiocNeighbors' own exact searches
# (identical distances, not merely equal) and through bluster. BiocNeighbors' own test files,
# adapted, are in test-biocneighbors-suite.R; the GPU against the CPU in test-gpu-fsgpu-param.R.

skip_without_bluster <- function() {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("bluster")
  skip_if_not_installed("igraph")
}

test_that("findKNN and queryKNN equal ExhaustiveParam's for every distance, distances bit for bit", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(11)
  x <- matrix(rnorm(300 * 8), 300, 8)
  q <- x[1:25, ] + 0.1
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    ours <- BiocNeighbors::findKNN(x, k = 7, BNPARAM = FsgpuParam(d, backend = "cpu"))
    ref <- BiocNeighbors::findKNN(x, k = 7, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d))
    expect_identical(ours, ref, info = d)
    ours <- BiocNeighbors::queryKNN(x, q, k = 4, BNPARAM = FsgpuParam(d, backend = "cpu"))
    ref <- BiocNeighbors::queryKNN(x, q, k = 4, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d))
    expect_identical(ours, ref, info = d)
  }
})

test_that("findKNN honours get.index, get.distance, last, subset, transposed and caps k", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(12)
  x <- matrix(rnorm(80 * 5), 80, 5, dimnames = list(paste0("p", 1:80), NULL))
  param <- FsgpuParam(backend = "cpu", threads = 1)
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  same <- function(...) {
    ours <- BiocNeighbors::findKNN(x, ..., BNPARAM = param)
    ref <- BiocNeighbors::findKNN(x, ..., BNPARAM = exhaustive)
    expect_identical(ours, ref)
  }
  same(k = 5, last = 2)
  same(k = 5, get.distance = FALSE)
  same(k = 5, get.index = FALSE)
  same(k = 5, subset = c(9, 3))
  same(k = 5, subset = c("p4", "p70"), last = 1)
  same(k = 5, subset = seq_len(80) %% 7 == 0)
  same(k = 3, warn.ties = FALSE)
  ours <- BiocNeighbors::queryKNN(x, t(x[1:4, ]), k = 3, transposed = TRUE, BNPARAM = param)
  ref <- BiocNeighbors::queryKNN(x, t(x[1:4, ]), k = 3, transposed = TRUE, BNPARAM = exhaustive)
  expect_identical(ours$index, ref$index)
  expect_warning(capped <- BiocNeighbors::findKNN(x[1:6, ], k = 10, BNPARAM = param), "'k' capped")
  expect_identical(dim(capped$index), c(6L, 5L))
  expect_error(BiocNeighbors::findKNN(x, k = 3, BNPARAM = param, precomputed = list()), "must be an FsgpuIndex")
  expect_error(BiocNeighbors::findKNN(x, k = 3, BNPARAM = param, raw.index = TRUE), "not valid")
})

test_that("FsgpuParam checks its arguments and prints", {
  skip_if_not_installed("BiocNeighbors")
  p <- FsgpuParam("Manhattan", backend = "cpu", threads = 2, devices = 0)
  expect_s4_class(p, "BiocNeighborParam")
  expect_identical(BiocNeighbors::bndistance(p), "Manhattan")
  expect_output(show(p), "class: FsgpuParam.*distance: Manhattan.*backend: cpu.*threads: 2.*devices: 0")
  expect_error(FsgpuParam("Hamming"), "should be one of")
  expect_error(FsgpuParam(backend = "tpu"), "backend must be")
  expect_error(FsgpuParam(devices = -1), "devices must be")
  expect_error(FsgpuParam(threads = 0), "threads must be")
  expect_error(FsgpuParam(quiet = NA), "quiet must be TRUE or FALSE")
  expect_output(show(FsgpuParam()), "quiet: TRUE")
})

test_that("FsgpuParam is quiet by default, and shows progress with quiet = FALSE", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(14)
  x <- matrix(rnorm(50 * 4), 50, 4)
  seen <- character()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, job), fsgpu.progress_interval = 0)
  on.exit(options(old))
  expect_silent(quiet <- BiocNeighbors::findKNN(x, k = 3, BNPARAM = FsgpuParam("Cosine", backend = "cpu")))
  expect_identical(seen, character())
  loud <- FsgpuParam("Cosine", backend = "cpu", quiet = FALSE)
  shown <- BiocNeighbors::findKNN(x, k = 3, BNPARAM = loud)
  expect_true(any(grepl("nearest neighbours", seen)))
  expect_identical(shown, quiet)
  BiocNeighbors::findNeighbors(x, threshold = 0.5, BNPARAM = loud)
  expect_true(any(grepl("within a distance", seen)))
})

test_that("buildIndex() gives an index whose searches equal BiocNeighbors' and survive saveRDS()", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(15)
  x <- matrix(runif(400 * 6), 400, 6, dimnames = list(paste0("c", 1:400), NULL))
  q <- matrix(runif(30 * 6), 30, 6)
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    index <- BiocNeighbors::buildIndex(x, BNPARAM = FsgpuParam(d, backend = "cpu"))
    ref <- BiocNeighbors::buildIndex(x, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d))
    expect_s4_class(index, "BiocNeighborIndex")
    expect_identical(BiocNeighbors::bndata(index), BiocNeighbors::bndata(ref), info = d)
    expect_identical(BiocNeighbors::bndistance(index), d)
    expect_identical(dimnames(index), dimnames(ref))
    expect_identical(BiocNeighbors::findKNN(BNINDEX = index, k = 6), BiocNeighbors::findKNN(BNINDEX = ref, k = 6),
                     info = d)
    # BiocNeighbors 1.16 leaves the queries of a Cosine BNINDEX as given (its query code takes
    # the distance from an argument of its own, Euclidean by default); fsgpu scales them as
    # BiocNeighbors does when it builds the index in the same call.
    unit_q <- if (d == "Cosine") t(BiocNeighbors:::l2norm(t(q))) else q
    expect_identical(BiocNeighbors::queryKNN(BNINDEX = index, query = q, k = 6),
                     BiocNeighbors::queryKNN(BNINDEX = ref, query = unit_q, k = 6), info = d)
    expect_identical(BiocNeighbors::queryKNN(BNINDEX = index, query = q, k = 6),
                     BiocNeighbors::queryKNN(x, q, k = 6, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = d)))
    # precomputed = and BNINDEX with the parameter are the same index
    expect_identical(BiocNeighbors::findKNN(k = 6, precomputed = index, BNPARAM = FsgpuParam(d)),
                     BiocNeighbors::findKNN(BNINDEX = index, k = 6, BNPARAM = FsgpuParam(d)))
    expect_identical(BiocNeighbors::findKNN(BNINDEX = index, k = 6, raw.index = TRUE),
                     BiocNeighbors::findKNN(BNINDEX = index, k = 6))
    # the prepared points are gone after saveRDS(): they are prepared again from the data
    file <- tempfile(fileext = ".rds")
    saveRDS(index, file)
    restored <- readRDS(file)
    expect_false(fsgpu:::fsgpu_bn_index_live(restored@handle))
    expect_identical(BiocNeighbors::findKNN(BNINDEX = restored, k = 6), BiocNeighbors::findKNN(BNINDEX = index, k = 6))
    expect_identical(BiocNeighbors::findNeighbors(BNINDEX = restored, threshold = 0.2),
                     BiocNeighbors::findNeighbors(BNINDEX = index, threshold = 0.2))
  }
  expect_output(show(index), "class: FsgpuIndex.*backend: cpu")
  expect_error(BiocNeighbors::buildIndex(x, BNPARAM = FsgpuParam(), extra = 1), "unused|extra")
  expect_error(BiocNeighbors::buildIndex(rbind(x, NA), BNPARAM = FsgpuParam()), "missing or infinite")
})

# BiocNeighbors' range results in index order (its KmknnParam returns its own order).
in_index_order <- function(res) {
  o <- lapply(res$index, order)
  list(index = mapply(`[`, res$index, o, SIMPLIFY = FALSE), distance = mapply(`[`, res$distance, o, SIMPLIFY = FALSE))
}

test_that("findNeighbors and queryNeighbors equal KmknnParam's, distances bit for bit, in index order", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(16)
  x <- matrix(runif(700 * 7), 700, 7, dimnames = list(paste0("c", 1:700), NULL))
  q <- matrix(runif(40 * 7), 40, 7)
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    param <- FsgpuParam(d, backend = "cpu", threads = 2)
    kmknn <- BiocNeighbors::KmknnParam(distance = d)
    t <- c(Euclidean = 0.4, Manhattan = 0.9, Cosine = 0.1)[[d]]
    ours <- BiocNeighbors::findNeighbors(x, threshold = t, BNPARAM = param)
    expect_identical(ours, in_index_order(BiocNeighbors::findNeighbors(x, threshold = t, BNPARAM = kmknn)), info = d)
    expect_true(all(mapply(function(i, p) p %in% i, ours$index, seq_along(ours$index))))  # each point is its own
    expect_true(length(unique(lengths(ours$index))) > 1)
    expect_identical(BiocNeighbors::queryNeighbors(x, q, threshold = t, BNPARAM = param),
                     in_index_order(BiocNeighbors::queryNeighbors(x, q, threshold = t, BNPARAM = kmknn)), info = d)
    # a threshold per point, subset, counts only, get.index / get.distance
    ts <- rep(c(t / 2, t, 2 * t), length.out = 40)
    expect_identical(BiocNeighbors::queryNeighbors(x, q, threshold = ts, subset = 40:1, BNPARAM = param),
                     in_index_order(BiocNeighbors::queryNeighbors(x, q, threshold = ts, subset = 40:1,
                                                                  BNPARAM = kmknn)), info = d)
    expect_identical(BiocNeighbors::findNeighbors(x, threshold = t, subset = c("c9", "c2"), BNPARAM = param),
                     lapply(ours, `[`, c(9, 2)))
    expect_identical(BiocNeighbors::findNeighbors(x, threshold = t, get.index = FALSE, get.distance = FALSE,
                                                  BNPARAM = param), lengths(ours$index))
    expect_identical(BiocNeighbors::findNeighbors(x, threshold = t, get.distance = FALSE, BNPARAM = param),
                     ours["index"])
    expect_identical(BiocNeighbors::findNeighbors(x, threshold = t, get.index = FALSE, BNPARAM = param),
                     ours["distance"])
  }
  expect_error(BiocNeighbors::findNeighbors(x, threshold = 0, BNPARAM = param), "positive")
  expect_error(BiocNeighbors::findNeighbors(x, threshold = 1:2, BNPARAM = param), "should be equal to")
})

test_that("a point at exactly the threshold is in when its squared distance is at most threshold^2", {
  skip_if_not_installed("BiocNeighbors")
  lattice <- as.matrix(expand.grid(0:3, 0:3, 0:3))
  for (t in c(1, sqrt(2), sqrt(3), 2)) {
    ours <- BiocNeighbors::findNeighbors(lattice, threshold = t, BNPARAM = FsgpuParam(backend = "cpu"))
    ref <- BiocNeighbors::findNeighbors(lattice, threshold = t, BNPARAM = BiocNeighbors::KmknnParam())
    expect_identical(ours, in_index_order(ref), info = t)
  }
})

test_that("warn.ties warns as BiocNeighbors does, and ties go to the lower index", {
  skip_if_not_installed("BiocNeighbors")
  lattice <- as.matrix(expand.grid(0:4, 0:4, 0:3))
  param <- FsgpuParam(backend = "cpu")
  expect_warning(ours <- BiocNeighbors::findKNN(lattice, k = 5, BNPARAM = param), "tied distances")
  expect_warning(ref <- BiocNeighbors::findKNN(lattice, k = 5, BNPARAM = BiocNeighbors::ExhaustiveParam()),
                 "tied distances")
  expect_identical(ours, ref)
  expect_silent(BiocNeighbors::findKNN(lattice, k = 5, warn.ties = FALSE, BNPARAM = param))
  # a tie only with the (k + 1)-th neighbour is a tie
  x <- cbind(c(0, 1, 3, 6, 10, 10.5))
  expect_warning(BiocNeighbors::queryKNN(x, cbind(8), k = 1, BNPARAM = param), "tied")
  expect_warning(BiocNeighbors::queryKNN(x, cbind(8), k = 1, BNPARAM = BiocNeighbors::ExhaustiveParam()), "tied")
  expect_silent(BiocNeighbors::queryKNN(x, cbind(8.1), k = 1, BNPARAM = param))
  expect_silent(BiocNeighbors::findKNN(x, k = 2, BNPARAM = param, subset = 6))
})

test_that("no columns give distances of 0 and no rows empty results, as in BiocNeighbors", {
  skip_if_not_installed("BiocNeighbors")
  set.seed(17)
  x <- matrix(runif(30 * 4), 30, 4)
  param <- FsgpuParam(backend = "cpu")
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  kmknn <- BiocNeighbors::KmknnParam()
  same <- function(ours, ref) expect_identical(suppressWarnings(ours), suppressWarnings(ref))
  same(BiocNeighbors::findKNN(x[, 0], k = 4, BNPARAM = param), BiocNeighbors::findKNN(x[, 0], k = 4, BNPARAM = exhaustive))
  same(BiocNeighbors::queryKNN(x[, 0], x[1:3, 0], k = 4, BNPARAM = param),
       BiocNeighbors::queryKNN(x[, 0], x[1:3, 0], k = 4, BNPARAM = exhaustive))
  same(BiocNeighbors::queryKNN(x, x[0, ], k = 4, BNPARAM = param), BiocNeighbors::queryKNN(x, x[0, ], k = 4, BNPARAM = exhaustive))
  same(BiocNeighbors::findNeighbors(x[, 0], threshold = 1, BNPARAM = param),
       BiocNeighbors::findNeighbors(x[, 0], threshold = 1, BNPARAM = kmknn))
  same(BiocNeighbors::findNeighbors(x[0, ], threshold = 1, BNPARAM = param),
       BiocNeighbors::findNeighbors(x[0, ], threshold = 1, BNPARAM = kmknn))
  same(BiocNeighbors::queryNeighbors(x[0, ], x, threshold = 1, BNPARAM = param),
       BiocNeighbors::queryNeighbors(x[0, ], x, threshold = 1, BNPARAM = kmknn))
  same(BiocNeighbors::queryNeighbors(x, x[0, ], threshold = 1, BNPARAM = param),
       BiocNeighbors::queryNeighbors(x, x[0, ], threshold = 1, BNPARAM = kmknn))
  expect_warning(expect_error(BiocNeighbors::findKNN(x[0, ], k = 2, BNPARAM = param), "positive"), "capped")
  expect_error(BiocNeighbors::findKNN(x, k = 0, BNPARAM = param), "positive")
  expect_error(BiocNeighbors::findKNN(rbind(0, x), k = 2, BNPARAM = FsgpuParam("Cosine")), "L2 norms of zero")
  expect_error(BiocNeighbors::queryKNN(x, x[, 1:2], k = 2, BNPARAM = param), "dimensionality")
})

test_that("bluster builds the same graphs and clusters with FsgpuParam", {
  skip_without_bluster()
  set.seed(13)
  centres <- matrix(rnorm(4 * 6, sd = 4), 4, 6)
  x <- centres[rep(1:4, each = 60), ] + matrix(rnorm(240 * 6), 240, 6)
  param <- FsgpuParam(backend = "cpu")
  exhaustive <- BiocNeighbors::ExhaustiveParam()
  ours <- bluster::makeSNNGraph(x, k = 10, BNPARAM = param)
  ref <- bluster::makeSNNGraph(x, k = 10, BNPARAM = exhaustive)
  expect_identical(igraph::as_edgelist(ours), igraph::as_edgelist(ref))
  expect_identical(igraph::E(ours)$weight, igraph::E(ref)$weight)
  expect_identical(igraph::as_edgelist(bluster::makeKNNGraph(x, k = 8, BNPARAM = param)),
                   igraph::as_edgelist(bluster::makeKNNGraph(x, k = 8, BNPARAM = exhaustive)))
  clusters <- bluster::clusterRows(x, bluster::NNGraphParam(k = 10, BNPARAM = param))
  expect_identical(clusters, bluster::clusterRows(x, bluster::NNGraphParam(k = 10, BNPARAM = exhaustive)))
  expect_identical(length(unique(clusters)), 4L)
})
