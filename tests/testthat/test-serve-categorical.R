# The service's categorical parameter (jobs select and pairs, as the R functions' categorical =)
# end to end over HTTP on 127.0.0.1: serve() in a background R process, one worker.

# Integer codes where binning loses the class: `code` has 30 values (more than 10, so the rule
# bins it, in 4 bins) and the class is its parity, which only the codes as categories show.
integer_coded_csv <- function(file = tempfile("coded-", fileext = ".csv"), n = 60) {
  set.seed(5)
  code <- sample(1:30, n, replace = TRUE)
  d <- data.frame(g1 = round(stats::rnorm(n), 2), g2 = round(stats::rnorm(n), 2), code = code,
                  stage = sample(0:2, n, replace = TRUE))
  d$class <- ifelse(code %% 2 == 0, "even", "odd")
  d$g1 <- d$g1 + (d$class == "odd") * 0.8
  utils::write.csv(d, file, row.names = FALSE)
  file
}

csv_text <- function(text) paste(readLines(textConnection(sub("\n$", "", text))), collapse = "\n")

# Submits, waits for the job, returns its id, token, record and result.csv.
run_job <- function(server, file, job, ...) {
  r <- serve_submit(server, file, job, ...)
  expect_identical(r$status, 201L, info = paste(job, r$body$error))
  done <- serve_wait(server, r$body$id, r$body$token)
  expect_identical(done$status, "done", info = paste(job, done$error))
  csv <- serve_request(paste0(server$url, "/api/jobs/", r$body$id, "/result.csv"), token = r$body$token, raw = TRUE)
  expect_identical(csv$status, 200L)
  list(id = r$body$id, token = r$body$token, job = done, csv = csv_text(csv$body))
}

test_that("categorical reaches select and pairs over HTTP, changes their results as in R, and its script reproduces them", {
  skip_without_service()
  skip_on_cran()
  store <- tempfile("store-")
  dir.create(store)
  server <- serve_background(store, workers = 1, submit_rate = 1000)
  on.exit(serve_stop_background(server), add = TRUE)
  file <- integer_coded_csv()
  data <- suppressMessages(read_features(file))

  by_rule <- select_features(data$x, data$y, k = 2, quiet = TRUE)
  as_codes <- select_features(data$x, data$y, k = 2, categorical = "code", quiet = TRUE)
  expect_false("code" %in% by_rule$selection$feature)
  expect_identical(as_codes$selection$feature[1], "code")  # the parity: 1 bit

  auto <- run_job(server, file, "select", k = 2, categorical = "auto")
  expect_identical(auto$csv, serve_expected_csv(by_rule))
  expect_null(auto$job$params$categorical)
  coded <- run_job(server, file, "select", k = 2, categorical = " code ")
  expect_identical(coded$csv, serve_expected_csv(as_codes))
  expect_identical(coded$job$params$categorical, "code")
  all <- run_job(server, file, "select", k = 2, categorical = "TRUE")
  expect_identical(all$csv, serve_expected_csv(select_features(data$x, data$y, k = 2, categorical = TRUE, quiet = TRUE)))
  none <- run_job(server, file, "pairs", top = 4, nbins = 2, categorical = "false")
  expect_identical(none$csv, serve_expected_csv(mi_pairs(data$x, data$y, top = 4, nbins = 2, categorical = FALSE, quiet = TRUE)))
  two <- run_job(server, file, "pairs", top = 4, categorical = "code,stage")
  expect_identical(two$csv, serve_expected_csv(mi_pairs(data$x, data$y, top = 4, categorical = c("code", "stage"), quiet = TRUE)))
  expect_false(identical(two$csv, run_job(server, file, "pairs", top = 4)$csv))

  # the reproducing script passes it on, and gives the same CSV on the same file
  script <- serve_request(paste0(server$url, "/api/jobs/", coded$id, "/script.R"), token = coded$token)$body
  expect_match(script, "select_features(data$x, data$y, k = 2, method = \"jmi\", categorical = \"code\")", fixed = TRUE)
  two_script <- serve_request(paste0(server$url, "/api/jobs/", two$id, "/script.R"), token = two$token)$body
  expect_match(two_script, "categorical = c(\"code\", \"stage\")", fixed = TRUE)
  here <- tempfile("script-")
  dir.create(here)
  file.copy(file, file.path(here, basename(file)))
  writeLines(script, file.path(here, "script.R"))
  out <- processx::run(file.path(R.home("bin"), "Rscript"), "script.R", wd = here, error_on_status = FALSE,
                       env = c("current", R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)))
  expect_identical(out$status, 0L, info = out$stderr)
  expect_identical(paste(readLines(file.path(here, "result.csv")), collapse = "\n"), coded$csv)

  # bad values are refused with a clear 400 before anything is queued
  refused <- function(..., job = "select") {
    r <- serve_submit(server, file, job, ...)
    expect_identical(r$status, 400L)
    r$body$error
  }
  expect_match(refused(categorical = "nope"), "categorical: no feature named 'nope'")
  expect_match(refused(categorical = "code,class"), "categorical: no feature named 'class'")  # the class is no feature
  expect_match(refused(categorical = "code,,g1"), "categorical must be auto, true, false or column names separated by commas")
  expect_match(refused(categorical = "code,"), "categorical must be auto, true, false or column names")
  expect_match(refused(categorical = "code,code"), "'code' given more than once")
  expect_match(refused(categorical = "true", job = "knn"), "unknown parameter for job 'knn': categorical")
  s <- fsgpu:::store_open(store)
  on.exit(fsgpu:::store_close(s), add = TRUE)
  expect_identical(as.integer(fsgpu:::store_query(s, "SELECT COUNT(*) AS n FROM jobs")$n), 6L)  # the six run above
})
