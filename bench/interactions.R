# Benchmark of the exhaustive interaction search find_interactions(), end to end from R, from an
# R integer matrix and from packed PLINK genotypes (a .bed written here and read with
# read_plink(packed = TRUE)), on the CPU or GPU engine; synthetic genotypes 0/1/2 (3 levels), a
# binary class, and the real mice genotypes.
#
#   Rscript bench/interactions.R [--backend cpu|gpu] [--threads N] [--shapes LIST] [--inputs matrix,plink]
#                                [--objects 1024] [--contrast] [--data DIR] [--tensor-tops T]
#                                [--clock-ghz 1.98] [--sms 132] [--mma-per-clock 0.57] [--out DIR]
#                                [--tag TAG] [--note TEXT] [--seed 1]
#
# Shapes: KxP is the K-way search over P variables (1 <= K <= 5), e.g. 2x204800, 1x1000000,
# 3x5000, 4x300, 5x120 (the issue's shapes); the names pairs10k, pairs50k, pairs204k, triples2k,
# triples10k, singles1m, quads300, quints120 stand for 2x10000, 2x50000, 2x204800, 3x2000,
# 3x10000, 1x1000000, 4x300, 5x120; mice is the 2-way search over
# the 10,346 SNPs of ../shared/data/mice_hs_bglr (black vs other coat colours, with contrast
# variables). Synthetic searches run without contrast variables (--contrast adds MDFS's), so the
# rate is the engine's.
#
# Reported per shape and input: the end-to-end time (the find_interactions() call; for PLINK also
# read_plink() of the files), the engine's parts (bitmaps, search), the R side (the rest: R's
# share of the end-to-end time), the search rate, and on the GPU its ratios to two physical
# limits: the popcount limit (SMs x 16 32-bit popcounts per clock; a k-tuple needs (levels-1)^k
# counted cells x 32-bit words) and the binary tensor-core peak (mma m16n8k256 AND+POPC), given
# as --tensor-tops (T bit-and-popc/s, as bench/b1_mma_peak.cu prints it) or from SMs x
# mma-per-clock x clock x 32,768 (0.57 mma per SM per clock measured on an H100); a k-tuple
# takes (levels-1)^k cells (3-way: + (levels-1)^2 for the (j, l) counts) x objects padded to 256
# per class of bit operations. On the CPU the CPU seconds (user + system, all threads) are
# shown too: on a shared machine they say more than the wall clock.

suppressPackageStartupMessages(library(fsgpu))

bench_dir <- local({
  frames <- Filter(function(f) is.character(f$ofile), sys.frames())
  file <- if (length(frames)) frames[[length(frames)]]$ofile
          else sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) != 1L) file <- file.path("bench", "interactions.R")
  dirname(normalizePath(gsub("~+~", " ", file, fixed = TRUE), mustWork = FALSE))
})
source(file.path(bench_dir, "shapes.R"))  # read_options(), split_list()

usage <- function() {
  cat("Rscript bench/interactions.R [--backend cpu|gpu] [--threads N] [--shapes LIST] [--inputs matrix,plink]\n",
      "                             [--objects 1024] [--contrast] [--data DIR] [--tensor-tops T]\n",
      "                             [--clock-ghz 1.98] [--sms 132] [--mma-per-clock 0.57] [--out DIR]\n",
      "                             [--tag TAG] [--note TEXT] [--seed 1]\n",
      "  --threads N  CPU threads (default: 2 on the CPU, as issue 18's CPU targets; all cores with the GPU,\n",
      "               as find_interactions() takes by default, for the host's bit planes and results)\n", sep = "")
}
opts <- read_options(commandArgs(TRUE), list(
  backend = "gpu", threads = NA_integer_, shapes = c("2x10000", "2x50000", "2x204800", "3x2000", "3x10000", "mice"),
  inputs = c("matrix", "plink"), objects = 1024L, contrast = FALSE, data = file.path("..", "shared", "data"),
  tensor_tops = NA_real_, clock_ghz = 1.98, sms = 132L, mma_per_clock = 0.57, out = "bench/results", tag = NULL,
  note = NULL, seed = 1L), usage = usage, specs = list(
  "--backend" = identity, "--threads" = as.integer, "--shapes" = split_list, "--inputs" = split_list,
  "--objects" = as.integer, "--contrast" = NULL, "--data" = identity, "--tensor-tops" = as.numeric,
  "--clock-ghz" = as.numeric, "--sms" = as.integer, "--mma-per-clock" = as.numeric, "--out" = identity,
  "--tag" = identity, "--note" = identity, "--seed" = as.integer))
stopifnot(opts$backend %in% c("cpu", "gpu"), all(opts$inputs %in% c("matrix", "plink")), opts$objects %% 4 == 0)
tag <- if (is.null(opts$tag)) opts$backend else opts$tag
threads <- if (!is.na(opts$threads)) opts$threads else if (opts$backend == "cpu") 2L else fsgpu_threads()
dir.create(opts$out, showWarnings = FALSE, recursive = TRUE)
info <- backend_info()
device <- if (opts$backend == "gpu") info$devices$name[1] else
  paste(unique(sub("^model name\\s*:\\s*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE))),
        collapse = ", ")
aliases <- c(pairs10k = "2x10000", pairs50k = "2x50000", pairs204k = "2x204800", triples2k = "3x2000",
             triples10k = "3x10000", singles1m = "1x1000000", quads300 = "4x300", quints120 = "5x120")
# Issue 18's targets: on one GPU tuples/s of search by dimension (1-way: 0.5 s end to end); on
# the CPU (2 threads) twice the 9.6e6 pairs/s measured before.
gpu_targets <- c(NA, 1.5e11, 5e10, 1e11, 2e10)
target_of <- function(k) if (gpu) { if (k == 1) "<= 0.5 s end to end" else sprintf("%.1e/s", gpu_targets[k]) } else
  if (k == 2) "1.9e+07/s" else ""
gpu <- opts$backend == "gpu"
tensor_bitops <- if (!is.na(opts$tensor_tops)) opts$tensor_tops * 1e12 else
  opts$sms * opts$mma_per_clock * opts$clock_ghz * 1e9 * 32768

# Synthetic genotypes as .bed bytes: every byte four calls, no missing code (01); the class is
# (g1 > 0) xor (g2 > 0) for 80% of the objects, random for the rest.
synthetic <- function(p, n, seed) {
  set.seed(seed)
  codes <- as.matrix(expand.grid(0:3, 0:3, 0:3, 0:3))
  valid <- as.raw(codes[apply(codes != 1, 1, all), ] %*% c(1, 4, 16, 64))
  bytes <- sample(valid, p * n / 4, replace = TRUE)
  g <- fsgpu:::fsgpu_decode_bed(bytes, n, 1:2)
  y <- xor(g[, 1] > 0, g[, 2] > 0)
  noisy <- runif(n) < 0.2
  y[noisy] <- runif(sum(noisy)) < 0.5
  list(bytes = bytes, y = factor(y), n = n, p = p)
}

# A PLINK fileset of the bytes under prefix.
write_bed <- function(d, prefix) {
  writeBin(c(as.raw(c(0x6c, 0x1b, 0x01)), d$bytes), paste0(prefix, ".bed"))
  writeLines(sprintf("1\tsnp%d\t0\t%d\tA\tG", seq_len(d$p), seq_len(d$p)), paste0(prefix, ".bim"))
  writeLines(sprintf("s%d s%d 0 0 1 -9", seq_len(d$n), seq_len(d$n)), paste0(prefix, ".fam"))
}

cpu_seconds <- function(t) sum(t[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)

# One timed search: a row of the table.
measure <- function(shape, input, k, p, n, x, y, read_seconds = 0, contrast = opts$contrast, top = NULL) {
  gc(FALSE)
  t <- system.time(res <- suppressMessages(find_interactions(x, y, dimensions = k, contrast = contrast, top = top,
                                                              backend = opts$backend, threads = threads,
                                                              quiet = TRUE)))
  n_contrast <- res$params$n_contrast
  evaluations <- choose(p, k) + n_contrast * choose(p, k - 1)
  search <- res$timings[["search"]]
  bitmaps <- res$timings[["prepare"]]
  call <- t[["elapsed"]]
  words32 <- sum(ceiling(table(y) / 32))
  popcount_limit <- if (gpu) opts$sms * 16 * opts$clock_ghz * 1e9 / (2^k * words32) else NA
  cells <- 2^k + if (k == 3) 2^2 else 0
  tensor_limit <- if (gpu && k >= 2) tensor_bitops / (cells * sum(ceiling(table(y) / 256) * 256)) else NA
  rate <- evaluations / search
  part <- function(name) if (name %in% names(res$timings)) res$timings[[name]] else NA
  glue <- part("engine") - bitmaps - search
  data.frame(shape = shape, input = input, target = target_of(k), dimensions = k, variables = p, objects = n,
             contrast = n_contrast, evaluations = evaluations, end_to_end_s = read_seconds + call,
             read_s = read_seconds, call_s = call, bitmaps_s = bitmaps, search_s = search,
             r_side_s = call - bitmaps - search,
             r_share = (call - bitmaps - search) / (read_seconds + call), input_s = part("input"), glue_s = glue,
             results_s = part("results"), rest_s = call - bitmaps - search - part("input") - glue - part("results"),
             cpu_s = cpu_seconds(t), rate = rate,
             ratio_popcount = rate / popcount_limit, ratio_tensor = rate / tensor_limit, res = I(list(res)))
}

# The search of synthetic data d from an R integer matrix or from a PLINK fileset.
search_input <- function(spec, input, k, p, d) {
  if (input == "matrix") {
    x <- fsgpu:::fsgpu_decode_bed(d$bytes, d$n, seq_len(p))  # an R integer matrix, objects x variables
    set.seed(opts$seed)
    return(measure(spec, "matrix", k, p, d$n, x, d$y))
  }
  prefix <- file.path(tempdir(), sprintf("bench-%s", spec))
  on.exit(unlink(paste0(prefix, c(".bed", ".bim", ".fam"))))
  write_bed(d, prefix)
  read <- system.time(geno <- read_plink(prefix, packed = TRUE))[["elapsed"]]
  set.seed(opts$seed)
  measure(spec, "plink", k, p, d$n, geno$genotypes, d$y, read)
}

rows <- list()
for (shape in opts$shapes) {
  if (shape == "mice") {
    dir <- file.path(opts$data, "mice_hs_bglr")
    if (!file.exists(file.path(dir, "mice.bed"))) { cat("mice: data not found in", dir, "\n"); next }
    read <- system.time(geno <- read_plink(file.path(dir, "mice"), packed = TRUE))[["elapsed"]]
    pheno <- utils::read.delim(gzfile(file.path(dir, "mice_pheno.tsv.gz")))
    colour <- pheno$CoatColour[match(geno$genotypes$sample_names, pheno$IID)]
    y <- factor(ifelse(colour == "albino", NA, colour == "black"))
    set.seed(opts$seed)
    row <- measure("mice", "plink", 2, geno$genotypes$n_snps, sum(!is.na(y)), geno$genotypes, y, read, TRUE, top = 5)
    best <- row$res[[1]]$tuples[1, ]
    map <- geno$map[c(best$tuple_1, best$tuple_2), ]
    row$answer <- sprintf("top %s (chr%s x chr%s), %d relevant", best$tuple, map$chr[1], map$chr[2],
                          length(row$res[[1]]$relevant))
    rows[[length(rows) + 1]] <- row
    next
  }
  spec <- if (shape %in% names(aliases)) aliases[[shape]] else shape
  if (!grepl("^[1-5]x[0-9]+$", spec)) stop("unknown shape ", shape, " (KxP, e.g. 2x204800, or mice)")
  k <- as.integer(sub("x.*", "", spec))
  p <- as.numeric(sub(".*x", "", spec))
  d <- synthetic(p, opts$objects, opts$seed)
  matrix_gains <- NULL
  planted <- function(res) if (k > 1)
    if (identical(sort(order(-res$scores$gain)[1:2]), c(1L, 2L))) "planted pair on top" else "planted pair NOT on top"
  for (input in opts$inputs) {
    row <- tryCatch(search_input(spec, input, k, p, d), error = function(e) {
      cat(sprintf("%s from %s: %s\n", spec, input, conditionMessage(e)))
      NULL
    })
    if (is.null(row)) next
    gains <- row$res[[1]]$scores$gain
    same <- if (input == "plink" && !is.null(matrix_gains))  # the same search from both inputs
      if (identical(gains, matrix_gains)) "gains equal the matrix's" else "GAINS DIFFER from the matrix's"
    row$answer <- paste(c(planted(row$res[[1]]), same), collapse = ", ")
    if (input == "matrix") matrix_gains <- gains
    rows[[length(rows) + 1]] <- row
  }
}
if (!length(rows)) stop("no search ran", call. = FALSE)
table <- do.call(rbind, rows)
table$res <- NULL
table <- cbind(date = format(Sys.Date()), device = device, backend = opts$backend,
               threads = threads, table)
fmt <- function(x, f) ifelse(is.na(x), "", sprintf(f, x))
md_rows <- sprintf(paste("| %s | %s | %s | %s | %.3f | %s | %.3f | %.3f | %.3f (%.0f%%) | %s / %s / %s / %s |",
                         "%s | %.3g | %s | %s | %s | %s |"),
                   table$shape, table$input, format(table$variables, big.mark = ",", scientific = FALSE),
                   format(table$contrast, big.mark = ","), table$end_to_end_s, fmt(table$read_s, "%.3f"),
                   table$bitmaps_s, table$search_s, table$r_side_s, 100 * table$r_share, fmt(table$input_s, "%.3f"),
                   fmt(table$glue_s, "%.3f"), fmt(table$results_s, "%.3f"), fmt(table$rest_s, "%.3f"),
                   fmt(if (gpu) NA else table$cpu_s, "%.2f"), table$rate, fmt(table$ratio_popcount, "%.3f"),
                   fmt(table$ratio_tensor, "%.4f"), table$target, table$answer)
header <- paste("| shape | input | variables | contrast | end to end s | read s | bitmaps s | search s |",
                "R side s (share) | of it: input / engine glue / results / rest s | CPU s | tuples/s |",
                "of popcount limit | of tensor-core peak | target | check |")
md <- c(sprintf("# find_interactions() benchmark, %s, %s (%s%s), %d objects, 3 levels, binary class",
                format(Sys.Date()), device, opts$backend, sprintf(", %d threads", threads),
                opts$objects),
        if (!is.null(opts$note)) c("", opts$note),
        "", paste("End to end: the find_interactions() call (PLINK: plus read_plink()). Bitmaps and search: the",
                  "engine's parts; R side: the rest of the call (and its share of end to end), of it the check of",
                  "x (input), the engine call beyond bitmaps and search (glue), the p-values and data frames",
                  "(results) and the rest. Rate: tuples",
                  "(with contrast ones) per second of search."),
        "",
        header,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        md_rows)
base <- file.path(opts$out, sprintf("interactions-%s-%s", format(Sys.Date()), tag))
utils::write.csv(table, paste0(base, ".csv"), row.names = FALSE)
writeLines(md, paste0(base, ".md"))
writeLines(md)
