# Exact k-nearest-neighbour graphs of the rows of a matrix (the features of a
# SummarizedExperiment): neighbour lists, edge lists, kNN, mutual kNN and SNN graphs.

knn_metrics <- c("pearson", "spearman", "cosine", "euclidean", "manhattan")

#' Exact k-nearest-neighbour graphs
#'
#' Finds the exact `k` nearest neighbours of every row of `x` (every feature, gene, of a
#' `SummarizedExperiment` by default) and returns them as neighbour lists, an edge list or an
#' igraph graph: the kNN graph, the mutual kNN graph or a shared-nearest-neighbour graph.
#'
#' @section Exactness: Each distance is one double-precision computation, the same on the CPU
#'   and the GPU (euclidean and manhattan: one sum over the dimensions in order, as
#'   BiocNeighbors computes them, so that their distances are BiocNeighbors' to the last bit;
#'   the other metrics: four running sums; every operation rounded on its own),
#'   so the two backends return identical neighbours and bitwise-identical distances. Equal
#'   distances are ordered by row index, and a row is never its own neighbour (by index, so
#'   duplicated rows are each other's nearest neighbours at distance 0). The GPU first scores
#'   all pairs on tensor cores in half precision (pearson, spearman, cosine) or in single
#'   precision (euclidean, manhattan), and computes the exact distance for every candidate
#'   that the pass's proven error bound cannot rule out.
#'
#' @section Metrics:
#' \describe{
#'   \item{`pearson`}{\eqn{1 - r}, with \eqn{r} the Pearson correlation of the two rows
#'     (each row is centred and scaled to unit length; a constant row has correlation 0 with
#'     everything, a distance of 1, and is reported with a message).}
#'   \item{`spearman`}{\eqn{1 - \rho}, Pearson's on the rows' ranks (ties get their average
#'     rank).}
#'   \item{`cosine`}{\eqn{1 - \cos}: Pearson's without centring.}
#'   \item{`euclidean`, `manhattan`}{the L2 and L1 distances.}
#' }
#' The `similarity` of an edge is \eqn{1 - d} (the correlation or cosine) for the first three
#' and \eqn{1 / (1 + d)} for the other two; igraph edges carry it as `weight`.
#'
#' @param x A numeric matrix (rows are the points), a data frame of numeric columns, a
#'   `Matrix`, or a `SummarizedExperiment` (see `by`).
#' @param k The number of neighbours, at most the number of rows minus one (or the number of
#'   rows of `x` with `query`).
#' @param metric `"pearson"` (default), `"spearman"`, `"cosine"`, `"euclidean"` or
#'   `"manhattan"`; see Metrics.
#' @param output `"index"`: a list of two rows x `k` matrices as `BiocNeighbors::findKNN()`
#'   returns them, `index` (1-based row numbers) and `distance`, nearest first; `"edges"`: a
#'   data frame of edges; `"igraph"`: an undirected igraph graph (needs igraph).
#' @param mutual Keep only pairs that are each other's neighbours (the mutual kNN graph).
#' @param snn `FALSE`, or a shared-nearest-neighbour graph as `bluster::makeSNNGraph()` builds
#'   it: `TRUE` or `"rank"` (weights \eqn{k - r/2}, \eqn{r} the smallest sum of the ranks of a
#'   shared neighbour), `"number"` (shared neighbours) or `"jaccard"`.
#' @param query Other points (rows, with the columns of `x`): their neighbours among the rows
#'   of `x` are returned (`output = "index"` or `"edges"`), no row being excluded.
#' @param backend `"auto"`, `"cpu"` or `"gpu"`, as in [select_features()].
#' @param threads CPU threads; see [fsgpu_threads()].
#' @param devices GPU ids to split the query rows across.
#' @param BPPARAM `NULL` (one process), or a `BiocParallel::BiocParallelParam` (e.g.
#'   `SnowParam(4)`, or `BatchtoolsParam()` on a cluster) to spread the search over its workers
#'   in blocks of query points (three per worker; `options(fsgpu.tiles = n)` sets their number),
#'   each searched by the normal engine on a worker against all points: the neighbours and
#'   distances are identical to `BPPARAM = NULL`'s. As in [mi_pairs()], `threads` is per worker,
#'   `devices` may be a list of GPU id sets given to the blocks in turn, and the workers need
#'   fsgpu installed.
#' @param quiet `TRUE` shows no progress bar and no message about constant rows; see
#'   [fsgpu_progress].
#' @param ... Passed on by methods.
#' @return For `output = "index"`, a list of class `fsgpu_knn` with `index` and `distance`
#'   (rows named as the points) and attributes `metric`, `k`, `self` (`FALSE` with `query`),
#'   `backend`, `elapsed` (seconds in the engine's call), `timings` and `run` (where the job ran
#'   and why, as in [select_features()]); it has `print` and `plot` methods. `timings` holds
#'   seconds: `prepare` (the points made ready for the metric), `search`, `results` (the result
#'   matrices), on the GPU the search's phases (`gpu_upload`, `gpu_candidates`, `gpu_rerank`,
#'   `gpu_download`) and counts, and, without `BPPARAM`, `total` (the whole call) and `r_side`
#'   (what of it `prepare`, `search` and `results` leave: R's checks, the calls into the engine
#'   and back, garbage collection). For `"edges"`, a data frame `from`, `to`, `rank`, `distance`, `similarity`
#'   (kNN: one row per point and neighbour, in order; mutual: each pair once, `from` before `to`),
#'   or `from`, `to`, `weight` for an SNN graph. For `"igraph"`, a graph whose vertices are
#'   the points, with edge attributes `weight` (and `distance` unless SNN).
#' @references Dashti, Komarov, Kaya, Bilgin, Ergun and Serrano (2012), GPU-FS-kNN: a software
#'   tool for fast and scalable kNN computation using GPUs, PLoS ONE 7. Xu and Su (2015),
#'   Identification of cell types from single-cell transcriptomes using a novel clustering
#'   method, Bioinformatics 31 (SNN weights).
#' @examples
#' set.seed(1)
#' genes <- matrix(rnorm(60 * 20), 60, 20, dimnames = list(paste0("g", 1:60), NULL))
#' genes[2, ] <- genes[1, ] + rnorm(20, sd = 0.1)  # g2 follows g1
#' nn <- knn_graph(genes, k = 3, backend = "cpu")
#' nn$index[1:3, ]
#' head(knn_graph(genes, k = 3, output = "edges", backend = "cpu"))
#' head(knn_graph(genes, k = 5, snn = TRUE, output = "edges", backend = "cpu"))
#' # neighbours of new points among the rows
#' knn_graph(genes, k = 2, query = genes[1:2, ] + 0.01, backend = "cpu")$index
#' # the same neighbours from blocks of points searched by BiocParallel workers
#' if (requireNamespace("BiocParallel", quietly = TRUE))
#'   knn_graph(genes, k = 3, backend = "cpu", BPPARAM = BiocParallel::SerialParam())$index[1:3, ]
#' @export
knn_graph <- function(x, ...) UseMethod("knn_graph")

#' @rdname knn_graph
#' @export
knn_graph.default <- function(x, k = 10, metric = "pearson", output = c("index", "edges", "igraph"), mutual = FALSE,
                              snn = FALSE, query = NULL, backend = NULL, threads = NULL, devices = NULL,
                              BPPARAM = NULL, quiet = FALSE, ...) {
  check_dots_empty(...)
  quiet_if(quiet, run_knn(points_of(x, "x"), k, metric, output, mutual, snn, query, backend, threads, devices,
                          BPPARAM, quiet))
}

#' @rdname knn_graph
#' @param assay For a `SummarizedExperiment`: the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @param by For a `SummarizedExperiment`: `"features"` (default: the assay's rows, genes) or
#'   `"samples"` (its columns, cells) are the points.
#' @export
knn_graph.SummarizedExperiment <- function(x, k = 10, metric = "pearson", output = c("index", "edges", "igraph"),
                                           mutual = FALSE, snn = FALSE, query = NULL, assay = NULL,
                                           by = c("features", "samples"), backend = NULL, threads = NULL,
                                           devices = NULL, BPPARAM = NULL, quiet = FALSE, ...) {
  check_dots_empty(...)
  by <- match.arg(by)
  if (!requireNamespace("SummarizedExperiment", quietly = TRUE))
    stop("the SummarizedExperiment package is needed for SummarizedExperiment input", call. = FALSE)
  assay <- check_assay(x, assay)
  a <- assay_points(x, assay, by, quiet)  # a DelayedArray is read in blocks (delayed.R)
  if (methods::is(query, "SummarizedExperiment")) query <- assay_points(query, assay, by, quiet)
  res <- quiet_if(quiet, run_knn(points_of(a, assay_label(assay)),
                                 k, metric, output, mutual, snn, query, backend, threads, devices, BPPARAM, quiet,
                                 x_arg = assay_label(assay)))
  res <- with_notes(res, assay_label(assay))
  if (inherits(res, "fsgpu_knn") && is.null(query)) attr(res, "points") <- by  # for add_results()
  res
}

# Points as a double matrix (rows), with their names; a clear error for what is not numbers.
# NA, NaN and Inf are left to the engine, which checks every value as it prepares the points
# (in C++, threaded): a pass of R over big data cost half a second at 1.5 million points.
points_of <- function(x, arg, min_rows = 2) {
  check_numeric_columns(x, arg)
  if (is.data.frame(x)) x <- as.matrix(x)
  if (methods::is(x, "Matrix")) x <- as.matrix(x)
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x)))
    stop(arg, " must be a numeric matrix, a data frame of numeric columns or a Matrix", call. = FALSE)
  if (nrow(x) < min_rows || ncol(x) < 1)
    stop(sprintf("%s needs at least %s and one column", arg, if (min_rows > 1) "two rows" else "one row"), call. = FALSE)
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# Stops naming the rows of points x (arg) that hold NA, NaN or Inf; nothing when there are none.
stop_if_nonfinite <- function(x, arg) {
  if (is.null(x) || all_finite(x)) return(invisible())
  where <- which(!is.finite(x), arr.ind = TRUE)
  rows <- unique(where[, 1])
  shown <- utils::head(rows, 5)
  names <- if (is.null(rownames(x))) as.character(shown) else sprintf("'%s'", rownames(x)[shown])
  stop(sprintf("%s has missing or infinite values in row%s %s%s", arg, if (length(rows) > 1) "s" else "",
               paste(names, collapse = ", "), if (length(rows) > 5) sprintf(" and %d more", length(rows) - 5) else ""),
       call. = FALSE)
}

# The work units of a search (backend = "auto" takes the GPU past options(fsgpu.gpu_min_work)).
knn_work <- function(n_queries, n, p) as.numeric(n_queries) * n * p / 64

run_knn <- function(x, k, metric, output, mutual, snn, query, backend, threads, devices, BPPARAM = NULL,
                    quiet = FALSE, x_arg = "x") {
  started <- unclass(Sys.time())  # proc.time() counts milliseconds: too coarse for a small search
  bp <- bp_setup(BPPARAM, devices, threads)
  if (!is.character(metric) || length(metric) != 1 || !metric %in% knn_metrics)
    stop("metric must be one of ", quote_list(knn_metrics), call. = FALSE)
  output <- match.arg(output, c("index", "edges", "igraph"))
  if (!is.logical(mutual) || length(mutual) != 1 || is.na(mutual)) stop("mutual must be TRUE or FALSE", call. = FALSE)
  snn <- if (isFALSE(snn)) NULL else if (isTRUE(snn)) "rank" else snn
  if (!is.null(snn) && (!is.character(snn) || length(snn) != 1 || !snn %in% c("rank", "number", "jaccard")))
    stop("snn must be FALSE, TRUE, \"rank\", \"number\" or \"jaccard\"", call. = FALSE)
  if (!is.null(snn) && mutual) stop("choose snn or mutual, not both", call. = FALSE)
  if (!is.null(query)) {
    if (mutual || !is.null(snn) || output == "igraph")
      stop("query gives the neighbours of other points: use output = \"index\" or \"edges\", without mutual or snn",
           call. = FALSE)
    query <- points_of(query, "query", min_rows = 1)
    if (!is.null(colnames(x)) && !is.null(colnames(query)) && setequal(colnames(x), colnames(query)))
      query <- query[, colnames(x), drop = FALSE]
    if (ncol(query) != ncol(x))
      stop(sprintf("query has %d columns, x %d: they must be the same dimensions", ncol(query), ncol(x)), call. = FALSE)
  }
  n <- nrow(x)
  k <- check_count(k, "k", max = if (is.null(query)) n - 1 else n,
                   what = if (is.null(query)) "the number of rows minus one" else "the number of rows of x")
  n_queries <- if (is.null(query)) n else nrow(query)
  chosen <- choose_backend(backend, work = knn_work(n_queries, n, ncol(x)), isTRUE(bp$forked))
  backend <- chosen$backend
  threads <- fsgpu_threads(threads)
  devices <- if (backend == "gpu") resolve_devices(bp_all_devices(devices)) else integer()
  args <- list(x = x, query = query, k = k, metric = metric, backend = backend, threads = threads, devices = devices,
               memory_limit = as.numeric(getOption("fsgpu.gpu_memory_limit", 0)))
  # Progress from the engine; blocks on workers report none.
  progress <- if (is.null(bp)) job_progress(sprintf("Finding %d nearest neighbours of %s points", k,
                                                     format(n_queries, big.mark = ",")), quiet)
  names <- rownames(x)
  query_names <- if (is.null(query)) names else rownames(query)
  # On an error, bad values are the likely cause: their rows are named (found only then). The
  # glue names the rows of the matrices it makes: R's rownames<- would copy them.
  search <- function() {
    if (is.null(bp)) return(do.call(fsgpu_knn, c(args, list(progress = progress, row_names = query_names))))
    res <- bp_knn(bp, args)
    if (!is.null(query_names)) rownames(res$index) <- rownames(res$distance) <- query_names
    res
  }
  start <- unclass(Sys.time())
  res <- tryCatch(search(), error = function(e) {
    stop_if_nonfinite(x, x_arg)
    stop_if_nonfinite(query, "query")
    stop(e)
  })
  elapsed <- unclass(Sys.time()) - start
  progress_done(progress)
  if (res$constant_rows > 0 && metric != "euclidean" && metric != "manhattan")
    message(sprintf("%d constant row%s: %s correlation with any row is taken as 0 (distance 1)", res$constant_rows,
                    if (res$constant_rows > 1) "s" else "", if (res$constant_rows > 1) "their" else "its"))
  similarity <- function(d) if (metric %in% c("euclidean", "manhattan")) 1 / (1 + d) else 1 - d
  label <- function(i, nm) if (is.null(nm)) i else nm[i]
  if (output == "index" && !mutual && is.null(snn)) {
    return(structure(list(index = res$index, distance = res$distance), class = "fsgpu_knn", metric = metric, k = k,
                     backend = res$backend, elapsed = elapsed, timings = if (is.null(bp)) with_r_side(res$timings, started) else res$timings,
                     self = is.null(query),
                     run = backend_used(res$backend, bp_threads(bp, threads), devices, elapsed, chosen$why_cpu,
                                        bp_workers(bp))))
  }
  if (!is.null(snn)) {
    e <- fsgpu_snn_edges(unname(res$index), snn, threads)
    edges <- data.frame(from = label(e$from, names), to = label(e$to, names), weight = e$weight,
                        stringsAsFactors = FALSE)
  } else {
    from <- rep(seq_len(n_queries), times = k)
    to <- as.vector(res$index)
    rank <- rep(seq_len(k), each = n_queries)
    d <- as.vector(res$distance)
    keep <- order(from, rank)
    if (mutual) {
      # (i, j) is mutual when i lists j and j lists i; each such pair is kept once, from i < j.
      key <- from * (n + 1) + to  # exact in doubles for any matrix R can hold
      back <- to * (n + 1) + from
      keep <- keep[(back[keep] %in% key) & from[keep] < to[keep]]
    }
    edges <- data.frame(from = label(from[keep], query_names), to = label(to[keep], names), rank = rank[keep],
                        distance = d[keep], similarity = similarity(d[keep]), stringsAsFactors = FALSE)
  }
  rownames(edges) <- NULL
  if (output != "igraph") return(edges)
  if (!requireNamespace("igraph", quietly = TRUE))
    stop("output = \"igraph\" needs the igraph package; use output = \"edges\"", call. = FALSE)
  vertices <- data.frame(name = if (is.null(names)) seq_len(n) else names, stringsAsFactors = FALSE)
  if (!is.null(snn)) return(igraph::graph_from_data_frame(edges, directed = FALSE, vertices = vertices))
  g <- igraph::graph_from_data_frame(data.frame(from = edges$from, to = edges$to, weight = edges$similarity,
                                                distance = edges$distance), directed = FALSE, vertices = vertices)
  igraph::simplify(g, edge.attr.comb = "first")  # i->j and j->i are one edge
}

# A search's timings with `total`, the seconds since `started` (run_knn's start), and `r_side`,
# what of them the engine's own (prepare, search and results) leave: R's checks, its calls into
# the glue and out of it, and the garbage collections they set off.
with_r_side <- function(timings, started) {
  total <- unclass(Sys.time()) - started
  engine <- sum(timings[intersect(c("prepare", "search", "results"), names(timings))])
  c(timings, r_side = total - engine, total = total)
}

#' @exportS3Method print fsgpu_knn
print.fsgpu_knn <- function(x, n = 5, ...) {
  cat(sprintf("Exact %d-nearest neighbours of %s points (%s)\n", attr(x, "k"), format(nrow(x$index), big.mark = ","),
              attr(x, "metric")))
  cat(format(attr(x, "run")), "\n", sep = "")
  cat("$index\n")
  print(utils::head(x$index, n))
  cat("$distance\n")
  print(utils::head(x$distance, n), digits = 4)
  if (nrow(x$index) > n) cat(sprintf("... and %s more rows\n", format(nrow(x$index) - n, big.mark = ",")))
  invisible(x)
}
