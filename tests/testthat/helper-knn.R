# Pure-R references for knn_graph(): every pairwise distance with base R, then the k smallest by
# (distance, index), a row never its own neighbour.
ref_distances <- function(x, metric, query = NULL) {
  y <- if (is.null(query)) x else query
  switch(metric,
         pearson = 1 - cor(t(y), t(x)),
         spearman = 1 - cor(t(y), t(x), method = "spearman"),
         cosine = {
           unit <- function(m) m / sqrt(rowSums(m^2))
           1 - unit(y) %*% t(unit(x))
         },
         euclidean = sqrt(pmax(outer(rowSums(y^2), rowSums(x^2), "+") - 2 * y %*% t(x), 0)),
         manhattan = t(apply(y, 1, function(a) colSums(abs(t(x) - a)))))
}

ref_knn <- function(x, k, metric, query = NULL) {
  d <- unname(ref_distances(x, metric, query))
  d <- pmax(d, 0)
  if (is.null(query)) diag(d) <- Inf
  # Distances equal up to rounding tie (Spearman's on few dimensions has many exact ties, which
  # R and fsgpu round differently), and ties go to the lower index.
  tied <- round(d, 10)
  index <- matrix(unlist(lapply(seq_len(nrow(d)), function(i) order(tied[i, ], seq_len(ncol(d)))[seq_len(k)])),
                  nrow(d), k, byrow = TRUE)
  list(index = index, distance = matrix(d[cbind(rep(seq_len(nrow(d)), k), as.vector(index))], nrow(d), k))
}

# Clustered points with well separated distances (no near-ties) and a few exact duplicates.
data_knn <- function(n = 80, dim = 12, seed = 61) {
  with_seed(seed, {
    centres <- matrix(rnorm(4 * dim, sd = 3), 4, dim)
    x <- centres[rep_len(1:4, n), ] + matrix(rnorm(n * dim), n, dim)
    x[5, ] <- x[2, ]  # a duplicate pair
    dimnames(x) <- list(paste0("p", seq_len(n)), paste0("s", seq_len(dim)))
    x
  })
}
