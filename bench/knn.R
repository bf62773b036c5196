# Benchmark of knn_graph(): exact k = 20 Pearson neighbours of every row, end to end from R, on
# fsgpu's GPU and CPU engines, with BiocNeighbors (exhaustive and KMKNN) and FNN on the CPU.
#
#   Rscript bench/knn.R [--backend cpu|gpu|both] [--threads 2] [--shapes A,B] [--k 20]
#                       [--others] [--reps 3] [--devices 0] [--out DIR] [--tag TAG] [--seed 1]
#                       [--fp32-tflops 66.9] [--tf32-tflops 494.7]
#
# Each GPU run follows a warm-up call (the same call, or for shapes past 100,000 points one on
# 2,000 of their rows) and, as system.time() does by default, a garbage collection: a collection
# that the session's earlier allocations make due would otherwise fall into whichever run comes
# next (a full one takes 0.1-0.6 s with fsgpu's imports loaded). The R side of a run (its
# timings' r_side: R's checks, the calls into the engine and back) is reported with its share.
#
# Shapes (rows x 295 columns, the GPU-FS-kNN paper's sizes): base (24,158: synthetic gene
# profiles from 20 latent factors plus noise), expanded_A (384,126) and expanded_B (1,533,876):
# averages of pairs of base rows, as the paper built its expanded sets from pairs of probes.
# Targets (issue 19): on one H100, base <= 0.03 s and expanded_B <= 8 s end to end (they were
# 0.5 s and 30 s in the first kNN issue); the CPU at least as fast as BiocNeighbors' exact search.
# The GPU rows give the time against the FP32 bound (2 n^2 d flops at the FP32 rate) and the
# TF32 tensor bound (the same flops at the TF32 tensor rate; the candidate pass runs on tensor
# cores in half precision, whose rate is twice TF32's). Pearson neighbours from BiocNeighbors and FNN
# come from the Euclidean neighbours of the rows centred and scaled to unit length, which rank
# the same.

suppressPackageStartupMessages(library(fsgpu))
bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "knn.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
source(file.path(bench_dir, "shapes.R"))  # read_options(), split_list(), cpu_model()

shapes <- c(base = 24158, expanded_A = 384126, expanded_B = 1533876)
usage <- function() {
  cat("Usage: Rscript bench/knn.R [--backend cpu|gpu|both] [--threads N] [--shapes base,expanded_A,expanded_B]\n",
      "  [--k 20] [--others] [--reps 3] [--devices IDS] [--out DIR] [--tag TAG] [--seed S] [--fp32-tflops T]\n",
      "  [--tf32-tflops T]\n",
      "  --others runs BiocNeighbors (exhaustive, KMKNN) and FNN on the base shape (CPU, minutes)\n", sep = "")
}
opts <- read_options(commandArgs(TRUE), list(backend = "both", threads = 2L, shapes = names(shapes), k = 20L,
                                            others = FALSE, reps = 3L, devices = NULL, out = NULL, tag = NULL,
                                            seed = 1L, fp32_tflops = 66.9, tf32_tflops = 494.7),
                     usage = usage, specs = list("--backend" = identity, "--threads" = as.integer,
                                                 "--shapes" = split_list, "--k" = as.integer, "--others" = NULL,
                                                 "--reps" = as.integer, "--devices" = identity, "--out" = identity,
                                                 "--tag" = identity, "--seed" = as.integer,
                                                 "--fp32-tflops" = as.numeric, "--tf32-tflops" = as.numeric))
stopifnot(all(opts$shapes %in% names(shapes)), opts$backend %in% c("cpu", "gpu", "both"))
root <- normalizePath(file.path(bench_dir, ".."))
if (is.null(opts$out)) opts$out <- file.path(root, "bench", "results")
if (is.null(opts$tag)) opts$tag <- opts$backend
dir.create(opts$out, showWarnings = FALSE, recursive = TRUE)
gpu <- backend_info()$gpu_available
backends <- switch(opts$backend, cpu = "cpu", gpu = "gpu", both = if (gpu) c("gpu", "cpu") else "cpu")
devices <- if (is.null(opts$devices)) 0L else as.integer(split_list(opts$devices))
stem <- file.path(opts$out, sprintf("knn-%s-%s", format(Sys.Date()), opts$tag))
log_file <- file(paste0(stem, ".log"), open = "a")
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  cat(line, "\n", sep = "", file = log_file)
}

set.seed(opts$seed)
dim <- 295L
base_n <- shapes[["base"]]
base <- matrix(rnorm(base_n * 20), base_n, 20) %*% matrix(rnorm(20 * dim), 20, dim) +
  matrix(rnorm(base_n * dim, sd = 2), base_n, dim)
make_shape <- function(name) {
  n <- shapes[[name]]
  if (n == base_n) return(base)
  a <- sample.int(base_n, n, replace = TRUE)
  b <- sample.int(base_n, n, replace = TRUE)
  (base[a, ] + base[b, ]) / 2
}
unit_rows <- function(x) {
  x <- x - rowMeans(x)
  x / sqrt(rowSums(x^2))
}

rows <- list()
add_row <- function(shape, n, tool, backend, threads, device, seconds, runs, timings = NULL, agrees = NA) {
  flops <- 2 * as.double(n) * n * dim
  bound <- if (backend == "gpu") flops / (opts$fp32_tflops * 1e12) else NA
  tensor_bound <- if (backend == "gpu") flops / (opts$tf32_tflops * 1e12) else NA
  target <- if (backend == "gpu" && tool == "fsgpu") c(base = 0.03, expanded_B = 8)[shape] else NA
  rows[[length(rows) + 1L]] <<- data.frame(
    date = format(Sys.time(), "%Y-%m-%d %H:%M"), device = device, tool = tool, backend = backend,
    threads = threads, shape = shape, points = n, dim = dim, k = opts$k, seconds = seconds, seconds_runs = runs,
    fp32_bound_seconds = bound, bound_fraction = if (is.na(bound)) NA else bound / seconds,
    tf32_bound_seconds = tensor_bound, tf32_fraction = if (is.na(tensor_bound)) NA else tensor_bound / seconds,
    target_seconds = unname(target), target_met = if (is.na(target)) NA else seconds <= target,
    r_side_seconds = if (is.null(timings)) NA else timings[["r_side"]],
    r_side_share = if (is.null(timings)) NA else timings[["r_side"]] / timings[["total"]],
    identical_to_gpu = agrees,
    timings = if (is.null(timings)) "" else paste(sprintf("%s=%.4g", names(timings), timings), collapse = " "),
    stringsAsFactors = FALSE)
}
for (shape in opts$shapes) {
  x <- make_shape(shape)
  n <- nrow(x)
  say("== %s: %s x %d, k = %d, pearson", shape, format(n, big.mark = ","), dim, opts$k)
  gpu_result <- NULL
  for (backend in backends) {
    if (backend == "cpu" && n > 100000) {
      say("  cpu: skipped (%s points: hours on a few cores)", format(n, big.mark = ","))
      next
    }
    args <- list(x, k = opts$k, metric = "pearson", backend = backend)
    if (backend == "gpu") args$devices <- devices else args$threads <- opts$threads
    reps <- if (backend == "cpu") 1L else opts$reps
    if (backend == "gpu") invisible(do.call(knn_graph, c(list(if (n > 100000) x[1:2000, ] else x), args[-1])))
    runs <- numeric(reps)
    for (r in seq_len(reps)) runs[r] <- system.time(res <- do.call(knn_graph, args))[["elapsed"]]
    if (backend == "gpu") gpu_result <- res
    agrees <- if (backend == "cpu" && !is.null(gpu_result)) identical(unclass(res)[1:2], unclass(gpu_result)[1:2]) else NA
    device <- if (backend == "gpu") backend_info()$devices$name[1] else cpu_model()
    add_row(shape, n, "fsgpu", backend, if (backend == "cpu") opts$threads else NA, device, stats::median(runs),
            paste(sprintf("%.3f", runs), collapse = " "), attr(res, "timings"), agrees)
    say("  fsgpu %s: %.3f s (runs %s; R side of the last %.4f s, %.1f%%)%s%s", backend, stats::median(runs),
        paste(sprintf("%.3f", runs), collapse = " "), rows[[length(rows)]]$r_side_seconds,
        100 * rows[[length(rows)]]$r_side_share,
        if (!is.na(agrees)) sprintf(", identical to the GPU: %s", agrees) else "",
        if (backend == "gpu") sprintf(", %.2f of the FP32 bound, %.3f of the TF32 tensor bound; %s",
                                      rows[[length(rows)]]$bound_fraction, rows[[length(rows)]]$tf32_fraction,
                                      rows[[length(rows)]]$timings) else "")
  }
  if (opts$others && shape == "base") {
    z <- unit_rows(x)
    ref <- if (!is.null(gpu_result)) unname(gpu_result$index) else unname(knn_graph(x, k = opts$k, backend = "cpu")$index)
    others <- list(
      "BiocNeighbors exhaustive" = function() BiocNeighbors::findKNN(z, k = opts$k,
        BNPARAM = BiocNeighbors::ExhaustiveParam(), BPPARAM = BiocParallel::MulticoreParam(opts$threads))$index,
      "BiocNeighbors KMKNN" = function() BiocNeighbors::findKNN(z, k = opts$k, BNPARAM = BiocNeighbors::KmknnParam(),
        BPPARAM = BiocParallel::MulticoreParam(opts$threads))$index,
      "FNN brute" = function() FNN::get.knn(z, k = opts$k, algorithm = "brute")$nn.index)
    for (tool in names(others)) {
      if (!requireNamespace(sub(" .*", "", tool), quietly = TRUE)) next
      t <- system.time(idx <- others[[tool]](), gcFirst = FALSE)[["elapsed"]]
      add_row(shape, n, tool, "cpu", if (grepl("FNN", tool)) 1L else opts$threads, cpu_model(), t, sprintf("%.3f", t),
              agrees = mean(idx == ref))
      say("  %s: %.2f s, %.4f of the neighbours equal fsgpu's", tool, t, mean(idx == ref))
    }
  }
}
close(log_file)
results <- do.call(rbind, rows)
utils::write.csv(results, paste0(stem, ".csv"), row.names = FALSE)
fmt <- function(v) ifelse(is.na(v), "-", ifelse(v >= 1, sprintf("%.2f", v), sprintf("%.3g", v)))
md <- c(sprintf("# kNN benchmark: %s", basename(stem)), "",
        sprintf("Written by `bench/knn.R`: exact k = %d Pearson neighbours of every row (295 columns), seconds end to end", opts$k),
        "from R (median of the runs, each after a gc(); the GPU after a warm-up). R side: the last run's",
        "seconds outside the engine's prepare, search and results (R's checks, the calls in and out), and their share.",
        "FP32 bound: 2 n^2 d flops at the GPU's FP32 rate",
        sprintf("(%g TFLOP/s), TF32 bound: at its TF32 tensor rate (%g TFLOP/s); \"of\" is bound / seconds. For other tools,",
                opts$fp32_tflops, opts$tf32_tflops),
        "\"identical\" is the share of neighbours equal to fsgpu's.", "",
        "| shape | points | tool | backend | threads | device | seconds | R side s | R share | FP32 bound s | of FP32 | of TF32 | target s | met | identical |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (i in seq_len(nrow(results))) {
  r <- results[i, ]
  md <- c(md, sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", r$shape,
                      format(r$points, big.mark = ","), r$tool, r$backend, ifelse(is.na(r$threads), "-", r$threads),
                      r$device, fmt(r$seconds), fmt(r$r_side_seconds),
                      ifelse(is.na(r$r_side_share), "-", sprintf("%.1f%%", 100 * r$r_side_share)),
                      fmt(r$fp32_bound_seconds), fmt(r$bound_fraction), fmt(r$tf32_fraction),
                      ifelse(is.na(r$target_seconds), "-", r$target_seconds),
                      ifelse(is.na(r$target_met), "-", ifelse(r$target_met, "yes", "**no**")),
                      ifelse(is.na(r$identical_to_gpu), "-", as.character(r$identical_to_gpu))))
}
writeLines(md, paste0(stem, ".md"))
cat("results:", paste0(stem, ".csv"), "\n")
