# The plot methods draw without error on small results (on a null device).

with_null_device <- function(code) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  code
}

test_that("a selection plots its scores by rank and cumulatively", {
  d <- data_informative(n = 90, p = 30, classes = 2)
  sel <- select_features(d$x, d$y, k = 6, method = "mrmr", fixed = "g3", backend = "cpu")
  with_null_device({
    expect_identical(plot(sel), sel)
    expect_identical(plot(sel, type = "cumulative", labels = FALSE), sel)
  })
})

test_that("feature pairs plot as a heatmap of joint or interaction information", {
  x <- with_seed(1, matrix(sample(0:1, 200 * 12, replace = TRUE), 200, 12, dimnames = list(NULL, paste0("s", 1:12))))
  y <- factor(xor(x[, 3], x[, 7]))
  pairs <- mi_pairs(x, y, top = 20, backend = "cpu")
  with_null_device({
    expect_identical(plot(pairs), pairs)
    expect_identical(plot(pairs, n = 5, value = "interaction"), pairs)
  })
  expect_error(plot(pairs, n = 0), "n must be between")
})

test_that("a kNN graph plots with its communities, and refuses what it cannot draw", {
  skip_if_not_installed("igraph")
  centres <- with_seed(2, matrix(rnorm(3 * 8, sd = 4), 3, 8))
  points <- centres[rep(1:3, each = 30), ] + with_seed(3, matrix(rnorm(90 * 8), 90, 8))
  nn <- knn_graph(points, k = 5, metric = "euclidean", backend = "cpu")
  with_null_device({
    groups <- plot(nn)
    expect_length(groups, 90)
    # Three well-separated clouds are three communities.
    expect_equal(sum(table(groups, rep(1:3, each = 30)) > 0), 3)
    expect_length(plot(nn, communities = "walktrap", labels = TRUE), 90)
    expect_null(plot(nn, communities = "none"))
    expect_error(plot(nn, max_points = 50), "up to max_points")
  })
  queried <- knn_graph(points, k = 2, query = points[1:4, ], backend = "cpu")
  expect_error(plot(queried), "query points")
})

test_that("an interaction search plots along the genome, or by index without a map", {
  x <- with_seed(4, matrix(sample(0:2, 300 * 30, replace = TRUE), 300, 30, dimnames = list(NULL, paste0("rs", 1:30))))
  y <- factor((x[, 4] > 0) != (x[, 25] > 0))
  map <- data.frame(chr = rep(c("2", "10", "X"), each = 10), snp = paste0("rs", 1:30), bp = rep(1:10 * 1e5, 3))
  res <- find_interactions(x, y, dimensions = 2, top = 3, map = map[30:1, ], backend = "cpu", seed = 1)
  expect_identical(res$map$chr, map$chr)  # matched by snp name
  plain <- find_interactions(x, y, dimensions = 2, backend = "cpu", seed = 1)
  expect_null(plain$map)
  with_null_device({
    expect_identical(plot(res), res)
    expect_identical(plot(res, what = "gain", tuples = 0), res)
    expect_identical(plot(plain), plain)
  })
  expect_identical(levels(fsgpu:::chromosome_order(c("X", "10", "2", "MT", "1"))), c("1", "2", "10", "MT", "X"))
  expect_error(find_interactions(x, y, map = map[1:5, -2], backend = "cpu"), "map has 5 rows")
})

test_that("packed genotypes carry their map into the search", {
  set.seed(5)
  g <- matrix(sample(0:2, 40 * 6, replace = TRUE), 40, 6, dimnames = list(paste0("s", 1:40), paste0("rs", 1:6)))
  dir <- tempfile("plink")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  geno <- read_plink(write_plink(file.path(dir, "toy"), g), packed = TRUE)
  res <- find_interactions(geno$genotypes, rep(c("a", "b"), 20), dimensions = 2, contrast = FALSE, backend = "cpu")
  expect_identical(res$map$bp, as.numeric(geno$map$bp))
})
