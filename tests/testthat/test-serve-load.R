# A small version of bench/serve_load.R: many clients at once against two workers; every job
# must be answered, stored once, run once and give its own result (none lost, none run twice).

test_that("concurrent submissions to two workers: none lost, none run twice", {
  skip_on_cran()
  skip_without_service()
  dir <- tempfile("fsgpu-load-")
  dir.create(file.path(dir, "store"), recursive = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  data <- serve_toy_csv(file.path(dir, "toy.csv"))
  server <- serve_background(file.path(dir, "store"), workers = 2, submit_rate = 1000L)
  on.exit(serve_stop_background(server), add = TRUE, after = FALSE)

  n <- 24L
  k <- rep_len(1:6, n)  # each job's k: its result must have k rows, so results cannot be swapped
  pool <- curl::new_pool(total_con = 12L, host_con = 12L)
  answers <- vector("list", n)
  for (j in seq_len(n)) local({
    i <- j
    h <- curl::new_handle(url = paste0(server$url, "/api/jobs"))
    curl::handle_setform(h, file = curl::form_file(data), job = "select", method = "jmi", k = as.character(k[i]))
    curl::multi_add(h, pool = pool, done = function(res) answers[[i]] <<- res,
                    fail = function(msg) answers[[i]] <<- list(status_code = NA, error = msg))
  })
  curl::multi_run(pool = pool)
  status <- vapply(answers, function(a) as.integer(a$status_code), 0L)
  expect_identical(status, rep(201L, n))
  jobs <- lapply(answers, function(a) jsonlite::fromJSON(rawToChar(a$content)))
  ids <- vapply(jobs, `[[`, "", "id")
  expect_false(anyDuplicated(ids) > 0)

  final <- lapply(jobs, function(j) serve_wait(server, j$id, j$token, timeout = 300))
  expect_identical(vapply(final, `[[`, "", "status"), rep("done", n))
  expect_identical(vapply(final, function(f) as.integer(f$result$rows), 0L), k)

  con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "store", "fsgpu.sqlite"), flags = RSQLite::SQLITE_RO)
  stored <- DBI::dbGetQuery(con, "SELECT id, status, attempts, worker FROM jobs")
  DBI::dbDisconnect(con)
  expect_setequal(stored$id, ids)
  expect_identical(nrow(stored), n)
  expect_true(all(stored$status == "done"))
  expect_true(all(stored$attempts == 1L))
})
