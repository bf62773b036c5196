# discretize() on the GPU against its CPU twin: cuts, criteria, ranges and codes must be
# bitwise identical. Skips without a usable GPU.

skip_unless_gpu_discretize <- function() skip_if_not(isTRUE(fsgpu::backend_info()$gpu_available), "no GPU")

expect_gpu_discretize_equals_cpu <- function(x, y, ..., devices = NULL, info = NULL) {
  gpu <- discretize(x, y, ..., backend = "gpu", devices = devices)
  cpu <- discretize(x, y, ..., backend = "cpu")
  expect_identical(gpu$backend, "gpu")
  for (field in c("cuts", "features", "codes")) expect_identical(gpu[[field]], cpu[[field]], info = paste(info, field))
  invisible(cpu)
}

gpu_discretize_cases <- function() {
  list(
    three = data_discretize(n = 300, classes = 3, seed = 71),
    two = data_discretize(n = 67, classes = 2, seed = 72),
    many = data_discretize(n = 1500, classes = 9, seed = 73),
    forty = with_seed(74, {
      y <- factor(sample(paste0("k", 1:40), 800, replace = TRUE))
      list(x = cbind(a = as.integer(y) + rnorm(800), b = round(rnorm(800), 1), c = runif(800)), y = y)
    })
  )
}

test_that("GPU cuts equal the CPU's for every method", {
  skip_unless_gpu_discretize()
  cases <- gpu_discretize_cases()
  for (name in names(cases)) {
    case <- cases[[name]]
    for (method in c("caim", "cacc", "ameva", "mdlp"))
      expect_gpu_discretize_equals_cpu(case$x, case$y, method = method, info = paste(name, method))
    for (method in c("equal_width", "equal_freq"))
      expect_gpu_discretize_equals_cpu(case$x, NULL, method = method, nbins = 5, info = paste(name, method))
  }
})

test_that("GPU equals CPU with missing values, sparse input, data frames and small chunks", {
  skip_unless_gpu_discretize()
  case <- gpu_discretize_cases()$three
  x <- case$x
  x[sample(length(x), 200)] <- NA
  for (method in c("caim", "mdlp", "equal_freq"))
    expect_gpu_discretize_equals_cpu(x, if (method == "equal_freq") NULL else case$y, method = method, na = "omit")
  sparse <- case$x
  sparse[abs(sparse) < 1] <- 0
  expect_gpu_discretize_equals_cpu(as_dgc(sparse), case$y, method = "cacc")
  expect_gpu_discretize_equals_cpu(as.data.frame(case$x), case$y, method = "ameva")
  old <- options(fsgpu.gpu_memory_limit = 2^16)  # a few features per chunk
  on.exit(options(old))
  expect_gpu_discretize_equals_cpu(case$x, case$y, method = "caim", info = "chunks")
  ids <- fsgpu::backend_info()$devices$id
  expect_gpu_discretize_equals_cpu(case$x, case$y, method = "caim", devices = ids, info = "all devices")
})

test_that("a larger GPU run equals the CPU, and predict() applies its cuts", {
  skip_unless_gpu_discretize()
  x <- with_seed(75, matrix(runif(4000 * 64), 4000, 64, dimnames = list(NULL, paste0("f", 1:64))))
  y <- with_seed(76, sample(1:6, 4000, replace = TRUE))
  x <- x + outer(y, seq(0, 1, length.out = 64))
  d <- expect_gpu_discretize_equals_cpu(x, y, method = "caim", info = "4000 x 64")
  expect_identical(predict(d, x), d$codes)
})

test_that("backend = 'auto' on a GPU gives the CPU's cuts, and discretize = 'caim' selects as the CPU", {
  skip_unless_gpu_discretize()
  old <- options(fsgpu.gpu_min_work = 0)
  on.exit(options(old))
  case <- gpu_discretize_cases()$many
  auto <- discretize(case$x, case$y)
  expect_identical(auto$backend, "gpu")
  expect_identical(auto$cuts, discretize(case$x, case$y, backend = "cpu")$cuts)
  gpu <- select_features(case$x, case$y, k = 4, discretize = "caim", backend = "gpu")
  cpu <- select_features(case$x, case$y, k = 4, discretize = "caim", backend = "cpu")
  expect_identical(gpu$selection, cpu$selection)
})
