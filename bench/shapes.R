# Shared by the benchmark scripts of bench/ (jmi.R, feast_family.R): the shapes of the CUDA-JMI
# paper's sets, the synthetic data made in those shapes, the real microarray sets, and the CPU
# model for the result rows. Sourced by each script from its own folder:
#
#   source(file.path(bench_dir, "shapes.R"))
#
# make_shape() reads opts$seed and opts$quick from the calling script's options.

# ---- shapes --------------------------------------------------------------------------------

# The CUDA-JMI paper's sets (samples x features, classes), as synthetic data of the same shape,
# plus two real microarray sets. `quick_divisor` applies to --quick only: the small-sample
# shapes are already cheap and would lose classes if cut.
shape_table <- function() {
  list(
    BreastCancer = list(kind = "dense", n = 97, p = 24481, classes = 2, quick_divisor = 1),
    ECML = list(kind = "dense", n = 90, p = 27679, classes = 43, quick_divisor = 1),
    rcv1train = list(kind = "sparse", n = 20242, p = 47236, classes = 2, density = 0.0016, quick_divisor = 10),
    # Density as in ../shared/data/news20_bydate (about 145 nonzeros per document).
    news20 = list(kind = "sparse", n = 15935, p = 62061, classes = 20, density = 0.0023, quick_divisor = 10),
    # The news20 data again (same seed), as an integer matrix: dense categorical codes.
    "news20-dense" = list(kind = "sparse-as-dense", n = 15935, p = 62061, classes = 20, density = 0.0023,
                          quick_divisor = 10, seed_of = "news20", same_as = "news20"),
    SVHN = list(kind = "dense", n = 531131, p = 3072, classes = 10, quick_divisor = 10),
    chowdary = list(kind = "real", file = "chowdary.csv.gz"),
    nakayama = list(kind = "real", file = "nakayama.csv.gz"),
    # The SVHN shape with codes 0..15 (issue 19's measurements): few enough levels for the
    # GPU's tensor-core counts
    SVHN16 = list(kind = "dense", n = 531131, p = 3072, classes = 10, levels = 16L, quick_divisor = 10)
  )
}

# ---- synthetic data ------------------------------------------------------------------------

# Class labels 1..n_classes, each class present, in random order.
random_classes <- function(n, n_classes) sample(rep_len(seq_len(n_classes), n))

# An integer matrix of categorical codes 0..levels-1: n_informative columns follow the class
# (a class-specific offset plus small noise, 20% of entries replaced at random), the rest are
# uniform noise. Filled in column blocks so that no temporary exceeds about 1 GB.
make_dense <- function(n, p, n_classes, levels = 64L, n_informative = 10L) {
  y <- random_classes(n, n_classes)
  x <- matrix(0L, n, p)
  block <- max(1L, as.integer(2^27 %/% n))
  for (first in seq.int(1L, p, by = block)) {
    cols <- first:min(p, first + block - 1L)
    x[, cols] <- sample.int(levels, n * length(cols), replace = TRUE) - 1L
  }
  informative <- sort(sample.int(p, min(p, n_informative)))
  for (f in informative) {
    v <- ((y - 1L) * 7L + sample.int(4L, n, replace = TRUE) - 1L) %% levels
    noisy <- runif(n) < 0.2
    v[noisy] <- sample.int(levels, sum(noisy), replace = TRUE) - 1L
    x[, f] <- as.integer(v)
  }
  list(x = x, y = factor(y), informative = informative)
}

# Sparse positive counts (1..20) at the given density, positions uniform at random, plus
# n_informative columns that are nonzero in half of one class's samples and 2% of the others.
# Returned as (i, j, x) triplets so that the same data can be built sparse or dense.
make_sparse_triplets <- function(n, p, n_classes, density, n_informative = 10L) {
  y <- random_classes(n, n_classes)
  nnz <- round(density * n * p)
  pos <- sample.int(n * p, nnz) - 1  # n * p is a double: no integer overflow
  i <- as.integer(pos %% n) + 1L
  j <- as.integer(pos %/% n) + 1L
  x <- sample.int(20L, nnz, replace = TRUE)
  informative <- sort(sample.int(p, min(p, n_informative)))
  keep <- !(j %in% informative)
  i <- i[keep]; j <- j[keep]; x <- x[keep]
  for (t in seq_along(informative)) {
    cls <- (t - 1L) %% n_classes + 1L
    on <- which((y == cls & runif(n) < 0.5) | (y != cls & runif(n) < 0.02))
    i <- c(i, on)
    j <- c(j, rep.int(informative[t], length(on)))
    x <- c(x, sample.int(20L, length(on), replace = TRUE))
  }
  list(i = i, j = j, x = x, n = n, p = p, y = factor(y), informative = informative)
}

triplets_to_sparse <- function(t) {
  Matrix::sparseMatrix(i = t$i, j = t$j, x = as.double(t$x), dims = c(t$n, t$p))
}

triplets_to_dense <- function(t) {
  x <- matrix(0L, t$n, t$p)
  x[(t$j - 1) * as.double(t$n) + t$i] <- t$x
  x
}

# Reads a datamicroarray set; numeric values (binned by fsgpu into nbins bins).
read_microarray <- function(path) {
  d <- utils::read.csv(gzfile(path), check.names = FALSE)
  x <- as.matrix(d[, -(1:2)])
  storage.mode(x) <- "double"
  list(x = x, y = factor(d$class))
}

make_shape <- function(name, spec, opts, data_dir) {
  seed <- opts$seed + match(if (is.null(spec$seed_of)) name else spec$seed_of, names(shape_table()))
  set.seed(seed)
  n <- if (is.null(spec$n)) NA else if (opts$quick) ceiling(spec$n / spec$quick_divisor) else spec$n
  switch(spec$kind,
    dense = {
      levels <- if (is.null(spec$levels)) 64L else spec$levels
      d <- make_dense(n, spec$p, spec$classes, levels = levels)
      d$source <- sprintf("synthetic: integer codes 0..%d, 10 informative features, seed %d", levels - 1L, seed)
      d
    },
    sparse = ,
    "sparse-as-dense" = {
      t <- make_sparse_triplets(n, spec$p, spec$classes, spec$density)
      dense <- spec$kind == "sparse-as-dense"
      list(x = if (dense) triplets_to_dense(t) else triplets_to_sparse(t), y = t$y,
           informative = t$informative, density = length(t$x) / (as.double(n) * spec$p),
           source = sprintf("synthetic: counts 1..20 at density %g, 10 informative features, seed %d, %s",
                            spec$density, seed, if (dense) "as an integer matrix" else "dgCMatrix"))
    },
    real = {
      path <- file.path(data_dir, spec$file)
      if (!file.exists(path)) return(NULL)
      d <- read_microarray(path)
      d$source <- normalizePath(path)
      d
    }
  )
}

# ---- machine -------------------------------------------------------------------------------

cpu_model <- function() {
  lines <- tryCatch(readLines("/proc/cpuinfo", warn = FALSE), error = function(e) character())
  model <- grep("^model name", lines, value = TRUE)
  if (length(model)) sub("^[^:]*:\\s*", "", model[1]) else R.version$platform
}

# ---- command line ----------------------------------------------------------------------------

# Options given as --name value or --name=value, into `opts` (the defaults) under the name with
# dashes as underscores. specs maps each option to a function that converts its value's text,
# or to NULL for a flag that takes no value (set to TRUE).
read_options <- function(args, opts, specs, usage) {
  args <- unlist(lapply(args, function(a) {
    if (grepl("^--[a-z-]+=", a)) c(sub("=.*$", "", a), sub("^[^=]*=", "", a)) else a
  }))
  i <- 1L
  while (i <= length(args)) {
    a <- args[i]
    if (a == "--help") { usage(); quit(status = 0) }
    if (!a %in% names(specs)) stop("unknown option '", a, "' (see --help)", call. = FALSE)
    name <- gsub("-", "_", sub("^--", "", a))
    if (is.null(specs[[a]])) {
      opts[[name]] <- TRUE
    } else {
      i <- i + 1L
      if (i > length(args)) stop("option ", a, " needs a value", call. = FALSE)
      opts[[name]] <- specs[[a]](args[i])
    }
    i <- i + 1L
  }
  opts
}

split_list <- function(s) trimws(strsplit(s, ",", fixed = TRUE)[[1]])
