# The FeatureSelector service: serve() starts the web layer and the workers over one store.

#' Serve fsgpu's jobs to a web page and a JSON API
#'
#' `serve()` runs fsgpu as a service, after the MDFS FeatureSelector server: a web page and a
#' JSON API (on httpuv) in front of a durable job store and worker processes that call
#' [select_features()], [mi_pairs()], [discretize()], [knn_graph()] and [find_interactions()]
#' exactly as a user would, with `backend = "auto"`. It prints the addresses of the page and
#' of the API and runs until interrupted; Ctrl-C stops the web layer and the workers, and the
#' jobs that were running go back to the queue. Started again on the same store, it resumes the
#' queue. From the shell: `Rscript exec/fsgpu serve --store DIR --port N [--workers N]
#' [--host H] [--db URL]`, or `make serve`.
#'
#' @section The API:
#' All answers are JSON (`{"error": "..."}` with a 4xx/5xx status on failure) unless a file.
#' A job is reached with its token (`Authorization: Bearer TOKEN`) or by its owner's session
#' cookie; a wrong or missing token, or another user's job, is answered `404`, as a job that
#' does not exist.
#' \describe{
#'   \item{`POST /api/jobs`}{multipart form: `file` (one data file, CSV/TSV/ARFF/LibSVM,
#'     compressed with gzip, bzip2 or xz or not; or a PLINK `.bed`, `.bim` and `.fam` and
#'     optionally a phenotype file with the columns FID, IID and phenotypes), `job` (`select`,
#'     `pairs`, `discretize`, `knn`, `interactions`) and the job's parameters, named and
#'     defaulted as in R (`GET /api/jobtypes` lists them); `class` names the class column of
#'     a CSV/TSV/ARFF file (default: a column named `class`, else the last) and `id` its
#'     sample ID column, which names the samples in the results (default: found as
#'     [read_delimited()] finds it; `none` for none). `categorical` (jobs `select` and
#'     `pairs`, the R functions' `categorical`) is `auto` (the default: columns of whole
#'     numbers with few values are categories unless `nbins` or `discretize` is given),
#'     `true`, `false`, or the names of the columns to take as categories, separated by
#'     commas (checked against the file's features). Answers `201`
#'     `{"id", "token", "status": "queued"}`; `400` for bad parameters or a bad file (with the
#'     strict readers' message: file, line, column), before anything is queued; `413` past the
#'     size limit, `411` without a Content-Length, `429` past the rate limit.}
#'   \item{`GET /api/jobs/{id}`}{`status` (`queued`, `running`, `done`, `failed`,
#'     `cancelled`), `progress` (0 to 1), `message`, `error`, `device` (while running, the
#'     worker's GPU or CPU; when finished, where the job ran), `seconds`,
#'     `queue_position`, `created`, `started`, `finished` (UTC), `params`, `files`,
#'     `attempts` and, when done, `result` (`rows`, `columns`).}
#'   \item{`GET /api/jobs/{id}/result.csv`}{`write.csv(as.data.frame(result), row.names =
#'     FALSE)` (list columns, such as a discretization's cuts, as values joined by `;`); also
#'     `result.json` (the first 5,000 rows: `columns`, `rows`, `total`), `result.rds` (the R
#'     object), `script.R` (reproduces the result with fsgpu) and `plot.png` (the result's
#'     plot; 404 for jobs without one). `409` while the job is not done.}
#'   \item{`DELETE /api/jobs/{id}`}{cancels a queued or running job (a running one stops
#'     within half a second: its worker kills the process computing it) or deletes a finished one
#'     with its files.}
#'   \item{`GET /api/jobs`}{the logged-in user's jobs, newest first (`401` without a session).}
#'   \item{`POST /api/register`, `POST /api/login`, `POST /api/logout`}{JSON or form
#'     `username`, `password`; set or clear the `fsgpu_session` cookie (HttpOnly,
#'     SameSite=Strict). Failed logins are throttled per address and per user (`429`).}
#'   \item{`GET /api/me`}{`user`, `quota_bytes`, `used_bytes`, `upload_limit` (what this
#'     user, or an anonymous one, may upload now, less their uploads still arriving), `admin`, and the service's limits (see
#'     below): `anonymous_upload`, `anonymous_hours`, `user_quota`.}
#'   \item{`GET /api/admin/queue`}{for the administrators (setting `admins`): the queued and
#'     running jobs and the workers.}
#' }
#' A request that carries the session cookie and changes something must carry the header
#' `X-Fsgpu: 1` (a guard against cross-site requests). Example with curl:
#' \preformatted{
#' curl -F file=@golub.csv.gz -F job=select -F method=jmi -F k=20 http://127.0.0.1:8080/api/jobs
#' # {"id":"5c0f...","token":"9a1e...","status":"queued"}
#' curl -H "Authorization: Bearer 9a1e..." http://127.0.0.1:8080/api/jobs/5c0f...
#' curl -H "Authorization: Bearer 9a1e..." -o result.csv http://127.0.0.1:8080/api/jobs/5c0f.../result.csv
#' }
#'
#' @section Users, limits and retention:
#' Anonymous jobs are reached only through their token (256 random bits; the store keeps its
#' SHA-256 hash), may upload `anonymous_upload` bytes (2 GB) and are deleted
#' `anonymous_hours` (48) after they finish. Registered users (passwords hashed with
#' libsodium's Argon2id, see `password_ops`) see their own jobs, have `user_quota` bytes (20 GB) of uploads and
#' results and keep their jobs until they delete them. A janitor deletes expired jobs and their
#' files every `janitor_interval` seconds. Every limit is a setting: an argument of `serve()`
#' (in `...`), else a field of the file `config.dcf` in the store (e.g. `user_quota: 5e10`,
#' `admins: alice, bob`), else its default:
#' \describe{
#'   \item{`anonymous_upload`}{2e9 bytes.}
#'   \item{`user_quota`}{2e10 bytes.}
#'   \item{`anonymous_hours`}{48.}
#'   \item{`session_days`}{30: how long a login lasts.}
#'   \item{`submit_rate`}{30 submissions a minute per address, counted when an upload starts.
#'     While an upload arrives, its declared size counts against its sender's limit (an
#'     anonymous address's `anonymous_upload`, a user's quota less what is used), so that
#'     uploads sent side by side cannot pass it (`429`, until the others end).}
#'   \item{`register_rate`}{10 registrations an hour per address.}
#'   \item{`login_rate_address`, `login_rate_user`}{20 and 5 failed logins in 15 minutes per
#'     address and per user name.}
#'   \item{`heartbeat_timeout`}{600 seconds without a heartbeat before a job of a worker on
#'     another host is re-queued (local workers found dead are noticed at once).}
#'   \item{`max_attempts`}{3: a job whose worker died this many times fails with the reason.}
#'   \item{`janitor_interval`}{60 seconds.}
#'   \item{`admins`}{user names, comma-separated, who may see the queue and the workers.}
#'   \item{`secure_cookies`}{`FALSE`; `TRUE` behind an HTTPS proxy.}
#'   \item{`password_ops`, `password_memory`}{2 and 67108864 (64 MiB): the cost of a password's
#'     Argon2id hash (libsodium's `crypto_pwhash_str()`), passes over that many bytes;
#'     libsodium's preset for interactive logins, since the web process hashes while other
#'     requests wait. Raised, each user's hash is redone at their next login, as are the scrypt
#'     hashes of older stores. fsgpu built without libsodium (Debian's `libsodium-dev`; its
#'     configure says so) hashes with scrypt (`sodium::password_store()`) and says so at the start.}
#'   \item{`header_timeout`}{30 seconds for a request's line and headers (`408` past it),
#'     counted from when the server waits for them: also how long an idle keep-alive
#'     connection stays open. At most 86400 (a day), as `idle_timeout`.}
#'   \item{`idle_timeout`}{120 seconds that an upload's body or an answer's download may stall.}
#'   \item{`min_body_rate`}{65536 bytes (64 kB) a second: a request's body, an upload's
#'     included, must arrive within `header_timeout` plus its size at this rate, counted from
#'     when the server waits for it (`408` past it; a 2 GB upload has 8.5 hours), so that a
#'     client sending a byte now and then cannot hold a connection.}
#'   \item{`max_connections`}{64 connections at once.}
#'   \item{`max_connections_per_address`}{16 connections at once from one address (`503` past
#'     it; the loopback address counts like any other).}
#'   \item{`spool_limit`}{2e10 bytes of uploads arriving at once, from all callers together
#'     (`429` past it; `413` for one larger than that).}
#' }
#'
#' @section Security:
#' The server binds to 127.0.0.1 unless `host` says otherwise (put an HTTPS proxy in front of
#' it for other hosts). Uploads are streamed to disk and stored under server-chosen names in
#' the store, outside any served directory; only their extension, from a fixed list, comes from
#' the user's file name. Size limits are enforced by the server from the request's
#' Content-Length before any of the body is read (`413`; the client's unread body is drained for
#' two seconds so that it sees the answer), and the body is never read past its Content-Length;
#' uploads without a Content-Length (chunked) are refused (`411`).
#'
#' The front: the public address is served by a small HTTP/1.1 server in the package's C++
#' code, which streams an upload into a file in the store's `uploads` directory (mode 0600)
#' while reading the socket only as fast as the disk takes it, so the web process holds a few
#' hundred kB of an upload whatever its size and speed (httpuv alone reads a body as fast as it
#' arrives and queues it for R: a 1 GB upload over the loopback grew the process by 750 MB).
#' Before the body, it asks the R side whether this caller may upload that much (the session,
#' the quota and the rate limits are R's); after it, R reads the spooled body, stores the files
#' and deletes it, whatever the outcome. Every other request, of 64 kB at most, and its answer are
#' relayed to httpuv, which listens on a private port of 127.0.0.1 and refuses (`403`) every
#' request that does not carry the front's per-process random secret. The front bounds the
#' request line (8 kB), the headers (64 lines, 32 kB), the time to send them
#' (`header_timeout`, also an idle keep-alive connection's), the time a body or an answer may
#' stall (`idle_timeout`), the time a body may take (`min_body_rate`), the number of connections
#' (`max_connections` and `max_connections_per_address`, `503` past them); it drops headers whose names
#' contain `_` and keeps a connection open after an answer only where its end is known (never
#' after an upload). Every
#' download checks the token or the owner. No user input reaches a
#' shell, `eval()` or a file path. The web process checks the first lines of an upload with the
#' package's strict readers (a cheap pass; it never computes); an error further into a large file
#' fails the job with the reader's message.
#'
#' @section Workers, other hosts and clusters:
#' Each worker is a separate R process that runs one job at a time in a child R process (both
#' load fsgpu once; the child is replaced only after a cancellation, which kills it, or a
#' crash); the web process never computes and stays responsive. With GPUs, `workers = NULL` (the default)
#' starts one worker per GPU, each with `devices` set to its GPU; without, one worker. A worker
#' killed mid-job (even `kill -9`) is noticed and its job re-queued, up to `max_attempts`, then
#' failed with the reason; a full disk or a corrupt upload fails that job alone with a clear
#' error; results are written to temporary names and renamed, so a part of a result is never
#' served.
#'
#' More workers can run on other hosts with [serve_worker()] (and `serve(workers = 0)` runs the
#' web layer alone). With the embedded SQLite store, every host must mount the store directory
#' on a file system with working POSIX advisory locks *and* shared memory between the processes
#' of all hosts (SQLite's WAL mode), which in practice means one host, or a cluster file system
#' that provides coherent locking (GPFS, Lustre mounted with `flock`, CephFS); `serve()` and
#' `serve_worker()` refuse a store on NFS or SMB. With PostgreSQL (`db =
#' "postgresql://user:password@host:5432/dbname"`, Debian's `postgresql` and
#' `r-cran-rpostgresql`) the queue lives in the database, claimed with `FOR UPDATE SKIP
#' LOCKED`, and the hosts share only the store's files (NFS is then fine).
#'
#' The heaviest jobs can also reach a cluster scheduler from within a job: [mi_pairs()],
#' [knn_graph()] and [find_interactions()] take `BPPARAM`, and a worker started with
#' `options(fsgpu.service_bpparam = BiocParallel::BatchtoolsParam(workers = 50, cluster =
#' "slurm", template = "slurm.tmpl"))` in its `.Rprofile` is the way to run them as batchtools
#' jobs on Slurm, SGE, LSF or others (the tiles' results are identical to a single process's).
#' The simpler route is to start [serve_worker()] itself as a cluster job on a GPU node that
#' sees the store (and the PostgreSQL database).
#'
#' @param store The store directory: the SQLite database `fsgpu.sqlite`, the jobs' files
#'   and the optional `config.dcf`. Created when absent.
#' @param host The address to listen on: `"127.0.0.1"` (this machine only) unless told
#'   otherwise (`"0.0.0.0"`: every interface).
#' @param port The TCP port.
#' @param workers The number of local worker processes; `NULL`: one per GPU, or one without
#'   GPUs; `0`: none (workers run elsewhere, see [serve_worker()]).
#' @param db `NULL` (SQLite in the store) or a PostgreSQL URL.
#' @param ... Settings (see Users, limits and retention), e.g. `user_quota = 5e10`.
#' @return `NULL`, invisibly, when interrupted.
#' @seealso [serve_worker()]; [fsgpu_progress] for the progress the workers report.
#' @examples
#' \dontrun{
#' serve("fsgpu-store", port = 8080)
#' # in a shell:
#' # curl -F file=@data.csv -F job=select -F k=10 http://127.0.0.1:8080/api/jobs
#' }
#' @export
serve <- function(store = "fsgpu-store", host = "127.0.0.1", port = 8080, workers = NULL, db = NULL, ...) {
  umask <- Sys.umask()  # store_open() makes what the service writes private; the session gets its own back
  on.exit(Sys.umask(umask))
  service <- serve_start(store, host = host, port = port, workers = workers, db = db, ...)
  on.exit(serve_stop(service), add = TRUE, after = FALSE)
  cat(sprintf("fsgpu service: the web page at %s/\n               the API at %s/api/ (see ?fsgpu::serve)\n               store %s, %d worker%s; Ctrl-C stops\n",
              service$url, service$url, service$store$dir, length(service$workers), if (length(service$workers) == 1) "" else "s"))
  repeat {
    httpuv::service(200)
    serve_maintain(service)
  }
}

service_defaults <- list(anonymous_upload = 2e9, user_quota = 2e10, anonymous_hours = 48, session_days = 30,
                         submit_rate = 30, register_rate = 10, login_rate_address = 20, login_rate_user = 5,
                         heartbeat_timeout = 600, max_attempts = 3, janitor_interval = 60, admins = character(),
                         secure_cookies = FALSE, password_ops = 2, password_memory = 67108864,
                         header_timeout = 30, idle_timeout = 120, max_connections = 64, max_connections_per_address = 16,
                         min_body_rate = 65536, spool_limit = 2e10)

# The settings: serve()'s arguments, else config.dcf in the store, else the defaults; checked.
service_settings <- function(dir, given = list()) {
  unknown <- setdiff(names(given), names(service_defaults))
  if (length(unknown) || (length(given) && is.null(names(given))))
    stop("unknown settings: ", paste(if (length(unknown)) unknown else "(unnamed)", collapse = ", "),
         "; the settings are ", paste(names(service_defaults), collapse = ", "), call. = FALSE)
  settings <- service_defaults
  config <- file.path(dir, "config.dcf")
  if (file.exists(config)) {
    fields <- read.dcf(config, all = TRUE)
    bad <- setdiff(names(fields), names(service_defaults))
    if (length(bad)) stop(sprintf("%s: unknown settings: %s", config, paste(bad, collapse = ", ")), call. = FALSE)
    for (n in names(fields)) settings[[n]] <- fields[[n]][1]
  }
  settings[names(given)] <- given
  for (n in names(settings)) {
    v <- settings[[n]]
    settings[[n]] <- if (n == "admins") {
      if (is.character(v)) trimws(unlist(strsplit(v, ",", fixed = TRUE))) else stop("admins must be user names", call. = FALSE)
    } else if (n == "secure_cookies") {
      v <- as.logical(v)
      if (length(v) != 1L || is.na(v)) stop("secure_cookies must be TRUE or FALSE", call. = FALSE)
      v
    } else {
      x <- suppressWarnings(as.numeric(v))
      if (length(x) != 1L || is.na(x) || x < 0) stop(sprintf("the setting %s must be a non-negative number, not '%s'", n, v), call. = FALSE)
      x
    }
  }
  settings
}

# What workers on any host read: the settings, recorded in the store by serve().
store_setting <- function(store, name) {
  json <- store_query(store, "SELECT value FROM meta WHERE key = 'settings'")$value
  settings <- if (length(json)) jsonlite::fromJSON(json) else list()
  if (is.null(settings[[name]])) service_defaults[[name]] else settings[[name]]
}

store_save_settings <- function(store, settings) {
  json <- as.character(jsonlite::toJSON(settings, auto_unbox = TRUE, digits = NA))
  store_execute(store, "DELETE FROM meta WHERE key = 'settings'")
  store_execute(store, "INSERT INTO meta (key, value) VALUES ('settings', ?)", json)
}

# Starts the web layer and the workers; returns the running service (serve_stop() ends it).
serve_start <- function(store = "fsgpu-store", host = "127.0.0.1", port = 8080, workers = NULL, db = NULL, ...,
                        worker_poll = 1) {
  for (p in c("httpuv", "jsonlite", "sodium", "processx", "callr", "DBI"))
    if (!requireNamespace(p, quietly = TRUE)) stop(sprintf("serve() needs the %s package", p), call. = FALSE)
  if (!is.character(host) || length(host) != 1L || is.na(host)) stop("host must be one address", call. = FALSE)
  if (!is.numeric(port) || length(port) != 1L || is.na(port) || port != round(port) || port < 1 || port > 65535)
    stop("port must be a TCP port number", call. = FALSE)
  s <- store_open(store, db)
  started <- FALSE
  state <- NULL
  # a service that cannot start leaves nothing open: the store, then also httpuv, the front and
  # the workers started so far
  on.exit(if (!started) if (is.null(state)) store_close(s) else serve_stop(state))
  settings <- service_settings(s$dir, list(...))
  for (n in c("header_timeout", "idle_timeout"))
    if (!is.finite(settings[[n]]) || settings[[n]] <= 0 || settings[[n]] > 86400)
      stop(sprintf("%s must be a positive number of seconds, at most 86400 (a day), not %s", n, format(settings[[n]])), call. = FALSE)
  for (n in c("max_connections", "max_connections_per_address"))
    if (settings[[n]] < 1 || settings[[n]] > 1e5 || settings[[n]] != round(settings[[n]]))
      stop(sprintf("%s must be a whole number from 1 to 100000", n), call. = FALSE)
  if (!is.finite(settings$min_body_rate) || settings$min_body_rate < 1)
    stop("min_body_rate must be a finite number of bytes a second, 1 at least", call. = FALSE)
  password_startup(settings)
  store_save_settings(s, settings)
  # An administrator's name that nobody holds yet goes to whoever registers it first.
  unclaimed <- Filter(function(name) !nrow(store_query(s, "SELECT name FROM users WHERE name = ?", name)), settings$admins)
  if (length(unclaimed))
    warning(sprintf("administrators not registered yet (whoever registers these names first becomes one): %s",
                    quote_list(unclaimed)), call. = FALSE)
  if (is.null(workers)) workers <- max(1L, nrow(backend_info()$devices))
  if (!is.numeric(workers) || length(workers) != 1L || is.na(workers) || workers < 0 || workers != round(workers))
    stop("workers must be a whole number (0 for none)", call. = FALSE)
  www <- system.file("www", package = "fsgpu")
  state <- new.env(parent = emptyenv())
  state$store <- s
  state$settings <- settings
  state$www <- www
  state$db <- db
  state$poll <- worker_poll
  state$last_janitor <- 0
  state$workers <- list()
  state$inflight <- list()  # the uploads the front is receiving (see service_inflight())
  # a previous run's jobs whose workers are gone go back to the queue at once
  serve_requeue_dead(state)
  # httpuv on a private loopback port, answering the front alone (see R/serve_api.R); the front
  # on the public address. Bodies the front spooled in an earlier run that died are gone with it.
  state$secret <- random_hex(32L)
  unlink(list.files(file.path(s$dir, "uploads"), pattern = "^[0-9a-f]{32}[.]body$", full.names = TRUE))
  for (attempt in 1:20) {
    private <- httpuv::randomPort(host = "127.0.0.1")
    if (private == port) next
    state$server <- tryCatch(httpuv::startServer("127.0.0.1", private, service_app(state), quiet = TRUE), error = function(e) NULL)
    if (!is.null(state$server)) break
  }
  if (is.null(state$server)) stop("cannot listen on a private port of 127.0.0.1", call. = FALSE)
  state$front <- tryCatch(fsgpu_front_start(host, as.integer(port), as.integer(private), state$secret,
                                            file.path(s$dir, "uploads"), settings$header_timeout, settings$idle_timeout,
                                            as.integer(settings$max_connections), settings$min_body_rate,
                                            as.integer(settings$max_connections_per_address)),
                          error = function(e) stop(conditionMessage(e), call. = FALSE))
  state$url <- sprintf("http://%s:%d", if (grepl(":", host)) paste0("[", host, "]") else host, as.integer(port))
  gpus <- backend_info()$devices
  for (i in seq_len(workers)) {
    devices <- if (nrow(gpus)) gpus$id[(i - 1L) %% nrow(gpus) + 1L]
    state$workers[[i]] <- serve_spawn_worker(state, i, devices)
  }
  started <- TRUE
  state
}

# A worker process: Rscript running serve_worker() on the store; its output goes to
# logs/worker-N.log in the store.
serve_spawn_worker <- function(state, i, devices) {
  dir.create(file.path(state$store$dir, "logs"), showWarnings = FALSE)
  id <- sprintf("%s-w%d-%s", Sys.info()[["nodename"]], i, random_hex(3L))
  log <- file.path(state$store$dir, "logs", sprintf("worker-%d.log", i))
  code <- paste("a <- commandArgs(TRUE);",
                "db <- Sys.getenv('FSGPU_SERVE_DB');",
                "fsgpu::serve_worker(a[1], db = if (nzchar(db)) db, devices = if (nzchar(a[3])) as.integer(a[3]),",
                "id = a[4], poll = as.numeric(a[5]), parent = as.integer(a[6]))")
  process <- processx::process$new(
    file.path(R.home("bin"), "Rscript"),
    c("-e", code, state$store$dir, "", if (is.null(devices)) "" else as.character(devices),
      id, as.character(state$poll), as.character(Sys.getpid())),
    stdout = log, stderr = "2>&1", cleanup = TRUE,
    # the database URL may hold a password: not on the command line, which every user can read
    env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
            FSGPU_SERVE_DB = if (is.null(state$db)) "" else state$db))
  list(id = id, index = i, devices = devices, process = process)
}

# Jobs of workers that died (on this host: their process is gone; anywhere: no heartbeat for
# heartbeat_timeout seconds) go back to the queue or fail.
serve_requeue_dead <- function(state) {
  s <- state$store
  rows <- store_query(s, "SELECT id, host, pid FROM workers")
  mine <- vapply(state$workers, `[[`, "", "id")
  mine_dead <- mine[!vapply(state$workers, function(w) w$process$is_alive(), logical(1))]
  here <- rows$host == Sys.info()[["nodename"]] & !rows$id %in% mine
  alive <- vapply(rows$pid, function(pid) isTRUE(tools::pskill(pid, 0L)), logical(1))
  dead <- c(mine_dead, rows$id[here & !alive])
  # running jobs whose worker row is gone (a worker that died before registering, or an old run)
  orphans <- store_query(s, "SELECT DISTINCT worker FROM jobs WHERE status = 'running' AND worker NOT IN (SELECT id FROM workers)")$worker
  gone <- c(dead, orphans)
  job_requeue_stale(s, state$settings$heartbeat_timeout, state$settings$max_attempts, workers = gone)
  for (w in dead) worker_remove(s, w)
  invisible(gone)
}

# The web process's housekeeping, about once a second: dead workers noticed and replaced,
# their jobs re-queued; the janitor every janitor_interval seconds.
serve_maintain <- function(state, now = unclass(Sys.time())) {
  if (!is.null(state$last_maintain) && now - state$last_maintain < 1) return(invisible())
  state$last_maintain <- now
  serve_requeue_dead(state)
  for (k in seq_along(state$workers)) {
    w <- state$workers[[k]]
    if (!w$process$is_alive()) state$workers[[k]] <- serve_spawn_worker(state, w$index, w$devices)
  }
  if (now - state$last_janitor >= state$settings$janitor_interval) {
    state$last_janitor <- now
    store_janitor(state$store, retention = state$settings$anonymous_hours * 3600, now = now)
  }
  invisible()
}

# Stops the web layer, then the workers; their running jobs go back to the queue (without
# counting an attempt).
serve_stop <- function(state) {
  if (!is.null(state$front)) fsgpu_front_stop(state$front)  # its threads joined, its sockets closed
  state$front <- NULL
  if (!is.null(state$server)) try(httpuv::stopServer(state$server), silent = TRUE)
  state$server <- NULL
  for (w in state$workers) {
    if (w$process$is_alive()) {
      w$process$interrupt()
      w$process$wait(3000)
      if (w$process$is_alive()) w$process$kill()
    }
    job_release(state$store, w$id)
    worker_remove(state$store, w$id)
  }
  state$workers <- list()
  store_close(state$store)
  cat("fsgpu service: stopped\n")
  invisible()
}
