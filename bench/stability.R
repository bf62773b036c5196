# Benchmark of stability_selection(): 100 complementary-pair subsamples of JMI (k = 50) run at
# once, against one selection on all samples and against a plain R loop of select_features()
# over the same subsamples, on the chowdary and nakayama microarrays and the news20 shape.
#
#   Rscript bench/stability.R [--backend cpu|gpu] [--threads N] [--shapes chowdary,nakayama,news20]
#                             [--resamples 100] [--k 50] [--loop 10] [--repeats 3] [--quick]
#                             [--out FILE] [--data DIR] [--seed 1]
#
# Both timings are medians over `repeats` runs after one warm-up selection (a single run of a
# 0.2 s selection on a shared VM varies by half its time, and the first call of a session pays
# for loading). Columns of the CSV: seconds of the batched job (the whole
# stability_selection() call), of one select_features() on all samples (same backend and
# threads), their ratio (the issue's targets:
# at most 60 on the CPU with 2 threads, 10 on one GPU), the seconds of the R loop over the first
# `loop` subsamples and its projection to all of them (loop seconds x resamples / loop), the
# speed-up of the batched job over that projection, and whether the looped selections equal
# the batched ones (`agrees`).

suppressPackageStartupMessages(library(fsgpu))

bench_dir <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "stability.R")
  dirname(normalizePath(file, mustWork = FALSE))
})
source(file.path(bench_dir, "shapes.R"))

usage <- function() {
  cat("Usage: Rscript bench/stability.R [--backend cpu|gpu] [--threads N] [--shapes A,B] [--resamples R]\n",
      "                                 [--k K] [--loop L] [--repeats N] [--quick] [--out FILE] [--data DIR]\n",
      "                                 [--seed S]\n",
      "  --loop L     subsamples the R loop runs (its time is projected to all of them; 0: no loop)\n",
      "  --repeats N  runs of each timing, after a warm-up; the median is kept\n",
      "  --quick      the news20 shape with a tenth of its samples\n", sep = "")
}

opts <- read_options(commandArgs(TRUE), list(backend = "cpu", threads = 2L,
                                             shapes = c("chowdary", "nakayama", "news20"), resamples = 100L,
                                             k = 50L, loop = 10L, repeats = 3L, quick = FALSE, out = NULL,
                                             data = NULL, seed = 1L),
                     specs = list("--backend" = identity, "--threads" = as.integer, "--shapes" = split_list,
                                  "--resamples" = as.integer, "--k" = as.integer, "--loop" = as.integer,
                                  "--repeats" = as.integer,
                                  "--quick" = NULL, "--out" = identity, "--data" = identity, "--seed" = as.integer),
                     usage = usage)
data_dir <- if (is.null(opts$data)) file.path(bench_dir, "..", "..", "shared", "data", "datamicroarray") else opts$data
if (!dir.exists(data_dir)) data_dir <- "/work/shared/data/datamicroarray"
device <- if (opts$backend == "gpu") backend_info()$devices$name[1] else cpu_model()
if (is.null(opts$out)) opts$out <- file.path(bench_dir, "results", sprintf("stability-%s-%s.csv", Sys.Date(),
                                                                           opts$backend))

# The median seconds of `repeats` runs of expr (evaluated anew each run: a promise is forced once).
median_time <- function(expr) {
  e <- substitute(expr)
  env <- parent.frame()
  median(vapply(seq_len(max(opts$repeats, 1L)), function(i) system.time(eval(e, env))[["elapsed"]], 0))
}

rows <- list()
for (name in opts$shapes) {
  spec <- shape_table()[[name]]
  d <- make_shape(name, spec, opts, data_dir)
  if (is.null(d)) { message("skipping ", name, ": no data"); next }
  threads <- if (opts$backend == "cpu") opts$threads else NULL
  gc()
  single <- function() select_features(d$x, d$y, k = opts$k, backend = opts$backend, threads = threads, quiet = TRUE)
  invisible(single())  # warm-up
  one <- median_time(single())
  batched <- median_time(st <- stability_selection(d$x, d$y, k = opts$k, resamples = opts$resamples,
                                                   seed = opts$seed, backend = opts$backend, threads = threads,
                                                   quiet = TRUE))
  loop_seconds <- NA_real_
  agrees <- NA
  if (opts$loop > 0) {
    bins <- discretize(d$x, method = "equal_width", nbins = st$nbins, backend = "cpu")
    looped <- list()
    loop_seconds <- system.time(for (r in seq_len(min(opts$loop, opts$resamples))) {
      s <- st$resamples[[r]]
      looped[[r]] <- select_features(d$x[s, , drop = FALSE], d$y[s], k = opts$k, discretize = bins,
                                     backend = opts$backend, threads = threads, quiet = TRUE)$selection$index
    })[["elapsed"]]
    agrees <- identical(looped, unname(st$selections[seq_along(looped)]))
  }
  projected <- loop_seconds * opts$resamples / min(opts$loop, opts$resamples)
  rows[[name]] <- data.frame(
    date = format(Sys.time(), "%Y-%m-%d %H:%M"), device = device, shape = name, n_samples = nrow(d$x),
    n_features = ncol(d$x), n_classes = nlevels(d$y), k = opts$k, resamples = opts$resamples,
    backend = opts$backend, threads = if (is.null(threads)) NA else threads,
    single_seconds = one, batched_seconds = batched, ratio_to_single = batched / one,
    loop_resamples = min(opts$loop, opts$resamples), loop_seconds = loop_seconds, loop_projected = projected,
    speedup_over_loop = projected / batched, agrees = agrees, stability = unname(st$stability["estimate"]),
    stable_features = length(st$stable), source = d$source, stringsAsFactors = FALSE)
  print(rows[[name]][, c("shape", "single_seconds", "batched_seconds", "ratio_to_single", "loop_projected",
                         "speedup_over_loop", "agrees", "stability")], row.names = FALSE)
}
out <- do.call(rbind, rows)
dir.create(dirname(opts$out), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(out, opts$out, row.names = FALSE)
cat("wrote ", opts$out, "\n", sep = "")
