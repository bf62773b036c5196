# The queue on PostgreSQL: a server started here from Debian's binaries (initdb, pg_ctl) in a
# temporary directory on a free port, as an unprivileged user when the tests run as root
# (PostgreSQL refuses root), stopped after.

pg_bin <- function() {
  dirs <- sort(Sys.glob("/usr/lib/postgresql/*/bin"), decreasing = TRUE)
  for (d in dirs) if (file.exists(file.path(d, "initdb")) && file.exists(file.path(d, "pg_ctl"))) return(d)
  NULL
}

start_postgres <- function() {
  bin <- pg_bin()
  if (is.null(bin)) skip("PostgreSQL's initdb and pg_ctl are not installed (Debian package postgresql)")
  as_user <- character()
  root <- identical(unname(Sys.info()[["effective_user"]]), "root")
  # R's own tempdir() is private to root: the server's directory must be reachable by nobody
  dir <- tempfile("fsgpu-pg-", tmpdir = if (root) "/tmp" else tempdir())
  dir.create(dir)
  if (root) {
    if (!nzchar(Sys.which("runuser"))) skip("running as root without runuser: PostgreSQL cannot be started as root")
    Sys.chmod(dir, "0777", use_umask = FALSE)
    as_user <- c("-u", "nobody", "--")
  }
  run <- function(cmd, args) {
    if (length(as_user)) processx::run("runuser", c(as_user, file.path(bin, cmd), args), error_on_status = FALSE)
    else processx::run(file.path(bin, cmd), args, error_on_status = FALSE)
  }
  out <- run("initdb", c("-D", file.path(dir, "data"), "-A", "trust", "-U", "fsgpu"))
  if (out$status != 0) skip(paste("initdb failed:", out$stderr))
  port <- serve_free_port()
  out <- run("pg_ctl", c("-D", file.path(dir, "data"), "-o", sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", port, dir),
                         "-l", file.path(dir, "log"), "-w", "start"))
  if (out$status != 0) skip(paste("pg_ctl start failed:", out$stderr))
  list(url = sprintf("postgresql://fsgpu@127.0.0.1:%d/postgres", port),
       stop = function() {
         run("pg_ctl", c("-D", file.path(dir, "data"), "-m", "fast", "-w", "stop"))
         unlink(dir, recursive = TRUE)
       })
}

test_that("the queue works on PostgreSQL: claims, progress, re-queues, janitor, accounts, racing workers", {
  skip_without_service()
  skip_if_not_installed("RPostgreSQL")
  skip_on_cran()
  pg <- start_postgres()
  on.exit(pg$stop())
  s <- fsgpu:::store_open(tempfile("store-"), db = pg$url)
  on.exit(fsgpu:::store_close(s), add = TRUE, after = FALSE)
  expect_identical(s$kind, "postgresql")
  queue <- function(now, owner = NULL) {
    id <- fsgpu:::random_hex(12L)
    dir.create(fsgpu:::job_dir(s, id))
    serve_toy_csv(file.path(fsgpu:::job_dir(s, id), "data.csv"), seed = now)
    files <- data.frame(name = "toy.csv", role = "data", stored = "data.csv", size = 1)
    list(id = id, token = fsgpu:::job_insert(s, id, "select", list(k = 2L, nbins = NULL), files, owner = owner, now = now))
  }
  a <- queue(1)
  b <- queue(2, owner = "alice")
  expect_identical(fsgpu:::job_authorized(s, a$id, token = a$token)$id, a$id)
  expect_null(fsgpu:::job_authorized(s, a$id, token = b$token))
  expect_identical(fsgpu:::job_authorized(s, b$id, user = "alice")$id, b$id)
  expect_equal(fsgpu:::job_queue_position(s, fsgpu:::job_get(s, b$id)), 2)
  got <- fsgpu:::job_claim(s, "w1", now = 10)
  expect_identical(got$id, a$id)
  expect_false(fsgpu:::job_report(s, a$id, "w1", 0.25, "a quarter", now = 11))
  out <- fsgpu:::job_requeue_stale(s, timeout = 60, max_attempts = 3, now = 100)
  expect_identical(out$requeued, a$id)
  # a second connection (another host's worker) sees the same queue and claims atomically
  s2 <- fsgpu:::store_open(s$dir, db = pg$url)
  expect_identical(fsgpu:::job_claim(s2, "w2", now = 200)$id, a$id)
  expect_identical(fsgpu:::job_claim(s, "w1", now = 200)$id, b$id)
  expect_null(fsgpu:::job_claim(s2, "w2"))
  fsgpu:::store_close(s2)
  expect_true(fsgpu:::job_finish(s, b$id, "w1", "done", retention = 3600, now = 300))
  expect_true(fsgpu:::job_finish(s, a$id, "w2", "done", retention = 3600, now = 300))
  expect_identical(fsgpu:::store_janitor(s, retention = 3600, now = 3901), a$id)
  expect_false(is.null(fsgpu:::job_get(s, b$id)))
  fsgpu:::user_create(s, "alice", "password-a")
  expect_true(fsgpu:::user_check(s, "alice", "password-a"))
  secret <- fsgpu:::session_create(s, "alice", 60)
  expect_identical(fsgpu:::session_user(s, secret), "alice")
  expect_gt(fsgpu:::user_used_bytes(s, "alice"), -1)
  fsgpu:::throttle_add(s, "k", now = 5)
  expect_identical(fsgpu:::throttle_count(s, "k", 10, now = 6), 1L)

  # two worker processes racing over PostgreSQL run each job once, with the R functions' results
  ids <- vapply(1:8, function(i) queue(1000 + i)$id, "")
  libs <- .libPaths()
  workers <- lapply(c("pg-a", "pg-b"), function(name) callr::r_bg(function(dir, db, name, libs) {
    .libPaths(libs)
    fsgpu::serve_worker(dir, db = db, id = name, poll = 0.05, idle_exit = 3)
  }, args = list(dir = s$dir, db = pg$url, name = name, libs = libs), supervise = TRUE))
  for (w in workers) w$wait(120000)
  for (w in workers) expect_identical(w$get_exit_status(), 0L)
  jobs <- fsgpu:::store_query(s, sprintf("SELECT id, status, attempts FROM jobs WHERE id IN (%s)",
                                         paste0("'", ids, "'", collapse = ",")))
  expect_identical(nrow(jobs), 8L)
  expect_true(all(jobs$status == "done"))
  expect_true(all(jobs$attempts == 1L))
  data <- read_features(file.path(fsgpu:::job_dir(s, ids[1]), "data.csv"))
  expect_identical(paste(readLines(file.path(fsgpu:::job_dir(s, ids[1]), "result.csv")), collapse = "\n"),
                   serve_expected_csv(select_features(data$x, data$y, k = 2, quiet = TRUE)))
})
