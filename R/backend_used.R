# Where a job ran and why: one record in every result, printed the same way by every job.

# The record of where a job ran: `name` ("cpu" or "gpu"; "gpu+cpu" when BiocParallel tiles ran
# on both, some having fallen back to the CPU), `threads` (CPU threads, of each worker with
# BPPARAM; NA when only GPUs ran), `devices` and `device_names` (the GPUs; empty when only the
# CPU ran), `why_cpu` (why the GPU was wanted, by backend = "auto", but the CPU ran; "" when it
# did not), `workers` (BiocParallel workers; 1 for one process), `elapsed` seconds and `notes`
# on the input (the assay used, integer columns binned; see with_notes()), printed after it.
backend_used <- function(name, threads, devices, elapsed, why_cpu = "", workers = 1L, notes = NULL) {
  ran <- strsplit(name, "+", fixed = TRUE)[[1]]
  gpu <- "gpu" %in% ran
  cpu <- "cpu" %in% ran
  known <- if (gpu) backend_info()$devices else NULL
  run <- structure(list(
    name = name,
    threads = if (cpu) as.integer(threads) else NA_integer_,
    devices = if (gpu) as.integer(devices) else integer(),
    device_names = if (gpu) known$name[match(devices, known$id)] else character(),
    why_cpu = if (!cpu || is.null(why_cpu)) "" else why_cpu,
    workers = as.integer(workers),
    elapsed = elapsed
  ), class = "fsgpu_backend_used")
  if (length(notes)) run$notes <- notes
  run
}

#' @exportS3Method format fsgpu_backend_used
format.fsgpu_backend_used <- function(x, ...) {
  ran <- strsplit(x$name, "+", fixed = TRUE)[[1]]
  where <- c(
    if ("gpu" %in% ran) sprintf("GPU %s", paste(sprintf("%d (%s)", x$devices, x$device_names), collapse = ", ")),
    if ("cpu" %in% ran) sprintf("CPU, %d thread%s", x$threads, if (x$threads == 1) "" else "s"))
  line <- sprintf("Ran on %s%s in %s", paste(where, collapse = " and "),
                  if (x$workers > 1) sprintf(" per tile, %d BiocParallel workers", x$workers) else "",
                  format_seconds(x$elapsed))
  if (nzchar(x$why_cpu)) line <- paste0(line, "; not on a GPU: ", x$why_cpu)
  if (length(x$notes)) line <- paste0(line, "\nInput: ", paste(x$notes, collapse = "; "))
  line
}

#' @exportS3Method print fsgpu_backend_used
print.fsgpu_backend_used <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}

format_seconds <- function(s) {
  if (s < 0.001) return("under 1 ms")
  if (s < 1) return(sprintf("%.3g s", s))
  if (s < 120) return(sprintf("%.1f s", s))
  s <- round(s)  # whole seconds, so that 179.6 s is 3 min 0 s, not 2 min 60 s
  sprintf("%.0f min %.0f s", s %/% 60, s %% 60)
}

# A result that is a data frame (pairs, scores) as a plain data frame of its values alone, as
# as.data.frame() gives the other results: the run's settings, timings and record stay on x.
data_alone <- function(x) {
  attributes(x) <- attributes(x)[c("names", "row.names")]
  class(x) <- "data.frame"
  x
}
