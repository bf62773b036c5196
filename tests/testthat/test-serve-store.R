# The service's store, queue, janitor, quotas, accounts, ownership and request parsing: unit
# tests without processes or HTTP.

new_store <- function() {
  skip_without_service()
  fsgpu:::store_open(tempfile("store-"))
}

queue_toy <- function(store, owner = NULL, now = 1000, job = "select", params = list(k = 3L)) {
  id <- fsgpu:::random_hex(12L)
  dir <- fsgpu:::job_dir(store, id)
  dir.create(dir)
  serve_toy_csv(file.path(dir, "data.csv"))
  files <- data.frame(name = "toy.csv", role = "data", stored = "data.csv", size = file.size(file.path(dir, "data.csv")))
  token <- fsgpu:::job_insert(store, id, job, params, files, owner = owner, bytes = files$size, now = now)
  list(id = id, token = token)
}

test_that("a new store has its tables and schema; a newer schema is refused", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  expect_true(file.exists(file.path(s$dir, "fsgpu.sqlite")))
  expect_setequal(intersect(DBI::dbListTables(s$con), c("jobs", "users", "sessions", "workers", "throttles", "meta")),
                  c("jobs", "users", "sessions", "workers", "throttles", "meta"))
  expect_identical(DBI::dbGetQuery(s$con, "PRAGMA journal_mode")[[1]], "wal")
  fsgpu:::store_execute(s, "UPDATE meta SET value = '99' WHERE key = 'schema'")
  expect_error(fsgpu:::store_migrate(s), "newer fsgpu")
})

test_that("jobs are reached by their token or their owner only; tokens are stored hashed", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s)
  b <- queue_toy(s, owner = "alice")
  expect_gte(nchar(a$token), 32)  # >= 128 bits of hex
  expect_false(a$token %in% unlist(DBI::dbGetQuery(s$con, "SELECT * FROM jobs")))
  expect_identical(fsgpu:::job_authorized(s, a$id, token = a$token)$id, a$id)
  expect_null(fsgpu:::job_authorized(s, a$id, token = b$token))
  expect_null(fsgpu:::job_authorized(s, a$id))
  expect_null(fsgpu:::job_authorized(s, a$id, user = "alice"))  # an anonymous job has no owner
  expect_identical(fsgpu:::job_authorized(s, b$id, user = "alice")$id, b$id)
  expect_null(fsgpu:::job_authorized(s, b$id, user = "bob"))
  expect_null(fsgpu:::job_authorized(s, "../../etc/passwd", token = a$token))
})

test_that("claims take the oldest queued job, each once; positions follow the queue", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  jobs <- lapply(1:3, function(i) queue_toy(s, now = 1000 + i))
  expect_identical(fsgpu:::job_queue_position(s, fsgpu:::job_get(s, jobs[[3]]$id)), 3L)
  got1 <- fsgpu:::job_claim(s, "w1", now = 2000)
  got2 <- fsgpu:::job_claim(s, "w2", now = 2000)
  expect_identical(c(got1$id, got2$id), c(jobs[[1]]$id, jobs[[2]]$id))
  expect_identical(got1$status, "running")
  expect_identical(got1$attempts, 1L)
  expect_identical(fsgpu:::job_queue_position(s, fsgpu:::job_get(s, jobs[[3]]$id)), 1L)
  expect_identical(fsgpu:::job_claim(s, "w3")$id, jobs[[3]]$id)
  expect_null(fsgpu:::job_claim(s, "w3"))
  # only the worker that holds a job ends it
  expect_false(fsgpu:::job_finish(s, got1$id, "w2", "done"))
  expect_true(fsgpu:::job_finish(s, got1$id, "w1", "done", retention = 3600, now = 3000))
  expect_identical(fsgpu:::job_get(s, got1$id)$expires, 6600)
})

test_that("cancelling: a queued job at once, a running one at its next progress report; finished ones are deleted", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s, now = 1)
  b <- queue_toy(s, now = 2)
  expect_identical(fsgpu:::job_cancel_or_delete(s, b$id), "cancelled")
  job <- fsgpu:::job_claim(s, "w1")
  expect_identical(job$id, a$id)
  expect_false(fsgpu:::job_report(s, a$id, "w1", 0.5, "half"))
  expect_identical(fsgpu:::job_get(s, a$id)$progress, 0.5)
  expect_identical(fsgpu:::job_cancel_or_delete(s, a$id), "cancelling")
  expect_true(fsgpu:::job_report(s, a$id, "w1", 0.6))
  fsgpu:::job_finish(s, a$id, "w1", "cancelled")
  expect_identical(fsgpu:::job_cancel_or_delete(s, a$id), "deleted")
  expect_null(fsgpu:::job_get(s, a$id))
  expect_false(dir.exists(fsgpu:::job_dir(s, a$id)))
})

test_that("a job whose worker stops is re-queued, then failed with the reason after max_attempts", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s, now = 0)
  for (attempt in 1:3) {
    job <- fsgpu:::job_claim(s, paste0("w", attempt), now = 100 * attempt)
    expect_identical(job$attempts, attempt)
    # not yet stale
    expect_length(fsgpu:::job_requeue_stale(s, timeout = 60, max_attempts = 3, now = 100 * attempt + 30)$requeued, 0)
    out <- fsgpu:::job_requeue_stale(s, timeout = 60, max_attempts = 3, now = 100 * attempt + 61)
    if (attempt < 3) {
      expect_identical(out$requeued, a$id)
      expect_identical(fsgpu:::job_get(s, a$id)$status, "queued")
      expect_match(fsgpu:::job_get(s, a$id)$message, "re-queued")
    } else {
      expect_identical(out$failed, a$id)
    }
  }
  job <- fsgpu:::job_get(s, a$id)
  expect_identical(job$status, "failed")
  expect_match(job$error, "worker \\(w3\\) stopped.*tried 3 times")
  # a worker known dead is handled at once, whatever its heartbeat
  b <- queue_toy(s, now = 1000)
  fsgpu:::job_claim(s, "w9", now = 1000)
  expect_identical(fsgpu:::job_requeue_stale(s, timeout = 600, max_attempts = 3, workers = "w9", now = 1001)$requeued, b$id)
  # a clean stop gives the job back without counting the attempt
  fsgpu:::job_claim(s, "w10", now = 1002)
  fsgpu:::job_release(s, "w10")
  expect_identical(fsgpu:::job_get(s, b$id)$attempts, 1L)
})

test_that("the janitor deletes expired anonymous jobs and their files, nothing else (injected clock)", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  anon <- queue_toy(s, now = 0)
  mine <- queue_toy(s, owner = "alice", now = 1)
  queued <- queue_toy(s, now = 2)
  for (id in c(anon$id, mine$id)) {
    fsgpu:::job_claim(s, "w", now = 10)
    fsgpu:::job_finish(s, id, "w", "done", retention = 48 * 3600, now = 100)
  }
  expect_length(fsgpu:::store_janitor(s, retention = 48 * 3600, now = 100 + 47 * 3600), 0)
  expect_identical(fsgpu:::store_janitor(s, retention = 48 * 3600, now = 100 + 48 * 3600 + 1), anon$id)
  expect_null(fsgpu:::job_get(s, anon$id))
  expect_false(dir.exists(fsgpu:::job_dir(s, anon$id)))
  expect_false(is.null(fsgpu:::job_get(s, mine$id)))   # registered users keep their jobs
  expect_false(is.null(fsgpu:::job_get(s, queued$id))) # queued jobs never expire
  expect_length(fsgpu:::store_janitor(s, retention = 48 * 3600, now = 1e9), 0)
  # expired sessions go too
  fsgpu:::user_create(s, "alice", "password1", now = 0)
  secret <- fsgpu:::session_create(s, "alice", 100, now = 0)
  fsgpu:::store_janitor(s, now = 200)
  expect_identical(nrow(fsgpu:::store_query(s, "SELECT * FROM sessions")), 0L)
})

test_that("accounts: password hashes, checks, sessions; names and passwords are checked", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  fsgpu:::user_create(s, "alice", "correct horse")
  hash <- fsgpu:::store_query(s, "SELECT hash FROM users WHERE name = 'alice'")$hash
  # libsodium's Argon2id string, or its scrypt string in a build without libsodium (see
  # test-serve-passwords.R)
  expect_match(hash, if (fsgpu:::password_argon2_available()) "^\\$argon2id\\$" else "^\\$7\\$")
  expect_false(grepl("correct horse", hash, fixed = TRUE))
  expect_true(fsgpu:::user_check(s, "alice", "correct horse"))
  expect_false(fsgpu:::user_check(s, "alice", "wrong horse"))
  expect_false(fsgpu:::user_check(s, "nobody", "correct horse"))
  expect_error(fsgpu:::user_create(s, "alice", "another one"), "taken")
  expect_error(fsgpu:::user_create(s, "a b", "password1"), "user name")
  expect_error(fsgpu:::user_create(s, "bob", "short"), "8 to 1024")
  secret <- fsgpu:::session_create(s, "alice", 3600, now = 0)
  expect_identical(fsgpu:::session_user(s, secret, now = 10), "alice")
  expect_null(fsgpu:::session_user(s, secret, now = 3601))
  expect_null(fsgpu:::session_user(s, "f00d", now = 10))
  fsgpu:::session_delete(s, secret)
  expect_null(fsgpu:::session_user(s, secret, now = 10))
})

test_that("quotas count a user's uploads and results; throttles count events in their window", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s, owner = "alice")
  b <- queue_toy(s, owner = "alice")
  queue_toy(s, owner = "bob")
  expect_equal(fsgpu:::user_used_bytes(s, "alice"), sum(file.size(file.path(fsgpu:::job_dir(s, c(a$id, b$id)), "data.csv"))))
  expect_identical(fsgpu:::user_used_bytes(s, "carol"), 0)
  for (t in c(0, 10, 20)) fsgpu:::throttle_add(s, "login:x", now = t)
  expect_identical(fsgpu:::throttle_count(s, "login:x", 16, now = 25), 2L)
  expect_identical(fsgpu:::throttle_count(s, "login:y", 15, now = 25), 0L)
})

test_that("settings come from serve()'s arguments, else config.dcf, else the defaults", {
  skip_without_service()
  dir <- tempfile()
  dir.create(dir)
  expect_identical(fsgpu:::service_settings(dir)$anonymous_hours, 48)
  writeLines(c("anonymous_hours: 12", "admins: alice, bob", "user_quota: 1e9"), file.path(dir, "config.dcf"))
  s <- fsgpu:::service_settings(dir, list(user_quota = 5))
  expect_identical(s$anonymous_hours, 12)
  expect_identical(s$admins, c("alice", "bob"))
  expect_identical(s$user_quota, 5)
  expect_error(fsgpu:::service_settings(dir, list(nonsense = 1)), "unknown settings: nonsense")
  writeLines("anonymous_hours: soon", file.path(dir, "config.dcf"))
  expect_error(fsgpu:::service_settings(dir), "anonymous_hours must be a non-negative number")
})

test_that("job parameters are typed, defaulted as in R, and checked", {
  skip_without_service()
  p <- fsgpu:::service_params("select", list(k = "5", method = "mrmr"))
  expect_identical(p[c("k", "method")], list(k = 5L, method = "mrmr"))
  expect_null(p$nbins)
  expect_identical(fsgpu:::service_params("select", list())$k, 10L)
  expect_identical(fsgpu:::service_params("interactions", list(contrast = "false"))$contrast, FALSE)
  expect_true(is.integer(fsgpu:::service_params("interactions", list())$seed))
  expect_error(fsgpu:::service_params("select", list(k = "1.5")), "k must be a whole number")
  expect_error(fsgpu:::service_params("select", list(method = "magic")), "method must be one of")
  expect_error(fsgpu:::service_params("select", list(top = "3")), "unknown parameter for job 'select': top")
  expect_error(fsgpu:::service_params("rm -rf", list()), "job must be one of")
  # categorical: kept as normalised text, made the R functions' value when the job runs
  expect_null(fsgpu:::service_params("select", list())$categorical)
  expect_null(fsgpu:::service_params("select", list(categorical = "Auto"))$categorical)
  expect_identical(fsgpu:::service_params("pairs", list(categorical = "TRUE"))$categorical, "true")
  expect_identical(fsgpu:::service_params("select", list(categorical = " a , b c "))$categorical, "a,b c")
  expect_identical(fsgpu:::service_call_args("select", list(k = 3L, categorical = "a,b c"))$categorical, c("a", "b c"))
  expect_identical(fsgpu:::service_call_args("pairs", list(categorical = "false"))$categorical, FALSE)
  expect_null(fsgpu:::service_call_args("select", list(k = 3L))$categorical)
  expect_error(fsgpu:::service_params("select", list(categorical = ",a")), "categorical must be auto, true, false or column names")
  expect_error(fsgpu:::service_params("knn", list(categorical = "true")), "unknown parameter for job 'knn': categorical")
  plink <- data.frame(name = c("g.bed", "g.bim", "g.fam"), role = c("bed", "bim", "fam"),
                      stored = c("input.bed", "input.bim", "input.fam"))
  expect_error(fsgpu:::service_validate(tempdir(), plink, list(categorical = "true")), "PLINK genotypes are categories")
  # server-chosen names; only a known extension comes from the user's name
  r <- fsgpu:::service_file_roles("../../my data.csv.gz")
  expect_identical(r$stored, "data.csv.gz")
  r <- fsgpu:::service_file_roles(c("g.bed", "g.bim", "g.fam", "pheno.txt"))
  expect_identical(r$stored, c("input.bed", "input.bim", "input.fam", "phenotype.txt"))
  expect_error(fsgpu:::service_file_roles("data.exe"), "cannot tell the format")
  expect_error(fsgpu:::service_file_roles(c("g.bed", "g.fam")), "PLINK")
  expect_identical(fsgpu:::clean_file_name("../a b;rm.csv"), "a_b_rm.csv")
})

# A rook-like input over raw bytes.
raw_input <- function(bytes) {
  pos <- 0L
  list(read = function(l = -1L) {
    if (pos >= length(bytes)) return(raw())
    n <- min(l, length(bytes) - pos)
    out <- bytes[pos + seq_len(n)]
    pos <<- pos + n
    out
  })
}

multipart <- function(boundary, parts) {
  body <- raw()
  for (p in parts) {
    head <- if (!is.null(p$filename)) sprintf("Content-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: application/octet-stream", p$name, p$filename)
            else sprintf("Content-Disposition: form-data; name=\"%s\"", p$name)
    body <- c(body, charToRaw(sprintf("--%s\r\n%s\r\n\r\n", boundary, head)), p$value, charToRaw("\r\n"))
  }
  c(body, charToRaw(sprintf("--%s--\r\n", boundary)))
}

test_that("multipart bodies are parsed in pieces, files streamed to disk, limits kept", {
  skip_without_service()
  set.seed(2)
  content <- as.raw(sample(0:255, 5000, replace = TRUE))
  content[100:110] <- charToRaw("\r\n--XYZ12--")  # looks like the boundary, but is not one
  b <- "XYZ123"
  body <- multipart(b, list(list(name = "job", value = charToRaw("select")),
                            list(name = "file", filename = "a.csv", value = content),
                            list(name = "k", value = charToRaw("7"))))
  for (chunk in c(7, 64, 2^20)) {
    dir <- tempfile()
    dir.create(dir)
    form <- fsgpu:::parse_multipart(raw_input(body), b, dir, limit = 1e6, chunk = chunk)
    expect_identical(form$fields, list(job = "select", k = "7"))
    expect_identical(form$files[[1]]$filename, "a.csv")
    expect_identical(readBin(form$files[[1]]$path, "raw", 1e5), content)
  }
  expect_error(fsgpu:::parse_multipart(raw_input(body), b, dir, limit = 4000, chunk = 512), class = "fsgpu_too_large")
  expect_error(fsgpu:::parse_multipart(raw_input(body[1:3000]), b, dir, limit = 1e6), "truncated")
  expect_error(fsgpu:::parse_multipart(raw_input(charToRaw("hello")), b, dir, limit = 1e6), "no boundary")
})

test_that("a worker runs queued jobs as the R functions do and records where and how long", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s, now = 1, params = list(k = 3L, method = "jmi"))
  b <- queue_toy(s, now = 2, job = "discretize", params = list(method = "caim"))
  c <- queue_toy(s, now = 3, params = list(k = 99L, method = "jmi"))
  fsgpu::serve_worker(s$dir, id = "inproc", max_jobs = 3, poll = 0.1)
  ja <- fsgpu:::job_get(s, a$id)
  expect_identical(ja$status, "done")
  expect_match(ja$device, "CPU|GPU")
  data <- read_features(file.path(fsgpu:::job_dir(s, a$id), "data.csv"))
  direct <- select_features(data$x, data$y, k = 3, method = "jmi", quiet = TRUE)
  served <- read.csv(file.path(fsgpu:::job_dir(s, a$id), "result.csv"))
  expect_equal(served, fsgpu:::service_table(direct), ignore_attr = TRUE)
  expect_identical(readRDS(file.path(fsgpu:::job_dir(s, a$id), "result.rds"))$selection, direct$selection)
  expect_identical(file.exists(file.path(fsgpu:::job_dir(s, a$id), "plot.png")), can_draw_png())
  expect_identical(fsgpu:::job_get(s, b$id)$status, "done")
  expect_match(readLines(file.path(fsgpu:::job_dir(s, b$id), "result.csv"))[1], "\"cuts\"")
  jc <- fsgpu:::job_get(s, c$id)
  expect_identical(jc$status, "failed")
  expect_match(jc$error, "k must be between")
  expect_false(file.exists(file.path(fsgpu:::job_dir(s, c$id), "result.csv")))
  # the script reproduces the result
  script <- readLines(file.path(fsgpu:::job_dir(s, a$id), "script.R"))
  old <- setwd(fsgpu:::job_dir(s, a$id))
  on.exit(setwd(old), add = TRUE)
  file.copy("data.csv", "toy.csv")
  out <- tempfile()
  file.copy("result.csv", out)
  eval(parse(text = script), new.env())
  expect_identical(readLines("result.csv"), readLines(out))
})

test_that("a SQLite store on NFS or SMB is refused; a local one is not", {
  skip_without_service()
  mounts <- tempfile()
  writeLines(c("/dev/vda / ext4 rw 0 0", "server:/export /shared nfs4 rw 0 0", "//host/share /smb cifs rw 0 0"), mounts)
  expect_error(fsgpu:::check_sqlite_filesystem("/shared/fsgpu-store", mounts), "nfs4 file system.*PostgreSQL")
  expect_error(fsgpu:::check_sqlite_filesystem("/smb/x", mounts), "cifs")
  expect_silent(fsgpu:::check_sqlite_filesystem("/sharedness/store", mounts))
  expect_silent(fsgpu:::check_sqlite_filesystem("/home/store", mounts))
})

test_that("a job whose results cannot be written fails alone, with a clear error and no partial files", {
  s <- new_store()
  on.exit(fsgpu:::store_close(s))
  a <- queue_toy(s, now = 1, params = list(k = 2L, method = "jmi"))
  b <- queue_toy(s, now = 2, params = list(k = 2L, method = "jmi"))
  # as a full disk would: the results of a cannot be put in place
  dir.create(file.path(fsgpu:::job_dir(s, a$id), "result.json"))
  fsgpu::serve_worker(s$dir, id = "inproc", max_jobs = 2, poll = 0.1)
  ja <- fsgpu:::job_get(s, a$id)
  expect_identical(ja$status, "failed")
  expect_match(ja$error, "^cannot write the results")
  expect_false(file.exists(file.path(fsgpu:::job_dir(s, a$id), "result.csv")))
  expect_length(list.files(fsgpu:::job_dir(s, a$id), pattern = "^\\.tmp", all.files = TRUE), 0L)
  expect_identical(fsgpu:::job_get(s, b$id)$status, "done")
})

test_that("the pre-queue check reads a bounded number of bytes: a huge line is refused, not built", {
  f <- tempfile(fileext = ".csv.gz")
  on.exit(unlink(f))
  con <- gzfile(f, "wb")
  writeLines("a,b,class", con)
  line <- strrep("1", 1e6)
  for (i in 1:20) cat(line, file = con)  # one line of 20 MB, compressed to a few kB
  close(con)
  con <- gzfile(f, "rb")
  on.exit(close(con), add = TRUE)
  expect_error(fsgpu:::read_head_lines(con, 200L, "bomb.csv"), "bomb.csv: line 2 is longer than 16 MB")
  # n lines past a pattern, in pieces of any size
  g <- tempfile()
  writeLines(c("@relation r", sprintf("@attribute a%d numeric", 1:5000), "@data", sprintf("%d", 1:500)), g)
  con2 <- file(g, "rb")
  got <- fsgpu:::read_head_lines(con2, 10L, "x.arff", until = "^\\s*@data")
  close(con2)
  expect_identical(length(got), 5002L + 10L)
  expect_identical(got[5003], "1")
})

test_that("the store and what the service writes are readable by their owner alone", {
  skip_on_os("windows")
  dir <- tempfile("store-")
  old <- Sys.umask()
  on.exit({ Sys.umask(old); unlink(dir, recursive = TRUE) })
  s <- fsgpu:::store_open(dir)
  on.exit(fsgpu:::store_close(s), add = TRUE, after = FALSE)
  expect_identical(format(file.mode(dir)), "700")
  writeLines("x", file.path(dir, "jobs", "f"))
  expect_identical(format(file.mode(file.path(dir, "jobs", "f"))), "600")
})

test_that("raw_slice() copies a piece of a raw vector", {
  expect_identical(fsgpu:::raw_slice(as.raw(1:10), 3L, 4L), as.raw(3:6))
  expect_identical(fsgpu:::raw_slice(as.raw(1:10), 11L, 0L), raw())
})

test_that("serve_start() warns of administrators nobody has registered yet", {
  dir <- tempfile("store-")
  old <- Sys.umask()
  on.exit({ Sys.umask(old); unlink(dir, recursive = TRUE) })
  expect_warning(service <- fsgpu:::serve_start(dir, port = serve_free_port(), workers = 0, admins = "boss"),
                 "administrators not registered yet.*'boss'")
  fsgpu:::serve_stop(service)
})
