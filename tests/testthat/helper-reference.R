# Pure-R reference implementations (no package code): the first link of the chain of trust
# pure R -> C++ CPU engine -> CUDA engine. Slow and plain on purpose.

# Equal-width binning as the C++ encoder does it: [lo, hi] cut into nbins equal segments, the
# maximum to the last one, a constant column to code 0. Codes are 0-based integers.
ref_bin <- function(v, nbins) {
  lo <- min(v)
  hi <- max(v)
  if (!(hi > lo)) return(integer(length(v)))
  as.integer(pmin(floor((v - lo) / (hi - lo) * nbins), nbins - 1))
}

# Categorical columns (integer, logical, factor): their distinct values, in increasing order.
ref_categorical <- function(v) {
  v <- as.integer(v)
  match(v, sort(unique(v))) - 1L
}

# The code vector of every feature of x. Double columns are binned (for a sparse matrix the
# range includes its implicit zeros, which is what densifying gives), the rest are categorical.
ref_codes <- function(x, nbins) {
  if (methods::is(x, "Matrix")) x <- as.matrix(x)
  columns <- if (is.data.frame(x)) as.list(x) else lapply(seq_len(ncol(x)), function(j) x[, j])
  lapply(columns, function(v) if (is.double(v)) ref_bin(v, nbins) else ref_categorical(v))
}

# Two code vectors as one joint variable.
ref_joint <- function(a, b) a * (max(b) + 1) + b

# Plug-in mutual information I(X;Y) in bits from the contingency table of two discrete vectors.
ref_mi <- function(x, y) {
  x <- match(x, unique(x))
  y <- match(y, unique(y))
  nx <- max(x)
  counts <- matrix(tabulate(x + (y - 1L) * nx, nx * max(y)), nx)
  n <- length(x)
  expected <- outer(rowSums(counts), colSums(counts))
  seen <- counts > 0
  sum(counts[seen] / n * log2(n * counts[seen] / expected[seen]))
}

# Lowest index among the scores within `tol` of the maximum: scores that are mathematically
# equal may differ in their last bits here, while the C++ engine computes them exactly.
ref_argmax <- function(score, tol = 1e-10) which(score >= max(score) - tol)[1L]

# FEAST's JMI. First feature: argmax I(X;Y), scored I(X;Y). Later steps score each candidate X
# by sum over the selected S of I(X,S;Y). Stops when no candidate scores above 0.
ref_jmi <- function(x, y, k, nbins = 64) {
  codes <- ref_codes(x, nbins)
  y <- as.integer(factor(y))
  mi_with <- function(s) {
    vapply(codes, function(v) if (is.null(s)) ref_mi(v, y) else ref_mi(ref_joint(v, s), y),
           numeric(1))
  }
  score <- mi_with(NULL)
  selected <- integer(0)
  scores <- numeric(0)
  for (step in seq_len(min(k, length(codes)))) {
    if (step > 1L) {
      gain <- mi_with(codes[[selected[step - 1L]]])
      score <- if (step == 2L) gain else score + gain  # the sum leaves out the relevance I(X;Y)
    }
    candidate <- replace(score, selected, -Inf)
    best <- ref_argmax(candidate)
    if (candidate[best] <= 1e-12) break
    selected <- c(selected, best)
    scores <- c(scores, candidate[best])
  }
  data.frame(index = selected, score = scores)
}
