# BPPARAM: searches spread over BiocParallel workers in tiles must return exactly what one
# process returns (same pairs, order, ties, bitwise scores, p-values), whatever the number of
# tiles. Skips without BiocParallel.

skip_if_not_installed("BiocParallel")

# Two socket workers, started once for the file: fresh R sessions that must find fsgpu
# themselves (testthat runs from tests/testthat, where a relative R_LIBS no longer points).
snow <- BiocParallel::SnowParam(2)
BiocParallel::bpstart(snow)  # stopped at the end of the file
serial <- BiocParallel::SerialParam()

# The run record of a result (NULL for an edge list, which has none).
run_of <- function(r) if (is.list(r) && !is.data.frame(r) && !is.null(r$run)) r$run else attr(r, "run")

# The result without what depends on the run: seconds (the timings summed over tiles), and in
# the run record the seconds, workers and threads, which expect_tiles_identical() checks apart.
result_of <- function(r) {
  for (a in c("elapsed", "timings")) attr(r, a) <- NULL
  run <- run_of(r)
  if (!is.null(run)) {
    run[c("elapsed", "workers", "threads")] <- NULL
    if (is.list(r) && !is.data.frame(r) && !is.null(r$run)) r$run <- run else attr(r, "run") <- run
  }
  if (is.list(r) && !is.data.frame(r)) r[c("elapsed", "timings")] <- NULL
  r
}

# The value of code with options(fsgpu.tiles = n).
with_tiles <- function(n, code) {
  old <- options(fsgpu.tiles = n)
  on.exit(options(old))
  code
}

# Runs f(BPPARAM) without, then with each param and number of tiles, and expects identical
# results, and run records that name the workers and the threads each ran (those given, or the
# cores here shared among the workers; one for forked workers).
expect_tiles_identical <- function(f, params = list(serial, snow), tiles = c(1, 3, 7)) {
  alone <- f(NULL)
  expected <- result_of(alone)
  for (param in params)
    for (n in tiles) {
      got <- with_tiles(n, f(param))
      label <- sprintf("%s with %d tiles", class(param)[1], n)
      expect_identical(result_of(got), expected, label = label)
      run <- run_of(got)
      if (is.null(run)) next
      workers <- as.integer(BiocParallel::bpnworkers(param))
      expect_identical(run$workers, workers, label = label)
      threads <- if (methods::is(param, "MulticoreParam")) 1L else
        c(run_of(alone)$threads, max(1L, fsgpu_threads() %/% workers))
      expect_true(run$threads %in% threads, label = label)
    }
  invisible(expected)
}

test_that("mi_pairs from tiles equals one process: top, threshold, joint and interaction, with ties", {
  d <- data_ties()  # copies of features 1 and 3: equal pairs in different tiles
  for (by in c("joint", "interaction")) {
    expect_tiles_identical(function(bp) mi_pairs(d$x, d$y, top = 7, by = by, p_adjust = "BH", backend = "cpu",
                                                 threads = 1, BPPARAM = bp))
    r <- expect_tiles_identical(function(bp) mi_pairs(d$x, d$y, threshold = if (by == "joint") 0.9 else 0,
                                                      by = by, p_adjust = "holm", backend = "cpu", threads = 2,
                                                      BPPARAM = bp))
    expect_gt(nrow(r), 7)
  }
  # the top cut runs through a run of equal pairs
  r <- expect_tiles_identical(function(bp) mi_pairs(d$x, d$y, top = 2, backend = "cpu", BPPARAM = bp),
                              params = list(serial), tiles = c(2, 5))
  expect_identical(attr(r, "n_pairs"), choose(20, 2))
})

test_that("mi_pairs from tiles equals one process: with, categorical, sparse and matrix output", {
  d <- data_ties_categorical()
  expect_tiles_identical(function(bp) mi_pairs(d$x, d$y, top = 5, with = c(10, 2, 7), backend = "cpu",
                                               BPPARAM = bp), tiles = c(2, 3))
  s <- data_informative(n = 80, p = 25, seed = 5)
  s$x[abs(s$x) < 1] <- 0
  expect_tiles_identical(function(bp) mi_pairs(as_dgc(s$x), s$y, top = 20, backend = "cpu", BPPARAM = bp),
                         params = list(serial), tiles = c(4, 6))
  expect_tiles_identical(function(bp) mi_pairs(s$x, s$y, output = "matrix", backend = "cpu", BPPARAM = bp),
                         tiles = 5)
})

test_that("mi_matrix from tiles equals one process", {
  d <- data_informative(n = 100, p = 23, seed = 7)
  expect_tiles_identical(function(bp) mi_matrix(d$x, nbins = 4, units = "nats", backend = "cpu", BPPARAM = bp),
                         tiles = c(1, 4, 9))
  # The workers use the estimator too.
  for (estimator in c("mm", "shrink"))
    expect_tiles_identical(function(bp) mi_matrix(d$x, nbins = 4, backend = "cpu", estimator = estimator, BPPARAM = bp),
                           tiles = 4)
})

test_that("find_interactions from tiles equals one process: 2- and 3-way, contrast, tuples", {
  g <- with_seed(11, {
    x <- matrix(sample(0:2, 150 * 24, replace = TRUE), 150, 24, dimnames = list(NULL, paste0("snp", 1:24)))
    x[, 20] <- x[, 4]  # equal gains in different tiles: ties go to the first tuple
    list(x = x, y = factor((x[, 4] > 0) != (x[, 9] > 0)))
  })
  run <- function(bp, ...) {
    set.seed(3)
    find_interactions(g$x, g$y, backend = "cpu", threads = 1, BPPARAM = bp, ...)
  }
  r <- expect_tiles_identical(function(bp) run(bp, dimensions = 2, return_tuples = TRUE), tiles = c(1, 3, 5))
  expect_identical(sort(r$tuples$variable[1:3]), c("snp20", "snp4", "snp9"))
  expect_tiles_identical(function(bp) run(bp, dimensions = 3, top = 4, n_contrast = 10), tiles = c(2, 7))
  expect_tiles_identical(function(bp) run(bp, dimensions = 1, contrast = TRUE), params = list(serial), tiles = c(2, 5))
  n <- with_seed(12, {
    x <- matrix(rnorm(120 * 15), 120, 15)
    list(x = x, y = factor(x[, 2] * x[, 6] > 0))
  })
  expect_tiles_identical(function(bp) {
    set.seed(4)
    find_interactions(n$x, n$y, dimensions = 2, divisions = 2, discretizations = 3, return_tuples = TRUE,
                      backend = "cpu", BPPARAM = bp)
  }, tiles = c(3, 4))
})

test_that("knn_graph from blocks of points equals one process: rows, samples, a query, duplicates", {
  d <- with_seed(21, {
    x <- matrix(rnorm(45 * 12), 45, 12, dimnames = list(paste0("g", 1:45), NULL))
    x[c(7, 30, 31, 44), ] <- rep(x[2, ], each = 4)  # five equal rows: more than k + 1 tie at 0
    x
  })
  for (metric in c("pearson", "spearman", "euclidean"))
    expect_tiles_identical(function(bp) knn_graph(d, k = 3, metric = metric, backend = "cpu", BPPARAM = bp),
                           tiles = c(1, 4, 7))
  expect_tiles_identical(function(bp) knn_graph(d, k = 2, output = "edges", mutual = TRUE, backend = "cpu",
                                                BPPARAM = bp), params = list(serial), tiles = 3)
  q <- d[c(3, 2, 40), ] + 0.01
  expect_tiles_identical(function(bp) knn_graph(d, k = 4, query = q, metric = "cosine", backend = "cpu",
                                                BPPARAM = bp), tiles = c(2, 3))
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = d))
  expect_tiles_identical(function(bp) knn_graph(se, k = 5, by = "samples", backend = "cpu", BPPARAM = bp),
                         tiles = c(2, 5))
})

test_that("forked workers (MulticoreParam) run one thread each and give what one process gives", {
  skip_on_os("windows")
  d <- data_ties()
  # Threads in this process first: GNU OpenMP's pool would hang a forked child that used it.
  alone <- knn_graph(d$x, k = 3, backend = "cpu", threads = 2)
  fork <- BiocParallel::MulticoreParam(2)
  expect_tiles_identical(function(bp) knn_graph(d$x, k = 3, backend = "cpu", threads = 2, BPPARAM = bp),
                         params = list(fork), tiles = 3)
  expect_identical(run_of(with_tiles(3, knn_graph(d$x, k = 3, backend = "cpu", BPPARAM = fork)))$threads, 1L)
  child <- parallel::mcparallel(list(threads = fsgpu_threads(4), info = backend_info()$threads,
                                     graph = knn_graph(d$x, k = 3, backend = "cpu", threads = 2)$index))
  got <- parallel::mccollect(child)[[1]]
  expect_identical(got$threads, 1L)
  expect_identical(got$info, 1L)
  expect_identical(got$graph, alone$index)
  # Forked workers cannot use the GPU this session opened: "auto" takes the CPU and says why.
  run <- run_of(with_tiles(2, knn_graph(d$x, k = 3, backend = "auto", BPPARAM = fork)))
  expect_identical(run$name, "cpu")
  expect_match(run$why_cpu, "forked processes, which cannot use the GPU")
  expect_error(knn_graph(d$x, k = 3, backend = "gpu", BPPARAM = fork), "use SnowParam for GPU workers")
  batch_forks <- BiocParallel::BatchtoolsParam(workers = 2, cluster = "multicore")
  expect_true(fsgpu:::bp_forks(batch_forks))
  expect_false(fsgpu:::bp_forks(snow))
})

test_that("BatchtoolsParam, the route to a cluster, gives what one process gives", {
  skip_if_not_installed("batchtools")
  # Two fresh R sessions on this machine (a cluster's registry names a scheduler instead).
  batch <- BiocParallel::BatchtoolsParam(
    workers = 2, cluster = "socket", progressbar = FALSE,
    registryargs = BiocParallel::batchtoolsRegistryargs(file.dir = tempfile("fsgpu-batchtools")))
  d <- data_ties()
  expect_tiles_identical(function(bp) mi_pairs(d$x, d$y, top = 7, backend = "cpu", threads = 1, BPPARAM = bp),
                         params = list(batch), tiles = 3)
  g <- with_seed(13, {
    x <- matrix(sample(0:2, 120 * 16, replace = TRUE), 120, 16)
    list(x = x, y = factor((x[, 2] > 0) != (x[, 7] > 0)))
  })
  expect_tiles_identical(function(bp) {
    set.seed(6)
    find_interactions(g$x, g$y, dimensions = 2, top = 5, backend = "cpu", threads = 1, BPPARAM = bp)
  }, params = list(batch), tiles = 4)
  expect_tiles_identical(function(bp) knn_graph(g$x + 0, k = 3, backend = "cpu", BPPARAM = bp),
                         params = list(batch), tiles = 3)
})

test_that("tiles on workers report no progress; the job's record names its workers", {
  d <- data_informative(n = 90, p = 30, classes = 2)
  seen <- numeric()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, done), fsgpu.progress_interval = 0)
  on.exit(options(old))
  mi_pairs(d$x, d$y, top = 5, backend = "cpu", BPPARAM = serial)  # the tiles run in this process
  mi_matrix(d$x[, 1:8], backend = "cpu", BPPARAM = serial)
  knn_graph(t(d$x), k = 3, backend = "cpu", BPPARAM = serial)
  expect_length(seen, 0)
  r <- mi_pairs(d$x, d$y, top = 5, backend = "cpu", threads = 1, BPPARAM = snow)
  expect_identical(attr(r, "run")$workers, 2L)
  expect_output(print(r), "Ran on CPU, 1 thread per tile, 2 BiocParallel workers in ")
  expect_identical(attr(mi_pairs(d$x, d$y, top = 5, backend = "cpu"), "run")$workers, 1L)
})

test_that("tiles' backends and reasons for the CPU merge into one record", {
  expect_identical(fsgpu:::backends_of(c("cpu", "gpu", "cpu")), "gpu+cpu")
  expect_identical(fsgpu:::backends_of(c("cpu", "cpu")), "cpu")
  expect_identical(fsgpu:::why_cpu_of(c("", "too many levels", "", "too many levels", "no memory")),
                   "too many levels; no memory")
  expect_identical(fsgpu:::why_cpu_of(c("", "")), "")
  run <- fsgpu:::backend_used("cpu", 3, integer(), 0.5, "too many levels", workers = 2)
  expect_identical(format(run), "Ran on CPU, 3 threads per tile, 2 BiocParallel workers in 0.5 s; not on a GPU: too many levels")
})

test_that("a constant row is reported once, as without BPPARAM", {
  x <- with_seed(22, matrix(rnorm(30 * 6), 30, 6))
  x[5, ] <- 1
  expect_message(knn_graph(x, k = 2, backend = "cpu", BPPARAM = serial), "1 constant row")
  expect_message(knn_graph(x, k = 2, query = x[4:6, ], backend = "cpu", BPPARAM = serial), "2 constant rows")
})

test_that("BPPARAM and devices are checked, and a failing tile is named", {
  d <- data_informative(n = 60, p = 8)
  expect_error(mi_pairs(d$x, d$y, BPPARAM = 2), "BPPARAM must be a BiocParallelParam")
  expect_error(mi_pairs(d$x, d$y, devices = list(0, 1)), "devices as a list .* is for BPPARAM")
  bp <- fsgpu:::bp_setup(serial, NULL, 1)
  expect_error(fsgpu:::bp_run_tiles(bp, "fsgpu_mi_matrix", list(x = "not data", n_samples = 60, nbins = 3,
                                                                backend = "cpu", devices = integer(),
                                                                memory_limit = 0),
                                    list(list(row_begin = 0, row_end = 4), list(row_begin = 4, row_end = 8)),
                                    "mi_matrix"),
               "mi_matrix: tile 1 of 2 \\(rows 1 to 4\\) failed on its worker: .*x must be")
})

test_that("tiles split the work into non-empty ranges of about equal work", {
  r <- fsgpu:::split_by_work(99:0, 4)
  expect_identical(r[[1]][["begin"]], 0)
  expect_identical(r[[length(r)]][["end"]], 100)
  ends <- vapply(r, `[[`, numeric(1), "end")
  expect_identical(vapply(r, `[[`, numeric(1), "begin")[-1], ends[-length(ends)])
  expect_true(all(diff(c(0, ends)) > 0))
  expect_length(fsgpu:::split_by_work(c(5, 0, 0), 3), 1)  # the empty ranges go
  expect_length(fsgpu:::split_by_work(rep(1, 2), 5), 2)
})

BiocParallel::bpstop(snow)
