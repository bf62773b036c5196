# The service's web layer: the JSON API and the page, on httpuv, behind the front. It never
# computes: it checks requests, queues jobs in the store and serves finished files.
#
# The front (src/serve_front.cpp) listens on the public address; httpuv listens on a private
# loopback port and answers only requests that carry the front's secret (X-Fsgpu-Front-Secret),
# so nobody can bypass the front or forge its headers (the front drops every X-Fsgpu-Front-*
# header a client sends). The front relays every request to httpuv, with bodies of 64 kB at most
# and the client's address (X-Fsgpu-Front-Client), except uploads: for POST /api/jobs it first
# asks (X-Fsgpu-Front-Ask: the body's length) whether this caller may send that many bytes, which
# service_submit() answers with 204 or the refusal (401/403/413/429/400, the body unread); then
# it streams the body to uploads/NAME.body in the store, reading the socket only as fast as it
# writes the disk, and hands the file's name over (X-Fsgpu-Front-Spool), which service_submit()
# checks, parses and deletes. The 204 carries a ticket (X-Fsgpu-Front-Ticket) that holds the
# declared bytes against the caller's limits while the body arrives; the front hands it back with
# the spooled body, or releases it (X-Fsgpu-Front-Release) when the upload ends without one. Why: httpuv's I/O thread reads a body without backpressure and
# queues its chunks for R's main thread, so an upload at loopback speed waited in memory (a 1 GB
# upload grew this process by about 750 MB; bench/results/serve-load-2026-11-24.md).

service_json <- function(x, status = 200L, headers = list()) {
  list(status = as.integer(status),
       headers = c(list(`Content-Type` = "application/json; charset=utf-8", `Cache-Control` = "no-store"),
                   service_security_headers, headers),
       body = as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", na = "null", digits = NA)))
}

service_error <- function(status, message, headers = list()) service_json(list(error = message), status, headers)

service_not_found <- function() service_error(404L, "not found")

service_security_headers <- list(`X-Content-Type-Options` = "nosniff", `X-Frame-Options` = "DENY",
                                 `Referrer-Policy` = "no-referrer")

# The request's header, or NULL.
req_header <- function(req, name) {
  v <- req[[paste0("HTTP_", toupper(gsub("-", "_", name)))]]
  if (is.null(v) || !nzchar(v)) NULL else v
}

req_cookie <- function(req, name) {
  cookie <- req_header(req, "Cookie")
  if (is.null(cookie)) return(NULL)
  parts <- trimws(strsplit(cookie, ";", fixed = TRUE)[[1]])
  hit <- parts[startsWith(parts, paste0(name, "="))]
  if (length(hit)) substring(hit[1], nchar(name) + 2L) else NULL
}

req_bearer <- function(req) {
  auth <- req_header(req, "Authorization")
  if (is.null(auth) || !grepl("^Bearer [0-9a-fA-F]{16,128}$", auth)) return(NULL)
  tolower(sub("^Bearer ", "", auth))
}

# The client's address, as the front saw it (httpuv's REMOTE_ADDR is the front's).
req_address <- function(req) c(req_header(req, "X-Fsgpu-Front-Client"), "unknown")[1]

session_cookie <- function(secret, max_age, secure) {
  paste0("fsgpu_session=", secret, "; Path=/; HttpOnly; SameSite=Strict; Max-Age=", as.integer(max_age),
         if (secure) "; Secure" else "")
}

# The httpuv app of a running service (state: store, settings, www, secret).
service_app <- function(state) {
  app <- list(
    onHeaders = function(req) tryCatch(service_front_gate(state, req), error = function(e) service_error(500L, "internal error")),
    call = function(req) {
      tryCatch(service_route(state, req), error = function(e) {
        message("fsgpu service: ", conditionMessage(e))
        service_error(500L, "internal error")
      })
    }
  )
  static <- file.path(state$www, "static")
  if (dir.exists(static))
    app$staticPaths <- list(`/static` = httpuv::staticPath(static, indexhtml = FALSE, fallthrough = FALSE))
  # httpuv serves these without calling R: it checks the secret itself (403 without)
  app$staticPathOptions <- httpuv::staticPathOptions(headers = service_security_headers,
                                                     validation = sprintf('"X-Fsgpu-Front-Secret" == "%s"', state$secret))
  app
}

# Called when a request's headers are in, before its body is read: only the front may talk to
# httpuv (403 to anybody else), and it sends bodies of 64 kB at most.
service_front_gate <- function(state, req) {
  if (!identical(req_header(req, "X-Fsgpu-Front-Secret"), state$secret))
    return(service_error(403L, "requests reach the service through its public address"))
  length <- suppressWarnings(as.numeric(req_header(req, "Content-Length")))
  if (length(length) && !is.na(length) && length > 65536) return(service_error(413L, "the request is too large"))
  NULL
}

# The spooled body the front names in X-Fsgpu-Front-Spool: a server-chosen name (32 hex digits)
# of a regular file in the store's uploads directory; NULL when the header is absent. Anything
# else is an error (the front only ever sends such names).
service_front_spool <- function(state, req) {
  name <- req_header(req, "X-Fsgpu-Front-Spool")
  if (is.null(name)) return(NULL)
  if (!grepl("^[0-9a-f]{32}$", name)) stop("bad spool name", call. = FALSE)
  path <- file.path(state$store$dir, "uploads", paste0(name, ".body"))
  info <- file.info(path, extra_cols = FALSE)
  if (is.na(info$isdir) || info$isdir || nzchar(Sys.readlink(path))) stop("no such spool file", call. = FALSE)
  path
}

# How many bytes a submission may have: an anonymous upload's limit, or what is left of the
# user's quota.
service_upload_limit <- function(state, req) {
  user <- session_user(state$store, req_cookie(req, "fsgpu_session"))
  s <- state$settings
  if (is.null(user)) {
    return(list(limit = s$anonymous_upload, key = paste0("address:", req_address(req)),
                why = sprintf("the upload is larger than the %s allowed without an account", format_bytes(s$anonymous_upload))))
  }
  left <- max(0, s$user_quota - user_used_bytes(state$store, user))
  list(limit = left, key = paste0("user:", user),
       why = sprintf("the upload is larger than what is left of your quota (%s of %s)", format_bytes(left),
                     format_bytes(s$user_quota)))
}

# The bytes of the uploads the front is receiving (state$inflight: a ticket's key, bytes and the
# time it lapses), all of them or those of one key ("address:A" for anonymous callers, "user:U").
# A ticket ends when the front hands the body over or releases it; should neither come (the
# front could not reach R), it lapses when the front has given up on the body for sure.
service_inflight <- function(state, key = NULL, now = unclass(Sys.time())) {
  state$inflight <- Filter(function(t) t$expires > now, state$inflight)
  sum(0, vapply(Filter(function(t) is.null(key) || t$key == key, state$inflight), `[[`, 0, "bytes"))
}

service_inflight_start <- function(state, key, bytes, now = unclass(Sys.time())) {
  s <- state$settings
  ticket <- random_hex(16L)
  lapse <- s$header_timeout + bytes / s$min_body_rate + s$idle_timeout + 60
  state$inflight[[ticket]] <- list(key = key, bytes = bytes, expires = now + lapse)
  ticket
}

service_inflight_end <- function(state, ticket) {
  if (!is.null(ticket)) state$inflight[[ticket]] <- NULL
}

# What this caller may upload now: the limit less what of theirs is arriving.
service_me_limit <- function(state, req) {
  limit <- service_upload_limit(state, req)
  max(0, limit$limit - service_inflight(state, limit$key))
}

format_bytes <- function(b) {
  units <- c("bytes", "kB", "MB", "GB", "TB")
  i <- if (b < 1000) 1L else min(length(units), floor(log(b, 1000)) + 1L)
  if (i == 1L) sprintf("%d bytes", as.integer(b)) else sprintf("%.3g %s", b / 1000^(i - 1L), units[i])
}

service_route <- function(state, req) {
  method <- req$REQUEST_METHOD
  path <- req$PATH_INFO
  store <- state$store
  user <- session_user(store, req_cookie(req, "fsgpu_session"))
  # CSRF guard: a state-changing request that carries the session cookie must carry X-Fsgpu: 1,
  # which a cross-site form cannot send.
  if (!is.null(user) && method %in% c("POST", "DELETE", "PUT", "PATCH") && !identical(req_header(req, "X-Fsgpu"), "1"))
    return(service_error(403L, "a request with a session cookie must carry the header X-Fsgpu: 1"))
  # Without a cookie too, for the requests that set one: a cross-site form could otherwise log a
  # browser into another account (login CSRF). JSON bodies need no header: a cross-site page
  # cannot send one without a CORS preflight, which this server never grants.
  if (method == "POST" && path %in% c("/api/login", "/api/register", "/api/logout") &&
      !identical(req_header(req, "X-Fsgpu"), "1") && !startsWith(tolower(c(req_header(req, "Content-Type"), "")[1]), "application/json"))
    return(service_error(403L, "log in with a JSON body or the header X-Fsgpu: 1"))
  if (method %in% c("GET", "HEAD") && path %in% c("/", "/index.html")) return(service_page(state))
  if (!startsWith(path, "/api/")) return(service_not_found())
  parts <- strsplit(substring(path, 6L), "/", fixed = TRUE)[[1]]
  route <- paste(method, paste(ifelse(grepl("^[0-9a-f]{24}$", parts), "{id}", parts), collapse = "/"))
  switch(route,
    "POST jobs" = service_submit(state, req, user),
    "GET jobs" = if (is.null(user)) service_error(401L, "log in to list your jobs") else service_list_jobs(state, user),
    "GET jobs/{id}" = service_job_view(state, req, user, parts[2]),
    "DELETE jobs/{id}" = service_job_delete(state, req, user, parts[2]),
    "GET jobs/{id}/result.csv" = service_job_file(state, req, user, parts[2], "result.csv", "text/csv; charset=utf-8"),
    "GET jobs/{id}/result.json" = service_job_file(state, req, user, parts[2], "result.json", "application/json; charset=utf-8"),
    "GET jobs/{id}/result.rds" = service_job_file(state, req, user, parts[2], "result.rds", "application/octet-stream"),
    "GET jobs/{id}/script.R" = service_job_file(state, req, user, parts[2], "script.R", "text/plain; charset=utf-8"),
    "GET jobs/{id}/plot.png" = service_job_file(state, req, user, parts[2], "plot.png", "image/png"),
    "GET jobtypes" = service_json(c(service_job_types_json(), list(formats = service_formats_json()))),
    "POST register" = service_register(state, req),
    "POST login" = service_login(state, req),
    "POST logout" = service_logout(state, req),
    "GET me" = service_json(list(user = user, quota_bytes = if (!is.null(user)) state$settings$user_quota,
                                 used_bytes = if (!is.null(user)) user_used_bytes(store, user),
                                 upload_limit = service_me_limit(state, req),
                                 admin = !is.null(user) && user %in% state$settings$admins,
                                 anonymous_upload = state$settings$anonymous_upload,
                                 anonymous_hours = state$settings$anonymous_hours,
                                 user_quota = state$settings$user_quota)),
    "GET admin/queue" = if (!is.null(user) && user %in% state$settings$admins) service_admin_queue(state) else service_not_found(),
    service_not_found())
}

service_page <- function(state) {
  index <- file.path(state$www, "index.html")
  headers <- c(list(`Content-Type` = "text/html; charset=utf-8", `Cache-Control` = "no-cache",
                    `Content-Security-Policy` = "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"),
               service_security_headers)
  if (!file.exists(index))
    return(list(status = 200L, headers = headers,
                body = "<!doctype html><title>fsgpu</title><p>The fsgpu service is running; its JSON API is under /api/ (see ?fsgpu::serve).</p>"))
  list(status = 200L, headers = headers, body = c(file = index))
}

service_job_types_json <- function() {
  lapply(service_job_types(), function(t) list(title = t$title, `function` = t$`function`,
                                                 params = lapply(c(t$params, service_common_params), function(p) {
                                                   p[c("name", "type", "default", "choices", "help", "min", "max")]
                                                 })))
}

service_formats_json <- function() {
  c(paste0(".", service_formats), paste0(".", service_formats, ".gz"), ".bed+.bim+.fam (+ phenotype file)")
}

service_time <- function(t) if (is.null(t) || is.na(t)) NA_character_ else format(.POSIXct(t, tz = "UTC"), "%Y-%m-%dT%H:%M:%SZ")

# The JSON of a job for its owner.
service_job_json <- function(store, job) {
  files <- jsonlite::fromJSON(job$files)
  result <- if (!is.na(job$result)) jsonlite::fromJSON(job$result)
  list(id = job$id, job = job$job, status = job$status, progress = job$progress, error = job$error,
       device = job$device, seconds = job$seconds, queue_position = job_queue_position(store, job),
       created = service_time(job$created), started = service_time(job$started), finished = service_time(job$finished),
       params = jsonlite::fromJSON(job$params, simplifyVector = FALSE), files = I(files$name), message = job$message,
       attempts = job$attempts, result = result)
}

service_find_job <- function(state, req, user, id) job_authorized(state$store, id, token = req_bearer(req), user = user)

service_job_view <- function(state, req, user, id) {
  job <- service_find_job(state, req, user, id)
  if (is.null(job)) return(service_not_found())
  service_json(service_job_json(state$store, job))
}

service_job_delete <- function(state, req, user, id) {
  job <- service_find_job(state, req, user, id)
  if (is.null(job)) return(service_not_found())
  service_json(list(status = job_cancel_or_delete(state$store, id, retention = state$settings$anonymous_hours * 3600)))
}

service_job_file <- function(state, req, user, id, name, type) {
  job <- service_find_job(state, req, user, id)
  if (is.null(job)) return(service_not_found())
  if (job$status != "done") return(service_error(409L, sprintf("the job is %s, it has no results", job$status)))
  path <- file.path(job_dir(state$store, id), name)
  if (!file.exists(path)) return(service_not_found())
  download <- sprintf("%s-%s.%s", job$job, substr(id, 1, 8), sub("^.*\\.", "", name))
  list(status = 200L, headers = c(list(`Content-Type` = type, `Cache-Control` = "no-store",
                                       `Content-Disposition` = sprintf("%s; filename=\"%s\"",
                                                                       if (name %in% c("result.json", "plot.png")) "inline" else "attachment", download)),
                                  service_security_headers),
       body = c(file = path))
}

service_list_jobs <- function(state, user) {
  jobs <- store_query(state$store, "SELECT id, job, status, created, seconds, files FROM jobs WHERE owner = ? ORDER BY created DESC", user)
  service_json(I(lapply(seq_len(nrow(jobs)), function(i) list(
    id = jobs$id[i], job = jobs$job[i], status = jobs$status[i], created = service_time(jobs$created[i]),
    seconds = jobs$seconds[i], files = I(jsonlite::fromJSON(jobs$files[i])$name)))))
}

service_admin_queue <- function(state) {
  jobs <- store_query(state$store, "SELECT id, job, status, owner, progress, worker, attempts, created, started FROM jobs WHERE status IN ('queued', 'running') ORDER BY created")
  workers <- store_query(state$store, "SELECT id, host, pid, device, job, heartbeat FROM workers ORDER BY started")
  jobs$created <- vapply(jobs$created, service_time, "")
  jobs$started <- vapply(jobs$started, service_time, "")
  workers$heartbeat <- vapply(workers$heartbeat, service_time, "")
  service_json(list(jobs = jobs, workers = workers))
}

# ---- accounts ------------------------------------------------------------------------------

# The small body of a login or registration: JSON or a urlencoded form.
service_credentials <- function(req) {
  body <- req$rook.input$read(65536L)
  text <- rawToChar(body)
  type <- req_header(req, "Content-Type")
  fields <- if (!is.null(type) && startsWith(type, "application/json")) {
    tryCatch(jsonlite::fromJSON(text, simplifyVector = TRUE), error = function(e) list())
  } else {
    pairs <- strsplit(strsplit(text, "&", fixed = TRUE)[[1]], "=", fixed = TRUE)
    stats::setNames(lapply(pairs, function(p) utils::URLdecode(gsub("+", " ", if (length(p) > 1) p[2] else "", fixed = TRUE))),
                    vapply(pairs, function(p) utils::URLdecode(p[1]), ""))
  }
  one <- function(v) if (is.character(v) && length(v) == 1L && validUTF8(v)) v else ""
  list(username = one(fields$username), password = one(fields$password))
}

service_register <- function(state, req) {
  s <- state$settings
  address <- req_address(req)
  if (throttle_count(state$store, paste0("register:", address), 3600) >= s$register_rate)
    return(service_error(429L, "too many registrations from this address; try again later"))
  cred <- service_credentials(req)
  throttle_add(state$store, paste0("register:", address))
  made <- tryCatch(user_create(state$store, cred$username, cred$password), error = function(e) e)
  if (inherits(made, "error")) return(service_error(400L, conditionMessage(made)))
  secret <- session_create(state$store, cred$username, s$session_days * 86400)
  service_json(list(user = cred$username), 201L,
               list(`Set-Cookie` = session_cookie(secret, s$session_days * 86400, s$secure_cookies)))
}

# Logins are throttled per address and per user name: past the limits of failed attempts in
# 15 minutes, 429 until the window has passed (the password is not even checked).
service_login <- function(state, req) {
  s <- state$settings
  address <- req_address(req)
  cred <- service_credentials(req)
  window <- 15 * 60
  if (throttle_count(state$store, paste0("login-fail-address:", address), window) >= s$login_rate_address ||
      throttle_count(state$store, paste0("login-fail-user:", cred$username), window) >= s$login_rate_user)
    return(service_error(429L, "too many failed logins; try again in 15 minutes"))
  if (!user_check(state$store, cred$username, cred$password)) {
    throttle_add(state$store, paste0("login-fail-address:", address))
    throttle_add(state$store, paste0("login-fail-user:", cred$username))
    return(service_error(401L, "wrong user name or password"))
  }
  secret <- session_create(state$store, cred$username, s$session_days * 86400)
  service_json(list(user = cred$username), 200L,
               list(`Set-Cookie` = session_cookie(secret, s$session_days * 86400, s$secure_cookies)))
}

service_logout <- function(state, req) {
  session_delete(state$store, req_cookie(req, "fsgpu_session"))
  service_json(list(user = NULL), 200L, list(`Set-Cookie` = session_cookie("", 0, state$settings$secure_cookies)))
}

# ---- submissions ---------------------------------------------------------------------------

# POST /api/jobs, in two requests from the front: the question (X-Fsgpu-Front-Ask: the body's
# length), answered 204 when the body may come or with the refusal; then the spooled body
# (X-Fsgpu-Front-Spool), parsed here and deleted whatever happens.
service_submit <- function(state, req, user) {
  s <- state$settings
  store <- state$store
  address <- req_address(req)
  # an upload that ended without a body (a client gone or too slow, the disk full)
  if (!is.null(release <- req_header(req, "X-Fsgpu-Front-Release"))) {
    service_inflight_end(state, release)
    return(list(status = 204L, headers = list(), body = ""))
  }
  spool <- tryCatch(service_front_spool(state, req), error = function(e) e)
  if (inherits(spool, "error")) return(service_error(400L, "bad upload"))
  if (!is.null(spool)) {
    on.exit(unlink(spool), add = TRUE)
    service_inflight_end(state, req_header(req, "X-Fsgpu-Front-Ticket"))  # the body is here: counted below as the job's
  }
  declared <- if (!is.null(spool)) file.size(spool) else suppressWarnings(as.numeric(c(req_header(req, "X-Fsgpu-Front-Ask"), NA)[1]))
  if (is.na(declared)) return(service_error(400L, "bad upload"))
  limit <- service_upload_limit(state, req)
  if (declared > limit$limit) return(service_error(413L, limit$why))
  if (declared > s$spool_limit)
    return(service_error(413L, sprintf("the upload is larger than the %s this server takes at once", format_bytes(s$spool_limit))))
  # the ask: the submission counts from here, and its bytes count against the caller's limit and
  # the server's until the body is handed over or released, so that uploads sent side by side
  # cannot pass the rate limit or the quota, nor pile up on the disk
  if (is.null(spool) && throttle_count(store, paste0("submit:", address), 60) >= s$submit_rate)
    return(service_error(429L, sprintf("too many submissions from this address (at most %d a minute); try again later", s$submit_rate)))
  type <- req_header(req, "Content-Type")
  boundary <- if (!is.null(type)) regmatches(type, regexec("^multipart/form-data;.*boundary=\"?([^\";]+)\"?", type))[[1]][2]
  if (is.null(boundary) || is.na(boundary) || nchar(boundary) > 200L)
    return(service_error(400L, "send the job as multipart/form-data (curl -F file=@data.csv -F job=select ...)"))
  if (is.null(spool)) {
    if (declared > limit$limit - service_inflight(state, limit$key))
      return(service_error(429L, sprintf("%s are still arriving and take what is left of the limit; try again when they are done",
                                         if (is.null(user)) "other uploads from this address" else "other uploads of yours")))
    if (declared > s$spool_limit - service_inflight(state))
      return(service_error(429L, "the server is receiving too many uploads; try again later"))
    throttle_add(store, paste0("submit:", address))
    ticket <- service_inflight_start(state, limit$key, declared)
    return(list(status = 204L, headers = list(`X-Fsgpu-Front-Ticket` = ticket), body = ""))  # the front may send the body
  }
  dir <- file.path(store$dir, "uploads", random_hex(12L))
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  body <- file(spool, "rb")
  form <- tryCatch(parse_multipart(list(read = function(n) readBin(body, "raw", n)), boundary, dir, limit$limit),
                   error = function(e) e)
  close(body)
  if (inherits(form, "error")) {
    status <- if (inherits(form, "fsgpu_too_large")) 413L else 400L
    return(service_error(status, if (status == 413L) limit$why else conditionMessage(form)))
  }
  if (!length(form$files)) return(service_error(400L, "no file: send the data as the form field 'file'"))
  fields <- form$fields
  outcome <- tryCatch({
    if (is.null(fields$job)) stop("say which job to run: job = select, pairs, discretize, knn or interactions", call. = FALSE)
    params <- service_params(fields$job, fields[names(fields) != "job"])
    names <- vapply(form$files, `[[`, "", "filename")
    roles <- service_file_roles(names)
    for (i in seq_along(form$files))
      if (!file.rename(form$files[[i]]$path, file.path(dir, roles$stored[i]))) stop("cannot store the upload", call. = FALSE)
    params <- service_validate(dir, roles, params)
    list(params = params, roles = roles)
  }, error = function(e) e)
  if (inherits(outcome, "error")) return(service_error(400L, conditionMessage(outcome)))
  roles <- outcome$roles
  roles$size <- file.size(file.path(dir, roles$stored))
  bytes <- sum(roles$size)
  id <- random_hex(12L)
  if (!file.rename(dir, job_dir(store, id))) return(service_error(500L, "cannot store the upload"))
  token <- job_insert(store, id, fields$job, outcome$params, roles[c("name", "role", "stored", "size")], owner = user,
                      address = address, bytes = bytes)
  service_json(list(id = id, token = token, status = "queued"), 201L)
}

# `n` bytes of `x` from `from`: through a raw connection, a copy of memory, several times faster
# than `x[from:(from + n - 1)]`, which builds an index of `n` integers first (the multipart
# parser copies every byte of an upload this way).
raw_slice <- function(x, from, n) {
  if (n <= 0L) return(raw())
  con <- rawConnection(x)
  on.exit(close(con))
  seek(con, from - 1L)
  readBin(con, "raw", n)
}

# Reads a multipart/form-data body from `input` (a rook input stream) in 1 MB pieces: file
# parts are written to files in `dir` under server-chosen names (part-1, part-2, ...), text
# fields are kept (64 kB at most each). More than `limit` bytes of files is an error of class
# fsgpu_too_large. Returns list(fields = named list of strings, files = list of
# list(field, filename, path)). The buffer is read from an offset (`pos`), so that each byte
# is copied a bounded number of times whatever the size of the part.
parse_multipart <- function(input, boundary, dir, limit, chunk = 2^20) {
  delim <- charToRaw(paste0("\r\n--", boundary))
  nd <- length(delim)
  crlf2 <- charToRaw("\r\n\r\n")
  # the body starts with "--boundary": a CRLF in front makes every delimiter look the same
  buf <- c(charToRaw("\r\n"), input$read(chunk))
  pos <- 1L
  eof <- FALSE
  more <- function() {
    if (eof) return(FALSE)
    piece <- input$read(chunk)
    if (!length(piece)) {
      eof <<- TRUE
      return(FALSE)
    }
    buf <<- c(if (pos <= length(buf)) raw_slice(buf, pos, length(buf) - pos + 1L), piece)
    pos <<- 1L
    TRUE
  }
  avail <- function() length(buf) - pos + 1L
  find <- function(pattern) {
    if (avail() < length(pattern)) return(integer())
    grepRaw(pattern, buf, offset = pos, fixed = TRUE)
  }
  bytes <- function(n) raw_slice(buf, pos, n)
  bad <- function(why) stop("malformed multipart body: ", why, call. = FALSE)
  dashes <- charToRaw("--")
  fields <- list()
  files <- list()
  file_bytes <- 0
  # the preamble, up to the first delimiter
  repeat {
    at <- find(delim)
    if (length(at)) break
    if (avail() > 65536L || !more()) bad("no boundary")
  }
  pos <- at[1] + nd
  repeat {
    while (avail() < 2L) if (!more()) bad("truncated")
    if (identical(bytes(2L), dashes)) break  # the closing delimiter
    # the part's headers
    repeat {
      end <- find(crlf2)
      if (length(end)) break
      if (avail() > 16384L || !more()) bad("part headers too long or truncated")
    }
    head <- rawToChar(buf[pos:(end[1] - 1L)])
    pos <- end[1] + 4L
    disposition <- regmatches(head, regexec("(?i)content-disposition:[^\r\n]*", head, perl = TRUE))[[1]]
    if (!length(disposition)) bad("a part without Content-Disposition")
    name <- regmatches(disposition, regexec("[; ]name=\"([^\"]*)\"", disposition))[[1]][2]
    filename <- regmatches(disposition, regexec("filename=\"([^\"]*)\"", disposition))[[1]][2]
    if (is.na(name)) bad("a part without a name")
    is_file <- !is.na(filename)
    if (is_file) {
      if (length(files) >= 8L) stop("at most 8 files in one job", call. = FALSE)
      path <- file.path(dir, paste0("part-", length(files) + 1L))
      out <- file(path, "wb")
    } else {
      value <- raw()
    }
    # the part's content, up to the next delimiter
    repeat {
      at <- find(delim)
      take <- if (length(at)) at[1] - pos else max(0L, avail() - nd + 1L)
      if (take > 0L) {
        if (is_file) {
          file_bytes <- file_bytes + take
          if (file_bytes > limit) {
            close(out)
            stop(structure(class = c("fsgpu_too_large", "error", "condition"), list(message = "too large", call = NULL)))
          }
          writeBin(bytes(take), out)
        } else {
          if (length(value) + take > 65536L) stop(sprintf("the form field '%s' is too long", name), call. = FALSE)
          value <- c(value, bytes(take))
        }
        pos <- pos + take
      }
      if (length(at)) break
      if (!more()) {
        if (is_file) close(out)
        bad("truncated")
      }
    }
    pos <- pos + nd
    if (is_file) {
      close(out)
      if (nzchar(filename)) files[[length(files) + 1L]] <- list(field = name, filename = filename, path = path)
    } else {
      text <- rawToChar(value)
      if (!validUTF8(text)) stop(sprintf("the form field '%s' is not UTF-8 text", name), call. = FALSE)
      if (!is.null(fields[[name]])) stop(sprintf("the form field '%s' is given twice", name), call. = FALSE)
      fields[[name]] <- text
    }
    # after a delimiter: CRLF and the next part, or "--"
    while (avail() < 2L) if (!more()) bad("truncated")
    if (identical(bytes(2L), charToRaw("\r\n"))) pos <- pos + 2L
  }
  list(fields = fields, files = files)
}
