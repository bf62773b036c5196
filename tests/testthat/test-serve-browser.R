# The web page in a real browser: a server on a free loopback port (temporary store, one
# worker; serve_background() of helper-serve.R) and tests/browser/test_service.py, which
# drives headless Chromium through Selenium (Debian's chromium, chromium-driver and
# python3-selenium). The downloaded CSV files must be what the R functions give on the same
# file. Skips when any of these is missing.
# FSGPU_SCREENSHOTS=DIR (an absolute path) keeps the screenshots of the main pages there.

browser_python <- function() {
  for (p in c("/usr/bin/python3", Sys.which("python3"))) {
    if (nzchar(p) && file.exists(p) &&
        identical(suppressWarnings(system2(p, c("-c", shQuote("import selenium")), stdout = FALSE, stderr = FALSE)), 0L))
      return(p)
  }
  ""
}

# Breast and colon tumours (Chowdary et al. 2006, ../shared/data): 104 samples, the first 400
# Affymetrix probes, the class last, as a biologist's CSV file would be. NULL when the data are
# not here.
browser_data_file <- function(dir) {
  candidates <- c(Sys.getenv("FSGPU_DATA"), "../../../shared/data", "../../../../shared/data", "/work/shared/data")
  found <- file.path(candidates[nzchar(candidates)], "datamicroarray", "chowdary.csv.gz")
  found <- found[file.exists(found)]
  if (!length(found)) return(NULL)
  con <- gzfile(found[1])
  width <- length(strsplit(readLines(con, n = 1L), ",")[[1]])
  close(con)
  d <- utils::read.csv(gzfile(found[1]), check.names = FALSE,
                       colClasses = c("NULL", "character", rep("numeric", 400), rep("NULL", width - 402)))
  file <- file.path(dir, "breast_colon.csv")
  utils::write.csv(cbind(d[, -1], tissue = d$class), file, row.names = FALSE)
  file
}

test_that("the web page works in a real browser: register, submit, watch, download, log out", {
  skip_on_cran()
  skip_without_service()
  skip_if_not(nzchar(Sys.which("chromium")) || nzchar(Sys.which("chromium-browser")), "chromium is not installed")
  skip_if_not(nzchar(Sys.which("chromedriver")), "chromedriver is not installed")
  python <- browser_python()
  skip_if_not(nzchar(python), "python3 with selenium is not installed")
  script <- test_path("..", "browser", "test_service.py")
  skip_if_not(file.exists(script), "tests/browser/test_service.py is not here")

  dir <- tempfile("fsgpu-browser-")
  dir.create(file.path(dir, "store"), recursive = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  data <- browser_data_file(dir)
  skip_if(is.null(data), "the microarray data of ../shared/data are not here (set FSGPU_DATA)")
  bad <- file.path(dir, "breast_colon_broken.csv")
  lines <- readLines(data)
  lines[4] <- sub(",[^,]*,", ",", lines[4])  # line 4 lost a field
  writeLines(lines, bad)
  small <- file.path(dir, "small.csv")
  utils::write.csv(utils::read.csv(data, check.names = FALSE)[, c(1:20, 401)], small, row.names = FALSE)

  server <- serve_background(file.path(dir, "store"), workers = 1, admins = "ada")
  on.exit(serve_stop_background(server), add = TRUE, after = FALSE)
  out <- file.path(dir, "out")
  screens <- Sys.getenv("FSGPU_SCREENSHOTS")
  args <- c(script, "--url", server$url, "--data", data, "--bad", bad, "--small", small, "--out", out,
            "--k", "10", "--user", "ada", "--admin", if (nzchar(screens)) c("--screens", normalizePath(screens, mustWork = FALSE)))
  run <- processx::run(python, args, error_on_status = FALSE, timeout = 900, stderr_to_stdout = TRUE)
  if (run$status == 77L) skip(paste("the browser cannot start here:", run$stdout))
  expect_identical(run$status, 0L, info = run$stdout)
  report <- jsonlite::fromJSON(file.path(out, "report.json"), simplifyVector = FALSE)
  expect_true(all(vapply(report$checks, function(c) isTRUE(c$ok), TRUE)), info = run$stdout)
  expect_gte(length(report$checks), 15)

  # The bad upload's message names the file and the line.
  expect_match(report$bad_upload_error, "breast_colon_broken.csv", fixed = TRUE)
  expect_match(report$bad_upload_error, "line 4")

  # The downloaded CSV files are the R functions' results on the same file.
  d <- read_features(data)
  same_csv <- function(downloaded, result) {
    expect_identical(paste(readLines(downloaded), collapse = "\n"), serve_expected_csv(result))
  }
  sel <- select_features(d$x, d$y, k = 10, method = "jmi", quiet = TRUE)
  same_csv(file.path(out, "select.csv"), sel)
  shown <- report$table$select
  expect_identical(unlist(lapply(shown$rows, `[[`, match("feature", unlist(shown$columns)))),
                   as.data.frame(sel)$feature)

  # The worker seeds R's generator with the job's seed for the contrast variables, as the
  # job's R script does.
  p <- report$job_json$interactions$params
  expect_false(is.null(p$seed))
  expect_true(p$contrast)
  found <- with_seed(p$seed, find_interactions(d$x, d$y, dimensions = p$dimensions, divisions = p$divisions,
                                               discretizations = p$discretizations, contrast = p$contrast,
                                               p_adjust = p$p_adjust, seed = p$seed, quiet = TRUE))
  same_csv(file.path(out, "interactions.csv"), found)
})
