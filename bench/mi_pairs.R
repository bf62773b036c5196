# Benchmark of the pair search mi_pairs(): I(Y; Xi,Xj) of every pair of features with the
# top-k collector, end to end from R, on fsgpu's CPU engine and its GPU engine.
#
#   Rscript bench/mi_pairs.R [--backend cpu|gpu|both] [--threads 2] [--cpu-large] [--reps 3]
#                            [--clock-ghz 1.98] [--mma-per-clock 0.57] [--shapes small,large,issue,real]
#                            [--top 1000]
#                            [--real chowdary] [--real-nbins 10] [--data DIR] [--devices 0]
#                            [--out DIR] [--tag TAG] [--compare RDS[,RDS]|none] [--seed 1]
#
# Shapes: small (2,000 features x 500 samples), large (20,000 x 1,000: 2 x 10^8 pairs), issue
# (100,000 x 1,000: 5 x 10^9 pairs), all integer codes 0..9 (10 levels, categorical: not binned)
# with 3 classes; real (a datamicroarray set, numeric, binned into --real-nbins equal-width
# bins). Targets: GPU (one H100) small <= 0.2 s, large <= 10 s (the pair-search issue), issue
# <= 2.5 s (2 x 10^9 pairs/s, issue 19); CPU small <= 20 s on 2 threads.
#
# GPU rows carry two bounds: the popcount bound of the CUDA-core kernel and the binary
# tensor-core bound of the tensor kernel (the default on sm_80 and later: src/cuda/pairs.cu),
# pairs x mma per pair / (SMs x --mma-per-clock x clock), mma per pair = ceil(levels / 2)^2 x
# chunks / 32, chunks = sum over classes of ceil(n_c / 256) (0.57 m16n8k256 per SM per clock
# on an H100, measured by bench/b1_mma_peak.cu).
# See bench/README.md for what is measured and what each CSV column means.

suppressPackageStartupMessages(library(fsgpu))

# The folder of this script (source(): from source()'s frame; Rscript bench/mi_pairs.R: from
# --file=; otherwise bench/ under the working directory), for the shared pieces.
bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "mi_pairs.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
# read_options(), split_list(), read_microarray() and cpu_model().
source(file.path(bench_dir, "shapes.R"))

# ---- shapes and targets ----------------------------------------------------------------------

pair_shapes <- list(
  small = list(kind = "synthetic", p = 2000L, n = 500L, classes = 3L, levels = 10L),
  large = list(kind = "synthetic", p = 20000L, n = 1000L, classes = 3L, levels = 10L),
  issue = list(kind = "synthetic", p = 100000L, n = 1000L, classes = 3L, levels = 10L),
  real = list(kind = "real")
)

# Seconds allowed (the issue's targets): GPU targets are for one H100, the CPU's for 2 threads.
targets <- list(gpu = c(small = 0.2, large = 10, issue = 2.5), cpu = c(small = 20))

# Integer codes 0..levels-1, uniform, with one planted synergistic pair: the class is
# (X1 + X2) mod classes for 70% of the samples and random for the rest, so the best pair must be
# (1, 2) and neither feature alone says much. Class sizes stay near n / classes.
make_synthetic <- function(spec, seed) {
  set.seed(seed)
  n <- spec$n
  p <- spec$p
  x <- matrix(sample.int(spec$levels, n * p, replace = TRUE) - 1L, n, p,
              dimnames = list(NULL, paste0("X", seq_len(p))))
  y <- (x[, 1] + x[, 2]) %% spec$classes + 1L
  noisy <- runif(n) < 0.3
  y[noisy] <- sample.int(spec$classes, sum(noisy), replace = TRUE)
  list(x = x, y = factor(y), nbins = NULL,
       source = sprintf("synthetic: integer codes 0..%d (categorical, not binned), pair (1, 2) planted, seed %d",
                        spec$levels - 1L, seed))
}

# ---- options ---------------------------------------------------------------------------------

usage <- function() {
  cat(
    "Usage: Rscript bench/mi_pairs.R [options]\n",
    "  --backend B        cpu, gpu or both (default both); gpu fails when no GPU is usable, both\n",
    "                     then runs the CPU only\n",
    "  --threads N        CPU threads of the cpu runs (default 2); gpu runs use fsgpu's default\n",
    "  --cpu-large        also run the CPU on the large and issue shapes (minutes to hours on 2 cores);\n",
    "                     skipped otherwise\n",
    "  --reps R           timed runs per shape and backend (default 3); the median is reported.\n",
    "                     The GPU makes one untimed warm-up run per shape first\n",
    "  --clock-ghz G      GPU clock of the bounds (default 1.98, H100 SXM boost)\n",
    "  --mma-per-clock M  binary m16n8k256 mma per SM per clock of the tensor-core bound (default 0.57,\n",
    "                     an H100's by bench/b1_mma_peak.cu)\n",
    "  --shapes A,B       any of small, large, issue, real (default all)\n",
    "  --top K            pairs kept (default 1000)\n",
    "  --real NAME        datamicroarray set of the real shape (default chowdary: 22,283 genes)\n",
    "  --real-nbins N     equal-width bins of the real shape (default 10); 'default' for fsgpu's\n",
    "                     default (the cube root of the sample count)\n",
    "  --data DIR         folder of <NAME>.csv.gz (default ../shared/data/datamicroarray from the\n",
    "                     repository root, else .devbuild/data)\n",
    "  --devices IDS      GPU ids, comma separated, or 'all' (default: the first GPU)\n",
    "  --out DIR          folder of the results (default bench/results)\n",
    "  --tag TAG          tag of the file names mi_pairs-<date>-<tag>.* (default: the backend)\n",
    "  --compare RDS,...  pair files (*-pairs.rds) of earlier runs whose CPU results gpu runs are\n",
    "                     checked against when the CPU did not run here (default: every\n",
    "                     mi_pairs-*-pairs.rds in bench/results and --out); 'none' for none\n",
    "  --seed S           seed of the synthetic data (default 1; large uses S + 1)\n",
    sep = ""
  )
}

parse_options <- function(args) {
  opts <- list(backend = "both", threads = 2L, cpu_large = FALSE, reps = 3L, clock_ghz = 1.98, mma_per_clock = 0.57,
               shapes = names(pair_shapes), top = 1000L, real = "chowdary", real_nbins = "10", data = NULL,
               devices = NULL, out = NULL, tag = NULL, compare = NULL, seed = 1L)
  opts <- read_options(args, opts, usage = usage, specs = list(
    "--backend" = identity, "--threads" = as.integer, "--cpu-large" = NULL, "--reps" = as.integer,
    "--clock-ghz" = as.numeric, "--mma-per-clock" = as.numeric, "--shapes" = split_list, "--top" = as.integer, "--real" = identity,
    "--real-nbins" = identity, "--data" = identity, "--devices" = identity, "--out" = identity, "--tag" = identity,
    "--compare" = split_list, "--seed" = as.integer))
  if (!opts$backend %in% c("cpu", "gpu", "both")) stop("--backend must be cpu, gpu or both", call. = FALSE)
  bad <- setdiff(opts$shapes, names(pair_shapes))
  if (length(bad)) stop("unknown shape(s) in --shapes: ", paste(bad, collapse = ", "), "; known: ",
                        paste(names(pair_shapes), collapse = ", "), call. = FALSE)
  for (name in c("threads", "reps", "top", "seed")) {
    if (is.na(opts[[name]]) || opts[[name]] < 1L) stop("--", name, " must be a positive integer", call. = FALSE)
  }
  if (is.na(opts$clock_ghz) || opts$clock_ghz <= 0) stop("--clock-ghz must be a positive number", call. = FALSE)
  if (is.na(opts$mma_per_clock) || opts$mma_per_clock <= 0)
    stop("--mma-per-clock must be a positive number", call. = FALSE)
  if (opts$real_nbins == "default") {
    opts$real_nbins <- NULL
  } else {
    opts$real_nbins <- suppressWarnings(as.integer(opts$real_nbins))
    if (is.na(opts$real_nbins) || opts$real_nbins < 2L) stop("--real-nbins must be an integer >= 2 or 'default'", call. = FALSE)
  }
  if (is.null(opts$tag)) opts$tag <- opts$backend
  if (!grepl("^[A-Za-z0-9._+-]+$", opts$tag)) stop("--tag: letters, digits and ._+- only", call. = FALSE)
  opts
}

# ---- measuring -------------------------------------------------------------------------------

# The result's values without the attributes that differ between runs (elapsed, backend): the
# columns and n_pairs, for identical().
pairs_content <- function(r) {
  cols <- lapply(names(r), function(nm) r[[nm]])
  names(cols) <- names(r)
  list(columns = cols, n_pairs = attr(r, "n_pairs"))
}

# Runs mi_pairs() reps times (after one untimed warm-up when warm_up), timing each call end to
# end from R; returns the per-run seconds and engine seconds (attr elapsed: the C++ call only),
# the first result, and whether every run gave the same result. NULL (with a message) on error.
time_pairs <- function(x, y, top, nbins, backend, threads, devices, reps, warm_up) {
  call_once <- function() {
    start <- proc.time()[["elapsed"]]
    r <- mi_pairs(x, y, top = top, nbins = nbins, backend = backend, threads = threads, devices = devices)
    list(seconds = proc.time()[["elapsed"]] - start, result = r)
  }
  tryCatch({
    if (warm_up) {
      w <- call_once()
      cat(sprintf("    %s warm-up: %.3f s\n", backend, w$seconds))
    }
    runs <- vector("list", reps)
    for (i in seq_len(reps)) {
      runs[[i]] <- call_once()
      cat(sprintf("    %s run %d: %.3f s (engine %.3f s)\n", backend, i, runs[[i]]$seconds,
                  attr(runs[[i]]$result, "elapsed")))
    }
    first <- pairs_content(runs[[1]]$result)
    stable <- all(vapply(runs, function(u) identical(pairs_content(u$result), first), logical(1)))
    if (!stable) cat("    NOTE: the runs of this backend did not all give the same result\n")
    list(seconds = vapply(runs, `[[`, numeric(1), "seconds"),
         engine = vapply(runs, function(u) attr(u$result, "elapsed"), numeric(1)),
         result = runs[[1]]$result, content = first, stable = stable)
  }, error = function(e) {
    cat(sprintf("    %s failed: %s\n", backend, conditionMessage(e)))
    NULL
  })
}

# Levels of the engine: categorical integer columns have as many codes as distinct values,
# binned numeric columns nbins (1 when constant). The GPU kernel loops over the largest count.
max_levels <- function(x, nbins) {
  if (is.integer(x)) {
    max(vapply(seq_len(ncol(x)), function(j) length(unique(x[, j])), integer(1)))
  } else {
    nonconstant <- any(apply(x, 2, function(v) max(v) > min(v)))
    if (nonconstant) nbins else 1L
  }
}

fmt_s <- function(s) ifelse(is.na(s), "-", ifelse(s >= 100, sprintf("%.0f", s), ifelse(s >= 1, sprintf("%.2f", s),
                     ifelse(s >= 0.01, sprintf("%.3f", s), sprintf("%.2g", s)))))
fmt_sci <- function(v) ifelse(is.na(v), "-", sprintf("%.3g", v))
fmt_big <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)

# ---- the summary -----------------------------------------------------------------------------

write_summary <- function(csv, md) {
  d <- tryCatch(utils::read.csv(csv, stringsAsFactors = FALSE), error = function(e) NULL)
  if (is.null(d) || !nrow(d)) return(invisible(FALSE))
  key <- paste(d$device, d$shape, d$features, d$samples, d$backend, d$threads, sep = "\r")
  d <- d[!duplicated(key, fromLast = TRUE), , drop = FALSE]
  d <- d[order(match(d$shape, names(pair_shapes)), d$backend), , drop = FALSE]
  yn <- function(v) ifelse(is.na(v), "-", ifelse(v, "yes", "**no**"))
  lines <- c(
    sprintf("# mi_pairs benchmark: %s", sub("\\.csv$", "", basename(csv))), "",
    sprintf("Written by `bench/mi_pairs.R` from `%s` (the latest row per device, shape, backend and threads).",
            basename(csv)),
    "All pairs, top 1000 by I(Y; Xi,Xj); seconds: median over the runs of one `mi_pairs()` call, end to end",
    "from R (GPU: after an untimed warm-up). Popcount bound: pairs x levels^2 x words / (SMs x 16 x clock),",
    "words = sum over classes of ceil(n_c / 32); \"of bound\" is bound seconds / seconds. Tensor-core bound:",
    "pairs x ceil(levels / 2)^2 x chunks / 32 mma / (SMs x mma per SM per clock x clock), chunks = sum over",
    "classes of ceil(n_c / 256): what the default GPU kernel on sm_80 and later needs at the binary tensor peak.", "",
    "| shape | features x samples | classes | levels | pairs | backend | threads | device | seconds | engine s | pairs/s | popcounts/s | bound s | of bound | tensor bound s | of tensor bound | target s | met | identical to CPU |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
  for (i in seq_len(nrow(d))) {
    r <- d[i, ]
    lines <- c(lines, sprintf("| %s | %s x %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
      r$shape, fmt_big(r$features), fmt_big(r$samples), r$classes, r$levels, fmt_sci(r$pairs), r$backend,
      ifelse(is.na(r$threads), "-", r$threads), r$device, fmt_s(r$seconds), fmt_s(r$engine_seconds),
      fmt_sci(r$pairs_per_second), fmt_sci(r$popcounts_per_second), fmt_s(r$bound_seconds),
      ifelse(is.na(r$bound_fraction), "-", sprintf("%.3g", r$bound_fraction)),
      if (is.null(r$tensor_bound_seconds)) "-" else fmt_s(r$tensor_bound_seconds),
      if (is.null(r$tensor_fraction) || is.na(r$tensor_fraction)) "-" else sprintf("%.3g", r$tensor_fraction),
      ifelse(is.na(r$target_seconds), "-", r$target_seconds),
      yn(r$target_met), yn(r$identical_to_cpu)))
  }
  lines <- c(lines, "", "Data:", "", paste0("- ", unique(paste0(d$shape, ": ", d$source))), "")
  writeLines(lines, md)
  invisible(TRUE)
}

# ---- main ------------------------------------------------------------------------------------

main <- function() {
  opts <- parse_options(commandArgs(trailingOnly = TRUE))
  root <- if (basename(bench_dir) == "bench") dirname(bench_dir) else getwd()
  info <- backend_info()
  gpus <- info$devices
  has_gpu <- isTRUE(info$gpu_available) && !is.null(gpus) && nrow(gpus) > 0L
  want_gpu <- opts$backend %in% c("gpu", "both")
  if (opts$backend == "gpu" && !has_gpu) {
    cat("mi_pairs benchmark: --backend gpu, but no GPU can be used: ",
        if (nzchar(info$problem)) info$problem else "none found", "\n", "Nothing run, nothing written.\n", sep = "",
        file = stderr())
    quit(status = 1)
  }
  run_gpu <- want_gpu && has_gpu
  run_cpu <- opts$backend %in% c("cpu", "both")
  devices <- if (!run_gpu) NULL else if (is.null(opts$devices)) gpus$id[1]
             else if (identical(opts$devices, "all")) gpus$id
             else as.integer(split_list(opts$devices))
  gpu_rows <- if (run_gpu) match(devices, gpus$id) else integer()
  if (anyNA(gpu_rows)) stop("--devices: no GPU with id ", paste(devices[is.na(gpu_rows)], collapse = ", "), call. = FALSE)
  gpu_device <- paste(gpus$name[gpu_rows], collapse = " + ")
  sms <- if (run_gpu) sum(gpus$multiprocessors[gpu_rows]) else NA_integer_
  gpu_threads <- fsgpu_threads()
  cpu <- cpu_model()
  host <- Sys.info()[["nodename"]]

  out_dir <- if (is.null(opts$out)) file.path(root, "bench", "results") else sub("/+$", "", opts$out)
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  base <- file.path(out_dir, sprintf("mi_pairs-%s-%s", format(Sys.Date()), opts$tag))
  csv <- paste0(base, ".csv")
  md <- paste0(base, ".md")
  rds <- paste0(base, "-pairs.rds")
  log <- paste0(base, ".log")
  sink(log, append = TRUE, split = TRUE)
  on.exit(sink(), add = TRUE)

  compare_files <- if (identical(opts$compare, "none")) character()
    else if (!is.null(opts$compare)) opts$compare
    else rev(unique(c(Sys.glob(file.path(root, "bench", "results", "mi_pairs-*-pairs.rds")),
                      Sys.glob(file.path(out_dir, "mi_pairs-*-pairs.rds")))))  # the latest date first
  compare_files <- setdiff(normalizePath(compare_files, mustWork = FALSE), normalizePath(rds, mustWork = FALSE))

  data_dir <- opts$data
  if (is.null(data_dir)) {
    candidates <- c(file.path(root, "..", "shared", "data", "datamicroarray"), file.path(root, ".devbuild", "data"))
    found <- file.exists(file.path(candidates, paste0(opts$real, ".csv.gz")))
    data_dir <- if (any(found)) candidates[found][1] else candidates[1]
  }

  cat(sprintf("fsgpu mi_pairs benchmark, %s, fsgpu %s\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
              utils::packageVersion("fsgpu")))
  cat("  host: ", host, "; CPU: ", cpu, ", ", parallel::detectCores(), " cores\n", sep = "")
  if (run_gpu) {
    cat(sprintf("  GPU:  %s (id %s), %d SMs; popcount bound at %g GHz x 16 popcounts per SM per clock = %.3g popcounts/s\n",
                gpu_device, paste(devices, collapse = ","), sms, opts$clock_ghz, sms * 16 * opts$clock_ghz * 1e9))
    cat("        gpu runs use ", gpu_threads, " CPU threads for the host side (fsgpu's default)\n", sep = "")
  } else if (want_gpu) {
    cat("  GPU:  none usable (", if (nzchar(info$problem)) info$problem else "none found", "); gpu runs skipped\n", sep = "")
  }
  if (run_cpu) cat("  cpu runs: ", opts$threads, " threads", if (!opts$cpu_large) "; large shape skipped (give --cpu-large)", "\n", sep = "")
  cat(sprintf("  top = %d; %d timed run(s) per shape and backend, median reported%s\n", opts$top, opts$reps,
              if (run_gpu) "; one untimed GPU warm-up per shape" else ""))
  cat("  output: ", csv, " (+ .md, .log, -pairs.rds)\n", sep = "")
  if (length(compare_files)) cat("  CPU results to compare gpu runs with: ", paste(basename(compare_files), collapse = ", "), "\n", sep = "")
  cat("\n")

  earlier <- list()
  for (f in compare_files) {
    e <- tryCatch(readRDS(f), error = function(e) NULL)
    if (!is.list(e)) { cat("  --compare: ", f, " is not a pairs file; ignored\n", sep = ""); next }
    for (k in names(e)) if (!is.null(e[[k]]$cpu) && is.null(earlier[[k]])) earlier[[k]] <- c(e[[k]]$cpu, file = basename(f))
  }
  saved <- if (file.exists(rds)) tryCatch(readRDS(rds), error = function(e) list()) else list()

  rows <- list()
  verdicts <- character()
  for (name in opts$shapes) {
    spec <- pair_shapes[[name]]
    cat("== ", name, "\n", sep = "")
    cpu_here <- run_cpu && (!name %in% c("large", "issue") || opts$cpu_large)
    if (!cpu_here && !run_gpu) {
      cat("  skipped: the cpu runs of the large and issue shapes need --cpu-large\n\n")
      next
    }
    if (spec$kind == "synthetic") {
      seed <- opts$seed + match(name, names(pair_shapes)) - 1L
      made <- system.time(d <- make_synthetic(spec, seed))[["elapsed"]]
      key <- sprintf("%s|%dx%d|%d classes|%d levels|seed %d", name, spec$p, spec$n, spec$classes, spec$levels, seed)
    } else {
      path <- file.path(data_dir, paste0(opts$real, ".csv.gz"))
      if (!file.exists(path)) {
        cat("  data not found: ", path, " (give --data); skipped\n\n", sep = "")
        next
      }
      made <- system.time(d <- read_microarray(path))[["elapsed"]]
      d$nbins <- opts$real_nbins
      d$source <- sprintf("%s (datamicroarray), numeric, %s equal-width bins", opts$real,
                          if (is.null(d$nbins)) "fsgpu's default" else d$nbins)
      key <- sprintf("real|%s|%s bins", opts$real, if (is.null(d$nbins)) "default" else d$nbins)
    }
    x <- d$x
    y <- d$y
    n <- nrow(x)
    p <- ncol(x)
    sizes <- as.vector(table(y))
    nbins_used <- if (is.null(d$nbins)) (if (is.integer(x)) NA_integer_ else max(2L, as.integer(ceiling(n^(1 / 3) - 1e-9))))
                  else d$nbins
    levels <- max_levels(x, nbins_used)
    words <- sum(ceiling(sizes / 32))
    chunks <- sum(ceiling(sizes / 256))
    pairs <- choose(p, 2)
    popcounts <- pairs * levels^2 * words
    mma_per_pair <- ceiling(levels / 2)^2 * chunks / 32
    cat(sprintf("  data: %s; made in %.1f s\n", d$source, made))
    cat(sprintf("  %s features x %s samples, %d classes (%s), %d levels; %s pairs; %d words per level; %.3g popcounts\n",
                fmt_big(p), fmt_big(n), length(sizes), paste(sizes, collapse = "/"), levels, fmt_big(pairs), words, popcounts))

    res <- list()
    add_row <- function(backend, threads, device, r) {
      secs <- stats::median(r$seconds)
      gpu <- backend == "gpu"
      bound <- if (gpu) popcounts / (sms * 16 * opts$clock_ghz * 1e9) else NA_real_
      tensor_bound <- if (gpu) pairs * mma_per_pair / (sms * opts$mma_per_clock * opts$clock_ghz * 1e9) else NA_real_
      target <- targets[[backend]][name]
      target <- if (is.null(target) || is.na(target)) NA_real_ else unname(target)
      data.frame(
        date = format(Sys.time(), "%Y-%m-%d %H:%M"), host = host, device = device, backend = backend,
        threads = threads, shape = name, features = p, samples = n, classes = length(sizes),
        class_sizes = paste(sizes, collapse = "/"), levels = levels, nbins = nbins_used, words = words,
        pairs = pairs, top = opts$top, reps = length(r$seconds), seconds = signif(secs, 5),
        seconds_runs = paste(signif(r$seconds, 4), collapse = " "), engine_seconds = signif(stats::median(r$engine), 5),
        pairs_per_second = signif(pairs / secs, 4), popcounts = popcounts,
        popcounts_per_second = if (gpu) signif(popcounts / secs, 4) else NA_real_,
        sms = if (gpu) sms else NA_integer_, clock_ghz = if (gpu) opts$clock_ghz else NA_real_,
        bound_seconds = signif(bound, 4), bound_fraction = signif(bound / secs, 4), chunks = chunks,
        mma_per_pair = mma_per_pair, tensor_bound_seconds = signif(tensor_bound, 4),
        tensor_fraction = signif(tensor_bound / secs, 4), target_seconds = target,
        target_met = if (is.na(target)) NA else secs <= target, identical_to_cpu = NA, stable = r$stable,
        top_pair = sprintf("%d,%d", r$result$index1[1], r$result$index2[1]), source = d$source,
        stringsAsFactors = FALSE)
    }
    shape_rows <- list()
    if (cpu_here) {
      r <- time_pairs(x, y, opts$top, d$nbins, "cpu", opts$threads, NULL, opts$reps, warm_up = FALSE)
      if (!is.null(r)) { res$cpu <- r; shape_rows$cpu <- add_row("cpu", opts$threads, cpu, r) }
    } else if (run_cpu) {
      cat("    cpu skipped on the ", name, " shape (give --cpu-large)\n", sep = "")
    }
    if (run_gpu) {
      r <- time_pairs(x, y, opts$top, d$nbins, "gpu", NULL, devices, opts$reps, warm_up = TRUE)
      if (!is.null(r)) { res$gpu <- r; shape_rows$gpu <- add_row("gpu", gpu_threads, gpu_device, r) }
    }
    rm(x, d)
    invisible(gc())
    if (!length(shape_rows)) { cat("  nothing ran\n\n"); next }

    # CPU and GPU agreement: same invocation, else an earlier run's CPU result.
    if (!is.null(res$gpu)) {
      ref <- if (!is.null(res$cpu)) list(content = res$cpu$content, from = "the cpu run above")
             else if (!is.null(earlier[[key]])) list(content = earlier[[key]][c("columns", "n_pairs")],
                                                     from = sprintf("the cpu run in %s (%s)", earlier[[key]]$file, earlier[[key]]$device))
      if (!is.null(ref)) {
        same <- identical(res$gpu$content, ref$content)
        shape_rows$gpu$identical_to_cpu <- same
        line <- sprintf("  top-%d of gpu and cpu identical(): %s (against %s)", opts$top, same, ref$from)
        if (!same) {
          a <- res$gpu$content$columns
          b <- ref$content$columns
          diff <- vapply(names(b), function(nm) !identical(a[[nm]], b[[nm]]), logical(1))
          line <- paste0(line, "; columns that differ: ", paste(names(b)[diff], collapse = ", "))
        }
        cat(line, "\n", sep = "")
        verdicts <- c(verdicts, sprintf("%s: gpu and cpu top-%d identical: %s", name, opts$top, if (same) "yes" else "NO"))
      } else {
        cat("  no cpu result of this shape to compare the gpu's with\n")
      }
    }
    for (b in names(res)) {
      saved[[key]][[b]] <- c(res[[b]]$content, list(device = shape_rows[[b]]$device, date = shape_rows[[b]]$date))
    }
    table <- do.call(rbind, shape_rows)
    for (i in seq_len(nrow(table))) {
      t <- table[i, ]
      cat(sprintf("  %-3s %-40s %s s (engine %s s), %.3g pairs/s%s; top pair (%s)\n", t$backend, t$device,
                  fmt_s(t$seconds), fmt_s(t$engine_seconds), t$pairs_per_second,
                  if (t$backend == "gpu") sprintf(", %.3g popcounts/s, bound %s s, %.3g of the bound; tensor bound %s s, %.3g of it",
                                                  t$popcounts_per_second, fmt_s(t$bound_seconds), t$bound_fraction,
                                                  fmt_s(t$tensor_bound_seconds), t$tensor_fraction) else "",
                  t$top_pair))
      if (!is.na(t$target_met)) {
        note <- if (t$backend == "cpu" && t$threads != 2L) sprintf(" (the target is for 2 threads; this ran on %d)", t$threads)
                else if (t$backend == "gpu" && !grepl("H100", t$device)) " (the target is for one H100)" else ""
        v <- sprintf("%s %s: %s s, target <= %g s: %s%s", name, t$backend, fmt_s(t$seconds), t$target_seconds,
                     if (t$target_met) "met" else "MISSED", note)
        cat("  ", v, "\n", sep = "")
        verdicts <- c(verdicts, v)
      }
    }
    cat("\n")
    rows <- c(rows, list(table))
    utils::write.table(table, csv, sep = ",", row.names = FALSE, qmethod = "double",
                       append = file.exists(csv), col.names = !file.exists(csv))
    saveRDS(saved, rds)
    write_summary(csv, md)
  }
  if (length(verdicts)) cat("Summary:\n", paste0("  ", verdicts, "\n"), sep = "")
  if (length(rows)) cat("results: ", csv, ", ", basename(md), ", ", basename(log), ", ", basename(rds), "\n", sep = "")
  invisible(rows)
}

main()
