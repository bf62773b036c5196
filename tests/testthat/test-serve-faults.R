# Faults lose nothing: a worker killed mid-job, a server restarted mid-queue, two workers racing
# for the jobs, a file that is bad past the lines the web process checks.

store_db <- function(store) DBI::dbConnect(RSQLite::SQLite(), file.path(store, "fsgpu.sqlite"))

wait_until <- function(condition, timeout = 120, what = "the condition") {
  t0 <- Sys.time()
  while (!isTRUE(condition())) {
    if (as.numeric(Sys.time() - t0, units = "secs") > timeout) stop("timed out waiting for ", what)
    Sys.sleep(0.2)
  }
  invisible(TRUE)
}

# The R processes that process `pid` started (Linux: /proc), its supervisor left out.
r_children <- function(pid) {
  pids <- as.integer(list.files("/proc", pattern = "^[0-9]+$"))
  parent <- vapply(pids, function(p) {
    line <- tryCatch(grep("^PPid:", readLines(sprintf("/proc/%d/status", p)), value = TRUE), error = function(e) character())
    if (length(line)) as.integer(sub("^PPid:\\s*", "", line)) else NA_integer_
  }, 1L)
  kids <- pids[!is.na(parent) & parent == pid]
  command <- vapply(kids, function(p) tryCatch({
    bytes <- readBin(sprintf("/proc/%d/cmdline", p), "raw", 65536L)
    bytes[bytes == 0] <- as.raw(32L)
    rawToChar(bytes)
  }, error = function(e) ""), "")
  kids[grepl("/R", command) & !grepl("supervisor", command)]
}

# A job that runs for a while on two cores, reporting no progress until it ends: all 3-tuples
# of 600 variables (36 million; about 10 s).
heavy_csv <- function() {
  set.seed(5)
  d <- data.frame(matrix(round(stats::rnorm(300 * 600), 2), 300, 600))
  d$class <- rep(c("a", "b"), 150)
  f <- tempfile(fileext = ".csv")
  utils::write.csv(d, f, row.names = FALSE)
  f
}

test_that("a worker killed mid-job (kill -9) is noticed, its job re-queued and run again; cancel stops it at once", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  s <- serve_background(store, workers = 1)
  on.exit(serve_stop_background(s))
  job <- serve_submit(s, heavy_csv(), "interactions", dimensions = 3, contrast = "false")$body
  url <- paste0(s$url, "/api/jobs/", job$id)
  wait_until(function() {
    j <- serve_request(url, token = job$token)$body
    j$status == "running"
  }, what = "the job to run")
  con <- store_db(store)
  on.exit(DBI::dbDisconnect(con), add = TRUE)
  worker <- DBI::dbGetQuery(con, "SELECT w.id, w.pid FROM workers w JOIN jobs j ON j.worker = w.id WHERE j.id = ?",
                            params = list(job$id))
  expect_identical(nrow(worker), 1L)
  tools::pskill(worker$pid, tools::SIGKILL)
  # noticed: the job goes back to the queue and a new worker takes it (a second attempt)
  wait_until(function() serve_request(url, token = job$token)$body$attempts == 2L, what = "the second attempt")
  j <- serve_request(url, token = job$token)$body
  expect_true(j$status %in% c("queued", "running"))
  expect_false(worker$id %in% DBI::dbGetQuery(con, "SELECT id FROM workers")$id)
  wait_until(function() serve_request(url, token = job$token)$body$status == "running", what = "the re-run")
  # Ctrl-C of the server stops its workers and puts the running job back in the queue, without
  # counting the attempt; the next start runs it again
  serve_stop_background(s)
  row <- DBI::dbGetQuery(con, "SELECT status, attempts, worker FROM jobs WHERE id = ?", params = list(job$id))
  expect_identical(row$status, "queued")
  expect_identical(row$attempts, 1L)
  expect_identical(nrow(DBI::dbGetQuery(con, "SELECT * FROM workers")), 0L)
  s <- serve_background(store, workers = 1)
  url <- paste0(s$url, "/api/jobs/", job$id)
  wait_until(function() serve_request(url, token = job$token)$body$status == "running", what = "the run after the restart")
  # cancelled at once, before the engine reports any progress: the worker kills the process
  # computing it, and lives on to run the next job
  worker <- DBI::dbGetQuery(con, "SELECT w.id, w.pid FROM workers w JOIN jobs j ON j.worker = w.id WHERE j.id = ?",
                            params = list(job$id))
  running <- serve_request(url, token = job$token)$body
  expect_match(running$device, "CPU|GPU")  # the worker's device, while it runs
  t0 <- Sys.time()
  expect_identical(serve_request(url, "DELETE", token = job$token)$body$status, "cancelling")
  wait_until(function() serve_request(url, token = job$token)$body$status == "cancelled", timeout = 60, what = "the cancellation")
  latency <- as.numeric(Sys.time() - t0, units = "secs")
  if (nzchar(Sys.getenv("FSGPU_SERVE_TIMINGS")))
    cat(sprintf("\ncancel: %.2f s (progress %.3f when cancelled)\n", latency, running$progress), file = stderr())
  expect_false(file.exists(file.path(store, "jobs", job$id, "result.csv")))
  expect_length(list.files(file.path(store, "jobs", job$id), pattern = "^(\\.tmp-|result|plot|script)", all.files = TRUE), 0L)
  expect_identical(serve_request(paste0(url, "/result.csv"), token = job$token)$status, 409L)
  expect_identical(serve_request(url, token = job$token)$body$error, "cancelled")
  expect_true(isTRUE(tools::pskill(worker$pid, 0L)))
  small <- serve_submit(s, serve_toy_csv(), "select", k = 2)$body
  expect_identical(serve_wait(s, small$id, small$token)$status, "done")
  expect_identical(DBI::dbGetQuery(con, "SELECT worker FROM jobs WHERE id = ?", params = list(small$id))$worker, worker$id)
  # the worker's child process, which computes, dying on its own (a crash, the OOM killer): the
  # worker puts the job back in the queue and runs it again in a new child
  skip_if_not(dir.exists("/proc/self"), "no /proc")
  job <- serve_submit(s, heavy_csv(), "interactions", dimensions = 3, contrast = "false")$body
  url <- paste0(s$url, "/api/jobs/", job$id)
  wait_until(function() serve_request(url, token = job$token)$body$status == "running", what = "the job to run")
  children <- r_children(worker$pid)
  expect_length(children, 1L)
  tools::pskill(children, tools::SIGKILL)
  wait_until(function() {
    j <- serve_request(url, token = job$token)$body
    j$attempts == 2L && j$status == "running"
  }, what = "the run after the crash")
  expect_true(isTRUE(tools::pskill(worker$pid, 0L)))
  expect_identical(serve_request(url, "DELETE", token = job$token)$body$status, "cancelling")
  wait_until(function() serve_request(url, token = job$token)$body$status == "cancelled", timeout = 60, what = "the cancellation")
})

test_that("a server restarted mid-queue runs the queued jobs; nothing is lost", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  s <- serve_background(store, workers = 0)
  file <- serve_toy_csv()
  jobs <- lapply(1:3, function(k) serve_submit(s, file, "select", k = k)$body)
  serve_stop_background(s)
  s <- serve_background(store, workers = 1)
  on.exit(serve_stop_background(s))
  data <- read_features(file)
  for (k in 1:3) {
    done <- serve_wait(s, jobs[[k]]$id, jobs[[k]]$token)
    expect_identical(done$status, "done")
    expect_identical(done$attempts, 1L)
    csv <- serve_request(paste0(s$url, "/api/jobs/", jobs[[k]]$id, "/result.csv"), token = jobs[[k]]$token, raw = TRUE)$body
    expect_identical(sub("\n$", "", csv), serve_expected_csv(select_features(data$x, data$y, k = k, quiet = TRUE)))
  }
})

test_that("two workers racing for the queue run each job exactly once", {
  skip_without_service()
  skip_on_cran()
  store <- fsgpu:::store_open(tempfile("store-"))
  on.exit(fsgpu:::store_close(store))
  ids <- character()
  for (i in 1:12) {
    id <- fsgpu:::random_hex(12L)
    dir.create(fsgpu:::job_dir(store, id))
    serve_toy_csv(file.path(fsgpu:::job_dir(store, id), "data.csv"), seed = i)
    files <- data.frame(name = "toy.csv", role = "data", stored = "data.csv", size = 1)
    fsgpu:::job_insert(store, id, "select", list(k = 2L), files, now = i)
    ids <- c(ids, id)
  }
  libs <- .libPaths()
  workers <- lapply(c("racer-a", "racer-b"), function(name) callr::r_bg(function(dir, name, libs) {
    .libPaths(libs)
    fsgpu::serve_worker(dir, id = name, poll = 0.05, idle_exit = 3)
  }, args = list(dir = store$dir, name = name, libs = libs), supervise = TRUE))
  for (w in workers) w$wait(120000)
  for (w in workers) expect_identical(w$get_exit_status(), 0L)
  jobs <- fsgpu:::store_query(store, "SELECT id, status, attempts, worker FROM jobs")
  expect_setequal(jobs$id, ids)
  expect_true(all(jobs$status == "done"))
  expect_true(all(jobs$attempts == 1L))
  expect_true(all(jobs$worker %in% c("racer-a", "racer-b")))
})

test_that("a file bad past the lines checked at submission fails its job with the reader's message", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  s <- serve_background(store, workers = 1)
  on.exit(serve_stop_background(s))
  file <- serve_toy_csv(file.path(tempdir(), "late_typo.csv"), n = 400)
  lines <- readLines(file)
  lines[350] <- paste0(lines[350], ",1")  # one field too many on line 350
  writeLines(lines, file)
  r <- serve_submit(s, file, "select")
  expect_identical(r$status, 201L)
  done <- serve_wait(s, r$body$id, r$body$token)
  expect_identical(done$status, "failed")
  expect_match(done$error, "late_typo.csv: line 350 has 10 fields, but the first line has 9", fixed = TRUE)
  expect_false(grepl(store, done$error, fixed = TRUE))  # the server's names stay hidden
  # a good job after it runs as usual
  r <- serve_submit(s, serve_toy_csv(), "select", k = 2)
  expect_identical(serve_wait(s, r$body$id, r$body$token)$status, "done")
})

test_that("workers stop when the server that started them is killed", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  s <- serve_background(store, workers = 1)
  con <- store_db(store)
  on.exit(DBI::dbDisconnect(con))
  wait_until(function() nrow(DBI::dbGetQuery(con, "SELECT pid FROM workers")) == 1L, what = "the worker")
  pid <- DBI::dbGetQuery(con, "SELECT pid FROM workers")$pid
  s$process$kill()  # SIGKILL: serve() gets no chance to stop its workers
  wait_until(function() !isTRUE(tools::pskill(pid, 0L)), timeout = 30, what = "the orphaned worker to stop")
  expect_false(isTRUE(tools::pskill(pid, 0L)))
})
