# Searches spread over BiocParallel workers (the BPPARAM argument of mi_pairs(), mi_matrix(),
# find_interactions() and knn_graph()).
#
# Each search splits into tiles that the engines already know how to run alone: a range of
# row positions of a pair search (PairTask::tile), a range of first variables of the tuple
# search (InteractionTask), a block of query points of a kNN search. Every tile is one call of
# the job's own glue function on a worker, which runs the normal engine (CPU threads or its
# GPUs) on it; the tiles' results merge into exactly what one call over everything returns:
# the same order and tie rules as the engines, on exact keys, so the pairs, tuples, scores and
# neighbours are identical, and p-values are computed once, after the merge.

# The parallel set-up of a job, or NULL without BPPARAM: the checked BiocParallelParam, the
# GPU ids of every tile's calls (`devices` as a list: one set per tile in turn), and the CPU
# threads of each worker (by default the cores here shared among the workers).
bp_setup <- function(BPPARAM, devices, threads) {
  if (is.null(BPPARAM)) {
    if (is.list(devices))
      stop("devices as a list (a set of GPUs per worker) is for BPPARAM; without it give GPU ids", call. = FALSE)
    return(NULL)
  }
  if (!requireNamespace("BiocParallel", quietly = TRUE))
    stop("BPPARAM needs the BiocParallel package (Debian: r-bioc-biocparallel)", call. = FALSE)
  if (!methods::is(BPPARAM, "BiocParallelParam"))
    stop("BPPARAM must be a BiocParallelParam, such as BiocParallel::SnowParam(2), or NULL", call. = FALSE)
  workers <- BiocParallel::bpnworkers(BPPARAM)
  tiles <- getOption("fsgpu.tiles", 3L * workers)
  forked <- bp_forks(BPPARAM)
  list(param = BPPARAM, workers = workers, n_tiles = check_count(tiles, "options(fsgpu.tiles)"), forked = forked,
       threads = if (forked) 1L else if (is.null(threads)) max(1L, fsgpu_threads() %/% workers) else
         fsgpu_threads(threads),
       device_sets = if (is.list(devices)) devices)
}

# Whether BPPARAM's workers are forks of this session: they run one thread each (see
# fsgpu_threads()) and cannot use the GPU this session opened (choose_backend()).
bp_forks <- function(BPPARAM) methods::is(BPPARAM, "MulticoreParam") ||
  (methods::is(BPPARAM, "BatchtoolsParam") && identical(BPPARAM$cluster, "multicore"))

# What the run record of a job (backend_used()) says of its CPU threads and workers: with
# BPPARAM, the threads of each worker's tiles and the number of workers.
bp_threads <- function(bp, threads) if (is.null(bp)) threads else bp$threads
bp_workers <- function(bp) if (is.null(bp)) 1L else bp$workers

# The GPU ids checked and used on this machine: with a list, every id in it.
bp_all_devices <- function(devices) if (is.list(devices)) sort(unique(unlist(devices))) else devices

# 0-based [begin, end) ranges of positions 0..length(work) - 1 holding about equal shares of
# the work (at most n_tiles, none empty).
split_by_work <- function(work, n_tiles) {
  n <- length(work)
  if (n == 0) return(list())
  total <- cumsum(as.numeric(work))
  ends <- if (total[n] > 0) findInterval(total[n] * seq_len(n_tiles - 1) / n_tiles, total) else
    round(n * seq_len(n_tiles - 1) / n_tiles)
  ends <- as.numeric(unique(c(ends[ends > 0 & ends < n], n)))
  begins <- c(0, utils::head(ends, -1))
  Map(function(b, e) c(begin = b, end = e), begins, ends)
}

# Runs glue(args with each tile's own arguments) on the workers; the results in tile order, or
# an error naming the first tile that failed and why. `args` has no `progress`: a tile's engine
# reports none (a worker's progress would go nowhere, or interleave with the others').
bp_run_tiles <- function(bp, glue, args, tiles, what) {
  resolved <- if (is.null(bp$device_sets) || !length(args$devices)) list(args$devices) else
    lapply(bp$device_sets, resolve_devices)  # GPU sets only for a GPU run
  tiles <- lapply(seq_along(tiles), function(t) {
    c(tiles[[t]], list(threads = bp$threads,
                       devices = if (length(args$devices)) resolved[[(t - 1) %% length(resolved) + 1]] else integer()))
  })
  lib <- normalizePath(dirname(system.file(package = "fsgpu")), mustWork = FALSE)
  res <- BiocParallel::bptry(BiocParallel::bplapply(tiles, tile_worker, glue = glue, args = args, lib = lib,
                                                    BPPARAM = bp$param))
  ok <- BiocParallel::bpok(res)
  if (!all(ok)) {
    failed <- which(!ok)
    # The tiles BiocParallel stopped because another failed say only that: report a real error.
    real <- failed[!vapply(res[failed], inherits, logical(1), "unevaluated_error")]
    first <- if (length(real)) real[1] else failed[1]
    stop(sprintf("%s: tile %d of %d (%s) failed on its worker: %s", what, first, length(tiles),
                 tile_label(tiles[[first]]), conditionMessage(res[[first]])), call. = FALSE)
  }
  res
}

# What a tile covers, for error messages.
tile_label <- function(tile) {
  if (!is.null(tile$query_rows)) return(sprintf("query rows %d to %d", min(tile$query_rows), max(tile$query_rows)))
  range <- unlist(tile[c("row_begin", "row_end", "first_begin", "first_end")])
  sprintf("%s %g to %g", if (is.null(tile$row_begin)) "first variables" else "rows", range[1] + 1, range[2])
}

# What a worker runs: one glue call. Its environment is base R's, so that unserializing it on a
# fresh worker (SnowParam, BatchtoolsParam) does not load fsgpu before the library it came from
# is on the worker's path; with fsgpu loaded already (SerialParam, MulticoreParam) the path
# stays as it is.
tile_worker <- function(tile, glue, args, lib) {
  if (!isNamespaceLoaded("fsgpu") && dir.exists(lib)) .libPaths(c(lib, .libPaths()))
  if (!requireNamespace("fsgpu", quietly = TRUE))
    stop("fsgpu is not installed where this worker looks (", paste(.libPaths(), collapse = ", "),
         "); install it there or set R_LIBS for the workers", call. = FALSE)
  tile$query_rows <- NULL
  args[names(tile)] <- tile
  do.call(get(glue, envir = asNamespace("fsgpu")), args)
}
environment(tile_worker) <- baseenv()

# Timings summed over the tiles (seconds of the workers, not of the wall).
sum_timings <- function(results) {
  Reduce(function(a, b) {
    names <- union(names(a), names(b))
    stats::setNames(ifelse(is.na(a[names]), 0, a[names]) + ifelse(is.na(b[names]), 0, b[names]), names)
  }, lapply(results, `[[`, "timings"))
}

# The backends the tiles ran on, "gpu", "cpu" or, when some tiles fell back to the CPU,
# "gpu+cpu" (in that order, whichever tiles fell back), and why they fell back: the tiles'
# distinct reasons joined.
backends_of <- function(backends) paste(intersect(c("gpu", "cpu"), backends), collapse = "+")
why_cpu_of <- function(reasons) paste(unique(reasons[nzchar(reasons)]), collapse = "; ")

# fsgpu_mi_pairs() over tiles of row positions. The workers get the codes rather than the raw
# values when those are smaller (binned double columns). Each tile keeps its own best `top`
# (or everything above the threshold) with their exact keys; the merge orders by the key, then
# i, then j, and returns what one search returns, without keys.
bp_mi_pairs <- function(bp, args, n_rows, n_features) {
  args$x <- bp_pair_data(args$x, length(args$y), args$nbins, args$threads)
  args$with_keys <- TRUE
  positions <- seq_len(n_rows) - 1
  tiles <- lapply(split_by_work(n_features - 1 - positions, bp$n_tiles),
                  function(r) list(row_begin = r[["begin"]], row_end = r[["end"]]))
  results <- bp_run_tiles(bp, "fsgpu_mi_pairs", args, tiles, "mi_pairs")
  joined <- function(column) unlist(lapply(results, `[[`, column))
  columns <- c("i", "j", "mi_joint", "mi1", "mi2", "interaction", "cells")
  merged <- lapply(stats::setNames(columns, columns), joined)
  keep <- order(-joined("key_high"), -joined("key_low"), merged$i, merged$j)
  if (args$top >= 0) keep <- utils::head(keep, args$top)
  out <- lapply(merged, `[`, keep)
  out$n_pairs <- sum(vapply(results, `[[`, numeric(1), "n_pairs"))
  out$backend <- backends_of(vapply(results, `[[`, character(1), "backend"))
  out$why_cpu <- why_cpu_of(vapply(results, `[[`, character(1), "why_cpu"))
  out$timings <- sum_timings(results)
  out
}

# fsgpu_mi_matrix() over tiles of rows: each tile's rows of the upper triangle, mirrored.
bp_mi_matrix <- function(bp, args, n_features) {
  args$x <- bp_pair_data(args$x, args$n_samples, args$nbins, args$threads)
  positions <- seq_len(n_features) - 1
  ranges <- split_by_work(n_features - positions, bp$n_tiles)
  tiles <- lapply(ranges, function(r) list(row_begin = r[["begin"]], row_end = r[["end"]]))
  results <- bp_run_tiles(bp, "fsgpu_mi_matrix", args, tiles, "mi_matrix")
  m <- matrix(0, n_features, n_features)
  for (t in seq_along(ranges)) m[(ranges[[t]][["begin"]] + 1):ranges[[t]][["end"]], ] <- results[[t]]
  lower <- lower.tri(m)
  m[lower] <- t(m)[lower]
  attr(m, "backend") <- backends_of(vapply(results, attr, character(1), "backend"))
  attr(m, "why_cpu") <- why_cpu_of(vapply(results, attr, character(1), "why_cpu"))
  m
}

# The data a pair search's workers get: the codes (an integer matrix) when smaller than x.
bp_pair_data <- function(x, n_samples, nbins, threads) {
  if (is.integer(x) || utils::object.size(x) <= 4 * as.numeric(n_samples) * NCOL(x)) return(x)
  fsgpu_pair_codes(x, n_samples, nbins, threads)
}

# fsgpu_find_interactions() over tiles of first variables (real ones; with one dimension, the
# contrast variables too). The workers get x as it is: the values, from which each worker draws
# every variable's thresholds again (a contrast variable draws its own, so it is not its source
# variable's codes permuted), or the codes of every variable (kind "interaction_codes", a
# DelayedArray assay coded by blocks). Per variable the merge keeps the largest gain, then the first
# discretization, then the lexicographically first tuple: the order of the single search.
bp_find_interactions <- function(bp, args, n_vars) {
  k <- args$dimensions
  n_real <- args$n_real_d
  n_contrast <- length(args$contrast_source)
  work <- if (k == 1) rep(1, n_vars) else {
    rest <- n_real - seq_len(n_real)  # real variables after each first one
    choose(rest, k - 1) + n_contrast * choose(rest, k - 2)
  }
  tiles <- lapply(split_by_work(work, bp$n_tiles),
                  function(r) list(first_begin = r[["begin"]], first_end = r[["end"]]))
  results <- bp_run_tiles(bp, "fsgpu_find_interactions", args, tiles, "find_interactions")
  out <- results[[1]]
  for (r in results[-1]) {
    tie <- r$gain == out$gain
    better <- r$gain > out$gain | (tie & r$discretization < out$discretization)
    if (args$with_tuples) {
      same_d <- tie & r$discretization == out$discretization
      better <- better | (same_d & tuple_before(r$tuples, out$tuples))
      out$tuples[, better] <- r$tuples[, better]
    }
    out$gain[better] <- r$gain[better]
    out$discretization[better] <- r$discretization[better]
  }
  if (isTRUE(args$collect)) {
    # Tiles hold ascending ranges of first variables, so their collected gains joined in tile
    # order are in the single search's order (tuple, then variable).
    hits <- lapply(results, `[[`, "hits")
    out$hits <- list(variable = unlist(lapply(hits, `[[`, "variable")),
                     tuple = do.call(rbind, lapply(hits, `[[`, "tuple")),
                     gain = unlist(lapply(hits, `[[`, "gain")),
                     discretization = unlist(lapply(hits, `[[`, "discretization")))
  }
  out$backend <- backends_of(vapply(results, `[[`, character(1), "backend"))
  out$why_cpu <- why_cpu_of(vapply(results, `[[`, character(1), "why_cpu"))
  out$timings <- sum_timings(results)
  out
}

# Per column of two k x n tuple matrices: whether a's tuple is lexicographically before b's.
tuple_before <- function(a, b) {
  before <- rep(FALSE, ncol(a))
  undecided <- rep(TRUE, ncol(a))
  for (d in seq_len(nrow(a))) {
    before <- before | (undecided & a[d, ] < b[d, ])
    undecided <- undecided & a[d, ] == b[d, ]
  }
  before
}

# fsgpu_knn() over blocks of query points. Without a query, a block of x's own rows is asked
# for k + 1 neighbours among all rows, and the row itself is dropped (or, when k + 1 others tie
# with it and it is not among them, the last): the k nearest other rows, as the single search.
bp_knn <- function(bp, args) {
  self <- is.null(args$query)
  queries <- if (self) args$x else args$query
  blocks <- split_by_work(rep(1, nrow(queries)), bp$n_tiles)
  tiles <- lapply(blocks, function(r) {
    rows <- (r[["begin"]] + 1):r[["end"]]
    list(query = queries[rows, , drop = FALSE], query_rows = rows)
  })
  k <- args$k
  if (self) args$k <- k + 1L
  args$query <- NULL
  results <- bp_run_tiles(bp, "fsgpu_knn", args, tiles, "knn_graph")
  parts <- Map(function(res, tile) {
    if (!self) return(res[c("index", "distance")])
    keep <- res$index != tile$query_rows  # the row itself (recycled down the columns)
    no_self <- rowSums(!keep) == 0
    keep[no_self, k + 1] <- FALSE
    list(index = matrix(t(res$index)[t(keep)], ncol = k, byrow = TRUE),
         distance = matrix(t(res$distance)[t(keep)], ncol = k, byrow = TRUE))
  }, results, tiles)
  reference_constant <- results[[1]]$reference_constant_rows
  list(index = do.call(rbind, lapply(parts, `[[`, "index")),
       distance = do.call(rbind, lapply(parts, `[[`, "distance")),
       backend = backends_of(vapply(results, `[[`, character(1), "backend")),
       constant_rows = reference_constant + if (self) 0 else
         sum(vapply(results, function(r) r$constant_rows - r$reference_constant_rows, numeric(1))),
       timings = sum_timings(results))
}
