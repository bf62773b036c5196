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

# The integer rule's count: whether the whole numbers v have more than `limit` distinct values
# (NA not counted).
ref_more_values_than <- function(v, limit) length(unique(v[!is.na(v)])) > limit

# Categorical columns (logical, factor): their distinct values, in increasing order.
ref_categorical <- function(v) {
  v <- as.integer(v)
  match(v, sort(unique(v))) - 1L
}

# The code vector of every feature of x. Numeric columns, double or integer, are binned, as the
# jobs bin them when given nbins (as every reference case is); for a sparse matrix the range
# includes its implicit zeros, which is what densifying gives. Logical and factor columns are
# categorical.
ref_codes <- function(x, nbins) {
  if (methods::is(x, "Matrix")) x <- as.matrix(x)
  columns <- if (is.data.frame(x)) as.list(x) else lapply(seq_len(ncol(x)), function(j) x[, j])
  lapply(columns, function(v) if (is.numeric(v)) ref_bin(v, nbins) else ref_categorical(v))
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

# ---- The FEAST family ----

# Several code vectors as one joint variable, recoded 0, 1, ... after each join so that the codes
# stay below the sample count however many variables are joined.
ref_key <- function(...) {
  Reduce(function(a, b) {
    j <- ref_joint(a, b)
    match(j, unique(j)) - 1L
  }, list(...))
}

# Plug-in joint entropy, in bits, of the variables given.
ref_entropy <- function(...) {
  key <- ref_key(...)
  p <- tabulate(match(key, unique(key))) / length(key)
  -sum(p * log2(p))
}

# Plug-in conditional mutual information I(X;Y|Z) in bits from the three-way contingency table:
# sum over the cells of p_xyz log2(p_xyz p_z / (p_xz p_yz)).
ref_cmi <- function(x, y, z) {
  x <- match(x, unique(x))
  y <- match(y, unique(y))
  z <- match(z, unique(z))
  nx <- max(x)
  ny <- max(y)
  nz <- max(z)
  n_xyz <- array(tabulate(x + (y - 1L) * nx + (z - 1L) * nx * ny, nx * ny * nz), c(nx, ny, nz))
  n_xz <- matrix(tabulate(x + (z - 1L) * nx, nx * nz), nx)
  n_yz <- matrix(tabulate(y + (z - 1L) * ny, ny * nz), ny)
  n_z <- tabulate(z, nz)
  cell <- which(n_xyz > 0, arr.ind = TRUE)
  count <- n_xyz[cell]
  sum(count / length(x) *
        log2(count * n_z[cell[, 3]] / (n_xz[cell[, c(1, 3)]] * n_yz[cell[, c(2, 3)]])))
}

# FEAST's weighted MIToolbox: each cell's term is weighted by the sum W of its samples' weights
# instead of its count, the probabilities inside the logarithms stay the counts' (n samples):
#   I_w(A;B)   = (1/n) sum_ab  W_ab  log2(n n_ab / (n_a n_b))
#   I_w(A;B|C) = (1/n) sum_abc W_abc log2(n_abc n_c / (n_ac n_bc))
#   H_w(A,...) = -(1/n) sum     W     log2(n_cell / n)
# A sum over cells of W_cell f(cell) is the sum over samples of w_i f(cell of i), which is how
# they are written here: ref_cell_size gives each sample the count of its cell.
ref_cell_size <- function(...) {
  key <- ref_key(...)
  cell <- match(key, unique(key))
  tabulate(cell)[cell]
}

ref_wmi <- function(a, b, w) {
  n <- length(w)
  sum(w * log2(n * ref_cell_size(a, b) / (ref_cell_size(a) * ref_cell_size(b)))) / n
}

ref_wcmi <- function(a, b, c, w) {
  sum(w * log2(ref_cell_size(a, b, c) * ref_cell_size(c) /
                 (ref_cell_size(a, c) * ref_cell_size(b, c)))) / length(w)
}

ref_wentropy <- function(..., w) -sum(w * log2(ref_cell_size(...) / length(w))) / length(w)

# praznik's Gini impurity gain of Y from partitioning by A (its impScores(), JIM's G):
#   G(A;Y) = sum_{a,y} p(a,y)^2 / p(a) - sum_y p(y)^2.
ref_gini <- function(a, y) {
  n <- length(y)
  nay <- table(a, y)
  na <- rowSums(nay)
  sum(nay^2 / na[row(nay)]) / n - sum((table(y) / n)^2)
}

# I(A;Y) divided by an entropy, 0 where that entropy is 0: symmetric uncertainty 2I/(H(A)+H(Y))
# (FSelectorRcpp's "symuncert"), normalised MI I/H(A,Y) (praznik's nmiMatrix) and the gain ratio
# I/H(A) (FSelectorRcpp's "gainratio", FSelector's gain.ratio).
ref_normalized_mi <- function(a, y, normalize) {
  h <- switch(normalize,
    su = (ref_entropy(a) + ref_entropy(y)) / 2,
    nmi = ref_entropy(a, y),
    gain_ratio = ref_entropy(a))
  if (h > 0) ref_mi(a, y) / h else 0
}

# mi_scores(normalize = ) of every feature of x.
ref_mi_scores <- function(x, y, normalize = "none", nbins = 64) {
  y <- as.integer(factor(y))
  score <- function(v) if (normalize == "none") ref_mi(v, y) else ref_normalized_mi(v, y, normalize)
  out <- data.frame(index = seq_len(ncol(x)))
  out[[if (normalize == "none") "mi" else normalize]] <- vapply(ref_codes(x, nbins), score, numeric(1))
  out
}

# Criteria whose scores cannot go negative stop at 0 by default; the others go on to k.
ref_default_min_score <- function(method) {
  if (method %in% c("mim", "jmi", "disr", "cmim", "cmi", "jmim", "njmim", "jmi3", "jim")) 0 else -Inf
}

# Criteria whose later scores are ratios of information to entropy, hence unitless.
ref_unitless <- function(method) method %in% c("disr", "njmim")

# Criteria whose scores, the first included, are Gini impurity gains, hence unitless.
ref_impurity <- function(method) method == "jim"

# The FEAST family, written from the formulas. Step 1 scores every candidate X by I(X;Y); each
# later step by its criterion over the selected features S (fixed ones included, in selection
# order). The terms with each S are computed once, when S is selected, and kept in a column per S.
# Fixed features (names or 1-based indices) come first and never stop the selection; after them
# the best candidate is taken while its score is above min_score (default: 0 or -Inf, see
# ref_default_min_score). With `weights`, every quantity is its weighted version. Bits throughout,
# except for JIM, whose scores are Gini impurity gains (ref_gini) from the first step on.
# praznik's JMI3: the second feature is JMI's; from the third on, X scores the sum over every
# pair {U, W} of selected features of I(X,U,W;Y).
ref_select <- function(x, y, k, method, nbins = 64, beta = NULL, gamma = NULL, fixed = NULL,
                       min_score = NULL, weights = NULL) {
  codes <- ref_codes(x, nbins)
  y <- as.integer(factor(y))
  p <- length(codes)
  if (method == "mifs" && is.null(beta)) beta <- 1
  if (method == "betagamma") stopifnot(!is.null(beta), !is.null(gamma))
  if (is.null(min_score)) min_score <- ref_default_min_score(method)
  if (is.character(fixed)) fixed <- match(fixed, colnames(x))
  stopifnot(!anyNA(fixed))

  if (is.null(weights)) {
    mi <- ref_mi
    cmi <- ref_cmi
    entropy <- ref_entropy
  } else {
    mi <- function(a, b) ref_wmi(a, b, weights)
    cmi <- function(a, b, c) ref_wcmi(a, b, c, weights)
    entropy <- function(...) ref_wentropy(..., w = weights)
  }
  each <- function(f) vapply(codes, f, numeric(1))
  # I(X,S;Y)/H(X,S,Y), 0 where the joint entropy is 0.
  ratio <- function(joint, h) ifelse(h > 0, joint / h, 0)
  row_min <- function(m) apply(m, 1, min)

  relevance <- if (method == "jim") each(function(v) ref_gini(v, y)) else each(function(v) mi(v, y))
  terms <- list(red = NULL, cred = NULL, cond = NULL, joint = NULL, h = NULL, pairs = NULL, gini = NULL)
  needs <- switch(method,
    mim = character(), cmi = character(),
    jmi = "joint", jmim = "joint", disr = c("joint", "h"), njmim = c("joint", "h"),
    jmi3 = c("joint", "pairs"), jim = "gini",
    mrmr = "red", mifs = "red", condred = "cred", cife = , betagamma = , icap = c("red", "cred"),
    cmim = "cond",
    stop("unknown method ", method))
  add_terms <- function(s) {
    term <- list(
      red = function() each(function(v) mi(v, s)),                # I(X;S)
      cred = function() each(function(v) cmi(v, s, y)),           # I(X;S|Y)
      cond = function() each(function(v) cmi(v, y, s)),           # I(X;Y|S)
      joint = function() each(function(v) mi(ref_key(v, s), y)),  # I(X,S;Y)
      h = function() each(function(v) entropy(v, s, y)),          # H(X,S,Y)
      # I(X,U,S;Y) for every U selected before S (none when S is the first)
      pairs = function() do.call(cbind, lapply(codes[utils::head(selected, -1)], function(u)
        each(function(v) mi(ref_key(v, u, s), y)))),
      gini = function() each(function(v) ref_gini(ref_key(v, s), y)))  # G(X,S;Y)
    for (name in needs) terms[[name]] <<- cbind(terms[[name]], term[[name]]())
  }
  criterion <- function(selected) {
    with(terms, switch(method,
      mim = relevance,
      jmi = rowSums(joint),
      disr = rowSums(ratio(joint, h)),
      mrmr = relevance - rowMeans(red),
      mifs = relevance - beta * rowSums(red),
      cife = relevance - rowSums(red) + rowSums(cred),
      condred = relevance + rowSums(cred),
      betagamma = relevance - beta * rowSums(red) + gamma * rowSums(cred),
      icap = relevance + rowSums(pmin(cred - red, 0)),  # pmin keeps the first argument's dim
      cmim = pmin(relevance, row_min(cond)),
      cmi = {
        z <- do.call(ref_key, codes[selected])
        each(function(v) cmi(v, y, z))
      },
      jmim = row_min(joint),
      njmim = row_min(ratio(joint, h)),
      jmi3 = if (length(selected) == 1L) joint[, 1] else rowSums(pairs),
      jim = rowSums(gini)))
  }

  selected <- integer(0)
  scores <- numeric(0)
  for (step in seq_len(min(k, p))) {
    score <- if (step == 1L) relevance else criterion(selected)
    if (step <= length(fixed)) {
      best <- fixed[step]
    } else {
      candidate <- replace(score, selected, -Inf)
      best <- ref_argmax(candidate)
      if (score[best] <= min_score + 1e-12) break
    }
    selected <- c(selected, best)
    scores <- c(scores, score[best])
    if (step < k) add_terms(codes[[best]])
  }
  data.frame(index = selected, score = scores)
}

# The code vector of a conditioning variable z of cmi_scores/jmi_scores: a feature of x (name or
# 1-based index) when z has length 1, else one value per sample, binned when numbers.
ref_z_codes <- function(x, z, nbins) {
  if (length(z) == 1L) {
    j <- if (is.character(z)) match(z, colnames(x)) else z
    return(ref_codes(x, nbins)[[j]])
  }
  if (is.numeric(z)) ref_bin(z, nbins) else match(as.character(z), sort(unique(as.character(z)))) - 1L
}

# I(X;Y|Z) and I(X,Z;Y) of every feature X of x, in bits.
ref_cmi_scores <- function(x, y, z, nbins = 64) {
  z <- ref_z_codes(x, z, nbins)
  y <- as.integer(factor(y))
  data.frame(index = seq_len(ncol(x)),
             cmi = vapply(ref_codes(x, nbins), function(v) ref_cmi(v, y, z), numeric(1)))
}

ref_jmi_scores <- function(x, y, z, nbins = 64) {
  z <- ref_z_codes(x, z, nbins)
  y <- as.integer(factor(y))
  data.frame(index = seq_len(ncol(x)),
             jmi = vapply(ref_codes(x, nbins), function(v) ref_mi(ref_key(v, z), y), numeric(1)))
}

# The criteria the tests run, each with the parameters it is run with.
family_settings <- function() {
  list(
    mim = list(method = "mim"),
    mrmr = list(method = "mrmr"),
    mifs = list(method = "mifs"),
    cife = list(method = "cife"),
    condred = list(method = "condred"),
    betagamma = list(method = "betagamma", beta = 0.6, gamma = 0.3),
    icap = list(method = "icap"),
    cmim = list(method = "cmim"),
    jmi = list(method = "jmi"),
    disr = list(method = "disr"),
    cmi = list(method = "cmi"),
    jmim = list(method = "jmim"),
    njmim = list(method = "njmim"),
    jmi3 = list(method = "jmi3"),
    jim = list(method = "jim")
  )
}

# ---- infotheo's entropy estimators ----

# infotheo's entropy() of a discrete vector, in nats, by estimator, from its C++ definitions:
# emp = plug-in; mm = emp + (m - 1)/(2N), m the observed values; sg = the Dirichlet posterior
# mean sum_i (n_i + a)(digamma(N + m a + 1) - digamma(n_i + a + 1)) / (N + m a) with a = 1/m
# as infotheo's C++ evaluates it (an integer division: 0 unless m = 1); shrink = the same mean with
# a = lambda/(1 - lambda) N/m for the James-Stein intensity lambda, log m when lambda >= 1 (or
# infinite: a uniform table), 0 for one value (where infotheo's 0/0 gives NaN).
ref_infotheo_entropy <- function(x, estimator) {
  counts <- tabulate(match(x, unique(x)))
  n <- sum(counts)
  m <- length(counts)
  switch(estimator,
    emp = log(n) - sum(counts * log(counts)) / n,
    mm = log(n) - sum(counts * log(counts)) / n + (m - 1) / (2 * n),
    sg = {
      a <- 1 %/% m
      sum((counts + a) * (digamma(n + m * a + 1) - digamma(counts + a + 1))) / (n + m * a)
    },
    shrink = {
      if (m == 1) return(0)
      w <- sum(counts^2)
      lambda <- m * (n^2 - w) / ((n - 1) * (w * m - n^2))
      if (lambda >= 1) return(log(m))
      a <- lambda / (1 - lambda) * n / m
      sum((counts + a) * (digamma(n + m * a + 1) - digamma(counts + a + 1))) / (n + m * a)
    })
}

# infotheo::mutinformation(x, y, method) of two discrete vectors, in nats: H(x) + H(y) - H(x,y)
# by the estimator, a negative result reported as 0.
ref_mutinformation <- function(x, y, estimator) {
  max(0, ref_infotheo_entropy(x, estimator) + ref_infotheo_entropy(y, estimator) -
         ref_infotheo_entropy(ref_joint(x, y), estimator))
}

# infotheo::mutinformation(data.frame of codes, method): the matrix H(i) + H(j) - H(i,j), entropies
# on the diagonal, negative values kept.
ref_mutinformation_matrix <- function(codes, estimator) {
  p <- length(codes)
  h <- vapply(codes, ref_infotheo_entropy, numeric(1), estimator = estimator)
  m <- diag(h, p)
  for (i in seq_len(p - 1)) for (j in (i + 1):p)
    m[i, j] <- m[j, i] <- h[i] + h[j] - ref_infotheo_entropy(ref_joint(codes[[i]], codes[[j]]), estimator)
  m
}
