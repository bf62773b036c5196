# The R-side share of a job's time (issue 19): everything outside the engine's glue call (input
# checks, the integer rule's counts, class codes, result assembly) over the job's wall time, for
# the checks in R (prepare_input() without deferral, the path before) and the deferred checks
# in the encoder (the path the jobs take now).
#
#   Rscript bench/inputs.R [--threads 2] [--reps 2] [--seed 1]
#
# Shapes: mi_scores() on 20,000 samples x 5,000 features of integer codes 0..3 (categories) and
# of counts 0..199 (more distinct values than the rule's limit: binned); mi_pairs(top = 1000) on
# 2,000 x 2,000 codes 0..3; mi_scores() on a SummarizedExperiment whose dense assay holds the
# first shape with features in rows (still transposed in R). Three classes. Times are the median
# of --reps runs.
#
# Part 2 (--part 2; default: parts 1 and 2) times the inputs that had stayed on the R path, as the user
# calls the jobs, with whatever build is installed (run it on the build before a change and after):
# mi_scores() on a DelayedArray assay (2,000 features x 20,000 samples of doubles, 4 blocks of
# DelayedArray's default 100 MB), on a dgCMatrix of 20,000 x 2,000 (5% nonzero) with 200
# categorical= columns, on a dense double matrix with those columns categorical, on the same
# doubles as a dense assay (features in rows), and discretize()
# (equal_width) of a 20,000 x 2,000 double matrix and of the same data frame, and
# stability_selection() of 20,000 x 2,000 integer counts 0..199 (binned by the rule). R's share
# is the wall time less the glue's (run$elapsed; discretize() and stability_selection(): elapsed).
#
# Part 3 (--part 3 only) measures the memory one mi_scores() call adds over what the process
# holds (Linux: the peak resident set, reset through /proc/self/clear_refs before the call) for
# the dense and the DelayedArray assay of part 2.

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- match(paste0("--", name), args)
  if (is.na(i)) default else as.numeric(args[i + 1L])
}
threads <- opt("threads", 2)
part <- opt("part", 0)
reps <- opt("reps", 2)
set.seed(opt("seed", 1))
suppressPackageStartupMessages(library(fsgpu))

codes <- function(n, p, values) {
  x <- matrix(sample.int(values, n * p, replace = TRUE) - 1L, n, p)
  dimnames(x) <- list(NULL, paste0("g", seq_len(p)))
  x
}

# One job run both ways: wall time, the glue's time (run$elapsed) and the rest, R's. For a
# SummarizedExperiment, x is the object and y its class column.
measure <- function(label, x, y, job) {
  binning <- fsgpu:::binning_request(NULL, NULL, NULL)
  prepare <- function(defer) {
    if (methods::is(x, "SummarizedExperiment")) fsgpu:::prepare_se_input(x, y, binning = binning, defer = defer)
    else fsgpu:::prepare_input(x, y, binning = binning, defer = defer)
  }
  ways <- list("checks in R" = function() job(prepare(FALSE)), "deferred to the encoder" = function() job(prepare(TRUE)))
  rows <- lapply(names(ways), function(way) {
    runs <- replicate(reps, {
      gc()
      wall <- system.time(res <- suppressMessages(ways[[way]]()))[["elapsed"]]
      c(wall = wall, glue = attr(res, "run")$elapsed)
    })
    t <- apply(runs, 1, stats::median)
    data.frame(shape = label, path = way, wall_s = t[["wall"]], glue_s = t[["glue"]],
               r_s = t[["wall"]] - t[["glue"]], r_share = (t[["wall"]] - t[["glue"]]) / t[["wall"]])
  })
  do.call(rbind, rows)
}

scores_job <- function(input) {
  fsgpu:::run_scores(input, "mi", NULL, NULL, "cpu", threads, NULL, "bits", TRUE, NULL)
}
pairs_job <- function(input) {
  fsgpu:::run_pairs(input, top = 1000, threshold = NULL, with = NULL, by = "joint", p_adjust = "none",
                    output = "pairs", nbins = NULL, backend = "cpu", threads = threads, devices = NULL,
                    units = "bits", quiet = TRUE)
}

y <- factor(sample(c("a", "b", "c"), 20000, replace = TRUE))
out <- if (part %in% c(0, 1)) rbind(
  measure("mi_scores 20,000 x 5,000 codes 0..3", codes(20000, 5000, 4), y, scores_job),
  measure("mi_scores 20,000 x 5,000 counts 0..199", codes(20000, 5000, 200), y, scores_job),
  measure("mi_pairs top 1,000, 2,000 x 2,000 codes 0..3", codes(2000, 2000, 4), y[1:2000], pairs_job),
  if (requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(codes(20000, 5000, 4))),
                                                     colData = S4Vectors::DataFrame(type = y))
    measure("mi_scores SE assay 5,000 x 20,000 codes 0..3", se, "type", scores_job)
  })

# Part 2: one call of a public job, its wall time and the glue's (elapsed(res)).
measure_call <- function(label, call, elapsed = function(res) attr(res, "run")$elapsed) {
  runs <- replicate(reps, {
    gc()
    wall <- system.time(res <- suppressMessages(call()))[["elapsed"]]
    c(wall = wall, glue = elapsed(res))
  })
  t <- apply(runs, 1, stats::median)
  data.frame(shape = label, path = Sys.getenv("FSGPU_BENCH_LABEL", "as installed"), wall_s = t[["wall"]],
             glue_s = t[["glue"]], r_s = t[["wall"]] - t[["glue"]], r_share = (t[["wall"]] - t[["glue"]]) / t[["wall"]])
}
if (part == 3) {
  peak_mb <- function(call) {
    gc()
    status <- function(field) {
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep(field, readLines("/proc/self/status"), value = TRUE)))
    }
    writeLines("5", "/proc/self/clear_refs")  # VmHWM := VmRSS
    base <- status("^VmRSS")
    call()
    (status("^VmHWM") - base) / 1024
  }
  a <- matrix(rnorm(20000 * 2000), 2000, 20000, dimnames = list(paste0("g", seq_len(2000)), NULL))
  col <- S4Vectors::DataFrame(type = y)
  se <- SummarizedExperiment::SummarizedExperiment(list(logcounts = a), colData = col)
  delayed <- SummarizedExperiment::SummarizedExperiment(list(logcounts = DelayedArray::DelayedArray(a)), colData = col)
  rm(a)
  job <- function(x) function() mi_scores(x, "type", backend = "cpu", threads = threads, quiet = TRUE)
  out <- data.frame(shape = c("dense assay 2,000 x 20,000 double (320 MB)", "DelayedArray of it"),
                    path = Sys.getenv("FSGPU_BENCH_LABEL", "as installed"),
                    added_peak_mb = c(peak_mb(job(se)), peak_mb(job(delayed))))
} else if (part %in% c(0, 2)) {
  dense <- matrix(rnorm(20000 * 2000), 20000, 2000, dimnames = list(NULL, paste0("g", seq_len(2000))))
  categorical <- paste0("g", 1:200)
  dense[, categorical] <- sample(0:4, 20000 * 200, replace = TRUE) / 2  # doubles with 5 values
  frame <- as.data.frame(dense)
  sparse <- Matrix::rsparsematrix(20000, 2000, 0.05, rand.x = function(k) round(rexp(k), 1))
  colnames(sparse) <- colnames(dense)
  counts <- codes(20000, 2000, 200)  # more distinct values than the rule's limit: binned
  run_elapsed <- function(res) res$elapsed
  rows <- list(
    measure_call("mi_scores dgCMatrix 20,000 x 2,000 (5%), 200 categorical", function()
      mi_scores(sparse, y, categorical = categorical, backend = "cpu", threads = threads, quiet = TRUE)),
    measure_call("mi_scores dense 20,000 x 2,000 double, 200 categorical", function()
      mi_scores(dense, y, categorical = categorical, backend = "cpu", threads = threads, quiet = TRUE)),
    measure_call("stability_selection 20,000 x 2,000 counts 0..199, 4 subsamples, k = 5", function()
      stability_selection(counts, y, k = 5, resamples = 4, seed = 1, backend = "cpu", threads = threads, quiet = TRUE),
      run_elapsed),
    measure_call("discretize equal_width dense 20,000 x 2,000", function()
      discretize(dense, method = "equal_width", backend = "cpu", threads = threads, quiet = TRUE), run_elapsed),
    measure_call("discretize equal_width data frame 20,000 x 2,000", function()
      discretize(frame, method = "equal_width", backend = "cpu", threads = threads, quiet = TRUE),
      run_elapsed))
  if (requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    col <- S4Vectors::DataFrame(type = y)
    se <- SummarizedExperiment::SummarizedExperiment(list(logcounts = t(dense)), colData = col)
    rows <- c(rows, list(measure_call("mi_scores dense assay 2,000 x 20,000 double", function()
      mi_scores(se, "type", backend = "cpu", threads = threads, quiet = TRUE))))
  }
  if (requireNamespace("DelayedArray", quietly = TRUE) && requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    se <- SummarizedExperiment::SummarizedExperiment(list(logcounts = DelayedArray::DelayedArray(t(dense))),
                                                     colData = col)
    rows <- c(rows, list(measure_call("mi_scores DelayedArray assay 2,000 x 20,000 double", function()
      mi_scores(se, "type", backend = "cpu", threads = threads, quiet = TRUE))))
  }
  out <- rbind(out, do.call(rbind, rows))
}
cat(sprintf("threads %d, reps %d, %s\n", threads, reps, format(Sys.time(), tz = "UTC", usetz = TRUE)))
print(out, digits = 3, row.names = FALSE)
