# The index of FsgpuParam: BiocNeighbors' buildIndex() result for fsgpu, and the kNN and range
# searches of BiocNeighbors' generics over it (the engines of src/core/knn.cpp and src/cuda/).

#' The index FsgpuParam builds
#'
#' `BiocNeighbors::buildIndex(X, BNPARAM = FsgpuParam())` returns an `FsgpuIndex`, a
#' `BiocNeighborIndex` as BiocNeighbors' own indices are: `bndata()` gives the points as
#' columns (for `"Cosine"`, divided by their L2 norms), `bndistance()` the distance. It also
#' holds the points prepared for fsgpu's engine and, once a search has run on the GPU, their
#' copy on the GPUs, kept for the next searches (both behind an external pointer and freed with
#' the index; after `saveRDS()` or in another process they are prepared again from the data),
#' and the `FsgpuParam` whose backend, threads and devices the searches use. Give it as
#' `BNINDEX` (or `precomputed`) to `findKNN()`, `queryKNN()`, `findNeighbors()` and
#' `queryNeighbors()`; see [FsgpuParam()] for what they return. (A search given `X` and
#' `BNPARAM` builds an index of its own and keeps nothing on the GPU.)
#'
#' @slot param The `FsgpuParam` the index was built with.
#' @slot handle The prepared points and their GPU copy (an external pointer).
#' @seealso [FsgpuParam()]
#' @examples
#' if (requireNamespace("BiocNeighbors", quietly = TRUE)) {
#'   set.seed(1)
#'   cells <- matrix(rnorm(300 * 8), 300, 8)
#'   index <- BiocNeighbors::buildIndex(cells, BNPARAM = FsgpuParam(backend = "cpu"))
#'   index
#'   BiocNeighbors::findKNN(BNINDEX = index, k = 3)$index[1:2, ]
#'   BiocNeighbors::queryKNN(BNINDEX = index, query = cells[1:2, ] + 0.1, k = 3)$distance
#'   lengths(BiocNeighbors::findNeighbors(BNINDEX = index, threshold = 2)$index)[1:5]
#' }
#' @name FsgpuIndex-class
#' @exportClass FsgpuIndex
setClass("FsgpuIndex", contains = "BiocNeighborIndex", slots = c(param = "FsgpuParam", handle = "externalptr"))

#' @rdname FsgpuParam
#' @param X A numeric matrix whose rows are the points (columns with `transposed = TRUE`), or
#'   missing when `BNINDEX` or `precomputed` gives the index.
#' @param transposed `TRUE` when the points are the columns of `X` (of `query` for the
#'   searches), as in BiocNeighbors.
#' @param BNPARAM An `FsgpuParam`.
#' @param ... For `buildIndex()`, nothing. For the searches: `get.index`, `get.distance`,
#'   `last` (kNN), `subset`, `warn.ties` (kNN), `raw.index`, `precomputed`, `BPPARAM` and, for
#'   the queries, `transposed`, as in `BiocNeighbors::findKNN()` and
#'   `BiocNeighbors::findNeighbors()` (see Details).
#' @export
setMethod("buildIndex", "FsgpuParam", function(X, transposed = FALSE, ..., BNPARAM) {
  check_dots_empty(...)
  data <- bn_columns(X, transposed)
  if (BNPARAM@distance == "Cosine") data <- bn_unit_columns(data)
  if (!all_finite(data)) stop("X has missing or infinite values", call. = FALSE)
  methods::new("FsgpuIndex", data = data, NAMES = colnames(data), distance = BNPARAM@distance, param = BNPARAM,
               handle = bn_handle(data, BNPARAM))
})

#' @rdname FsgpuIndex-class
#' @param object An `FsgpuIndex`.
#' @export
setMethod("show", "FsgpuIndex", function(object) {
  methods::callNextMethod()
  cat(sprintf("backend: %s\n", if (length(object@param@backend)) object@param@backend else "default"))
})

# The prepared points of a d x n matrix (points in columns; no columns: one of zeros, which
# changes no distance), or NULL without points.
bn_handle <- function(data, param) {
  if (ncol(data) == 0) return(methods::new("externalptr"))
  points <- t(data)
  if (ncol(points) == 0) points <- matrix(0, nrow(points), 1)
  threads <- if (length(param@threads)) param@threads else fsgpu_threads(NULL)
  fsgpu_bn_index(points, fsgpu_param_distances[[param@distance]], threads)
}

# The index of a search: BNINDEX, else precomputed, else one built from X.
bn_index_of <- function(X, BNINDEX, BNPARAM, precomputed, raw.index) {
  if (!is.null(BNINDEX)) return(BNINDEX)
  if (!is.null(precomputed)) {
    if (!methods::is(precomputed, "FsgpuIndex")) stop("precomputed must be an FsgpuIndex (from buildIndex())", call. = FALSE)
    return(precomputed)
  }
  if (isTRUE(raw.index)) stop("'raw.index=TRUE' is not valid if 'precomputed=NULL'", call. = FALSE)
  buildIndex(X, BNPARAM = BNPARAM)
}

# Query points as the index holds its points (columns; Cosine: unit length), as rows for the engine.
bn_query_rows <- function(index, query, transposed) {
  q <- bn_columns(query, transposed)
  if (index@distance == "Cosine") q <- bn_unit_columns(q)
  if (nrow(q) != nrow(index@data))
    stop(sprintf("query dimensionality (%d) differs from the index's (%d)", nrow(q), nrow(index@data)), call. = FALSE)
  if (!all_finite(q)) stop("query has missing or infinite values", call. = FALSE)
  q <- t(q)
  if (ncol(q) == 0) q <- matrix(0, nrow(q), 1)
  q
}

# The backend, threads and devices of a search of `work` pair-dimensions.
bn_engine <- function(param, work) {
  chosen <- choose_backend(if (length(param@backend)) param@backend, work = work)
  list(backend = chosen$backend, threads = fsgpu_threads(if (length(param@threads)) param@threads),
       devices = if (chosen$backend == "gpu") resolve_devices(if (length(param@devices)) param@devices) else integer(),
       memory_limit = as.numeric(getOption("fsgpu.gpu_memory_limit", 0)))
}

# subset= of BiocNeighbors: indices, names or a logical vector of n points named `names`.
bn_subset <- function(subset, n, names) {
  all <- seq_len(n)
  names(all) <- names
  rows <- tryCatch(all[subset], error = function(e) NA_integer_)
  if (anyNA(rows)) stop("'subset' indices out of range of 'x'", call. = FALSE)
  unname(rows)
}

# The kNN search of findKNN (query NULL) and queryKNN, with BiocNeighbors' arguments (BPPARAM
# is accepted and ignored; raw.index is taken by the callers: the index keeps the points' order).
bn_knn <- function(index, query, k, get.index = TRUE, get.distance = TRUE, last = k, BPPARAM = NULL,
                   transposed = FALSE, subset = NULL, warn.ties = TRUE, keep = TRUE) {
  n <- ncol(index@data)
  self <- is.null(query)
  if (!self) query <- bn_query_rows(index, query, transposed)
  if (!is.numeric(k) || length(k) != 1 || is.na(k)) stop("'k' must be a positive number", call. = FALSE)
  available <- if (self) n - 1L else n
  if (k > available) {
    warning(sprintf("'k' capped at the number of observations%s", if (self) " minus 1" else ""), call. = FALSE)
    k <- available
  }
  if (k < 1) stop("'k' must be positive", call. = FALSE)
  k <- as.integer(k)
  last <- min(last, k)
  if (!isTRUE(get.index) && !isTRUE(get.distance)) return(list())
  points <- if (self) n else nrow(query)
  rows <- if (is.null(subset)) seq_len(points) else bn_subset(subset, points, if (self) index@NAMES else rownames(query))
  # With warn.ties, one neighbour more: a tie with it changes which neighbours are the k nearest.
  wanted <- min(k + isTRUE(warn.ties), available)
  res <- if (length(rows) == 0) {
    list(index = matrix(integer(), 0, wanted), distance = matrix(numeric(), 0, wanted))
  } else if (self && !is.null(subset)) {
    # The subset's points as queries: their k + 1 nearest, less the point itself (or, when k + 1
    # others tie with it at distance 0 before it, the last): BiocNeighbors' rule.
    q <- t(index@data[, rows, drop = FALSE])
    if (ncol(q) == 0) q <- matrix(0, nrow(q), 1)
    found <- bn_run(index, q, min(wanted + 1L, n), "knn", keep = keep)
    bn_drop_self(found, rows, wanted)
  } else {
    found <- bn_run(index, if (self) NULL else query[rows, , drop = FALSE], wanted, "knn", keep = keep)
    found
  }
  if (isTRUE(warn.ties) && ncol(res$distance) > 1 &&
      any(res$distance[, -1, drop = FALSE] == res$distance[, -ncol(res$distance), drop = FALSE]))
    warning("detected tied distances to neighbors, see ?'BiocNeighbors-ties'", call. = FALSE)
  columns <- seq.int(k - last + 1L, length.out = last)
  out <- list()
  if (isTRUE(get.index)) out$index <- unname(res$index[, columns, drop = FALSE])
  if (isTRUE(get.distance)) out$distance <- unname(res$distance[, columns, drop = FALSE])
  out
}

# Each row's neighbours (index/distance matrices of `wanted + 1` columns) less the point rows[i]
# itself, or less the last when it is not among them.
bn_drop_self <- function(found, rows, wanted) {
  hit <- found$index == rows
  keep <- !hit
  keep[rowSums(hit) == 0, ncol(keep)] <- FALSE
  pick <- function(m) matrix(t(m)[t(keep)], nrow = nrow(m), ncol = wanted, byrow = TRUE)
  list(index = pick(found$index), distance = pick(found$distance))
}

# One search by the engine (kind "knn" with k, or "range" with thresholds and what to return);
# keep: keep the points on the GPUs for the next search (an index the user built).
bn_run <- function(index, query, k = NULL, kind, thresholds = NULL, get.index = TRUE, get.distance = TRUE,
                   keep = TRUE) {
  param <- index@param
  n_queries <- if (is.null(query)) ncol(index@data) else nrow(query)
  e <- bn_engine(param, as.numeric(n_queries) * ncol(index@data) * max(nrow(index@data), 1) / 64)
  progress <- job_progress(if (kind == "knn") sprintf("Finding %d nearest neighbours of %s points", k,
                                                      format(n_queries, big.mark = ","))
                           else sprintf("Finding the neighbours within a distance of %s points",
                                        format(n_queries, big.mark = ",")), param@quiet)
  on.exit(progress_done(progress))
  # An index restored by readRDS() (or sent to another process) prepares its points again for
  # each search, and keeps nothing on the GPU: it has no pointer to keep it in.
  live <- fsgpu_bn_index_live(index@handle)
  handle <- if (live) index@handle else bn_handle(index@data, param)
  keep <- keep && live
  if (kind == "knn") {
    fsgpu_bn_knn(handle, query, k, e$backend, e$threads, e$devices, e$memory_limit, keep, progress)
  } else {
    fsgpu_bn_range(handle, query, thresholds, isTRUE(get.index), isTRUE(get.distance), e$backend, e$threads,
                   e$devices, e$memory_limit, keep, progress)
  }
}

# The range search of findNeighbors (query NULL) and queryNeighbors, with BiocNeighbors' arguments.
bn_range <- function(index, query, threshold, get.index = TRUE, get.distance = TRUE, BPPARAM = NULL,
                     transposed = FALSE, subset = NULL, keep = TRUE) {
  n <- ncol(index@data)
  self <- is.null(query)
  if (!self) query <- bn_query_rows(index, query, transposed)
  points <- if (self) n else nrow(query)
  rows <- if (is.null(subset)) seq_len(points) else bn_subset(subset, points, if (self) index@NAMES else rownames(query))
  if (length(threshold) == 1) threshold <- rep(threshold, length(rows))
  if (length(threshold) != length(rows))
    stop("length of 'threshold' should be equal to number of points specified in 'subset'", call. = FALSE)
  if (!is.numeric(threshold) || anyNA(threshold) || any(threshold <= 0) || any(!is.finite(threshold)))
    stop("threshold should be positive", call. = FALSE)
  empty <- function(m, what) rep(list(what), m)
  if (length(rows) == 0 || n == 0) {  # no queries, or nothing to find
    if (!isTRUE(get.index) && !isTRUE(get.distance)) return(integer(length(rows)))
    out <- list()
    if (isTRUE(get.index)) out$index <- empty(length(rows), integer())
    if (isTRUE(get.distance)) out$distance <- empty(length(rows), numeric())
    return(out)
  }
  q <- if (self && is.null(subset)) NULL else if (self) t(index@data[, rows, drop = FALSE]) else query[rows, , drop = FALSE]
  if (!is.null(q) && ncol(q) == 0) q <- matrix(0, nrow(q), 1)
  bn_run(index, q, kind = "range", thresholds = as.double(threshold), get.index = get.index,
         get.distance = get.distance, keep = keep)
}

#' @rdname FsgpuParam
#' @param k The number of neighbours.
#' @param BNINDEX An [FsgpuIndex][FsgpuIndex-class] from `buildIndex()`; `X` is then not needed.
#' @export
setMethod("findKNN", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"), function(X, k, ..., BNINDEX, BNPARAM) {
  bn_find_knn(X, k, NULL, BNPARAM, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("findKNN", c(BNINDEX = "FsgpuIndex", BNPARAM = "missing"), function(X, k, ..., BNINDEX, BNPARAM) {
  bn_find_knn(NULL, k, BNINDEX, NULL, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("findKNN", c(BNINDEX = "FsgpuIndex", BNPARAM = "FsgpuParam"), function(X, k, ..., BNINDEX, BNPARAM) {
  bn_find_knn(NULL, k, BNINDEX, NULL, ...)
})

bn_find_knn <- function(X, k, BNINDEX, BNPARAM, ..., precomputed = NULL, raw.index = FALSE) {
  bn_knn(bn_index_of(X, BNINDEX, BNPARAM, precomputed, raw.index), NULL, k, ...,
         keep = !is.null(BNINDEX) || !is.null(precomputed))
}

#' @rdname FsgpuParam
#' @param query A numeric matrix of query points (rows; columns with `transposed = TRUE`),
#'   whose neighbours among the points of `X` (or of the index) are found.
#' @export
setMethod("queryKNN", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"), function(X, query, k, ..., BNINDEX, BNPARAM) {
  bn_query_knn(X, query, k, NULL, BNPARAM, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("queryKNN", c(BNINDEX = "FsgpuIndex", BNPARAM = "missing"), function(X, query, k, ..., BNINDEX, BNPARAM) {
  bn_query_knn(NULL, query, k, BNINDEX, NULL, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("queryKNN", c(BNINDEX = "FsgpuIndex", BNPARAM = "FsgpuParam"), function(X, query, k, ..., BNINDEX, BNPARAM) {
  bn_query_knn(NULL, query, k, BNINDEX, NULL, ...)
})

bn_query_knn <- function(X, query, k, BNINDEX, BNPARAM, ..., precomputed = NULL, raw.index = FALSE) {
  bn_knn(bn_index_of(X, BNINDEX, BNPARAM, precomputed, raw.index), query, k, ...,
         keep = !is.null(BNINDEX) || !is.null(precomputed))
}

#' @rdname FsgpuParam
#' @param threshold The largest distance of a neighbour: one number, or one per point (per
#'   `subset` point).
#' @export
setMethod("findNeighbors", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"),
          function(X, threshold, ..., BNINDEX, BNPARAM) {
  bn_find_range(X, threshold, NULL, BNPARAM, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("findNeighbors", c(BNINDEX = "FsgpuIndex", BNPARAM = "missing"),
          function(X, threshold, ..., BNINDEX, BNPARAM) {
  bn_find_range(NULL, threshold, BNINDEX, NULL, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("findNeighbors", c(BNINDEX = "FsgpuIndex", BNPARAM = "FsgpuParam"),
          function(X, threshold, ..., BNINDEX, BNPARAM) {
  bn_find_range(NULL, threshold, BNINDEX, NULL, ...)
})

bn_find_range <- function(X, threshold, BNINDEX, BNPARAM, ..., precomputed = NULL, raw.index = FALSE) {
  bn_range(bn_index_of(X, BNINDEX, BNPARAM, precomputed, raw.index), NULL, threshold, ...,
           keep = !is.null(BNINDEX) || !is.null(precomputed))
}

#' @rdname FsgpuParam
#' @export
setMethod("queryNeighbors", c(BNINDEX = "missing", BNPARAM = "FsgpuParam"),
          function(X, query, threshold, ..., BNINDEX, BNPARAM) {
  bn_query_range(X, query, threshold, NULL, BNPARAM, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("queryNeighbors", c(BNINDEX = "FsgpuIndex", BNPARAM = "missing"),
          function(X, query, threshold, ..., BNINDEX, BNPARAM) {
  bn_query_range(NULL, query, threshold, BNINDEX, NULL, ...)
})

#' @rdname FsgpuParam
#' @export
setMethod("queryNeighbors", c(BNINDEX = "FsgpuIndex", BNPARAM = "FsgpuParam"),
          function(X, query, threshold, ..., BNINDEX, BNPARAM) {
  bn_query_range(NULL, query, threshold, BNINDEX, NULL, ...)
})

bn_query_range <- function(X, query, threshold, BNINDEX, BNPARAM, ..., precomputed = NULL, raw.index = FALSE) {
  bn_range(bn_index_of(X, BNINDEX, BNPARAM, precomputed, raw.index), query, threshold, ...,
           keep = !is.null(BNINDEX) || !is.null(precomputed))
}
