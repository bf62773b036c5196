# HDF5Array-backed assays are read in blocks of features (a small block size forces several);
# every job must give exactly what it gives on the same assay in memory.

delayed_pair <- function(type = "double") {
  d <- bioc_counts(genes = 45, cells = 36, seed = 3)
  m <- d$m
  if (type == "integer") m <- matrix(as.integer(round(2 * m)), nrow(m), dimnames = dimnames(m))
  h <- HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"), name = "x")
  col <- S4Vectors::DataFrame(group = d$group)
  memory <- SummarizedExperiment::SummarizedExperiment(list(x = m), colData = col)
  disk <- SummarizedExperiment::SummarizedExperiment(list(x = h), colData = col)
  dimnames(disk) <- dimnames(m)
  list(memory = memory, disk = disk)
}

# find_interactions() on an SE (or x, y) with the same R seed; results less the run's seconds.
interactions_of <- function(x, ...) {
  set.seed(11)
  res <- find_interactions(x, ..., seed = 5, backend = "cpu", threads = 2, quiet = TRUE)
  res[setdiff(names(res), c("elapsed", "timings", "run"))]
}

# An SE pair whose assay m (genes x cells) is in memory and on disk; the class has a missing value.
interaction_pair <- function(m) {
  group <- rep(c("a", "b"), length.out = ncol(m))
  group[m[3, ] > 1] <- "b"  # gene 3 follows the class
  group[8] <- NA
  h <- HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"), name = "x")
  col <- S4Vectors::DataFrame(group = group)
  disk <- SummarizedExperiment::SummarizedExperiment(list(x = h), colData = col)
  dimnames(disk) <- dimnames(m)
  list(memory = SummarizedExperiment::SummarizedExperiment(list(x = m), colData = col), disk = disk,
       x = t(m), y = group)
}

test_that("selection and scores on an HDF5 assay equal the in-memory ones", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair()
  for (method in c("jmi", "mrmr", "cmim")) {
    expect_equal(select_features(p$disk, class = "group", k = 6, method = method, backend = "cpu")[c("selection", "nbins")],
                 select_features(p$memory, class = "group", k = 6, method = method, backend = "cpu")[c("selection", "nbins")],
                 info = method)
  }
  expect_equal_but_run(mi_scores(p$disk, class = "group", nbins = 5, backend = "cpu"),
                       mi_scores(p$memory, class = "group", nbins = 5, backend = "cpu"))
  expect_equal_but_run(cmi_scores(p$disk, class = "group", z = "g3", backend = "cpu"),
                       cmi_scores(p$memory, class = "group", z = "g3", backend = "cpu"))
  z <- rnorm(36)
  expect_equal_but_run(jmi_scores(p$disk, class = "group", z = z, backend = "cpu"),
                       jmi_scores(p$memory, class = "group", z = z, backend = "cpu"))
})

test_that("pairs and MI matrices on an HDF5 assay equal the in-memory ones", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair()
  expect_pairs_equal(mi_pairs(p$disk, class = "group", top = 30, backend = "cpu"),
                     mi_pairs(p$memory, class = "group", top = 30, backend = "cpu"))
  expect_pairs_equal(mi_pairs(p$disk, class = "group", with = "g7", by = "interaction", backend = "cpu"),
                     mi_pairs(p$memory, class = "group", with = "g7", by = "interaction", backend = "cpu"))
  expect_equal_but_run(mi_matrix(p$disk, backend = "cpu"), mi_matrix(p$memory, backend = "cpu"))
  expect_equal_but_run(mi_matrix(p$disk, features = c("g40", "g3", "g7"), backend = "cpu"),
                         mi_matrix(p$memory, features = c("g40", "g3", "g7"), backend = "cpu"))
  expect_equal_but_run(mi_matrix(p$disk, discretize = "equal_freq", nbins = 3, backend = "cpu"),
                         mi_matrix(p$memory, discretize = "equal_freq", nbins = 3, backend = "cpu"))
})

test_that("discretizations of an HDF5 assay equal the in-memory ones, fitted and applied", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair()
  fields <- c("cuts", "features", "codes", "method", "nbins", "classes", "n_samples")
  for (method in c("caim", "mdlp", "equal_width")) {
    disk <- discretize(p$disk, class = "group", method = method, backend = "cpu")
    memory <- discretize(p$memory, class = "group", method = method, backend = "cpu")
    expect_equal(disk[fields], memory[fields], info = method)
    expect_identical(predict(memory, p$disk), predict(memory, p$memory), info = method)
  }
  # part of the features, in another order
  sub <- discretize(p$memory[c("g9", "g2", "g30"), ], class = "group", backend = "cpu")
  expect_identical(predict(sub, p$disk, type = "factor"), predict(sub, p$memory, type = "factor"))
  # discretize = in the jobs: fitted by blocks, or a fitted discretization applied by blocks
  disk <- select_features(p$disk, class = "group", k = 5, discretize = "caim", backend = "cpu")
  memory <- select_features(p$memory, class = "group", k = 5, discretize = "caim", backend = "cpu")
  expect_equal(disk$selection, memory$selection)
  expect_equal(disk$discretization[fields], memory$discretization[fields])
  fit <- discretize(p$memory, class = "group", method = "ameva", backend = "cpu")
  expect_equal_but_run(mi_scores(p$disk, class = "group", discretize = fit, backend = "cpu"),
                       mi_scores(p$memory, class = "group", discretize = fit, backend = "cpu"))
})

test_that("integer HDF5 assays give the in-memory categories and bins, and missing values are named", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair("integer")
  # 3 columns have more than 10 values: binned, with the same message (see test-integers.R)
  expect_message(disk <- select_features(p$disk, class = "group", k = 5, backend = "cpu"), "Binning 3 integer")
  expect_message(memory <- select_features(p$memory, class = "group", k = 5, backend = "cpu"), "Binning 3 integer")
  expect_equal(disk$selection, memory$selection)
  expect_pairs_equal(suppressMessages(mi_pairs(p$disk, class = "group", top = 10, backend = "cpu")),
                     suppressMessages(mi_pairs(p$memory, class = "group", top = 10, backend = "cpu")))
  m <- SummarizedExperiment::assay(delayed_pair()$memory)
  m[20, 5] <- NA
  h <- HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"), name = "x")
  se <- SummarizedExperiment::SummarizedExperiment(list(x = h), colData = S4Vectors::DataFrame(group = rep(1:2, 18)))
  dimnames(se) <- dimnames(m)
  expect_error(select_features(se, class = "group", backend = "cpu"),
               "assay 'x' has missing or infinite values in feature 'g20' \\(sample 'c5'\\)")
  expect_identical(discretize(se, method = "equal_width", na = "omit", backend = "cpu")$features$missing,
                   as.integer(seq_len(45) == 20))
})

test_that("knn_graph() of an HDF5 assay equals the in-memory one, for features and samples", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair()
  for (by in c("features", "samples")) {
    expect_identical(unclass(knn_graph(p$disk, k = 4, by = by, backend = "cpu"))[1:2],
                     unclass(knn_graph(p$memory, k = 4, by = by, backend = "cpu"))[1:2], info = by)
  }
  expect_identical(knn_graph(p$disk, k = 3, query = p$disk[1:5, ], metric = "euclidean", backend = "cpu")$index,
                   knn_graph(p$memory, k = 3, query = p$memory[1:5, ], metric = "euclidean", backend = "cpu")$index)
})

test_that("an HDF5 assay on the GPU gives the in-memory CPU result", {
  skip_without_delayed()
  skip_if_not(isTRUE(backend_info()$gpu_available), "no GPU")
  small_blocks()
  p <- delayed_pair()
  expect_equal(select_features(p$disk, class = "group", k = 6, backend = "gpu")$selection,
               select_features(p$memory, class = "group", k = 6, backend = "cpu")$selection)
  expect_pairs_equal(mi_pairs(p$disk, class = "group", top = 30, backend = "gpu"),
                     mi_pairs(p$memory, class = "group", top = 30, backend = "cpu"))
  expect_equal(discretize(p$disk, class = "group", backend = "gpu")$cuts,
               discretize(p$memory, class = "group", backend = "cpu")$cuts)
  expect_identical(unclass(knn_graph(p$disk, k = 4, backend = "gpu"))[1:2],
                   unclass(knn_graph(p$memory, k = 4, backend = "cpu"))[1:2])
  # stored interaction codes on the GPU: its gains and tuples are the CPU's, bit for bit
  p <- interaction_pair(SummarizedExperiment::assay(p$memory))
  fields <- c("scores", "contrast_gain", "alpha")
  set.seed(4)
  gpu <- suppressMessages(find_interactions(p$disk, class = "group", discretizations = 2, return_tuples = TRUE,
                                            seed = 3, backend = "gpu", quiet = TRUE))
  set.seed(4)
  cpu <- suppressMessages(find_interactions(p$memory, class = "group", discretizations = 2, return_tuples = TRUE,
                                            seed = 3, backend = "cpu", quiet = TRUE))
  expect_identical(gpu$backend, "gpu")
  expect_identical(gpu[fields], cpu[fields])
})

test_that("blocks report one progress, and none with quiet = TRUE", {
  skip_without_delayed()
  small_blocks()
  p <- delayed_pair()
  seen <- list()
  old <- options(fsgpu.progress_handler = function(job, done) seen[[length(seen) + 1]] <<- list(job, done),
                 fsgpu.progress_interval = 0)
  on.exit(options(old), add = TRUE)
  expect_silent(select_features(p$disk, class = "group", k = 3, discretize = "caim", backend = "cpu", quiet = TRUE))
  expect_silent(discretize(p$disk, class = "group", backend = "cpu", quiet = TRUE))
  expect_length(seen, 0)
  discretize(p$disk, class = "group", backend = "cpu")
  jobs <- unique(vapply(seen, `[[`, "", 1))
  expect_identical(jobs, "Discretizing 12 blocks of features")
  expect_identical(seen[[length(seen)]][[2]], 1)
})

test_that("find_interactions() codes an HDF5 assay by blocks with the in-memory result", {
  skip_without_delayed()
  small_blocks()
  m <- SummarizedExperiment::assay(delayed_pair()$memory)
  m[cbind(c(2, 9, 30, 30, 44), c(1, 7, 20, 21, 36))] <- NA
  p <- interaction_pair(m)
  for (k in 2:3) {
    args <- list(dimensions = k, divisions = 2, discretizations = 3, range = 0.5, return_tuples = TRUE)
    disk <- suppressMessages(do.call(interactions_of, c(list(p$disk, class = "group"), args)))
    expect_identical(disk, suppressMessages(do.call(interactions_of, c(list(p$memory, class = "group"), args))),
                     info = k)
    expect_identical(disk, suppressMessages(do.call(interactions_of, c(list(p$x, p$y), args))), info = k)
    expect_gt(max(disk$scores$discretization), 1)
  }
  # without contrast variables, and with the default draws
  expect_identical(suppressMessages(interactions_of(p$disk, class = "group", contrast = FALSE)),
                   suppressMessages(interactions_of(p$memory, class = "group", contrast = FALSE)))
  # So many discretizations that the codes would outweigh the values: the values are read
  # (with contrast variables, 5 discretizations are 10 bytes a value; without, 9 are 9).
  for (args in list(list(discretizations = 5), list(discretizations = 9, contrast = FALSE),
                    list(discretizations = 8, contrast = FALSE, dimensions = 3)))
    expect_identical(suppressMessages(do.call(interactions_of, c(list(p$disk, class = "group"), args))),
                     suppressMessages(do.call(interactions_of, c(list(p$memory, class = "group"), args))),
                     info = paste(names(args), args, collapse = " "))
  m[5, 3] <- Inf
  expect_error(interactions_of(interaction_pair(m)$disk, class = "group"), "x has infinite values")
})

test_that("find_interactions() reads an integer HDF5 assay as codes, checking every block", {
  skip_without_delayed()
  small_blocks()
  m <- SummarizedExperiment::assay(delayed_pair("integer")$memory)
  m <- pmin(abs(m), 2L)
  m[40, 3] <- 4L  # the largest code is in a late block: levels = 5
  m[11, 2] <- NA
  p <- interaction_pair(m)
  disk <- suppressMessages(interactions_of(p$disk, class = "group", return_tuples = TRUE))
  expect_identical(disk$params$levels, 5L)
  expect_identical(disk, suppressMessages(interactions_of(p$memory, class = "group", return_tuples = TRUE)))
  expect_identical(suppressMessages(interactions_of(p$disk, class = "group", missing = "level")),
                   suppressMessages(interactions_of(p$memory, class = "group", missing = "level")))
  expect_error(interactions_of(p$disk, class = "group", levels = 4), "x has the code 4, but levels = 4")
  m[44, 30] <- -1L
  expect_error(interactions_of(interaction_pair(m)$disk, class = "group"), "codes must be 0 or more")
  # whole numbers stored as doubles are codes when levels is given
  storage.mode(m) <- "double"
  m[44, 30] <- 1.5
  expect_error(interactions_of(interaction_pair(m)$disk, class = "group", levels = 5), "x has fractions")
})

test_that("find_interactions() of an HDF5 assay over BiocParallel workers equals the single search", {
  skip_without_delayed()
  skip_if_not_installed("BiocParallel")
  small_blocks()
  p <- interaction_pair(SummarizedExperiment::assay(delayed_pair()$memory))
  old <- options(fsgpu.tiles = 3)
  on.exit(options(old), add = TRUE)
  args <- list(class = "group", dimensions = 2, discretizations = 2, top = 5)
  expect_identical(suppressMessages(do.call(interactions_of, c(list(p$disk, BPPARAM = BiocParallel::SerialParam()), args))),
                   suppressMessages(do.call(interactions_of, c(list(p$memory), args))))
})

test_that("find_interactions() on an HDF5 assay reports one progress for its blocks", {
  skip_without_delayed()
  small_blocks()
  p <- interaction_pair(SummarizedExperiment::assay(delayed_pair()$memory))
  seen <- character(0)
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, job), fsgpu.progress_interval = 0)
  on.exit(options(old), add = TRUE)
  suppressMessages(find_interactions(p$disk, class = "group", seed = 1, backend = "cpu", quiet = TRUE))
  expect_length(seen, 0)
  suppressMessages(find_interactions(p$disk, class = "group", seed = 1, backend = "cpu"))
  expect_identical(unique(seen), c("Discretizing 12 blocks of features", "Searching 990 2-tuples of variables"))
})
