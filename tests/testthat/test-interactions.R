# find_interactions() and read_plink() on the CPU: gains against the pure-R definition,
# discretization, missing values, thread counts, p-values and the mice coat-colour epistasis.

interaction_codes <- function(n, p, m, classes = 2, seed = 1, missing = 0) {
  with_seed(seed, {
    x <- matrix(sample(0:(m - 1), n * p, replace = TRUE), n, p, dimnames = list(NULL, paste0("v", 1:p)))
    y <- (x[, 1] + x[, 2]) %% classes
    y[sample(n, n %/% 4)] <- sample(0:(classes - 1), n %/% 4, replace = TRUE)
    if (missing > 0) x[sample(length(x), round(missing * length(x)))] <- NA
    list(x = x, y = factor(y))
  })
}

test_that("gains equal the definition for every dimension, level count and class count", {
  for (case in list(list(k = 1, m = 3, cl = 2), list(k = 2, m = 3, cl = 2), list(k = 2, m = 4, cl = 3),
                    list(k = 3, m = 2, cl = 2), list(k = 3, m = 3, cl = 3), list(k = 4, m = 2, cl = 2),
                    list(k = 5, m = 2, cl = 2))) {
    d <- interaction_codes(157, 7, case$m, case$cl, seed = case$k * 10 + case$m)
    res <- find_interactions(d$x, d$y, dimensions = case$k, levels = case$m, contrast = FALSE,
                             backend = "cpu", threads = 2)
    expect_equal(res$scores$gain, ref_best_gains(d$x, d$y, case$k, case$m), tolerance = 1e-8)
  }
})

test_that("each variable's tuple reaches its gain, and ties go to the first tuple", {
  d <- interaction_codes(200, 8, 3, seed = 3)
  d$x[, 8] <- d$x[, 1]  # a copy: its tuples tie with those of v1
  res <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, contrast = FALSE, return_tuples = TRUE,
                           backend = "cpu")
  s <- res$scores
  for (v in seq_len(nrow(s))) {
    t <- c(s$tuple_1[v], s$tuple_2[v])
    expect_true(v %in% t)
    expect_equal(ref_tuple_gains(d$x, d$y, t, 3)[match(v, t)], s$gain[v], tolerance = 1e-8)
  }
  expect_identical(c(s$tuple_1[2], s$tuple_2[2]), c(1L, 2L))  # (1, 2) ties with (2, 8): the first wins
  expect_identical(res$tuples$gain, sort(s$gain, decreasing = TRUE))
  expect_identical(res$tuples$tuple[1], paste(s$variable[c(s$tuple_1[res$tuples$index[1]], s$tuple_2[res$tuples$index[1]])], collapse = " x "))
})

test_that("results do not depend on the thread count and repeat with the same seed", {
  set.seed(5)
  x <- matrix(rnorm(300 * 40), 300, 40)
  y <- factor(x[, 3] * x[, 7] > 0)
  runs <- lapply(c(1, 2, 3), function(t) find_interactions(x, y, dimensions = 2, discretizations = 3, seed = 77,
                                                           return_tuples = TRUE, backend = "cpu", threads = t,
                                                           contrast = FALSE))
  expect_identical(runs[[1]]$scores, runs[[2]]$scores)
  expect_identical(runs[[1]]$scores, runs[[3]]$scores)
  set.seed(9)
  a <- find_interactions(x, y, dimensions = 2, backend = "cpu")
  set.seed(9)
  b <- find_interactions(x, y, dimensions = 2, backend = "cpu")
  expect_identical(a$scores, b$scores)
  expect_identical(a$contrast_gain, b$contrast_gain)
  expect_true(all(c("V3", "V7") %in% a$relevant))
})

test_that("range = 0 cuts at MDFS's equal-frequency positions", {
  set.seed(2)
  x <- matrix(rnorm(101 * 6), 101, 6)
  x[, 4] <- round(x[, 4])  # ties stay together
  y <- factor(x[, 1] + x[, 2] > 0)
  for (divisions in 1:3) {
    codes <- apply(x, 2, ref_equal_frequency, divisions = divisions)
    storage.mode(codes) <- "integer"
    numeric <- find_interactions(x, y, dimensions = 2, divisions = divisions, range = 0, contrast = FALSE,
                                 backend = "cpu")
    coded <- find_interactions(codes, y, dimensions = 2, levels = divisions + 1, contrast = FALSE, backend = "cpu")
    expect_identical(numeric$scores$gain, coded$scores$gain)
  }
  expect_equal(fsgpu:::mdfs_default_range(100, 1, 1), 0.94, tolerance = 1e-12)
})

test_that("missing values are left out per tuple, or become a level", {
  d <- interaction_codes(180, 6, 3, seed = 4, missing = 0.05)
  res <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, contrast = FALSE, backend = "cpu")
  expect_equal(res$scores$gain, ref_best_gains(d$x, d$y, 2, 3), tolerance = 1e-8)
  as_level <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, missing = "level", contrast = FALSE,
                                backend = "cpu")
  filled <- d$x
  filled[is.na(filled)] <- 3L
  expect_equal(as_level$scores$gain, ref_best_gains(filled, d$y, 2, 4), tolerance = 1e-8)
  expect_equal(as_level$params$levels, 4)
  set.seed(1)
  xn <- matrix(rnorm(150 * 5), 150, 5)
  xn[3, 2] <- NA
  expect_silent(find_interactions(xn, factor(xn[, 1] > 0), dimensions = 2, contrast = FALSE, backend = "cpu"))
})

test_that("p-values: the plain chi-squared tail in 1-D, the contrast fit for the maximum", {
  d <- interaction_codes(300, 20, 3, seed = 6)
  one <- find_interactions(d$x, d$y, dimensions = 1, levels = 3, contrast = TRUE, backend = "cpu")
  expect_equal(one$scores$p_value, stats::pchisq(pmax(2 * log(2) * one$scores$gain, 1e-8), one$df,
                                                 lower.tail = FALSE), tolerance = 1e-12)
  expect_equal(one$df, 2)
  two <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, backend = "cpu")
  expect_equal(two$df, 6)
  expect_length(two$contrast_gain, 30)
  expect_true(all(two$scores$p_value >= 0 & two$scores$p_value <= 1))
  expect_true(all(c("v1", "v2") %in% two$relevant))
  expect_true(is.finite(two$alpha) && two$alpha > 0)
  expect_identical(two$scores$p_adjusted, stats::p.adjust(two$scores$p_value, "holm"))
  three <- find_interactions(d$x, factor(d$y), dimensions = 2, levels = 3, backend = "cpu", p_adjust = "BH",
                             level = 0.01)
  expect_identical(three$relevant, three$scores$variable[three$scores$p_adjusted < 0.01])
})

test_that("bad input gets clear errors", {
  d <- interaction_codes(50, 5, 3)
  expect_error(find_interactions(d$x, d$y, dimensions = 6, backend = "cpu"), "dimensions")
  expect_error(find_interactions(d$x, d$y[-1], backend = "cpu"), "y")
  expect_error(find_interactions(d$x, factor(rep("a", 50)), backend = "cpu"), "two classes")
  expect_error(find_interactions(d$x, d$y, levels = 2, backend = "cpu"), "levels = 2")
  expect_error(find_interactions(d$x, d$y, range = 2, backend = "cpu"), "range")
  expect_error(find_interactions(d$x, d$y, seed = -1, backend = "cpu"), "seed")
  expect_error(find_interactions(d$x, d$y, dimensions = 1, return_tuples = TRUE, backend = "cpu"), "tuples")
  expect_error(find_interactions(matrix(letters[1:10], 5), factor(1:5)), "numeric")
  expect_error(find_interactions(matrix(rnorm(10), 5), factor(c(1, 1, 2, 2, 2)), divisions = 16), "divisions")
  expect_error(find_interactions(d$x * 1.5, d$y, levels = 3), "fractions")
})

test_that("read_plink reads genotypes, packed or not, and refuses malformed files", {
  set.seed(3)
  g <- matrix(sample(0:2, 23 * 9, replace = TRUE), 23, 9, dimnames = list(paste0("s", 1:23), paste0("rs", 1:9)))
  g[c(4, 50, 77)] <- NA
  dir <- tempfile("plink")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  prefix <- write_plink(file.path(dir, "toy"), g)
  read <- read_plink(prefix)
  expect_identical(read$genotypes, `storage.mode<-`(g, "integer"))
  expect_identical(read$map$snp, colnames(g))
  expect_identical(read_plink(paste0(prefix, ".bed"), snps = c("rs3", "rs1"))$genotypes, read$genotypes[, c(3, 1)])
  packed <- read_plink(prefix, packed = TRUE)$genotypes
  expect_s3_class(packed, "fsgpu_genotypes")
  expect_identical(dim(packed), c(23L, 9L))
  y <- factor(rep(c("a", "b"), length.out = 23))
  from_matrix <- find_interactions(read$genotypes, y, dimensions = 2, levels = 3, contrast = FALSE, backend = "cpu")
  from_packed <- find_interactions(packed, y, dimensions = 2, contrast = FALSE, backend = "cpu")
  expect_identical(from_packed$scores$gain, from_matrix$scores$gain)
  expect_identical(from_packed$scores$variable, colnames(g))
  # The .bed in slices of 5 bytes (odd against the 3-byte header) on 3 threads: the file's bytes.
  bed <- readBin(paste0(prefix, ".bed"), "raw", 1000)
  expect_identical(fsgpu:::fsgpu_read_bed(paste0(prefix, ".bed"), 23, 9, 3L, 5), bed[-(1:3)])
  # Malformed: wrong magic, sample-major, wrong length, missing file.
  writeBin(c(as.raw(c(0x00, 0x1b, 0x01)), bed[-(1:3)]), paste0(prefix, ".bed"))
  expect_error(read_plink(prefix), "not a PLINK")
  writeBin(c(as.raw(c(0x6c, 0x1b, 0x00)), bed[-(1:3)]), paste0(prefix, ".bed"))
  expect_error(read_plink(prefix), "sample-major")
  writeBin(bed[-length(bed)], paste0(prefix, ".bed"))
  expect_error(read_plink(prefix), "bytes")
  writeBin(bed[1:2], paste0(prefix, ".bed"))
  expect_error(read_plink(prefix), "not a PLINK")
  expect_error(read_plink(file.path(dir, "absent")), "cannot find")
  writeBin(bed, paste0(prefix, ".bed"))
  expect_error(read_plink(prefix, snps = "rs99"), "rs99")
})

test_that("the mice coat-colour epistasis (agouti on chr2 x Tyrp1 on chr4) ranks on top", {
  dir <- mice_data_dir()
  skip_if(is.null(dir), "mice data not found")
  geno <- read_plink(file.path(dir, "mice"))
  pheno <- utils::read.delim(gzfile(file.path(dir, "mice_pheno.tsv.gz")))
  colour <- pheno$CoatColour[match(rownames(geno$genotypes), pheno$IID)]
  keep <- !is.na(colour) & colour != "albino"
  res <- find_interactions(geno$genotypes[keep, ], factor(colour[keep] == "black"), dimensions = 2, top = 5,
                           contrast = FALSE, backend = "cpu")
  best <- res$tuples[1, ]
  chromosomes <- geno$map$chr[c(best$tuple_1, best$tuple_2)]
  positions <- geno$map$cm[c(best$tuple_1, best$tuple_2)]
  expect_identical(chromosomes, c("2", "4"))
  expect_true(abs(positions[1] - 83) < 5)   # Asip (agouti), chr2 about 83 cM
  expect_true(abs(positions[2] - 40) < 15)  # the Tyrp1 region of chr4
})

test_that("the p-value fit equals MDFS's ComputePValue written in plain R", {
  set.seed(11)
  for (n in c(4, 5, 12, 40, 97, 400, 40000)) {  # 40,000: end points searched in three pieces
    for (mode in c("exp", "lin")) {
      for (last_only in c(FALSE, TRUE)) {
        stat <- sort(stats::rchisq(n, 6) * stats::runif(1, 0.5, 2))
        v <- stats::pchisq(stat, 4, lower.tail = FALSE)
        info <- sprintf("n = %d, %s, last_only = %s", n, mode, last_only)
        expect_equal(fsgpu:::fsgpu_mdfs_alpha(v, mode, last_only, 8), reference_mdfs_alpha(v, mode, last_only),
                     tolerance = 1e-12, info = info)
      }
    }
  }
})

# --- Interesting tuples (threshold =): MDFS's ComputeInterestingTuples ---

# A threshold halfway between two of the reference's gains, so that rounding cannot move a gain
# across it.
threshold_between <- function(gains, q) {
  g <- sort(unique(gains))
  i <- max(1, floor(q * length(g)))
  (g[i] + g[i + 1]) / 2
}

expect_interesting <- function(res, ref, info) {
  got <- res$interesting_tuples
  rownames(ref) <- NULL
  k <- res$params$dimensions
  cols <- c("index", paste0("tuple_", seq_len(k)), "discretization")
  expect_identical(got[cols], ref[cols], info = info)
  expect_equal(got$gain, ref$gain, tolerance = 1e-8, info = info)
  expect_identical(got$variable, colnames_of(res)[got$index], info = info)
  expect_identical(got$tuple, do.call(paste, c(lapply(seq_len(k), function(i) colnames_of(res)[got[[paste0("tuple_", i)]]]),
                                                sep = " x ")), info = info)
}
colnames_of <- function(res) res$scores$variable

test_that("interesting tuples: every (tuple, variable) above the threshold, as the definition, 2- to 5-way", {
  cases <- list(list(k = 2, m = 2, cl = 2, seed = 1), list(k = 2, m = 3, cl = 3, seed = 2),
                list(k = 2, m = 4, cl = 2, seed = 3), list(k = 3, m = 2, cl = 2, seed = 4),
                list(k = 3, m = 3, cl = 2, seed = 5), list(k = 3, m = 4, cl = 3, seed = 6),
                list(k = 4, m = 2, cl = 2, seed = 7), list(k = 5, m = 2, cl = 2, seed = 8))
  for (case in cases) {
    p <- if (case$k >= 4) 7 else 9
    d <- interaction_codes(143, p, case$m, case$cl, seed = case$seed)
    all <- ref_interesting_tuples(list(d$x), d$y, case$k, case$m, -Inf)
    info <- sprintf("k = %d, m = %d, %d classes", case$k, case$m, case$cl)
    everything <- find_interactions(d$x, d$y, dimensions = case$k, levels = case$m, threshold = 0, contrast = FALSE,
                                    backend = "cpu", threads = 2)
    expect_equal(nrow(everything$interesting_tuples), case$k * choose(p, case$k), info = info)
    expect_interesting(everything, all, info)
    # Each variable's best gain is the largest of its rows.
    expect_identical(as.vector(tapply(everything$interesting_tuples$gain, everything$interesting_tuples$index, max)),
                     everything$scores$gain, info = info)
    threshold <- threshold_between(all$gain, 0.7)
    above <- find_interactions(d$x, d$y, dimensions = case$k, levels = case$m, threshold = threshold,
                               contrast = TRUE, n_contrast = 5, backend = "cpu", threads = 2)
    expect_interesting(above, all[all$gain > threshold, , drop = FALSE], info)
  }
})

test_that("interesting tuples: interesting_vars and require_all_vars filter the tuples as MDFS 1.5", {
  d <- interaction_codes(160, 9, 3, seed = 12)
  for (k in 2:3) {
    all <- ref_interesting_tuples(list(d$x), d$y, k, 3, -Inf)
    threshold <- threshold_between(all$gain, 0.3)
    some <- find_interactions(d$x, d$y, dimensions = k, levels = 3, threshold = threshold,
                              interesting_vars = c("v2", "v7"), contrast = FALSE, backend = "cpu")
    expect_interesting(some, ref_interesting_tuples(list(d$x), d$y, k, 3, threshold, interesting = c(2, 7)),
                       paste("at least one, k =", k))
    only <- find_interactions(d$x, d$y, dimensions = k, levels = 3, threshold = threshold,
                              interesting_vars = c(1, 2, 7, 8), require_all_vars = TRUE, contrast = FALSE,
                              backend = "cpu")
    expect_interesting(only, ref_interesting_tuples(list(d$x), d$y, k, 3, threshold, interesting = c(1, 2, 7, 8),
                                                    require_all = TRUE), paste("all, k =", k))
    expect_identical(only$params$interesting_vars, c("v1", "v2", "v7", "v8"))
  }
  none <- find_interactions(d$x, d$y, dimensions = 3, levels = 3, threshold = 0, interesting_vars = c("v1", "v2"),
                            require_all_vars = TRUE, contrast = FALSE, backend = "cpu")
  expect_identical(nrow(none$interesting_tuples), 0L)
  expect_named(none$interesting_tuples, c("variable", "index", "tuple", "tuple_1", "tuple_2", "tuple_3", "gain",
                                          "discretization"))
})

test_that("interesting tuples over several discretizations, with missing values, threads and tiles", {
  set.seed(21)
  x <- matrix(rnorm(170 * 8), 170, 8, dimnames = list(NULL, paste0("g", 1:8)))
  y <- factor(x[, 2] * x[, 5] > 0)
  for (divisions in 1:3) {
    codes <- mdfs_codes(x, divisions, 3, 0.4, 99)
    all <- ref_interesting_tuples(codes, y, 2, divisions + 1, -Inf)
    threshold <- threshold_between(all$gain, 0.5)
    res <- find_interactions(x, y, dimensions = 2, divisions = divisions, discretizations = 3, range = 0.4,
                             seed = 99, threshold = threshold, contrast = FALSE, backend = "cpu", threads = 2)
    expect_interesting(res, all[all$gain > threshold, , drop = FALSE], paste("divisions", divisions))
    expect_true(all(c(1L, 2L, 3L) %in% all$discretization) || divisions == 1)
  }
  # Missing values: each tuple's valid objects (the reference leaves them out per tuple too).
  d <- interaction_codes(150, 7, 3, seed = 22, missing = 0.05)
  all <- ref_interesting_tuples(list(d$x), d$y, 2, 3, -Inf)
  res <- find_interactions(d$x, d$y, dimensions = 2, levels = 3, threshold = 0, contrast = FALSE, backend = "cpu")
  expect_interesting(res, all, "missing values")
  # Threads, and tiles on workers whose first variables start anywhere (not at multiples of 64).
  set.seed(23)
  g <- matrix(sample(0:2, 300 * 150, replace = TRUE), 300, 150)
  yg <- factor((g[, 10] + g[, 140]) %% 2)
  args <- list(g, yg, dimensions = 2, threshold = 3, n_contrast = 20, seed = 5, backend = "cpu")
  set.seed(1)
  one <- do.call(find_interactions, c(args, threads = 1))
  set.seed(1)
  two <- do.call(find_interactions, c(args, threads = 2))
  expect_identical(one$interesting_tuples, two$interesting_tuples)
  expect_gt(nrow(one$interesting_tuples), 100)
  skip_if_not_installed("BiocParallel")
  old <- options(fsgpu.tiles = 3)
  on.exit(options(old))
  for (k in 2:3) {
    tuple_args <- args
    if (k == 3) {
      tuple_args[[1]] <- g[, 1:70]
      tuple_args$dimensions <- 3
      tuple_args$threshold <- 6
    }
    set.seed(1)
    single <- do.call(find_interactions, c(tuple_args, threads = 1))
    set.seed(1)
    tiled <- do.call(find_interactions, c(tuple_args, threads = 1, BPPARAM = BiocParallel::SerialParam()))
    expect_identical(tiled$interesting_tuples, single$interesting_tuples)
    expect_identical(tiled$scores, single$scores)
  }
})

test_that("interesting tuples: the limit on rows, and bad arguments get clear errors", {
  d <- interaction_codes(80, 8, 3, seed = 24)
  old <- options(fsgpu.max_interesting_tuples = 20)
  on.exit(options(old))
  expect_error(find_interactions(d$x, d$y, dimensions = 2, threshold = 0, backend = "cpu"), "keeps every tuple")
  expect_error(find_interactions(d$x, d$y, dimensions = 2, threshold = 1e-6, contrast = FALSE, backend = "cpu"),
               "exceed the threshold")
  options(old)
  expect_error(find_interactions(d$x, d$y, interesting_vars = "v1", backend = "cpu"), "give a threshold")
  expect_error(find_interactions(d$x, d$y, require_all_vars = TRUE, backend = "cpu"), "give a threshold")
  expect_error(find_interactions(d$x, d$y, dimensions = 1, threshold = 1, backend = "cpu"), "dimensions")
  expect_error(find_interactions(d$x, d$y, threshold = "a", backend = "cpu"), "threshold")
  expect_error(find_interactions(d$x, d$y, threshold = 1, interesting_vars = "nope", backend = "cpu"), "nope")
  expect_error(find_interactions(d$x, d$y, threshold = 1, interesting_vars = 1, require_all_vars = NA,
                                 backend = "cpu"), "require_all_vars")
  # Without a threshold nothing changes: no list, the same parameters.
  plain <- find_interactions(d$x, d$y, dimensions = 2, contrast = FALSE, backend = "cpu")
  expect_false("interesting_tuples" %in% names(plain))
  expect_false("threshold" %in% names(plain$params))
  expect_output(print(find_interactions(d$x, d$y, dimensions = 2, threshold = 50, contrast = FALSE, backend = "cpu")),
                "gains above the threshold 50")
})

test_that("interesting tuples from packed genotypes and a SummarizedExperiment equal the matrix's", {
  set.seed(25)
  g <- matrix(sample(0:2, 61 * 9, replace = TRUE), 61, 9, dimnames = list(paste0("s", 1:61), paste0("rs", 1:9)))
  y <- factor(rep(c("a", "b"), length.out = 61))
  dir <- tempfile("plink")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  packed <- read_plink(write_plink(file.path(dir, "toy"), g), packed = TRUE)$genotypes
  from_matrix <- find_interactions(g, y, dimensions = 2, levels = 3, threshold = 1, interesting_vars = "rs4",
                                   contrast = FALSE, backend = "cpu")
  from_packed <- find_interactions(packed, y, dimensions = 2, threshold = 1, interesting_vars = "rs4",
                                   contrast = FALSE, backend = "cpu")
  expect_identical(from_packed$interesting_tuples, from_matrix$interesting_tuples)
  expect_gt(nrow(from_matrix$interesting_tuples), 0)
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(assays = list(codes = t(g)),
                                                   colData = S4Vectors::DataFrame(group = y))
  from_se <- find_interactions(se, class = "group", dimensions = 2, levels = 3, threshold = 1,
                               interesting_vars = "rs4", contrast = FALSE, backend = "cpu")
  expect_identical(from_se$interesting_tuples, from_matrix$interesting_tuples)
})
