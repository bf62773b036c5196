# The service's API end to end over HTTP on 127.0.0.1: serve() in a background R process, one
# worker, requests through the curl package.

server <- NULL
store <- NULL
setup_server <- function() {
  skip_without_service()
  skip_on_cran()
  if (is.null(server)) {
    store <<- tempfile("store-")
    dir.create(store)
    writeLines("admins: root1", file.path(store, "config.dcf"))
    server <<- serve_background(store, workers = 1, anonymous_upload = 5e6, user_quota = 1e5, submit_rate = 1000)
  }
  server
}

read_csv_text <- function(text) paste(readLines(textConnection(sub("\n$", "", text))), collapse = "\n")

# Submits, waits, downloads the CSV and compares it with the R function called here.
expect_same_as_r <- function(file, job, direct, ...) {
  s <- setup_server()
  r <- serve_submit(s, file, job, ...)
  expect_identical(r$status, 201L, info = paste(job, r$body$error))
  expect_identical(r$body$status, "queued")
  expect_gte(nchar(r$body$token), 32L)
  done <- serve_wait(s, r$body$id, r$body$token)
  expect_identical(done$status, "done", info = paste(job, done$error))
  expect_identical(done$progress, 1L)
  expect_match(done$device, "^(CPU|GPU)", info = job)  # every job records where it ran
  csv <- serve_request(paste0(s$url, "/api/jobs/", r$body$id, "/result.csv"), token = r$body$token, raw = TRUE)
  expect_identical(csv$status, 200L)
  expect_identical(read_csv_text(csv$body), serve_expected_csv(direct), info = job)
  invisible(r$body)
}

test_that("each of the five jobs on data made here gives the R function's result", {
  s <- setup_server()
  file <- serve_toy_csv()
  data <- read_features(file)
  expect_same_as_r(file, "select", select_features(data$x, data$y, k = 4, method = "mrmr", quiet = TRUE), method = "mrmr", k = 4)
  expect_same_as_r(file, "pairs", mi_pairs(data$x, data$y, top = 6, quiet = TRUE), top = 6)
  expect_same_as_r(file, "discretize", discretize(data$x, data$y, method = "caim", quiet = TRUE))
  expect_same_as_r(file, "knn", knn_graph(data$x, k = 4, metric = "euclidean", output = "edges", mutual = TRUE, quiet = TRUE),
                   k = 4, metric = "euclidean", graph = "mutual")
  set.seed(7)
  expect_same_as_r(file, "interactions", find_interactions(data$x, data$y, dimensions = 2, seed = 7L, quiet = TRUE),
                   dimensions = 2, seed = 7)
})

test_that("the jobs run on real files from the shared data (slices), compressed and PLINK", {
  s <- setup_server()
  alon <- "/work/shared/data/datamicroarray/alon.csv.gz"
  skip_if_not(file.exists(alon), "the shared data sets are not here")
  d <- read.csv(gzfile(alon), check.names = FALSE)
  slice <- d[, c(1:60, ncol(d))]
  file <- tempfile(fileext = ".csv.gz")
  con <- gzfile(file, "w")
  utils::write.csv(slice, con, row.names = FALSE)
  close(con)
  data <- read_features(file)
  expect_same_as_r(file, "select", select_features(data$x, data$y, k = 5, quiet = TRUE), k = 5)
  set.seed(3)
  expect_same_as_r(file, "interactions", find_interactions(data$x, data$y, dimensions = 2, divisions = 2, seed = 3L, quiet = TRUE),
                   dimensions = 2, divisions = 2, seed = 3)
  twonorm <- "/work/shared/data/keel/twonorm.csv.gz"
  if (file.exists(twonorm)) {
    data <- read_features(twonorm)
    expect_same_as_r(twonorm, "discretize", discretize(data$x, data$y, method = "mdlp", quiet = TRUE), method = "mdlp")
  }
  plink <- "/work/shared/data/hapmap3_flashpca/hapmap3_957"
  if (file.exists(paste0(plink, ".bed")) && file.exists(paste0(plink, "_populations.tsv"))) {
    geno <- read_plink(plink, packed = TRUE)
    pheno <- read.table(paste0(plink, "_populations.tsv"), header = TRUE, stringsAsFactors = TRUE)
    y <- pheno$population[match(geno$samples$id, pheno$IID)]
    set.seed(11)
    r <- expect_same_as_r(paste0(plink, c(".bed", ".bim", ".fam", "_populations.tsv")), "interactions",
                          find_interactions(geno$genotypes, y, dimensions = 1, quiet = TRUE), dimensions = 1, seed = 11)
    script <- serve_request(paste0(s$url, "/api/jobs/", r$id, "/script.R"), token = r$token)$body
    expect_match(script, "read_plink(\"hapmap3_957\", packed = TRUE)", fixed = TRUE)
  }
})

test_that("a job is found only with its token or by its owner: 404 otherwise", {
  s <- setup_server()
  file <- serve_toy_csv()
  a <- serve_submit(s, file, "select", k = 2)$body
  b <- serve_submit(s, file, "select", k = 3)$body
  serve_wait(s, a$id, a$token)
  for (path in c("", "/result.csv", "/result.rds", "/script.R", "/result.json")) {
    url <- paste0(s$url, "/api/jobs/", a$id, path)
    expect_identical(serve_request(url, token = a$token)$status, 200L, info = path)
    expect_identical(serve_request(url, token = b$token)$status, 404L, info = path)
    expect_identical(serve_request(url)$status, 404L, info = path)
    expect_identical(serve_request(url)$body, if (path %in% c("", "/result.json", "/result.csv", "/result.rds", "/script.R")) list(error = "not found"))
  }
  expect_identical(serve_request(paste0(s$url, "/api/jobs/", a$id), "DELETE", token = b$token)$status, 404L)
  expect_identical(serve_request(paste0(s$url, "/api/jobs/000000000000000000000000"), token = a$token)$status, 404L)
  # the table and the plot for the page
  json <- serve_request(paste0(s$url, "/api/jobs/", a$id, "/result.json"), token = a$token)$body
  expect_identical(unlist(json$columns), c("rank", "feature", "index", "score", "fixed"))
  expect_identical(json$total, 2L)
  png <- serve_request(paste0(s$url, "/api/jobs/", a$id, "/plot.png"), token = a$token, raw = TRUE)
  if (can_draw_png()) {
    expect_identical(png$headers[["content-type"]], "image/png")
    size <- readBin(png$body[17:24], "integer", n = 2L, size = 4L, endian = "big")  # the PNG's IHDR
    expect_identical(size, c(1440L, 960L))
  } else {
    expect_identical(png$status, 404L)  # an R without a bitmap device: the results come without a plot
  }
  # deletion: the job and its files are gone
  expect_identical(serve_request(paste0(s$url, "/api/jobs/", a$id), "DELETE", token = a$token)$body$status, "deleted")
  expect_identical(serve_request(paste0(s$url, "/api/jobs/", a$id), token = a$token)$status, 404L)
  expect_false(dir.exists(file.path(store, "jobs", a$id)))
})

test_that("kNN neighbours are named by the sample IDs; the limits are in /api/me", {
  s <- setup_server()
  file <- serve_toy_csv()
  d <- read.csv(file)
  file <- tempfile(fileext = ".csv")
  utils::write.csv(cbind(patient = seq(101, by = 2, length.out = nrow(d)), d), file, row.names = FALSE)
  data <- read_features(file, id = "patient")
  r <- expect_same_as_r(file, "knn", knn_graph(data$x, k = 3, output = "edges", quiet = TRUE), k = 3, id = "patient")
  csv <- read.csv(text = serve_request(paste0(s$url, "/api/jobs/", r$id, "/result.csv"), token = r$token, raw = TRUE)$body)
  expect_true(all(c(csv$from, csv$to) %in% seq(101, by = 2, length.out = nrow(d))))
  script <- serve_request(paste0(s$url, "/api/jobs/", r$id, "/script.R"), token = r$token)$body
  expect_match(script, ".csv\", id = \"patient\")", fixed = TRUE)
  expect_match(script, paste("# Reproduces job", r$id), fixed = TRUE)
  me <- serve_request(paste0(s$url, "/api/me"))$body
  expect_null(me$user)
  expect_equal(me[c("upload_limit", "anonymous_upload", "anonymous_hours", "user_quota")],
               list(upload_limit = 5e6, anonymous_upload = 5e6, anonymous_hours = 48, user_quota = 1e5))
})

test_that("bad uploads get the reader's message before anything is queued; oversize ones 413", {
  s <- setup_server()
  n_before <- length(list.files(file.path(store, "jobs")))
  bad <- tempfile(fileext = ".arff")
  writeLines(c("@relation t", "@attribute a numeric", "@attribute class {x,y}", "@data", "1,x", "2,y", "oops,x"), bad)
  r <- serve_submit(s, bad, "select")
  expect_identical(r$status, 400L)
  expect_match(r$body$error, basename(bad), fixed = TRUE)
  expect_match(r$body$error, "line 7")
  r <- serve_submit(s, serve_toy_csv(), "select", k = "ten")
  expect_identical(r$status, 400L)
  expect_match(r$body$error, "k must be a whole number")
  r <- serve_submit(s, serve_toy_csv(), "select", class = "nothere")
  expect_identical(r$status, 400L)
  expect_match(r$body$error, "names no column")
  exe <- tempfile(fileext = ".exe")
  writeLines("MZ", exe)
  expect_match(serve_submit(s, exe, "select")$body$error, "cannot tell the format")
  big <- tempfile(fileext = ".csv")
  writeBin(as.raw(rep(65, 6e6)), big)  # past 5e6 bytes, the limit of this server
  # refused from the headers, before the body is sent
  r <- serve_submit(s, big, "select", headers = c(Expect = "100-continue"))
  expect_identical(r$status, 413L)
  # a client that sends its body at once gets the 413 too: the front answers from the headers and
  # drains the body it does not store, so that the client sees the answer
  r <- serve_submit(s, big, "select", headers = c(Expect = ""))
  expect_identical(r$status, 413L)
  expect_match(r$body$error, "larger than")
  expect_identical(length(list.files(file.path(store, "jobs"))), n_before)
  expect_length(list.files(file.path(store, "uploads")), 0L)
})

test_that("accounts: register, log in, own jobs, quota, logout; others see 404; admins see the queue", {
  s <- setup_server()
  api <- function(path) paste0(s$url, "/api/", path)
  session <- function(r) sub(";.*", "", sub("^fsgpu_session=", "", r$headers[["set-cookie"]]))
  r <- serve_request(api("register"), "POST", json = list(username = "alice", password = "password-a"))
  expect_identical(r$status, 201L)
  expect_match(r$headers[["set-cookie"]], "HttpOnly")
  expect_match(r$headers[["set-cookie"]], "SameSite=Strict")
  alice <- session(r)
  expect_identical(serve_request(api("register"), "POST", json = list(username = "alice", password = "password-b"))$status, 400L)
  bob <- session(serve_request(api("register"), "POST", json = list(username = "bob", password = "password-b")))
  me <- serve_request(api("me"), cookie = alice)$body
  expect_identical(me$user, "alice")
  expect_equal(me$quota_bytes, 1e5)
  expect_false(me$admin)
  # the CSRF guard
  expect_identical(serve_submit(s, serve_toy_csv(), "select", cookie = alice)$status, 201L)
  r <- serve_request(api("jobs"), "POST", form = list(file = curl::form_file(serve_toy_csv()), job = "select"),
                     cookie = alice, csrf = FALSE)
  expect_identical(r$status, 403L)
  jobs <- serve_request(api("jobs"), cookie = alice)$body
  expect_length(jobs, 1L)
  id <- jobs[[1]]$id
  expect_identical(serve_request(api(paste0("jobs/", id)), cookie = alice)$status, 200L)
  expect_identical(serve_request(api(paste0("jobs/", id)), cookie = bob)$status, 404L)
  expect_length(serve_request(api("jobs"), cookie = bob)$body, 0L)
  expect_identical(serve_request(api("jobs"))$status, 401L)
  expect_gt(serve_request(api("me"), cookie = alice)$body$used_bytes, 0)
  # past the quota (1e5 bytes on this server): 413, whatever the anonymous limit
  r <- serve_submit(s, serve_toy_csv(n = 2000), "select", cookie = alice)
  expect_identical(r$status, 413L)
  expect_match(r$body$error, "left of your quota")
  expect_identical(serve_request(api("admin/queue"), cookie = alice)$status, 404L)
  root <- session(serve_request(api("register"), "POST", json = list(username = "root1", password = "password-r")))
  q <- serve_request(api("admin/queue"), cookie = root)
  expect_identical(q$status, 200L)
  expect_gte(length(q$body$workers), 1L)
  # logout ends the session
  expect_identical(serve_request(api("logout"), "POST", cookie = alice)$status, 200L)
  expect_null(serve_request(api("me"), cookie = alice)$body$user)
  expect_identical(serve_request(api(paste0("jobs/", id)), cookie = alice)$status, 404L)
  # login CSRF: a cross-site form (no JSON, no X-Fsgpu) cannot log a browser into an account
  expect_identical(serve_request(api("login"), "POST", form = list(username = "alice", password = "password-a"))$status,
                   403L)
  expect_identical(serve_request(api("register"), "POST", form = list(username = "mallory", password = "password-m"))$status,
                   403L)
  # login, and its throttle
  r <- serve_request(api("login"), "POST", json = list(username = "alice", password = "password-a"))
  expect_identical(r$status, 200L)
  expect_identical(serve_request(api(paste0("jobs/", id)), cookie = session(r))$status, 200L)
  codes <- vapply(1:6, function(i) serve_request(api("login"), "POST", json = list(username = "bob", password = "wrong-pass"))$status, 1L)
  expect_identical(codes, c(rep(401L, 5), 429L))
  expect_identical(serve_request(api("login"), "POST", json = list(username = "bob", password = "password-b"))$status, 429L)
})

test_that("the page and the job types are served; unknown paths are 404", {
  s <- setup_server()
  page <- serve_request(paste0(s$url, "/"), raw = TRUE)
  expect_identical(page$status, 200L)
  expect_match(page$headers[["content-type"]], "text/html")
  types <- serve_request(paste0(s$url, "/api/jobtypes"))$body
  expect_setequal(setdiff(names(types), "formats"), c("select", "pairs", "discretize", "knn", "interactions"))
  expect_identical(types$select[["function"]], "select_features")
  expect_identical(serve_request(paste0(s$url, "/api/nothing"))$status, 404L)
  expect_identical(serve_request(paste0(s$url, "/../../etc/passwd"))$status, 404L)
})

test_that("Ctrl-C stops the server and its workers", {
  s <- setup_server()
  serve_stop_background(s)
  expect_false(s$process$is_alive())
  expect_match(paste(readLines(file.path(tempdir(), sprintf("serve-%d.log", s$port))), collapse = "\n"), "stopped")
  expect_error(curl::curl_fetch_memory(paste0(s$url, "/api/jobtypes")))
  con <- DBI::dbConnect(RSQLite::SQLite(), file.path(store, "fsgpu.sqlite"))
  on.exit(DBI::dbDisconnect(con))
  expect_identical(nrow(DBI::dbGetQuery(con, "SELECT * FROM workers")), 0L)
  expect_identical(nrow(DBI::dbGetQuery(con, "SELECT * FROM jobs WHERE status = 'running'")), 0L)
})
