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
#' The worker runs each job in a child R process, started once with fsgpu loaded, and watches
#' it: it records a heartbeat every few seconds while a job runs, however long the engine goes
#' without reporting progress, and while idle; a job whose worker stops beating for
#' `heartbeat_timeout` seconds (a setting of [serve()]) is re-queued. A cancelled job stops
#' within half a second (the worker looks every 0.25 s): at its next progress update, or when
#' the worker kills the child process (a new one is started before the next job). A child that
#' dies on its own (a crash, the kernel's out-of-memory killer) puts its job back in the queue,
#' up to `max_attempts`, as a dead worker does. Only the child touches the GPUs.
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
  for (p in c("sodium", "jsonlite", "callr")) if (!requireNamespace(p, quietly = TRUE)) stop("the service needs the ", p, " package", call. = FALSE)
  s <- store_open(store, db)
  if (is.null(id)) id <- sprintf("%s-%d-%s", Sys.info()[["nodename"]], Sys.getpid(), random_hex(3L))
  child <- NULL
  # an interrupt or an error of the worker itself puts its job back in the queue
  on.exit({
    if (!is.null(child)) try(child$kill(), silent = TRUE)
    try(job_release(s, id), silent = TRUE)
    try(worker_remove(s, id), silent = TRUE)
    store_close(s)
  })
  # only the child touches the GPUs (one CUDA context per worker), so it names the device
  child <- worker_child()
  device <- child$run(service_worker_device, list(devices = devices), package = TRUE)
  worker_register(s, id, device)
  done <- 0
  idle_since <- unclass(Sys.time())
  while (done < max_jobs) {
    if (!is.null(parent) && !isTRUE(tools::pskill(parent, 0L))) break
    # a new child (after a cancellation or a crash) is ready before the next job is claimed
    if (is.null(child) || !child$is_alive()) child <- worker_child()
    job <- job_claim(s, id, device)
    if (is.null(job)) {
      worker_beat(s, id)
      if (unclass(Sys.time()) - idle_since >= idle_exit) break
      Sys.sleep(poll)
      next
    }
    worker_beat(s, id, job$id)
    if (!worker_supervise_job(s, job, id, devices, child)) child <- NULL
    worker_beat(s, id)
    done <- done + 1
    idle_since <- unclass(Sys.time())
  }
  invisible()
}

# The R process that runs the jobs: started once with fsgpu loaded, and again only after a job
# was cancelled (the worker kills it then) or it died. Supervised, so that it dies with the
# worker even when the worker is killed with SIGKILL.
worker_child <- function() {
  child <- callr::r_session$new(callr::r_session_options(libpath = .libPaths(), supervise = TRUE), wait = TRUE)
  child$run(function() invisible(loadNamespace("fsgpu")))
  child
}

# Runs a claimed job in the child process and watches it: every `beat` seconds the worker records
# its heartbeat (so a job that reports no progress for a long time is not taken for a dead one)
# and looks at the job's cancel flag; a cancelled job's child is killed at once, whatever the
# engine is doing, its partial results removed, and the job marked cancelled. A child that dies
# on its own (a crash, the kernel's OOM killer) puts the job back in the queue, as a dead worker
# would, up to max_attempts. Returns TRUE when the child can run the next job.
worker_supervise_job <- function(store, job, worker, devices, child, beat = 0.25) {
  child$call(worker_run_job, list(dir = store$dir, db = store$db, job = job, worker = worker, devices = devices,
                                  parent = Sys.getpid()), package = TRUE)
  last_beat <- unclass(Sys.time())
  repeat {
    if (child$poll_process(as.integer(beat * 1000)) != "timeout") {
      out <- child$read()
      if (is.null(out) || out$code == 301L) next  # a condition passed on, or a part of a message
      if (out$code == 200L) return(TRUE)
      # the child died, or the call failed outside the job's own error handling
      try(child$kill(), silent = TRUE)
      why <- if (!is.null(out$error)) conditionMessage(out$error) else out$message
      job_requeue_stale(store, timeout = unclass(Sys.time()), max_attempts = store_setting(store, "max_attempts"), workers = worker,
                        reason = sprintf("the R process running it stopped (%s)", why))
      return(FALSE)
    }
    now <- unclass(Sys.time())
    heartbeat <- now - last_beat >= 5
    if (heartbeat) last_beat <- now
    if (job_check(store, job$id, worker, heartbeat = heartbeat, now = now)) break
  }
  # cancelled, or taken from this worker: stop the computation now
  child$kill()
  row <- store_query(store, "SELECT status, worker FROM jobs WHERE id = ?", job$id)
  if (nrow(row) && row$status == "running" && identical(row$worker, worker)) {
    worker_remove_results(job_dir(store, job$id))
    job_finish(store, job$id, worker, "cancelled", error = "cancelled", seconds = unclass(Sys.time()) - job$started,
               bytes = worker_job_bytes(job_dir(store, job$id)), retention = store_setting(store, "anonymous_hours") * 3600)
  }
  FALSE
}

worker_remove_results <- function(dir) {
  unlink(file.path(dir, c("result.csv", "result.json", "result.rds", "plot.png", "script.R")))
  unlink(list.files(dir, pattern = "^\\.tmp-", all.files = TRUE, full.names = TRUE))
}

worker_job_bytes <- function(dir) sum(file.size(list.files(dir, full.names = TRUE, recursive = TRUE, all.files = TRUE)), na.rm = TRUE)

# Runs one claimed job (in the worker's child process, with its own connection to the store) and
# records its outcome. The engines' progress handler writes the progress and the heartbeat, and
# stops the job (an error of class fsgpu_cancelled) when it was cancelled (the worker watching
# it kills the child at once in any case). When the worker (process `parent`) is gone, the
# child ends itself without a word to the store: the job of a dead worker is re-queued.
worker_run_job <- function(dir, db, job, worker, devices, parent = NULL) {
  orphaned <- function() if (!is.null(parent) && !isTRUE(tools::pskill(parent, 0L))) tools::pskill(Sys.getpid(), tools::SIGKILL)
  store <- store_open(dir, db)
  on.exit(store_close(store))
  dir <- job_dir(store, job$id)
  params <- jsonlite::fromJSON(job$params, simplifyVector = TRUE)
  files <- as.data.frame(jsonlite::fromJSON(job$files), stringsAsFactors = FALSE)
  last <- 0
  handler <- function(name, done) {
    now <- unclass(Sys.time())
    if (done < 1 && now - last < 1) return(invisible())
    last <<- now
    orphaned()
    if (job_report(store, job$id, worker, done, name, now = now))
      stop(structure(class = c("fsgpu_cancelled", "error", "condition"),
                     list(message = "the job was cancelled", call = NULL)))
  }
  old <- options(fsgpu.progress_handler = handler, fsgpu.progress_interval = 0.5)
  on.exit(options(old), add = TRUE)
  # while it runs, the job shows the worker's device (set when it was claimed; backend = "auto"
  # may still take the CPU for a small job); when it is done, where it ran
  running_on <- job$device
  start <- unclass(Sys.time())
  outcome <- tryCatch({
    input <- service_read_input(dir, files, job$job, params)
    job_report(store, job$id, worker, 0, "read the input")
    data <- service_call_data(job$job, input, params)
    rm(input)
    called <- unclass(Sys.time())
    result <- service_call(job$job, data, params, backend = "auto", devices = devices)
    device <- service_device(result)
    if (is.na(device) && job$job == "knn") device <- service_knn_device(data$x, devices, unclass(Sys.time()) - called)
    rm(data)
    shape <- tryCatch(service_write_results(dir, job$id, job$job, files, params, result),
                      error = function(e) stop("cannot write the results: ", conditionMessage(e), call. = FALSE))
    list(status = "done", device = device, result = shape)
  }, fsgpu_cancelled = function(e) list(status = "cancelled", error = "cancelled"),
  error = function(e) list(status = "failed", error = conditionMessage(e)))
  orphaned()
  # a job taken from this worker (its worker taken for dead, and the job re-queued) is no
  # longer this process's to touch
  row <- store_query(store, "SELECT status, worker FROM jobs WHERE id = ?", job$id)
  if (!nrow(row) || row$status != "running" || !identical(row$worker, worker)) return(invisible("taken"))
  # never leave a part of the results behind
  if (outcome$status != "done") worker_remove_results(dir)
  job_finish(store, job$id, worker, outcome$status, error = if (is.null(outcome$error)) NA_character_ else outcome$error,
             device = if (is.null(outcome$device) || is.na(outcome$device)) running_on else outcome$device,
             seconds = unclass(Sys.time()) - start,
             result = if (is.null(outcome$result)) NA_character_ else as.character(jsonlite::toJSON(outcome$result, auto_unbox = TRUE)),
             bytes = worker_job_bytes(dir), retention = store_setting(store, "anonymous_hours") * 3600)
  invisible(outcome$status)
}

# The devices a worker runs on, in words: "GPU 0 (NVIDIA H100 80GB HBM3)" or "CPU, 16 threads".
service_worker_device <- function(devices = NULL) {
  info <- backend_info()
  gpus <- info$devices
  if (!is.null(devices)) gpus <- gpus[gpus$id %in% devices, , drop = FALSE]
  if (isTRUE(info$gpu_available) && nrow(gpus))
    return(sprintf("GPU %s", paste(sprintf("%d (%s)", gpus$id, gpus$name), collapse = ", ")))
  threads <- fsgpu_threads()
  sprintf("CPU, %d thread%s", threads, if (threads == 1) "" else "s")
}

# Where a job ran, from its result's record: "GPU 0 (NVIDIA H100)" or "CPU, 2 threads".
service_device <- function(result) {
  run <- if (is.list(result) && inherits(result$run, "fsgpu_backend_used")) result$run else attr(result, "run")
  if (!inherits(run, "fsgpu_backend_used")) return(NA_character_)
  ran <- strsplit(run$name, "+", fixed = TRUE)[[1]]
  paste(c(if ("gpu" %in% ran) sprintf("GPU %s", paste(sprintf("%d (%s)", run$devices, run$device_names), collapse = ", ")),
          if ("cpu" %in% ran) sprintf("CPU, %d thread%s", run$threads, if (isTRUE(run$threads == 1)) "" else "s")),
        collapse = " and ")
}

# knn_graph(output = "edges") returns a plain data frame, without the record of where it ran:
# the same choice as knn_graph() made for these points (one process, backend = "auto").
service_knn_device <- function(points, devices, elapsed) {
  if (!is.null(getOption("fsgpu.service_bpparam"))) return(NA_character_)
  n <- NROW(points)
  chosen <- choose_backend("auto", work = knn_work(n, n, NCOL(points)))
  service_device(structure(list(), run = backend_used(chosen$backend, fsgpu_threads(),
                                                      if (chosen$backend == "gpu") resolve_devices(devices) else integer(),
                                                      elapsed, chosen$why_cpu)))
}
