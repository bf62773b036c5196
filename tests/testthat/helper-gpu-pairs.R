# Shared by test-gpu-pairs.R and test-gpu-mi_pairs-tensor.R: mi_pairs() on the GPU against the
# CPU, bit for bit. A case is list(x, y), with nbins and categorical when it needs them.

skip_unless_gpu_pairs <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

# mi_pairs() of a case on one backend; `...` adds to or overrides the case's arguments.
pairs_on <- function(backend, case, ...) {
  args <- list(x = case$x, y = case$y, nbins = case$nbins, categorical = case$categorical, backend = backend)
  do.call(mi_pairs, c(args[setdiff(names(args), ...names())], list(...)))
}

# `...` to both backends; devices to the GPU only.
expect_pairs_gpu_equals_cpu <- function(case, ..., devices = NULL, info = NULL) {
  gpu <- pairs_on("gpu", case, ..., devices = devices)
  cpu <- pairs_on("cpu", case, ...)
  expect_identical(attr(gpu, "backend"), "gpu", info = info)
  if (is.data.frame(cpu)) {
    expect_identical(pairs_frame(gpu), pairs_frame(cpu), info = info)
    expect_identical(attr(gpu, "n_pairs"), attr(cpu, "n_pairs"), info = info)
  } else {
    expect_identical(strip_attributes(gpu), strip_attributes(cpu), info = info)
  }
  invisible(cpu)
}
