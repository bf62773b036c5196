# Pure-R references for mi_pairs(), mi_matrix() and mi_network(): plug-in estimates from counts,
# in bits, written from the definitions (no package code). Builds on helper-reference.R
# (ref_mi, ref_key, ref_entropy, ref_codes).

# Code vectors as a list: a list passes through, a matrix gives its columns as categorical
# codes (integer matrices are categorical: codes are the sorted distinct values).
ref_code_list <- function(codes_x) {
  if (is.list(codes_x) && !is.data.frame(codes_x)) return(codes_x)
  if (is.data.frame(codes_x)) return(lapply(codes_x, ref_categorical))
  lapply(seq_len(ncol(codes_x)), function(j) ref_categorical(codes_x[, j]))
}

# Every pair i < j: I(Y; Xi,Xj), I(Y;Xi), I(Y;Xj), the interaction joint - mi1 - mi2 and the
# number of observed (xi, xj) combinations. Rows in (index1, index2) order.
ref_mi_pairs_all <- function(codes_x, y) {
  codes <- ref_code_list(codes_x)
  y <- match(as.character(y), unique(as.character(y)))
  p <- length(codes)
  single <- vapply(codes, ref_mi, numeric(1), y = y)
  pairs <- t(utils::combn(p, 2))
  joint <- numeric(nrow(pairs))
  cells <- integer(nrow(pairs))
  for (r in seq_len(nrow(pairs))) {
    key <- ref_key(codes[[pairs[r, 1]]], codes[[pairs[r, 2]]])
    joint[r] <- ref_mi(key, y)
    cells[r] <- length(unique(key))
  }
  mi1 <- single[pairs[, 1]]
  mi2 <- single[pairs[, 2]]
  data.frame(index1 = pairs[, 1], index2 = pairs[, 2], mi_joint = joint, mi1 = mi1, mi2 = mi2,
             interaction = joint - mi1 - mi2, cells = cells)
}

# I(Xi;Xj) for every pair, H(Xi) on the diagonal.
ref_mi_matrix <- function(codes_x) {
  codes <- ref_code_list(codes_x)
  p <- length(codes)
  m <- matrix(0, p, p)
  for (i in seq_len(p)) {
    m[i, i] <- ref_entropy(codes[[i]])
    for (j in seq_len(i - 1L)) m[i, j] <- m[j, i] <- ref_mi(codes[[i]], codes[[j]])
  }
  m
}

# ARACNE: edge (i,j) (weight mim[i,j]) unless some k != i,j has mim[i,k] - eps > mim[i,j] and
# mim[j,k] - eps > mim[i,j].
ref_aracne <- function(mim, eps = 0) {
  n <- nrow(mim)
  w <- matrix(0, n, n)
  for (i in seq_len(n)) for (j in seq_len(n)) {
    if (i == j) next
    others <- setdiff(seq_len(n), c(i, j))
    removed <- any(mim[i, others] - eps > mim[i, j] & mim[j, others] - eps > mim[i, j])
    if (!removed) w[i, j] <- mim[i, j]
  }
  w
}

# CLR: z_i = max(0, (m - mean_i) / sd_i) with the mean and the sample sd of row i off the
# diagonal (z = 0 when sd = 0); weight sqrt(z_i^2 + z_j^2).
ref_clr <- function(mim) {
  n <- nrow(mim)
  off <- lapply(seq_len(n), function(i) mim[i, -i])
  mu <- vapply(off, mean, numeric(1))
  s <- vapply(off, stats::sd, numeric(1))
  z <- function(i, m) if (s[i] > 0) max(0, (m - mu[i]) / s[i]) else 0
  w <- matrix(0, n, n)
  for (i in seq_len(n)) for (j in seq_len(n)) {
    if (i != j) w[i, j] <- sqrt(z(i, mim[i, j])^2 + z(j, mim[i, j])^2)
  }
  w
}

# MRNET: for each target i, forward mRMR among the others: first pick argmax mim[i, j], later
# ones argmax mim[i, j] - mean_{s picked} mim[j, s]; ties to the lower index; stop when the
# best score is negative. The weight of (i, j) is the larger score with which one picked the
# other, and at least 0. The redundancy is summed in pick order, as a running sum.
ref_mrnet <- function(mim) {
  n <- nrow(mim)
  picked <- matrix(0, n, n)
  for (i in seq_len(n)) {
    candidates <- setdiff(seq_len(n), i)
    redundancy <- numeric(n)
    chosen <- 0L
    while (length(candidates)) {
      score <- mim[i, candidates] - if (chosen > 0L) redundancy[candidates] / chosen else 0
      best <- which(score == max(score))[1L]  # candidates ascend: the lowest index wins
      if (score[best] < 0) break
      j <- candidates[best]
      picked[i, j] <- score[best]
      redundancy <- redundancy + mim[, j]
      chosen <- chosen + 1L
      candidates <- candidates[-best]
    }
  }
  w <- pmax(picked, t(picked), 0)
  diag(w) <- 0
  w
}

# MRNETB (Meyer, Marbach, Roy and Kellis 2010) from its definition, every sum taken afresh: for
# each target, backward elimination from all other variables while the worst score in S is
# negative (and |S| > 1), then sequential replacement while the best outsider beats the worst
# insider (at most n - 1 swaps). Score of k: mim[i, k] - sum over l in S, l != k of mim[k, l] / |S|.
ref_mrnetb <- function(mim) {
  n <- nrow(mim)
  kept <- matrix(0, n, n)
  for (i in seq_len(n)) {
    s <- setdiff(seq_len(n), i)
    score <- function(k) mim[i, k] - sum(mim[k, setdiff(s, k)]) / length(s)
    scores <- function(set) vapply(set, score, numeric(1))
    repeat {
      sc <- scores(s)
      worst <- which(sc == min(sc))[1L]  # s ascends: the lowest index wins
      if (length(s) <= 1L || sc[worst] >= 0) break
      s <- s[-worst]
    }
    for (swap in seq_len(n - 1L)) {
      out <- setdiff(seq_len(n), c(s, i))
      if (!length(out)) break
      sc_in <- scores(s)
      sc_out <- scores(out)
      worst <- which(sc_in == min(sc_in))[1L]
      best <- which(sc_out == max(sc_out))[1L]
      if (!(sc_out[best] > sc_in[worst])) break
      s <- sort(c(s[-worst], out[best]))
    }
    kept[i, s] <- scores(s)
  }
  w <- pmax(kept, t(kept), 0)
  diag(w) <- 0
  w
}

# Threshold network: the MI where it is at least the threshold, zero diagonal.
ref_threshold_network <- function(mim, threshold) {
  w <- ifelse(mim >= threshold, mim, 0)
  diag(w) <- 0
  w
}

# The edge list of a weight matrix as mi_network() returns it: upper triangle, positive weights,
# by weight descending, then by (from, to) index.
ref_edges <- function(w, mim, names) {
  up <- which(upper.tri(w) & w > 0, arr.ind = TRUE)
  up <- up[order(-w[up], up[, 1], up[, 2]), , drop = FALSE]
  data.frame(from = names[up[, 1]], to = names[up[, 2]], weight = w[up], mi = mim[up],
             stringsAsFactors = FALSE)
}

# A random symmetric MI-like matrix (non-negative, diagonal larger than the rest).
random_mim <- function(n, seed) {
  with_seed(seed, {
    m <- matrix(runif(n * n), n)
    m <- (m + t(m)) / 2
    diag(m) <- 2
    dimnames(m) <- list(paste0("v", seq_len(n)), paste0("v", seq_len(n)))
    m
  })
}

# Small random categorical data: 2-4 levels per feature, `classes` classes, with constant
# features, an exact copy, a relabelled copy and a feature duplicated twice (exact ties).
data_pairs_categorical <- function(n = 60, p = 12, classes = 3, seed = 31) {
  with_seed(seed, {
    y <- sample(seq_len(classes), n, replace = TRUE)
    levels <- sample(2:4, p, replace = TRUE)
    x <- vapply(levels, function(l) sample(0:(l - 1L), n, replace = TRUE), integer(n))
    x[, 2] <- (y + sample(0:1, n, replace = TRUE)) %% 3L  # informative
    x[, 4] <- 7L                                          # constant
    x[, 9] <- 0L                                          # constant zero
    x[, 6] <- x[, 2]                                      # exact copy
    x[, 11] <- 10L - 3L * x[, 2]                          # relabelled copy
    x[, 12] <- x[, 5]
    storage.mode(x) <- "integer"
    list(x = named(x), y = paste0("k", y))
  })
}

# The pairs' columns compared with a reference, with plain row names.
pairs_frame <- function(p) {
  out <- as.data.frame(p)
  rownames(out) <- NULL
  out
}

# The value columns of a result, without attributes (elapsed differs between calls).
strip_attributes <- function(m) {
  attributes(m) <- attributes(m)[intersect(names(attributes(m)), c("dim", "dimnames", "names", "row.names",
                                                                    "class"))]
  m
}

# Whether the rows are ordered by `by` descending, then index1 and index2 ascending.
pairs_ordered <- function(p, by = "mi_joint") {
  identical(order(-p[[by]], p$index1, p$index2), seq_len(nrow(p)))
}
