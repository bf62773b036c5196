# Shared by the tests of the input paths (test-input-*.R, test-delayed.R): a job run on the
# deferred path (checks and conversions in the C++ encoder) against the checks made in R, data
# for the integer rule, and DelayedArray's blocks made small.

# Messages said while running `code`, and its value (or its error's message).
said_by <- function(code) {
  said <- character()
  value <- tryCatch(withCallingHandlers(code, message = function(m) {
    said <<- c(said, conditionMessage(m))
    invokeRestart("muffleMessage")
  }), error = function(e) structure(conditionMessage(e), class = "error_message"))
  list(value = value, messages = said)
}

# The input as the checks in R resolve it (prepare_input() without deferral).
input_in_r <- function(x, y, nbins, categorical) {
  binning <- fsgpu:::binning_request(nbins, NULL, categorical)
  if (methods::is(x, "SummarizedExperiment")) return(fsgpu:::prepare_se_input(x, y, binning = binning))
  input <- fsgpu:::prepare_input(x, y, binning = binning)
  expect_null(input$bin_above)
  input
}

# A job's result, and what the checks in R give for it: the same values, notes and messages.
expect_job_as_r <- function(job, x, y, z = NULL, nbins = NULL, categorical = NULL, ...) {
  scores <- job %in% c("mi", "cmi", "jmi")
  run_r <- function() {
    input <- input_in_r(x, y, nbins, categorical)
    if (scores) {
      fsgpu:::run_scores(input, job, z, nbins, "cpu", 2, NULL, "bits", FALSE, NULL, ...)
    } else {
      fsgpu:::run_pairs(input, top = 50, threshold = NULL, with = NULL, by = "joint", p_adjust = "none",
                        output = "pairs", nbins = nbins, backend = "cpu", threads = 2, devices = NULL, units = "bits")
    }
  }
  run_job <- function() {
    f <- switch(job, mi = mi_scores, cmi = cmi_scores, jmi = jmi_scores, pairs = mi_pairs)
    args <- c(list(x, y), if (job %in% c("cmi", "jmi")) list(z = z), if (job == "pairs") list(top = 50),
              list(nbins = nbins, categorical = categorical, backend = "cpu", threads = 2, ...))
    do.call(f, args)
  }
  got <- said_by(run_job())
  ref <- said_by(run_r())
  expect_identical(got$messages, ref$messages)
  if (inherits(ref$value, "error_message")) {
    expect_identical(got$value, ref$value)
    return(invisible(got))
  }
  expect_identical(as.data.frame(got$value), as.data.frame(ref$value))
  expect_identical(attr(got$value, "run")$notes, attr(ref$value, "run")$notes)
  for (a in c("nbins", "binned", "n_pairs")) expect_identical(attr(got$value, a), attr(ref$value, a))
  invisible(got)
}

expect_jobs_as_r <- function(x, y, z, ...) {
  for (job in c("mi", "cmi", "jmi", "pairs")) expect_job_as_r(job, x, y, z = z, ...)
}

# Integer columns for the rule: few values, at the limit (10), above it, negative, a wide range,
# more than 256 levels.
rule_data <- function(n = 300, seed = 5) {
  with_seed(seed, {
    y <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
    shift <- 3L * as.integer(y)
    x <- cbind(sample(0:3, n, TRUE), sample(0:9, n, TRUE), sample(0:10, n, TRUE) + shift,
               sample(-50:50, n, TRUE) - shift, sample(c(-2e9, 0, 2e9, 7), n, TRUE),
               sample(0:299, n, TRUE) + 20L * shift)
    storage.mode(x) <- "integer"
    list(x = named(x), y = y)
  })
}

# mi_matrix() (no class) both ways: the same matrix, notes, messages or error.
expect_matrix_as_r <- function(x, nbins = NULL, categorical = NULL, estimator = "emp") {
  binning <- fsgpu:::binning_request(nbins, NULL, categorical)
  got <- said_by(mi_matrix(x, nbins = nbins, categorical = categorical, backend = "cpu", threads = 2,
                           estimator = estimator))
  in_r <- function() {
    input <- if (methods::is(x, "SummarizedExperiment")) fsgpu:::prepare_se_input(x, NULL, binning = binning)
             else fsgpu:::prepare_unsupervised_input(x, binning = binning)
    fsgpu:::run_mi_matrix(input, NULL, nbins, "cpu", 2, NULL, "bits", estimator = estimator)
  }
  ref <- said_by(in_r())
  expect_identical(got$messages, ref$messages)
  if (inherits(ref$value, "error_message")) return(expect_identical(got$value, ref$value))
  expect_identical(attr(got$value, "run")$notes, attr(ref$value, "run")$notes)
  attr(got$value, "run") <- attr(ref$value, "run") <- NULL
  expect_identical(got$value, ref$value)
}

# The SummarizedExperiment of rule_data(): features in rows, samples c1, c2, ..., class "type".
rule_se <- function(r) {
  counts <- t(r$x)
  colnames(counts) <- paste0("c", seq_len(ncol(counts)))
  SummarizedExperiment::SummarizedExperiment(list(counts = counts), colData = S4Vectors::DataFrame(type = r$y))
}

skip_without_delayed <- function() {
  skip_without_sce()
  skip_if_not_installed("DelayedArray")
  skip_if_not_installed("HDF5Array")
}

# Blocks of 4 features (36 doubles each): 12 blocks for 45 features, until the calling test ends.
small_blocks <- function(env = parent.frame()) {
  old <- DelayedArray::getAutoBlockSize()
  suppressMessages(DelayedArray::setAutoBlockSize(8 * 36 * 4))
  restore <- bquote(suppressMessages(DelayedArray::setAutoBlockSize(.(old))))
  do.call(on.exit, list(restore, add = TRUE), envir = env)
  expect_gt(length(DelayedArray::rowAutoGrid(matrix(0, 45, 36))), 10)
}
