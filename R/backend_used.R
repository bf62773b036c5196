# Where a job ran and why: one record in every result, printed the same way by every job.

# The record of where a job ran: `name` ("cpu" or "gpu"), `threads` (CPU threads; NA on the GPU),
# `devices` and `device_names` (the GPUs; empty on the CPU), `why_cpu` (why the GPU was wanted,
# by backend = "auto", but the CPU ran; "" otherwise) and `elapsed` seconds.
backend_used <- function(name, threads, devices, elapsed, why_cpu = "") {
  gpu <- name == "gpu"
  known <- if (gpu) backend_info()$devices else NULL
  structure(list(
    name = name,
    threads = if (gpu) NA_integer_ else as.integer(threads),
    devices = if (gpu) as.integer(devices) else integer(),
    device_names = if (gpu) known$name[match(devices, known$id)] else character(),
    why_cpu = if (gpu || is.null(why_cpu)) "" else why_cpu,
    elapsed = elapsed
  ), class = "fsgpu_backend_used")
}

#' @exportS3Method format fsgpu_backend_used
format.fsgpu_backend_used <- function(x, ...) {
  where <- if (x$name == "gpu") {
    sprintf("GPU %s", paste(sprintf("%d (%s)", x$devices, x$device_names), collapse = ", "))
  } else {
    sprintf("CPU, %d thread%s", x$threads, if (x$threads == 1) "" else "s")
  }
  line <- sprintf("Ran on %s in %s", where, format_seconds(x$elapsed))
  if (nzchar(x$why_cpu)) line <- paste0(line, "; not on a GPU: ", x$why_cpu)
  line
}

#' @exportS3Method print fsgpu_backend_used
print.fsgpu_backend_used <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}

format_seconds <- function(s) if (s < 0.001) "under 1 ms" else if (s < 1) sprintf("%.3g s", s) else if (s < 120) sprintf("%.1f s", s) else
  sprintf("%.0f min %.0f s", s %/% 60, s %% 60)
