# The service's front (src/serve_front.cpp) with real sockets on 127.0.0.1: limits, timeouts,
# disconnects, keep-alive, and httpuv's private port refusing anybody but the front.

front_server <- NULL
front_store <- NULL
setup_front <- function() {
  skip_without_service()
  skip_on_cran()
  skip_if_not(file.exists("/proc/self/net/tcp"), "needs Linux's /proc")
  if (is.null(front_server)) {
    front_store <<- tempfile("store-")
    dir.create(front_store)
    front_server <<- serve_background(front_store, workers = 0, anonymous_upload = 1e6, submit_rate = 1000,
                                      header_timeout = 1, idle_timeout = 1)
  }
  front_server
}

# A raw TCP connection to the front.
front_connect <- function(port = front_server$port) socketConnection("127.0.0.1", port, blocking = TRUE, open = "r+b", timeout = 20)

front_send <- function(con, ...) {
  for (x in list(...)) writeBin(if (is.raw(x)) x else charToRaw(x), con)
  flush(con)
}

# One answer from the connection: list(status, headers (names in lower case), body as text);
# NULL when the server closed the connection without one.
front_read <- function(con) {
  line <- readLines(con, n = 1L, warn = FALSE)
  if (!length(line)) return(NULL)
  headers <- list()
  repeat {
    h <- readLines(con, n = 1L, warn = FALSE)
    if (!length(h) || !nzchar(h)) break
    headers[[tolower(sub(":.*", "", h))]] <- sub("^[^:]*:\\s*", "", h)
  }
  n <- as.integer(headers[["content-length"]])
  body <- if (length(n) && n > 0) rawToChar(readBin(con, "raw", n)) else ""
  list(status = as.integer(strsplit(line, " ")[[1]][2]), headers = headers, body = body)
}

# What the server sends before it closes the connection (an empty raw vector: nothing).
front_rest <- function(con) {
  out <- raw()
  repeat {
    piece <- tryCatch(readBin(con, "raw", 65536L), error = function(e) raw())
    if (!length(piece)) return(out)
    out <- c(out, piece)
  }
}

front_request <- function(method, path, headers = character(), body = "") {
  paste0(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n", paste0(headers, "\r\n", collapse = ""),
         if (nzchar(body)) sprintf("Content-Length: %d\r\n", nchar(body, "bytes")), "\r\n", body)
}

# The head of a multipart upload of one CSV file, and its tail.
front_multipart <- function(boundary = "XyZ") {
  list(type = paste0("Content-Type: multipart/form-data; boundary=", boundary),
       head = paste0("--", boundary, "\r\nContent-Disposition: form-data; name=\"job\"\r\n\r\nselect\r\n--", boundary,
                     "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"d.csv\"\r\nContent-Type: text/csv\r\n\r\n"),
       tail = paste0("\r\n--", boundary, "--\r\n"))
}

spool_files <- function() list.files(file.path(front_store, "uploads"), all.files = TRUE, no.. = TRUE)

wait_for <- function(condition, timeout = 30) {
  t0 <- Sys.time()
  while (!isTRUE(condition()) && as.numeric(Sys.time() - t0, units = "secs") < timeout) Sys.sleep(0.1)
  isTRUE(condition())
}

# The loopback ports process `pid` listens on (Linux: its sockets' inodes in /proc/net/tcp).
listening_ports <- function(pid) {
  inodes <- sub("^socket:\\[([0-9]+)\\]$", "\\1", Sys.readlink(list.files(sprintf("/proc/%d/fd", pid), full.names = TRUE)))
  tcp <- utils::read.table(sprintf("/proc/%d/net/tcp", pid), header = FALSE, skip = 1, colClasses = "character", fill = TRUE)
  mine <- tcp[tcp$V4 == "0A" & tcp$V10 %in% inodes, ]
  strtoi(sub("^.*:", "", mine$V2), 16L)
}

test_that("uploads and other requests pass through the front; httpuv's private port refuses anybody else", {
  s <- setup_front()
  r <- serve_submit(s, serve_toy_csv(), "select", k = 3)
  expect_identical(r$status, 201L)
  expect_identical(serve_request(paste0(s$url, "/api/jobs/", r$body$id), token = r$body$token)$body$status, "queued")
  expect_identical(serve_request(paste0(s$url, "/static/app.js"), raw = TRUE)$status, 200L)
  # the client's address reaches R (for the per-address limits) through the front
  db <- DBI::dbConnect(RSQLite::SQLite(), file.path(front_store, "fsgpu.sqlite"))
  expect_identical(DBI::dbGetQuery(db, "SELECT address FROM jobs WHERE id = ?", params = list(r$body$id))$address, "127.0.0.1")
  DBI::dbDisconnect(db)
  ports <- listening_ports(s$process$get_pid())
  expect_true(s$port %in% ports)
  private <- setdiff(ports, s$port)
  expect_length(private, 1L)
  direct <- sprintf("http://127.0.0.1:%d", private)
  for (path in c("/api/me", "/api/jobtypes", "/static/app.js", "/"))
    expect_identical(serve_request(paste0(direct, path), raw = TRUE)$status, 403L, info = path)
  forged <- serve_request(paste0(direct, "/api/me"), headers = c(`X-Fsgpu-Front-Secret` = strrep("0", 64),
                                                                 `X-Fsgpu-Front-Client` = "10.0.0.1"))
  expect_identical(forged$status, 403L)
  # a submission straight to httpuv, spool name and all, gets nowhere either
  r <- serve_submit(list(url = direct), serve_toy_csv(), "select", headers = c(`X-Fsgpu-Front-Spool` = strrep("a", 32)))
  expect_identical(r$status, 403L)
  expect_length(spool_files(), 0L)
})

test_that("a forged spool name is refused: the front drops such headers, R checks the name", {
  s <- setup_front()
  # through the front, a client's X-Fsgpu-Front-* headers (and look-alikes with '_') are dropped
  victim <- file.path(front_store, "uploads", paste0(strrep("b", 32), ".body"))
  writeLines("not yours", victim)
  on.exit(unlink(victim))
  r <- serve_submit(s, serve_toy_csv(), "select", k = 2,
                    headers = c(`X-Fsgpu-Front-Spool` = strrep("b", 32), `X_Fsgpu_Front_Spool` = strrep("b", 32),
                                `X-Fsgpu-Front-Ask` = "1"))
  expect_identical(r$status, 201L)
  expect_true(file.exists(victim))
  # R's check of the name, on the request the front would send
  dir <- tempfile("spool-store-")
  dir.create(file.path(dir, "uploads"), recursive = TRUE)
  state <- list(store = list(dir = dir))
  req <- function(name) list2env(list(HTTP_X_FSGPU_FRONT_SPOOL = name))
  good <- strrep("c", 32)
  writeLines("x", file.path(dir, "uploads", paste0(good, ".body")))
  expect_identical(fsgpu:::service_front_spool(state, req(good)), file.path(dir, "uploads", paste0(good, ".body")))
  expect_null(fsgpu:::service_front_spool(state, new.env()))
  for (bad in c("../../etc/passwd", paste0("../", good), toupper(good), paste0(good, "0"), strrep("d", 32)))
    expect_error(fsgpu:::service_front_spool(state, req(bad)), "spool", info = bad)
  dir.create(file.path(dir, "uploads", paste0(strrep("e", 32), ".body")))
  expect_error(fsgpu:::service_front_spool(state, req(strrep("e", 32))), "no such spool file")
  file.symlink("/etc/hostname", file.path(dir, "uploads", paste0(strrep("f", 32), ".body")))
  expect_error(fsgpu:::service_front_spool(state, req(strrep("f", 32))), "no such spool file")
})

test_that("an oversize body is refused at the limit with 413, and nothing is left on disk", {
  s <- setup_front()
  m <- front_multipart()
  jobs_before <- length(list.files(file.path(front_store, "jobs")))
  con <- front_connect()
  on.exit(close(con))
  # 2 MB declared, the limit is 1 MB: refused from the headers, before any of the body is read,
  # and the body the client sends anyway is drained (the client sees the answer, no reset)
  front_send(con, front_request("POST", "/api/jobs", c(m$type, "Content-Length: 2000000")), m$head)
  front_send(con, as.raw(rep(65L, 1e6)))
  r <- front_read(con)
  expect_identical(r$status, 413L)
  expect_match(r$body, "larger than")
  expect_identical(r$headers$connection, "close")
  expect_length(spool_files(), 0L)
  # curl, waiting for 100 Continue or not
  big <- tempfile(fileext = ".csv")
  writeBin(as.raw(rep(65L, 1.2e6)), big)
  for (expect in c("100-continue", "")) {
    r <- serve_submit(s, big, "select", headers = c(Expect = expect))
    expect_identical(r$status, 413L)
  }
  expect_length(spool_files(), 0L)
  expect_identical(length(list.files(file.path(front_store, "jobs"))), jobs_before)
})

test_that("a body shorter than its Content-Length, a client gone mid-upload, a stalled upload: no spool file left", {
  s <- setup_front()
  m <- front_multipart()
  # the client closes after half of its body
  con <- front_connect()
  front_send(con, front_request("POST", "/api/jobs", c(m$type, "Content-Length: 900000")), m$head, strrep("1,2,a\n", 70000))
  expect_true(wait_for(function() length(spool_files()) == 1L))  # the body is being spooled
  close(con)
  expect_true(wait_for(function() !length(spool_files())))
  # the client stalls mid-body: 408 after idle_timeout (1 s here), and the spool file is gone
  con <- front_connect()
  front_send(con, front_request("POST", "/api/jobs", c(m$type, "Content-Length: 900000")), m$head, strrep("1,2,a\n", 1000))
  r <- front_read(con)
  close(con)
  expect_identical(r$status, 408L)
  expect_length(spool_files(), 0L)
  # a complete body that is not a proper multipart one: 400 from R's parser, the spool file deleted
  con <- front_connect()
  body <- paste0(m$head, "1,2,a\n")  # no closing boundary
  front_send(con, front_request("POST", "/api/jobs", m$type, body))
  r <- front_read(con)
  close(con)
  expect_identical(r$status, 400L)
  expect_match(r$body, "truncated")
  expect_length(spool_files(), 0L)
  # and the server is fine
  expect_identical(serve_request(paste0(s$url, "/api/me"))$status, 200L)
  expect_identical(serve_submit(s, serve_toy_csv(), "select")$status, 201L)
})

test_that("slow or oversized headers are refused; chunked uploads get 411", {
  s <- setup_front()
  con <- front_connect()
  front_send(con, "GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
  r <- front_read(con)
  expect_identical(r$status, 408L)
  expect_length(front_rest(con), 0L)
  close(con)
  ask <- function(request) {
    con <- front_connect()
    on.exit(close(con))
    front_send(con, request)
    front_read(con)
  }
  expect_identical(ask(front_request("GET", "/api/me", sprintf("X-Pad-%d: 1", 1:100)))$status, 431L)
  expect_identical(ask(front_request("GET", "/api/me", paste0("X-Pad: ", strrep("a", 40000))))$status, 431L)
  expect_identical(ask(front_request("GET", paste0("/api/", strrep("a", 9000))))$status, 414L)
  expect_identical(ask("GET /api/me HTTP/2.0\r\n\r\n")$status, 505L)
  expect_identical(ask("GET /api/me HTTP/1.1\r\nBad Header: 1\r\n\r\n")$status, 400L)
  expect_identical(ask("GET /api/me HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")$status, 400L)
  expect_identical(ask("GET /api/me HTTP/1.1\r\nContent-Length: -1\r\n\r\n")$status, 400L)
  r <- ask(paste0("POST /api/jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n", front_multipart()$type, "\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
  expect_identical(r$status, 411L)
  expect_identical(ask(front_request("POST", "/api/jobs", front_multipart()$type))$status, 411L)  # no Content-Length
  expect_identical(ask(front_request("POST", "/api/login", "Content-Type: application/json", strrep(" ", 70000)))$status, 413L)
  expect_identical(serve_request(paste0(s$url, "/api/me"))$status, 200L)
  # a second service on the same port: a clear error, and the first one is fine
  old <- Sys.umask()
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0), sprintf("cannot listen on 127.0.0.1 port %d", s$port))
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, header_timeout = 0), "must be a positive number")
  # infinite or huge timeouts (the front's deadlines overflowed: a GET got an empty reply), from
  # the arguments or from config.dcf
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, header_timeout = Inf),
               "header_timeout must be a positive number of seconds, at most 86400")
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, idle_timeout = 1e12),
               "idle_timeout must be a positive number of seconds, at most 86400")
  configured <- tempfile("store-")
  dir.create(configured)
  writeLines("idle_timeout: Inf", file.path(configured, "config.dcf"))
  expect_error(fsgpu:::serve_start(configured, port = s$port, workers = 0), "idle_timeout must be a positive number")
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, max_connections_per_address = 0),
               "max_connections_per_address must be a whole number from 1")
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, min_body_rate = 0), "min_body_rate must be")
  expect_error(fsgpu:::serve_start(tempfile("store-"), port = s$port, workers = 0, max_connections = 0.5), "whole number from 1")
  Sys.umask(old)
  expect_identical(serve_request(paste0(s$url, "/api/me"))$status, 200L)
})

test_that("keep-alive: requests one after another and pipelined on one connection; none after an upload", {
  s <- setup_front()
  con <- front_connect()
  on.exit(close(con))
  for (i in 1:3) {
    front_send(con, front_request("GET", "/api/me"))
    r <- front_read(con)
    expect_identical(r$status, 200L)
    expect_identical(r$headers$connection, "keep-alive")
    expect_null(jsonlite::fromJSON(r$body)$user)
  }
  # pipelined, a request with a body among them: the body is not taken for a request
  login <- front_request("POST", "/api/login", "Content-Type: application/json",
                         '{"username":"nobody","password":"GET /api/jobtypes HTTP/1.1"}')
  front_send(con, front_request("GET", "/api/me"), login, front_request("GET", "/api/jobtypes"))
  expect_identical(front_read(con)$status, 200L)
  expect_identical(front_read(con)$status, 401L)
  r <- front_read(con)
  expect_identical(r$status, 200L)
  expect_true("select" %in% names(jsonlite::fromJSON(r$body)))
  # an upload ends the connection: what follows it on the same connection is never read
  m <- front_multipart()
  body <- paste0(m$head, paste(readLines(serve_toy_csv()), collapse = "\n"), m$tail)
  front_send(con, front_request("POST", "/api/jobs", m$type, body), front_request("GET", "/api/me"))
  r <- front_read(con)
  expect_identical(r$status, 201L)
  expect_identical(r$headers$connection, "close")
  expect_length(front_rest(con), 0L)
  # HTTP/1.0 without keep-alive: closed after the answer
  con2 <- front_connect()
  front_send(con2, "GET /api/me HTTP/1.0\r\n\r\n")
  expect_identical(front_read(con2)$status, 200L)
  expect_length(front_rest(con2), 0L)
  close(con2)
})

test_that("the front stops with serve(), with connections open; a second serve() in the same process works; past max_connections, 503", {
  skip_without_service()
  skip_on_cran()
  libs <- .libPaths()
  port1 <- serve_free_port()
  port2 <- serve_free_port()
  p <- callr::r_bg(function(libs, port1, port2) {
    .libPaths(libs)
    answers <- integer()
    for (port in c(port1, port1, port2)) {
      service <- fsgpu:::serve_start(tempfile("store-"), port = port, workers = 0, max_connections = 2)
      pending <- TRUE
      curl::multi_add(curl::new_handle(url = sprintf("http://127.0.0.1:%d/api/me", port), forbid_reuse = TRUE),
                      done = function(r) { answers <<- c(answers, r$status_code); pending <<- FALSE },
                      fail = function(e) pending <<- FALSE)
      while (pending) {
        httpuv::service(10)
        curl::multi_run(timeout = 0.01, poll = TRUE)
      }
      # two idle connections fill the front; a third is turned away; stopping ends the two
      Sys.sleep(0.5)  # the finished request's connection thread ends first
      idle <- lapply(1:2, function(i) socketConnection("127.0.0.1", port, blocking = TRUE, open = "r+b", timeout = 20))
      third <- socketConnection("127.0.0.1", port, blocking = TRUE, open = "r+b", timeout = 20)
      answers <- c(answers, as.integer(strsplit(readLines(third, n = 1L), " ")[[1]][2]))
      close(third)
      fsgpu:::serve_stop(service)
      for (con in idle) {
        answers <- c(answers, length(readBin(con, "raw", 1L)))  # closed by the front: nothing
        close(con)
      }
    }
    answers
  }, args = list(libs = libs, port1 = port1, port2 = port2))
  p$wait(120000)
  expect_identical(p$get_result(), rep(c(200L, 503L, 0L, 0L), 3))
})

test_that("a service that cannot start its workers leaves nothing behind: the port is free again", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  dir.create(store)
  writeLines("not a directory", file.path(store, "logs"))  # the workers' logs cannot be opened
  port <- serve_free_port()
  old <- Sys.umask()
  on.exit(Sys.umask(old))
  expect_error(utils::capture.output(fsgpu:::serve_start(store, port = port, workers = 1)))
  # the front and httpuv are stopped: the port can be taken
  ok <- tryCatch({
    httpuv::stopServer(httpuv::startServer("127.0.0.1", port, list(call = function(req) list(status = 200L, headers = list(), body = ""))))
    TRUE
  }, error = function(e) FALSE)
  expect_true(ok)
})

# Reads what the server has sent on a non-blocking connection (raw(0): nothing yet).
front_poll <- function(con) tryCatch(readBin(con, "raw", 65536L), error = function(e) raw())

test_that("a body sent a byte now and then is cut off at its deadline", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  dir.create(store)
  # each byte comes well within idle_timeout: only the body's overall deadline (header_timeout
  # plus 100 bytes at min_body_rate) can end it
  s <- serve_background(store, workers = 0, header_timeout = 2, idle_timeout = 5)
  on.exit(serve_stop_background(s))
  con <- socketConnection("127.0.0.1", s$port, blocking = FALSE, open = "r+b", timeout = 20)
  front_send(con, "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
  answer <- raw()
  for (i in 1:30) {  # 15 s at most: without a deadline the body would take 50 s
    front_send(con, "a")
    Sys.sleep(0.5)
    answer <- front_poll(con)
    if (length(answer)) break
  }
  close(con)
  expect_match(rawToChar(answer), "^HTTP/1.1 408 ")
  expect_lt(i, 30)
  expect_true(wait_for(function() serve_request(paste0(s$url, "/api/me"))$status == 200L))
})

test_that("connections from one address are capped", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  dir.create(store)
  s <- serve_background(store, workers = 0, max_connections = 8, max_connections_per_address = 2, header_timeout = 2)
  on.exit(serve_stop_background(s))
  Sys.sleep(3)  # the keep-alive connection of serve_background()'s first request is closed by now
  # two connections from this address fill its share; a third is turned away, at once
  idle <- lapply(1:2, function(i) front_connect(s$port))
  third <- front_connect(s$port)
  r <- front_read(third)
  close(third)
  expect_identical(r$status, 503L)
  expect_match(r$body, "from this address")
  for (con in idle) close(con)
  expect_true(wait_for(function() serve_request(paste0(s$url, "/api/me"))$status == 200L))
})

test_that("uploads side by side count against the rate limit and the upload limit from the ask on", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  dir.create(store)
  s <- serve_background(store, workers = 0, anonymous_upload = 1e6, user_quota = 1e6, submit_rate = 4, header_timeout = 5,
                        idle_timeout = 5)
  on.exit(serve_stop_background(s))
  spooled <- function() length(list.files(file.path(store, "uploads"), pattern = "[.]body$"))
  m <- front_multipart()
  start <- function(bytes, headers = character()) {
    con <- front_connect(s$port)
    front_send(con, front_request("POST", "/api/jobs", c(m$type, headers, sprintf("Content-Length: %d", bytes))), m$head)
    con
  }
  # While `first` is arriving, a second upload of `bytes` is refused before its body (429, a
  # message matching `why`); then the first goes, and nothing of it stays spooled.
  second_refused <- function(first, bytes, why, headers = character()) {
    force(first)  # the first upload starts here, before the wait
    expect_true(wait_for(function() spooled() == 1L))
    second <- start(bytes, headers)
    r <- front_read(second)
    close(second)
    expect_identical(r$status, 429L)
    expect_match(r$body, why)
    close(first)
    expect_true(wait_for(function() spooled() == 0L))
  }
  # one upload of 900 kB is arriving: a second one from the same address does not fit the 1 MB
  # an anonymous caller may send; the first one gone, its bytes count no more
  a <- start(900000)
  expect_true(wait_for(function() spooled() == 1L))
  expect_equal(serve_request(paste0(s$url, "/api/me"))$body$upload_limit, 1e5)
  second_refused(a, 900000, "still arriving")
  expect_identical(serve_submit(s, serve_toy_csv(), "select")$status, 201L)
  # a user's quota the same way: what is arriving counts as used
  r <- serve_request(paste0(s$url, "/api/register"), "POST", json = list(username = "carol", password = "password-c"))
  expect_identical(r$status, 201L)
  cookie <- c(paste0("Cookie: ", sub(";.*", "", r$headers[["set-cookie"]])), "X-Fsgpu: 1")
  second_refused(start(900000, cookie), 900000, "other uploads of yours", cookie)
  # submissions count when asked for: the fourth of 4 a minute is taken while it arrives, a fourth
  # is refused although none of them has finished
  second_refused(start(5000), 5000, "too many submissions")
})
