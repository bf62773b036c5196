# Pure-R references of the discretization methods, written from the papers: Kurgan & Cios
# (2004) CAIM, Tsai, Lee & Yang (2008) CACC, Gonzalez-Abril et al. (2009) Ameva, Fayyad & Irani
# (1993) MDLP. Plain and slow on purpose: every tentative scheme's criterion is computed from its
# own contingency table (the package scores candidates from prefix counts instead).

# Candidate cuts between the sorted distinct values u: midpoints, or the lower value where the
# midpoint of two adjacent doubles rounds up to the upper one.
ref_candidates <- function(u) {
  lower <- u[-length(u)]
  upper <- u[-1]
  mid <- (lower + upper) / 2
  ifelse(mid < upper, mid, lower)
}

# Interval codes 1..k, intervals closed on the right.
ref_interval <- function(v, cuts) findInterval(v, cuts, left.open = TRUE) + 1L

# Contingency table intervals x classes (classes present only).
ref_quanta <- function(v, cls, cuts) {
  table(factor(ref_interval(v, cuts), levels = seq_len(length(cuts) + 1L)), factor(cls))
}

ref_scheme_value <- function(q, method) {
  k <- nrow(q)
  n <- sum(q)
  if (method == "caim") return(mean(apply(q, 1, max)^2 / rowSums(q)))
  chi2 <- n * (sum(q^2 / outer(rowSums(q), colSums(q))) - 1)
  if (method == "ameva") return(chi2 / (k * (ncol(q) - 1)))
  y <- chi2 / log(k)  # cacc
  sqrt(y / (y + n))
}

# The top-down loop: add the candidate with the best scheme (ties, within rounding, to the
# lowest) while the criterion grows, or (CAIM, CACC) while there are fewer intervals than
# classes. Returns the cuts and the final criterion.
ref_topdown <- function(v, cls, method, tol = 1e-9) {
  u <- sort(unique(v))
  classes <- length(unique(cls))
  if (length(u) < 2 || classes < 2) return(list(cuts = numeric(), criterion = NA_real_))
  candidates <- ref_candidates(u)
  chosen <- logical(length(candidates))
  global <- 0
  k <- 1
  repeat {
    open <- which(!chosen)
    if (!length(open)) break
    values <- vapply(open, function(i) ref_scheme_value(ref_quanta(v, cls, candidates[chosen | seq_along(chosen) == i]),
                                                        method), numeric(1))
    best <- which(values >= max(values) - tol * abs(max(values)))[1]
    forced <- method != "ameva" && k < classes
    if (!forced && !(values[best] - global > tol * max(abs(values[best]), abs(global)))) break
    chosen[open[best]] <- TRUE
    global <- values[best]
    k <- k + 1
  }
  list(cuts = candidates[chosen], criterion = if (k > 1) global else 0)
}

# R discretization's CACC (disc.Topdown(method = 2), version 1.0-1.1), for the test that pins
# where it departs from the paper. Its cacc() takes the logarithm of one more than the rows of its
# table (nr <- dim(tb)[1] + 1), and findBest() tabulates intervals in rows, so it divides chi2 by
# ln(k + 1) for a scheme of k intervals where the paper (and discretization's own manual page of
# cacc()) divide by ln k; this rule reproduces its 35 cuts on ALL's 723_s_at (issue 21). The
# rest is the paper's loop as its topdown() and findBest() run it: plain midpoints, the first
# candidate of strictly largest criterion, exact comparisons, the first S - 1 cuts forced, at
# most n - 1 cuts. (Its chiSq() replaces zero expected counts by 0.1: intervals between
# observed values are never empty, so that never happens; where every candidate scores 0 its
# findBest() stops with an error, this stops.)
ref_discretization_cacc <- function(v, cls) {
  o <- order(v)
  v <- v[o]
  cls <- as.integer(factor(cls))[o]
  n <- length(v)
  classes <- length(unique(cls))
  step <- which(diff(v) != 0)
  candidates <- (v[step] + v[step + 1]) / 2
  bounds <- c(v[1], v[n])
  score <- function(b) {
    q <- table(findInterval(v, b, rightmost.closed = TRUE), cls)
    expected <- outer(rowSums(q), colSums(q)) / n
    chi2 <- sum((q - expected)^2 / expected)
    sqrt(chi2 / (chi2 + n * log(nrow(q) + 1)))
  }
  global <- 0
  k <- 1
  while (length(candidates)) {
    values <- vapply(candidates, function(cut) score(sort(c(bounds, cut))), numeric(1))
    best <- which.max(values)  # the first of the largest
    if (!(values[best] > 0)) break
    if (!((values[best] > global || k < classes) && k < n)) break
    bounds <- sort(c(bounds, candidates[best]))
    candidates <- candidates[-best]
    global <- values[best]
    k <- k + 1
  }
  unname(bounds[-c(1, length(bounds))])
}

ref_entropy <- function(cls) {
  p <- table(cls) / length(cls)
  p <- p[p > 0]
  -sum(p * log2(p))
}

# MDLP: the cut of least class entropy (ties, within rounding, to the lowest), kept when it
# passes the MDL test; then both sides again.
ref_mdlp <- function(v, cls, tol = 1e-9) {
  recurse <- function(v, cls) {
    u <- sort(unique(v))
    if (length(u) < 2) return(numeric())
    candidates <- ref_candidates(u)
    e <- vapply(candidates, function(c) {
      left <- v <= c
      sum(left) * ref_entropy(cls[left]) + sum(!left) * ref_entropy(cls[!left])
    }, numeric(1)) / length(v)
    best <- which(e <= min(e) + tol)[1]
    cut <- candidates[best]
    left <- v <= cut
    n <- length(v)
    k <- length(unique(cls))
    k1 <- length(unique(cls[left]))
    k2 <- length(unique(cls[!left]))
    gain <- ref_entropy(cls) - e[best]
    delta <- log2(3^k - 2) - (k * ref_entropy(cls) - k1 * ref_entropy(cls[left]) - k2 * ref_entropy(cls[!left]))
    if (!(n * gain > log2(n - 1) + delta)) return(numeric())
    c(recurse(v[left], cls[left]), cut, recurse(v[!left], cls[!left]))
  }
  if (length(unique(cls)) < 2) return(list(cuts = numeric(), criterion = NA_real_))
  cuts <- sort(recurse(v, cls))
  codes <- ref_interval(v, cuts)
  list(cuts = cuts, criterion = ref_entropy(cls) - sum(vapply(split(cls, codes), function(c) length(c) * ref_entropy(c),
                                                              numeric(1))) / length(v))
}

# Equal frequency: cut j after the smallest distinct value with at least j/nbins of the values at
# or below it (ties stay together; repeated cuts merge).
ref_equal_freq <- function(v, nbins) {
  u <- sort(unique(v))
  if (length(u) < 2) return(numeric())
  cum <- vapply(u, function(a) sum(v <= a), numeric(1))
  t <- unique(vapply(seq_len(nbins - 1), function(j) which(cum * nbins >= j * length(v))[1], integer(1)))
  t <- t[t < length(u)]
  ref_candidates(u)[t]
}

# The reference discretization of one feature (missing values left out).
ref_discretize_feature <- function(v, cls, method, nbins = 5) {
  keep <- !is.na(v)
  v <- v[keep]
  cls <- cls[keep]
  switch(method,
         caim = , cacc = , ameva = ref_topdown(v, cls, method),
         mdlp = ref_mdlp(v, cls),
         equal_freq = list(cuts = ref_equal_freq(v, nbins), criterion = NA_real_),
         equal_width = list(cuts = if (max(v) > min(v)) min(v) + (max(v) - min(v)) * seq_len(nbins - 1) / nbins
                                   else numeric(), criterion = NA_real_))
}

# Small data with what the methods must get right: ties between values, constant and one-class
# features, more classes than distinct values, unbalanced classes.
data_discretize <- function(n = 90, classes = 3, seed = 41) {
  with_seed(seed, {
    y <- sample(seq_len(classes), n, replace = TRUE, prob = seq_len(classes))
    x <- cbind(
      shifted = rnorm(n) + y,
      noise = rnorm(n),
      rounded = round(rnorm(n) + y / 2, 1),
      integers = sample(1:6, n, replace = TRUE) + (y == 2),
      few_values = sample(c(0, 1), n, replace = TRUE),
      constant = rep(2.5, n),
      signed_zero = sample(c(-0, 0, 1, 2), n, replace = TRUE) * ifelse(y == 1, 1, -1),
      tiny = 1 + (y + rnorm(n) / 10) * 1e-12
    )
    list(x = x, y = factor(paste0("c", y)))
  })
}
