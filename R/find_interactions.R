# Exhaustive interaction (epistasis) search with MDFS's statistic, and its p-values.

#' Exhaustive search for variables that act together (MDFS)
#'
#' For every variable, the largest information gain it brings about the class within any
#' \eqn{k}-tuple of variables (\eqn{k} = `dimensions`, 1 to 5), over every tuple containing it
#' and over several random discretizations: the statistic of MDFS (Mnich and Rudnicki 2020;
#' Piliszek et al. 2019). A variable that matters only together with others (epistasis, XOR-like
#' effects) scores high in 2 or 3 dimensions though it tells nothing alone. p-values correct
#' for the maximum over tuples with contrast variables, as MDFS does.
#'
#' @section The statistic: Each variable is cut into `divisions + 1` levels at randomly
#'   jittered quantiles (`range` = 0 gives equal frequency); integer-coded input (genotypes
#'   0/1/2, or any codes with `levels`) keeps its own levels. For a tuple, objects are counted
#'   per voxel and class, a pseudo-count \eqn{p_c = \xi N_c / N_{min}} (\eqn{\xi} =
#'   `pseudo_count`) is added to every cell, and the gain of variable \eqn{v} is
#'   \eqn{IG_v = N [H(Y | tuple \setminus v) - H(Y | tuple)]} in bits (conditional entropies
#'   weighted by the pseudo-counted totals, exactly as MDFS). The thresholds are drawn as MDFS
#'   draws them (the same `seed` gives the same levels); the gains are computed in double
#'   precision (MDFS uses single precision, so values agree to about 6 digits).
#'
#' @section p-values: \eqn{2 \ln 2 \cdot IG} is asymptotically \eqn{\chi^2} with
#'   \eqn{df = (C-1) d (d+1)^{k-1}} degrees of freedom (\eqn{d} = divisions, or levels - 1 for
#'   integer codes; \eqn{C} classes: MDFS itself takes two, and the statistic and this count
#'   generalise). The maximum over many tuples is not \eqn{\chi^2}: as MDFS 1.5, the
#'   distribution of the maximum is fitted on contrast variables (permuted copies of randomly
#'   chosen variables, scored in tuples with \eqn{k-1} real variables), \eqn{p = 1 -
#'   F_{\chi^2}(x)^{1/\alpha}}. In one dimension with one discretization the plain
#'   \eqn{\chi^2} p-value is exact and is used. Without contrast variables the fit uses all
#'   variables (valid only when few are relevant).
#'
#' @section Missing values: `missing = "exclude"` (default) leaves an object out of the tuples
#'   of the variables it lacks (counts and \eqn{N} per tuple); `missing = "level"` makes a
#'   missing value a level of its own (integer codes only). The GPU takes data without missing
#'   values; with them the search runs on the CPU.
#'
#' @section Interesting tuples: With `threshold`, the search also lists every tuple in which a
#'   variable's gain exceeds it, as MDFS's `ComputeInterestingTuples()`: `interesting_tuples` has a
#'   row per (tuple, variable) with gain \eqn{> } `threshold` (a threshold of 0 or below keeps every
#'   tuple, as in MDFS), the gain being the largest over the discretizations (and `discretization`
#'   the first reaching it), in MDFS's order: by tuple (lexicographic in the variables' indices),
#'   then by variable. `interesting_vars` keeps the tuples holding at least one of these variables
#'   (every variable of such a tuple is reported, as MDFS 1.5 does), or with `require_all_vars =
#'   TRUE` the tuples made of them only. The list covers the tuples of real variables (contrast
#'   variables serve the p-values only: MDFS's function has none); `scores`, `tuples` and the
#'   p-values are those of the same search without a threshold. The gains are exact (CPU and GPU
#'   give the same rows bit for bit), so whether a gain equal to the threshold within MDFS's
#'   single precision is listed may differ from MDFS. Not taken over from MDFS: `I.lower`
#'   (lower-dimensional gains supplied by the user), `stat_mode` and `average`; no tuples give a
#'   zero-row data frame rather than a warning and `NULL`. As a list may be huge (\eqn{k
#'   \binom{n}{k}} rows), more than `getOption("fsgpu.max_interesting_tuples", 1e7)` rows is an
#'   error (before the search when the threshold keeps every tuple). On the GPU each kernel appends
#'   the gains above the threshold to a device buffer, grown and the batch run again when it
#'   overflows; with `BPPARAM` the tiles' lists are joined in order.
#'
#' @section Engines: The CPU engine is bit-sliced (AND and popcount over 64 objects at a time)
#'   and multithreaded; the GPU engine (1- to 5-way, up to 4 levels, no missing values) counts
#'   on the binary tensor cores where it can, computes the gains on the device and splits the
#'   work across `devices`. Both give bitwise-identical gains and tuples.
#'
#' @inheritParams select_features
#' @param x Objects in rows, variables in columns: a numeric matrix, data frame or sparse
#'   `dgCMatrix` (discretized at random quantiles), an integer or logical matrix of codes
#'   (genotypes 0/1/2), the result of [read_plink()], or a `SummarizedExperiment` (variables are
#'   the rows of `assay`; a `DelayedArray` assay, such as an `HDF5Array`, is discretized block by
#'   block and never realised whole: see [fsgpu_bioconductor]). The engine reads x where it lies
#'   (no copy in R) and checks it in the multithreaded pass that builds its bit planes; an error
#'   names the variable and object with a bad value.
#' @param y The class, one per object (two or more classes); objects with `NA` are left out
#'   (with a message).
#' @param dimensions The size \eqn{k} of the tuples, 1 to 5.
#' @param divisions Thresholds per variable (levels = divisions + 1), 1 to 15; ignored for
#'   integer codes.
#' @param discretizations How many random discretizations to take the maximum over.
#' @param range Jitter of the quantile thresholds, 0 to 1; default as MDFS 1.5:
#'   \eqn{\xi = (3/N)^{1/k}}, range = \eqn{(1 - \xi (d+1)) / (1 - \xi (1-d))}, clipped to 0..1.
#' @param pseudo_count \eqn{\xi} of the pseudo-counts.
#' @param seed The discretizations' seed (an integer below \eqn{2^{31}}); by default drawn from
#'   R's generator, so `set.seed()` makes runs repeatable.
#' @param levels For integer codes: the number of levels (codes are 0 to levels - 1); default
#'   the largest code plus one. Giving it for a numeric matrix of whole numbers treats it as codes.
#' @param contrast Whether to add contrast variables for the p-values.
#' @param n_contrast How many; default as MDFS, `max(ncol(x), 30)`.
#' @param p_adjust A method of [stats::p.adjust()] for the adjusted p-values.
#' @param level Variables with adjusted p-value below it are `relevant`.
#' @param missing `"exclude"` or `"level"` (see Missing values).
#' @param return_tuples Return, for every variable, the tuple where its gain is largest (ties:
#'   the lexicographically first tuple, then the first discretization).
#' @param top Return the tuples of the `top` variables with the largest gains.
#' @param threshold `NULL`, or a gain in bits: list every (tuple, variable) whose gain exceeds it in
#'   `interesting_tuples` (see Interesting tuples; 0 or below: every tuple).
#' @param interesting_vars With `threshold`: names or column indices of variables; only the
#'   tuples holding at least one of them are listed.
#' @param require_all_vars With `interesting_vars`: list only the tuples made of these variables alone.
#' @param map Where the variables lie on the genome, for [plot()][plot.fsgpu_interactions]: a
#'   data frame with columns `chr` and `bp` (as the `map` of [read_plink()]) and either one row
#'   per variable or a column `snp` naming them. Packed genotypes from [read_plink()] carry
#'   theirs; for a matrix give `map = geno$map`.
#' @param BPPARAM `NULL` (one process), or a `BiocParallel::BiocParallelParam` (e.g.
#'   `SnowParam(4)`, or `BatchtoolsParam()` on a cluster) to spread the search over its
#'   workers: the tuples are cut by their first variable into tiles of about equal work (three
#'   per worker; `options(fsgpu.tiles = n)` sets their number), each searched by the normal
#'   engine on a worker, and merged per variable (largest gain, then first discretization,
#'   then first tuple). Gains, tuples and p-values are identical to `BPPARAM = NULL`'s. As in
#'   [mi_pairs()], `threads` is per worker, `devices` may be a list of GPU id sets given to the
#'   tiles in turn, and the workers need fsgpu installed.
#' @return An object of class `fsgpu_interactions`: `scores`, a data frame with a row per
#'   variable (`variable`, `index`, `gain` in bits, `p_value`, `p_adjusted`, `relevant`, and
#'   with tuples `tuple` (names joined by `" x "`), `tuple_1`..`tuple_k` (indices) and
#'   `discretization`); `tuples`, the rows of `scores` for `top` (or all, with
#'   `return_tuples`) sorted by gain; with `threshold`, `interesting_tuples`, a data frame with a row
#'   per (tuple, variable) above it (`variable`, `index`, `tuple`, `tuple_1`..`tuple_k`, `gain`,
#'   `discretization`: MDFS's `Var`, `Tuple.1`.., `IG`); `relevant`, the relevant variables' names;
#'   `contrast_gain`;
#'   `df`, `alpha` (the fitted exponent), `params`, `backend`, `why_cpu`, `elapsed`, `timings`
#'   (seconds: `prepare`, the bit planes, with the check of `x` made in the same pass; `search`;
#'   `input`, the look at `x` before (its kind, size and names); `engine`, the whole engine calls;
#'   `results`, the p-values and data frames) and `run` (where the job ran and why, as
#'   in [select_features()]); `map`, the variables'
#'   chromosomes and positions when `x` comes from [read_plink()] (or `map` is given). It has
#'   `print`, `as.data.frame` and `plot` methods.
#' @references Mnich and Rudnicki (2020), All-relevant feature selection using
#'   multidimensional filters with exhaustive search, Information Sciences 524. Piliszek,
#'   Mnich, Migacz, Tabaszewski, Sulkowski, Polewko-Klim and Rudnicki (2019), MDFS:
#'   MultiDimensional Feature Selection in R, The R Journal 11(1).
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:2, 400 * 30, replace = TRUE), 400, 30,
#'             dimnames = list(NULL, paste0("snp", 1:30)))
#' y <- factor((x[, 4] > 0) != (x[, 9] > 0))  # an interaction of snp4 and snp9
#' res <- find_interactions(x, y, dimensions = 2, top = 3, backend = "cpu", threads = 1)
#' res
#' res$tuples
#' # Every pair in which a variable gains more than 100 bits (MDFS's ComputeInterestingTuples)
#' pairs <- find_interactions(x, y, dimensions = 2, threshold = 100, contrast = FALSE, backend = "cpu",
#'                            threads = 1)
#' pairs$interesting_tuples
#' # The gains above 5 bits in the pairs holding snp4
#' head(find_interactions(x, y, dimensions = 2, threshold = 5, interesting_vars = "snp4", contrast = FALSE,
#'                        backend = "cpu", threads = 1)$interesting_tuples)
#' if (requireNamespace("BiocParallel", quietly = TRUE))  # the same, from tiles on workers
#'   find_interactions(x, y, dimensions = 2, top = 3, backend = "cpu", threads = 1,
#'                     BPPARAM = BiocParallel::SerialParam())$tuples
#' @export
find_interactions <- function(x, ...) UseMethod("find_interactions")

#' @rdname find_interactions
#' @export
find_interactions.default <- function(x, y, dimensions = 2, divisions = 1, discretizations = 1, range = NULL,
                                      pseudo_count = 0.25, seed = NULL, levels = NULL, contrast = TRUE,
                                      n_contrast = NULL, p_adjust = "holm", level = 0.05,
                                      missing = c("exclude", "level"), return_tuples = FALSE, top = NULL,
                                      map = NULL, backend = NULL, threads = NULL, devices = NULL, BPPARAM = NULL,
                                      quiet = FALSE, threshold = NULL, interesting_vars = NULL,
                                      require_all_vars = FALSE, ...) {
  check_dots_empty(...)
  started <- proc.time()[["elapsed"]]  # not system.time(): it prints on the errors that name bad values
  input <- interaction_input(x, levels)
  quiet_if(quiet, run_interactions(c(input, list(seconds = proc.time()[["elapsed"]] - started)), y,
                                   mget(setdiff(names(formals()), c("x", "y", "levels", "...")))))
}

#' @rdname find_interactions
#' @param class For a `SummarizedExperiment`: the `colData` column holding the class.
#' @param assay For a `SummarizedExperiment`: the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @export
find_interactions.SummarizedExperiment <- function(x, class, dimensions = 2, divisions = 1, discretizations = 1,
                                                   range = NULL, pseudo_count = 0.25, seed = NULL, levels = NULL,
                                                   contrast = TRUE, n_contrast = NULL, p_adjust = "holm",
                                                   level = 0.05, missing = c("exclude", "level"),
                                                   return_tuples = FALSE, top = NULL, assay = NULL, map = NULL,
                                                   backend = NULL, threads = NULL, devices = NULL, BPPARAM = NULL,
                                                   quiet = FALSE, threshold = NULL, interesting_vars = NULL,
                                                   require_all_vars = FALSE, ...) {
  check_dots_empty(...)
  if (!methods::is(x, "SummarizedExperiment")) stop("x must be a SummarizedExperiment", call. = FALSE)
  columns <- colnames(SummarizedExperiment::colData(x))
  if (!is.character(class) || length(class) != 1L || !class %in% columns)
    stop("class must name one colData column of x; available: ", quote_list(columns), call. = FALSE)
  assay <- check_assay(x, assay)
  a <- SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
  input <- if (is_delayed(a)) delayed_interaction_input(a, levels, check_quiet(quiet), threads)
           else se_interaction_input(a, levels)
  y <- SummarizedExperiment::colData(x)[[class]]
  args <- mget(setdiff(names(formals()), c("x", "class", "levels", "assay", "...")))
  with_notes(quiet_if(quiet, run_interactions(input, y, args)), assay_label(assay))
}

#' @rdname find_interactions
#' @export
find_interactions.fsgpu_genotypes <- function(x, y, dimensions = 2, contrast = TRUE, n_contrast = NULL,
                                              p_adjust = "holm", level = 0.05, missing = c("exclude", "level"),
                                              return_tuples = FALSE, top = NULL, pseudo_count = 0.25, map = x$map,
                                              backend = NULL, threads = NULL, devices = NULL, BPPARAM = NULL,
                                              quiet = FALSE, threshold = NULL, interesting_vars = NULL,
                                              require_all_vars = FALSE, ...) {
  check_dots_empty(...)
  input <- list(kind = "bed", x = x$bytes, n_samples = x$n_samples, n_vars = x$n_snps,
                names = x$snp_names, sample_names = x$sample_names, levels = 3L, any_missing = NA)
  args <- c(mget(setdiff(names(formals()), c("x", "y", "..."))),
            list(divisions = 1, discretizations = 1, range = 0, seed = 0))
  quiet_if(quiet, run_interactions(input, y, args))
}

# The engine's view of x: kind "numeric" (numbers, discretized) or "codes" (integer codes). x
# stays as it is (a matrix, a data frame's columns or a dgCMatrix; with `transposed`, a matrix
# with the variables in rows) and the engine reads the values where they lie. Its values are
# checked later (`unchecked`), in the engine's pass that builds the bit planes
# (check_interaction_input()), which also finds the codes' levels when `levels` is NULL.
interaction_input <- function(x, levels, transposed = FALSE) {
  if (is.data.frame(x)) {
    bad <- !vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1))
    if (any(bad)) stop("x has non-numeric columns: ", quote_list(names(x)[bad]), call. = FALSE)
    # integer64 (bit64) keeps its numbers in doubles' bits: whole numbers, read as codes like
    # integer columns, converted by bit64's as.double() so that the engine reads their values.
    big <- vapply(x, inherits, logical(1), "integer64")
    codes <- !any(vapply(x, is.double, logical(1)) & !big)
    if (any(big)) {
      if (!requireNamespace("bit64", quietly = TRUE))
        stop("x has integer64 columns (", quote_list(names(x)[big]), "): install bit64 to read them", call. = FALSE)
      x[big] <- lapply(x[big], as.double)
    }
    dims <- c(.row_names_info(x, 2L), length(x))
    dim_names <- list(if (.row_names_info(x) > 0L) row.names(x), names(x))
  } else {
    if (methods::is(x, "Matrix") && !methods::is(x, "dgCMatrix")) x <- as.matrix(x)
    if (methods::is(x, "dgCMatrix")) {
      dims <- x@Dim
      dim_names <- x@Dimnames
    } else {
      if (!is.matrix(x) || !(is.numeric(x) || is.logical(x)))
        stop("x must be a numeric matrix or data frame, an integer matrix of codes, or read_plink() output",
             call. = FALSE)
      dims <- dim(x)
      dim_names <- dimnames(x)
      if (transposed) {
        dims <- rev(dims)
        dim_names <- rev(dim_names)
      }
    }
    codes <- is.integer(x) || is.logical(x)
  }
  codes <- codes || !is.null(levels)
  check_interaction_size(dims[1], dims[2])
  if (!is.null(levels)) levels <- check_count(levels, "levels", max = 16)
  list(kind = if (codes) "codes" else "numeric", x = x, transposed = transposed, n_samples = dims[1],
       n_vars = dims[2], names = interaction_names(dim_names[[2]], dims[2]), sample_names = dim_names[[1]],
       levels = NA_integer_, levels_given = levels, any_missing = NA, unchecked = TRUE)
}

# interaction_input() for a SummarizedExperiment's in-memory assay a (variables in rows): a
# dense matrix is read in place, a dgCMatrix transposed as a sparse matrix.
se_interaction_input <- function(a, levels) {
  if (is.matrix(a)) return(interaction_input(a, levels, transposed = TRUE))
  if (methods::is(a, "dgCMatrix")) return(interaction_input(Matrix::t(a), levels))
  interaction_input(t(as.matrix(a)), levels)
}

# interaction_input() for a DelayedArray assay (variables in rows). Numbers stay on disk, kind
# "numeric" with delayed = TRUE: run_interactions() codes them block by block once it knows the
# objects and the draws (delayed_interaction_codes()). Integer codes are read whole (4 bytes a
# value), each block checked as in memory.
delayed_interaction_input <- function(a, levels, quiet, threads) {
  blocks <- delayed_se_input(a, NULL, "x", NULL)  # numbers, not empty; read by read_feature_block()
  check_interaction_size(ncol(a), nrow(a))
  names <- interaction_names(rownames(a), nrow(a))
  if (DelayedArray::type(a) == "double" && is.null(levels))
    return(list(kind = "numeric", x = NULL, delayed = TRUE, blocks = blocks, n_samples = ncol(a), n_vars = nrow(a),
                names = names, sample_names = colnames(a), levels = NA_integer_, any_missing = NA))
  if (!is.null(levels)) check_count(levels, "levels", max = 16)  # before reading every block
  codes <- matrix(0L, ncol(a), nrow(a))
  top <- 0
  any_missing <- FALSE
  for_each_feature_block(blocks, "Reading", quiet, function(block) {
    x <- block$input$x
    scan <- fsgpu_interaction_scan(x, TRUE, names[block$rows], fsgpu_threads(threads))
    if (!is.integer(x)) storage.mode(x) <- "integer"  # whole numbers, checked by the scan
    codes[, block$rows] <<- x
    top <<- max(top, scan$top)
    any_missing <<- any_missing || scan$any_missing
  })
  codes_input(codes, top, any_missing, levels, names, colnames(a), dim(codes), FALSE)
}

check_interaction_size <- function(n_objects, n_vars) {
  if (n_vars < 1 || n_objects < 2) stop("x needs at least two objects and one variable", call. = FALSE)
}

# paste0("V", seq_len(n_vars)) built in C++ (R takes a second for a million).
interaction_names <- function(names, n_vars) if (is.null(names)) fsgpu_default_names("V", n_vars) else names

# The levels of integer codes whose largest is top: `levels` as given, or the largest code plus one.
code_levels <- function(top, levels) {
  if (is.null(levels)) levels <- max(2, top + 1)
  levels <- check_count(levels, "levels", max = 16)
  if (top >= levels) stop(sprintf("x has the code %s, but levels = %d", format(top), levels), call. = FALSE)
  as.integer(levels)
}

# The input of integer codes x (dims: objects, variables) whose largest code is top.
codes_input <- function(x, top, any_missing, levels, names, sample_names, dims, transposed) {
  list(kind = "codes", x = x, transposed = transposed, n_samples = dims[1], n_vars = dims[2], names = names,
       sample_names = sample_names, levels = code_levels(top, levels), any_missing = any_missing)
}

# An in-memory input's values checked in C++ in the multithreaded pass that builds the search's
# first bit planes (fsgpu_interaction_prepare()), so that x is read once. The input learns x's
# largest value and whether any is missing (integer codes: their levels), and `prepared` holds
# the planes for the engine; without `build` (tiles searched on workers, which build their own) x
# is only checked. Inputs checked before (delayed, packed) are returned as they are.
check_interaction_input <- function(input, rows, classes, source, contrast_seed, divisions, range, seed, missing,
                                    threads, build) {
  if (!isTRUE(input$unchecked)) return(input)
  numeric_input <- input$kind == "numeric"
  levels <- if (is.null(input$levels_given)) NA_integer_ else input$levels_given
  prepared <- fsgpu_interaction_prepare(input$x, input$kind, input$n_samples, rows, input$n_vars, classes$y,
                                        length(classes$classes), source, contrast_seed,
                                        if (numeric_input) divisions else 1L, if (numeric_input) range else 0, seed,
                                        levels, missing == "level", input$transposed, input$names, build, threads)
  if (!numeric_input) input$levels <- code_levels(prepared$top, input$levels_given)
  input$any_missing <- prepared$any_missing
  input$prepared <- prepared$bits
  input$prepare_seconds <- prepared$seconds
  input$unchecked <- FALSE
  input
}

# The codes that the search takes of a delayed numeric input, one block of variables at a time:
# kind "interaction_codes", raw (int8) objects with a class x variables (contrast ones included)
# x discretizations, so that memory holds these codes and one block. A block gives the codes of
# its contrast variables too (src/core/interaction_codes.h says why). With so many
# discretizations that the codes would outweigh the values (8 bytes each), the values of the
# objects with a class are read instead, and the engine draws on them as it does in memory.
delayed_interaction_codes <- function(input, rows, source, contrast_seed, divisions, discretizations, range, seed,
                                      threads, quiet) {
  if ((input$n_vars + length(source)) * as.numeric(discretizations) > 8 * input$n_vars)
    return(delayed_interaction_values(input, rows, threads, quiet))
  codes <- array(as.raw(0), c(length(rows), input$n_vars + length(source), discretizations))
  for_each_feature_block(input$blocks, "Discretizing", quiet, function(block) {
    fsgpu_interaction_scan(block$input$x, FALSE, input$names[block$rows], fsgpu_threads(threads))
    coded <- fsgpu_interaction_block_codes(block$input$x, block$rows[1], rows, input$n_vars, source, contrast_seed,
                                           divisions, discretizations, range, seed, threads)
    codes[, coded$vars, ] <<- coded$codes
  })
  list(x = codes, kind = "interaction_codes", n_rows = length(rows), rows = seq_along(rows))
}

delayed_interaction_values <- function(input, rows, threads, quiet) {
  values <- matrix(0, length(rows), input$n_vars)
  for_each_feature_block(input$blocks, "Reading", quiet, function(block) {
    fsgpu_interaction_scan(block$input$x, FALSE, input$names[block$rows], fsgpu_threads(threads))
    values[, block$rows] <<- block$input$x[rows, , drop = FALSE]
  })
  list(x = values, kind = "numeric", n_rows = length(rows), rows = seq_along(rows))
}

run_interactions <- function(input, y, a) {
  bp <- bp_setup(a$BPPARAM, a$devices, a$threads)
  k <- check_count(a$dimensions, "dimensions", max = 5)
  missing <- match.arg(a$missing, c("exclude", "level"))
  numeric_input <- input$kind == "numeric"
  discretizations <- if (numeric_input) check_count(a$discretizations, "discretizations") else 1L
  if (!numeric_input && !identical(as.numeric(a$discretizations), 1))
    stop("integer codes keep their own levels: discretizations must be 1", call. = FALSE)
  if (missing == "level" && numeric_input)
    stop("missing = \"level\" is for integer codes; numeric data exclude missing values", call. = FALSE)
  if (!is.numeric(a$pseudo_count) || length(a$pseudo_count) != 1 || !(a$pseudo_count > 0))
    stop("pseudo_count must be a positive number", call. = FALSE)
  # Numbers are cut into divisions + 1 levels, integer codes keep theirs: known, for codes in
  # memory, once their check has found the largest (below), and with them their default range.
  divisions <- range <- NULL
  if (numeric_input) {
    divisions <- check_count(a$divisions, "divisions", max = 15)
    range <- interaction_range(a$range, y, k, divisions)
    if (range == 0 && discretizations > 1)
      stop("range = 0 makes every discretization the same: use discretizations = 1", call. = FALSE)
  }
  seed <- a$seed
  if (is.null(seed)) seed <- round(stats::runif(1, 0, 2^31 - 1))
  if (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || seed < 0 || seed >= 2^31 || seed != round(seed))
    stop("seed must be a whole number from 0 to 2^31 - 1", call. = FALSE)
  if (input$n_vars < k) stop(sprintf("x has %d variables, fewer than dimensions = %d", input$n_vars, k), call. = FALSE)
  if (length(y) != input$n_samples)
    stop(sprintf("y has %d values for %d objects", length(y), input$n_samples), call. = FALSE)
  # Objects without a class (a phenotype not measured) are left out, and said so.
  rows <- which(!is.na(y))
  if (length(rows) < input$n_samples)
    message(sprintf("find_interactions: %d objects without a class (NA in y) left out", input$n_samples - length(rows)))
  classes <- encode_classes(y[rows], length(rows), input$sample_names[rows], "y")
  if (length(classes$classes) < 2) stop("y needs at least two classes", call. = FALSE)
  if (!is.character(a$p_adjust) || length(a$p_adjust) != 1 || !a$p_adjust %in% stats::p.adjust.methods)
    stop("p_adjust must be one of ", quote_list(stats::p.adjust.methods, max = 10), call. = FALSE)
  n_contrast <- 0L
  source <- integer(0)
  if (isTRUE(a$contrast)) {
    n_contrast <- if (is.null(a$n_contrast)) max(input$n_vars, 30L) else check_count(a$n_contrast, "n_contrast")
    if (n_contrast < 4) stop("n_contrast must be at least 4: the fit needs them", call. = FALSE)
    source <- sample.int(input$n_vars, n_contrast, replace = n_contrast > input$n_vars)
  } else if (!isFALSE(a$contrast)) {
    stop("contrast must be TRUE or FALSE", call. = FALSE)
  }
  contrast_seed <- floor(stats::runif(1, 0, 2^32))
  with_tuples <- isTRUE(a$return_tuples) || !is.null(a$top)
  if (with_tuples && k == 1) stop("tuples are for dimensions of 2 or more", call. = FALSE)
  top <- if (is.null(a$top)) NULL else check_count(a$top, "top")
  collecting <- interesting_setup(a, k, input)
  threads <- fsgpu_threads(a$threads)
  # x read once before the search, for its check and the first bit planes (after the arguments'
  # checks, so that a wrong argument costs no pass over x); not system.time(), which prints on
  # the errors that name bad values.
  checking <- proc.time()[["elapsed"]]
  input <- check_interaction_input(input, rows, classes, source, contrast_seed, divisions, range, seed, missing,
                                   threads, build = is.null(bp))
  checking <- proc.time()[["elapsed"]] - checking
  if (!numeric_input) {
    divisions <- input$levels - 1L
    range <- interaction_range(a$range, y, k, divisions)
  }
  # A level for missing values only where there are some (packed genotypes: always).
  missing_level <- missing == "level" && !isFALSE(input$any_missing)
  n_levels <- divisions + 1L + missing_level
  words <- ceiling(length(rows) / 64)
  # Work in pair-equivalents: the CPU's time per tuple and word grows with the table (n_levels^k
  # cells, k gains), the GPU's much less (2 CPU threads against an H100, 3 levels: a 4-way tuple
  # costs the CPU about 200 pairs' time, a 5-way one about 500), so "auto" takes the GPU for
  # 4- and 5-way searches of a few dozen variables already, and for 1-way ones (the level counts
  # the host has) only when huge.
  per_tuple <- n_levels^(k - 2) * k^2 / 4
  work <- (choose(input$n_vars, k) + n_contrast * choose(input$n_vars, k - 1)) * words * discretizations * per_tuple
  chosen <- choose_backend(a$backend, work, isTRUE(bp$forked))
  backend <- chosen$backend
  devices <- if (backend == "gpu") resolve_devices(bp_all_devices(a$devices)) else integer(0)
  if (backend != "cpu" && length(devices) == 0) backend <- "cpu"
  engine <- engine_mode(a$backend, backend)
  coding <- system.time(
    data <- if (isTRUE(input$delayed)) delayed_interaction_codes(input, rows, source, contrast_seed, divisions,
                                                                 discretizations, range, seed, threads, a$quiet)
            else list(x = input$x, kind = input$kind, n_rows = input$n_samples, rows = rows,
                      transposed = isTRUE(input$transposed)),
    gcFirst = FALSE
  )[["elapsed"]]
  args <- list(x = data$x, kind = data$kind, n_rows = data$n_rows, rows = data$rows, n_real_d = input$n_vars,
               y = classes$y, n_classes = length(classes$classes), contrast_source = source,
               contrast_seed = contrast_seed, dimensions = k, divisions = divisions, discretizations = discretizations,
               range = range, seed = seed, pseudo_count = a$pseudo_count, n_levels = n_levels,
               missing_level = missing_level, with_tuples = with_tuples, backend = engine, threads = threads,
               devices = devices, memory_limit = getOption("fsgpu.gpu_memory_limit", 0),
               transposed = isTRUE(data$transposed))
  if (!is.null(collecting)) args <- c(args, collecting$engine)
  # Progress from the engine; tiles on workers report none.
  progress <- if (is.null(bp)) job_progress(sprintf("Searching %s %d-tuples of variables",
                                                     format(choose(input$n_vars, k), big.mark = ","), k), a$quiet)
  elapsed <- coding + checking + system.time(
    res <- if (is.null(bp)) do.call(fsgpu_find_interactions,
                                    c(args, list(progress = progress, prepared = input$prepared))) else
      bp_find_interactions(bp, args, input$n_vars + n_contrast),
    gcFirst = FALSE
  )[["elapsed"]]
  progress_done(progress)
  # The bit planes: the engine's, the check's (with the first planes) and a delayed assay's coding.
  res$timings[["prepare"]] <- res$timings[["prepare"]] + coding +
    if (is.null(input$prepare_seconds)) 0 else input$prepare_seconds
  results_started <- proc.time()[["elapsed"]]
  df <- (length(classes$classes) - 1) * (n_levels - 1) * n_levels^(k - 1)
  # p-values as MDFS 1.5's ComputePValue: the chi-squared tail of 2 ln2 IG, and for the maximum
  # over tuples p = 1 - F^(1/alpha) ("exp") or F/alpha ("lin"), alpha fitted by weighted least
  # squares on the contrast variables' tails (all variables without them), ignoring the n0 - 1
  # smallest, n0 chosen by a refining grid search (tests/testthat/helper-interactions.R has the
  # same fit in plain R). The p-values, Holm's adjustment and the data frame are built in C++ in
  # one pass (a million variables took R 0.4 s).
  mode <- if (k > 1) "exp" else if (discretizations == 1) "raw" else if (divisions * discretizations < 12) "lin" else
    "exp"
  built <- fsgpu_interaction_scores(res$gain, input$n_vars, 2 * log(2), df, mode, n_contrast > 0, 8L, a$p_adjust,
                                    a$level, input$names, if (with_tuples) res$tuples else matrix(0L, 0, 0),
                                    res$discretization, threads)
  scores <- built$scores
  if (!built$adjusted) {
    scores$p_adjusted <- stats::p.adjust(scores$p_value, a$p_adjust)
    scores$relevant <- scores$p_adjusted < a$level
  }
  ranked <- NULL
  if (with_tuples) {
    ranked <- scores[if (is.null(top)) built$ranked else utils::head(built$ranked, top), , drop = FALSE]
    rownames(ranked) <- NULL
  }
  # The R side's parts: the look at x before the search (its kind, size and names), the engine's
  # calls (the check with the first bit planes, the search) beyond bitmaps and search, and the
  # p-values and data frames.
  timings <- c(res$timings, input = if (is.null(input$seconds)) 0 else input$seconds, engine = elapsed - coding,
               results = proc.time()[["elapsed"]] - results_started)
  result <- structure(list(
    scores = scores,
    tuples = ranked,
    relevant = scores$variable[scores$relevant],
    contrast_gain = res$gain[input$n_vars + seq_len(n_contrast)],
    df = df, alpha = built$alpha,
    params = c(list(dimensions = k, divisions = divisions, discretizations = discretizations, range = range,
                    seed = seed, pseudo_count = a$pseudo_count, levels = n_levels, missing = missing,
                    n_contrast = n_contrast, p_adjust = a$p_adjust, level = a$level,
                    n_objects = length(rows), classes = classes$classes, kind = input$kind), collecting$params),
    backend = res$backend, why_cpu = res$why_cpu, elapsed = elapsed, timings = timings,
    run = backend_used(res$backend, bp_threads(bp, threads), devices, elapsed,
                       if (nzchar(res$why_cpu)) res$why_cpu else chosen$why_cpu, bp_workers(bp)),
    map = variable_map(a$map, input$names)
  ), class = "fsgpu_interactions")
  # Only with a threshold, so that results without one keep their elements.
  if (!is.null(collecting)) result$interesting_tuples <- interesting_tuples(res$hits, input$names, k, collecting)
  result
}

# The collection of gains above a threshold (MDFS's ComputeInterestingTuples), or NULL without a
# threshold: the engine's arguments (`engine`), the threshold as given and the limit on the rows.
# As MDFS, a threshold of 0 or below keeps every tuple (-Inf to the engine). When it keeps every
# tuple the row count is known beforehand, and a count over the limit is refused before the search.
interesting_setup <- function(a, k, input) {
  if (is.null(a$threshold)) {
    if (!is.null(a$interesting_vars) || !isFALSE(a$require_all_vars))
      stop("interesting_vars and require_all_vars filter the tuples of `threshold`: give a threshold", call. = FALSE)
    return(NULL)
  }
  threshold <- a$threshold
  if (!is.numeric(threshold) || length(threshold) != 1 || is.na(threshold) || threshold == Inf)
    stop("threshold must be a number (a gain in bits; 0 or below keeps every tuple)", call. = FALSE)
  if (k == 1) stop("threshold lists tuples: dimensions must be 2 or more", call. = FALSE)
  if (!isTRUE(a$require_all_vars) && !isFALSE(a$require_all_vars))
    stop("require_all_vars must be TRUE or FALSE", call. = FALSE)
  interesting <- resolve_features(a$interesting_vars, list(feature_names = input$names, n_features = input$n_vars),
                                  "interesting_vars")
  limit <- getOption("fsgpu.max_interesting_tuples", 1e7)
  if (!is.numeric(limit) || length(limit) != 1 || is.na(limit) || limit < 1)
    stop("options(fsgpu.max_interesting_tuples) must be a positive number", call. = FALSE)
  n <- input$n_vars
  n_interesting <- length(interesting)
  tuples <- if (n_interesting == 0) choose(n, k) else if (isTRUE(a$require_all_vars)) choose(n_interesting, k) else
    choose(n, k) - choose(n - n_interesting, k)
  if (threshold <= 0 && k * tuples > limit)
    stop(sprintf(paste("threshold = %g keeps every tuple: %s rows, more than options(fsgpu.max_interesting_tuples)",
                       "= %s; give a positive threshold or interesting_vars, or raise the option"),
                 threshold, format(k * tuples, big.mark = ","), format(limit, big.mark = ",")), call. = FALSE)
  list(threshold = threshold, interesting = interesting, require_all = isTRUE(a$require_all_vars), limit = limit,
       params = list(threshold = threshold, interesting_vars = input$names[interesting],
                     require_all_vars = isTRUE(a$require_all_vars)),
       engine = list(collect = TRUE, threshold = if (threshold <= 0) -Inf else as.numeric(threshold),
                     interesting = interesting, require_all = isTRUE(a$require_all_vars), max_hits = limit))
}

# The engine's collected gains as a data frame in MDFS's order (tuple, then variable).
interesting_tuples <- function(hits, names, k, collecting) {
  if (length(hits$gain) > collecting$limit)  # tiles on workers each keep to the limit, not their sum
    stop(sprintf("more than options(fsgpu.max_interesting_tuples) = %s (tuple, variable) gains exceed the threshold",
                 format(collecting$limit, big.mark = ",")), call. = FALSE)
  tuple <- matrix(hits$tuple, ncol = k)
  out <- data.frame(variable = names[hits$variable], index = hits$variable,
                    tuple = do.call(paste, c(lapply(seq_len(k), function(i) names[tuple[, i]]), sep = " x ")),
                    stringsAsFactors = FALSE)
  for (i in seq_len(k)) out[[paste0("tuple_", i)]] <- tuple[, i]
  out$gain <- hits$gain
  out$discretization <- hits$discretization
  out
}

# The chromosome and position of every variable (a data frame chr, bp in the variables' order),
# from a map with one row per variable or a column `snp` naming them; NULL without a map.
variable_map <- function(map, names) {
  if (is.null(map)) return(NULL)
  if (!is.data.frame(map) || !all(c("chr", "bp") %in% names(map)))
    stop("map must be a data frame with columns chr and bp (as read_plink() returns)", call. = FALSE)
  # read_plink()'s map names the variables in their order: no lookup of a million names.
  in_order <- identical(map$snp, names) || (!"snp" %in% names(map) && nrow(map) == length(names))
  rows <- if (in_order) NULL else if ("snp" %in% names(map) && all(names %in% map$snp)) match(names, map$snp) else
    if (nrow(map) == length(names)) seq_along(names) else
      stop(sprintf("map has %d rows and no snp column naming the %d variables", nrow(map), length(names)),
           call. = FALSE)
  column <- function(values) if (is.null(rows)) values else values[rows]
  data.frame(chr = as.character(column(map$chr)), bp = as.numeric(column(map$bp)), stringsAsFactors = FALSE)
}

# The thresholds' jitter: `range` as given, or MDFS's default for the objects with a class.
interaction_range <- function(range, y, k, divisions) {
  if (is.null(range)) range <- mdfs_default_range(sum(!is.na(y)), k, divisions)
  if (!is.numeric(range) || length(range) != 1 || is.na(range) || range < 0 || range > 1)
    stop("range must be a number between 0 and 1", call. = FALSE)
  range
}

# MDFS 1.5's default jitter of the thresholds (GetRange with k = 3).
mdfs_default_range <- function(n, dimensions, divisions) {
  xi <- (3 / n)^(1 / dimensions)
  min(1, max(0, (1 - xi * (1 + divisions)) / (1 - xi * (1 - divisions))))
}

#' @exportS3Method print fsgpu_interactions
print.fsgpu_interactions <- function(x, n = 10, ...) {
  p <- x$params
  cat(sprintf("Interaction search (MDFS): %d-way, %s variables, %s objects, %d classes, %s\n",
              p$dimensions, format(nrow(x$scores), big.mark = ","), format(p$n_objects, big.mark = ","),
              length(p$classes),
              if (p$kind == "numeric") sprintf("%d levels x %d discretization%s", p$levels, p$discretizations,
                                               if (p$discretizations == 1) "" else "s")
              else sprintf("%d levels (codes)", p$levels)))
  cat(format(x$run), "\n", sep = "")
  cat(sprintf("%d relevant at %s < %g (%s contrast variables)\n", length(x$relevant),
              if (p$p_adjust == "none") "p" else paste0(p$p_adjust, "-adjusted p"), p$level,
              format(p$n_contrast, big.mark = ",")))
  shown <- if (!is.null(x$tuples)) x$tuples else x$scores[order(-x$scores$gain, x$scores$index), ]
  shown <- utils::head(shown[, intersect(c("variable", "gain", "p_value", "p_adjusted", "tuple"), names(shown))], n)
  print(shown, row.names = FALSE, digits = 4)
  if (!is.null(x$interesting_tuples))
    cat(sprintf("%s (tuple, variable) gains above the threshold %g in $interesting_tuples\n",
                format(nrow(x$interesting_tuples), big.mark = ","), p$threshold))
  invisible(x)
}

#' @export
as.data.frame.fsgpu_interactions <- function(x, ...) x$scores
