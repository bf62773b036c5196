# The service's durable store: one database (SQLite in the store directory, or PostgreSQL) that
# holds the jobs, users, sessions, workers and throttle events, and the directory that holds the
# jobs' files under server-chosen names. It is the only state the web process and the workers
# share. Times are seconds since the epoch (numbers, the same in both databases); every
# function that needs the time takes `now`, so that tests can move the clock.

store_schema_version <- 1L

# Opens the store: creates the directory and the database tables when they are new. `db` is
# NULL (SQLite in `dir`) or a "postgresql://user:password@host:port/dbname" URL.
store_open <- function(dir, db = NULL) {
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) || !nzchar(dir)) stop("store must be a directory path", call. = FALSE)
  for (p in c("DBI", if (is.null(db)) "RSQLite" else "RPostgreSQL"))
    if (!requireNamespace(p, quietly = TRUE)) stop(sprintf("the service needs the %s package", p), call. = FALSE)
  # The store holds uploads, results and password hashes: readable by its owner alone, and so is
  # everything this process writes from now on.
  Sys.umask("077")
  dir.create(file.path(dir, "jobs"), recursive = TRUE, showWarnings = FALSE)
  dir.create(file.path(dir, "uploads"), showWarnings = FALSE)
  if (!dir.exists(file.path(dir, "jobs"))) stop(sprintf("cannot create the store directory '%s'", dir), call. = FALSE)
  suppressWarnings(Sys.chmod(file.path(dir, c("", "jobs", "uploads")), "0700", use_umask = FALSE))
  dir <- normalizePath(dir, mustWork = TRUE)
  store <- new.env(parent = emptyenv())
  store$dir <- dir
  store$db <- db
  if (is.null(db)) {
    check_sqlite_filesystem(dir)
    store$kind <- "sqlite"
    store$con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "fsgpu.sqlite"))
    # WAL lets readers (the web process) go on while a worker writes; the busy timeout makes
    # a writer wait for the lock instead of failing.
    DBI::dbGetQuery(store$con, "PRAGMA busy_timeout = 30000")
    DBI::dbGetQuery(store$con, "PRAGMA journal_mode = WAL")
    DBI::dbExecute(store$con, "PRAGMA synchronous = NORMAL")
  } else {
    store$kind <- "postgresql"
    store$con <- connect_postgresql(db)
  }
  store_migrate(store)
  store
}

store_close <- function(store) {
  if (!is.null(store$con)) try(DBI::dbDisconnect(store$con), silent = TRUE)
  store$con <- NULL
  invisible()
}

# "postgresql://user:password@host:port/dbname" (user, password, port optional).
connect_postgresql <- function(url) {
  if (!is.character(url) || length(url) != 1L || is.na(url)) stop("db must be one postgresql:// URL", call. = FALSE)
  m <- regmatches(url, regexec("^postgres(ql)?://(([^:@/]*)(:([^@/]*))?@)?([^:/?]*)(:([0-9]+))?/([^?]+)$", url))[[1]]
  if (!length(m)) stop("db must look like postgresql://user:password@host:port/dbname", call. = FALSE)
  args <- list(RPostgreSQL::PostgreSQL(), dbname = utils::URLdecode(m[10]))
  if (nzchar(m[7])) args$host <- m[7]
  if (nzchar(m[9])) args$port <- m[9]
  if (nzchar(m[4])) args$user <- utils::URLdecode(m[4])
  if (nzchar(m[6])) args$password <- utils::URLdecode(m[6])
  con <- tryCatch(do.call(DBI::dbConnect, args),
                  error = function(e) stop("cannot connect to the PostgreSQL database: ", conditionMessage(e), call. = FALSE))
  DBI::dbExecute(con, "SET client_min_messages = warning")
  con
}

# SQLite's locks need a file system with working POSIX advisory locks and, for WAL, shared
# memory between the processes: a local disk, or a cluster file system that provides both
# (Lustre with flock, GPFS, CephFS). NFS and SMB are refused: their locks are often broken or
# absent, and WAL's shared memory does not work across hosts at all.
check_sqlite_filesystem <- function(dir, mounts = "/proc/mounts") {
  if (!file.exists(mounts)) return(invisible())
  mounts <- tryCatch(utils::read.table(mounts, colClasses = "character", comment.char = "", quote = "")[, 2:3],
                     error = function(e) NULL)
  if (is.null(mounts)) return(invisible())
  points <- gsub("\\\\040", " ", mounts[[1]])
  inside <- vapply(points, function(p) startsWith(paste0(dir, "/"), if (p == "/") "/" else paste0(p, "/")), logical(1))
  if (!any(inside)) return(invisible())
  type <- mounts[[2]][inside][which.max(nchar(points[inside]))]
  if (type %in% c("nfs", "nfs4", "cifs", "smbfs", "smb3", "9p", "fuse.sshfs"))
    stop(sprintf(paste("the store '%s' is on a %s file system, where SQLite's locking is unsafe;",
                       "put the store on a local disk, or use PostgreSQL (serve(db = \"postgresql://...\"))"),
                 dir, type), call. = FALSE)
  invisible()
}

# Statements are written with ? placeholders. For PostgreSQL they are numbered, and a missing
# value (NA) becomes a literal NULL, since RPostgreSQL would send the text "NA".
store_statement <- function(store, sql, params) {
  params <- unname(params)
  if (store$kind != "postgresql" || !length(params)) return(list(sql = sql, params = params))
  parts <- strsplit(paste0(sql, " "), "?", fixed = TRUE)[[1]]
  if (length(parts) - 1L != length(params)) stop("internal error: placeholders and parameters differ", call. = FALSE)
  missing <- vapply(params, function(p) length(p) == 1L && is.na(p), logical(1))
  numbers <- cumsum(!missing)
  holes <- ifelse(missing, "NULL", paste0("$", numbers))
  sql <- paste0(paste0(parts[-length(parts)], holes, collapse = ""), parts[length(parts)])
  list(sql = sql, params = params[!missing])
}

store_query <- function(store, sql, ...) {
  st <- store_statement(store, sql, list(...))
  if (length(st$params)) DBI::dbGetQuery(store$con, st$sql, params = st$params) else DBI::dbGetQuery(store$con, st$sql)
}

store_execute <- function(store, sql, ...) {
  st <- store_statement(store, sql, list(...))
  if (length(st$params)) DBI::dbExecute(store$con, st$sql, params = st$params) else DBI::dbExecute(store$con, st$sql)
}

store_tables <- c(
  meta = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
  jobs = paste("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, owner TEXT,",
               "address TEXT, job TEXT NOT NULL, params TEXT NOT NULL, files TEXT NOT NULL, status TEXT NOT NULL,",
               "progress DOUBLE PRECISION NOT NULL DEFAULT 0, message TEXT, error TEXT, device TEXT,",
               "seconds DOUBLE PRECISION, attempts INTEGER NOT NULL DEFAULT 0, worker TEXT,",
               "created DOUBLE PRECISION NOT NULL, started DOUBLE PRECISION, finished DOUBLE PRECISION,",
               "heartbeat DOUBLE PRECISION, expires DOUBLE PRECISION, cancel INTEGER NOT NULL DEFAULT 0,",
               "bytes DOUBLE PRECISION NOT NULL DEFAULT 0, result TEXT)"),
  jobs_status = "CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, created)",
  jobs_owner = "CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner, created)",
  users = "CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, hash TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
  sessions = paste("CREATE TABLE IF NOT EXISTS sessions (hash TEXT PRIMARY KEY, name TEXT NOT NULL,",
                   "created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL)"),
  workers = paste("CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, host TEXT, pid INTEGER, device TEXT,",
                  "job TEXT, started DOUBLE PRECISION, heartbeat DOUBLE PRECISION)"),
  throttles = "CREATE TABLE IF NOT EXISTS throttles (key TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
  throttles_key = "CREATE INDEX IF NOT EXISTS throttles_key ON throttles (key, at)"
)

# Creates the tables of a new store; refuses a store written by a newer fsgpu. A later schema
# adds its steps here, each run once, in order, recorded in meta.
store_migrate <- function(store) {
  for (sql in store_tables) store_execute(store, sql)
  version <- store_query(store, "SELECT value FROM meta WHERE key = 'schema'")$value
  if (!length(version)) {
    store_execute(store, "INSERT INTO meta (key, value) VALUES ('schema', ?)", as.character(store_schema_version))
  } else if (as.integer(version) > store_schema_version) {
    stop(sprintf("the store '%s' was written by a newer fsgpu (schema %s; this one knows %d)", store$dir, version,
                 store_schema_version), call. = FALSE)
  }
  invisible()
}

# Random hex strings (sodium's CSPRNG): ids of 96 bits, tokens of 256 bits.
random_hex <- function(bytes) paste(format(as.hexmode(as.integer(sodium::random(bytes))), width = 2), collapse = "")
secret_hash <- function(secret) paste(format(as.hexmode(as.integer(sodium::sha256(charToRaw(secret)))), width = 2), collapse = "")

job_dir <- function(store, id) file.path(store$dir, "jobs", id)

# ---- jobs ----------------------------------------------------------------------------------

# Records a queued job whose input files are already in job_dir(store, id). Returns the token.
job_insert <- function(store, id, job, params, files, owner = NULL, address = NULL, bytes = 0, now = unclass(Sys.time())) {
  token <- random_hex(32L)
  store_execute(store, paste("INSERT INTO jobs (id, token_hash, owner, address, job, params, files, status, created, bytes)",
                             "VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)"),
                id, secret_hash(token), if (is.null(owner)) NA_character_ else owner,
                if (is.null(address)) NA_character_ else address, job,
                as.character(jsonlite::toJSON(params, auto_unbox = TRUE, null = "null", digits = NA)),
                as.character(jsonlite::toJSON(files, auto_unbox = FALSE, dataframe = "rows")), now, bytes)
  token
}

job_get <- function(store, id) {
  row <- store_query(store, "SELECT * FROM jobs WHERE id = ?", id)
  if (!nrow(row)) NULL else as.list(row)
}

# The job, when `token` is its token or `user` its owner; otherwise NULL (the API answers 404).
job_authorized <- function(store, id, token = NULL, user = NULL) {
  if (!is.character(id) || length(id) != 1L || !grepl("^[0-9a-f]{24}$", id)) return(NULL)
  job <- job_get(store, id)
  if (is.null(job)) return(NULL)
  if (!is.null(token) && nzchar(token) && identical(secret_hash(token), job$token_hash)) return(job)
  if (!is.null(user) && !is.na(job$owner) && identical(user, job$owner)) return(job)
  NULL
}

# 1-based position among the queued jobs, oldest first.
job_queue_position <- function(store, job) {
  if (job$status != "queued") return(NA_integer_)
  as.integer(store_query(store, "SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued' AND (created < ? OR (created = ? AND id <= ?))",
                         job$created, job$created, job$id)$n)
}

# Claims the oldest queued job for `worker`, atomically: one UPDATE whose WHERE rechecks the
# status, so that two workers can never both get a job (SQLite runs it under its write lock;
# PostgreSQL's FOR UPDATE SKIP LOCKED lets the other workers pass over the row being taken).
# `device` is the worker's, shown while the job runs. Returns the job, or NULL when none is queued.
job_claim <- function(store, worker, device = NA_character_, now = unclass(Sys.time())) {
  pick <- if (store$kind == "postgresql") {
    "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created, id LIMIT 1 FOR UPDATE SKIP LOCKED"
  } else {
    "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created, id LIMIT 1"
  }
  got <- store_query(store, paste0("UPDATE jobs SET status = 'running', worker = ?, device = ?, started = ?, heartbeat = ?, ",
                                   "attempts = attempts + 1, progress = 0, message = NULL WHERE id = (", pick,
                                   ") AND status = 'queued' RETURNING id"), worker, device, now, now)
  if (!nrow(got)) return(NULL)
  job_get(store, got$id[1])
}

# Progress and heartbeat of a running job; returns TRUE when the job was cancelled (or taken
# from this worker), which the worker turns into an error that stops the engine.
job_report <- function(store, id, worker, progress, message = NA_character_, now = unclass(Sys.time())) {
  store_execute(store, "UPDATE jobs SET progress = ?, message = ?, heartbeat = ? WHERE id = ? AND worker = ? AND status = 'running'",
                progress, message, now, id, worker)
  job_check(store, id, worker, heartbeat = TRUE, now = now)
}

# Whether a running job was cancelled (or taken from this worker), the question job_report()
# and the worker watching a job ask; with `heartbeat`, records the worker's and the job's
# heartbeat first.
job_check <- function(store, id, worker, heartbeat = FALSE, now = unclass(Sys.time())) {
  if (heartbeat) {
    store_execute(store, "UPDATE jobs SET heartbeat = ? WHERE id = ? AND worker = ? AND status = 'running'", now, id, worker)
    store_execute(store, "UPDATE workers SET heartbeat = ? WHERE id = ?", now, worker)
  }
  row <- store_query(store, "SELECT status, cancel, worker FROM jobs WHERE id = ?", id)
  !nrow(row) || row$cancel[1] == 1L || row$status[1] != "running" || !identical(row$worker[1], worker)
}

# Ends a running job: status done, failed or cancelled. Only the worker that holds it can.
job_finish <- function(store, id, worker, status, error = NA_character_, device = NA_character_, seconds = NA_real_,
                       result = NA_character_, bytes = NULL, retention = NULL, now = unclass(Sys.time())) {
  job <- job_get(store, id)
  if (is.null(job) || job$status != "running" || !identical(job$worker, worker)) return(invisible(FALSE))
  expires <- if (is.na(job$owner) && !is.null(retention)) now + retention else NA_real_
  store_execute(store, paste("UPDATE jobs SET status = ?, error = ?, device = ?, seconds = ?, result = ?, finished = ?,",
                             "progress = CASE WHEN ? = 'done' THEN 1 ELSE progress END, expires = ?, bytes = ?",
                             "WHERE id = ? AND worker = ? AND status = 'running'"),
                status, error, device, seconds, result, now, status, expires,
                if (is.null(bytes)) job$bytes else bytes, id, worker)
  invisible(TRUE)
}

# Cancels a queued or running job (a running one is stopped by its worker within half a second), or deletes
# a finished one with its files. Returns the new status ("deleted" for a deletion).
job_cancel_or_delete <- function(store, id, retention = 48 * 3600, now = unclass(Sys.time())) {
  job <- job_get(store, id)
  if (is.null(job)) return(NULL)
  if (job$status == "queued") {
    n <- store_execute(store, "UPDATE jobs SET status = 'cancelled', finished = ?, expires = ? WHERE id = ? AND status = 'queued'",
                       now, if (is.na(job$owner)) now + retention else NA_real_, id)
    if (n == 1L) return("cancelled")
    job <- job_get(store, id)
  }
  if (job$status == "running") {
    store_execute(store, "UPDATE jobs SET cancel = 1 WHERE id = ?", id)
    return("cancelling")
  }
  job_delete(store, id)
  "deleted"
}

job_delete <- function(store, id) {
  unlink(job_dir(store, id), recursive = TRUE)
  store_execute(store, "DELETE FROM jobs WHERE id = ?", id)
  invisible()
}

# Jobs whose worker stopped (no heartbeat for `timeout` seconds, or a local worker process found
# dead: `workers` names them) go back to the queue, unless they have had `max_attempts`: then
# they fail with the reason (`reason`, or that the worker stopped). Returns the ids re-queued and failed.
job_requeue_stale <- function(store, timeout, max_attempts, workers = character(), reason = NULL, now = unclass(Sys.time())) {
  stale <- store_query(store, "SELECT id, worker, attempts, heartbeat, cancel FROM jobs WHERE status = 'running' AND heartbeat < ?",
                       now - timeout)
  if (length(workers)) {
    dead <- store_query(store, sprintf("SELECT id, worker, attempts, heartbeat, cancel FROM jobs WHERE status = 'running' AND worker IN (%s)",
                                       paste(rep("?", length(workers)), collapse = ", ")), workers)
    stale <- unique(rbind(stale, dead))
  }
  out <- list(requeued = character(), failed = character())
  for (i in seq_len(nrow(stale))) {
    s <- stale[i, ]
    why <- if (is.null(reason)) sprintf("its worker (%s) stopped while running it", s$worker) else reason
    if (s$cancel == 1L) {
      n <- store_execute(store, "UPDATE jobs SET status = 'cancelled', finished = ? WHERE id = ? AND status = 'running' AND worker = ?",
                         now, s$id, s$worker)
    } else if (s$attempts >= max_attempts) {
      n <- store_execute(store, "UPDATE jobs SET status = 'failed', error = ?, finished = ? WHERE id = ? AND status = 'running' AND worker = ?",
                         sprintf("%s; the job was tried %d times", why, s$attempts), now, s$id, s$worker)
      if (n) out$failed <- c(out$failed, s$id)
    } else {
      n <- store_execute(store, paste("UPDATE jobs SET status = 'queued', worker = NULL, device = NULL, progress = 0,",
                                      "message = ? WHERE id = ? AND status = 'running' AND worker = ?"),
                         paste0("re-queued: ", why), s$id, s$worker)
      if (n) out$requeued <- c(out$requeued, s$id)
    }
  }
  out
}

# A clean stop of a worker (Ctrl-C of serve()): its job goes back to the queue without counting
# the attempt.
job_release <- function(store, worker) {
  store_execute(store, paste("UPDATE jobs SET status = 'queued', worker = NULL, device = NULL, progress = 0, attempts = attempts - 1,",
                             "message = 're-queued: the service stopped' WHERE status = 'running' AND worker = ?"), worker)
}

# ---- workers -------------------------------------------------------------------------------

worker_register <- function(store, id, device, now = unclass(Sys.time())) {
  store_execute(store, "DELETE FROM workers WHERE id = ?", id)
  store_execute(store, "INSERT INTO workers (id, host, pid, device, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?)",
                id, Sys.info()[["nodename"]], Sys.getpid(), device, now, now)
}

worker_beat <- function(store, id, job = NA_character_, now = unclass(Sys.time())) {
  store_execute(store, "UPDATE workers SET heartbeat = ?, job = ? WHERE id = ?", now, job, id)
}

worker_remove <- function(store, id) store_execute(store, "DELETE FROM workers WHERE id = ?", id)

# ---- users and sessions --------------------------------------------------------------------

user_name_ok <- function(name) is.character(name) && length(name) == 1L && grepl("^[A-Za-z0-9._-]{3,40}$", name)

# Creates a user with the hash of the password (see password_hash()).
user_create <- function(store, name, password, now = unclass(Sys.time())) {
  if (!user_name_ok(name)) stop("the user name must be 3 to 40 letters, digits, '.', '_' or '-'", call. = FALSE)
  if (!is.character(password) || length(password) != 1L || is.na(password) ||
      nchar(password, "bytes") < 8L || nchar(password, "bytes") > password_max_bytes)
    stop(sprintf("the password must have 8 to %d characters", password_max_bytes), call. = FALSE)
  if (nrow(store_query(store, "SELECT name FROM users WHERE name = ?", name))) stop("that user name is taken", call. = FALSE)
  store_execute(store, "INSERT INTO users (name, hash, created) VALUES (?, ?, ?)", name,
                password_hash(password, password_cost(store)), now)
  invisible(name)
}

# Whether the user exists and the password is theirs. A hash that is not this build's choice
# (an older store's scrypt, or Argon2id at another cost) is replaced by a new one while the
# password is at hand: at the first successful login after the change.
user_check <- function(store, name, password) {
  if (!user_name_ok(name) || !is.character(password) || length(password) != 1L || is.na(password) ||
      nchar(password, "bytes") > password_max_bytes) return(FALSE)
  hash <- store_query(store, "SELECT hash FROM users WHERE name = ?", name)$hash
  if (length(hash) != 1L || !password_verify(hash, password)) return(FALSE)
  cost <- password_cost(store)
  if (password_needs_rehash(hash, cost))
    # only if the hash is still the one checked (a concurrent login may have replaced it)
    store_execute(store, "UPDATE users SET hash = ? WHERE name = ? AND hash = ?", password_hash(password, cost), name, hash)
  TRUE
}

# ---- passwords -----------------------------------------------------------------------------

# Passwords are hashed with libsodium's Argon2id (src/password.cpp), in the library's string
# "$argon2id$v=19$m=65536,t=2,p=1$salt$hash", which records its random salt and its cost. The
# cost is the settings password_ops (passes) and password_memory (bytes), by default
# libsodium's preset for interactive logins: 2 passes over 64 MiB, 0.07 s of CPU here. That is
# above OWASP's minimum for Argon2id (19 MiB, 2 passes) and is chosen for where the hashing
# runs: in the web process, on the one thread that serves every request, which waits while a
# registration or a login hashes, and whose failed logins an attacker can make (throttled, per
# address and per user). Raised later, each user's hash is redone at their next login.
# (sodium::argon2() cannot be used: sodium 1.2.1 asks Argon2i for 2 passes, below its minimum
# of 3 since libsodium 1.0.15, and always fails with "pwhash failed".)
# A build without libsodium (configure did not find it) hashes with sodium::password_store():
# scrypt, in libsodium's "$7$" string, as stores written before Argon2id hold; such hashes
# still verify everywhere, and are rehashed to Argon2id at the next login where there is Argon2id.
# Passwords are taken as UTF-8 bytes (the API's JSON and forms are UTF-8).

password_max_bytes <- 1024L

password_cost <- function(store) {
  list(ops = store_setting(store, "password_ops"), memory = store_setting(store, "password_memory"))
}

password_check_type <- function(password) {
  if (!is.character(password) || length(password) != 1L || is.na(password))
    stop("the password must be one string (not NA)", call. = FALSE)
}

password_hash <- function(password, cost) {
  password_check_type(password)
  if (password_argon2_available()) password_argon2id_hash(enc2utf8(password), cost$ops, cost$memory)
  else sodium::password_store(password)
}

password_verify <- function(hash, password) {
  password_check_type(password)
  if (!is.character(hash) || length(hash) != 1L || is.na(hash)) return(FALSE)
  if (startsWith(hash, "$argon2")) {
    if (!password_argon2_available())
      stop("this fsgpu was built without libsodium and cannot check the user's Argon2id password hash; ",
           "install libsodium-dev and reinstall fsgpu", call. = FALSE)
    return(password_argon2_verify(hash, enc2utf8(password)))
  }
  # scrypt ("$7$"); sodium::password_verify() stops for a string that is not one
  isTRUE(tryCatch(sodium::password_verify(hash, password), error = function(e) FALSE))
}

password_needs_rehash <- function(hash, cost) {
  password_argon2_available() && password_argon2id_needs_rehash(hash, cost$ops, cost$memory)
}

# At serve()'s start: in a build without libsodium, says once that passwords fall back to
# scrypt; otherwise hashes once at the settings' cost, so that a cost this machine cannot pay
# stops serve() now rather than every registration.
password_startup <- function(settings) {
  if (!password_argon2_available()) {
    message("fsgpu service: this fsgpu was built without libsodium, so passwords are hashed with scrypt ",
            "(sodium::password_store()) instead of Argon2id; install libsodium-dev and reinstall fsgpu for Argon2id")
    return(invisible(FALSE))
  }
  tryCatch(password_argon2id_hash("fsgpu", settings$password_ops, settings$password_memory),
           error = function(e) stop(conditionMessage(e), call. = FALSE))
  invisible(TRUE)
}

# A new session for the user; returns the cookie's secret (the store keeps its hash only).
session_create <- function(store, name, lifetime, now = unclass(Sys.time())) {
  secret <- random_hex(32L)
  store_execute(store, "INSERT INTO sessions (hash, name, created, expires) VALUES (?, ?, ?, ?)",
                secret_hash(secret), name, now, now + lifetime)
  secret
}

session_user <- function(store, secret, now = unclass(Sys.time())) {
  if (!is.character(secret) || length(secret) != 1L || !grepl("^[0-9a-f]{64}$", secret)) return(NULL)
  name <- store_query(store, "SELECT name FROM sessions WHERE hash = ? AND expires > ?", secret_hash(secret), now)$name
  if (length(name) == 1L) name else NULL
}

session_delete <- function(store, secret) {
  if (is.character(secret) && length(secret) == 1L) store_execute(store, "DELETE FROM sessions WHERE hash = ?", secret_hash(secret))
  invisible()
}

# Bytes of a user's jobs (uploads and results), against the quota.
user_used_bytes <- function(store, name) {
  as.numeric(store_query(store, "SELECT COALESCE(SUM(bytes), 0) AS b FROM jobs WHERE owner = ?", name)$b)
}

# ---- throttles -----------------------------------------------------------------------------

# Records an event under `key` (e.g. "login-fail:address:127.0.0.1") and/or counts the events
# in the last `window` seconds.
throttle_count <- function(store, key, window, now = unclass(Sys.time())) {
  as.integer(store_query(store, "SELECT COUNT(*) AS n FROM throttles WHERE key = ? AND at > ?", key, now - window)$n)
}
throttle_add <- function(store, key, now = unclass(Sys.time())) {
  store_execute(store, "INSERT INTO throttles (key, at) VALUES (?, ?)", key, now)
}

# ---- janitor -------------------------------------------------------------------------------

# Deletes what has expired at `now`: anonymous jobs past their retention (`retention` seconds
# after they finished, unless the job records its own expiry), with their files;
# sessions, old throttle events, and uploads abandoned half way (older than a day). Returns the
# ids of the jobs deleted.
store_janitor <- function(store, retention = 48 * 3600, now = unclass(Sys.time()), throttle_window = 86400) {
  expired <- store_query(store, paste("SELECT id FROM jobs WHERE owner IS NULL AND status IN ('done', 'failed', 'cancelled')",
                                      "AND COALESCE(expires, finished + ?) < ?"), retention, now)$id
  for (id in expired) job_delete(store, id)
  # files whose job is gone (a crash between the two steps of a deletion)
  dirs <- list.files(file.path(store$dir, "jobs"))
  if (length(dirs)) {
    known <- store_query(store, "SELECT id FROM jobs")$id
    for (d in setdiff(dirs, known)) {
      info <- file.info(file.path(store$dir, "jobs", d))
      if (now - unclass(info$mtime) > 3600) unlink(file.path(store$dir, "jobs", d), recursive = TRUE)
    }
  }
  uploads <- list.files(file.path(store$dir, "uploads"), full.names = TRUE)
  old <- uploads[now - unclass(file.info(uploads)$mtime) > 86400]
  unlink(old, recursive = TRUE)
  store_execute(store, "DELETE FROM sessions WHERE expires < ?", now)
  store_execute(store, "DELETE FROM throttles WHERE at < ?", now - throttle_window)
  expired
}
