# Load test of fsgpu::serve() on the loopback address (bounded; nothing leaves the machine).
#
#   R_LIBS=build/lib-cpu Rscript bench/serve_load.R [--jobs 200] [--clients 20] [--workers 2]
#       [--upload-mb 1000] [--out bench/results/serve-load-DATE.md]
#
# 1. A server on a free 127.0.0.1 port with a temporary store and `--workers` workers.
# 2. `--clients` concurrent clients (one curl multi pool, one connection each) submit `--jobs`
#    small JMI selections between them (k = 1..10 in turn), each client polling its job every
#    0.2 s until it ends, then submitting the next; a probe reads GET /api/me every 0.25 s.
#    Every request's time is curl's total time. All jobs must end `done` with k rows, and the
#    store must hold each exactly once, run once (attempts = 1): none lost or run twice.
# 3. One large generated CSV upload (`--upload-mb`): seconds and MB/s until the server answers,
#    and the web process's peak resident memory (VmHWM of /proc/PID/status) before and after,
#    to show that the upload is streamed to disk, not held in memory. The job is then cancelled.
# Writes a Markdown report (and prints it).

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  at <- match(paste0("--", name), args)
  if (is.na(at)) default else args[at + 1L]
}
n_jobs <- as.integer(opt("jobs", 200))
n_clients <- as.integer(opt("clients", 20))
n_workers <- as.integer(opt("workers", 2))
upload_mb <- as.numeric(opt("upload-mb", 1000))
out <- opt("out", file.path("bench", "results", sprintf("serve-load-%s.md", format(Sys.Date()))))
for (pkg in c("fsgpu", "callr", "curl", "jsonlite", "httpuv", "DBI", "RSQLite"))
  if (!requireNamespace(pkg, quietly = TRUE)) stop("bench/serve_load.R needs the R package ", pkg, call. = FALSE)

run_load <- function() {
  dir <- tempfile("fsgpu-load-")
  store <- file.path(dir, "store")
  dir.create(store, recursive = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)

  # ---- the server -----------------------------------------------------------------------------
  # Submission limits lifted for the test (one address sends everything); all else at defaults.
  port <- httpuv::randomPort(host = "127.0.0.1")
  url <- sprintf("http://127.0.0.1:%d", port)
  server <- callr::r_bg(function(store, port, workers) {
    fsgpu::serve(store = store, host = "127.0.0.1", port = port, workers = workers, submit_rate = 100000L)
  }, args = list(store = store, port = port, workers = n_workers), stdout = file.path(dir, "server.log"),
  stderr = "2>&1", supervise = TRUE)
  stop_server <- function() {
    if (server$is_alive()) {
      server$interrupt()
      server$wait(15000)
    }
    if (server$is_alive()) server$kill_tree()
  }
  on.exit(stop_server(), add = TRUE, after = FALSE)
  deadline <- Sys.time() + 120
  repeat {
    up <- tryCatch(curl::curl_fetch_memory(paste0(url, "/api/me"))$status_code == 200L, error = function(e) FALSE)
    if (up) break
    if (!server$is_alive() || Sys.time() > deadline)
      stop("the server did not start:\n", paste(readLines(file.path(dir, "server.log")), collapse = "\n"), call. = FALSE)
    Sys.sleep(0.25)
  }
  web_pid <- server$get_pid()
  vm <- function(field) {
    line <- grep(paste0("^", field, ":"), readLines(sprintf("/proc/%d/status", web_pid)), value = TRUE)
    as.numeric(gsub("[^0-9]", "", line)) * 1024
  }

  # ---- the small data ------------------------------------------------------------------------
  set.seed(17)
  n <- 80
  y <- rep(c("case", "control"), length.out = n)
  x <- matrix(rnorm(n * 12), n, 12, dimnames = list(NULL, sprintf("g%02d", 1:12)))
  x[, 1:4] <- x[, 1:4] + outer(y == "case", 1:4 / 2)
  data_file <- file.path(dir, "small.csv")
  utils::write.csv(data.frame(x, status = y), data_file, row.names = FALSE)

  # ---- the clients ---------------------------------------------------------------------------
  log <- new.env()
  log$rows <- list()
  record <- function(kind, res, t0) {
    log$rows[[length(log$rows) + 1L]] <- data.frame(kind = kind, status = res$status_code,
                                                    seconds = unname(res$times["total"]), at = t0 - start)
  }
  clients <- lapply(seq_len(n_clients), function(i) new.env())
  job_k <- function(j) 1L + (j - 1L) %% 10L
  jobs <- data.frame(j = seq_len(n_jobs), client = (seq_len(n_jobs) - 1L) %% n_clients + 1L, id = NA_character_,
                     token = NA_character_, status = NA_character_, rows = NA_integer_, k = job_k(seq_len(n_jobs)),
                     stringsAsFactors = FALSE)
  pool <- curl::new_pool(total_con = n_clients + 1L, host_con = n_clients + 1L, multiplex = FALSE)
  due <- list()  # list(at, fun)
  later <- function(seconds, fun) due[[length(due) + 1L]] <<- list(at = Sys.time() + seconds, fun = fun)

  submit <- function(j) {
    h <- curl::new_handle(url = paste0(url, "/api/jobs"))
    curl::handle_setform(h, file = curl::form_file(data_file, "text/csv"), job = "select", method = "jmi",
                         k = as.character(jobs$k[j]))
    curl::handle_setheaders(h, "X-Fsgpu" = "1")
    t0 <- Sys.time()
    curl::multi_add(h, pool = pool, done = function(res) {
      record("POST /api/jobs", res, t0)
      if (res$status_code == 201L) {
        body <- jsonlite::fromJSON(rawToChar(res$content))
        jobs$id[j] <<- body$id
        jobs$token[j] <<- body$token
        later(0.2, function() poll(j))
      } else {
        jobs$status[j] <<- sprintf("submit-%d", res$status_code)
        next_job(jobs$client[j])
      }
    }, fail = function(msg) {
      jobs$status[j] <<- paste("submit failed:", msg)
      next_job(jobs$client[j])
    })
  }

  poll <- function(j) {
    h <- curl::new_handle(url = paste0(url, "/api/jobs/", jobs$id[j]))
    curl::handle_setheaders(h, Authorization = paste("Bearer", jobs$token[j]))
    t0 <- Sys.time()
    curl::multi_add(h, pool = pool, done = function(res) {
      record("GET /api/jobs/{id}", res, t0)
      body <- if (res$status_code == 200L) jsonlite::fromJSON(rawToChar(res$content)) else list(status = "http-error")
      if (body$status %in% c("queued", "running")) {
        later(0.2, function() poll(j))
      } else {
        jobs$status[j] <<- body$status
        if (identical(body$status, "done")) jobs$rows[j] <<- as.integer(body$result$rows)
        last_done <<- Sys.time()
        next_job(jobs$client[j])
      }
    }, fail = function(msg) later(0.2, function() poll(j)))
  }

  next_job <- function(client) {
    mine <- which(jobs$client == client & is.na(jobs$id) & is.na(jobs$status))
    if (length(mine)) submit(mine[1])
  }

  probe <- function() {
    t0 <- Sys.time()
    curl::multi_add(curl::new_handle(url = paste0(url, "/api/me")), pool = pool, done = function(res) {
      record("GET /api/me (probe)", res, t0)
      if (any(is.na(jobs$status))) later(0.25, probe)
    }, fail = function(msg) later(0.25, probe))
  }

  # the same requests on an idle server first: the baseline
  idle <- vapply(1:50, function(i) unname(curl::curl_fetch_memory(paste0(url, "/api/me"))$times["total"]), 0)

  start <- Sys.time()
  last_done <- start
  for (client in seq_len(n_clients)) next_job(client)
  probe()
  run_deadline <- start + 1800
  while (any(is.na(jobs$status)) && Sys.time() < run_deadline) {
    now <- Sys.time()
    ready <- vapply(due, function(d) d$at <= now, TRUE)
    todo <- due[ready]
    due <- due[!ready]
    for (d in todo) d$fun()
    curl::multi_run(timeout = 0.02, pool = pool)
  }
  curl::multi_run(timeout = 5, pool = pool)
  wall <- as.numeric(difftime(last_done, start, units = "secs"))
  req <- do.call(rbind, log$rows)
  busy <- req[req$at <= wall, ]

  # ---- the store: each job once, run once ------------------------------------------------------
  con <- DBI::dbConnect(RSQLite::SQLite(), file.path(store, "fsgpu.sqlite"), flags = RSQLite::SQLITE_RO)
  stored <- DBI::dbGetQuery(con, "SELECT id, status, attempts, worker FROM jobs")
  DBI::dbDisconnect(con)
  submitted <- jobs$id[!is.na(jobs$id)]
  in_store <- stored[stored$id %in% submitted, ]
  checks <- c(
    "every submission answered 201" = sum(!is.na(jobs$id)) == n_jobs,
    "every job is in the store once" = nrow(in_store) == n_jobs && !anyDuplicated(in_store$id) && nrow(stored) == n_jobs,
    "every job ended done (API)" = all(jobs$status == "done", na.rm = FALSE),
    "every job ended done (store)" = all(in_store$status == "done"),
    "every job ran once (attempts = 1)" = all(in_store$attempts == 1L),
    "every result has its k rows" = all(jobs$rows == jobs$k, na.rm = FALSE)
  )
  checks[is.na(checks)] <- FALSE

  q <- function(v, p) unname(stats::quantile(v, p, type = 7))
  latency <- do.call(rbind, lapply(split(busy, busy$kind), function(r) {
    data.frame(request = r$kind[1], n = nrow(r), errors = sum(r$status >= 400L & r$kind != "POST /api/jobs" |
                                                                   r$kind == "POST /api/jobs" & r$status != 201L),
               p50_ms = 1000 * q(r$seconds, 0.5), p95_ms = 1000 * q(r$seconds, 0.95), max_ms = 1000 * max(r$seconds))
  }))

  # ---- a large upload ----------------------------------------------------------------------------
  upload <- NULL
  if (upload_mb > 0) {
    big <- file.path(dir, "large.csv")
    header <- paste(c(sprintf("g%03d", 1:100), "status"), collapse = ",")
    set.seed(1)
    block_rows <- vapply(1:2000, function(i) paste(c(sprintf("%.4f", rnorm(100)), c("case", "control")[1 + i %% 2]),
                                                    collapse = ","), "")
    block <- charToRaw(paste0(paste(block_rows, collapse = "\n"), "\n"))
    con <- file(big, "wb")
    writeLines(header, con)
    reps <- ceiling(upload_mb * 1e6 / length(block))
    for (i in seq_len(reps)) writeBin(block, con)
    close(con)
    size <- file.size(big)
    hwm_before <- vm("VmHWM")
    rss_before <- vm("VmRSS")
    h <- curl::new_handle(url = paste0(url, "/api/jobs"))
    curl::handle_setform(h, file = curl::form_file(big, "text/csv"), job = "select")
    curl::handle_setheaders(h, "X-Fsgpu" = "1")
    # sent through the multi interface, so that the server's memory can be read while it streams
    res <- NULL
    rss_max <- rss_before
    t0 <- Sys.time()
    curl::multi_add(h, pool = pool, done = function(r) res <<- r, fail = function(msg) stop("the upload failed: ", msg))
    while (is.null(res)) {
      curl::multi_run(timeout = 0.25, pool = pool)
      rss_max <- max(rss_max, vm("VmRSS"))
    }
    seconds <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
    hwm_after <- vm("VmHWM")
    body <- jsonlite::fromJSON(rawToChar(res$content))
    if (res$status_code == 201L) {
      d <- curl::new_handle(customrequest = "DELETE")
      curl::handle_setheaders(d, Authorization = paste("Bearer", body$token), "X-Fsgpu" = "1")
      curl::curl_fetch_memory(paste0(url, "/api/jobs/", body$id), handle = d)
    }
    upload <- list(bytes = size, status = res$status_code, seconds = seconds, mb_s = size / 1e6 / seconds,
                   hwm_before = hwm_before, hwm_after = hwm_after, rss_before = rss_before, rss_max = rss_max,
                   error = if (res$status_code != 201L) body$error else NULL)
    unlink(big)
  }

  # ---- the report --------------------------------------------------------------------------------
  cpu <- sub("^model name\\s*:\\s*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
  mb <- function(b) sprintf("%.0f MB", b / 1e6)
  lines <- c(
    sprintf("# fsgpu service load test, %s", format(Sys.time(), "%Y-%m-%d %H:%M %Z")),
    "",
    sprintf("`bench/serve_load.R --jobs %d --clients %d --workers %d --upload-mb %g` on %s (%d cores visible; the machine is shared with other builds), %s, fsgpu %s, CPU-only build, loopback only.",
            n_jobs, n_clients, n_workers, upload_mb, cpu, parallel::detectCores(), R.version.string,
            as.character(utils::packageVersion("fsgpu"))),
    "",
    sprintf("%d small JMI selections (80 samples x 12 features, k = 1..10) submitted by %d concurrent clients (one connection each; each client submits, polls its job every 0.2 s until it ends, then submits its next), plus a probe reading `GET /api/me` every 0.25 s. Submission rate limit lifted (`submit_rate`); all other settings at their defaults.",
            n_jobs, n_clients),
    "",
    "## Nothing lost, nothing run twice",
    "",
    "| check | result |", "|---|---|",
    sprintf("| %s | %s |", names(checks), ifelse(checks, "yes", "**NO**")),
    "",
    sprintf("All %d jobs ended in %.1f s: %.1f jobs/s with %d worker%s. Store: %d rows, statuses %s; attempts %s; workers %s.",
            n_jobs, wall, n_jobs / wall, n_workers, if (n_workers > 1) "s" else "", nrow(stored),
            paste(names(table(stored$status)), table(stored$status), sep = " = ", collapse = ", "),
            paste(names(table(stored$attempts)), table(stored$attempts), sep = " x ", collapse = ", "),
            paste(names(table(stored$worker)), table(stored$worker), sep = ": ", collapse = ", ")),
    "",
    "## API response times while the workers were busy",
    "",
    "curl's total time per request, for requests sent before the last job ended.",
    "",
    "| request | n | errors | p50 (ms) | p95 (ms) | max (ms) |", "|---|---:|---:|---:|---:|---:|",
    sprintf("| %s | %d | %d | %.1f | %.1f | %.1f |", latency$request, latency$n, latency$errors, latency$p50_ms,
            latency$p95_ms, latency$max_ms),
    sprintf("| GET /api/me, idle server, one at a time (baseline) | %d | 0 | %.1f | %.1f | %.1f |", length(idle),
            1000 * q(idle, 0.5), 1000 * q(idle, 0.95), 1000 * max(idle)),
    "",
    sprintf("%d requests in %.1f s while busy: %.0f requests/s. The web process is one R thread: a request waits for the ones before it, so the times above are mostly queueing behind the other %d clients (each with a request always in flight, polling every 0.2 s; the page polls once a second).",
            nrow(busy), wall, nrow(busy) / wall, n_clients - 1L),
    "")
  if (!is.null(upload)) {
    lines <- c(lines, "## A large upload", "",
      sprintf("One generated CSV file of %s (2,000-row block repeated; 100 numeric columns and a class) as `POST /api/jobs` (multipart, curl), timed until the server's answer (HTTP %d%s); the job was then cancelled.",
              mb(upload$bytes), upload$status, if (is.null(upload$error)) "" else paste(":", upload$error)),
      "",
      "| bytes | seconds | MB/s | web RSS before | web RSS max during (4 samples/s) | web peak RSS (VmHWM) before | after |",
      "|---:|---:|---:|---:|---:|---:|---:|",
      sprintf("| %.0f | %.2f | %.1f | %s | %s | %s | %s |", upload$bytes, upload$seconds, upload$mb_s, mb(upload$rss_before),
              mb(upload$rss_max), mb(upload$hwm_before), mb(upload$hwm_after)),
      "",
      sprintf("The web process (pid %d, the R process that runs `serve()`; the workers are other processes): resident memory %s before the upload, at most %s while it streamed in (%+.0f MB for a %s upload); its lifetime peak (VmHWM) went from %s to %s.",
              web_pid, mb(upload$rss_before), mb(upload$rss_max), (upload$rss_max - upload$rss_before) / 1e6, mb(upload$bytes),
              mb(upload$hwm_before), mb(upload$hwm_after)),
      "")
  }
  dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
  writeLines(lines, out)
  cat(lines, sep = "\n")
  all(checks)
}

if (!run_load()) quit(status = 1)
