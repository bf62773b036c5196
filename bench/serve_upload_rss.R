# The web process's memory during one large upload at full loopback speed.
# Usage: R_LIBS=build/lib-cpu nice Rscript bench/serve_upload_rss.R [MB] [runs]
# Starts serve() (no workers) in a background R process, makes a CSV file of MB megabytes in
# tempdir() (TMPDIR: room for about 3 times MB: the file, the spooled body, the stored job),
# sends it with the curl command line (multipart, as `curl -F` sends it), samples the web
# process's resident memory (/proc/PID/status VmRSS) every 0.05 s, and prints, per run: HTTP
# status, seconds until the answer, curl's upload speed, RSS before, the highest RSS seen, and
# VmHWM after; with the front, also when the spooled body was complete. Each run's job is
# deleted afterwards (DELETE with its token), so the store does not grow. R_LIBS picks the fsgpu under test (so the same script measures two versions).
args <- commandArgs(TRUE)
mb <- if (length(args) >= 1) as.numeric(args[1]) else 2000
runs <- if (length(args) >= 2) as.integer(args[2]) else 2
dir <- tempfile("upload-rss-")
dir.create(dir)
file <- file.path(dir, "big.csv")
block <- paste(rep("1.5,2.5,x", 100000), collapse = "\n")
con <- file(file, "w")
writeLines("a,b,class", con)
while (file.size(file) < mb * 1e6) { writeLines(block, con); flush(con) }
close(con)
port <- 20000L + sample.int(20000L, 1L)
libs <- .libPaths()
web <- callr::r_bg(function(store, port, libs) {
  .libPaths(libs)
  fsgpu::serve(store, port = port, workers = 0, submit_rate = 1000, anonymous_upload = 1e10)
}, args = list(store = file.path(dir, "store"), port = port, libs = libs), supervise = TRUE)
url <- sprintf("http://127.0.0.1:%d", port)
for (i in 1:300) {
  if (tryCatch(curl::curl_fetch_memory(paste0(url, "/api/me"))$status_code == 200L, error = function(e) FALSE)) break
  Sys.sleep(0.1)
}
status <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines(sprintf("/proc/%d/status", web$get_pid())), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
cat(sprintf("fsgpu %s from %s; %s; %d cores, load %s\n", packageVersion("fsgpu"), dirname(system.file(package = "fsgpu")),
            format(Sys.time(), tz = "UTC", usetz = TRUE), parallel::detectCores(), paste(readLines("/proc/loadavg"), collapse = "")))
for (r in seq_len(runs)) {
  before <- status("VmRSS")
  out <- tempfile()
  t0 <- Sys.time()
  p <- processx::process$new("curl", c("-s", "-o", out, "-w", "%{http_code} %{speed_upload}", "-F", paste0("file=@", file),
                                       "-F", "job=select", paste0(url, "/api/jobs")), stdout = "|")
  peak <- before
  spooled <- NA  # with the front: when the spooled body (uploads/*.body) was complete
  while (p$is_alive()) {
    peak <- max(peak, status("VmRSS"))
    body <- list.files(file.path(dir, "store", "uploads"), pattern = "[.]body$", full.names = TRUE)
    if (is.na(spooled) && length(body) && isTRUE(file.size(body[1]) >= file.size(file)))
      spooled <- as.numeric(Sys.time() - t0, units = "secs")
    Sys.sleep(0.05)
  }
  seconds <- as.numeric(Sys.time() - t0, units = "secs")
  if (!is.na(spooled))
    cat(sprintf("run %d: the body was on disk after %.1f s (%.0f MB/s); R then took %.1f s to store the files and answer\n",
                r, spooled, file.size(file) / 1e6 / spooled, seconds - spooled))
  w <- strsplit(p$read_output(), " ")[[1]]
  cat(sprintf("run %d: %.0f MB, HTTP %s, %.1f s to the answer (%.0f MB/s), curl's upload speed %.0f MB/s; web RSS before %.0f MB, max seen %.0f MB (+%.0f MB), VmHWM after %.0f MB\n",
              r, file.size(file) / 1e6, w[1], seconds, file.size(file) / 1e6 / seconds, as.numeric(w[2]) / 1e6, before, peak,
              peak - before, status("VmHWM")))
  job <- tryCatch(jsonlite::fromJSON(out), error = function(e) NULL)
  if (!is.null(job$id))
    curl::curl_fetch_memory(paste0(url, "/api/jobs/", job$id),
                            handle = curl::handle_setheaders(curl::new_handle(customrequest = "DELETE"),
                                                             Authorization = paste("Bearer", job$token)))
}
web$interrupt()
web$wait(5000)
unlink(dir, recursive = TRUE)
