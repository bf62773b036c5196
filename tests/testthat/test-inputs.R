prepare_input <- fsgpu:::prepare_input
prepare_se_input <- fsgpu:::prepare_se_input

small <- function() {
  x <- matrix(as.double(1:12), 4, 3, dimnames = list(paste0("s", 1:4), paste0("g", 1:3)))
  list(x = x, y = c("b", "a", "b", "a"))
}

test_that("a double matrix passes through with names, sizes and class codes", {
  d <- small()
  input <- prepare_input(d$x, d$y)
  expect_identical(input$x, d$x)
  expect_identical(input$y, c(1L, 0L, 1L, 0L))
  expect_identical(input$classes, c("a", "b"))
  expect_identical(input$feature_names, c("g1", "g2", "g3"))
  expect_identical(input$sample_names, paste0("s", 1:4))
  expect_identical(c(input$n_samples, input$n_features), c(4L, 3L))
  expect_false(input$sparse)
})

test_that("integer matrices stay integer and logical ones become 0/1 integers", {
  xi <- matrix(1:6, 3)
  expect_identical(prepare_input(xi, 1:3)$x, xi)
  xl <- matrix(c(TRUE, FALSE, TRUE, TRUE), 2, dimnames = list(c("a", "b"), c("u", "v")))
  input <- prepare_input(xl, c(0, 1))
  expect_identical(input$x, matrix(c(1L, 0L, 1L, 1L), 2, dimnames = dimnames(xl)))
  expect_identical(input$feature_names, c("u", "v"))
})

test_that("missing names become X1..Xp and no sample names", {
  input <- prepare_input(matrix(runif(6), 2), 1:2)
  expect_identical(input$feature_names, c("X1", "X2", "X3"))
  expect_null(input$sample_names)
})

test_that("a data.frame becomes a plain list of double and integer columns", {
  df <- data.frame(num = c(0.5, 1, 2), int = 3:1, lgl = c(TRUE, FALSE, TRUE),
                   fac = factor(c("q", "p", "q"), levels = c("q", "p")))
  input <- prepare_input(df, c("u", "v", "u"))
  expect_identical(input$x, list(c(0.5, 1, 2), 3:1, c(1L, 0L, 1L), c(1L, 2L, 1L)))
  expect_identical(input$feature_names, names(df))
  expect_null(input$sample_names)
  expect_identical(c(input$n_samples, input$n_features), c(3L, 4L))
  rownames(df) <- c("r1", "r2", "r3")
  expect_identical(prepare_input(df, 1:3)$sample_names, c("r1", "r2", "r3"))
})

test_that("sparse Matrix classes become dgCMatrix and dense ones base matrices", {
  d <- small()
  sx <- Matrix::Matrix(d$x * (d$x > 6), sparse = TRUE)
  input <- prepare_input(sx, d$y)
  expect_s4_class(input$x, "dgCMatrix")
  expect_true(input$sparse)
  expect_identical(input$feature_names, colnames(d$x))
  expect_identical(input$sample_names, rownames(d$x))
  for (other in list(methods::as(sx, "TsparseMatrix"), methods::as(sx, "RsparseMatrix"), sx > 8)) {
    converted <- prepare_input(other, d$y)$x
    expect_s4_class(converted, "dgCMatrix")
    expect_identical(as.matrix(converted), as.matrix(other) * 1)
  }
  dense <- prepare_input(Matrix::Matrix(d$x, sparse = FALSE), d$y)
  expect_identical(dense$x, d$x)
  expect_false(dense$sparse)
})

test_that("empty and unsupported x are rejected, saying what is supported", {
  expect_error(prepare_input(matrix(0, 0, 3), integer(0)), "x is empty \\(0 samples, 3 features\\)")
  expect_error(prepare_input(matrix(0, 3, 0), 1:3), "x is empty \\(3 samples, 0 features\\)")
  expect_error(prepare_input(data.frame(a = 1:3)[, 0], 1:3), "x is empty")
  expect_error(prepare_input(matrix("a", 2, 2), 1:2), "numeric, integer or logical matrix.*character matrix")
  expect_error(prepare_input(matrix(1i, 2, 2), 1:2), "complex matrix")
  expect_error(prepare_input(1:5, 1:5), "x must be .*data.frame.*sparse Matrix")
  expect_error(prepare_input(list(a = 1:2), 1:2), "got an object of class 'list'")
})

test_that("non-numeric data.frame columns are named", {
  df <- data.frame(a = 1:3, b = c("x", "y", "z"), c = 1:3, d = letters[1:3])
  expect_error(prepare_input(df, 1:3), "character columns 'b', 'd'; convert them to factors")
  df <- data.frame(a = 1:3, when = as.Date("2020-01-01") + 0:2, z = 1i)
  expect_error(prepare_input(df, 1:3), "unsupported types 'when', 'z'")
})

test_that("NA, NaN and Inf in x are located by feature and sample", {
  d <- small()
  x <- d$x
  x[2, 3] <- NA
  expect_error(prepare_input(x, d$y), "missing or infinite values in feature 'g3' \\(sample 's2'\\)")
  x[4, 1] <- Inf
  x[3, 1] <- NaN
  expect_error(prepare_input(x, d$y),
               "feature 'g1' \\(sample 's3'\\), feature 'g3' \\(sample 's2'\\)$")
  expect_error(prepare_input(unname(x), d$y), "feature 'X1' \\(sample 3\\)")
  xi <- matrix(1:4, 2)
  xi[2, 2] <- NA
  expect_error(prepare_input(xi, 1:2), "feature 'X2' \\(sample 2\\)")
  wide <- matrix(NA_real_, 2, 8)
  expect_error(prepare_input(wide, 1:2), "feature 'X5' \\(sample 1\\) and 3 more features")
})

test_that("non-finite values are found in data.frame columns and sparse matrices", {
  df <- data.frame(a = c(1, 2, 3), b = c(1L, NA, 3L), f = factor(c("u", NA, "v")))
  expect_error(prepare_input(df, 1:3), "feature 'b' \\(sample 2\\), feature 'f' \\(sample 2\\)")
  df <- data.frame(a = c(1, -Inf, 3), row.names = c("p", "q", "r"))
  expect_error(prepare_input(df, 1:3), "feature 'a' \\(sample 'q'\\)")
  sx <- Matrix::sparseMatrix(i = c(1, 3, 2), j = c(1, 2, 3), x = c(1, NaN, Inf), dims = c(3, 3),
                             dimnames = list(c("p", "q", "r"), c("a", "b", "c")))
  expect_error(prepare_input(sx, 1:3), "feature 'b' \\(sample 'r'\\), feature 'c' \\(sample 'q'\\)")
})

test_that("a dgCMatrix reports its non-finite values as the same dense matrix does", {
  # Several offenders per column, Inf after NA in one and before it in another: the stored
  # entries scanned alone must name the same first sample per feature as the dense scan.
  d <- matrix(0, 6, 4, dimnames = list(paste0("s", 1:6), paste0("f", 1:4)))
  d[c(2, 5), 1] <- c(NA, Inf)
  d[c(3, 4, 6), 2] <- c(-Inf, NaN, 1)
  d[6, 3] <- 2
  d[c(1, 6), 4] <- c(Inf, NA)
  sx <- methods::as(d, "CsparseMatrix")
  dense <- tryCatch(prepare_input(d, rep(1:2, 3)), error = conditionMessage)
  expect_match(dense, "feature 'f1' \\(sample 's2'\\), feature 'f2' \\(sample 's3'\\), feature 'f4' \\(sample 's1'\\)")
  expect_identical(tryCatch(prepare_input(sx, rep(1:2, 3)), error = conditionMessage), dense)
})

test_that("y is checked: type, length, missing values, classes, whole numbers", {
  d <- small()
  expect_error(prepare_input(d$x, list(1, 2, 1, 2)), "y must be a vector of class labels")
  expect_error(prepare_input(d$x, d$x), "y must be a vector of class labels")
  expect_error(prepare_input(d$x[, 1:2], 1:5), "y has length 5 but x has 4 samples")
  expect_error(prepare_input(d$x, c("a", NA, "b", NA)), "y has missing values at samples 's2', 's4'")
  expect_error(prepare_input(unname(d$x), c(1, 2, NaN, 2)), "missing values at sample 3$")
  expect_error(prepare_input(d$x, rep("a", 4)), "at least two classes; it has one: 'a'")
  expect_error(prepare_input(d$x, c(0.5, 1, 1, 0)), "y must be a class label")
  expect_error(prepare_input(d$x, c(Inf, 1, 1, 0)), "y must be a class label")
  expect_identical(prepare_input(d$x, c(2, 0, 2, 0))$y, c(1L, 0L, 1L, 0L))
})

test_that("classes keep factor level order, sorted order otherwise", {
  d <- small()
  input <- prepare_input(d$x, factor(d$y, levels = c("b", "a")))
  expect_identical(input$classes, c("b", "a"))
  expect_identical(input$y, c(0L, 1L, 0L, 1L))
  expect_identical(prepare_input(d$x, c(10L, 9L, 10L, 2L))$classes, c("2", "9", "10"))
  expect_identical(prepare_input(d$x, c(TRUE, FALSE, TRUE, TRUE))$classes, c("FALSE", "TRUE"))
  expect_identical(prepare_input(d$x, c("b", "B", "a", "b"))$classes, c("B", "a", "b"))
})

test_that("unused factor levels of y are dropped with a message naming them", {
  d <- small()
  y <- factor(d$y, levels = c("z", "a", "b", "w"))
  expect_message(input <- prepare_input(d$x, y), "Dropped unused levels of y: 'z', 'w'")
  expect_identical(input$classes, c("a", "b"))
  expect_identical(input$y, c(1L, 0L, 1L, 0L))
  expect_error(suppressMessages(prepare_input(d$x, factor(rep("a", 4), levels = c("a", "b")))),
               "at least two classes")
})

test_that("argument names in messages follow arg_x and arg_y", {
  d <- small()
  expect_error(prepare_input(d$x, 1:3, arg_x = "data", arg_y = "labels"),
               "labels has length 3 but data has 4 samples")
})

test_that("SummarizedExperiment input: features are rows, samples columns", {
  skip_if_not_installed("SummarizedExperiment")
  d <- small()
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(counts = t(d$x), sparse = Matrix::Matrix(t(d$x) * (t(d$x) > 6), sparse = TRUE)),
    colData = data.frame(type = d$y, batch = 1:4, row.names = rownames(d$x)))
  # the first assay by default (there is no logcounts), named in the notes of the run record
  expected <- prepare_input(d$x, d$y)
  expected$notes <- "assay 'counts'"
  expected$assay <- "counts"
  expect_identical(prepare_se_input(se, "type"), expected)
  expect_identical(prepare_se_input(se, "type", assay = "counts"), expected)
  expect_identical(prepare_se_input(se, "type", assay = 1)$notes, "assay 'counts'")
  sparse <- prepare_se_input(se, "batch", assay = 2)
  expect_s4_class(sparse$x, "dgCMatrix")
  expect_identical(dim(sparse$x), c(4L, 3L))
  expect_identical(sparse$feature_names, colnames(d$x))
  expect_identical(sparse$sample_names, rownames(d$x))
  expect_identical(sparse$classes, as.character(1:4))
  expect_error(prepare_se_input(se, "tissue"), "class must name one colData column.*'type', 'batch'")
  expect_error(prepare_se_input(se, "type", assay = "logcounts"), "assay must be .*'counts', 'sparse'")
  expect_error(prepare_se_input(se, "type", assay = 3), "it has 2 assay")
  expect_error(prepare_se_input(d$x, "type"), "se must be a SummarizedExperiment")
  se$type[2] <- NA
  expect_error(prepare_se_input(se, "type"), "colData column 'type' has missing values at sample 's2'")
  SummarizedExperiment::assay(se, 1)[3, 4] <- NA
  expect_error(prepare_se_input(se, "batch"), "assay 'counts' has missing .* feature 'g3' \\(sample 's4'\\)")
})

test_that("the checks of x run on the job's threads", {
  # check_finite() and the integer rule's count took all threads whatever the job's `threads`.
  seen <- list()
  record <- function(name, threads) seen[[length(seen) + 1L]] <<- c(name, threads)
  ns <- asNamespace("fsgpu")
  for (f in c("fsgpu_bad_values", "fsgpu_more_values_than")) {
    suppressMessages(trace(f, tracer = bquote(.(record)(.(f), threads)), where = ns, print = FALSE))
  }
  on.exit(for (f in c("fsgpu_bad_values", "fsgpu_more_values_than")) suppressMessages(untrace(f, where = ns)))
  x <- matrix(seq_len(400L * 2L), 400, 2)  # integer, many values: the rule counts them
  suppressMessages(prepare_input(x, rep(1:2, 200), binning = binning_request(NULL, NULL, NULL, threads = 1L)))
  expect_identical(seen, list(c("fsgpu_bad_values", "1"), c("fsgpu_more_values_than", "1")))
})
