# Pure-R references for find_interactions(): MDFS's gains straight from the definition.

# Gains of the variables of one tuple (column indices of `codes`, 0..m-1 or NA): count the
# objects valid in all of them per voxel and class, add p_c = xi N_c / N_min to every cell,
# IG_v = condH(table summed over v) - condH(table), condH = sum T log2 T - sum t log2 t.
ref_tuple_gains <- function(codes, y, tuple, m, xi = 0.25) {
  y <- as.integer(factor(y))
  sizes <- tabulate(y)
  pseudo <- sizes / min(sizes) * xi
  sub <- codes[, tuple, drop = FALSE]
  ok <- stats::complete.cases(sub)
  k <- length(tuple)
  cell <- 1 + as.vector(sub[ok, , drop = FALSE] %*% m^(seq_len(k) - 1))
  table <- matrix(0, m^k, length(sizes))
  for (i in seq_along(cell)) table[cell[i], y[ok][i]] <- table[cell[i], y[ok][i]] + 1
  table <- sweep(table, 2, pseudo, "+")
  cond_h <- function(t) sum(rowSums(t) * log2(rowSums(t))) - sum(t * log2(t))
  full <- cond_h(table)
  vapply(seq_len(k), function(d) {
    digit <- ((seq_len(m^k) - 1) %/% m^(d - 1)) %% m
    rest <- (seq_len(m^k) - 1) - digit * m^(d - 1)
    reduced <- rowsum(table, rest)
    cond_h(reduced) - full
  }, numeric(1))
}

# Each variable's best gain over all k-tuples of the columns.
ref_best_gains <- function(codes, y, k, m, xi = 0.25) {
  best <- rep(-Inf, ncol(codes))
  for (t in utils::combn(ncol(codes), k, simplify = FALSE)) {
    g <- ref_tuple_gains(codes, y, t, m, xi)
    best[t] <- pmax(best[t], g)
  }
  best
}

# MDFS's ComputeInterestingTuples from the definition: for every k-tuple of the columns (in
# combn's lexicographic order) that holds an interesting variable (every one with require_all;
# every tuple without interesting), a row per variable whose gain exceeds the threshold; the gain
# is the largest over the discretizations (codes: a list of code matrices, one per
# discretization), the discretization the first within 1e-9 of it (exactly equal gains tie).
ref_interesting_tuples <- function(codes, y, k, m, threshold, interesting = integer(), require_all = FALSE) {
  rows <- list()
  for (t in utils::combn(ncol(codes[[1]]), k, simplify = FALSE)) {
    n <- sum(t %in% interesting)
    if (length(interesting) && (if (require_all) n < k else n == 0)) next
    gains <- vapply(codes, function(cd) ref_tuple_gains(cd, y, t, m), numeric(k))
    gains <- matrix(gains, nrow = k)
    for (i in seq_len(k)) {
      best <- max(gains[i, ])
      if (!(best > threshold)) next
      rows[[length(rows) + 1]] <- c(t[i], t, best, which(gains[i, ] >= best - 1e-9)[1])
    }
  }
  out <- as.data.frame(do.call(rbind, c(rows, list(matrix(numeric(0), 0, k + 3)))))
  names(out) <- c("index", paste0("tuple_", seq_len(k)), "gain", "discretization")
  for (col in setdiff(names(out), "gain")) out[[col]] <- as.integer(out[[col]])
  out
}

# The codes of numeric x in each discretization, as find_interactions() draws them (every row
# has a class; no contrast variables), through the package's own coding entry point.
mdfs_codes <- function(x, divisions, discretizations, range, seed) {
  coded <- fsgpu:::fsgpu_interaction_block_codes(x, 1, seq_len(nrow(x)), ncol(x), integer(0), 0, divisions,
                                                 discretizations, range, seed, 1)
  lapply(seq_len(discretizations), function(d) {
    codes <- matrix(as.integer(coded$codes[, , d]), nrow(x))
    codes[codes == 255L] <- NA  # int8 -1: missing
    codes
  })
}

# MDFS's equal-frequency levels (range = 0): thresholds at sorted positions round(n/(d+1)),
# accumulated, used as 0-based indices; a value above a threshold goes up a level.
ref_equal_frequency <- function(values, divisions) {
  sorted <- sort(values)
  n <- length(sorted)
  step <- n / (divisions + 1)
  done <- cumsum(rep(round(step + 1e-12 * sign(step)), divisions))  # lround of an exact step
  thresholds <- sorted[pmin(done, n - 1) + 1]
  vapply(values, function(v) sum(v > thresholds), numeric(1))
}

# A small PLINK fileset: genotypes (samples x SNPs, 0/1/2/NA) written as .bed/.bim/.fam.
write_plink <- function(prefix, genotypes) {
  code <- c(`2` = 0L, `1` = 2L, `0` = 3L)  # allele-1 count -> two-bit code; NA -> 1
  n <- nrow(genotypes)
  per_snp <- ceiling(n / 4)
  bytes <- raw(3 + per_snp * ncol(genotypes))
  bytes[1:3] <- as.raw(c(0x6c, 0x1b, 0x01))
  for (j in seq_len(ncol(genotypes))) {
    g <- genotypes[, j]
    bits <- ifelse(is.na(g), 1L, code[as.character(g)])
    bits <- c(bits, rep(0L, per_snp * 4 - n))
    packed <- colSums(matrix(bits, 4) * c(1L, 4L, 16L, 64L))
    bytes[3 + (j - 1) * per_snp + seq_len(per_snp)] <- as.raw(packed)
  }
  writeBin(bytes, paste0(prefix, ".bed"))
  utils::write.table(data.frame(1, colnames(genotypes), 0, seq_len(ncol(genotypes)), "A", "G"),
                     paste0(prefix, ".bim"), col.names = FALSE, row.names = FALSE, quote = FALSE, sep = "\t")
  utils::write.table(data.frame(rownames(genotypes), rownames(genotypes), 0, 0, 1, -9),
                     paste0(prefix, ".fam"), col.names = FALSE, row.names = FALSE, quote = FALSE, sep = " ")
  invisible(prefix)
}

# The mice genotypes of ../shared/data (FSGPU_DATA points elsewhere), or NULL.
mice_data_dir <- function() {
  candidates <- c(Sys.getenv("FSGPU_DATA"), "../../../shared/data", "../../../../shared/data", "/work/shared/data")
  for (d in candidates[nzchar(candidates)]) {
    if (file.exists(file.path(d, "mice_hs_bglr", "mice.bed"))) return(file.path(d, "mice_hs_bglr"))
  }
  NULL
}

# MDFS 1.5's p-value fit (ComputePValue) in plain R: alpha for tails v sorted by statistic,
# fitted on every end point (mask = NULL) or on the last only (contrast variables).
reference_mdfs_alpha <- function(v, mode, last_only, search_points = 8) {
  mask <- if (last_only) TRUE else NULL
  n <- length(v)
  k <- seq_len(n)
  if (mode == "exp") {
    l_all <- log(k)
    w <- k / (n - k + 1)
  } else {
    l_all <- k
    w <- 1 / k / (n - k + 1)
  }
  sums <- list(w = cumsum(w), v = cumsum(v), wv = cumsum(w * v), wv2 = cumsum(w * v^2), wl = cumsum(w * l_all),
               wl2 = cumsum(w * l_all^2), wlv = cumsum(w * l_all * v))
  rest <- rev(cumsum(rev(w * v^2)))
  # The shifted squared deviation and alpha when ignoring the n0 - 1 smallest, for every end
  # point of the fit (ends = NULL), or only for the last (with contrast variables, all of them
  # are irrelevant and the fit ends at the last).
  fit_from <- function(n0, last_only) {
    npt <- n - n0 + 1
    at <- if (last_only) max(1, npt - 1) else seq_len(npt)
    s <- lapply(sums, function(x) (x[n0:n] - c(0, x)[n0])[at])
    l <- l_all[at]
    kk <- at
    if (mode == "exp") {
      alpha <- s$v / kk
      dev <- s$wv2 + 2 * alpha * s$wlv - 2 * alpha * l * s$wv + alpha^2 * s$wl2 - 2 * alpha^2 * l * s$wl +
        (alpha * l)^2 * s$w
    } else {
      alpha <- (s$wv - s$wlv / l) / (s$w - 2 * s$wl / l + s$wl2 / l^2)
      dev <- s$wv2 - 2 * alpha * s$wv + 2 * alpha * s$wlv / l + alpha^2 * s$w - 2 * alpha^2 * s$wl / l +
        alpha^2 * s$wl2 / l^2
    }
    total_w <- sums$w[n] - c(0, sums$w)[n0]
    if (last_only) {
      # shifted[npt] = (dev[npt - 1] + rest[n]) / total weight; alpha at npt.
      shifted <- ((if (npt > 1) dev else 0) + rest[n]) / total_w
      s_end <- lapply(sums, function(x) x[n] - c(0, x)[n0])
      alpha_end <- if (mode == "exp") s_end$v / npt else {
        le <- l_all[npt]
        (s_end$wv - s_end$wlv / le) / (s_end$w - 2 * s_end$wl / le + s_end$wl2 / le^2)
      }
      return(list(dev = shifted, alpha = alpha_end))
    }
    shifted <- (c(0, dev) + c(rest[n0:n], 0))[seq_len(npt)] / total_w
    list(dev = shifted, alpha = alpha)
  }
  min_irrelevant <- min(n %/% 3, 30)
  max_ignored <- min(n - min_irrelevant, n %/% 3)
  choose_end <- function(dev) if (!is.null(mask)) length(dev) else
    min_irrelevant - 1 + which.min(dev[min_irrelevant:length(dev)])
  best <- list(dev = Inf, alpha = NA_real_)
  consider <- function(n0) {
    f <- fit_from(n0, last_only = !is.null(mask))
    end <- choose_end(f$dev)
    if (f$dev[end] < best$dev) best <<- list(dev = f$dev[end], alpha = f$alpha[end], n0 = n0)
  }
  if (max_ignored <= 1) {
    consider(1)
  } else {
    lo <- 1
    hi <- max_ignored
    step <- Inf
    while (step > 1) {
      step <- max(1, round((hi - lo) / search_points))
      for (n0 in seq(lo, hi - 1, by = step)) consider(n0)
      lo <- max(1, best$n0 - step)
      hi <- min(max_ignored, best$n0 + step)
    }
  }
  best$alpha
}
