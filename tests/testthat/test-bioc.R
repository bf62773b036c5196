# SingleCellExperiment input for every job (through the SummarizedExperiment methods), kNN of
# cells from a reducedDim, and add_results(): rowData, assays, metadata and colPairs must hold
# exactly the values of the result objects.

test_that("every job takes a SingleCellExperiment and equals its matrix result", {
  skip_without_sce()
  sce <- bioc_sce()
  x <- t(SummarizedExperiment::assay(sce, "logcounts"))
  y <- sce$group
  sel <- select_features(sce, class = "group", k = 5, assay = "logcounts", backend = "cpu")
  expect_equal(sel$selection, select_features(x, y, k = 5, backend = "cpu")$selection)
  expect_equal_but_run(mi_scores(sce, class = "group", assay = "logcounts", backend = "cpu"),
                       mi_scores(x, y, backend = "cpu"))
  expect_equal(cmi_scores(sce, class = "group", z = "g3", assay = "logcounts", backend = "cpu")$cmi,
               cmi_scores(x, y, z = "g3", backend = "cpu")$cmi)
  expect_equal(jmi_scores(sce, class = "group", z = "g3", assay = "logcounts", backend = "cpu")$jmi,
               jmi_scores(x, y, z = "g3", backend = "cpu")$jmi)
  p <- mi_pairs(sce, class = "group", assay = "logcounts", top = 10, backend = "cpu")
  expect_pairs_equal(p, mi_pairs(x, y, top = 10, backend = "cpu"))
  expect_equal_but_run(mi_matrix(sce, assay = "logcounts", backend = "cpu"), mi_matrix(x, backend = "cpu"))
  d <- discretize(sce, class = "group", assay = "logcounts", backend = "cpu")
  expect_equal(d$cuts, discretize(x, y, backend = "cpu")$cuts)
  expect_identical(predict(d, sce, assay = "logcounts"), predict(d, x))
  nn <- knn_graph(sce, k = 4, assay = "logcounts", backend = "cpu")
  expect_identical(unclass(nn)[1:2], unclass(knn_graph(t(x), k = 4, backend = "cpu"))[1:2])
  set.seed(5)  # the contrast variables come from R's generator
  fi <- find_interactions(sce, class = "group", assay = "logcounts", seed = 1, backend = "cpu", threads = 1)
  set.seed(5)
  expect_equal(fi$scores, find_interactions(x, y, seed = 1, backend = "cpu", threads = 1)$scores)
  # the assay is chosen by name: counts give another selection than logcounts
  expect_identical(select_features(sce, class = "group", k = 5, assay = "counts", backend = "cpu")$selection$feature,
                   select_features(t(SummarizedExperiment::assay(sce, "counts")), y, k = 5,
                                   backend = "cpu")$selection$feature)
})

test_that("knn_graph(use_dimred =) links the cells of a reducedDim, by Euclidean distance", {
  skip_without_sce()
  sce <- bioc_sce()
  pca <- SingleCellExperiment::reducedDim(sce, "PCA")
  nn <- knn_graph(sce, k = 5, use_dimred = "PCA", backend = "cpu")
  ref <- knn_graph(pca, k = 5, metric = "euclidean", backend = "cpu")
  expect_identical(unclass(nn)[1:2], unclass(ref)[1:2])
  expect_identical(attr(nn, "metric"), "euclidean")
  expect_identical(rownames(nn$index), colnames(sce))
  nn3 <- knn_graph(sce, k = 5, use_dimred = "PCA", n_dimred = 3, metric = "cosine", backend = "cpu")
  expect_identical(nn3$index, knn_graph(pca[, 1:3], k = 5, metric = "cosine", backend = "cpu")$index)
  q <- knn_graph(sce, k = 2, use_dimred = "PCA", query = sce[, 1:3], backend = "cpu")
  expect_identical(q$index[, 1], 1:3, ignore_attr = TRUE)
  snn <- knn_graph(sce, k = 5, use_dimred = 1, snn = TRUE, output = "edges", backend = "cpu")
  expect_identical(snn, knn_graph(pca, k = 5, metric = "euclidean", snn = TRUE, output = "edges", backend = "cpu"))
  expect_error(knn_graph(sce, use_dimred = "TSNE"), "use_dimred must name one reducedDim of x; available: 'PCA'")
  expect_error(knn_graph(sce, use_dimred = "PCA", by = "samples"), "give no assay or by")
  expect_error(knn_graph(sce, n_dimred = 3), "n_dimred goes with use_dimred")
  expect_error(knn_graph(sce, use_dimred = "PCA", n_dimred = 9), "n_dimred")
})

test_that("add_results() puts selection, scores, discretization and interactions in rowData", {
  skip_without_sce()
  sce <- bioc_sce()[, 1:40]
  sub <- sce[10:60, ]  # a result on some rows fills those rows only
  sel <- select_features(sub, class = "group", k = 6, assay = "logcounts", backend = "cpu")
  out <- add_results(sce, sel)
  rd <- SummarizedExperiment::rowData(out)
  expect_identical(rd$fsgpu_selection_rank[match(sel$selection$feature, rownames(sce))], sel$selection$rank)
  expect_identical(rd$fsgpu_selection_score[match(sel$selection$feature, rownames(sce))], sel$selection$score)
  expect_identical(sum(!is.na(rd$fsgpu_selection_rank)), nrow(sel$selection))
  meta <- S4Vectors::metadata(out)$fsgpu_selection
  expect_identical(meta[c("method", "k", "nbins", "units", "backend")], sel[c("method", "k", "nbins", "units", "backend")])

  mi <- mi_scores(sce, class = "group", assay = "logcounts", backend = "cpu")
  out <- add_results(out, mi)
  expect_identical(SummarizedExperiment::rowData(out)$fsgpu_mi, mi$mi)
  expect_identical(S4Vectors::metadata(out)$fsgpu_mi$nbins, attr(mi, "nbins"))
  cmi <- cmi_scores(sce, class = "group", z = "g3", assay = "logcounts", backend = "cpu")
  expect_identical(SummarizedExperiment::rowData(add_results(out, cmi, name = "cmi_g3"))$cmi_g3, cmi$cmi)

  d <- discretize(sce, class = "group", method = "caim", assay = "logcounts", backend = "cpu")
  out <- add_results(out, d)
  rd <- SummarizedExperiment::rowData(out)
  expect_identical(rd$fsgpu_discretization_cuts, unname(d$cuts))
  expect_identical(rd$fsgpu_discretization_intervals, d$features$intervals)
  expect_identical(rd$fsgpu_discretization_criterion, d$features$criterion)
  expect_identical(SummarizedExperiment::assay(out, "fsgpu_discretization_codes", withDimnames = FALSE),
                   t(d$codes), ignore_attr = TRUE)
  expect_identical(S4Vectors::metadata(out)$fsgpu_discretization$method, "caim")

  fi <- find_interactions(sce, class = "group", assay = "logcounts", seed = 2, backend = "cpu", threads = 1)
  out <- add_results(out, fi)
  rd <- SummarizedExperiment::rowData(out)
  for (v in c("gain", "p_value", "p_adjusted", "relevant"))
    expect_identical(rd[[paste0("fsgpu_interactions_", v)]], fi$scores[[v]], info = v)
  expect_identical(S4Vectors::metadata(out)$fsgpu_interactions$params, fi$params)
  # the columns so far all survive, and the original rowData is untouched
  expect_true(all(c("fsgpu_selection_rank", "fsgpu_mi", "fsgpu_discretization_cuts") %in% names(rd)))
})

test_that("add_results() puts graphs in colPairs/rowPairs or metadata", {
  skip_without_sce()
  sce <- bioc_sce()
  nn <- knn_graph(sce, k = 4, use_dimred = "PCA", backend = "cpu")
  out <- add_results(sce, nn)
  hits <- SingleCellExperiment::colPair(out, "fsgpu_knn")
  expect_identical(S4Vectors::nnode(hits), ncol(sce))
  key <- paste(S4Vectors::from(hits), S4Vectors::to(hits))
  ref <- paste(rep(seq_len(ncol(sce)), 4), as.vector(nn$index))
  expect_setequal(key, ref)
  expect_identical(S4Vectors::mcols(hits)$distance, as.vector(nn$distance)[match(key, ref)])
  expect_identical(S4Vectors::mcols(hits)$rank, rep(1:4, each = ncol(sce))[match(key, ref)])
  expect_identical(S4Vectors::metadata(out)$fsgpu_knn$by, "samples")

  genes <- knn_graph(sce, k = 3, assay = "logcounts", backend = "cpu")
  out <- add_results(out, genes, name = "gene_knn")
  expect_identical(length(SingleCellExperiment::rowPair(out, "gene_knn")), 3L * nrow(sce))
  snn <- knn_graph(sce, k = 5, use_dimred = "PCA", snn = TRUE, output = "edges", backend = "cpu")
  out <- add_results(out, snn, name = "snn")
  hits <- SingleCellExperiment::colPair(out, "snn")
  expect_identical(S4Vectors::mcols(hits)$weight[order(S4Vectors::from(hits), S4Vectors::to(hits))],
                   snn$weight[order(match(snn$from, colnames(sce)), match(snn$to, colnames(sce)))])

  # a plain SummarizedExperiment keeps graphs and tables in metadata
  se <- methods::as(sce, "SummarizedExperiment")
  pairs <- mi_pairs(se, class = "group", assay = "logcounts", top = 5, backend = "cpu")
  m <- mi_matrix(se[1:10, ], assay = "logcounts", backend = "cpu")
  se <- add_results(add_results(add_results(se, pairs), m), genes)
  expect_identical(S4Vectors::metadata(se)$fsgpu_pairs, pairs)
  expect_identical(S4Vectors::metadata(se)$fsgpu_mi_matrix, m)
  expect_identical(S4Vectors::metadata(se)$fsgpu_knn, genes)
})

test_that("add_results() refuses what it cannot place", {
  skip_without_sce()
  sce <- bioc_sce()
  expect_error(add_results(sce, list(1)), "not an fsgpu result")
  pca <- SingleCellExperiment::reducedDim(sce, "PCA")
  queried <- knn_graph(sce, k = 3, use_dimred = "PCA", query = pca[1:5, ], backend = "cpu")
  expect_error(add_results(sce, queried), "without query")
  expect_error(add_results(matrix(1), list()), "x must be a SummarizedExperiment")
  other <- select_features(bioc_sce(genes = 70)[61:70, ], class = "group", k = 2, assay = "logcounts",
                           backend = "cpu")
  expect_error(add_results(sce, other), "features that are not rows of x: 'g6[0-9]'")
  unnamed <- sce
  rownames(unnamed) <- NULL
  expect_error(add_results(unnamed, other), "no row names")
  expect_error(add_results(sce, mi_scores(sce, class = "group", assay = "logcounts", backend = "cpu"), name = ""),
               "name must be one non-empty string")
  ambiguous <- knn_graph(matrix(rnorm(40 * 3), 40, 3), k = 2, backend = "cpu")
  square <- sce[1:40, ]
  rownames(square) <- colnames(square) <- NULL
  expect_error(add_results(square, ambiguous), "give by")
  expect_s4_class(add_results(square, ambiguous, by = "samples"), "SingleCellExperiment")
})
