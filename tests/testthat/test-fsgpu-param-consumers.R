# Packages that search through BiocNeighbors' generics, run with BNPARAM = FsgpuParam() on a
# real data set (ALL: 128 leukaemia patients), must give what they give with their default.

skip_if_not_installed("BiocNeighbors")
skip_if_not_installed("ALL")
skip_if_not_installed("Biobase")

all_data <- function() {
  env <- new.env()
  utils::data("ALL", package = "ALL", envir = env)
  env$ALL
}

# SingleR 2.0 (Debian's) takes BNPARAM but classifies through an index of its own in C++
# (singlepp), so this shows that FsgpuParam is accepted and changes nothing; bluster's DBSCAN
# and neighborPurity below do search through buildIndex() and the index's searches.
test_that("SingleR labels the patients of half of ALL from the other half as with its default", {
  skip_if_not_installed("SingleR")
  all <- all_data()
  expression <- Biobase::exprs(all)  # RMA, log2: what SingleR takes as logcounts
  lineage <- substr(as.character(all$BT), 1, 1)  # B or T
  reference <- seq(1, ncol(expression), by = 2)
  test <- seq(2, ncol(expression), by = 2)
  run <- function(...) SingleR::SingleR(test = expression[, test], ref = expression[, reference],
                                        labels = lineage[reference], ...)
  default <- run()
  ours <- run(BNPARAM = FsgpuParam(backend = "cpu"))
  expect_identical(ours$labels, default$labels)
  expect_identical(ours$scores, default$scores)
  expect_gt(mean(ours$labels == lineage[test]), 0.95)  # the lineage is easy to tell
})

test_that("bluster's DBSCAN and neighborPurity (buildIndex, findNeighbors, queryKNN on an index) equal KmknnParam's", {
  skip_if_not_installed("bluster")
  all <- all_data()
  expression <- Biobase::exprs(all)
  variable <- order(apply(expression, 1, stats::var), decreasing = TRUE)[1:500]
  pcs <- stats::prcomp(t(expression[variable, ]), rank. = 10)$x
  ours <- FsgpuParam(backend = "cpu")
  kmknn <- BiocNeighbors::KmknnParam()
  for (min.pts in c(3, 5)) {
    clusters <- bluster::clusterRows(pcs, bluster::DbscanParam(min.pts = min.pts, BNPARAM = ours))
    expect_identical(clusters, bluster::clusterRows(pcs, bluster::DbscanParam(min.pts = min.pts, BNPARAM = kmknn)),
                     info = min.pts)
    expect_gt(length(unique(stats::na.omit(clusters))), 1)
  }
  groups <- as.character(all$mol.biol)
  purity <- bluster::neighborPurity(pcs, groups, k = 10, BNPARAM = ours)
  ref <- bluster::neighborPurity(pcs, groups, k = 10, BNPARAM = kmknn)
  expect_identical(purity$maximum, ref$maximum)
  # the purities sum weights over the neighbours in the order the range search returns them:
  # index order here, KmknnParam's internal order there (the same neighbours and distances)
  expect_equal(purity$purity, ref$purity, tolerance = 1e-14)
})
