# SummarizedExperiment input: features are the assay's rows, samples its columns, and the
# class is a colData column.

#' @rdname select_features
#' @param class For a `SummarizedExperiment`: the name of the `colData` column holding the class.
#' @param assay For a `SummarizedExperiment`: the assay,
#'   by name or index. The default, `NULL`, takes the assay named `"logcounts"` when there is
#'   one (as scater and scran do), else the first; the printout names the assay used
#'   (`Input:` under the run line).
#' @export
select_features.SummarizedExperiment <- function(x, class, k = 10, assay = NULL, method = "jmi", nbins = NULL,
                                                 beta = NULL, gamma = NULL, fixed = NULL, min_score = NULL,
                                                 weights = NULL, backend = NULL, threads = NULL, devices = NULL,
                                                 units = c("bits", "nats"), quiet = FALSE,
                                                 discretize = NULL, categorical = NULL, ...) {
  check_dots_empty(...)
  binning <- binning_request(nbins, discretize, categorical, threads)
  quiet_if(quiet, run_selection(prepare_se_input(x, class, assay, binning = binning, defer = is.null(discretize)),
                                k = k, method = method,
                                nbins = nbins, beta = beta, gamma = gamma, fixed = fixed, min_score = min_score,
                                weights = weights, backend = backend, threads = threads, devices = devices,
                                units = units, quiet = quiet, discretize = discretize))
}
