# Shared by the service's tests (test-serve-*.R).

serve_packages <- c("httpuv", "jsonlite", "RSQLite", "DBI", "sodium", "processx", "callr", "curl")

skip_without_service <- function() {
  for (p in serve_packages) testthat::skip_if_not_installed(p)
}

# A toy data set as a CSV file: numeric features and a two-class column (last).
serve_toy_csv <- function(file = tempfile(fileext = ".csv"), n = 60, p = 8, seed = 1) {
  set.seed(seed)
  d <- data.frame(matrix(round(stats::rnorm(n * p), 3), n, p))
  d$X2 <- d$X1 + round(stats::rnorm(n, sd = 0.3), 3)
  d$class <- rep(c("a", "b"), length.out = n)
  d$X1 <- d$X1 + (d$class == "a")
  utils::write.csv(d, file, row.names = FALSE)
  file
}

# A free TCP port on the loopback address, below Linux's ephemeral range (32768 and up), where
# the tests' own outgoing connections could take it between this check and the server's bind.
serve_free_port <- function() {
  for (i in 1:50) {
    port <- sample(20000:32000, 1)
    ok <- tryCatch({
      s <- httpuv::startServer("127.0.0.1", port, list(call = function(req) list(status = 200L, headers = list(), body = "")))
      httpuv::stopServer(s)
      TRUE
    }, error = function(e) FALSE)
    if (ok) return(port)
  }
  stop("no free port")
}

# Starts serve() in a background R process; returns the process and the base URL once the
# server answers.
serve_background <- function(store, workers = 1, ...) {
  port <- serve_free_port()
  libs <- .libPaths()
  p <- callr::r_bg(function(store, port, workers, libs, settings) {
    .libPaths(libs)
    do.call(fsgpu::serve, c(list(store, port = port, workers = workers), settings))
  }, args = list(store = store, port = port, workers = workers, libs = libs, settings = list(...)),
  stdout = file.path(tempdir(), sprintf("serve-%d.log", port)), stderr = "2>&1", supervise = TRUE)
  url <- sprintf("http://127.0.0.1:%d", port)
  for (i in 1:900) {
    ok <- tryCatch(curl::curl_fetch_memory(paste0(url, "/api/jobtypes"))$status_code == 200L, error = function(e) FALSE)
    if (ok) break
    if (!p$is_alive()) stop("the server did not start: ", paste(readLines(file.path(tempdir(), sprintf("serve-%d.log", port))), collapse = "\n"))
    Sys.sleep(0.1)
  }
  list(process = p, url = url, port = port)
}

serve_stop_background <- function(server) {
  if (server$process$is_alive()) {
    server$process$interrupt()
    server$process$wait(10000)
    if (server$process$is_alive()) server$process$kill()
  }
}

# An HTTP request; returns list(status, json or text, headers).
serve_request <- function(url, method = "GET", token = NULL, form = NULL, json = NULL, cookie = NULL, csrf = !is.null(cookie),
                          raw = FALSE, headers = NULL) {
  h <- curl::new_handle()
  headers <- c(headers, if (!is.null(token)) c(Authorization = paste("Bearer", token)),
               if (!is.null(cookie)) c(Cookie = paste0("fsgpu_session=", cookie)),
               if (csrf) c(`X-Fsgpu` = "1"))
  if (!is.null(json)) {
    headers <- c(headers, `Content-Type` = "application/json")
    curl::handle_setopt(h, postfields = as.character(jsonlite::toJSON(json, auto_unbox = TRUE)))
  }
  if (!is.null(form)) curl::handle_setform(h, .list = form)
  if (method != "GET") curl::handle_setopt(h, customrequest = method)
  if (length(headers)) curl::handle_setheaders(h, .list = as.list(headers))
  r <- curl::curl_fetch_memory(url, handle = h)
  type <- curl::parse_headers_list(r$headers)[["content-type"]]
  if (is.null(type)) type <- ""
  body <- if (grepl("^(text/|application/json)", type)) rawToChar(r$content) else r$content
  if (!raw && startsWith(type, "application/json")) body <- jsonlite::fromJSON(body, simplifyVector = FALSE)
  list(status = r$status_code, body = body, headers = curl::parse_headers_list(r$headers))
}

serve_submit <- function(server, file, job, ..., cookie = NULL, headers = NULL) {
  form <- c(lapply(file, curl::form_file), list(job = job), lapply(list(...), as.character))
  names(form)[seq_along(file)] <- "file"
  serve_request(paste0(server$url, "/api/jobs"), "POST", form = form, cookie = cookie, headers = headers)
}

# Polls a job until it leaves the queue and the running state.
serve_wait <- function(server, id, token, timeout = 120) {
  t0 <- Sys.time()
  repeat {
    r <- serve_request(paste0(server$url, "/api/jobs/", id), token = token)
    if (r$status != 200L || r$body$status %in% c("done", "failed", "cancelled")) return(r$body)
    if (as.numeric(Sys.time() - t0, units = "secs") > timeout) stop("job ", id, " did not finish: ", r$body$status)
    Sys.sleep(0.2)
  }
}

# The CSV a service result is served as, written from a result computed here.
serve_expected_csv <- function(result) {
  f <- tempfile(fileext = ".csv")
  utils::write.csv(fsgpu:::service_table(result), f, row.names = FALSE)
  paste(readLines(f), collapse = "\n")
}

# Whether this R can draw a PNG, as the service decides whether to draw plot.png.
can_draw_png <- function() !is.null(fsgpu:::service_png_type())
