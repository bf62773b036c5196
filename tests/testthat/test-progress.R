# Progress, quiet runs, interrupts and the record of where a job ran, for every long job.

# Runs `code` with a progress handler that records every update; returns the fractions.
progress_of <- function(code) {
  seen <- numeric()
  old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, done), fsgpu.progress_interval = 0)
  on.exit(options(old))
  force(code)
  seen
}

# One small run of every job, quiet or not.
jobs <- function(quiet) {
  d <- data_informative(n = 90, p = 30, classes = 2)
  codes <- with_seed(2, matrix(sample(0:2, 90 * 12, replace = TRUE), 90, 12))
  list(
    select_features = function() select_features(d$x, d$y, k = 6, backend = "cpu", threads = 2, quiet = quiet),
    mi_pairs = function() mi_pairs(d$x, d$y, top = 5, backend = "cpu", threads = 2, quiet = quiet),
    mi_matrix = function() mi_matrix(d$x[, 1:8], backend = "cpu", threads = 2, quiet = quiet),
    discretize = function() discretize(d$x, d$y, backend = "cpu", threads = 2, quiet = quiet),
    knn_graph = function() knn_graph(t(d$x), k = 3, backend = "cpu", threads = 2, quiet = quiet),
    find_interactions = function() find_interactions(codes, d$y, dimensions = 2, backend = "cpu", threads = 2,
                                                     seed = 1, quiet = quiet)
  )
}

test_that("every job reports progress that grows to 1", {
  for (job in names(jobs(FALSE))) {
    seen <- progress_of(jobs(FALSE)[[job]]())
    expect_true(length(seen) >= 1, info = job)
    expect_identical(seen[length(seen)], 1, info = job)
    expect_true(all(seen >= 0 & seen <= 1) && !is.unsorted(seen), info = job)
  }
  # A selection reports each step: k = 6 gives 1/6, ..., 5/6, then 1.
  seen <- progress_of(jobs(FALSE)$select_features())
  expect_equal(seen, c(1:5 / 6, 1))
})

test_that("quiet = TRUE shows no progress and no messages", {
  for (job in names(jobs(TRUE))) {
    seen <- progress_of(expect_silent(jobs(TRUE)[[job]]()))
    expect_length(seen, 0)
  }
  # Messages a job would give: a constant row, objects without a class.
  x <- rbind(matrix(rnorm(40), 4, 10), 1)
  expect_message(knn_graph(x, k = 2, backend = "cpu"), "constant row")
  expect_silent(knn_graph(x, k = 2, backend = "cpu", quiet = TRUE))
  codes <- with_seed(3, matrix(sample(0:2, 60 * 6, replace = TRUE), 60, 6))
  y <- rep(c("a", "b", NA), 20)
  expect_message(find_interactions(codes, y, dimensions = 2, backend = "cpu", seed = 1), "without a class")
  expect_silent(find_interactions(codes, y, dimensions = 2, backend = "cpu", seed = 1, quiet = TRUE))
  expect_error(select_features(x, rep(1:2, length.out = 5), k = 2, quiet = NA), "quiet must be TRUE or FALSE")
})

test_that("an interrupt during a job stops it, and the next job runs", {
  skip_on_os("windows")  # signals to the own process
  d <- data_informative(n = 90, p = 30, classes = 2)
  calls <- 0
  old <- options(fsgpu.progress_interval = 0, fsgpu.progress_handler = function(job, done) {
    calls <<- calls + 1
    if (calls == 1) tools::pskill(Sys.getpid(), tools::SIGINT)  # as Ctrl-C after the first step
  })
  on.exit(options(old))
  got <- tryCatch(select_features(d$x, d$y, k = 20, backend = "cpu"), interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_lt(calls, 20)
  options(old)
  expect_s3_class(select_features(d$x, d$y, k = 3, backend = "cpu"), "fsgpu_selection")
})

test_that("an error in the progress handler stops the job with its message", {
  d <- data_informative(n = 90, p = 30, classes = 2)
  old <- options(fsgpu.progress_interval = 0, fsgpu.progress_handler = function(job, done) stop("handler failed"))
  on.exit(options(old))
  expect_error(select_features(d$x, d$y, k = 5, backend = "cpu"), "handler failed")
})

test_that("every result says where it ran, and print shows it", {
  results <- lapply(jobs(TRUE), function(run) run())
  for (job in names(results)) {
    r <- results[[job]]
    run <- if (is.list(r) && !is.null(r$run)) r$run else attr(r, "run")
    expect_s3_class(run, "fsgpu_backend_used")
    expect_identical(run$name, "cpu", info = job)
    expect_identical(run$threads, 2L, info = job)
    expect_identical(run$why_cpu, "", info = job)  # the user chose the CPU
    expect_true(run$elapsed >= 0, info = job)
    if (job != "mi_matrix") expect_output(print(r), "Ran on CPU, 2 threads", info = job)
  }
})

test_that("backend = \"auto\" says why it took the CPU", {
  d <- data_informative(n = 90, p = 30, classes = 2)
  sel <- select_features(d$x, d$y, k = 3, backend = "auto")
  expect_identical(sel$run$name, sel$backend)
  if (sel$backend == "cpu") {
    expect_true(nzchar(sel$run$why_cpu))
    expect_output(print(sel), "not on a GPU: ")
  }
  weighted <- select_features(d$x, d$y, k = 3, weights = rep(1, 90), backend = "auto")
  expect_match(weighted$run$why_cpu, "weighted information is computed on the CPU")
  expect_output(print(weighted), "weighted information is computed on the CPU")
})
