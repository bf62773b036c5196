# Benchmark of read_libsvm(): the C++ parser against a plain-R reader (readLines + strsplit +
# Matrix::sparseMatrix, vectorised as a careful R user would write it), on the LibSVM files in
# ../shared/data, one CPU thread (both readers are single-threaded).
#
#   Rscript bench/read_files.R [--data DIR] [--reps 3] [--out DIR] [--tag TAG]
#
# Columns: the decompressed size; "read bytes", decompressing the file into a raw vector
# (gzfile(), as read_libsvm() does); "parse", the C++ parser and the dgCMatrix's slots from
# those bytes; "read_libsvm", the whole call; "plain R", the plain-R reader, whole; both end with
# the same matrix and labels (checked). Seconds are medians of --reps runs.

suppressPackageStartupMessages(library(fsgpu))
loadNamespace("Matrix")  # loaded once, outside the timings

args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  at <- match(paste0("--", name), args)
  if (is.na(at)) default else args[at + 1L]
}
data_dir <- option("data", file.path("..", "shared", "data"))
reps <- as.integer(option("reps", "3"))
out_dir <- option("out", file.path("bench", "results"))
tag <- option("tag", paste0(format(Sys.Date()), "-cpu"))

files <- c("news20_bydate/news20_bydate_train.libsvm.xz", "news20_bydate/news20_bydate_test.libsvm.xz",
           "scikit-feature/BASEHOCK.libsvm.gz")

# The plain-R reader: 1-based indices, numeric labels, comments and blank lines dropped.
plain_r_libsvm <- function(file) {
  lines <- readLines(file)  # file() decompresses in text mode
  lines <- trimws(sub("#.*$", "", lines))
  lines <- lines[nzchar(lines)]
  fields <- strsplit(lines, "[ \t]+")
  labels <- vapply(fields, `[`, "", 1L)
  pairs <- unlist(lapply(fields, `[`, -1L), use.names = FALSE)
  colon <- regexpr(":", pairs, fixed = TRUE)
  j <- as.integer(substr(pairs, 1L, colon - 1L))
  v <- as.numeric(substring(pairs, colon + 1L))
  i <- rep.int(seq_along(fields), lengths(fields) - 1L)
  x <- Matrix::sparseMatrix(i = i, j = j, x = v, dims = c(length(lines), max(j)))
  list(x = x, y = factor(as.numeric(labels)))
}

median_seconds <- function(expr_fn) {
  times <- vapply(seq_len(reps), function(r) system.time(expr_fn(), gcFirst = TRUE)[["elapsed"]], 0)
  stats::median(times)
}

rows <- list()
for (f in files) {
  path <- file.path(data_dir, f)
  if (!file.exists(path)) {
    message("skipped (not found): ", path)
    next
  }
  bytes <- fsgpu:::read_file_bytes(path)
  mine <- read_libsvm(path)
  theirs <- plain_r_libsvm(path)
  same <- identical(unname(as.matrix(summary(mine$x))), unname(as.matrix(summary(theirs$x)))) &&
    identical(as.character(mine$y), as.character(theirs$y))
  row <- data.frame(
    file = basename(f), samples = nrow(mine$x), features = ncol(mine$x), nnz = length(mine$x@x),
    mb = length(bytes) / 1e6,
    read_bytes_s = median_seconds(function() fsgpu:::read_file_bytes(path)),
    parse_s = median_seconds(function() fsgpu:::fsgpu_parse_libsvm(bytes, -1L, -1)),
    read_libsvm_s = median_seconds(function() read_libsvm(path)),
    plain_r_s = median_seconds(function() plain_r_libsvm(path)),
    identical = same)
  row$parse_mb_s <- row$mb / row$parse_s
  row$speedup <- row$plain_r_s / row$read_libsvm_s
  print(row)
  rows[[length(rows) + 1L]] <- row
}
results <- do.call(rbind, rows)

cpu <- tryCatch(sub(".*: *", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                error = function(e) "unknown CPU")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
utils::write.csv(cbind(date = format(Sys.Date()), cpu = cpu, results), file.path(out_dir, paste0("read_files-", tag, ".csv")),
                 row.names = FALSE)
md <- c(sprintf("# read_libsvm benchmark: read_files-%s", tag), "",
        sprintf("Written by `bench/read_files.R` on %s (%s), one thread. Seconds: median of %d runs.", cpu,
                format(Sys.Date()), reps),
        "\"read bytes\" decompresses the file into a raw vector; \"parse\" is the C++ parser from those bytes",
        "(with the dgCMatrix's slots); \"plain R\" is readLines + strsplit + Matrix::sparseMatrix.", "",
        "| file | samples x features | non-zeros | MB (plain) | read bytes s | parse s | parse MB/s | read_libsvm s | plain R s | speed-up | same result |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s x %s | %s | %.1f | %.3f | %.3f | %.0f | %.3f | %.2f | %.1f | %s |", results$file,
                format(results$samples, big.mark = ","), format(results$features, big.mark = ","),
                format(results$nnz, big.mark = ","), results$mb, results$read_bytes_s, results$parse_s,
                results$parse_mb_s, results$read_libsvm_s, results$plain_r_s, results$speedup, results$identical))
writeLines(md, file.path(out_dir, paste0("read_files-", tag, ".md")))
cat(md, sep = "\n")
