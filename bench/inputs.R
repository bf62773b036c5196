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

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- match(paste0("--", name), args)
  if (is.na(i)) default else as.numeric(args[i + 1L])
}
threads <- opt("threads", 2)
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
out <- rbind(
  measure("mi_scores 20,000 x 5,000 codes 0..3", codes(20000, 5000, 4), y, scores_job),
  measure("mi_scores 20,000 x 5,000 counts 0..199", codes(20000, 5000, 200), y, scores_job),
  measure("mi_pairs top 1,000, 2,000 x 2,000 codes 0..3", codes(2000, 2000, 4), y[1:2000], pairs_job),
  if (requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    se <- SummarizedExperiment::SummarizedExperiment(list(counts = t(codes(20000, 5000, 4))),
                                                     colData = S4Vectors::DataFrame(type = y))
    measure("mi_scores SE assay 5,000 x 20,000 codes 0..3", se, "type", scores_job)
  })
cat(sprintf("threads %d, reps %d, %s\n", threads, reps, format(Sys.time(), tz = "UTC", usetz = TRUE)))
print(out, digits = 3, row.names = FALSE)
