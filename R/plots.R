# Plots of the jobs' results, in base graphics (igraph draws the kNN graph).

#' Plot a feature selection
#'
#' Draws the score of every selected feature by its rank (`type = "score"`), or the running
#' total of the scores (`type = "cumulative"`: for MIM the relevance gathered so far, for the
#' criteria that stop at zero a curve that flattens when new features add little). Fixed
#' features are drawn as open circles; the features are named on the axis when there are few.
#' JMI's and DISR's scores are sums over the features selected before, so they grow with the
#' rank by construction.
#'
#' @param x A result of [select_features()].
#' @param type `"score"` or `"cumulative"`.
#' @param labels Name the features on the x axis (default: up to 30 features).
#' @param main,xlab,ylab Titles; by default from the criterion and the units.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 50), 100, 50, dimnames = list(NULL, paste0("g", 1:50)))
#' x[, 7] <- x[, 7] + 2 * (y == "b")
#' sel <- select_features(x, y, k = 8, method = "mrmr", backend = "cpu")
#' plot(sel)
#' plot(sel, type = "cumulative")
#' @export
plot.fsgpu_selection <- function(x, type = c("score", "cumulative"), labels = nrow(x$selection) <= 30, main = NULL,
                                 xlab = if (labels) "" else "rank", ylab = NULL, ...) {
  type <- match.arg(type)
  s <- x$selection
  unit <- if (x$method %in% c(ratio_methods, impurity_methods)) "" else sprintf(" (%s)", x$units)
  value <- if (type == "score") s$score else cumsum(s$score)
  if (is.null(main)) main <- sprintf("%s selection", toupper(x$method))
  if (is.null(ylab)) ylab <- paste0(if (type == "score") "score" else "cumulative score", unit)
  old <- graphics::par(mar = c(if (labels) max(5, min(10, max(nchar(s$feature)) * 0.6)) else 5, 4, 4, 2) + 0.1)
  on.exit(graphics::par(old))
  graphics::plot(s$rank, value, type = "b", pch = ifelse(s$fixed, 1, 19), xaxt = if (labels) "n" else "s",
                 xlab = xlab, ylab = ylab, main = main, ...)
  if (labels) graphics::axis(1, at = s$rank, labels = s$feature, las = 2, cex.axis = 0.8)
  if (any(s$fixed)) graphics::legend("topright", legend = c("fixed", "selected"), pch = c(1, 19), bty = "n")
  invisible(x)
}

#' Heatmap of the best feature pairs
#'
#' Draws the features of the best `n` pairs of [mi_pairs()] as a features x features matrix whose
#' cells are the pairs' joint mutual information \eqn{I(Y; X_i,X_j)} or interaction information
#' (pairs outside the best `n` are blank), features in the order of their best pair, with a colour
#' key. Interaction information uses a diverging scale centred on 0 (red: synergy, blue:
#' redundancy).
#'
#' @param x A result of [mi_pairs()].
#' @param n The number of best pairs to draw.
#' @param value `"joint"` or `"interaction"`; by default the measure the pairs were ranked by.
#' @param main Title.
#' @param ... Passed to [graphics::image()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:1, 300 * 20, replace = TRUE), 300, 20,
#'             dimnames = list(NULL, paste0("snp", 1:20)))
#' y <- factor(xor(x[, 3], x[, 7]))
#' pairs <- mi_pairs(x, y, top = 30, backend = "cpu")
#' plot(pairs)
#' plot(pairs, value = "interaction")
#' @export
plot.fsgpu_pairs <- function(x, n = 30, value = attr(x, "by"), main = NULL, ...) {
  value <- match.arg(value, c("joint", "interaction"))
  n <- check_count(n, "n")
  if (nrow(x) == 0) stop("x has no pairs to draw", call. = FALSE)
  best <- utils::head(as.data.frame(x), n)
  # Features by index (names may repeat), in the order of their best pair.
  index <- unique(as.vector(rbind(best$index1, best$index2)))
  names <- ifelse(index %in% best$index1, best$feature1[match(index, best$index1)],
                  best$feature2[match(index, best$index2)])
  v <- best[[if (value == "joint") "mi_joint" else "interaction"]]
  m <- matrix(NA_real_, length(index), length(index))
  m[cbind(match(best$index1, index), match(best$index2, index))] <- v
  m[cbind(match(best$index2, index), match(best$index1, index))] <- v
  if (value == "joint") {
    limits <- c(0, max(v, 0))
    colours <- grDevices::hcl.colors(64, "YlOrRd", rev = TRUE)
  } else {
    limits <- c(-1, 1) * max(abs(v), .Machine$double.eps)
    colours <- grDevices::hcl.colors(64, "Blue-Red 3")
  }
  if (is.null(main))
    main <- sprintf("%s of the best %d pairs", if (value == "joint") "Joint MI I(Y; Xi,Xj)" else "Interaction information",
                    nrow(best))
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  graphics::layout(matrix(1:2, 1), widths = c(1, graphics::lcm(3)))  # the key keeps its width on small devices
  margin <- max(4, min(10, max(nchar(names)) * 0.6))
  graphics::par(mar = c(margin, margin, 4, 1) + 0.1)
  k <- length(index)
  graphics::image(seq_len(k), seq_len(k), m[, k:1, drop = FALSE], zlim = limits, col = colours, axes = FALSE,
                  xlab = "", ylab = "", main = main, ...)
  graphics::axis(1, at = seq_len(k), labels = names, las = 2, cex.axis = 0.8, tick = FALSE)
  graphics::axis(2, at = seq_len(k), labels = rev(names), las = 1, cex.axis = 0.8, tick = FALSE)
  graphics::box()
  colour_key(limits, colours, attr(x, "units"))
  invisible(x)
}

# A vertical colour key for a heatmap, in the current layout's next panel.
colour_key <- function(limits, colours, unit) {
  graphics::par(mar = c(5, 0.5, 4, 3) + 0.1)
  steps <- seq(limits[1], limits[2], length.out = length(colours) + 1)
  graphics::image(1, (steps[-1] + steps[-length(steps)]) / 2, matrix(steps[-1], 1), col = colours, axes = FALSE,
                  xlab = "", ylab = "")
  graphics::axis(4, las = 1, cex.axis = 0.8)
  graphics::mtext(unit, side = 3, line = 0.5, cex = 0.8)
  graphics::box()
}

#' Draw a kNN graph with its communities
#'
#' Draws the kNN graph of a [knn_graph()] result (an edge from every point to each of its `k`
#' neighbours, undirected) with igraph, the points coloured by community: Louvain
#' ([igraph::cluster_louvain()]) or Walktrap ([igraph::cluster_walktrap()]) on the unweighted
#' graph. For readability, graphs of more than `max_points` points are refused (draw a subset's
#' graph instead); the communities come back for use elsewhere.
#'
#' @param x A result of [knn_graph()] with `output = "index"`, of the points with themselves
#'   (not with `query`).
#' @param communities `"louvain"`, `"walktrap"` or `"none"`.
#' @param max_points The most points drawn.
#' @param labels Name the points (default: up to 100 points).
#' @param layout An igraph layout function.
#' @param main Title.
#' @param ... Passed to igraph's `plot()`.
#' @return The community of every point (an integer vector named as the points, `NULL` with
#'   `communities = "none"`), invisibly.
#' @examples
#' set.seed(1)
#' centres <- matrix(rnorm(3 * 10, sd = 3), 3, 10)
#' points <- centres[rep(1:3, each = 40), ] + rnorm(120 * 10)
#' rownames(points) <- paste0("p", 1:120)
#' nn <- knn_graph(points, k = 5, metric = "euclidean", backend = "cpu")
#' if (requireNamespace("igraph", quietly = TRUE)) {
#'   groups <- plot(nn)
#'   table(groups, rep(1:3, each = 40))
#' }
#' @export
plot.fsgpu_knn <- function(x, communities = c("louvain", "walktrap", "none"), max_points = 2000,
                           labels = nrow(x$index) <= 100, layout = NULL, main = NULL, ...) {
  communities <- match.arg(communities)
  if (!requireNamespace("igraph", quietly = TRUE)) stop("plotting a kNN graph needs the igraph package", call. = FALSE)
  if (isFALSE(attr(x, "self")))
    stop("x holds the neighbours of query points among other points: only a graph of the points with themselves is drawn",
         call. = FALSE)
  n <- nrow(x$index)
  if (n > max_points)
    stop(sprintf("x has %s points; plot() draws up to max_points = %s (raise it, or draw the graph of a subset)",
                 format(n, big.mark = ","), format(max_points, big.mark = ",")), call. = FALSE)
  k <- ncol(x$index)
  g <- igraph::simplify(igraph::graph_from_edgelist(cbind(rep(seq_len(n), times = k), as.vector(x$index)),
                                                    directed = FALSE))
  names <- rownames(x$index)
  if (is.null(names)) names <- as.character(seq_len(n))
  membership <- switch(communities,
                       louvain = igraph::membership(igraph::cluster_louvain(g)),
                       walktrap = igraph::membership(igraph::cluster_walktrap(g)),
                       none = NULL)
  colours <- if (is.null(membership)) "grey60" else {
    groups <- max(membership)
    grDevices::hcl.colors(max(groups, 2), "Dark 3")[membership]
  }
  if (is.null(layout)) layout <- igraph::layout_with_fr
  if (is.null(main))
    main <- sprintf("%d-nearest-neighbour graph (%s)%s", k, attr(x, "metric"),
                    if (is.null(membership)) "" else sprintf(", %d %s communities", max(membership), communities))
  igraph::plot.igraph(g, layout = layout(g), vertex.color = colours, vertex.frame.color = NA,
                      vertex.size = if (n > 500) 2 else if (n > 100) 4 else 8,
                      vertex.label = if (labels) names else NA, vertex.label.cex = 0.7, vertex.label.color = "black",
                      edge.color = grDevices::adjustcolor("grey50", alpha.f = 0.4), main = main, ...)
  if (is.null(membership)) return(invisible(NULL))
  invisible(stats::setNames(as.integer(membership), names))
}

#' Manhattan plot of an interaction search
#'
#' Draws every variable's \eqn{-\log_{10} p} (or its information gain) along the genome when the
#' result carries a map ([read_plink()] packed genotypes, or `map =` of [find_interactions()]):
#' chromosomes side by side in alternating shades, by base-pair position within each. Without
#' a map the variables are drawn by their index. The relevant variables are highlighted, and the
#' best tuples (with `top` or `return_tuples`) are joined by lines and named.
#'
#' @param x A result of [find_interactions()].
#' @param what `"p"` (\eqn{-\log_{10}} of the p-value) or `"gain"` (bits).
#' @param tuples How many of the best tuples to join and name.
#' @param main Title.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:2, 400 * 40, replace = TRUE), 400, 40,
#'             dimnames = list(NULL, paste0("snp", 1:40)))
#' y <- factor((x[, 4] > 0) != (x[, 29] > 0))
#' map <- data.frame(chr = rep(1:2, each = 20), bp = rep(seq(1e6, 2e7, length.out = 20), 2))
#' res <- find_interactions(x, y, dimensions = 2, top = 3, map = map, backend = "cpu", threads = 1)
#' plot(res)
#' plot(res, what = "gain")
#' @export
plot.fsgpu_interactions <- function(x, what = c("p", "gain"), tuples = 3, main = NULL, ...) {
  what <- match.arg(what)
  s <- x$scores
  y <- if (what == "gain") s$gain else -log10(pmax(s$p_value, .Machine$double.xmin))
  ylab <- if (what == "gain") "information gain (bits)" else expression(-log[10](p))
  map <- x$map
  if (is.null(map)) {
    position <- s$index
    shade <- rep("grey30", nrow(s))
    xlab <- "variable"
  } else {
    chr <- chromosome_order(map$chr)
    ends <- tapply(map$bp, chr, max)
    offset <- c(0, cumsum(as.numeric(ends)))[seq_along(ends)]
    position <- offset[as.integer(chr)] + map$bp
    shade <- c("grey25", "grey60")[as.integer(chr) %% 2 + 1]
    xlab <- "chromosome"
  }
  if (is.null(main))
    main <- sprintf("%d-way interactions: %d relevant of %s", x$params$dimensions, sum(s$relevant),
                    format(nrow(s), big.mark = ","))
  # Room above the highest points for the labels of the best tuples, unless ylim is given.
  dots <- list(...)
  if (is.null(dots$ylim)) dots$ylim <- c(min(0, y), max(0, y) * 1.15)
  do.call(graphics::plot, c(list(position, y, pch = 19, cex = 0.5, col = shade, xaxt = if (is.null(map)) "s" else "n",
                                 xlab = xlab, ylab = ylab, main = main), dots))
  if (!is.null(map)) graphics::axis(1, at = offset + ends / 2, labels = levels(chr), cex.axis = 0.8, tick = FALSE)
  graphics::points(position[s$relevant], y[s$relevant], pch = 19, cex = 0.9, col = "firebrick")
  best <- if (is.null(x$tuples) || tuples < 1) NULL else utils::head(x$tuples, tuples)
  if (!is.null(best)) {
    members <- as.matrix(best[grep("^tuple_[0-9]+$", names(best))])
    for (r in seq_len(nrow(best))) {
      at <- members[r, ]
      graphics::lines(position[at], y[at], lty = 2, col = "steelblue")
    }
    labelled <- unique(as.vector(members))
    graphics::text(position[labelled], y[labelled], s$variable[labelled], pos = 3, cex = 0.7, col = "steelblue")
  }
  if (is.null(best)) {
    graphics::legend("topright", legend = "relevant", pch = 19, col = "firebrick", bty = "n")
  } else {
    graphics::legend("topright", legend = c("relevant", "best tuples"), pch = c(19, NA), lty = c(NA, 2),
                     col = c("firebrick", "steelblue"), bty = "n")
  }
  invisible(x)
}

# Chromosome names as a factor in genome order: numbers first (1, 2, ..., 10), then the rest
# (X, Y, MT) as they sort.
chromosome_order <- function(chr) {
  chr <- as.character(chr)
  present <- unique(chr)
  number <- suppressWarnings(as.numeric(present))
  factor(chr, levels = present[order(is.na(number), number, present)])
}
