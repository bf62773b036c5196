# Benchmark of BPPARAM: mi_pairs() in one process against the same search cut into tiles and
# run by BiocParallel workers, end to end from R, and a check that the results are identical.
#
#   Rscript bench/parallel.R [--features 3000] [--samples 200] [--workers 2] [--top 1000]
#                            [--reps 3] [--out DIR] [--tag TAG] [--seed 1]
#
# Runs (CPU engine; numeric data binned into the default bins, 3 classes):
#   single      BPPARAM = NULL, threads = --workers (one process, all its threads)
#   serial      SerialParam(): the tiles one after the other in this process (the cost of tiling)
#   snow        SnowParam(--workers), workers started before timing, threads = 1 each
#   snow-start  the same with the workers' start-up (fresh R sessions loading fsgpu) timed too
# Writes parallel-<date>-<tag>.csv and .md to --out (default bench/results).

suppressPackageStartupMessages({
  library(fsgpu)
  library(BiocParallel)
})

args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  at <- match(paste0("--", name), args)
  if (is.na(at)) default else if (is.numeric(default)) as.numeric(args[at + 1]) else args[at + 1]
}
p <- option("features", 3000)
n <- option("samples", 200)
workers <- option("workers", 2)
top <- option("top", 1000)
reps <- option("reps", 3)
out_dir <- option("out", file.path("bench", "results"))
tag <- option("tag", "cpu")
seed <- option("seed", 1)

set.seed(seed)
y <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("g", seq_len(p))))
x[, 1:10] <- x[, 1:10] + as.integer(y)  # some informative features
cat(sprintf("mi_pairs: %s features x %d samples (%s pairs), top %d, %d workers, %d cores here\n",
            format(p, big.mark = ","), n, format(choose(p, 2), big.mark = ","), top, workers,
            parallel::detectCores()))

strip <- function(r) {
  attr(r, "elapsed") <- NULL
  attr(r, "timings") <- NULL
  r
}
time_of <- function(f) {
  t <- system.time(r <- f(), gcFirst = TRUE)[["elapsed"]]
  list(seconds = t, result = strip(r))
}

snow <- SnowParam(workers)
runs <- list(
  single = function() mi_pairs(x, y, top = top, backend = "cpu", threads = workers),
  serial = function() mi_pairs(x, y, top = top, backend = "cpu", threads = workers, BPPARAM = SerialParam()),
  snow = function() mi_pairs(x, y, top = top, backend = "cpu", threads = 1, BPPARAM = snow),
  `snow-start` = function() {
    fresh <- SnowParam(workers)
    on.exit(bpstop(fresh))
    bpstart(fresh)
    mi_pairs(x, y, top = top, backend = "cpu", threads = 1, BPPARAM = fresh)
  }
)
bpstart(snow)
rows <- list()
reference <- NULL
for (name in names(runs)) {
  seconds <- numeric(reps)
  for (r in seq_len(reps)) {
    got <- time_of(runs[[name]])
    seconds[r] <- got$seconds
    if (is.null(reference)) reference <- got$result
    if (!identical(got$result, reference)) stop(name, ": the result differs from BPPARAM = NULL's")
  }
  rows[[name]] <- data.frame(run = name, features = p, samples = n, workers = workers, top = top,
                             median_s = stats::median(seconds), min_s = min(seconds), max_s = max(seconds),
                             identical = TRUE)
  cat(sprintf("%-10s median %.2f s (min %.2f, max %.2f), identical to BPPARAM = NULL\n", name,
              stats::median(seconds), min(seconds), max(seconds)))
}
bpstop(snow)
table <- do.call(rbind, rows)
table$speedup <- table$median_s[table$run == "single"] / table$median_s

dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
stem <- file.path(out_dir, sprintf("parallel-%s-%s", format(Sys.Date()), tag))
utils::write.csv(table, paste0(stem, ".csv"), row.names = FALSE)
cpu <- tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                error = function(e) NA_character_)
# Other processes share the cores of a shared machine: the load says how much.
load <- tryCatch(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], error = function(e) rep(NA, 3))
writeLines(c(sprintf("# BPPARAM benchmark, %s", format(Sys.Date())), "",
             sprintf("mi_pairs(top = %d), %s features x %d samples, 3 classes, CPU engine; %s, %d cores; %d reps.",
                     top, format(p, big.mark = ","), n, cpu, parallel::detectCores(), reps),
             sprintf("Load average at the end (1, 5, 15 min): %s.", paste(load, collapse = ", ")), "",
             "| run | median s | min s | max s | speed-up vs single |", "|---|---|---|---|---|",
             sprintf("| %s | %.2f | %.2f | %.2f | %.2f |", table$run, table$median_s, table$min_s, table$max_s,
                     table$speedup)),
           paste0(stem, ".md"))
cat("wrote", paste0(stem, c(".csv", ".md")), "\n")
