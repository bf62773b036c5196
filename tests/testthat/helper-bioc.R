# Small single-cell-like data sets for the Bioconductor tests: genes in rows, cells in columns,
# a class in colData, a PCA in reducedDims (for a SingleCellExperiment).

bioc_counts <- function(genes = 60, cells = 40, seed = 1) {
  set.seed(seed)
  m <- matrix(rnorm(genes * cells), genes, cells, dimnames = list(paste0("g", seq_len(genes)),
                                                                  paste0("c", seq_len(cells))))
  group <- rep(c("a", "b"), length.out = cells)
  m[3, ] <- m[3, ] + 2 * (group == "b")
  m[7, ] <- m[3, ] + rnorm(cells, sd = 0.3)
  list(m = m, group = group)
}

bioc_sce <- function(genes = 60, cells = 40, seed = 1) {
  d <- bioc_counts(genes, cells, seed)
  sce <- SingleCellExperiment::SingleCellExperiment(list(counts = round(exp(d$m)), logcounts = d$m),
                                                    colData = S4Vectors::DataFrame(group = d$group))
  SingleCellExperiment::reducedDim(sce, "PCA") <- stats::prcomp(t(d$m))$x[, 1:8]
  sce
}

skip_without_sce <- function() {
  for (p in c("SummarizedExperiment", "SingleCellExperiment", "S4Vectors"))
    skip_if_not_installed(p)
}

# Two mi_pairs() results hold the same pairs, values and parameters (timings aside).
expect_pairs_equal <- function(actual, expected) {
  expect_equal(as.data.frame(actual), as.data.frame(expected), ignore_attr = TRUE)
  keep <- c("n_pairs", "by", "nbins", "units", "binned", "n_samples", "n_features", "classes")
  expect_identical(attributes(actual)[keep], attributes(expected)[keep])
}

# Two results that carry their run record as an attribute (mi_matrix(), the scores): values and
# attributes, but the run record (its seconds differ).
expect_equal_but_run <- function(actual, expected) {
  expect_equal(strip_attributes(actual), strip_attributes(expected))
  keep <- setdiff(names(attributes(expected)), "run")
  expect_equal(attributes(actual)[keep], attributes(expected)[keep])
}
