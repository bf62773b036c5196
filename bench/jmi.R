# Benchmark of JMI feature selection: fsgpu's CPU engine (1 thread, all threads), its GPU
# engine, and a plain single-threaded C++ rendering of FEAST's JMI (bench/baseline), on data
# with the shapes of the CUDA-JMI paper's sets and on two real microarray sets.
#
#   Rscript bench/jmi.R [--quick] [--shapes BreastCancer,SVHN] [--out FILE] [--data DIR]
#                       [--k 200] [--k-cpu 10] [--backends cpu1,cpuN,gpu,baseline]
#                       [--threads N] [--devices 0|0,1|all] [--seed 1]
#
# See bench/README.md for what is measured and what each CSV column means.

suppressPackageStartupMessages(library(fsgpu))

# The folder of this script (source("bench/jmi.R"): from source()'s frame; Rscript bench/jmi.R:
# from --file=; otherwise bench/ under the working directory), for the shared pieces.
bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "jmi.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
# The shape table, the synthetic data, the microarray reader and cpu_model().
source(file.path(bench_dir, "shapes.R"))

# ---- options -------------------------------------------------------------------------------

usage <- function() {
  cat(
    "Usage: Rscript bench/jmi.R [options]\n",
    "  --quick            smoke run: sample counts of the large shapes divided by 10; no CSV\n",
    "                     unless --out is given\n",
    "  --shapes A,B       shapes to run (default: all): ", paste(names(shape_table()), collapse = ", "), "\n",
    "  --out FILE         CSV to append to (default bench/results/jmi-<date>.csv)\n",
    "  --data DIR         datamicroarray folder (default ../shared/data/datamicroarray from the\n",
    "                     repository root)\n",
    "  --k K              features the GPU selects (default 200)\n",
    "  --k-cpu K          features the CPU runs and the baseline select (default 10)\n",
    "  --backends LIST    any of cpu1,cpuN,gpu,baseline (default: all)\n",
    "  --threads N        threads of the cpuN run (default parallel::detectCores())\n",
    "  --devices IDS      GPU ids for the gpu run, comma separated, or 'all' (default: the first)\n",
    "  --seed S           seed of the synthetic data (default 1)\n",
    sep = ""
  )
}

parse_options <- function(args) {
  opts <- list(quick = FALSE, shapes = NULL, out = NULL, data = NULL, k = 200L, k_cpu = 10L,
               backends = c("cpu1", "cpuN", "gpu", "baseline"), threads = NULL, devices = NULL,
               seed = 1L)
  opts <- read_options(args, opts, usage = usage, specs = list(
    "--quick" = NULL, "--shapes" = split_list, "--out" = identity, "--data" = identity, "--k" = as.integer,
    "--k-cpu" = as.integer, "--backends" = split_list, "--threads" = as.integer, "--devices" = identity,
    "--seed" = as.integer))
  bad <- setdiff(opts$backends, c("cpu1", "cpuN", "gpu", "baseline"))
  if (length(bad)) stop("unknown backend(s) in --backends: ", paste(bad, collapse = ", "), call. = FALSE)
  for (name in c("k", "k_cpu", "seed")) {
    if (is.na(opts[[name]]) || opts[[name]] < 1L) stop("--", sub("_", "-", name), " must be a positive integer", call. = FALSE)
  }
  opts
}

# ---- codes for the baseline ----------------------------------------------------------------

# fsgpu's equal-width rule (src/core/code_matrix.h, EqualWidthBins): [lo, hi] in nbins equal
# segments, v <= lo to bin 0, the top segment (and hi) to bin nbins - 1.
equal_width_codes <- function(v, lo, hi, nbins) {
  if (!(hi > lo)) return(integer(length(v)))
  b <- (v - lo) / (hi - lo) * nbins
  out <- ifelse(v <= lo, 0, ifelse(b >= nbins - 1, nbins - 1, floor(b)))
  as.integer(out)
}

# Writes uint8 codes, feature after feature, as fsgpu would see them: integer columns as they
# are (categorical; relabelling does not change any information), numeric and sparse columns
# binned equal-width. Returns FALSE (with a message) when a code does not fit a byte.
write_baseline_codes <- function(x, path, nbins) {
  con <- file(path, "wb")
  on.exit(close(con))
  n <- nrow(x)
  p <- ncol(x)
  block <- max(1L, as.integer(2^26 %/% n))
  for (first in seq.int(1L, p, by = block)) {
    cols <- first:min(p, first + block - 1L)
    if (methods::is(x, "CsparseMatrix")) {
      codes <- matrix(0L, n, length(cols))
      for (c in seq_along(cols)) {
        if (x@p[cols[c] + 1L] == x@p[cols[c]]) next  # all zero: one level, code 0
        range <- (x@p[cols[c]] + 1L):x@p[cols[c] + 1L]
        v <- x@x[range]
        has_zero <- length(v) < n
        lo <- min(v, if (has_zero) 0)
        hi <- max(v, if (has_zero) 0)
        if (has_zero) codes[, c] <- equal_width_codes(0, lo, hi, nbins)
        codes[x@i[range] + 1L, c] <- equal_width_codes(v, lo, hi, nbins)
      }
    } else if (is.integer(x)) {
      codes <- x[, cols, drop = FALSE]
    } else {
      codes <- vapply(cols, function(f) {
        v <- x[, f]
        equal_width_codes(v, min(v), max(v), nbins)
      }, integer(n))
    }
    if (min(codes) < 0L || max(codes) > 255L) {
      message("  baseline: codes outside 0..255, skipped")
      return(FALSE)
    }
    writeBin(as.raw(codes), con)
  }
  TRUE
}

# The baseline breaks floating-point ties (scores within this relative distance of the best) to
# the lowest index, as fsgpu's exact arithmetic does, so that the selections can be compared.
baseline_tie_tolerance <- 1e-10

run_baseline <- function(binary, x, y, k, nbins) {
  dir <- tempfile("feast_jmi_")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  codes <- file.path(dir, "codes.bin")
  labels <- file.path(dir, "labels.bin")
  if (!write_baseline_codes(x, codes, nbins)) return(NULL)
  writeBin(as.raw(as.integer(y) - 1L), labels)
  fmt <- function(v) format(v, scientific = FALSE)
  args <- c(codes, fmt(nrow(x)), fmt(ncol(x)), labels, fmt(k), format(baseline_tie_tolerance))
  out <- suppressWarnings(system2(binary, args, stdout = TRUE, stderr = TRUE))
  line <- grep("^selected=", out, value = TRUE)
  if (length(line) != 1L) {
    message("  baseline failed: ", paste(out, collapse = " | "))
    return(NULL)
  }
  get <- function(key) {
    m <- regmatches(line, regexpr(paste0("(^| )", key, "=[^ ]*"), line))
    sub(paste0("^ ?", key, "="), "", m)
  }
  list(features = as.integer(strsplit(get("selected"), ",")[[1]]) + 1L,
       scores = as.numeric(strsplit(get("scores"), ",")[[1]]),
       seconds = as.numeric(get("seconds")),
       first_seconds = as.numeric(get("first_seconds")))
}

# ---- devices and limits --------------------------------------------------------------------

# Peak memory bandwidth (GB/s, vendor data sheets) by GPU name; first match wins.
peak_bandwidth_table <- data.frame(
  pattern = c("\\bH200\\b", "H100 NVL", "H100 PCIe", "\\bH100\\b"),
  GBps = c(4800, 3900, 2000, 3350),
  stringsAsFactors = FALSE
)

peak_bandwidth_GBps <- function(name) {
  for (r in seq_len(nrow(peak_bandwidth_table))) {
    if (grepl(peak_bandwidth_table$pattern[r], name)) return(peak_bandwidth_table$GBps[r])
  }
  NA_real_
}

# ---- timing --------------------------------------------------------------------------------

# Runs select_features once. Its timings split the run: everything up to the second step
# (input coercion, encoding, transfer to the GPU, the I(X;Y) pass) is the setup, and the
# marginal cost of a selection step is timings["steps"] / (steps - 1).
time_selection <- function(x, y, k, backend, threads, devices, nbins) {
  tryCatch({
    sel <- NULL
    seconds <- system.time(
      # integer matrices hold categorical codes (as the baseline's codes take them), not numbers to bin
      sel <- select_features(x, y, k = k, method = "jmi", nbins = nbins, backend = backend,
                             threads = threads, devices = devices, quiet = TRUE,
                             categorical = if (is.integer(x)) TRUE)
    )[["elapsed"]]
    df <- as.data.frame(sel)
    list(seconds = seconds, setup_seconds = seconds - sel$timings[["steps"]], features = df$index,
         scores = df$score, steps = length(df$index), timings = sel$timings)
  }, error = function(e) {
    message("  ", backend, " failed: ", conditionMessage(e))
    NULL
  })
}

common_prefix_agrees <- function(a, b) {
  m <- min(length(a), length(b))
  m > 0L && identical(as.numeric(a[seq_len(m)]), as.numeric(b[seq_len(m)]))
}

first_difference <- function(a, b) {
  m <- min(length(a), length(b))
  d <- which(a[seq_len(m)] != b[seq_len(m)])
  if (length(d)) d[1] else NA_integer_
}

# ---- main ----------------------------------------------------------------------------------

script_path <- function() {
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) normalizePath(file) else NA_character_
}

main <- function() {
  opts <- parse_options(commandArgs(trailingOnly = TRUE))
  script <- script_path()
  root <- if (!is.na(script) && basename(dirname(script)) == "bench") dirname(dirname(script)) else getwd()
  shapes <- shape_table()
  if (is.null(opts$shapes)) opts$shapes <- names(shapes)
  unknown <- setdiff(opts$shapes, names(shapes))
  if (length(unknown)) stop("unknown shape(s): ", paste(unknown, collapse = ", "), "; known: ",
                            paste(names(shapes), collapse = ", "), call. = FALSE)
  data_dir <- if (is.null(opts$data)) file.path(root, "..", "shared", "data", "datamicroarray") else opts$data
  baseline <- file.path(root, "bench", "baseline", "feast_jmi")
  nbins <- 64L
  threads_all <- if (is.null(opts$threads)) parallel::detectCores() else opts$threads

  info <- backend_info()
  gpus <- info$devices
  if (is.null(gpus)) gpus <- data.frame(id = integer(), name = character())
  has_gpu <- isTRUE(info$gpu_available) && nrow(gpus) > 0L
  devices <- if (!has_gpu) NULL else if (is.null(opts$devices)) gpus$id[1]
             else if (identical(opts$devices, "all")) gpus$id
             else as.integer(strsplit(opts$devices, ",", fixed = TRUE)[[1]])
  gpu_names <- if (has_gpu) gpus$name[match(devices, gpus$id)] else character()
  peak <- if (has_gpu) sum(vapply(gpu_names, peak_bandwidth_GBps, numeric(1))) else NA_real_
  cpu <- cpu_model()

  out <- opts$out
  if (is.null(out) && !opts$quick) {
    out <- file.path(root, "bench", "results", sprintf("jmi-%s.csv", format(Sys.Date())))
  }

  cat("fsgpu JMI benchmark", if (opts$quick) "(quick: large shapes at 1/10 of their samples)", "\n")
  cat("  CPU:  ", cpu, ", ", parallel::detectCores(), " cores; cpuN uses ", threads_all, " threads\n", sep = "")
  if (has_gpu) {
    cat("  GPU:  ", paste(sprintf("%s (id %d)", gpu_names, devices), collapse = ", "),
        "; peak memory bandwidth ", if (is.na(peak)) "unknown" else paste(peak, "GB/s"), "\n", sep = "")
  } else {
    cat("  GPU:  none available; gpu runs skipped\n")
  }
  use_baseline <- "baseline" %in% opts$backends && file.exists(baseline)
  if ("baseline" %in% opts$backends && !use_baseline) {
    cat("  baseline: ", baseline, " not built (make -C bench/baseline); skipped\n", sep = "")
  }
  cat("  k = ", opts$k, " on the GPU, ", opts$k_cpu, " on the CPU and the baseline; ", nbins, " bins\n", sep = "")
  cat("  output: ", if (is.null(out)) "none (quick run; give --out to keep it)" else out, "\n\n", sep = "")

  # Warm-up: loads the GPU context and the thread pool before anything is timed.
  set.seed(opts$seed)
  warm <- matrix(sample.int(4L, 200L * 50L, replace = TRUE), 200L, 50L)
  warm_y <- factor(sample(1:2, 200L, replace = TRUE))
  invisible(select_features(warm, warm_y, k = 3L, backend = "cpu", threads = threads_all))
  if (has_gpu && "gpu" %in% opts$backends) {
    invisible(select_features(warm, warm_y, k = 3L, backend = "gpu", devices = devices))
  }

  results <- list()
  selections <- list()  # per shape: the reference selection, to compare shapes holding the same data
  for (name in opts$shapes) {
    spec <- shapes[[name]]
    cat("== ", name, "\n", sep = "")
    generated <- system.time(d <- make_shape(name, spec, opts, data_dir))[["elapsed"]]
    if (is.null(d)) {
      cat("  data not found: ", file.path(data_dir, spec$file), " (give --data); skipped\n\n", sep = "")
      next
    }
    x <- d$x
    y <- d$y
    sparse <- methods::is(x, "CsparseMatrix")
    n <- nrow(x)
    p <- ncol(x)
    nnz <- if (sparse) length(x@x) else NA_real_
    # Nonzero cells / cells for the sparse-born data; 1 (stored densely) for the others.
    density <- if (sparse) nnz / (as.double(n) * p) else if (!is.null(d$density)) d$density else 1
    cat(sprintf("  data: %s\n  %d samples x %d features, %d classes, density %.3g%s; made in %.1f s\n",
                d$source, n, p, nlevels(y), density, if (sparse) sprintf(", %d nonzeros", nnz) else "",
                generated))

    dense_bytes <- as.double(n) * p
    our_bytes <- if (sparse) nnz * 5 else dense_bytes
    rows <- list()
    add_row <- function(backend, threads, k, device, r, bytes, agrees, per_step, setup = NA_real_) {
      bw <- bytes / per_step / 1e9
      # The engine's own timings, and what is left of the end-to-end time: R's share (input
      # checks and coercion before the engine, the result after it).
      tm <- if (is.null(r$timings)) c(encode = NA, prepare = NA, relevance = NA, steps = NA) else r$timings
      r_side <- r$seconds - sum(tm)
      rows[[length(rows) + 1L]] <<- data.frame(
        date = format(Sys.time(), "%Y-%m-%d %H:%M"), device = device, shape = name,
        n_samples = n, n_features = p, n_classes = nlevels(y), density = signif(density, 4), k = k,
        backend = backend, threads = threads, seconds = signif(r$seconds, 6),
        setup_seconds = signif(setup, 6), encode_seconds = signif(tm[["encode"]], 4),
        prepare_seconds = signif(tm[["prepare"]], 4), relevance_seconds = signif(tm[["relevance"]], 4),
        steps_seconds = signif(tm[["steps"]], 4), r_side_seconds = signif(r_side, 4),
        r_share = signif(r_side / r$seconds, 3), steps = length(r$features),
        seconds_per_step = signif(per_step, 6), bytes_per_step = bytes,
        bandwidth_GBps_achieved = signif(bw, 4),
        bound_fraction = if (backend == "gpu") signif(bw / peak, 4) else NA_real_,
        agrees = agrees, source = d$source, stringsAsFactors = FALSE
      )
    }
    marginal <- function(r) if (r$steps > 1L) (r$seconds - r$setup_seconds) / (r$steps - 1L) else NA_real_
    reference <- NULL  # the first of our selections: the others are compared with it
    compare <- function(r, label) {
      if (is.null(reference)) {
        reference <<- c(r, label = label)
        return(NA)
      }
      same <- common_prefix_agrees(r$features, reference$features) &&
        common_prefix_agrees(r$scores, reference$scores)
      if (!same) {
        cat(sprintf("  %s differs from %s: first difference at rank %s\n", label, reference$label,
                    first_difference(r$features, reference$features)))
      }
      same
    }

    for (backend in intersect(c("cpu1", "cpuN"), opts$backends)) {
      threads <- if (backend == "cpu1") 1L else threads_all
      r <- time_selection(x, y, opts$k_cpu, "cpu", threads, NULL, nbins)
      if (is.null(r)) next
      add_row(backend, threads, opts$k_cpu, cpu, r, our_bytes, compare(r, backend), marginal(r), r$setup_seconds)
    }
    if ("gpu" %in% opts$backends && has_gpu) {
      r <- time_selection(x, y, opts$k, "gpu", NULL, devices, nbins)
      if (!is.null(r)) {
        add_row("gpu", NA_integer_, opts$k, paste(gpu_names, collapse = " + "), r, our_bytes,
                compare(r, "gpu"), marginal(r), r$setup_seconds)
      }
    }
    if (use_baseline) {
      b <- tryCatch(run_baseline(baseline, x, y, opts$k_cpu, nbins), error = function(e) {
        message("  baseline failed: ", conditionMessage(e))
        NULL
      })
      if (!is.null(b)) {
        steps <- length(b$features)
        per_step <- if (steps > 1L) (b$seconds - b$first_seconds) / (steps - 1L) else NA_real_
        agrees <- NA
        if (!is.null(reference)) {
          agrees <- common_prefix_agrees(b$features, reference$features)
          if (!agrees) {
            cat(sprintf("  baseline differs from %s: first difference at rank %s\n",
                        reference$label, first_difference(b$features, reference$features)))
          }
        }
        add_row("baseline", 1L, opts$k_cpu, cpu, b, dense_bytes, agrees, per_step, b$first_seconds)
      }
    }
    if (!is.null(reference)) selections[[name]] <- reference$features
    twin <- spec$same_as
    if (!is.null(twin) && !is.null(selections[[twin]]) && !is.null(reference)) {
      cat(sprintf("  same data as %s: selections %s\n", twin,
                  if (common_prefix_agrees(reference$features, selections[[twin]])) "agree" else "DIFFER"))
    }
    rm(x, d)
    invisible(gc())
    if (!length(rows)) {
      cat("  nothing ran\n\n")
      next
    }
    table <- do.call(rbind, rows)
    results[[name]] <- table
    show <- table[, c("backend", "threads", "k", "steps", "seconds", "encode_seconds", "prepare_seconds",
                      "steps_seconds", "r_side_seconds", "r_share", "seconds_per_step", "bandwidth_GBps_achieved",
                      "bound_fraction", "agrees")]
    names(show) <- c("backend", "threads", "k", "steps", "seconds", "encode", "prepare", "steps_s", "R side",
                     "R share", "s/step", "GB/s", "of peak", "agrees")
    for (col in c("seconds", "encode", "prepare", "steps_s", "R side", "R share", "s/step", "GB/s", "of peak"))
      show[[col]] <- signif(show[[col]], 3)
    print(show, row.names = FALSE)
    if (all(c("cpu1", "baseline") %in% table$backend)) {
      ratio <- table$seconds_per_step[table$backend == "baseline"] / table$seconds_per_step[table$backend == "cpu1"]
      cat(sprintf("  cpu1 is %.2fx the baseline per step (target >= 1.5x)\n", ratio))
    }
    if (all(c("cpu1", "cpuN") %in% table$backend)) {
      speedup <- table$seconds_per_step[table$backend == "cpu1"] / table$seconds_per_step[table$backend == "cpuN"]
      cat(sprintf("  cpuN is %.2fx cpu1 per step with %d threads\n", speedup, threads_all))
    }
    cat("\n")
    if (!is.null(out)) {
      dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
      utils::write.table(table, out, sep = ",", row.names = FALSE, qmethod = "double",
                         append = file.exists(out), col.names = !file.exists(out))
    }
  }
  if (!is.null(out) && length(results)) cat("results appended to ", out, "\n", sep = "")
  invisible(results)
}

main()
