# The service's workers: separate R processes that load fsgpu once, claim queued jobs from the
# store, run them with backend = "auto" on their GPU (or the CPU), and write the results. They
# never serve HTTP; the web process never computes.

#' Run a worker of the fsgpu service
#'
#' A worker claims the jobs that [serve()] queues, one at a time, oldest first, and runs them
#' by calling [select_features()], [mi_pairs()], [discretize()], [knn_graph()] or
#' [find_interactions()] with `backend = "auto"`, as a user would. [serve()] starts its workers
#' itself (`workers =`); call `serve_worker()` to add workers on other hosts: with the SQLite
#' store they must share the store directory (see [serve()] for what the file system must
#' provide); with PostgreSQL (`db =`) the queue lives in the database and the hosts share only
#' the store directory's files.
#'
#' The worker records a heartbeat with each progress update of the engines (at most every
#' second) and while idle; a job whose worker stops beating for `heartbeat_timeout` seconds
#' (a setting of [serve()]) is re-queued. A cancelled job stops at its next progress update.
#'
#' @param store The store directory, as given to [serve()].
#' @param db `NULL` (SQLite in the store) or the PostgreSQL URL given to [serve()].
#' @param devices GPU ids this worker uses (`NULL`: as `backend = "auto"` chooses, all of them).
#' @param id The worker's name in the store (default: host, process id and a random part).
#' @param poll Seconds between looks at an empty queue.
#' @param max_jobs Stop after this many jobs (default: never; tests use it).
#' @param idle_exit Stop when the queue is empty for this many seconds (default: never).
#' @param parent The process id of the [serve()] that started this worker: the worker stops
#'   (between jobs) when that process is gone, even if it was killed without a chance to stop
#'   its workers. `NULL` for workers started by hand.
#' @return `NULL`, invisibly, when it stops.
#' @seealso [serve()].
#' @examples
#' store <- file.path(tempdir(), "worker-example")
#' # runs what is queued in the store, then returns once the queue has been empty for a second
#' if (requireNamespace("RSQLite", quietly = TRUE) && requireNamespace("sodium", quietly = TRUE) &&
#'     requireNamespace("jsonlite", quietly = TRUE))
#'   serve_worker(store, idle_exit = 1)
#' @export
serve_worker <- function(store = "fsgpu-store", db = NULL, devices = NULL, id = NULL, poll = 1, max_jobs = Inf,
                         idle_exit = Inf, parent = NULL) {
  for (p in c("sodium", "jsonlite")) if (!requireNamespace(p, quietly = TRUE)) stop("the service needs the ", p, " package", call. = FALSE)
  s <- store_open(store, db)
  if (is.null(id)) id <- sprintf("%s-%d-%s", Sys.info()[["nodename"]], Sys.getpid(), random_hex(3L))
  device <- if (is.null(devices)) "auto" else paste0("gpu ", paste(devices, collapse = ","))
  worker_register(s, id, device)
  # an interrupt or an error of the worker itself puts its job back in the queue
  on.exit({
    try(job_release(s, id), silent = TRUE)
    try(worker_remove(s, id), silent = TRUE)
    store_close(s)
  })
  done <- 0
  idle_since <- unclass(Sys.time())
  while (done < max_jobs) {
    if (!is.null(parent) && !isTRUE(tools::pskill(parent, 0L))) break
    job <- job_claim(s, id)
    if (is.null(job)) {
      worker_beat(s, id)
      if (unclass(Sys.time()) - idle_since >= idle_exit) break
      Sys.sleep(poll)
      next
    }
    worker_beat(s, id, job$id)
    worker_run_job(s, job, id, devices)
    worker_beat(s, id)
    done <- done + 1
    idle_since <- unclass(Sys.time())
  }
  invisible()
}

# Runs one claimed job and records its outcome. The engines' progress handler writes the
# progress and the heartbeat, and stops the job (an error of class fsgpu_cancelled) when it was
# cancelled.
worker_run_job <- function(store, job, worker, devices) {
  dir <- job_dir(store, job$id)
  params <- jsonlite::fromJSON(job$params, simplifyVector = TRUE)
  files <- as.data.frame(jsonlite::fromJSON(job$files), stringsAsFactors = FALSE)
  last <- 0
  handler <- function(name, done) {
    now <- unclass(Sys.time())
    if (done < 1 && now - last < 1) return(invisible())
    last <<- now
    if (job_report(store, job$id, worker, done, name, now = now))
      stop(structure(class = c("fsgpu_cancelled", "error", "condition"),
                     list(message = "the job was cancelled", call = NULL)))
  }
  old <- options(fsgpu.progress_handler = handler, fsgpu.progress_interval = 0.5)
  on.exit(options(old))
  start <- unclass(Sys.time())
  outcome <- tryCatch({
    input <- service_read_input(dir, files, job$job, params)
    job_report(store, job$id, worker, 0, "read the input")
    result <- service_call(job$job, input, params, backend = "auto", devices = devices)
    rm(input)
    shape <- tryCatch(service_write_results(dir, job$id, job$job, files, params, result),
                      error = function(e) stop("cannot write the results: ", conditionMessage(e), call. = FALSE))
    list(status = "done", device = service_device(result), result = shape)
  }, fsgpu_cancelled = function(e) list(status = "cancelled", error = "cancelled"),
  error = function(e) list(status = "failed", error = conditionMessage(e)))
  if (outcome$status != "done") {
    # never leave a part of the results behind
    unlink(file.path(dir, c("result.csv", "result.json", "result.rds", "plot.png", "script.R")))
  }
  bytes <- sum(file.size(list.files(dir, full.names = TRUE, recursive = TRUE, all.files = TRUE)), na.rm = TRUE)
  job_finish(store, job$id, worker, outcome$status, error = if (is.null(outcome$error)) NA_character_ else outcome$error,
             device = if (is.null(outcome$device)) NA_character_ else outcome$device,
             seconds = unclass(Sys.time()) - start,
             result = if (is.null(outcome$result)) NA_character_ else as.character(jsonlite::toJSON(outcome$result, auto_unbox = TRUE)),
             bytes = bytes, retention = store_setting(store, "anonymous_hours") * 3600)
}

# Where the job ran, from its result's record: "GPU 0 (NVIDIA H100)" or "CPU, 2 threads".
service_device <- function(result) {
  run <- if (is.list(result) && inherits(result$run, "fsgpu_backend_used")) result$run else attr(result, "run")
  if (!inherits(run, "fsgpu_backend_used")) return(NA_character_)
  ran <- strsplit(run$name, "+", fixed = TRUE)[[1]]
  paste(c(if ("gpu" %in% ran) sprintf("GPU %s", paste(sprintf("%d (%s)", run$devices, run$device_names), collapse = ", ")),
          if ("cpu" %in% ran) sprintf("CPU, %d thread%s", run$threads, if (isTRUE(run$threads == 1)) "" else "s")),
        collapse = " and ")
}
