# Benchmark of the FEAST family of selection criteria (select_features(method = ...)): the cost
# of one selection step of every method against that of JMI, on fsgpu's CPU engine (1 thread,
# all threads) and its GPU engine, on the shapes of the CUDA-JMI paper's sets (bench/shapes.R).
#
#   Rscript bench/feast_family.R [--quick] [--shapes BreastCancer,SVHN] [--methods mrmr,cmim]
#                                [--k 50] [--k-cpu 50] [--cpu-budget 30] [--reps 1]
#                                [--backends cpu1,cpuN,gpu] [--threads N] [--devices 0|0,1|all]
#                                [--out FILE|DIR] [--tag TAG] [--compare CSV] [--data DIR] [--seed 1]
#
# Targets (issue 3): per selection step, every method within 2x of JMI's step, on the GPU and
# on the CPU. See bench/README.md for what is measured and what each CSV column means.

suppressPackageStartupMessages(library(fsgpu))

# The folder of this script (source(): from source()'s frame; Rscript bench/feast_family.R: from
# --file=; otherwise bench/ under the working directory), for the shared pieces.
bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "feast_family.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
# The shape table, the synthetic data, the microarray reader and cpu_model().
source(file.path(bench_dir, "shapes.R"))

# ---- methods -------------------------------------------------------------------------------

# FEAST's criteria and praznik's JMI3 and JIM, in the order of the tables. JMI is the
# yardstick and always runs first.
all_methods <- c("mim", "mrmr", "mifs", "cife", "condred", "betagamma", "icap", "cmim", "jmi",
                 "disr", "cmi", "jmim", "njmim", "jmi3", "jim")

# Parameters passed to select_features() for a method (others take their defaults: mifs beta = 1).
method_params <- list(betagamma = list(beta = 0.5, gamma = 0.5))

# Issue 3's target (a step within 2x of JMI's) is for FEAST's criteria. JMI3's step t counts t
# three-way tables per candidate (the new feature with each one selected before; JMI's step counts
# one), so its step grows with k; JIM's adds Gini impurities to the counts. Both are reported,
# with no target.
untargeted_methods <- c("jmi3", "jim")

# Tables list JMI first, then the others in FEAST's order.
table_order <- c("jmi", setdiff(all_methods, "jmi"))

params_label <- function(method) {
  p <- method_params[[method]]
  if (is.null(p)) "" else paste(names(p), unlist(p), sep = "=", collapse = " ")
}

# ---- options -------------------------------------------------------------------------------

usage <- function() {
  cat(
    "Usage: Rscript bench/feast_family.R [options]\n",
    "  --quick            smoke run: sample counts of the large shapes divided by 10; no CSV\n",
    "                     unless --out is given\n",
    "  --shapes A,B       shapes to run (default: all): ", paste(names(shape_table()), collapse = ", "), "\n",
    "  --methods A,B      methods to run (default: all 15): ", paste(all_methods, collapse = ", "), ";\n",
    "                     jmi, the yardstick, always runs\n",
    "  --k K              features the GPU selects (default 50)\n",
    "  --k-cpu K          features the CPU runs select (default 50), cut per shape by --cpu-budget\n",
    "  --cpu-budget S     seconds of steps one CPU run of JMI may take (default 30): where JMI's\n",
    "                     step (timed by a 3-feature JMI run first) is slow, every CPU run of that\n",
    "                     shape and thread count selects 1 + S / step features (at least 3)\n",
    "                     instead of --k-cpu; 0 keeps --k-cpu everywhere\n",
    "  --reps R           runs of each method (default 1); the run with the median step time is\n",
    "                     kept. Runs are interleaved: JMI, the others, JMI, the others, ...\n",
    "  --backends LIST    any of cpu1,cpuN,gpu (default: all)\n",
    "  --threads N        threads of the cpuN runs (default parallel::detectCores())\n",
    "  --devices IDS      GPU ids for the gpu runs, comma separated, or 'all' (default: the first)\n",
    "  --out FILE|DIR     CSV to append to, with the markdown summary beside it (.md); a folder\n",
    "                     takes the default name (default bench/results/feast_family-<date>-<tag>.csv)\n",
    "  --tag TAG          the name's tag (default: the GPU's short name when gpu runs, else 'cpu')\n",
    "  --compare CSV      earlier feast_family CSV(s), comma separated: gpu rows of a method and\n",
    "                     shape that has no CPU run here are checked against their CPU rows\n",
    "  --data DIR         datamicroarray folder (default ../shared/data/datamicroarray from the\n",
    "                     repository root)\n",
    "  --seed S           seed of the synthetic data (default 1)\n",
    "  --summarize CSV    run nothing: rewrite the markdown summary (CSV name, .md) from the CSV,\n",
    "                     e.g. after appending the rows of several runs to one file\n",
    sep = ""
  )
}

parse_options <- function(args) {
  opts <- list(quick = FALSE, shapes = NULL, methods = all_methods, k = 50L, k_cpu = 50L,
               cpu_budget = 30, reps = 1L, backends = c("cpu1", "cpuN", "gpu"), threads = NULL,
               devices = NULL, out = NULL, tag = NULL, compare = NULL, data = NULL, seed = 1L,
               summarize = NULL)
  opts <- read_options(args, opts, usage = usage, specs = list(
    "--quick" = NULL, "--shapes" = split_list, "--methods" = function(s) tolower(split_list(s)),
    "--k" = as.integer, "--k-cpu" = as.integer, "--cpu-budget" = as.numeric, "--reps" = as.integer,
    "--backends" = split_list, "--threads" = as.integer, "--devices" = identity, "--out" = identity,
    "--tag" = identity, "--compare" = split_list, "--data" = identity, "--seed" = as.integer,
    "--summarize" = identity))
  bad <- setdiff(opts$backends, c("cpu1", "cpuN", "gpu"))
  if (length(bad)) stop("unknown backend(s) in --backends: ", paste(bad, collapse = ", "), call. = FALSE)
  bad <- setdiff(opts$methods, all_methods)
  if (length(bad)) stop("unknown method(s) in --methods: ", paste(bad, collapse = ", "), "; known: ",
                        paste(all_methods, collapse = ", "), call. = FALSE)
  opts$methods <- c("jmi", setdiff(intersect(all_methods, opts$methods), "jmi"))
  for (name in c("k", "k_cpu", "reps", "seed")) {
    if (is.na(opts[[name]]) || opts[[name]] < 1L) stop("--", sub("_", "-", name), " must be a positive integer", call. = FALSE)
  }
  if (!is.null(opts$threads) && (is.na(opts$threads) || opts$threads < 1L)) stop("--threads must be a positive integer", call. = FALSE)
  if (is.na(opts$cpu_budget) || opts$cpu_budget < 0) stop("--cpu-budget must be a number >= 0", call. = FALSE)
  if (!is.null(opts$tag) && !grepl("^[A-Za-z0-9._+-]+$", opts$tag)) stop("--tag: letters, digits and ._+- only", call. = FALSE)
  opts
}

# ---- running one selection -----------------------------------------------------------------

# The arguments select_features() knows: min_score, beta and gamma are passed only where the
# installed fsgpu takes them (before the FEAST family it took method = "jmi" only).
select_formals <- function() {
  names(formals(utils::getS3method("select_features", "default", envir = asNamespace("fsgpu"))))
}

# Runs select_features() once and returns its timings, the selection and the step time, or
# NULL (with a message) when the method fails. min_score = -Inf makes every method run all k
# steps, so that the step times of criteria that stop early can be compared.
run_one <- function(x, y, method, k, backend, threads, devices, nbins, known) {
  # x and y go in as symbols: a call holding a 6 GB matrix inline would be deparsed whole by
  # anything that prints or deparses it.
  args <- list(x = quote(x), y = quote(y), k = k, method = method, nbins = nbins, backend = backend,
               threads = threads, devices = devices, quiet = TRUE)
  # integer matrices hold categorical codes: categories, not bins (fsgpu bins integers given nbins)
  extra <- c(method_params[[method]], list(min_score = -Inf), if (is.integer(x)) list(categorical = TRUE))
  args <- c(args, extra[intersect(names(extra), known)])
  tryCatch({
    start <- proc.time()[["elapsed"]]
    sel <- do.call(select_features, args, envir = environment())
    seconds <- proc.time()[["elapsed"]] - start
    t <- sel$timings
    features <- as.data.frame(sel)$index
    selected <- length(features)
    list(seconds = seconds, timings = t[c("encode", "prepare", "relevance", "steps")],
         features = features, selected = selected,
         per_step = if (selected > 1L) t[["steps"]] / (selected - 1L) else NA_real_)
  }, error = function(e) {
    cat(sprintf("  %-5s %-10s failed: %s\n", label_of(backend, threads), method, conditionMessage(e)))
    NULL
  })
}

label_of <- function(backend, threads) if (backend == "gpu") "gpu" else if (threads == 1L) "cpu1" else "cpuN"

# The run with the median step time (the lower middle one for an even count).
median_run <- function(runs) {
  runs <- Filter(Negate(is.null), runs)
  if (!length(runs)) return(NULL)
  steps <- vapply(runs, function(r) if (is.na(r$per_step)) Inf else r$per_step, numeric(1))
  runs[[order(steps)[(length(runs) + 1L) %/% 2L]]]
}

common_prefix_agrees <- function(a, b) {
  m <- min(length(a), length(b))
  m > 0L && identical(as.integer(a[seq_len(m)]), as.integer(b[seq_len(m)]))
}

first_difference <- function(a, b) {
  m <- min(length(a), length(b))
  d <- which(a[seq_len(m)] != b[seq_len(m)])
  if (length(d)) d[1] else NA_integer_
}

features_string <- function(f) paste(f, collapse = " ")
features_parse <- function(s) {
  if (is.na(s) || !nzchar(s)) integer() else as.integer(strsplit(as.character(s), " ", fixed = TRUE)[[1]])
}

# ---- naming and the summary ----------------------------------------------------------------

# "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA A100-SXM4-80GB" -> "a100", "NVIDIA GeForce RTX 4090"
# -> "4090"; several GPUs -> "2xh200".
gpu_short_name <- function(names) {
  short <- vapply(names, function(nm) {
    tokens <- strsplit(nm, "[^A-Za-z0-9]+")[[1]]
    hit <- grep("^[A-Za-z]*[0-9]{2,}[A-Za-z]*$", setdiff(tokens, c("NVIDIA", "GeForce", "RTX", "Tesla")), value = TRUE)
    tolower(if (length(hit)) hit[1] else "gpu")
  }, character(1), USE.NAMES = FALSE)
  u <- unique(short)
  if (length(u) == 1L && length(short) > 1L) paste0(length(short), "x", u) else paste(u, collapse = "+")
}

# Milliseconds to 3 significant digits: 1234, 123, 12.3, 1.23, 0.123.
fmt_ms <- function(s) {
  ms <- s * 1000
  ifelse(is.na(ms), "-", ifelse(ms >= 100, sprintf("%.0f", ms), ifelse(ms >= 10, sprintf("%.1f", ms),
         ifelse(ms >= 1, sprintf("%.2f", ms), sprintf("%.3g", ms)))))
}
fmt_ratio <- function(r) ifelse(is.na(r), "-", ifelse(r > 2, sprintf("**%.2f**", r), sprintf("%.2f", r)))

# Rewrites the markdown summary from the whole CSV (every run appended to it, possibly from
# several invocations): the latest row per device, shape, sample count, backend, threads and
# method.
write_summary <- function(csv, md) {
  d <- tryCatch(utils::read.csv(csv, stringsAsFactors = FALSE), error = function(e) NULL)
  if (is.null(d) || !nrow(d) || !"per_step_seconds" %in% names(d)) return(invisible(FALSE))
  key <- paste(d$device, d$shape, d$n, d$backend, d$threads, d$method, sep = "\r")
  d <- d[!duplicated(key, fromLast = TRUE), , drop = FALSE]
  d$run <- paste(d$shape, d$n, d$backend, d$threads, d$device, sep = "\r")
  runs <- unique(d$run)
  shapes <- unique(d$shape)
  methods <- intersect(table_order, unique(d$method))
  lines <- c(
    sprintf("# FEAST-family benchmark: %s", sub("\\.csv$", "", basename(csv))), "",
    sprintf("Written by `bench/feast_family.R` from `%s` (the latest row per shape, backend and method).", basename(csv)),
    "Per-step time: `sel$timings[\"steps\"] / (selected - 1)`, the steps after the first (I(X;Y)) one,",
    "with `min_score = -Inf` so that every method runs all k steps. Ratio: the method's per-step time",
    "over JMI's on the same shape and backend. Target: ratio <= 2 (ratios above 2 in **bold**).", "",
    "Devices:", "", paste0("- ", unique(paste0(d$backend, ": ", d$device, " (", d$host, ")"))), "")
  lines <- c(lines, "## Ratio to JMI's per-step time", "")
  for (b in unique(d$backend)) {
    db <- d[d$backend == b, , drop = FALSE]
    cols <- unique(db$run)
    head <- vapply(cols, function(r) db$shape[db$run == r][1], character(1))
    twice <- head %in% head[duplicated(head)]  # same shape from several devices or sample counts
    head[twice] <- vapply(cols[twice], function(r) {
      x <- db[db$run == r, , drop = FALSE][1, ]
      sprintf("%s (n %s, %s)", x$shape, x$n, x$device)
    }, character(1))
    lines <- c(lines, sprintf("%s (%s):", b, paste(unique(db$device), collapse = "; ")), "",
               paste0("| method | ", paste(head, collapse = " | "), " |"),
               paste0("|---|", paste(rep("---", length(cols)), collapse = "|"), "|"))
    for (m in intersect(methods, db$method)) {
      cells <- vapply(cols, function(r) {
        x <- db[db$run == r & db$method == m, , drop = FALSE]
        if (nrow(x)) fmt_ratio(x$ratio_to_jmi[1]) else "-"
      }, character(1))
      lines <- c(lines, paste0("| ", m, " | ", paste(cells, collapse = " | "), " |"))
    }
    met <- db$target_met[!is.na(db$target_met)]
    missed <- db[!is.na(db$target_met) & !db$target_met, , drop = FALSE]
    lines <- c(lines, "", sprintf("Target met on %d of %d %s rows%s.", sum(met), length(met), b,
                                 if (nrow(missed)) paste0("; missed: ", paste(sprintf("%s on %s (%.2fx)", missed$method,
                                                                                      missed$shape, missed$ratio_to_jmi), collapse = ", ")) else ""), "")
  }
  lines <- c(lines, "## Per shape and backend", "")
  for (r in runs) {
    x <- d[d$run == r, , drop = FALSE]
    x <- x[order(match(x$method, table_order)), , drop = FALSE]
    f <- x[1, ]
    cut <- if (!is.na(f$k_requested) && f$k < f$k_requested) sprintf(" (cut from %d by --cpu-budget)", f$k_requested) else ""
    lines <- c(lines,
      sprintf("### %s, %s x %s, %s classes: %s%s, k = %d%s", f$shape, format(f$n, big.mark = ","),
              format(f$p, big.mark = ","), f$classes, f$backend,
              if (f$backend == "gpu") "" else sprintf(" (%s thread%s)", f$threads, if (f$threads == 1) "" else "s"), f$k, cut), "",
      sprintf("%s; %s", f$device, f$date), "",
      "| method | selected | encode s | prepare s | first step s | per step ms | ratio to JMI | target | agrees with CPU |",
      "|---|---|---|---|---|---|---|---|---|")
    for (i in seq_len(nrow(x))) {
      m <- x[i, ]
      lines <- c(lines, sprintf("| %s%s | %d | %.3g | %.3g | %.3g | %s | %s | %s | %s |", m$method,
                                if (nzchar(m$params) && !is.na(m$params)) sprintf(" (%s)", m$params) else "",
                                m$selected, m$encode_seconds, m$prepare_seconds, m$relevance_seconds,
                                fmt_ms(m$per_step_seconds), fmt_ratio(m$ratio_to_jmi),
                                if (is.na(m$target_met)) "-" else if (m$target_met) "met" else "**missed**",
                                if (is.na(m$agrees_with_cpu)) "-" else if (m$agrees_with_cpu) "yes" else "**no**"))
    }
    lines <- c(lines, "")
  }
  writeLines(lines, md)
  invisible(TRUE)
}

# ---- main ----------------------------------------------------------------------------------

main <- function() {
  opts <- parse_options(commandArgs(trailingOnly = TRUE))
  if (!is.null(opts$summarize)) {
    md <- paste0(sub("\\.csv$", "", opts$summarize), ".md")
    if (!write_summary(opts$summarize, md)) stop("no feast_family rows in ", opts$summarize, call. = FALSE)
    cat("summary of ", opts$summarize, " written to ", md, "\n", sep = "")
    return(invisible(NULL))
  }
  root <- if (basename(bench_dir) == "bench") dirname(bench_dir) else getwd()
  shapes <- shape_table()
  if (is.null(opts$shapes)) opts$shapes <- names(shapes)
  unknown <- setdiff(opts$shapes, names(shapes))
  if (length(unknown)) stop("unknown shape(s): ", paste(unknown, collapse = ", "), "; known: ",
                            paste(names(shapes), collapse = ", "), call. = FALSE)
  data_dir <- if (is.null(opts$data)) file.path(root, "..", "shared", "data", "datamicroarray") else opts$data
  nbins <- 64L
  threads_all <- if (is.null(opts$threads)) parallel::detectCores() else opts$threads
  known <- select_formals()
  host <- Sys.info()[["nodename"]]
  cpu <- cpu_model()

  info <- backend_info()
  gpus <- info$devices
  if (is.null(gpus)) gpus <- data.frame(id = integer(), name = character())
  has_gpu <- isTRUE(info$gpu_available) && nrow(gpus) > 0L
  devices <- if (!has_gpu) NULL else if (is.null(opts$devices)) gpus$id[1]
             else if (identical(opts$devices, "all")) gpus$id
             else as.integer(strsplit(opts$devices, ",", fixed = TRUE)[[1]])
  gpu_names <- if (has_gpu) gpus$name[match(devices, gpus$id)] else character()
  if (has_gpu && anyNA(gpu_names)) stop("--devices: no GPU with id ", paste(devices[is.na(gpu_names)], collapse = ", "), call. = FALSE)
  gpu_device <- paste(gpu_names, collapse = " + ")
  run_gpu <- has_gpu && "gpu" %in% opts$backends
  cpu_backends <- intersect(c("cpu1", "cpuN"), opts$backends)

  tag <- if (!is.null(opts$tag)) opts$tag else if (run_gpu) gpu_short_name(gpu_names) else "cpu"
  default_name <- sprintf("feast_family-%s-%s.csv", format(Sys.Date()), tag)
  out <- opts$out
  if (!is.null(out) && (dir.exists(out) || grepl("/$", out))) out <- file.path(sub("/+$", "", out), default_name)
  if (is.null(out) && !opts$quick) out <- file.path(root, "bench", "results", default_name)
  md <- if (is.null(out)) NULL else paste0(sub("\\.csv$", "", out), ".md")

  # CPU rows of earlier runs (--compare), for the agreement of gpu rows without a CPU run here.
  earlier <- NULL
  compare_notes <- character()
  for (f in opts$compare) {
    e <- if (file.exists(f)) {
      tryCatch(utils::read.csv(f, stringsAsFactors = FALSE, colClasses = c(features = "character")),
               error = function(e) NULL)
    }
    if (is.null(e) || !all(c("features", "backend", "seed") %in% names(e))) {
      compare_notes <- c(compare_notes, paste0("  --compare: ", f, " is missing or not a feast_family CSV; ignored\n"))
      next
    }
    earlier <- rbind(earlier, e[e$backend %in% c("cpu1", "cpuN"), c("shape", "n", "p", "seed", "nbins", "method", "params", "backend", "features")])
  }

  cat("fsgpu FEAST-family benchmark", if (opts$quick) "(quick: large shapes at 1/10 of their samples)", "\n")
  cat("  host: ", host, "; CPU: ", cpu, ", ", parallel::detectCores(), " cores; cpuN uses ", threads_all, " threads\n", sep = "")
  if (run_gpu) {
    cat("  GPU:  ", paste(sprintf("%s (id %d)", gpu_names, devices), collapse = ", "), "\n", sep = "")
  } else if ("gpu" %in% opts$backends) {
    cat("  GPU:  none available (", if (nzchar(info$problem %||% "")) info$problem else "none found", "); gpu runs skipped\n", sep = "")
  }
  cat("  methods: ", paste(opts$methods, collapse = ", "), " (betagamma: beta = 0.5, gamma = 0.5; mifs: beta = 1)\n", sep = "")
  cat("  backends: ", paste(c(cpu_backends, if (run_gpu) "gpu"), collapse = ", "), "; k = ", opts$k, " on the GPU, ",
      opts$k_cpu, " on the CPU", if (opts$cpu_budget > 0) sprintf(" (less where JMI's steps would take over %g s)", opts$cpu_budget),
      "; ", nbins, " bins; ", opts$reps, " run(s) each\n", sep = "")
  if (!"min_score" %in% known) {
    cat("  note: the installed fsgpu has no min_score argument: methods may stop before k\n")
  }
  cat("  output: ", if (is.null(out)) "none (quick run; give --out to keep it)" else paste0(out, " (+ .md)"), "\n", sep = "")
  cat(compare_notes, sep = "")
  if (!is.null(earlier)) cat("  comparing gpu rows with ", nrow(earlier), " CPU rows of --compare\n", sep = "")
  cat("\n")
  if (!length(cpu_backends) && !run_gpu) {
    cat("nothing to run\n")
    return(invisible(NULL))
  }

  # Warm-up: loads the GPU context and the thread pool before anything is timed.
  set.seed(opts$seed)
  warm <- matrix(sample.int(4L, 200L * 50L, replace = TRUE), 200L, 50L)
  warm_y <- factor(sample(1:2, 200L, replace = TRUE))
  invisible(select_features(warm, warm_y, k = 3L, backend = "cpu", threads = threads_all, quiet = TRUE))
  if (run_gpu) invisible(select_features(warm, warm_y, k = 3L, backend = "gpu", devices = devices, quiet = TRUE))

  all_rows <- list()
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
    n <- nrow(x)
    p <- ncol(x)
    cat(sprintf("  data: %s\n  %d samples x %d features, %d classes; made in %.1f s\n", d$source, n, p,
                nlevels(y), generated))

    cpu_selections <- list()  # method -> list of CPU selections (cpu1, cpuN) of this shape
    for (backend in c(cpu_backends, if (run_gpu) "gpu")) {
      is_gpu <- backend == "gpu"
      threads <- if (is_gpu) NA_integer_ else if (backend == "cpu1") 1L else threads_all
      engine <- if (is_gpu) "gpu" else "cpu"
      run <- function(method, k) run_one(x, y, method, k, engine, if (is_gpu) NULL else threads,
                                         if (is_gpu) devices else NULL, nbins, known)
      k_requested <- if (is_gpu) opts$k else opts$k_cpu
      k <- min(k_requested, p)
      if (!is_gpu && opts$cpu_budget > 0 && k > 3L) {
        probe <- run("jmi", 3L)
        if (!is.null(probe) && !is.na(probe$per_step) && probe$per_step * (k - 1L) > opts$cpu_budget) {
          k <- max(3L, min(k, 1L + as.integer(floor(opts$cpu_budget / probe$per_step))))
          cat(sprintf("  %s: JMI takes %.3g s a step on %d thread%s: k = %d instead of %d (--cpu-budget %g s)\n",
                      backend, probe$per_step, threads, if (threads == 1L) "" else "s", k, k_requested, opts$cpu_budget))
        }
      }
      cat(sprintf("  %s: k = %d%s\n", backend, k, if (is_gpu) paste0(" on ", gpu_device) else sprintf(", %d thread%s", threads, if (threads == 1L) "" else "s")))

      runs <- setNames(vector("list", length(opts$methods)), opts$methods)
      for (rep in seq_len(opts$reps)) {
        for (m in opts$methods) {
          r <- run(m, k)
          runs[[m]] <- c(runs[[m]], list(r))
          if (!is.null(r)) {
            cat(sprintf("  %-5s %-10s%s k %3d  selected %3d  encode %.3g s  prepare %.3g s  first step %.3g s  steps %.3g s  per step %s ms\n",
                        backend, m, if (opts$reps > 1L) sprintf(" run %d", rep) else "", k, r$selected,
                        r$timings[["encode"]], r$timings[["prepare"]], r$timings[["relevance"]],
                        r$timings[["steps"]], fmt_ms(r$per_step)))
          }
        }
      }
      kept <- lapply(runs, median_run)
      jmi_step <- if (is.null(kept$jmi)) NA_real_ else kept$jmi$per_step
      rows <- list()
      for (m in opts$methods) {
        r <- kept[[m]]
        if (is.null(r)) next
        ratio <- r$per_step / jmi_step
        agrees <- NA
        if (is_gpu) {
          refs <- cpu_selections[[m]]
          if (!length(refs) && !is.null(earlier)) {
            e <- earlier[earlier$shape == name & earlier$n == n & earlier$p == p & earlier$seed == opts$seed &
                           earlier$nbins == nbins & earlier$method == m, , drop = FALSE]
            refs <- lapply(e$features, features_parse)
          }
          if (length(refs)) {
            agrees <- all(vapply(refs, common_prefix_agrees, logical(1), r$features))
            if (!agrees) {
              cat(sprintf("  gpu   %-10s DIFFERS from the CPU: first difference at rank %s\n", m,
                          first_difference(r$features, refs[[which(!vapply(refs, common_prefix_agrees, logical(1), r$features))[1]]])))
            }
          }
        } else {
          for (ref in cpu_selections[[m]]) {
            if (!common_prefix_agrees(ref, r$features)) {
              cat(sprintf("  %-5s %-10s differs from the other CPU run: first difference at rank %s\n", backend, m,
                          first_difference(ref, r$features)))
            }
          }
          cpu_selections[[m]] <- c(cpu_selections[[m]], list(r$features))
        }
        rows[[length(rows) + 1L]] <- data.frame(
          date = format(Sys.time(), "%Y-%m-%d %H:%M"), host = host, device = if (is_gpu) gpu_device else cpu,
          shape = name, n = n, p = p, classes = nlevels(y), nbins = nbins, method = m, params = params_label(m),
          backend = backend, threads = threads, k_requested = k_requested, k = k, selected = r$selected,
          seconds = signif(r$seconds, 6), encode_seconds = signif(r$timings[["encode"]], 6),
          prepare_seconds = signif(r$timings[["prepare"]], 6), relevance_seconds = signif(r$timings[["relevance"]], 6),
          steps_seconds = signif(r$timings[["steps"]], 6), per_step_seconds = signif(r$per_step, 6),
          ratio_to_jmi = signif(ratio, 4), target_met = if (is.na(ratio) || m %in% untargeted_methods) NA else ratio <= 2,
          agrees_with_cpu = agrees, reps = opts$reps, seed = opts$seed, features = features_string(r$features),
          source = d$source, stringsAsFactors = FALSE
        )
      }
      if (!length(rows)) {
        cat("  ", backend, ": nothing ran\n\n", sep = "")
        next
      }
      table <- do.call(rbind, rows)
      all_rows[[length(all_rows) + 1L]] <- table

      show <- data.frame(method = table$method, selected = table$selected,
                         "per step ms" = fmt_ms(table$per_step_seconds),
                         "x JMI" = ifelse(is.na(table$ratio_to_jmi), "-", sprintf("%.2f", table$ratio_to_jmi)),
                         target = ifelse(is.na(table$target_met), "-", ifelse(table$target_met, "met", "MISSED")),
                         check.names = FALSE, stringsAsFactors = FALSE)
      if (is_gpu) show$"agrees w/ CPU" <- ifelse(is.na(table$agrees_with_cpu), "-", ifelse(table$agrees_with_cpu, "yes", "NO"))
      cat(sprintf("  -- %s, %s: per-step time against JMI's (%s ms), target <= 2x\n", name, backend, fmt_ms(jmi_step)))
      print(show, row.names = FALSE, right = FALSE)
      missed <- table$method[!is.na(table$target_met) & !table$target_met]
      cat(sprintf("  target %s%s\n\n", if (length(missed)) "missed by: " else "met by every method that ran",
                  paste(missed, collapse = ", ")))
      if (!is.null(out)) {
        dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
        exists <- file.exists(out)
        utils::write.table(table, out, sep = ",", row.names = FALSE, qmethod = "double",
                           append = exists, col.names = !exists)
        write_summary(out, md)
      }
    }
    rm(x, d)
    invisible(gc())
  }

  if (length(all_rows)) {
    everything <- do.call(rbind, all_rows)
    for (b in unique(everything$backend)) {
      e <- everything[everything$backend == b & !is.na(everything$target_met), , drop = FALSE]
      cat(sprintf("%s: target (per step <= 2x JMI's) met on %d of %d method x shape runs%s\n", b, sum(e$target_met), nrow(e),
                  if (any(!e$target_met)) paste0("; missed: ", paste(sprintf("%s/%s %.2fx", e$method[!e$target_met], e$shape[!e$target_met],
                                                                            e$ratio_to_jmi[!e$target_met]), collapse = ", ")) else ""))
    }
    g <- everything[everything$backend == "gpu" & !is.na(everything$agrees_with_cpu), , drop = FALSE]
    if (nrow(g)) cat(sprintf("gpu selections agree with the CPU's on %d of %d runs\n", sum(g$agrees_with_cpu), nrow(g)))
  }
  if (!is.null(out) && length(all_rows)) cat("results appended to ", out, "; summary in ", md, "\n", sep = "")
  invisible(all_rows)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

main()
