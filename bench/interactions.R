# Benchmark of the exhaustive interaction search find_interactions(): pair and triple
# evaluations per second on synthetic genotypes (1,024 objects, 3 levels, binary class) and the
# real mice genotypes, end to end from R, on the CPU or GPU engine.
#
#   Rscript bench/interactions.R [--backend cpu|gpu] [--threads 2] [--shapes LIST] [--data DIR]
#                                [--clock-ghz 1.98] [--sms 132] [--mma-per-clock 0.57] [--out DIR]
#                                [--tag TAG] [--seed 1]
#
# Shapes: pairs10k, pairs50k, pairs204k (2-way over 10,000 / 50,000 / 204,800 variables),
# triples2k, triples10k (3-way over 2,000 / 10,000), singles1m, quads300, quints120 (1-, 4- and
# 5-way over 1,000,000 / 300 / 120; not in the default list), mice (2-way over the 10,346 SNPs of
# ../shared/data/mice_hs_bglr, black vs other coat colours, with MDFS's contrast variables).
# Synthetic data go to the engine packed (read_plink's form), never through an R matrix; the
# searches run without contrast variables, so the rate is the engine's. Targets (the issue):
# one H100: 2-way >= 2e10 pairs/s and 204,800 variables <= 2 s; 3-way >= 5e9 triples/s.
# CPU >= 10 x MDFS's scalar rate (4e5 pairs/s per core at 1,024 objects).
# The popcount limit: SMs x 16 popcounts (32-bit) per clock; a k-tuple needs (levels-1)^k
# counted cells x 32-bit words of objects (the other cells follow from marginals). On GPUs with
# binary tensor cores (sm_80+) the engine counts with mma AND+POPC instead, past that limit: the
# tensor-core limit is SMs x mma per clock (0.57 m16n8k256 per SM per clock on an H100, measured
# by bench/b1_mma_peak.cu)
# x 32,768 bit operations, over (levels-1)^k cells (2-way) or (levels-1)^3 + (levels-1)^2
# cells (3-way: the (j, l) counts too) x objects padded to 256 per class.

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
  cat("Rscript bench/interactions.R [--backend cpu|gpu] [--threads 2] [--shapes LIST] [--data DIR]\n",
      "                             [--clock-ghz 1.98] [--sms 132] [--mma-per-clock 0.57] [--out DIR] [--tag TAG]\n",
      "                             [--seed 1]\n", sep = "")
}
opts <- read_options(commandArgs(TRUE), list(
  backend = "gpu", threads = 2L, shapes = c("pairs10k", "pairs50k", "pairs204k", "triples2k", "triples10k", "mice"),
  data = file.path("..", "shared", "data"), clock_ghz = 1.98, sms = 132L, mma_per_clock = 0.57,
  out = "bench/results", tag = NULL, seed = 1L), usage = usage, specs = list(
  "--backend" = identity, "--threads" = as.integer, "--shapes" = split_list, "--data" = identity,
  "--clock-ghz" = as.numeric, "--sms" = as.integer, "--mma-per-clock" = as.numeric, "--out" = identity,
  "--tag" = identity, "--seed" = as.integer))
stopifnot(opts$backend %in% c("cpu", "gpu"))
tag <- if (is.null(opts$tag)) opts$backend else opts$tag
shapes <- opts$shapes
dir.create(opts$out, showWarnings = FALSE, recursive = TRUE)
info <- backend_info()
device <- if (opts$backend == "gpu") info$devices$name[1] else
  paste(unique(sub("^model name\\s*:\\s*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE))),
        collapse = ", ")

specs <- list(pairs10k = c(p = 10000, k = 2), pairs50k = c(p = 50000, k = 2), pairs204k = c(p = 204800, k = 2),
              triples2k = c(p = 2000, k = 3), triples10k = c(p = 10000, k = 3), singles1m = c(p = 1e6, k = 1),
              quads300 = c(p = 300, k = 4), quints120 = c(p = 120, k = 5))
targets <- c(NA, 1.5e11, 5e10, 1e11, 2e10)  # issue 18: GPU tuples/s of search (1-way: 0.5 s end to end)
tuple_names <- c("variables", "pairs", "triples", "quadruples", "quintuples")

# Synthetic genotypes in .bed form: every byte holds four calls with no missing code (01), the
# class is (g1 > 0) xor (g2 > 0) for 80% of the objects, random for the rest.
synthetic <- function(p, n = 1024L, seed) {
  set.seed(seed)
  codes <- as.matrix(expand.grid(0:3, 0:3, 0:3, 0:3))
  valid <- codes[apply(codes != 1, 1, all), ] %*% c(1, 4, 16, 64)
  bytes <- as.raw(sample(valid, p * n / 4, replace = TRUE))
  genotypes <- structure(list(bytes = bytes, n_samples = n, n_snps = p, snp_names = paste0("snp", seq_len(p)),
                              sample_names = paste0("s", seq_len(n))), class = "fsgpu_genotypes")
  g <- fsgpu:::fsgpu_decode_bed(bytes, n, 1:2)
  y <- xor(g[, 1] > 0, g[, 2] > 0)
  noisy <- runif(n) < 0.2
  y[noisy] <- runif(sum(noisy)) < 0.5
  list(x = genotypes, y = factor(y))
}

rows <- list()
for (shape in shapes) {
  if (shape == "mice") {
    dir <- file.path(opts$data, "mice_hs_bglr")
    if (!file.exists(file.path(dir, "mice.bed"))) { cat("mice: data not found in", dir, "\n"); next }
    geno <- read_plink(file.path(dir, "mice"), packed = TRUE)
    pheno <- utils::read.delim(gzfile(file.path(dir, "mice_pheno.tsv.gz")))
    colour <- pheno$CoatColour[match(geno$genotypes$sample_names, pheno$IID)]
    y <- factor(ifelse(colour == "albino", NA, colour == "black"))
    set.seed(opts$seed)
    t <- system.time(res <- suppressMessages(find_interactions(geno$genotypes, y, dimensions = 2, top = 5,
                                                               backend = opts$backend, threads = opts$threads)))
    best <- res$tuples[1, ]
    map <- geno$map[c(best$tuple_1, best$tuple_2), ]
    cat(sprintf("mice: %s pairs + %s contrast pairs in %.2f s (search %.2f s); top %s (chr%s %.1f cM x chr%s %.1f cM), %d relevant\n",
                format(choose(10346, 2), big.mark = ","), format(10346 * 10346, big.mark = ","), t[["elapsed"]],
                res$timings[["search"]], best$tuple, map$chr[1], map$cm[1], map$chr[2], map$cm[2],
                length(res$relevant)))
    print(res)
    evaluations <- choose(10346, 2) + 10346 * 10346
    rows[[shape]] <- data.frame(shape = shape, dimensions = 2, objects = res$params$n_objects, variables = 10346,
                                seconds = t[["elapsed"]], search_seconds = res$timings[["search"]],
                                evaluations = evaluations, rate = evaluations / res$timings[["search"]],
                                limit_rate = NA, ratio_to_limit = NA, tensor_limit_rate = NA,
                                ratio_to_tensor_limit = NA, target_rate = NA,
                                answer = sprintf("%s (chr%s x chr%s)", best$tuple, map$chr[1], map$chr[2]))
    next
  }
  spec <- specs[[shape]]
  if (is.null(spec)) stop("unknown shape ", shape)
  p <- spec[["p"]]
  k <- spec[["k"]]
  d <- synthetic(p, seed = opts$seed)
  # Best gains only (the tuples take a second pass): the engine's rate.
  t <- system.time(res <- find_interactions(d$x, d$y, dimensions = k, contrast = FALSE,
                                            backend = opts$backend, threads = opts$threads))
  evaluations <- choose(p, k)
  words32 <- sum(ceiling(table(d$y) / 64)) * 2
  popcounts <- 2^k * words32  # (levels - 1)^k counted cells, 3 levels
  # The GPU's popcount limit; on the CPU the target is 10 x MDFS's scalar 4e5 pairs/s per thread.
  limit <- if (opts$backend == "gpu") opts$sms * 16 * opts$clock_ghz * 1e9 / popcounts else NA
  bit_ops <- (if (k == 3) 2^3 + 2^2 else 2^k) * sum(ceiling(table(d$y) / 256) * 256)
  tensor_limit <- if (opts$backend == "gpu" && k > 1)
    opts$sms * opts$mma_per_clock * opts$clock_ghz * 1e9 * 32768 / bit_ops else NA
  rate <- evaluations / res$timings[["search"]]
  top_ok <- identical(sort(order(-res$scores$gain)[1:2]), c(1L, 2L))
  cat(sprintf("%s: %d-way over %s variables, 1,024 objects: %.3f s end to end (bitmaps %.3f s), search %.3f s: %.3g %s/s (%.0f%% of the GPU popcount limit %.3g/s, %.1f%% of the tensor-core limit %.3g/s); planted pair scores highest: %s\n",
              shape, k, format(p, big.mark = ","), t[["elapsed"]], res$timings[["prepare"]], res$timings[["search"]], rate,
              tuple_names[k], 100 * rate / limit, limit, 100 * rate / tensor_limit, tensor_limit,
              top_ok))
  rows[[shape]] <- data.frame(shape = shape, dimensions = k, objects = 1024, variables = p, seconds = t[["elapsed"]],
                              search_seconds = res$timings[["search"]], evaluations = evaluations, rate = rate,
                              limit_rate = limit, ratio_to_limit = rate / limit,
                              tensor_limit_rate = tensor_limit, ratio_to_tensor_limit = rate / tensor_limit,
                              target_rate = if (opts$backend == "cpu") if (k == 2) 4e6 * opts$threads else NA
                                            else targets[k],
                              answer = if (top_ok) "planted pair scores highest" else "planted pair NOT highest")
}
table <- do.call(rbind, rows)
table <- cbind(date = format(Sys.Date()), device = device, backend = opts$backend,
               threads = if (opts$backend == "cpu") opts$threads else NA, table)
base <- file.path(opts$out, sprintf("interactions-%s-%s", format(Sys.Date()), tag))
utils::write.csv(table, paste0(base, ".csv"), row.names = FALSE)
md <- c(sprintf("# find_interactions() benchmark, %s, %s (%s)", format(Sys.Date()), device, opts$backend), "",
        "| shape | k | variables | objects | seconds | search s | evaluations/s | ratio to popcount limit | ratio to tensor-core limit | target/s | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %d | %.3f | %.3f | %.3g | %s | %s | %s | %s |", table$shape, table$dimensions,
                format(table$variables, big.mark = ","), table$objects, table$seconds, table$search_seconds,
                table$rate, ifelse(is.na(table$ratio_to_limit), "", sprintf("%.2f", table$ratio_to_limit)),
                ifelse(is.na(table$ratio_to_tensor_limit), "", sprintf("%.3f", table$ratio_to_tensor_limit)),
                ifelse(is.na(table$target_rate), "", sprintf("%.0e", table$target_rate)), table$answer))
writeLines(md, paste0(base, ".md"))
print(table)
