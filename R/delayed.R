# DelayedArray assays (HDF5Array and other on-disk or lazy matrices) streamed in blocks of
# features, so that the double matrix is never realised whole.
#
# The information-theoretic jobs consume small integer codes, and every feature is coded from
# its own values only (equal-width bins between its own minimum and maximum, or its own
# supervised cut points). So each block of rows of the assay is read, coded with the very
# functions the in-memory path uses, and written into one integer matrix; the engines then take
# the codes as categories, which gives the in-memory result exactly (information depends only on
# which samples share a code, not on the codes' values). kNN needs the values themselves: its
# double matrix is filled block by block instead of through as.matrix() and t() copies.

#' Whether an assay is a DelayedArray (HDF5Array, TileDBArray, a delayed operation...)
#' @noRd
is_delayed <- function(a) methods::is(a, "DelayedArray")

#' The input structure of prepare_se_input() for a DelayedArray assay, left on disk
#'
#' `x` stays the assay (features x samples); `delayed = TRUE` tells apply_discretization() and
#' the discretization functions to code it block by block. Missing values are found per block.
#' @noRd
delayed_se_input <- function(a, y, arg_x, arg_y) {
  if (!requireNamespace("DelayedArray", quietly = TRUE))
    stop("the DelayedArray package is needed for DelayedArray assays", call. = FALSE)
  if (!DelayedArray::type(a) %in% c("double", "integer", "logical"))
    stop(arg_x, " must hold numbers, not ", DelayedArray::type(a), " values", call. = FALSE)
  if (nrow(a) == 0L || ncol(a) == 0L)
    stop(arg_x, " is empty (", ncol(a), " samples, ", nrow(a), " features)", call. = FALSE)
  feature_names <- rownames(a)
  if (is.null(feature_names)) feature_names <- paste0("X", seq_len(nrow(a)))
  input <- list(x = a, feature_names = feature_names, sample_names = colnames(a), n_samples = ncol(a),
                n_features = nrow(a), sparse = FALSE, delayed = TRUE, arg = arg_x)
  if (is.null(y)) return(input)
  c(input, encode_classes(y, input$n_samples, input$sample_names, arg_y, arg_x))
}

#' normalise_x(t(a)) for a DelayedArray assay `a` (features in rows) whose checks are deferred,
#' without reading it: x is delayed_blocks(a), which only the encoder reads, block by block
#' (codes_from_r() in src/input_codes.cpp), so memory holds one block and the codes.
#' @noRd
delayed_blocks_input <- function(a, arg) {
  input <- delayed_se_input(a, NULL, arg, NULL)
  input$delayed <- input$arg <- NULL
  input$x <- delayed_blocks(a)
  input$kinds <- rep(column_kind(vector(DelayedArray::type(a))), input$n_features)
  input
}

#' The encoder's view of a DelayedArray: its rowAutoGrid() blocks, read(b) giving block b as an
#' ordinary matrix (features in rows)
#' @noRd
delayed_blocks <- function(a) {
  grid <- DelayedArray::rowAutoGrid(a)
  structure(list(read = function(b) DelayedArray::read_block(a, grid[[b]], as.sparse = FALSE),
                 n_blocks = length(grid)), class = "fsgpu_blocks")
}

#' The blocks of features of a delayed input
#'
#' DelayedArray's rowAutoGrid(): blocks of whole rows (at least one) of at most
#' getAutoBlockSize() bytes, in row order. read_feature_block() reads block `b` into memory as
#' an in-memory input (samples x block features, as normalise_x() makes it, with the class of
#' `input` when it has one) plus `rows`, the block's feature indices.
#' @noRd
feature_blocks <- function(input) DelayedArray::rowAutoGrid(input$x)

#' @noRd
read_feature_block <- function(input, grid, b) {
  viewport <- grid[[as.integer(b)]]
  block <- DelayedArray::read_block(input$x, viewport)
  first <- DelayedArray::start(viewport)[1L]
  rows <- seq.int(first, length.out = nrow(block))
  dimnames(block) <- list(input$feature_names[rows], input$sample_names)
  sub <- normalise_x(t(block), input$arg)
  if (!is.null(input$y)) sub[c("y", "classes")] <- input[c("y", "classes")]
  list(input = sub, rows = rows)
}

#' Calls f(block) with read_feature_block()'s block for every block of features of a delayed
#' input, in order, under one progress ("<job> <n> blocks of features")
#' @noRd
for_each_feature_block <- function(input, job, quiet, f) {
  grid <- feature_blocks(input)
  progress <- job_progress(sprintf("%s %d blocks of features", job, length(grid)), quiet)
  for (b in seq_along(grid)) {
    f(read_feature_block(input, grid, b))
    if (!is.null(progress)) progress$update(b / length(grid))
  }
  progress_done(progress)
}

#' apply_discretization() for a delayed input: the integer codes of every feature, by blocks
#'
#' Each block's columns are resolved as in memory (resolve_columns(), with `input$binning`),
#' which column by column gives the in-memory decision; the notes and the one message come
#' after the last block. With `discretize = NULL`, the columns to bin get the equal-width bins
#' (`nbins`) that the engines would give them; categories keep their values. Otherwise each
#' block goes through apply_discretization() itself, and the blocks' fits are joined into one
#' discretization, as if it had been fitted on the whole assay. Memory: the integer codes (4
#' bytes a value) and one block.
#' @return The input with `x` the samples x features integer codes and, with `discretize`,
#'   `discretization`.
#' @noRd
delayed_codes <- function(input, discretize, nbins, backend, threads, devices, quiet = FALSE) {
  codes <- matrix(0L, input$n_samples, input$n_features)
  fits <- list()
  treatments <- list()
  binned <- FALSE
  # One progress for the blocks (each block's own steps run quietly).
  for_each_feature_block(input, "Coding", quiet, function(block) {
    sub <- block$input
    check_finite(sub, input$arg)
    if (!is.null(input$binning)) {
      binning <- input$binning
      binning$roles <- binning$roles[block$rows]
      resolved <- resolve_columns(sub, binning)
      sub <- resolved$input
      treatments[[length(treatments) + 1L]] <<- resolved$treatment
    }
    binned <<- binned || length(numeric_column_indices(sub)) > 0L
    if (is.null(discretize)) {
      codes[, block$rows] <<- block_codes(sub, nbins, threads)
    } else {
      sub <- apply_discretization(sub, discretize, nbins, backend, threads, devices, quiet = TRUE)
      codes[, block$rows] <<- sub$x
      fits[length(fits) + 1L] <<- list(sub$discretization)
    }
  })
  if (length(treatments)) {
    input <- announce_columns(input, do.call(Map, c(list(c), treatments)), input$feature_names, input$n_samples)
  }
  # The codes are integers, but numbers were binned with nbins (print methods say so).
  input$binned <- is.null(discretize) && binned
  input$x <- codes
  input$delayed <- NULL
  if (!is.null(discretize)) {
    fit <- if (inherits(discretize, "fsgpu_discretization")) discretize else join_discretizations(fits)
    if (!is.null(fit)) input$discretization <- fit
  }
  input
}

#' The codes of a block of features: equal-width bins (1-based) of its double columns, the
#' values of its categories
#' @noRd
block_codes <- function(sub, nbins, threads) {
  numeric <- numeric_column_indices(sub)
  if (length(numeric) == sub$n_features) return(equal_width_codes(sub, nbins, threads))
  if (!length(numeric) && is.matrix(sub$x)) return(sub$x)
  out <- matrix(0L, sub$n_samples, sub$n_features)
  for (j in setdiff(seq_len(sub$n_features), numeric)) out[, j] <- feature_column(sub$x, j)
  if (length(numeric)) out[, numeric] <- equal_width_codes(subset_features(sub, numeric), nbins, threads)
  out
}

#' The engines' equal-width bins of the numeric columns of an in-memory input, 1-based
#' (the rule is the one of discretize(method = "equal_width"), shared with the encoder)
#' @noRd
equal_width_codes <- function(input, nbins, threads) {
  if (is.null(nbins)) nbins <- default_nbins(input$n_samples)
  fit <- run_discretize(input, "equal_width", nbins, "fail", "cpu", threads, NULL, quiet = TRUE)
  unname(fit$codes)
}

#' One discretization from the fits of consecutive blocks of features (NULL when none has one)
#' @noRd
join_discretizations <- function(fits) {
  fits <- Filter(Negate(is.null), fits)
  if (!length(fits)) return(NULL)
  fit <- fits[[1L]]
  if (length(fits) == 1L) return(fit)
  fit$cuts <- do.call(c, lapply(fits, `[[`, "cuts"))
  fit$features <- do.call(rbind, lapply(fits, `[[`, "features"))
  rownames(fit$features) <- NULL
  fit$codes <- do.call(cbind, lapply(fits, `[[`, "codes"))
  fit$elapsed <- sum(vapply(fits, `[[`, numeric(1), "elapsed"))
  fit$timings <- Reduce(`+`, lapply(fits, `[[`, "timings"))
  if (!is.null(fit$run)) fit$run$elapsed <- fit$elapsed
  fit
}

#' discretize() of a delayed input: each block of features fitted on its own, then joined
#' @noRd
delayed_discretize <- function(input, method, nbins, na, backend, threads, devices, quiet = FALSE) {
  fits <- list()
  for_each_feature_block(input, "Discretizing", quiet, function(block) {
    fits[[length(fits) + 1L]] <<- run_discretize(block$input, method, nbins, na, backend, threads, devices,
                                                 quiet = TRUE)
  })
  join_discretizations(fits)
}

#' predict() of a discretization on a delayed input: codes of the features `index` (the
#' input's features in the order of the cuts)
#' @noRd
delayed_predict_codes <- function(input, object, index, threads) {
  codes <- matrix(0L, input$n_samples, length(index))
  position <- match(seq_len(input$n_features), index)  # where each feature of the assay goes
  grid <- feature_blocks(input)
  for (b in seq_along(grid)) {
    block <- read_feature_block(input, grid, b)
    keep <- which(!is.na(position[block$rows]))
    if (!length(keep)) next
    sub <- subset_features(block$input, keep)
    to <- position[block$rows[keep]]
    codes[, to] <- fsgpu_discretize_codes(sub$x, sub$n_samples, unname(object$cuts[to]), object$features$lower[to],
                                          object$features$upper[to], object$method,
                                          if (is.null(object$nbins)) 0L else object$nbins, fsgpu_threads(threads))
  }
  codes
}

#' The points of a SummarizedExperiment's assay for kNN as a double matrix: its rows (features)
#' or its columns (samples). A DelayedArray assay is read in blocks of rows straight into the
#' matrix, so memory holds the matrix the engine needs plus one block.
#' @noRd
assay_points <- function(se, assay, by, quiet = FALSE) {
  a <- SummarizedExperiment::assay(se, assay, withDimnames = TRUE)
  if (!is_delayed(a)) {
    a <- as.matrix(a)
    return(if (by == "samples") t(a) else a)
  }
  points <- if (by == "samples") matrix(0, ncol(a), nrow(a), dimnames = rev(dimnames(a)))
            else matrix(0, nrow(a), ncol(a), dimnames = dimnames(a))
  # Blocks come as samples x features (read_feature_block()).
  for_each_feature_block(delayed_se_input(a, NULL, "the assay", NULL), "Reading", quiet, function(block) {
    if (by == "samples") points[, block$rows] <<- block$input$x else points[block$rows, ] <<- t(block$input$x)
  })
  points
}

#' Bioconductor objects: SingleCellExperiment, DelayedArray, results back in the object
#'
#' Every job takes a `SummarizedExperiment` (features are its rows, the class a `colData`
#' column, `assay =` picks the assay by name or index; by default `"logcounts"` when there is
#' one, else the first, named in the printout), and so every subclass of it, such as a
#' `SingleCellExperiment`. An integer assay, such as `counts`, is binned when `nbins` is given
#' (see Integer columns in [select_features()]). [knn_graph()] links the cells of a
#' `reducedDim()` with `use_dimred = "PCA"`. [add_results()] writes a result back into the
#' object; [FsgpuParam()] runs BiocNeighbors' and bluster's neighbour searches on fsgpu.
#'
#' @section DelayedArray assays: An assay that is a `DelayedArray` (an `HDF5Array`, a
#'   `TileDBArray`, a delayed operation on either) is read in blocks of whole features
#'   (`DelayedArray::rowAutoGrid()`, blocks of at most `DelayedArray::getAutoBlockSize()`
#'   bytes, 100 MB by default); the whole assay is never realised as a double matrix. Results
#'   equal those of the same assay in memory, exactly.
#'   \describe{
#'     \item{[select_features()], [mi_scores()], [cmi_scores()], [jmi_scores()], [mi_pairs()],
#'       [mi_matrix()], [mi_network()]}{each block is read straight into the engine's encoder
#'       (checks, binning and the integer rule in C++, on all threads); peak memory is one block
#'       (twice: as read and with its features made columns) plus the engine's codes (1 or 2
#'       bytes per value), and errors name features and samples across all blocks, as for the
#'       assay in memory. With `discretize =` (or `BPPARAM` or `features`, which take the
#'       checked input), each block is binned or discretized in R into integer codes, 4 bytes
#'       per value, which the engine then takes.}
#'     \item{[discretize()] and [predict()]}{each block is discretized on its own and the cut
#'       points joined; memory as above (the result holds the codes).}
#'     \item{[knn_graph()]}{the engine needs the values: the blocks are copied into one double
#'       matrix of the points (8 bytes per value) plus one block, without the copies of
#'       `as.matrix()` and `t()`.}
#'     \item{[find_interactions()]}{each block of numeric variables is cut at MDFS's random
#'       thresholds, which also gives the codes of the contrast variables drawn from it; memory
#'       holds these codes, 1 byte per value per discretization for the variables and the
#'       contrast variables (with the default `n_contrast`, 2 bytes per value per
#'       discretization), plus one block. With more discretizations than that makes worth it
#'       (codes over 8 bytes per value), the values of the objects with a class are read
#'       instead, block by block (8 bytes per value, half what the in-memory search holds).
#'       Integer codes are read into an integer matrix (4 bytes per value). Gains, tuples and
#'       p-values equal the in-memory search's.}
#'   }
#' @name fsgpu_bioconductor
NULL
