# Inputs that the C++ encoder reads in blocks or converts itself (issue 19): a DelayedArray assay
# block by block, a dense assay a block of rows at a time, and double columns named by
# categorical= (dense or sparse) made the codes of their distinct values. Every job must give
# the values, notes, messages and errors of the checks and conversions made in R, and the
# in-memory matrix's results. Helpers: helper-inputs.R, helper-bioc.R.

# An SE of d's genes x cells with its assay written to an HDF5 file, and the same in memory.
hdf5_pair <- function(m, group) {
  col <- S4Vectors::DataFrame(group = group)
  h <- HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"), name = "x")
  disk <- SummarizedExperiment::SummarizedExperiment(list(x = h), colData = col)
  dimnames(disk) <- dimnames(m)
  list(disk = disk, memory = SummarizedExperiment::SummarizedExperiment(list(x = m), colData = col))
}

test_that("a DelayedArray assay is coded by the encoder, block by block, as the checks in R and in memory", {
  skip_without_delayed()
  small_blocks()
  d <- bioc_counts(genes = 45, cells = 36, seed = 3)
  p <- hdf5_pair(d$m, d$group)
  binning <- fsgpu:::binning_request(NULL, NULL, NULL)
  expect_s3_class(fsgpu:::prepare_se_input(p$disk, "group", binning = binning, defer = TRUE)$x, "fsgpu_blocks")
  expect_jobs_as_r(p$disk, "group", z = "g3")
  expect_jobs_as_r(p$disk, "group", z = "g3", categorical = c("g1", "g7", "g30"))  # double categories
  expect_matrix_as_r(p$disk)
  # integers: the rule bins the wide ones; bins asked bin all
  counts <- matrix(as.integer(round(3 * d$m)), nrow(d$m), dimnames = dimnames(d$m))
  counts[1:20, ] <- abs(counts[1:20, ]) %% 3L
  ints <- hdf5_pair(counts, d$group)
  expect_jobs_as_r(ints$disk, "group", z = "g2")
  expect_jobs_as_r(ints$disk, "group", z = "g2", nbins = 4)
  expect_jobs_as_r(hdf5_pair(d$m > 0, d$group)$disk, "group", z = 1)        # logical
  # the same results as the assay in memory
  suppressMessages(for (disk_memory in list(p, ints)) {
    expect_identical(as.data.frame(mi_scores(disk_memory$disk, "group", backend = "cpu")),
                     as.data.frame(mi_scores(disk_memory$memory, "group", backend = "cpu")))
    expect_identical(mi_matrix(disk_memory$disk, backend = "cpu")[, ],
                     mi_matrix(disk_memory$memory, backend = "cpu")[, ])
    expect_identical(select_features(disk_memory$disk, "group", k = 6, backend = "cpu")$selection,
                     select_features(disk_memory$memory, "group", k = 6, backend = "cpu")$selection)
    expect_pairs_equal(mi_pairs(disk_memory$disk, "group", top = 30, backend = "cpu"),
                       mi_pairs(disk_memory$memory, "group", top = 30, backend = "cpu"))
  })
})

test_that("NA, NaN and Inf in a DelayedArray assay stop the jobs naming features and samples, as in memory", {
  skip_without_delayed()
  small_blocks()
  d <- bioc_counts(genes = 45, cells = 36, seed = 3)
  counts <- matrix(as.integer(round(3 * d$m)), nrow(d$m), dimnames = dimnames(d$m))
  counts[cbind(c(7, 30, 31), c(5, 2, 9))] <- NA
  d$m[7, 5] <- NA
  d$m[30, 2] <- Inf
  d$m[31, 9] <- NaN
  # every feature named, across blocks, as for the assay in memory (R's blocks stopped at the first)
  error_of <- function(code) said_by(code)$value
  for (p in list(hdf5_pair(d$m, d$group), hdf5_pair(counts, d$group))) {
    jobs <- list(function(se) mi_scores(se, "group", backend = "cpu"),
                 function(se) jmi_scores(se, "group", z = "g1", backend = "cpu"),
                 function(se) mi_pairs(se, "group", backend = "cpu"),
                 function(se) mi_matrix(se, backend = "cpu"),
                 function(se) select_features(se, "group", k = 3, backend = "cpu"))
    for (job in jobs) expect_identical(error_of(job(p$disk)), error_of(job(p$memory)))
  }
  expect_identical(unclass(error_of(mi_scores(p$disk, "group", backend = "cpu"))),
                   paste("assay 'x' has missing or infinite values in feature 'g7' (sample 'c5'),",
                         "feature 'g30' (sample 'c2'), feature 'g31' (sample 'c9')"))
})

test_that("double columns named by categorical= are coded in C++, dense or sparse, as in R", {
  d <- data_informative(n = 120, p = 8, classes = 3, seed = 3)
  x <- named(round(d$x, 1))
  sx <- as_dgc(x * (abs(x) > 1))
  binning <- fsgpu:::binning_request(NULL, NULL, c("g2", "g3", "g6"))
  expect_identical(fsgpu:::prepare_input(sx, d$y, binning = binning, defer = TRUE)$bin_above,
                   c(-1L, -2L, -2L, -1L, -1L, -2L, -1L, -1L))
  expect_jobs_as_r(sx, d$y, z = "g1", categorical = c("g2", "g3", "g6"))   # runs of bins and categories
  expect_jobs_as_r(sx, d$y, z = "g1", categorical = TRUE)
  expect_jobs_as_r(sx, d$y, z = "g8", categorical = 1L)
  expect_matrix_as_r(sx, categorical = c("g4", "g5"))
  expect_jobs_as_r(x, d$y, z = "g4", categorical = c("g2", "g5"))            # dense
  expect_matrix_as_r(x, categorical = TRUE)
  df <- data.frame(a = x[, 1], b = x[, 2], n = as.integer(x[, 3] > 0), f = factor(x[, 4] > 0))
  expect_jobs_as_r(df, d$y, z = "f", categorical = "b")
  # the sparse matrix gives what its dense copy gives
  dense <- as.matrix(sx)
  for (categorical in list(c("g2", "g3", "g6"), TRUE)) {
    expect_identical(as.data.frame(mi_scores(sx, d$y, categorical = categorical, backend = "cpu")),
                     as.data.frame(mi_scores(dense, d$y, categorical = categorical, backend = "cpu")))
    expect_identical(select_features(sx, d$y, k = 5, categorical = categorical, backend = "cpu")$selection,
                     select_features(dense, d$y, k = 5, categorical = categorical, backend = "cpu")$selection)
    expect_pairs_equal(mi_pairs(sx, d$y, top = 20, categorical = categorical, backend = "cpu"),
                       mi_pairs(dense, d$y, top = 20, categorical = categorical, backend = "cpu"))
  }
  # more than 256 distinct values (wide codes) next to narrow ones; a column of one value
  w <- with_seed(7, cbind(a = sample(1:400, 600, TRUE) / 4, b = rnorm(600), c = 2.5,
                          e = sample(c(0, 0, 0, 1.5), 600, TRUE)))
  y <- with_seed(8, sample(c("u", "v"), 600, TRUE))
  expect_jobs_as_r(as_dgc(w), y, z = "b", categorical = c("a", "c"))
  expect_jobs_as_r(w, y, z = "b", categorical = c("a", "e"))
  # very sparse: the category's own codes are kept sparse too, and the pieces are joined as they are
  vs <- with_seed(9, Matrix::rsparsematrix(300, 5, 0.03, rand.x = function(k) sample(c(0.5, 1, 2), k, TRUE)))
  vs[1:3, 2] <- c(0.5, 1, 2)
  dimnames(vs) <- list(NULL, paste0("v", 1:5))
  yv <- with_seed(10, sample(c("u", "v", "w"), 300, TRUE))
  expect_jobs_as_r(vs, yv, z = "v1", categorical = c("v2", "v4"))
  expect_matrix_as_r(vs, categorical = "v3")
  expect_identical(as.data.frame(mi_scores(vs, yv, categorical = "v2", backend = "cpu")),
                   as.data.frame(mi_scores(as.matrix(vs), yv, categorical = "v2", backend = "cpu")))
})

test_that("NA, NaN and Inf in double categories stop the jobs naming features and samples", {
  d <- data_informative(n = 40, p = 6, seed = 2)
  x <- named(round(d$x, 1))
  x[3, 2] <- NA
  x[5, 4] <- -Inf
  got <- expect_job_as_r("mi", x, d$y, categorical = c("g2", "g4"))
  expect_identical(unclass(got$value),
                   "x has missing or infinite values in feature 'g2' (sample 's3'), feature 'g4' (sample 's5')")
  expect_jobs_as_r(x, d$y, z = "g1", categorical = TRUE)
  sx <- Matrix::sparseMatrix(i = c(1, 3, 2, 5, 9), j = c(1, 2, 3, 3, 1), x = c(1, NaN, Inf, 2, 3), dims = c(40, 3),
                             dimnames = list(paste0("p", 1:40), c("a", "b", "c")))
  got <- expect_job_as_r("mi", sx, d$y, categorical = c("b", "c"))
  expect_match(got$value, "feature 'b' \\(sample 'p3'\\), feature 'c' \\(sample 'p2'\\)$")
  expect_jobs_as_r(sx, d$y, z = "a", categorical = "c")
})

test_that("a dense assay of several blocks of rows gives the scores of the checks in R", {
  skip_if_not_installed("SummarizedExperiment")
  # 2^24 values a block: 840 features of 20,000 samples make two blocks
  y <- with_seed(4, sample(c("a", "b", "c"), 20000, TRUE))
  a <- with_seed(5, matrix(sample(0:3, 840 * 20000, TRUE), 840, 20000,
                           dimnames = list(paste0("g", 1:840), paste0("c", 1:20000))))
  a[2, ] <- a[2, ] + 3L * (y == "b")
  a[839, 1:19000] <- 0L  # mostly one value: the join keeps the encoder's choice of base
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = a), colData = S4Vectors::DataFrame(type = y))
  expect_job_as_r("mi", se, "type")
  expect_job_as_r("mi", se, "type", nbins = 3)
  a[800, 7] <- NA
  SummarizedExperiment::assay(se, "counts") <- a
  got <- expect_job_as_r("mi", se, "type")
  expect_identical(unclass(got$value), "assay 'counts' has missing or infinite values in feature 'g800' (sample 'c7')")
})
