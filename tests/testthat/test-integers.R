# Integer columns: binned when bins are asked for (nbins or discretize), by default when they
# have many distinct values (with one message), categories otherwise; `categorical =`
# overrides; the assay of a SummarizedExperiment defaults to logcounts. Every job that bins.

# Counts-like integer data: 5 columns shifted by class, the rest noise; values 0..~400.
integer_data <- function(n = 90, p = 24, seed = 21) {
  with_seed(seed, {
    y <- factor(rep_len(c("a", "b", "c"), n))
    x <- matrix(rpois(n * p, 150), n, p)
    x[, 1:5] <- x[, 1:5] + 40L * as.integer(y)
    list(x = named(x), y = y)
  })
}

as_double <- function(x) {
  storage.mode(x) <- "double"
  x
}

# A result without its run record and timings (seconds differ between runs).
values_of <- function(r) {
  if (inherits(r, "fsgpu_selection")) return(r$selection)
  strip_attributes(r)
}

test_that("integer data with nbins give exactly the results of the same data as doubles", {
  d <- integer_data()
  xd <- as_double(d$x)
  expect_true(is.integer(d$x))
  for (nbins in c(3, 8)) {
    expect_silent(got <- select_features(d$x, d$y, k = 6, nbins = nbins, backend = "cpu"))
    want <- select_features(xd, d$y, k = 6, nbins = nbins, backend = "cpu")
    expect_identical(got$selection, want$selection)
    expect_identical(got$run$notes, "24 integer columns binned")
    expect_null(want$run$notes)
    expect_identical(values_of(mi_scores(d$x, d$y, nbins = nbins, backend = "cpu")),
                     values_of(mi_scores(xd, d$y, nbins = nbins, backend = "cpu")))
    expect_identical(values_of(cmi_scores(d$x, d$y, z = "g2", nbins = nbins, backend = "cpu")),
                     values_of(cmi_scores(xd, d$y, z = "g2", nbins = nbins, backend = "cpu")))
    expect_identical(values_of(jmi_scores(d$x, d$y, z = d$x[, 3], nbins = nbins, backend = "cpu")),
                     values_of(jmi_scores(xd, d$y, z = xd[, 3], nbins = nbins, backend = "cpu")))
    expect_identical(as.data.frame(mi_pairs(d$x, d$y, top = 20, nbins = nbins, backend = "cpu")),
                     as.data.frame(mi_pairs(xd, d$y, top = 20, nbins = nbins, backend = "cpu")))
    expect_identical(values_of(mi_matrix(d$x, nbins = nbins, backend = "cpu")),
                     values_of(mi_matrix(xd, nbins = nbins, backend = "cpu")))
  }
  # as data frames, as sparse matrices (always double) and with discretize =
  df <- as.data.frame(d$x)
  expect_identical(select_features(df, d$y, k = 6, nbins = 5, backend = "cpu")$selection,
                   select_features(xd, d$y, k = 6, nbins = 5, backend = "cpu")$selection)
  expect_identical(select_features(d$x, d$y, k = 6, discretize = "caim", backend = "cpu")$selection,
                   select_features(xd, d$y, k = 6, discretize = "caim", backend = "cpu")$selection)
  expect_identical(values_of(mi_scores(d$x, d$y, discretize = "equal_freq", nbins = 4, backend = "cpu")),
                   values_of(mi_scores(xd, d$y, discretize = "equal_freq", nbins = 4, backend = "cpu")))
  # the binned result is not the categorical one (which ranks by values alone)
  expect_false(identical(select_features(d$x, d$y, k = 6, nbins = 8, backend = "cpu")$selection$feature,
                         select_features(d$x, d$y, k = 6, nbins = 8, categorical = TRUE,
                                          backend = "cpu")$selection$feature))
})

test_that("the printout says how integer columns were taken", {
  d <- integer_data()
  sel <- select_features(d$x, d$y, k = 3, nbins = 8, backend = "cpu")
  out <- capture.output(print(sel))
  expect_match(out[1], "8 bins")
  expect_identical(out[3], "Input: 24 integer columns binned")
  few <- d$x %% 3L
  sel <- select_features(few, d$y, k = 3, backend = "cpu")
  expect_true("Input: 24 integer columns as categories" %in% capture.output(print(sel)))
  expect_true("Input: 24 integer columns binned" %in%
                capture.output(print(mi_scores(d$x, d$y, nbins = 4, backend = "cpu"))))
  expect_true("Input: 24 integer columns binned" %in%
                capture.output(print(mi_pairs(d$x, d$y, top = 3, nbins = 4, backend = "cpu"))))
  expect_identical(attr(mi_matrix(d$x[, 1:3], nbins = 4, backend = "cpu"), "run")$notes,
                   "3 integer columns binned")
  # doubles alone print as before: no input line
  expect_false(any(grepl("^Input", capture.output(print(select_features(as_double(d$x), d$y, k = 3,
                                                                          backend = "cpu"))))))
})

test_that("without nbins, integer columns with many values are binned with one message", {
  d <- integer_data()
  limit <- fsgpu:::integer_level_limit(nrow(d$x))
  expect_identical(limit, 10L)
  expect_identical(fsgpu:::integer_level_limit(5000), 18L)  # the default bins when larger
  more <- function(v, limit) fsgpu:::fsgpu_more_values_than(list(as.integer(v)), 1L, as.integer(limit), 1L)
  expect_identical(c(more(1:11, 10), more(1:10, 10), more(c(1L, NA, 3L), 2), more(c(0L, 5L, 1e8L, NA, 0L), 2),
                     more(c(NA_integer_, NA), 0), more(c(-3L, 40L, 2L, 2L), 2)),
                   c(TRUE, FALSE, FALSE, TRUE, FALSE, TRUE))
  x <- d$x
  x[, 7] <- x[, 7] %% 4L   # 4 values: a category
  x[, 8] <- x[, 8] %% 10L  # 10 values: at the limit, a category
  x[, 9] <- x[, 9] %% 11L  # 11 values: binned
  messages <- character()
  got <- withCallingHandlers(select_features(x, d$y, k = 6, backend = "cpu"),
                             message = function(m) {
                               messages <<- c(messages, conditionMessage(m))
                               invokeRestart("muffleMessage")
                             })
  expect_length(messages, 1L)
  expect_match(messages, "^Binning 22 integer columns with more than 10 distinct values \\('g1', 'g2', 'g3' and 19 more\\)")
  expect_match(messages, "categorical = TRUE \\(or the columns' names\\) keeps them as categories")
  expect_identical(got$run$notes, c("22 integer columns binned", "2 integer columns as categories"))
  # the same as binning the 22 (as doubles) and keeping the two categories (as factors)
  mixed <- as.data.frame(x)
  mixed[-(7:8)] <- lapply(mixed[-(7:8)], as.double)
  mixed[7:8] <- lapply(mixed[7:8], factor)
  expect_identical(got$selection, select_features(mixed, d$y, k = 6, backend = "cpu")$selection)
  # quiet says nothing; nbins given says nothing (the user asked for bins)
  expect_silent(select_features(x, d$y, k = 6, backend = "cpu", quiet = TRUE))
  expect_silent(select_features(x, d$y, k = 6, nbins = 5, backend = "cpu"))
  # few values everywhere: categories, exactly as before, and no message
  few <- d$x %% 5L
  expect_silent(sel <- select_features(few, d$y, k = 4, backend = "cpu"))
  as_factors <- as.data.frame(lapply(as.data.frame(few), factor))
  expect_identical(sel$selection, select_features(as_factors, d$y, k = 4, backend = "cpu")$selection)
  expect_message(mi_scores(x, d$y, backend = "cpu"), "Binning 22 integer columns")
  expect_message(mi_matrix(x[, 1:4], backend = "cpu"), "Binning 4 integer columns")
  expect_message(mi_pairs(x, d$y, top = 3, backend = "cpu"), "Binning 22 integer columns")
  expect_message(cmi_scores(x[, 7:8], d$y, z = d$x[, 1], backend = "cpu"), "Binning z, integer values")
})

test_that("categorical = overrides per column: TRUE, FALSE, names, indices, logical", {
  d <- integer_data()
  xd <- as_double(d$x)
  factors <- as.data.frame(lapply(as.data.frame(d$x), factor))
  cat_all <- select_features(d$x, d$y, k = 4, nbins = 8, categorical = TRUE, backend = "cpu")
  expect_identical(cat_all$selection, select_features(factors, d$y, k = 4, nbins = 8, backend = "cpu")$selection)
  expect_identical(cat_all$run$notes, "24 integer columns as categories")
  # double columns as categories: the codes of their distinct values
  expect_identical(select_features(xd, d$y, k = 4, categorical = TRUE, backend = "cpu")$selection,
                   cat_all$selection)
  expect_identical(select_features(xd, d$y, k = 4, categorical = TRUE, backend = "cpu")$run$notes,
                   "24 numeric columns as categories")
  # FALSE bins even integer columns with few values, with the default bins
  few <- d$x %% 6L
  expect_identical(select_features(few, d$y, k = 4, categorical = FALSE, backend = "cpu")$selection,
                   select_features(as_double(few), d$y, k = 4, backend = "cpu")$selection)
  # a selection: those columns are categories, the others follow the rule (nbins given: binned)
  mixed <- as.data.frame(xd)
  mixed[c(2, 5)] <- lapply(mixed[c(2, 5)], factor)
  want <- select_features(mixed, d$y, k = 5, nbins = 6, backend = "cpu")$selection
  for (sel in list(c("g2", "g5"), c(5, 2), seq_len(24) %in% c(2, 5))) {
    got <- select_features(d$x, d$y, k = 5, nbins = 6, categorical = sel, backend = "cpu")
    expect_identical(got$selection, want)
    expect_identical(got$run$notes, c("22 integer columns binned", "2 integer columns as categories"))
  }
  expect_identical(values_of(mi_scores(d$x, d$y, nbins = 6, categorical = c("g2", "g5"), backend = "cpu")),
                   values_of(mi_scores(mixed, d$y, nbins = 6, backend = "cpu")))
  # factor and logical columns stay categories whatever categorical says
  df <- data.frame(f = factor(rep_len(c("u", "v"), 90)), l = rep_len(c(TRUE, FALSE, FALSE), 90), n = xd[, 1])
  expect_identical(select_features(df, d$y, k = 3, categorical = FALSE, backend = "cpu")$selection,
                   select_features(df, d$y, k = 3, backend = "cpu")$selection)
  expect_error(select_features(d$x, d$y, categorical = "g99", backend = "cpu"), "categorical: no feature named 'g99'")
  expect_error(select_features(d$x, d$y, categorical = 30, backend = "cpu"), "categorical: column indices must be between 1 and 24")
  expect_error(select_features(d$x, d$y, categorical = c(TRUE, FALSE), backend = "cpu"),
               "one TRUE or FALSE per feature \\(24\\), not 2 values")
  expect_error(select_features(d$x, d$y, categorical = NA, backend = "cpu"), "categorical must be TRUE, FALSE, NULL")
  expect_error(mi_matrix(d$x, categorical = list(1), backend = "cpu"), "categorical must be TRUE, FALSE, NULL")
})

test_that("a sparse matrix takes categorical columns as dense categories", {
  d <- integer_data(n = 60, p = 8)
  x <- d$x
  x[x < 160] <- 0L
  xd <- as_double(x)
  got <- select_features(as_dgc(xd), d$y, k = 4, categorical = "g3", backend = "cpu")
  mixed <- as.data.frame(xd)
  mixed$g3 <- factor(mixed$g3)
  expect_identical(got$selection, select_features(mixed, d$y, k = 4, backend = "cpu")$selection)
  expect_identical(select_features(as_dgc(xd), d$y, k = 4, backend = "cpu")$selection,
                   select_features(xd, d$y, k = 4, backend = "cpu")$selection)
})

test_that("SummarizedExperiment: integer counts are binned with nbins, and logcounts is the default assay", {
  skip_without_sce()
  d <- integer_data(n = 40, p = 30)
  counts <- t(d$x)
  logcounts <- log2(counts + 1)
  sce <- SingleCellExperiment::SingleCellExperiment(list(counts = counts, logcounts = logcounts),
                                                    colData = S4Vectors::DataFrame(cluster = d$y))
  expect_true(is.integer(SummarizedExperiment::assay(sce, "counts")))
  sel <- select_features(sce, class = "cluster", assay = "counts", nbins = 8, backend = "cpu")
  expect_identical(sel$selection, select_features(as_double(d$x), d$y, k = 10, nbins = 8, backend = "cpu")$selection)
  expect_identical(sel$run$notes, c("assay 'counts'", "30 integer columns binned"))
  expect_true("Input: assay 'counts'; 30 integer columns binned" %in% capture.output(print(sel)))
  # the default assay is logcounts, named in the printout of every job
  lc <- t(logcounts)
  default <- select_features(sce, class = "cluster", backend = "cpu")
  expect_identical(default$selection, select_features(lc, d$y, backend = "cpu")$selection)
  expect_identical(default$run$notes, "assay 'logcounts'")
  expect_true("Input: assay 'logcounts'" %in% capture.output(print(default)))
  notes <- function(r) if (is.list(r) && !is.data.frame(r) && !is.null(r$run)) r$run$notes else attr(r, "run")$notes
  results <- list(
    mi_scores(sce, class = "cluster", backend = "cpu"),
    cmi_scores(sce, class = "cluster", z = "g1", backend = "cpu"),
    jmi_scores(sce, class = "cluster", z = "g1", backend = "cpu"),
    mi_pairs(sce, class = "cluster", top = 5, backend = "cpu"),
    mi_matrix(sce[1:5, ], backend = "cpu"),
    discretize(sce, class = "cluster", backend = "cpu"),
    knn_graph(sce, k = 3, backend = "cpu"),
    find_interactions(sce[1:6, ], class = "cluster", seed = 1, backend = "cpu", threads = 1))
  for (r in results) expect_identical(notes(r), "assay 'logcounts'")
  expect_equal(strip_attributes(mi_scores(sce, class = "cluster", backend = "cpu")),
               strip_attributes(mi_scores(lc, d$y, backend = "cpu")))
  expect_identical(discretize(sce, class = "cluster", backend = "cpu")$cuts,
                   discretize(sce, class = "cluster", assay = "logcounts", backend = "cpu")$cuts)
  # no logcounts: the first assay
  se <- SummarizedExperiment::SummarizedExperiment(list(raw = counts, other = logcounts),
                                                   colData = S4Vectors::DataFrame(cluster = d$y))
  expect_message(r <- mi_scores(se, class = "cluster", backend = "cpu"), "Binning 30 integer columns")
  expect_identical(attr(r, "run")$notes, c("assay 'raw'", "30 integer columns binned"))
  expect_identical(attr(knn_graph(se, k = 3, backend = "cpu"), "run")$notes, "assay 'raw'")
})

test_that("a DelayedArray assay resolves its integer columns block by block as in memory", {
  skip_without_sce()
  skip_if_not_installed("DelayedArray")
  skip_if_not_installed("HDF5Array")
  d <- integer_data(n = 36, p = 45)
  m <- t(d$x)
  m[7, ] <- m[7, ] %% 3L  # a category by the rule
  col <- S4Vectors::DataFrame(group = d$y)
  memory <- SummarizedExperiment::SummarizedExperiment(list(x = m), colData = col)
  disk <- SummarizedExperiment::SummarizedExperiment(list(x = HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"),
                                                                                        name = "x")), colData = col)
  dimnames(disk) <- dimnames(m)
  old <- DelayedArray::getAutoBlockSize()
  suppressMessages(DelayedArray::setAutoBlockSize(4 * 36 * 4))
  on.exit(suppressMessages(DelayedArray::setAutoBlockSize(old)), add = TRUE)
  expect_gt(length(DelayedArray::rowAutoGrid(DelayedArray::DelayedArray(m))), 5)
  for (args in list(list(nbins = 6), list(), list(categorical = c("g7", "g9")), list(discretize = "mdlp"))) {
    messages <- character()
    run <- function(se) withCallingHandlers(
      do.call(select_features, c(list(se, class = "group", k = 5, backend = "cpu"), args)),
      message = function(m) {
        messages <<- c(messages, conditionMessage(m))
        invokeRestart("muffleMessage")
      })
    on_disk <- run(disk)
    in_memory <- run(memory)
    expect_identical(on_disk$selection, in_memory$selection)
    expect_identical(on_disk$run$notes, in_memory$run$notes)
    expect_identical(messages[1], messages[2])  # one message each (or none), the same
    expect_true(length(messages) %in% c(0L, 2L))
  }
  expect_identical(on_disk$run$notes, c("assay 'x'", "45 integer columns binned"))
  expect_pairs_equal(mi_pairs(disk, class = "group", top = 8, nbins = 5, backend = "cpu"),
                     mi_pairs(memory, class = "group", top = 8, nbins = 5, backend = "cpu"))
})

test_that("the golub microarray file (integer intensities) gives the double answer", {
  golub <- Sys.getenv("FSGPU_GOLUB", "/work/shared/data/datamicroarray/golub.csv.gz")
  skip_if_not(file.exists(golub), "the golub data file is not here")
  expect_message(expect_message(d <- read_delimited(golub), "taking column 'sample_id' as the sample IDs"),
                 "Reading 7,129 columns of whole numbers")
  expect_false("sample_id" %in% names(d$x))
  expect_identical(dim(d$x), c(72L, 7129L))
  raw <- utils::read.csv(gzfile(golub), check.names = FALSE)
  x <- as.matrix(raw[, -(1:2)])
  expect_true(is.integer(x))
  y <- factor(raw$class)
  sel <- select_features(d$x, d$y, k = 20, nbins = 8, backend = "cpu")
  expect_identical(sel$selection, select_features(as_double(x), y, k = 20, nbins = 8, backend = "cpu")$selection)
  expect_identical(sel$selection, select_features(x, y, k = 20, nbins = 8, backend = "cpu")$selection)
  expect_identical(sel$selection$feature[1], "M23197_at")  # CD33, the textbook marker of AML
})

test_that("with few samples, integer columns with more values than half the samples are binned", {
  set.seed(5)
  y <- rep(c("a", "b"), each = 5)
  x <- matrix(sample(1:1000, 10 * 6), 10, 6, dimnames = list(NULL, paste0("p", 1:6)))
  x[, 4] <- x[, 4] + 2000L * (y == "b")
  expect_message(got <- select_features(x, y, k = 2, backend = "cpu"), "more than 5 distinct values")
  want <- select_features(`storage.mode<-`(x, "double"), y, k = 2, backend = "cpu")
  expect_identical(got$selection, want$selection)
  expect_identical(got$selection$feature[1], "p4")
})

test_that("a discretization fitted on one assay is not applied to another", {
  skip_if_not_installed("SummarizedExperiment")
  set.seed(6)
  counts <- matrix(rpois(30 * 40, 20), 30, 40, dimnames = list(paste0("g", 1:30), NULL))
  counts[1, 21:40] <- counts[1, 21:40] + 60L
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = counts, logcounts = log2(counts + 1)),
                                                   colData = data.frame(cl = rep(c("u", "v"), each = 20)))
  fit <- discretize(se, "cl", assay = "counts", method = "mdlp", backend = "cpu", quiet = TRUE)
  expect_identical(fit$assay, "counts")
  # predict() reads the assay the cuts were fitted on unless told otherwise.
  expect_identical(predict(fit, se), predict(fit, se, assay = "counts"))
  expect_false(identical(predict(fit, se), predict(fit, se, assay = "logcounts")))
  expect_error(select_features(se, "cl", k = 2, discretize = fit, backend = "cpu", quiet = TRUE),
               "fitted on assay 'counts', and this job reads assay 'logcounts': give assay = \"counts\"")
  expect_identical(select_features(se, "cl", k = 2, discretize = fit, assay = "counts", backend = "cpu",
                                   quiet = TRUE)$selection$feature[1], "g1")
})

test_that("discretize = with nothing to cut says so", {
  df <- data.frame(a = c(1.5, 2.5, 3.5, 4.5), b = c(1L, 2L, 1L, 2L))
  expect_message(select_features(df, c("x", "x", "y", "y"), k = 1, discretize = "mdlp", categorical = TRUE,
                                 backend = "cpu"), "nothing to cut")
})
