# Small seeded data sets for the selection tests. Each generator returns list(x, y), with x
# samples x features. The caller's random stream is left untouched.

with_seed <- function(seed, code) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
          else assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed)
  code
}

# A base matrix as a Matrix::dgCMatrix; loading Matrix brings the coercion methods.
as_dgc <- function(x) {
  loadNamespace("Matrix")
  methods::as(x, "CsparseMatrix")
}

named <- function(x, prefix = "g") {
  dimnames(x) <- list(paste0("s", seq_len(nrow(x))), paste0(prefix, seq_len(ncol(x))))
  x
}

# Numeric features, the first `informative` of them shifted by class.
data_informative <- function(n = 120, p = 40, classes = 3, informative = 5, seed = 1) {
  with_seed(seed, {
    y <- factor(rep_len(paste0("c", seq_len(classes)), n))
    x <- matrix(rnorm(n * p), n, p)
    shift <- outer(as.integer(y), seq_len(informative), function(c, j) c * (1 + j / 2))
    x[, seq_len(informative)] <- x[, seq_len(informative)] + shift
    list(x = named(x), y = y)
  })
}

# Exact ties: copies of the best feature (3) and of another informative one (1), so that ties
# must go to the lowest index, in the first step and later ones.
data_ties <- function(seed = 2) {
  d <- data_informative(n = 90, p = 20, classes = 3, informative = 3, seed = seed)
  d$x[, c(8, 15)] <- d$x[, 1]
  d$x[, 17] <- d$x[, 3]
  d
}

# Categorical ties: a relabelled copy has the same information, computed from other codes.
data_ties_categorical <- function(seed = 3) {
  with_seed(seed, {
    y <- sample(0:3, 100, replace = TRUE)
    x <- matrix(sample(0:4, 100 * 12, replace = TRUE), 100, 12)
    x[, 2] <- (y + sample(0:1, 100, replace = TRUE)) %% 5L
    x[, 7] <- 4L - x[, 2]
    x[, 10] <- x[, 2] * 3L + 11L
    list(x = named(x), y = y)
  })
}

# Constant features, first and all-zero among them; the zero column has no entries when sparse.
data_constant <- function(seed = 4) {
  d <- data_informative(n = 80, p = 15, classes = 2, informative = 3, seed = seed)
  d$x[, 1] <- 3.5
  d$x[, c(6, 15)] <- 0
  d
}

# Many classes, some with a single sample.
data_many_classes <- function(classes = 12, seed = 5) {
  with_seed(seed, {
    y <- c(rep(seq_len(classes - 3), each = 12), classes - 2:0)
    n <- length(y)
    x <- matrix(rnorm(n * 30), n, 30)
    x[, c(2, 9, 17)] <- x[, c(2, 9, 17)] + y
    list(x = named(x), y = paste0("type", y))
  })
}

# Classes of one sample each beside two large ones.
data_singletons <- function(seed = 6) {
  with_seed(seed, {
    y <- c(rep(c("a", "b"), each = 30), "c", "d", "e")
    x <- matrix(rnorm(length(y) * 25), length(y), 25)
    x[, 3] <- x[, 3] + (y == "b") * 2
    list(x = named(x), y = factor(y))
  })
}

# Features exactly independent of y (balanced within classes): nothing scores above 0.
data_uninformative <- function() {
  x <- cbind(rep(c(0, 1), 4), rep(c(1, 2, 3, 4), 2), 7)
  list(x = named(x), y = rep(c("u", "v"), each = 4))
}

# A data.frame of categorical columns: factors, logicals and integers.
data_categorical_df <- function(n = 100, seed = 7) {
  with_seed(seed, {
    y <- factor(sample(c("lo", "mid", "hi"), n, replace = TRUE), levels = c("lo", "mid", "hi"))
    noise <- function(levels) sample(levels, n, replace = TRUE)
    df <- data.frame(
      f1 = factor(noise(letters[1:4])),
      l1 = noise(c(TRUE, FALSE)),
      i1 = noise(-2:6),
      f2 = factor(ifelse(runif(n) < 0.8, as.character(y), noise(c("lo", "mid", "hi")))),
      l2 = as.integer(y) == 2L | runif(n) < 0.1,
      i2 = as.integer(y) * 10L + noise(0:1),
      f3 = factor(noise(c("x", "y")), levels = c("y", "x", "z"))  # an unused level
    )
    list(x = df, y = y)
  })
}

# A data.frame mixing numeric (binned) and categorical columns.
data_mixed_df <- function(n = 100, seed = 8) {
  with_seed(seed, {
    y <- sample(c(FALSE, TRUE), n, replace = TRUE)
    df <- data.frame(
      num1 = rnorm(n) + y,
      fac = factor(ifelse(y & runif(n) < 0.7, "on", sample(c("on", "off", "na"), n, TRUE))),
      int = sample(1:5, n, replace = TRUE) + 3L * y,
      num2 = rexp(n),
      lgl = runif(n) < 0.3 + 0.4 * y,
      num3 = round(rnorm(n), 1) * y
    )
    list(x = df, y = y)
  })
}

# A sparse dgCMatrix (about 5% dense): informative features mostly non-zero in one class, an
# empty column, a full column (no implicit zeros), negative values, and a stored zero.
data_sparse <- function(n = 200, p = 60, seed = 9) {
  with_seed(seed, {
    y <- rep(c("ctrl", "case"), length.out = n)
    x <- matrix(0, n, p)
    fill <- runif(n * p) < 0.04
    x[fill] <- rexp(sum(fill))
    case <- y == "case"
    for (j in c(5, 22, 41)) x[case, j] <- ifelse(runif(sum(case)) < 0.4, rexp(sum(case), 0.5), 0)
    x[, 30] <- 0
    x[, 31] <- rnorm(n)
    x[, 12] <- -x[, 12]
    sx <- as_dgc(named(x))
    first <- sx@p[13] + 1L  # column 13's first stored value becomes an explicit zero
    if (sx@p[14] >= first) sx@x[first] <- 0
    list(x = sx, y = y)
  })
}

# A categorical feature with exactly 300 levels (codes wider than one byte) that predicts y: a
# factor, which stays a category whatever nbins a job gets (integer columns are binned then).
data_wide_codes <- function(n = 900, seed = 10) {
  with_seed(seed, {
    wide <- sample(rep_len(0:299, n))
    y <- ifelse(runif(n) < 0.7, wide %/% 75L, sample(0:3, n, replace = TRUE))
    x <- matrix(sample(0:9, n * 10, replace = TRUE), n, 10)
    x[, 3] <- wide
    storage.mode(x) <- "integer"
    x <- as.data.frame(named(x))
    x$g3 <- factor(x$g3)
    list(x = x, y = y)
  })
}

# A bigger random case for engine comparisons, not for the R reference.
data_big <- function(n = 2000, p = 3000, classes = 5, seed = 11) {
  with_seed(seed, {
    y <- sample(seq_len(classes), n, replace = TRUE)
    x <- matrix(rnorm(n * p), n, p)
    hit <- sample(p, 30)
    x[, hit] <- x[, hit] + outer(y, runif(30, 0.05, 0.5))
    list(x = named(x), y = y)
  })
}

# The cases every engine is checked on: data, k and nbins.
jmi_cases <- function() {
  case <- function(d, k, nbins = 64) c(d, k = k, nbins = nbins)
  list(
    informative = case(data_informative(), 10),
    informative_4bins = case(data_informative(seed = 21), 12, nbins = 4),
    ties = case(data_ties(), 10, nbins = 8),
    ties_categorical = case(data_ties_categorical(), 8),
    constant = case(data_constant(), 15, nbins = 16),
    many_classes = case(data_many_classes(), 10, nbins = 10),
    singletons = case(data_singletons(), 8, nbins = 6),
    categorical_df = case(data_categorical_df(), 7),
    mixed_df = case(data_mixed_df(), 6, nbins = 5),
    sparse = case(data_sparse(), 12, nbins = 8)
  )
}
