# Plots of the jobs' results, in base graphics (igraph draws the kNN graph).

#' Plot a feature selection
#'
#' Draws what each step of the selection gained by the criterion's measure (`what = "gain"`),
#' or the cumulative score (`what = "cumulative"`), by rank. For most criteria the score is
#' already what the step adds (the relevance for MIM, relevance less redundancy for mRMR, the
#' least conditional information for CMIM...): the gain is the score, and the cumulative curve
#' the running total of the scores. JMI's, DISR's and JIM's scores are sums over the features
#' selected before, and JMI3's over their pairs, so they grow with the rank by construction: their
#' gain at rank \eqn{r > 1} is the score divided by its number of terms (\eqn{r - 1}; for JMI3
#' \eqn{(r - 1)(r - 2)/2} from rank 3 on) - for JMI the mean of \eqn{I(X,S;Y)} over the
#' features \eqn{S} selected before, the normalised form of the criterion - and their cumulative
#' curve is the score itself. A gain that falls says the later features add less. Fixed features are
#' drawn as open circles; the features are named on the axis when there are few.
#'
#' @param x A result of [select_features()].
#' @param what `"gain"` or `"cumulative"`.
#' @param labels Name the features on the x axis (default: up to 30 features).
#' @param main,xlab,ylab Titles; by default from the criterion and the units.
#' @param ... Passed to [graphics::plot()].
#' @return A data frame, invisibly: `rank`, `feature`, `gain` and `cumulative`, the values drawn.
#' @examples
#' set.seed(1)
#' y <- factor(sample(c("a", "b"), 100, replace = TRUE))
#' x <- matrix(rnorm(100 * 50), 100, 50, dimnames = list(NULL, paste0("g", 1:50)))
#' x[, 7] <- x[, 7] + 2 * (y == "b")
#' sel <- select_features(x, y, k = 8, method = "mrmr", backend = "cpu")
#' plot(sel)
#' plot(sel, what = "cumulative")
#' @export
plot.fsgpu_selection <- function(x, what = c("gain", "cumulative"), labels = nrow(x$selection) <= 30, main = NULL,
                                 xlab = if (labels) "" else "rank", ylab = NULL, ...) {
  what <- match.arg(what)
  s <- x$selection
  drawn <- selection_gains(s$score, x$method)
  value <- drawn[[what]]
  unit <- if (x$method %in% c(ratio_methods, impurity_methods)) "" else sprintf(" (%s)", x$units)
  if (is.null(main)) main <- sprintf("%s selection", toupper(x$method))
  if (is.null(ylab)) ylab <- paste0(if (what == "gain") "gain of the step" else "cumulative score", unit)
  old <- graphics::par(mar = c(if (labels) max(5, min(10, max(nchar(s$feature)) * 0.6)) else 5, 4, 4, 2) + 0.1)
  on.exit(graphics::par(old))
  graphics::plot(s$rank, value, type = "b", pch = ifelse(s$fixed, 1, 19), xaxt = if (labels) "n" else "s",
                 ylim = range(0, value), xlab = xlab, ylab = ylab, main = main, ...)
  graphics::abline(h = 0, col = "grey60", lty = 3)
  if (labels) graphics::axis(1, at = s$rank, labels = s$feature, las = 2, cex.axis = 0.8)
  if (any(s$fixed)) graphics::legend("topright", legend = c("fixed", "selected"), pch = c(1, 19), bty = "n")
  invisible(data.frame(rank = s$rank, feature = s$feature, gain = drawn$gain, cumulative = drawn$cumulative))
}

# Criteria whose score is a sum over the features selected before (JMI3: over their pairs; see
# plot.fsgpu_selection).
summed_methods <- c("jmi", "disr", "jim", "jmi3")

# The gain of every step and the running total, from the scores of a selection by `method`.
selection_gains <- function(score, method) {
  if (method %in% summed_methods) {
    r <- seq_along(score)
    terms <- if (method == "jmi3") ifelse(r <= 2, 1, choose(r - 1, 2)) else pmax(r - 1, 1)
    list(gain = score / terms, cumulative = score)
  } else {
    list(gain = score, cumulative = cumsum(score))
  }
}

#' Heatmap of the best features' pairs
#'
#' Draws the `n` best features of a [mi_pairs()] result (in the order of their best pair)
#' against each other: a features x features matrix whose cells are the pairs' joint mutual
#' information \eqn{I(Y; X_i,X_j)} or interaction information, taken from every pair of `x`
#' among these features. A pair that `x` does not hold (it was not among the best `top`, or
#' `with` left it out) is a grey cell; `mi_pairs()` on these features alone, with `top` their
#' number of pairs, gives the full matrix. The colour scale spans the values drawn: sequential
#' for the joint information, and for the interaction information diverging around 0 (red:
#' synergy, blue: redundancy) when both signs occur, sequential otherwise.
#'
#' @param x A result of [mi_pairs()].
#' @param n The number of features to draw.
#' @param value `"joint"` or `"interaction"`; by default the measure the pairs were ranked by.
#' @param main Title.
#' @param ... Passed to [graphics::image()].
#' @return The matrix drawn (features x features, `NA` where `x` holds no pair), invisibly.
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:1, 300 * 20, replace = TRUE), 300, 20,
#'             dimnames = list(NULL, paste0("snp", 1:20)))
#' y <- factor(xor(x[, 3], x[, 7]))
#' pairs <- mi_pairs(x, y, top = 30, backend = "cpu")
#' plot(pairs)
#' # Every pair of the 8 features with the most informative pairs:
#' best <- unique(c(rbind(pairs$index1, pairs$index2)))[1:8]
#' m <- plot(mi_pairs(x[, best], y, top = choose(8, 2), backend = "cpu"), value = "interaction")
#' round(m, 2)
#' @export
plot.fsgpu_pairs <- function(x, n = 20, value = attr(x, "by"), main = NULL, ...) {
  value <- match.arg(value, c("joint", "interaction"))
  n <- check_count(n, "n")
  if (nrow(x) == 0) stop("x has no pairs to draw", call. = FALSE)
  pairs <- as.data.frame(x)
  # Features by index (names may repeat), in the order of their best pair.
  index <- utils::head(unique(as.vector(rbind(pairs$index1, pairs$index2))), n)
  names <- ifelse(index %in% pairs$index1, pairs$feature1[match(index, pairs$index1)],
                  pairs$feature2[match(index, pairs$index2)])
  among <- pairs[pairs$index1 %in% index & pairs$index2 %in% index, , drop = FALSE]
  v <- among[[if (value == "joint") "mi_joint" else "interaction"]]
  k <- length(index)
  m <- matrix(NA_real_, k, k, dimnames = list(names, names))
  m[cbind(match(among$index1, index), match(among$index2, index))] <- v
  m[cbind(match(among$index2, index), match(among$index1, index))] <- v
  scale <- heatmap_scale(v, diverging = value == "interaction")
  if (is.null(main))
    main <- sprintf("%s, top %d features", if (value == "joint") "Joint MI I(Y; Xi,Xj)" else "Interaction information", k)
  old <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(old))
  graphics::layout(matrix(1:2, 1), widths = c(1, graphics::lcm(3)))  # the key keeps its width on small devices
  margin <- max(4, min(10, max(nchar(names)) * 0.6))
  graphics::par(mar = c(margin, margin, 4, 1) + 0.1)
  drawn <- m[, rev(seq_len(k)), drop = FALSE]
  graphics::image(seq_len(k), seq_len(k), ifelse(is.na(drawn), 0, NA), col = "grey90", axes = FALSE,
                  xlab = "", ylab = "", main = main)
  graphics::image(seq_len(k), seq_len(k), pmin(pmax(drawn, scale$limits[1]), scale$limits[2]), zlim = scale$limits,
                  col = scale$colours, add = TRUE, ...)
  graphics::axis(1, at = seq_len(k), labels = names, las = 2, cex.axis = 0.8, tick = FALSE)
  graphics::axis(2, at = seq_len(k), labels = rev(names), las = 1, cex.axis = 0.8, tick = FALSE)
  graphics::abline(h = seq_len(k + 1) - 0.5, v = seq_len(k + 1) - 0.5, col = "white", lwd = 0.5)
  graphics::box()
  if (anyNA(m[upper.tri(m)]))
    graphics::mtext("grey: pair not in x", side = 3, line = 0.3, cex = 0.7, col = "grey40")
  colour_key(scale$limits, scale$colours, attr(x, "units"))
  invisible(m)
}

# The limits and colours of a heatmap of `v`: the range of the values, so that close values
# differ in colour; diverging around 0 (symmetric) when asked and both signs occur.
heatmap_scale <- function(v, diverging) {
  limits <- range(v)
  if (diverging && limits[1] < 0 && limits[2] > 0) {
    list(limits = c(-1, 1) * max(abs(limits)), colours = grDevices::hcl.colors(64, "Blue-Red 3"))
  } else {
    if (limits[1] == limits[2]) limits <- limits + c(-1, 1) * max(abs(limits[1]) * 1e-3, .Machine$double.eps)
    palette <- if (diverging && limits[2] <= 0) "Blues 3" else "YlOrRd"
    list(limits = limits, colours = grDevices::hcl.colors(64, palette, rev = palette == "YlOrRd"))
  }
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
#' graph, with a legend naming each community and its number of points. For readability, graphs
#' of more than `max_points` points are refused (draw a subset's graph instead); the communities
#' come back for use elsewhere.
#'
#' @param x A result of [knn_graph()] with `output = "index"`, of the points with themselves
#'   (not with `query`).
#' @param communities `"louvain"`, `"walktrap"` or `"none"`.
#' @param max_points The most points drawn.
#' @param labels Name the points (default: up to 100 points).
#' @param layout An igraph layout function.
#' @param legend Draw the legend of the communities (at most 30 are listed).
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
                           labels = nrow(x$index) <= 100, layout = NULL, legend = TRUE, main = NULL, ...) {
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
  palette <- if (is.null(membership)) NULL else community_colours(max(membership))
  colours <- if (is.null(membership)) "grey60" else palette[membership]
  if (is.null(layout)) layout <- igraph::layout_with_fr
  if (is.null(main))
    main <- sprintf("%d-NN graph (%s)%s", k, attr(x, "metric"),
                    if (is.null(membership)) "" else sprintf(", %d %s communities", max(membership), communities))
  with_legend <- !is.null(membership) && isTRUE(legend)
  args <- list(...)
  # Room on the right for the legend, unless the caller sets the margins.
  if (with_legend && is.null(args$margin)) args$margin <- c(0, 0, 0, if (max(membership) > 15) 0.9 else 0.5)
  do.call(igraph::plot.igraph,
          c(list(g, layout = layout(g), vertex.color = colours, vertex.frame.color = NA,
                 vertex.size = if (n > 500) 2 else if (n > 100) 4 else 8,
                 vertex.label = if (labels) names else NA, vertex.label.cex = 0.7, vertex.label.color = "black",
                 edge.color = grDevices::adjustcolor("grey50", alpha.f = 0.4), main = main), args))
  if (is.null(membership)) return(invisible(NULL))
  if (with_legend) community_legend(membership, palette)
  invisible(stats::setNames(as.integer(membership), names))
}

# Colours of `groups` communities: a qualitative palette, its hues spread evenly.
community_colours <- function(groups) grDevices::hcl.colors(max(groups, 2), "Dark 3")[seq_len(groups)]

# The legend of a kNN plot's communities, in the right margin of igraph's square plot: each
# community's colour, number and size, the largest 30 when there are more.
community_legend <- function(membership, palette) {
  sizes <- tabulate(membership)
  shown <- utils::head(order(-sizes, seq_along(sizes)), 30)
  shown <- sort(shown)
  text <- sprintf("%d (%d)", shown, sizes[shown])
  if (length(shown) < length(sizes)) text <- c(text, sprintf("%d more", length(sizes) - length(shown)))
  graphics::legend("topright", legend = text, title = "community (points)", pch = 19,
                   col = c(palette[shown], if (length(shown) < length(sizes)) NA), pt.cex = 1.2, cex = 0.75,
                   bty = "n", ncol = if (length(text) > 15) 2 else 1, xpd = TRUE)
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
#' @param what `"p"` (\eqn{-\log_{10}} of the p-value) or `"gain"`, the information gain in the
#'   result's units (bits).
#' @param scale For `what = "gain"`: `"total"`, the gain as [find_interactions()] reports it, a
#'   total over the objects with a class (\eqn{N} times the information the variable adds per
#'   object), or `"per_sample"`, that total divided by the number of objects with a class (with
#'   `missing = "exclude"`, a tuple with missing values counts fewer objects, so this is then a
#'   lower bound of its information per counted object).
#' @param tuples How many of the best tuples to join and name.
#' @param main Title.
#' @param ... Passed to [graphics::plot()].
#' @return A data frame, invisibly: `variable`, `position` (along the x axis) and `value` (along
#'   the y axis) of every point drawn.
#' @examples
#' set.seed(1)
#' x <- matrix(sample(0:2, 400 * 40, replace = TRUE), 400, 40,
#'             dimnames = list(NULL, paste0("snp", 1:40)))
#' y <- factor((x[, 4] > 0) != (x[, 29] > 0))
#' map <- data.frame(chr = rep(1:2, each = 20), bp = rep(seq(1e6, 2e7, length.out = 20), 2))
#' res <- find_interactions(x, y, dimensions = 2, top = 3, map = map, backend = "cpu", threads = 1)
#' plot(res)
#' plot(res, what = "gain")
#' plot(res, what = "gain", scale = "per_sample")
#' @export
plot.fsgpu_interactions <- function(x, what = c("p", "gain"), scale = c("total", "per_sample"), tuples = 3,
                                    main = NULL, ...) {
  what <- match.arg(what)
  scale <- match.arg(scale)
  s <- x$scores
  n <- x$params$n_objects
  if (what == "p") {
    y <- -log10(pmax(s$p_value, .Machine$double.xmin))
    ylab <- expression(-log[10](p))
  } else if (scale == "total") {
    y <- s$gain
    ylab <- sprintf("information gain, total over %s objects (bits)", format(n, big.mark = ","))
  } else {
    y <- s$gain / n
    ylab <- "information gain per object (bits)"
  }
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
  invisible(data.frame(variable = s$variable, position = position, value = y))
}

# Chromosome names as a factor in genome order: numbers first (1, 2, ..., 10), then the rest
# (X, Y, MT) as they sort.
chromosome_order <- function(chr) {
  chr <- as.character(chr)
  present <- unique(chr)
  number <- suppressWarnings(as.numeric(present))
  factor(chr, levels = present[order(is.na(number), number, present)])
}
