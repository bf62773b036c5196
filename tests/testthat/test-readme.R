# Every R block of README.md runs on its own, in a fresh R session, without an error. The
# README is not part of the built package, so the test runs from a source tree only.

readme_blocks <- function(file) {
  lines <- readLines(file, warn = FALSE)
  starts <- which(lines == "```r")
  ends <- which(lines == "```")
  lapply(starts, function(start) lines[(start + 1):(min(ends[ends > start]) - 1)])
}

test_that("every R block of the README runs in a fresh session", {
  skip_on_cran()
  readme <- test_path("..", "..", "README.md")
  skip_if_not(file.exists(readme), "README.md is not beside the tests (not a source tree)")
  for (pkg in c("callr", "ALL", "SummarizedExperiment", "SingleCellExperiment", "bluster", "igraph"))
    skip_if_not_installed(pkg)
  blocks <- readme_blocks(readme)
  expect_gte(length(blocks), 5)
  for (i in seq_along(blocks)) {
    file <- tempfile(sprintf("readme-block-%d-", i), fileext = ".R")
    writeLines(blocks[[i]], file)
    # A fresh R with this session's libraries, in a temporary folder (plots go to Rplots.pdf
    # there); an error in the block comes back as an error here, naming the block.
    result <- tryCatch(callr::r(function(file) {
      source(file, local = new.env())
      TRUE
    }, args = list(file), libpath = .libPaths(), wd = tempdir(), timeout = 600),  # a block that never ends fails
    error = function(e) conditionMessage(e))
    expect(isTRUE(result), sprintf("README block %d (lines %s...) failed: %s", i, blocks[[i]][1], result))
    unlink(file)
  }
})
