# find_interactions() on the GPU from every kind of input, against the CPU from an integer matrix:
# the GPU reads the same bitmaps the input path builds. And the CPU's wide pair kernel (16 words
# and more per class) against the GPU. Skips without a usable GPU.

skip_unless_gpu_input <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

gpu_input_search <- function(x, y, backend, ...) {
  set.seed(4)
  find_interactions(x, y, dimensions = 2, seed = 3, backend = backend, threads = 2, quiet = TRUE, ...)
}

test_that("the GPU from a data frame, a dgCMatrix and an assay equals the CPU from the matrix", {
  skip_unless_gpu_input()
  codes <- with_seed(6, matrix(sample(0:2, 700 * 90, replace = TRUE), 700, 90,
                               dimnames = list(paste0("o", 1:700), paste0("v", 1:90))))
  y <- factor(xor(codes[, 3] > 0, codes[, 40] > 1))
  cpu <- gpu_input_search(codes, y, "cpu", return_tuples = TRUE)
  for (x in list(codes, as.data.frame(codes))) {
    gpu <- gpu_input_search(x, y, "gpu", return_tuples = TRUE)
    expect_identical(gpu$backend, "gpu")
    expect_identical(gpu$scores, cpu$scores)
    expect_identical(gpu$contrast_gain, cpu$contrast_gain)
  }
  sparse <- gpu_input_search(Matrix::Matrix(codes * 1, sparse = TRUE), y, "gpu", levels = 3)
  expect_identical(sparse$scores$gain, gpu_input_search(codes, y, "cpu", levels = 3)$scores$gain)
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(list(codes = t(codes)), colData = data.frame(class = y))
  set.seed(4)
  from_se <- find_interactions(se, "class", dimensions = 2, seed = 3, backend = "gpu", threads = 2, quiet = TRUE,
                               return_tuples = TRUE)
  expect_identical(from_se$scores, cpu$scores)
})

test_that("the CPU's wide pair kernel (4,100 objects) equals the GPU", {
  skip_unless_gpu_input()
  codes <- with_seed(7, matrix(sample(0:2, 4100 * 60, replace = TRUE), 4100, 60))
  y <- factor(with_seed(8, sample(0:1, 4100, replace = TRUE)))
  cpu <- gpu_input_search(codes, y, "cpu", return_tuples = TRUE)
  gpu <- gpu_input_search(codes, y, "gpu", return_tuples = TRUE)
  expect_identical(gpu$backend, "gpu")
  expect_identical(gpu$scores, cpu$scores)
  expect_identical(gpu$contrast_gain, cpu$contrast_gain)
})
