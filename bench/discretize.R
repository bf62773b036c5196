# Benchmark of discretize(): CAIM, CACC, Ameva and MDLP end to end from R, on the CPU engine and
# the GPU engine, on real and synthetic data of the CAIM-GPU paper's kind.
#
#   Rscript bench/discretize.R [--backend cpu|gpu|both] [--threads 2] [--shapes A,B] [--methods A,B]
#                              [--reps 3] [--cpu-large] [--data DIR] [--devices 0] [--out DIR]
#                              [--tag TAG] [--pcie-gbs 50] [--hbm-gbs 3350] [--seed 1]
#
# Shapes: twonorm and ring (KEEL, 7,400 x 20, 2 classes), Isolet (scikit-feature, 1,560 x 617,
# 26 classes), isolet-shape (synthetic 7,797 x 617, 26 classes, all values distinct) and large
# (synthetic 100,000 x 1,000, 10 classes). Targets (the discretization issue): GPU (one H100)
# isolet-shape CAIM <= 0.25 s end to end; CPU twonorm CAIM <= 0.5 s on 2 threads. The R package
# `discretization` (pure R) needs about 3 minutes for twonorm.

suppressPackageStartupMessages(library(fsgpu))

bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "discretize.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
source(file.path(bench_dir, "shapes.R"))  # read_options(), split_list(), cpu_model()

# ---- shapes and targets ----------------------------------------------------------------------

disc_shapes <- list(
  twonorm = list(kind = "keel", file = "keel/twonorm.csv.gz"),
  ring = list(kind = "keel", file = "keel/ring.csv.gz"),
  Isolet = list(kind = "skf", file = "scikit-feature/Isolet.csv.gz"),
  "isolet-shape" = list(kind = "synthetic", n = 7797L, p = 617L, classes = 26L),
  large = list(kind = "synthetic", n = 100000L, p = 1000L, classes = 10L)
)
targets <- list(gpu = c("isolet-shape" = 0.25), cpu = c(twonorm = 0.5))  # CAIM, seconds

# Continuous values, all distinct: each feature mixes a class-dependent shift (for a third of
# the features) with uniform noise, so that cuts land in many places.
make_synthetic <- function(spec, seed) {
  set.seed(seed)
  y <- sample(rep_len(seq_len(spec$classes), spec$n))
  x <- matrix(runif(as.double(spec$n) * spec$p), spec$n, spec$p)
  informative <- seq(1L, spec$p, by = 3L)
  x[, informative] <- x[, informative] + outer(y, runif(length(informative), 0, 0.2))
  list(x = x, y = factor(y), source = sprintf("synthetic: uniform values, a class shift on every third feature, seed %d",
                                             seed))
}

read_shape <- function(name, spec, opts) {
  if (spec$kind == "synthetic") return(make_synthetic(spec, opts$seed + match(name, names(disc_shapes))))
  path <- file.path(opts$data, spec$file)
  if (!file.exists(path)) return(NULL)
  d <- utils::read.csv(gzfile(path), check.names = FALSE)
  label <- if (spec$kind == "keel") ncol(d) else 1L
  x <- as.matrix(d[, -label])
  storage.mode(x) <- "double"
  list(x = x, y = factor(d[[label]]), source = sprintf("%s (%s)", basename(path), spec$kind))
}

# ---- options ---------------------------------------------------------------------------------

usage <- function() {
  cat(
    "Usage: Rscript bench/discretize.R [options]\n",
    "  --backend B      cpu, gpu or both (default both; both runs the CPU only where no GPU is usable)\n",
    "  --threads N      CPU threads (default 2, the CPU target's)\n",
    "  --shapes A,B     any of ", paste(names(disc_shapes), collapse = ", "), " (default all)\n",
    "  --methods A,B    any of caim, cacc, ameva, mdlp (default all four)\n",
    "  --reps R         timed runs (default 3; the median is reported; the GPU warms up first)\n",
    "  --cpu-large      also run the CPU on the large shape (minutes on 2 cores)\n",
    "  --data DIR       the data root holding keel/ and scikit-feature/ (default ../shared/data,\n",
    "                   else .devbuild/data)\n",
    "  --devices IDS    GPU ids, comma separated (default: the first GPU)\n",
    "  --out DIR        folder of the results (default bench/results)\n",
    "  --tag TAG        file names discretize-<date>-<tag>.* (default: the backend)\n",
    "  --pcie-gbs G     host-to-device bandwidth of the bound, GB/s (default 50)\n",
    "  --hbm-gbs G      device memory bandwidth of the bound, GB/s (default 3350, H100 SXM)\n",
    "  --seed S         seed of the synthetic data (default 1)\n", sep = "")
}

opts <- read_options(commandArgs(TRUE), list(
  backend = "both", threads = 2L, shapes = names(disc_shapes), methods = c("caim", "cacc", "ameva", "mdlp"),
  reps = 3L, cpu_large = FALSE, data = NULL, devices = NULL, out = NULL, tag = NULL, pcie_gbs = 50,
  hbm_gbs = 3350, seed = 1L), usage = usage, specs = list(
  "--backend" = identity, "--threads" = as.integer, "--shapes" = split_list, "--methods" = split_list,
  "--reps" = as.integer, "--cpu-large" = NULL, "--data" = identity, "--devices" = identity, "--out" = identity,
  "--tag" = identity, "--pcie-gbs" = as.numeric, "--hbm-gbs" = as.numeric, "--seed" = as.integer))
stopifnot(opts$backend %in% c("cpu", "gpu", "both"), all(opts$shapes %in% names(disc_shapes)),
          all(opts$methods %in% c("caim", "cacc", "ameva", "mdlp")), opts$reps >= 1)
root <- normalizePath(file.path(bench_dir, ".."))
if (is.null(opts$data)) {
  opts$data <- file.path(root, "..", "shared", "data")
  if (!dir.exists(opts$data)) opts$data <- file.path(root, ".devbuild", "data")
}
if (is.null(opts$out)) opts$out <- file.path(root, "bench", "results")
if (is.null(opts$tag)) opts$tag <- opts$backend
dir.create(opts$out, showWarnings = FALSE, recursive = TRUE)
gpu <- backend_info()$gpu_available
if (opts$backend == "gpu" && !gpu) stop("--backend gpu: no usable GPU: ", backend_info()$problem)
backends <- switch(opts$backend, cpu = "cpu", gpu = "gpu", both = if (gpu) c("cpu", "gpu") else "cpu")
devices <- if (is.null(opts$devices)) 0L else as.integer(split_list(opts$devices))
stem <- file.path(opts$out, sprintf("discretize-%s-%s", format(Sys.Date()), opts$tag))
csv <- paste0(stem, ".csv")
log_file <- file(paste0(stem, ".log"), open = "a")
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  cat(line, "\n", sep = "", file = log_file)
}

# ---- measuring -------------------------------------------------------------------------------

time_discretize <- function(x, y, method, backend) {
  args <- list(x, y, method = method, backend = backend)
  if (backend == "cpu") args$threads <- opts$threads else args$devices <- devices
  if (backend == "gpu") do.call(discretize, args)  # warm-up: the CUDA context, first allocations
  runs <- lapply(seq_len(opts$reps), function(i) {
    t <- system.time(d <- do.call(discretize, args), gcFirst = FALSE)[["elapsed"]]
    list(seconds = t, result = d)
  })
  list(seconds = vapply(runs, `[[`, numeric(1), "seconds"), result = runs[[1]]$result)
}

device_name <- function(backend) {
  if (backend == "cpu") return(cpu_model())
  d <- backend_info()$devices
  paste(unique(d$name[d$id %in% devices]), collapse = " + ")
}

rows <- list()
for (name in opts$shapes) {
  data <- read_shape(name, disc_shapes[[name]], opts)
  if (is.null(data)) {
    say("== %s: data not found under %s, skipped", name, opts$data)
    next
  }
  n <- nrow(data$x)
  p <- ncol(data$x)
  classes <- nlevels(data$y)
  say("== %s: %s samples x %s features, %d classes; %s", name, format(n, big.mark = ","), format(p, big.mark = ","),
      classes, data$source)
  bytes <- as.double(n) * p * 8
  bound <- bytes / (opts$pcie_gbs * 1e9) + 3 * bytes / (opts$hbm_gbs * 1e9)
  for (method in opts$methods) {
    cpu_cuts <- NULL
    for (backend in backends) {
      if (backend == "cpu" && name == "large" && !opts$cpu_large) next
      m <- time_discretize(data$x, data$y, method, backend)
      secs <- stats::median(m$seconds)
      d <- m$result
      if (backend == "cpu") cpu_cuts <- d$cuts
      identical_cpu <- if (backend == "gpu" && !is.null(cpu_cuts)) identical(d$cuts, cpu_cuts) else NA
      target <- if (method == "caim") targets[[backend]][name] else NA
      target <- if (is.null(target) || is.na(target)) NA_real_ else unname(target)
      phases <- d$timings
      say("  %-5s %-3s %8.3f s (runs %s)  intervals mean %.1f  %s%s", method, backend, secs,
          paste(sprintf("%.3f", m$seconds), collapse = " "), mean(d$features$intervals),
          if (backend == "gpu") sprintf("bound %.4f s (%.2f of it)  ", bound, bound / secs) else "",
          if (is.na(identical_cpu)) "" else sprintf("identical to CPU: %s", identical_cpu))
      say("        time of the first run: %s", paste(sprintf("%s %.4f", names(phases), phases), collapse = ", "))
      if (!is.na(target)) say("  %s %s target <= %g s: %s", name, backend, target, if (secs <= target) "met" else "NOT met")
      rows[[length(rows) + 1L]] <- data.frame(
        date = format(Sys.time(), "%Y-%m-%d %H:%M"), host = Sys.info()[["nodename"]], device = device_name(backend),
        backend = backend, threads = if (backend == "cpu") opts$threads else NA, shape = name, method = method,
        samples = n, features = p, classes = classes, reps = opts$reps, seconds = secs,
        seconds_runs = paste(sprintf("%.4f", m$seconds), collapse = " "),
        phases = paste(sprintf("%s=%.4f", names(phases), phases), collapse = " "), intervals_mean = mean(d$features$intervals),
        bound_seconds = if (backend == "gpu") bound else NA, bound_fraction = if (backend == "gpu") bound / secs else NA,
        target_seconds = target, target_met = if (is.na(target)) NA else secs <= target,
        identical_to_cpu = identical_cpu, source = data$source, stringsAsFactors = FALSE)
    }
  }
}
close(log_file)
if (!length(rows)) quit(status = 0)
results <- do.call(rbind, rows)
utils::write.csv(results, csv, row.names = FALSE)

# The summary table.
fmt <- function(v) ifelse(is.na(v), "-", ifelse(v >= 1, sprintf("%.2f", v), sprintf("%.3g", v)))
yn <- function(v) ifelse(is.na(v), "-", ifelse(v, "yes", "**no**"))
md <- c(sprintf("# discretize benchmark: %s", basename(stem)), "",
        "Written by `bench/discretize.R`. Seconds: median of one `discretize()` call end to end from R (GPU after a",
        "warm-up). Bound: the values' bytes over PCIe plus three passes over device memory",
        sprintf("(%g GB/s and %g GB/s); \"of bound\" is bound / seconds.", opts$pcie_gbs, opts$hbm_gbs), "",
        "| shape | samples x features | classes | method | backend | threads | device | seconds | intervals (mean) | bound s | of bound | target s | met | identical to CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (i in seq_len(nrow(results))) {
  r <- results[i, ]
  md <- c(md, sprintf("| %s | %s x %s | %d | %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |", r$shape,
                      format(r$samples, big.mark = ","), format(r$features, big.mark = ","), r$classes, r$method,
                      r$backend, ifelse(is.na(r$threads), "-", r$threads), r$device, fmt(r$seconds), r$intervals_mean,
                      fmt(r$bound_seconds), fmt(r$bound_fraction), ifelse(is.na(r$target_seconds), "-", r$target_seconds),
                      yn(r$target_met), yn(r$identical_to_cpu)))
}
md <- c(md, "", "Data:", "", paste0("- ", unique(paste0(results$shape, ": ", results$source))), "")
writeLines(md, paste0(stem, ".md"))
cat("results:", csv, "\n")
