# knn_graph() on the CPU against base R, BiocNeighbors and bluster.

test_that("neighbours and distances match a brute-force reference for every metric", {
  x <- data_knn()
  for (metric in c("pearson", "spearman", "cosine", "euclidean", "manhattan")) {
    for (k in c(1, 7)) {
      nn <- knn_graph(x, k = k, metric = metric, backend = "cpu")
      ref <- ref_knn(x, k, metric)
      expect_identical(unname(nn$index), ref$index, info = paste(metric, k))
      expect_equal(unname(nn$distance), ref$distance, tolerance = 1e-10, info = paste(metric, k))
      expect_identical(rownames(nn$index), rownames(x))
    }
  }
})

test_that("the result names its rows when the points are named, and times the call's parts", {
  x <- data_knn(n = 120)
  nn <- knn_graph(x, k = 5, backend = "cpu")
  expect_identical(dimnames(nn$distance), list(rownames(x), NULL))
  expect_identical(dimnames(nn$index), list(rownames(x), NULL))
  bare <- knn_graph(unname(x), k = 5, backend = "cpu")
  expect_null(dimnames(bare$index))
  expect_null(dimnames(bare$distance))
  expect_identical(unclass(bare)[1:2], lapply(unclass(nn)[1:2], unname))
  t <- attr(nn, "timings")
  expect_true(all(c("prepare", "search", "results", "r_side", "total") %in% names(t)))
  expect_equal(t[["total"]], sum(t[c("prepare", "search", "results", "r_side")]))
})

test_that("a row is never its own neighbour; duplicates are each other's; k = n - 1 lists everyone", {
  x <- data_knn(n = 30)
  nn <- knn_graph(x, k = 29, metric = "euclidean", backend = "cpu")
  expect_false(any(nn$index == seq_len(30)))
  expect_true(all(apply(nn$index, 1, function(r) length(unique(r)) == 29)))
  expect_identical(unname(nn$index[2, 1]), 5L)
  expect_identical(unname(nn$index[5, 1]), 2L)
  expect_identical(unname(nn$distance[2, 1]), 0)
  # all rows equal: every distance ties, neighbours in index order
  same <- matrix(1, 6, 3)
  expect_identical(unname(knn_graph(same, k = 3, metric = "euclidean", backend = "cpu")$index[4, ]), c(1L, 2L, 3L))
  expect_error(knn_graph(x, k = 30, backend = "cpu"), "k must be between 1 and 29")
})

test_that("threads and input forms give the same result", {
  x <- data_knn(n = 150)
  ref <- knn_graph(x, k = 6, backend = "cpu", threads = 1)
  expect_identical(unclass(knn_graph(x, k = 6, backend = "cpu", threads = 3))[1:2], unclass(ref)[1:2])
  expect_identical(unclass(knn_graph(as.data.frame(x), k = 6, backend = "cpu"))[1:2], unclass(ref)[1:2])
  expect_identical(unclass(knn_graph(Matrix::Matrix(x, sparse = TRUE), k = 6, backend = "cpu"))[1:2],
                   unclass(ref)[1:2])
  xi <- round(x * 10)
  storage.mode(xi) <- "integer"
  expect_identical(unclass(knn_graph(xi, k = 6, backend = "cpu"))[1:2],
                   unclass(knn_graph(xi * 1.0, k = 6, backend = "cpu"))[1:2])
})

test_that("query points get their neighbours among the rows", {
  x <- data_knn()
  q <- x[c(3, 40), ] + 0.01
  rownames(q) <- c("q1", "q2")
  for (metric in c("pearson", "euclidean", "manhattan")) {
    nn <- knn_graph(x, k = 4, metric = metric, query = q, backend = "cpu")
    ref <- ref_knn(x, 4, metric, query = q)
    expect_identical(unname(nn$index), ref$index)
    expect_equal(unname(nn$distance), ref$distance, tolerance = 1e-10)
    expect_identical(rownames(nn$index), c("q1", "q2"))
  }
  # a query equal to a row finds it at distance 0
  expect_identical(unname(knn_graph(x, k = 1, metric = "euclidean", query = x[7, , drop = FALSE],
                                    backend = "cpu")$distance[1, 1]), 0)
  expect_identical(unname(knn_graph(x, k = 2, query = x[, ncol(x):1], backend = "cpu")$index),
                   unname(knn_graph(x, k = 2, query = x, backend = "cpu")$index))  # columns matched by name
  expect_error(knn_graph(x, k = 2, query = x[, 1:3], backend = "cpu"), "query has 3 columns, x 12")
  expect_error(knn_graph(x, k = 2, query = q, mutual = TRUE, backend = "cpu"), "query gives the neighbours")
})

test_that("BiocNeighbors finds the same neighbours (euclidean, manhattan, cosine)", {
  skip_if_not_installed("BiocNeighbors")
  x <- data_knn(n = 120)
  x[5, ] <- x[5, ] + with_seed(62, runif(ncol(x), 0, 0.01))  # no ties: BiocNeighbors orders ties its own way
  for (distance in c("Euclidean", "Manhattan")) {
    bn <- BiocNeighbors::findKNN(unname(x), k = 8, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = distance))
    ours <- knn_graph(x, k = 8, metric = tolower(distance), backend = "cpu")
    expect_identical(unname(ours$index), bn$index, info = distance)
    expect_equal(unname(ours$distance), bn$distance, tolerance = 1e-10, info = distance)
  }
  bn <- BiocNeighbors::findKNN(unname(x), k = 8, BNPARAM = BiocNeighbors::ExhaustiveParam(distance = "Cosine"))
  expect_identical(unname(knn_graph(x, k = 8, metric = "cosine", backend = "cpu")$index), bn$index)
})

test_that("edges, mutual kNN and SNN graphs; SNN weights as bluster", {
  x <- data_knn(n = 60)
  nn <- knn_graph(x, k = 5, metric = "euclidean", backend = "cpu")
  e <- knn_graph(x, k = 5, metric = "euclidean", output = "edges", backend = "cpu")
  expect_identical(nrow(e), 300L)
  expect_identical(e$to[1:5], rownames(x)[nn$index[1, ]])
  expect_equal(e$similarity, 1 / (1 + e$distance))
  m <- knn_graph(x, k = 5, metric = "euclidean", mutual = TRUE, output = "edges", backend = "cpu")
  idx <- match(m$to, rownames(x))
  from <- match(m$from, rownames(x))
  expect_true(all(from < idx))
  expect_true(all(mapply(function(i, j) i %in% nn$index[j, ] && j %in% nn$index[i, ], from, idx)))
  expect_identical(nrow(m), sum(sapply(1:60, function(i) sum(sapply(nn$index[i, ], function(j) i < j && i %in% nn$index[j, ])))))
  skip_if_not_installed("bluster")
  skip_if_not_installed("igraph")
  for (type in c("rank", "number", "jaccard")) {
    ours <- knn_graph(x, k = 5, metric = "euclidean", snn = type, output = "igraph", backend = "cpu")
    theirs <- bluster::neighborsToSNNGraph(unname(nn$index), type = type)
    a <- igraph::as_data_frame(ours)
    b <- igraph::as_data_frame(theirs)
    a <- a[order(match(a$from, rownames(x)), match(a$to, rownames(x))), ]
    b <- b[order(b$from, b$to), ]
    expect_identical(match(a$from, rownames(x)), as.integer(b$from), info = type)
    expect_identical(match(a$to, rownames(x)), as.integer(b$to), info = type)
    expect_equal(a$weight, b$weight, info = type)
  }
  g <- knn_graph(x, k = 5, metric = "pearson", output = "igraph", backend = "cpu")
  expect_identical(igraph::vcount(g), 60L)
  expect_true(all(igraph::E(g)$weight <= 1))
})

test_that("a SummarizedExperiment's features (or samples) are the points", {
  skip_if_not_installed("SummarizedExperiment")
  x <- data_knn(n = 50)
  se <- SummarizedExperiment::SummarizedExperiment(list(values = x))
  expect_identical(unclass(knn_graph(se, k = 4, backend = "cpu"))[1:2], unclass(knn_graph(x, k = 4, backend = "cpu"))[1:2])
  expect_identical(unclass(knn_graph(se, k = 4, by = "samples", backend = "cpu"))[1:2],
                   unclass(knn_graph(t(x), k = 4, backend = "cpu"))[1:2])
})

test_that("bad input gets clear errors; constant rows are reported", {
  x <- data_knn(n = 20)
  x[3, 2] <- NA
  expect_error(knn_graph(x, k = 2, backend = "cpu"), "missing or infinite values in row 'p3'")
  expect_error(knn_graph(data_knn(), k = 2, metric = "hamming"), "metric must be one of")
  expect_error(knn_graph(data_knn(), k = 2, snn = "shared"), "snn must be")
  expect_error(knn_graph(data.frame(a = 1:3, b = letters[1:3]), k = 1), "not numeric: 'b'")
  flat <- data_knn(n = 20)
  flat[4, ] <- 2
  expect_message(nn <- knn_graph(flat, k = 3, backend = "cpu"), "1 constant row")
  expect_true(all(nn$distance[4, ] == 1))
  expect_output(print(knn_graph(data_knn(), k = 2, backend = "cpu")), "Exact 2-nearest neighbours of 80 points")
})

test_that("knn_graph() of a SummarizedExperiment gives an igraph graph (its [[ is not a list's)", {
  skip_if_not_installed("SummarizedExperiment")
  skip_if_not_installed("igraph")
  set.seed(8)
  se <- SummarizedExperiment::SummarizedExperiment(list(exprs = matrix(rnorm(40 * 6), 40, 6,
                                                                       dimnames = list(paste0("g", 1:40), NULL))))
  for (snn in c(FALSE, TRUE)) {
    g <- knn_graph(se, k = 4, snn = snn, output = "igraph", backend = "cpu")
    expect_true(inherits(g, "igraph"))
    expect_identical(igraph::vcount(g), 40L)
  }
})
