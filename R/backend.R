# Where work runs: the device probe, the backend choice, the thread policy.

.fsgpu_state <- new.env(parent = emptyenv())

#' What fsgpu can run on
#'
#' Reports how the package was built (with or without CUDA, and why not), the CUDA runtime
#' and driver versions, every visible GPU and the CPU threads fsgpu uses by default. The GPU
#' probe runs on the first call only (no CUDA call happens when the package loads).
#'
#' @param refresh Probe the devices again instead of using the cached answer.
#' @return A list of class `fsgpu_backend_info` with elements `cuda` (built with CUDA),
#'   `no_cuda_reason`, `cuda_archs` (compiled architectures), `nvcc_version`,
#'   `runtime_version` and `driver_version` (e.g. `"13.0"`, `NA` when absent),
#'   `devices` (a data frame: `id`, `name`, `memory_gb`, `memory_free_gb`,
#'   `compute_capability`, `multiprocessors`), `gpu_available`, `problem` (why no GPU is
#'   usable, `""` otherwise) and `threads`.
#' @examples
#' backend_info()
#' @export
backend_info <- function(refresh = FALSE) {
  if (fsgpu_forked_process() && !is.null(.fsgpu_state$info)) return(forked_backend_info(.fsgpu_state$info))
  if (refresh || is.null(.fsgpu_state$info)) {
    raw <- fsgpu_backend_info_raw()
    d <- raw$devices
    devices <- data.frame(
      id = d$id, name = d$name,
      memory_gb = round(d$memory_total / 2^30, 1),
      memory_free_gb = round(d$memory_free / 2^30, 1),
      compute_capability = d$compute_capability,
      multiprocessors = d$multiprocessors,
      stringsAsFactors = FALSE
    )
    cuda_version <- function(v) if (v > 0) sprintf("%d.%d", v %/% 1000, (v %% 1000) %/% 10) else NA_character_
    .fsgpu_state$info <- structure(list(
      cuda = raw$cuda,
      no_cuda_reason = raw$no_cuda_reason,
      cuda_archs = if (raw$cuda) strsplit(raw$cuda_archs, " ")[[1]] else character(),
      nvcc_version = raw$nvcc_version,
      runtime_version = cuda_version(raw$runtime_version),
      driver_version = cuda_version(raw$driver_version),
      devices = devices,
      gpu_available = nrow(devices) > 0,
      problem = raw$problem,
      threads = fsgpu_threads()
    ), class = "fsgpu_backend_info")
  }
  .fsgpu_state$info
}

# What a forked process (MulticoreParam, mclapply) can use when its parent probed the GPU: CUDA
# refuses a child forked from a process that opened it, and OpenMP runs one thread there.
forked_backend_info <- function(info) {
  if (info$gpu_available) {
    info$devices <- info$devices[0, , drop = FALSE]
    info$gpu_available <- FALSE
    info$problem <- paste("this R process is a fork (MulticoreParam, mclapply) of one that opened CUDA,",
                          "which CUDA does not allow; SnowParam workers can use the GPUs")
  }
  info$threads <- fsgpu_threads()
  info
}

#' @exportS3Method print fsgpu_backend_info
print.fsgpu_backend_info <- function(x, ...) {
  if (x$cuda) {
    cat(sprintf("fsgpu built with CUDA %s for sm_%s\n", x$nvcc_version, paste(x$cuda_archs, collapse = " sm_")))
    cat(sprintf("CUDA runtime %s, driver %s\n", x$runtime_version,
                if (is.na(x$driver_version)) "none" else x$driver_version))
  } else {
    cat(sprintf("fsgpu built without CUDA (%s)\n", x$no_cuda_reason))
  }
  if (x$gpu_available) {
    d <- x$devices
    cat(sprintf("GPU %d: %s, %.1f GiB, compute capability %s, %d multiprocessors\n",
                d$id, d$name, d$memory_gb, d$compute_capability, d$multiprocessors), sep = "")
  } else {
    cat("No usable GPU: ", x$problem, "\n", sep = "")
  }
  cat(sprintf("CPU threads: %d\n", x$threads))
  invisible(x)
}

# The host's logical cores, counted once a session: parallel::detectCores() starts a shell,
# a fork of this process that costs tens of milliseconds when R holds gigabytes of data.
session_cores <- local({
  cores <- NULL
  function() {
    if (is.null(cores)) {
      cores <<- parallel::detectCores(logical = TRUE)
      if (is.na(cores)) cores <<- 1L
    }
    cores
  }
})

#' Number of CPU threads fsgpu uses
#'
#' One function decides the thread count for every job. In order: the `threads` argument,
#' `options(fsgpu.threads)`, the environment variable `FSGPU_THREADS`, `OMP_NUM_THREADS`; otherwise
#' all cores. The result is capped by `OMP_THREAD_LIMIT`, under `R CMD check` by
#' `_R_CHECK_LIMIT_CORES_` (2 threads), and at 1 in a forked process (`MulticoreParam`,
#' `mclapply()`), where OpenMP cannot start threads: use `SnowParam` for workers with threads.
#'
#' @param threads A positive integer, or `NULL` for the default.
#' @param verbose Say where the number came from.
#' @return The number of threads, an integer.
#' @examples
#' fsgpu_threads()
#' fsgpu_threads(verbose = TRUE)
#' @export
fsgpu_threads <- function(threads = NULL, verbose = FALSE) {
  env_int <- function(name) {
    v <- suppressWarnings(as.integer(Sys.getenv(name, "")))
    if (length(v) == 1 && !is.na(v) && v > 0) v else NULL
  }
  candidates <- list(
    "the threads argument" = threads,
    "options(fsgpu.threads)" = getOption("fsgpu.threads"),
    "FSGPU_THREADS" = env_int("FSGPU_THREADS"),
    "OMP_NUM_THREADS" = env_int("OMP_NUM_THREADS")
  )
  given <- Filter(Negate(is.null), candidates)
  if (length(given)) {
    n <- given[[1]]
    if (!is.numeric(n) || length(n) != 1 || is.na(n) || n < 1 || n != round(n))
      stop("threads must be a positive whole number", call. = FALSE)
    source <- names(given)[1]
  } else {
    n <- session_cores()
    source <- "all cores"
  }
  n <- as.integer(n)
  limit <- env_int("OMP_THREAD_LIMIT")
  if (!is.null(limit) && n > limit) {
    n <- limit
    source <- paste(source, "capped by OMP_THREAD_LIMIT")
  }
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_")) && n > 2L) {
    n <- 2L
    source <- paste(source, "capped at 2 under R CMD check")
  }
  if (fsgpu_forked_process() && n > 1L) {
    n <- 1L
    source <- paste(source, "capped at 1 in a forked process, where OpenMP cannot start threads")
  }
  if (verbose) message(sprintf("fsgpu uses %d thread%s (%s)", n, if (n == 1) "" else "s", source))
  n
}

# The backend the user asked for: the argument, else options(fsgpu.backend), else FSGPU_BACKEND.
requested_backend <- function(backend) {
  if (is.null(backend)) backend <- getOption("fsgpu.backend", Sys.getenv("FSGPU_BACKEND", "auto"))
  if (!is.character(backend) || length(backend) != 1 || !backend %in% c("auto", "cpu", "gpu"))
    stop('backend must be "auto", "cpu" or "gpu"', call. = FALSE)
  backend
}

# The backend a job runs on, "cpu" or "gpu", and why_cpu: why "auto" took the CPU ("" when it
# took the GPU or the user chose the CPU). `work` is the job's size in cell-steps; "auto" takes
# the GPU only when one is present and the job is large enough to repay its start-up.
# `forked_workers`: the job runs on BPPARAM workers forked from this session, which cannot use
# the GPU it opened (bp_forks()).
choose_backend <- function(backend, work, forked_workers = FALSE) {
  backend <- requested_backend(backend)
  if (backend == "cpu") return(list(backend = "cpu", why_cpu = ""))
  if (forked_workers) {
    if (backend == "gpu")
      stop("BPPARAM's workers are forks of this session (MulticoreParam, batchtools' multicore), and CUDA ",
           "refuses a fork of a process that opened it: use SnowParam for GPU workers, or backend = \"cpu\"",
           call. = FALSE)
    return(list(backend = "cpu", why_cpu = "BPPARAM's workers are forked processes, which cannot use the GPU"))
  }
  info <- backend_info()
  if (backend == "gpu") {
    if (!info$gpu_available) stop("backend = \"gpu\" but no GPU can be used: ", info$problem, call. = FALSE)
    return(list(backend = "gpu", why_cpu = ""))
  }
  min_work <- getOption("fsgpu.gpu_min_work", 2e8)
  why_cpu <- if (!info$gpu_available) info$problem else if (work < min_work)
    sprintf("a small job (%.2g work units; the GPU from options(fsgpu.gpu_min_work) = %.2g)", work, min_work) else ""
  list(backend = if (nzchar(why_cpu)) "cpu" else "gpu", why_cpu = why_cpu)
}

resolve_backend <- function(backend, work) choose_backend(backend, work)$backend

# What the glue of a job that can fall back gets: "auto-gpu" (the GPU unless the engine finds it
# cannot take the data, which only the encoded data reveal) when the GPU was chosen
# automatically, otherwise the resolved backend. `backend` is the user's argument.
engine_mode <- function(backend, resolved) {
  if (resolved == "gpu" && requested_backend(backend) != "gpu") "auto-gpu" else resolved
}

# CUDA device ids to use: all visible devices by default.
resolve_devices <- function(devices) {
  if (is.null(devices)) devices <- getOption("fsgpu.devices")
  available <- backend_info()$devices$id
  if (is.null(devices)) return(as.integer(available))
  if (!is.numeric(devices) || anyNA(devices) || any(devices != round(devices)) || anyDuplicated(devices))
    stop("devices must be distinct GPU ids (see backend_info())", call. = FALSE)
  missing <- setdiff(devices, available)
  if (length(missing))
    stop(sprintf("devices %s not found; visible GPUs: %s", paste(missing, collapse = ", "),
                 if (length(available)) paste(available, collapse = ", ") else "none"), call. = FALSE)
  as.integer(devices)
}
