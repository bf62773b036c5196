#' fsgpu: feature selection and feature graphs for wide data on CPUs and GPUs
#'
#' Information-theoretic feature selection ([select_features()]), computed exactly from
#' integer counts on multithreaded CPUs and NVIDIA GPUs with identical results on both.
#' [backend_info()] tells what this build can use; [fsgpu_threads()] how many CPU threads.
#'
#' Options: `fsgpu.backend` (`"auto"`, `"cpu"`, `"gpu"`), `fsgpu.threads`, `fsgpu.devices`,
#' `fsgpu.gpu_memory_limit` (bytes of codes kept on a GPU before the data are streamed in
#' feature blocks; for [mi_pairs()] and [mi_matrix()], the most the pair search may use per
#' GPU), `fsgpu.gpu_min_work` (cells times steps from which `"auto"` takes the GPU).
#'
#' @keywords internal
#' @useDynLib fsgpu, .registration = TRUE
#' @importFrom Rcpp evalCpp
"_PACKAGE"
