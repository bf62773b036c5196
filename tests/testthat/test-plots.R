# The plot methods draw without error (on a null device) and return the values they draw.

with_null_device <- function(code) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  code
}

test_that("a selection plots the gain of each step, or the cumulative score", {
  d <- data_informative(n = 90, p = 30, classes = 2)
  sel <- select_features(d$x, d$y, k = 6, method = "mrmr", fixed = "g3", backend = "cpu")
  with_null_device({
    drawn <- plot(sel)
    expect_identical(plot(sel, what = "cumulative", labels = FALSE), drawn)
  })
  expect_named(drawn, c("rank", "feature", "gain", "cumulative"))
  expect_identical(drawn$feature, sel$selection$feature)
  # mRMR's score is what the step adds: the gain; the cumulative curve is its running total.
  expect_identical(drawn$gain, sel$selection$score)
  expect_identical(drawn$cumulative, cumsum(sel$selection$score))
  expect_error(with_null_device(plot(sel, what = "total")), "should be one of")
})

test_that("JMI's and DISR's summed scores plot as their mean term per step", {
  d <- data_informative(n = 90, p = 30, classes = 3)
  for (method in c("jmi", "disr")) {
    sel <- select_features(d$x, d$y, k = 5, method = method, backend = "cpu")
    drawn <- with_null_device(plot(sel))
    expect_identical(drawn$cumulative, sel$selection$score)
    expect_identical(drawn$gain, sel$selection$score / c(1, 1:4))
  }
  # A feature that separates the classes alone gains the class entropy, and so does the second
  # pick, paired with it; the later picks' mean terms are at most that.
  x <- cbind(perfect = rep(0:1, 20), with_seed(6, matrix(rnorm(40 * 5), 40, 5)))
  sel <- select_features(x, factor(rep(c("a", "b"), 20)), k = 4, nbins = 3, backend = "cpu")
  gain <- with_null_device(plot(sel))$gain
  expect_equal(gain[1:2], c(1, 1))
  expect_true(all(gain[3:4] <= 1))
})

test_that("feature pairs plot as a matrix of the top features against each other", {
  x <- with_seed(1, matrix(sample(0:1, 200 * 12, replace = TRUE), 200, 12, dimnames = list(NULL, paste0("s", 1:12))))
  y <- factor(xor(x[, 3], x[, 7]))
  pairs <- mi_pairs(x, y, top = 20, backend = "cpu")
  with_null_device({
    m <- plot(pairs)
    expect_identical(plot(pairs, n = 5, value = "interaction"),
                     plot(pairs, value = "interaction")[1:5, 1:5])
  })
  df <- as.data.frame(pairs)
  features <- unique(as.vector(rbind(df$feature1, df$feature2)))
  expect_identical(rownames(m), features)
  expect_identical(colnames(m), features)
  expect_true(isSymmetric(m))
  # Every pair of x among the features is in the matrix, and nothing else.
  expect_identical(m[cbind(df$feature1, df$feature2)], df$mi_joint)
  expect_identical(sum(!is.na(m)), 2L * nrow(df))
  # Pairs that share a feature still give a matrix of all their features.
  star <- mi_pairs(x, y, with = "s3", top = 6, backend = "cpu")
  m <- with_null_device(plot(star))
  expect_identical(dim(m), c(7L, 7L))
  expect_identical(rownames(m)[1], "s3")
  # All pairs of a few features: the full matrix, no blank cells but the diagonal.
  full <- mi_pairs(x[, 1:6], y, top = 15, by = "interaction", backend = "cpu")
  m <- with_null_device(plot(full))
  expect_identical(sum(is.na(m)), 6L)
  expect_error(plot(pairs, n = 0), "n must be between")
})

test_that("the heatmap's scale spans the values drawn", {
  expect_identical(fsgpu:::heatmap_scale(c(0.7, 0.75), diverging = FALSE)$limits, c(0.7, 0.75))
  expect_identical(fsgpu:::heatmap_scale(c(-0.2, 0.1), diverging = TRUE)$limits, c(-0.2, 0.2))
  expect_identical(fsgpu:::heatmap_scale(c(0.1, 0.3), diverging = TRUE)$limits, c(0.1, 0.3))
  one <- fsgpu:::heatmap_scale(0.5, diverging = FALSE)$limits
  expect_true(one[1] < 0.5 && one[2] > 0.5)
})

test_that("a kNN graph plots with its communities and their legend, and refuses what it cannot draw", {
  skip_if_not_installed("igraph")
  centres <- with_seed(2, matrix(rnorm(3 * 8, sd = 4), 3, 8))
  points <- centres[rep(1:3, each = 30), ] + with_seed(3, matrix(rnorm(90 * 8), 90, 8))
  nn <- knn_graph(points, k = 5, metric = "euclidean", backend = "cpu")
  with_null_device({
    groups <- plot(nn)
    expect_length(groups, 90)
    # Three well-separated clouds are three communities.
    expect_equal(sum(table(groups, rep(1:3, each = 30)) > 0), 3)
    expect_length(plot(nn, communities = "walktrap", labels = TRUE, legend = FALSE), 90)
    expect_null(plot(nn, communities = "none"))
    expect_error(plot(nn, max_points = 50), "up to max_points")
    # Many communities: the legend lists the largest 30 and counts the rest.
    expect_silent(fsgpu:::community_legend(rep(1:40, 2)[1:79], fsgpu:::community_colours(40)))
  })
  expect_length(unique(fsgpu:::community_colours(12)), 12)
  expect_length(fsgpu:::community_colours(1), 1)
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
    p <- plot(res)
    total <- plot(res, what = "gain", tuples = 0)
    per_sample <- plot(res, what = "gain", scale = "per_sample")
    by_index <- plot(plain)
  })
  expect_named(p, c("variable", "position", "value"))
  expect_identical(p$variable, res$scores$variable)
  expect_identical(p$value, -log10(res$scores$p_value))
  expect_identical(total$value, res$scores$gain)
  expect_identical(per_sample$value, res$scores$gain / 300)
  expect_identical(total$position, p$position)
  # Chromosomes in genome order: 2 before 10 before X.
  expect_true(max(p$position[1:10]) < min(p$position[11:20]) && max(p$position[11:20]) < min(p$position[21:30]))
  expect_identical(by_index$position, plain$scores$index)
  expect_error(plot(res, scale = "mean"), "should be one of")
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

test_that("the shipped mice slice finds the coat-colour pair and draws its Manhattan plot", {
  extdata <- system.file("extdata", package = "fsgpu")
  geno <- read_plink(file.path(extdata, "mice_slice"), packed = TRUE)
  coat <- utils::read.delim(file.path(extdata, "mice_slice_coat.tsv"))
  expect_identical(dim(geno$genotypes), c(1814L, 640L))
  colour <- coat$CoatColour[match(geno$genotypes$sample_names, coat$IID)]
  black <- factor(ifelse(colour == "albino", NA, colour == "black"))
  res <- with_seed(1, suppressMessages(find_interactions(geno$genotypes, black, dimensions = 2, top = 1,
                                                        backend = "cpu")))
  best <- res$scores$variable[unlist(res$tuples[1, c("tuple_1", "tuple_2")])]
  expect_setequal(best, c("rs6300182", "jfTRP"))
  expect_identical(res$params$n_objects, 1650L)
  drawn <- with_null_device(plot(res, what = "gain", scale = "per_sample"))
  expect_true(all(drawn$value <= 1))  # at most the class entropy per object, here 1 bit
})
