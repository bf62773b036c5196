# read_libsvm(), read_arff(), read_delimited(), read_features() and the command line
# (exec/fsgpu), on small files written here.

write_lines <- function(lines, ext, compress = c("none", "gzip", "bzip2", "xz")) {
  compress <- match.arg(compress)
  suffix <- switch(compress, none = "", gzip = ".gz", bzip2 = ".bz2", xz = ".xz")
  file <- tempfile(fileext = paste0(ext, suffix))
  con <- switch(compress, none = file(file, "wb"), gzip = gzfile(file, "wb"), bzip2 = bzfile(file, "wb"),
                xz = xzfile(file, "wb"))
  writeLines(lines, con, sep = "\n")
  close(con)
  file
}

# A sparse matrix and labels in LibSVM lines (1-based, each line's indices in reverse order).
libsvm_lines <- function(x, y) {
  vapply(seq_len(nrow(x)), function(r) {
    j <- rev(which(x[r, ] != 0))
    paste(c(as.character(y[r]), sprintf("%d:%s", j, as.character(x[r, j]))), collapse = " ")
  }, "")
}

random_sparse <- function(n = 30, p = 12, seed = 3) {
  with_seed(seed, {
    x <- matrix(round(rnorm(n * p), 3), n, p)
    x[sample(length(x), length(x) * 0.7)] <- 0
    x[, p] <- c(1, rep(0, n - 1))  # the last feature occurs once, so the width is p
    list(x = x, y = sample(c(-1, 1, 2), n, replace = TRUE))
  })
}

test_that("read_libsvm reads back what was written, sparse, with comments, CRLF and any order", {
  d <- random_sparse()
  lines <- libsvm_lines(d$x, d$y)
  lines <- c("# a header comment", "", lines[1:10], "   ", paste0(lines[11:20], "  # trailing comment\r"),
             paste0(lines[21:30], "\t "))
  got <- read_libsvm(write_lines(lines, ".libsvm"))
  expect_s4_class(got$x, "dgCMatrix")
  expect_identical(dim(got$x), dim(d$x))
  expect_equal(as.matrix(got$x), d$x, ignore_attr = TRUE)
  expect_identical(colnames(got$x), paste0("f", seq_len(ncol(d$x))))
  expect_identical(got$y, factor(d$y, levels = c(-1, 1, 2)))
  expect_identical(read_libsvm(write_lines(lines, ".libsvm"), labels = "numeric")$y, d$y)
  expect_null(got$qid)
})

test_that("read_libsvm decompresses gzip, bzip2 and xz", {
  d <- random_sparse(seed = 4)
  plain <- read_libsvm(write_lines(libsvm_lines(d$x, d$y), ".libsvm"))
  for (compress in c("gzip", "bzip2", "xz"))
    expect_identical(read_libsvm(write_lines(libsvm_lines(d$x, d$y), ".libsvm", compress)), plain)
})

test_that("read_libsvm: index base, width, qid and text labels", {
  zero <- write_lines(c("a 0:1 2:5", "b 1:2"), ".svm")
  got <- read_libsvm(zero)
  expect_identical(colnames(got$x), c("f0", "f1", "f2"))
  expect_equal(as.matrix(got$x), rbind(c(1, 0, 5), c(0, 2, 0)), ignore_attr = TRUE)
  expect_identical(got$y, factor(c("a", "b")))
  one <- write_lines(c("1 1:1 3:2", "2 2:1"), ".svm")
  expect_identical(dim(read_libsvm(one)$x), c(2L, 3L))
  expect_identical(dim(read_libsvm(one, index_base = 0)$x), c(2L, 4L))
  expect_identical(dim(read_libsvm(one, n_features = 7)$x), c(2L, 7L))
  expect_error(read_libsvm(one, n_features = 2), "line 1, column 7: feature index 3 is beyond n_features = 2")
  expect_error(read_libsvm(zero, index_base = 1), "line 1, column 3: feature index 0 in a file read with 1-based")
  q <- read_libsvm(write_lines(c("3 qid:1 1:1", "2 qid:1 2:1", "1 2:3"), ".svm"))
  expect_identical(q$qid, c(1, 1, NA))
  expect_identical(levels(q$y), c("1", "2", "3"))
  # +1 and 1 are one class; numeric levels sort as numbers
  expect_identical(levels(read_libsvm(write_lines(c("+1 1:1", "1 1:2", "10 1:1", "-1 1:1", "9 1:1"), ".svm"))$y),
                   c("-1", "1", "9", "10"))
})

test_that("read_libsvm errors name the file, line and column", {
  expect_error(read_libsvm(write_lines(c("1 1:1", "2 4:1 2:1 4:2"), ".svm")), "line 2, column 11: feature 4 appears twice")
  expect_error(read_libsvm(write_lines(c("1 1:1", "", "1,3 1:1"), ".svm")), "line 3, column 1: multi-label")
  expect_error(read_libsvm(write_lines(c("1 1:x"), ".svm")), "line 1, column 5: the value 'x' of feature 1")
  f <- write_lines(c("1 1:1", "spam 2:1"), ".svm")
  expect_error(read_libsvm(f, labels = "numeric"), "line 2: the label 'spam' is not a number", fixed = TRUE)
  expect_error(read_libsvm(f, labels = "numeric"), basename(f), fixed = TRUE)
  expect_error(read_libsvm(write_lines(c("1 1:1", "1 2:1"), ".svm", "gzip"), n_features = 1), "line 2, column 3")
  expect_error(read_libsvm(write_lines("# nothing", ".svm")), "no samples")
  expect_error(read_libsvm(file.path(tempdir(), "no-such-file.svm")), "cannot find the file")
  expect_error(read_libsvm(f, index_base = 2), "index_base must be 0, 1 or NULL")
})

test_that("read_libsvm's matrix goes straight into select_features", {
  d <- random_sparse(n = 60, p = 15, seed = 5)
  got <- read_libsvm(write_lines(libsvm_lines(d$x, d$y), ".libsvm"))
  dense <- d$x
  colnames(dense) <- colnames(got$x)
  expect_identical(select_features(got$x, got$y, k = 4, nbins = 3, backend = "cpu")$selection,
                   select_features(dense, factor(d$y), k = 4, nbins = 3, backend = "cpu")$selection)
})

arff_weather <- c(
  "% the weather, every type",
  "@RELATION 'the weather'",
  "@attribute outlook {sunny, 'over cast', rainy}",
  "@Attribute \"temp (F)\" REAL",
  "@attribute count integer",
  "@attribute note string",
  "@attribute day date yyyy-MM-dd",
  "@attribute play {yes,no}",
  "@DATA",
  "sunny, 85.5, 3, 'it\\'s hot', 2024-06-01, no",
  "'over cast',?,?, plain, ?, yes  % a comment",
  "{0 rainy, 2 -7, 5 yes}")

test_that("read_arff reads every type, dense and sparse, with the class last by default", {
  d <- read_arff(write_lines(arff_weather, ".arff"))
  expect_identical(d$relation, "the weather")
  expect_identical(names(d$x), c("outlook", "temp (F)", "count", "note", "day"))
  expect_identical(d$x$outlook, factor(c("sunny", "over cast", "rainy"), levels = c("sunny", "over cast", "rainy")))
  expect_identical(d$x$`temp (F)`, c(85.5, NA, 0))
  expect_identical(d$x$count, c(3L, NA, -7L))
  expect_identical(d$x$note, c("it's hot", "plain", ""))
  expect_identical(d$x$day, c("2024-06-01", NA, ""))
  expect_identical(d$y, factor(c("no", "yes", "yes"), levels = c("yes", "no")))
  expect_identical(read_arff(write_lines(arff_weather, ".arff", "xz")), d)
  by_name <- read_arff(write_lines(arff_weather, ".arff"), class = "outlook")
  expect_identical(by_name$y, d$x$outlook)
  expect_identical(names(by_name$x), c("temp (F)", "count", "note", "day", "play"))
  expect_identical(read_arff(write_lines(arff_weather, ".arff"), class = 1)$y, d$x$outlook)
  none <- read_arff(write_lines(arff_weather, ".arff"), class = FALSE)
  expect_null(none$y)
  expect_identical(ncol(none$x), 6L)
  expect_error(read_arff(write_lines(arff_weather, ".arff"), class = "Play"), "names no column")
  expect_error(read_arff(write_lines(arff_weather, ".arff"), class = 9), "an index from 1 to 6")
})

test_that("an ARFF file written from a data frame reads back, dense or sparse", {
  df <- with_seed(6, data.frame(a = round(rnorm(20), 4), b = factor(sample(c("x", "y z"), 20, TRUE), levels = c("x", "y z")),
                                c = sample(0:3, 20, TRUE), cls = factor(sample(c("p", "q"), 20, TRUE))))
  df$a[c(2, 7)] <- NA
  header <- c("@relation r", "@attribute a numeric", "@attribute b {x, 'y z'}", "@attribute c integer",
              "@attribute cls {p, q}", "@data")
  value <- function(v) ifelse(is.na(v), "?", ifelse(grepl(" ", v), sprintf("'%s'", v), as.character(v)))
  dense <- do.call(paste, c(lapply(df, value), sep = ","))
  sparse <- vapply(seq_len(nrow(df)), function(r) {
    fields <- vapply(df[r, ], function(v) value(v[[1]]), "")
    keep <- which(!fields %in% c("0", "x", "p"))  # the defaults of a sparse row
    paste0("{", paste(sprintf("%d %s", keep - 1, fields[keep]), collapse = ", "), "}")
  }, "")
  for (rows in list(dense, sparse)) {
    got <- read_arff(write_lines(c(header, rows), ".arff"))
    expect_identical(got$x, df[, 1:3])
    expect_identical(got$y, df$cls)
  }
  sel <- select_features(got$x[, c("b", "c")], got$y, k = 2, backend = "cpu")
  expect_identical(sel$selection$feature, select_features(df[, c("b", "c")], df$cls, k = 2, backend = "cpu")$selection$feature)
})

test_that("read_arff errors name the file, line and column", {
  head <- c("@relation r", "@attribute a numeric", "@attribute b {x,y}", "@data")
  f <- write_lines(c(head, "1,x", "2,z"), ".arff")
  expect_error(read_arff(f), paste0(basename(f), ": line 6, column 3: 'z' is not a level of attribute 'b'"), fixed = TRUE)
  expect_error(read_arff(write_lines(c(head, "1"), ".arff")), "line 5, column 2: 1 values for 2 attributes")
  expect_error(read_arff(write_lines(c(head, "abc,x"), ".arff")), "line 5, column 1: 'abc' is not a number")
  expect_error(read_arff(write_lines(head[1:3], ".arff")), "no @data")
  expect_error(read_arff(write_lines(head, ".arff")), "no instances")
  expect_error(read_arff(write_lines(c("@attribute a {x,y}", "@data", "x"), ".arff")), "the only column")
})

test_that("read_delimited reads CSV and TSV with a class column", {
  df <- data.frame(g1 = c(1.5, 0.3, 2.1, NA), class = c("t", "n", "t", "n"), g2 = c(0L, 1L, 0L, 2L))
  f <- tempfile(fileext = ".csv")
  utils::write.csv(df, f, row.names = FALSE)
  d <- read_delimited(f)
  expect_identical(names(d), c("x", "y"))
  expect_identical(d$x, df[, c("g1", "g2")])
  expect_identical(d$y, factor(df$class))
  expect_identical(read_delimited(f, class = "g2")$y, df$g2)
  expect_identical(read_delimited(f, class = 1)$y, df$g1)
  expect_null(read_delimited(f, class = FALSE)$y)
  tsv <- write_lines(c("a\tb\tlabel", "1\t2\tu", "3\t4\tv"), ".tsv", "gzip")
  got <- read_delimited(tsv)  # no 'class' column: the last one
  expect_identical(got$y, factor(c("u", "v")))
  expect_identical(got$x, data.frame(a = c(1L, 3L), b = c(2L, 4L)))
  headless <- read_delimited(write_lines(c("1,2,u", "3,4,v"), ".csv"), header = FALSE)
  expect_identical(names(headless$x), c("V1", "V2"))
  expect_error(read_delimited(write_lines(c("a,b,class", "1,2,u", "3,4", "5,6,v"), ".csv")),
               "line 3 has 2 fields, but the first line has 3")
  expect_error(read_delimited(write_lines(c("a,b", "1,2,u"), ".csv")), "line 2 has 3 fields")
  expect_error(read_delimited(write_lines("a,b,class", ".csv")), "no data lines")
  expect_error(read_delimited(f, sep = ";;"), "sep must be one character")
})

test_that("read_delimited takes a sample ID column out, detected or named", {
  text <- c("sample,class,g1,g2", "p1,t,1.5,0", "p2,n,0.3,1", "p3,t,2.1,0")
  f <- write_lines(text, ".csv")
  expect_message(d <- read_delimited(f), "taking column 'sample' as the sample IDs.*id = FALSE keeps it")
  expect_identical(names(d$x), c("g1", "g2"))
  expect_identical(rownames(d$x), c("p1", "p2", "p3"))
  expect_identical(d$y, factor(c("t", "n", "t")))
  expect_silent(kept <- read_delimited(f, id = FALSE))
  expect_identical(names(kept$x), c("sample", "g1", "g2"))
  expect_identical(read_delimited(f, id = "sample"), suppressMessages(read_delimited(f)))
  expect_identical(read_delimited(f, id = 1), suppressMessages(read_delimited(f)))
  # text values all different, whatever the name; numbers only under an ID's name (any case)
  ids <- write_lines(c("who,g1,class", "ann,1.5,t", "bob,0.2,n"), ".csv")
  expect_message(expect_identical(rownames(read_delimited(ids)$x), c("ann", "bob")), "taking column 'who'")
  numbered <- write_lines(c("Sample_ID,g1,class", "39,1.5,t", "40,0.2,n", "41,0.7,n"), ".csv")
  expect_message(expect_identical(rownames(read_delimited(numbered)$x), c("39", "40", "41")), "'Sample_ID'")
  expect_silent(plain <- read_delimited(write_lines(c("n,g1,class", "39,1.5,t", "40,0.2,n"), ".csv")))
  expect_identical(names(plain$x), c("n", "g1"))
  # repeated or missing values are no IDs: detection passes, a named id is an error
  twice <- write_lines(c("id,g1,class", "a,1.5,t", "a,0.2,n"), ".csv")
  expect_identical(names(expect_silent(read_delimited(twice))$x), c("id", "g1"))
  expect_error(read_delimited(twice, id = "id"), "the ID column 'id' has repeated values: 'a'")
  expect_error(read_delimited(f, id = "class"), "id = 'class' is the class column")
  expect_error(read_delimited(f, id = "nope"), "id = 'nope' names no column")
  # write.csv() with row names: an empty first name
  df <- data.frame(g1 = c(1.5, 0.3), class = c("t", "n"), row.names = c("r1", "r2"))
  rn <- tempfile(fileext = ".csv")
  utils::write.csv(df, rn)
  expect_message(got <- read_delimited(rn), "taking column '' as the sample IDs")
  expect_identical(got$x, df[, "g1", drop = FALSE])
  # the class is never the ID; a lone feature stays a feature
  expect_silent(read_delimited(write_lines(c("class,g1", "a,1", "b,2"), ".csv")))
  expect_identical(names(read_delimited(write_lines(c("id,class", "a,u", "b,v"), ".csv"))$x), "id")
})

test_that("read_delimited and read_arff apply the rule of integer columns, with overrides", {
  n <- 30
  values <- with_seed(4, list(wide = sample(0:200, n), narrow = sample(0:3, n, replace = TRUE),
                              real = round(rnorm(n), 2), class = rep(c("a", "b"), n / 2)))
  f <- tempfile(fileext = ".csv")
  utils::write.csv(as.data.frame(values), f, row.names = FALSE)
  expect_message(d <- read_delimited(f),
                 "Reading 1 column of whole numbers with more than 10 distinct values \\('wide'\\) as numbers")
  expect_identical(d$x$wide, as.double(values$wide))
  expect_identical(d$x$narrow, values$narrow)
  expect_identical(d$x$real, values$real)
  expect_silent(cat_all <- read_delimited(f, categorical = TRUE))
  expect_identical(cat_all$x$wide, factor(values$wide))
  expect_identical(cat_all$x$real, factor(values$real))
  expect_silent(some <- read_delimited(f, categorical = "wide", numeric = 2))
  expect_identical(some$x$wide, factor(values$wide))
  expect_identical(some$x$narrow, as.double(values$narrow))
  expect_identical(read_delimited(f, numeric = TRUE)$x, read_delimited(f, categorical = FALSE)$x)
  expect_identical(read_delimited(f, numeric = TRUE)$x$narrow, as.double(values$narrow))
  expect_error(read_delimited(f, categorical = "wide", numeric = "wide"), "categorical and numeric both name 'wide'")
  expect_error(read_delimited(f, numeric = "class", class = 1), "numeric: 'class' hold text")
  expect_error(read_delimited(f, categorical = "absent"), "categorical: no feature named 'absent'")
  # the jobs then give what the types say: factors stay categories even with nbins
  sel <- select_features(cat_all$x, cat_all$y, k = 2, nbins = 4, backend = "cpu")
  expect_identical(sel$selection, select_features(as.data.frame(lapply(values[1:3], factor)), values$class, k = 2,
                                                  backend = "cpu")$selection)
  arff <- write_lines(c("@relation r", "@attribute wide integer", "@attribute narrow integer",
                        "@attribute c {a, b}", "@data",
                        sprintf("%d,%d,%s", values$wide, values$narrow, values$class)), ".arff")
  expect_message(a <- read_arff(arff), "Reading 1 column of whole numbers .*'wide'")
  expect_identical(a$x, data.frame(wide = as.double(values$wide), narrow = values$narrow))
  expect_identical(read_arff(arff, categorical = "narrow", numeric = "wide")$x$narrow, factor(values$narrow))
  expect_identical(read_features(arff, categorical = 2, numeric = 1), read_arff(arff, categorical = 2, numeric = 1))
  expect_identical(read_features(f, categorical = TRUE), read_delimited(f, categorical = TRUE))
})

test_that("read_libsvm names features by a vocabulary, given or read from a file", {
  svm <- write_lines(c("1 1:1 3:2", "2 2:1", "1 3:1"), ".libsvm")
  names <- c("apple", "banana", "cherry", "date")
  d <- read_libsvm(svm, vocabulary = names)
  expect_identical(colnames(d$x), names)  # the vocabulary sets the width
  expect_identical(unname(as.matrix(d$x)[, 1:3]), unname(as.matrix(read_libsvm(svm)$x)))
  vocab <- write_lines(names, ".txt", "gzip")
  expect_identical(read_libsvm(svm, vocabulary = vocab), d)
  expect_identical(read_features(svm, vocabulary = vocab), d)
  zero <- write_lines(c("1 0:1 2:2", "2 1:1"), ".svm")
  expect_identical(colnames(read_libsvm(zero, vocabulary = names[1:3])$x), names[1:3])
  expect_error(read_libsvm(svm, vocabulary = names[1:2]), "index 3 is beyond the vocabulary's 2 names")
  expect_error(read_libsvm(svm, vocabulary = names, n_features = 3), "n_features \\(3\\) differs from the vocabulary's 4")
  expect_error(read_libsvm(svm, vocabulary = file.path(tempdir(), "absent.txt")), "cannot find the file")
  expect_error(read_libsvm(svm, vocabulary = 1:3), "vocabulary must be the features' names")
})

test_that("read_features reads each format with its reader, told by the name or given", {
  rows <- c("1.5,0,t", "0.3,1,n", "2.1,0,t")
  csv <- write_lines(c("g1,g2,class", rows), ".csv")
  expect_identical(read_features(csv), read_delimited(csv))
  expect_identical(read_features(csv, class = "g2"), read_delimited(csv, class = "g2"))
  tab <- write_lines(gsub(",", "\t", c("g1,g2,class", rows)), ".TAB", "xz")
  expect_identical(read_features(tab), read_delimited(tab))
  expect_identical(read_features(tab)$y, factor(c("t", "n", "t")))
  arff <- write_lines(c("@relation r", "@attribute a numeric", "@attribute c {x, y}", "@data", "1, x", "2, y"),
                      ".arff", "bzip2")
  expect_identical(read_features(arff), read_arff(arff))
  svm <- write_lines(c("1 0:1 2:1", "2 1:1"), ".svmlight", "gzip")
  expect_identical(read_features(svm), read_libsvm(svm))
  expect_identical(read_features(svm, index_base = 0), read_libsvm(svm, index_base = 0))
  odd <- write_lines(c("1 1:1 2:1", "2 2:1"), ".txt")
  expect_identical(read_features(odd, "libsvm"), read_libsvm(odd))
  expect_identical(read_features(csv, "csv"), read_features(csv))
  expect_error(read_features(odd), "cannot tell the format of '.*txt' from its name; give the format")
  expect_error(read_features(csv, "xls"), "format must be one of 'auto', 'arff', 'csv', 'tsv', 'libsvm'")
  expect_error(read_features(svm, class = 1), "a class column is not for LibSVM files")
  expect_error(read_features(csv, index_base = 0), "the index base is for LibSVM files only")
  expect_error(read_features(csv, vocabulary = c("a", "b")), "a vocabulary is for LibSVM files only")
  expect_error(read_features(arff, id = 1), "an ID column is for CSV and TSV files only")
  expect_error(read_features(svm, categorical = TRUE), "categorical and numeric columns are for ARFF, CSV and TSV")
  expect_error(read_features(c(csv, csv)), "file must be one path")
  expect_error(read_features(file.path(tempdir(), "absent.arff")), "cannot find the file")
})

# The command line, run as a user would, with this R's packages.
run_cli <- function(...) {
  script <- system.file("exec", "fsgpu", package = "fsgpu")
  out <- tempfile()
  err <- tempfile()
  status <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c(shQuote(script), ...), stdout = out,
                                     stderr = err, env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))))
  list(status = status, out = readLines(out), err = readLines(err))
}

test_that("the command line selects features of ARFF, CSV and LibSVM files", {
  skip_if(system.file("exec", "fsgpu", package = "fsgpu") == "", "fsgpu is not installed")
  d <- data_informative(n = 90, p = 12, classes = 3, informative = 3, seed = 7)
  expected <- as.data.frame(select_features(d$x, d$y, k = 4, nbins = 5, method = "mrmr", backend = "cpu"))
  csv <- tempfile(fileext = ".csv")
  utils::write.csv(data.frame(class = d$y, d$x), csv, row.names = FALSE)
  res <- run_cli("-m", "mrmr", "-k", "4", "--bins=5", "--backend", "cpu", csv)
  expect_identical(res$status, 0L)
  got <- utils::read.csv(text = res$out)
  expect_identical(names(got), c("rank", "feature", "index", "score"))
  expect_identical(got$feature, expected$feature)
  expect_equal(got$score, expected$score, tolerance = 1e-12)
  expect_true(any(grepl("MRMR selection: 4 of 12 features", res$err)))

  arff <- tempfile(fileext = ".arff.gz")
  con <- gzfile(arff, "w")
  writeLines(c("@relation r", sprintf("@attribute %s numeric", colnames(d$x)),
               sprintf("@attribute y {%s}", paste(levels(d$y), collapse = ",")), "@data",
               do.call(paste, c(as.data.frame(format(d$x, digits = 17)), list(as.character(d$y)), sep = ","))), con)
  close(con)
  output <- tempfile(fileext = ".csv")
  res <- run_cli("-m", "mrmr", "-k", "4", "-b", "5", "-q", "-o", output, arff)
  expect_identical(res$status, 0L)
  expect_identical(res$err, character())
  expect_identical(utils::read.csv(output)$feature, expected$feature)

  svm <- write_lines(c("1 1:1 2:1", "2 1:1", "1 2:1 3:1", "2 3:1"), ".txt")
  res <- run_cli("--format", "libsvm", "-k", "2", "-q", svm)
  expect_identical(res$status, 0L)
  expect_identical(utils::read.csv(text = res$out)$rank, 1:2)
})

test_that("the command line bins integer data, takes ID columns out and names LibSVM features", {
  skip_if(system.file("exec", "fsgpu", package = "fsgpu") == "", "fsgpu is not installed")
  d <- with_seed(12, {
    y <- factor(rep_len(c("a", "b", "c"), 60))
    x <- matrix(rpois(60 * 8, 150), 60, 8, dimnames = list(NULL, paste0("g", 1:8)))
    x[, 1:3] <- x[, 1:3] + 30L * as.integer(y)
    list(x = x, y = y)
  })
  csv <- tempfile(fileext = ".csv")
  utils::write.csv(data.frame(sample_id = 101:160, class = d$y, d$x), csv, row.names = FALSE)
  xd <- d$x
  storage.mode(xd) <- "double"
  expected <- as.data.frame(select_features(xd, d$y, k = 4, nbins = 6, backend = "cpu"))
  res <- run_cli("-k", "4", "-b", "6", "--backend", "cpu", csv)
  expect_identical(res$status, 0L)
  got <- utils::read.csv(text = res$out)
  expect_identical(got$feature, expected$feature)
  expect_identical(got$index, expected$index)  # sample_id is no feature
  expect_true(any(grepl("taking column 'sample_id' as the sample IDs.*--no-id keeps it", res$err)))
  expect_true(any(grepl("Reading 8 columns of whole numbers.*--categorical all", res$err)))
  # --no-id: the IDs are a feature (binned: many values); --id by index is the detection's choice
  res <- run_cli("-k", "9", "-m", "mrmr", "-b", "6", "--no-id", "-q", csv)
  expect_true("sample_id" %in% utils::read.csv(text = res$out)$feature)
  expect_identical(run_cli("-k", "4", "-b", "6", "--id", "1", "-q", csv)$out,
                   run_cli("-k", "4", "-b", "6", "-q", csv)$out)
  # categories whatever --bins says, as factors; --numeric as numbers
  factors <- as.data.frame(lapply(as.data.frame(d$x), factor))
  want <- as.data.frame(select_features(factors, d$y, k = 3, backend = "cpu"))
  res <- run_cli("-k", "3", "-b", "6", "--categorical", "all", "-q", csv)
  expect_identical(utils::read.csv(text = res$out)$feature, want$feature)
  mixed <- as.data.frame(xd)
  mixed$g2 <- factor(mixed$g2)
  want <- as.data.frame(select_features(mixed, d$y, k = 3, nbins = 6, backend = "cpu"))
  res <- run_cli("-k", "3", "-b", "6", "--categorical", "g2", "-q", csv)
  expect_identical(utils::read.csv(text = res$out)$feature, want$feature)
  res <- run_cli("-k", "3", "-b", "6", "--categorical", "4", "--numeric", "g1,g3", "-q", csv)  # column 4: g2
  expect_identical(utils::read.csv(text = res$out)$feature, want$feature)
  # LibSVM with a vocabulary
  svm <- write_lines(c("1 1:1 2:1", "2 1:1", "1 2:1 3:1", "2 3:1"), ".libsvm")
  vocab <- write_lines(c("red", "green", "blue"), ".txt")
  res <- run_cli("-k", "2", "-q", "--vocabulary", vocab, svm)
  expect_identical(res$status, 0L)
  expect_true(all(utils::read.csv(text = res$out)$feature %in% c("red", "green", "blue")))
  bad <- list(list(c("--vocabulary", vocab, csv), "a vocabulary is for LibSVM files only"),
              list(c("--id", "1", svm), "an ID column is for CSV and TSV files only"),
              list(c("--id", "1", "--no-id", csv), "--id and --no-id exclude each other"),
              list(c("--categorical", "all", "--numeric", "all", csv), "exclude each other"),
              list(c("--categorical", "a,,b", csv), "--categorical must be column names or indices"),
              list(c("--categorical", "g1", svm), "categorical and numeric columns are for ARFF, CSV and TSV"))
  for (case in bad) {
    res <- do.call(run_cli, as.list(case[[1]]))
    expect_identical(res$status, 2L, info = paste(case[[1]], collapse = " "))
    expect_true(any(grepl(case[[2]], res$err, fixed = TRUE)), info = paste(res$err, collapse = "\n"))
  }
  res <- run_cli("--categorical", "nothere", "-q", csv)
  expect_identical(res$status, 1L)
  expect_true(any(grepl("categorical: no feature named 'nothere'", res$err, fixed = TRUE)))
})

test_that("the command line gives the textbook golub genes, with no sample_id (if the file is here)", {
  skip_if(system.file("exec", "fsgpu", package = "fsgpu") == "", "fsgpu is not installed")
  golub <- Sys.getenv("FSGPU_GOLUB", "/work/shared/data/datamicroarray/golub.csv.gz")
  skip_if_not(file.exists(golub), "the golub data file is not here")
  res <- run_cli("-m", "jmi", "-k", "20", "-b", "8", "--backend", "cpu", golub)
  expect_identical(res$status, 0L)
  got <- utils::read.csv(text = res$out)
  expect_false("sample_id" %in% got$feature)
  raw <- utils::read.csv(gzfile(golub), check.names = FALSE)
  x <- as.matrix(raw[, -(1:2)])
  storage.mode(x) <- "double"
  expected <- as.data.frame(select_features(x, factor(raw$class), k = 20, nbins = 8, backend = "cpu"))
  expect_identical(got$feature, expected$feature)
  expect_identical(got$feature[1], "M23197_at")
})

test_that("the command line explains bad arguments and input, with non-zero status", {
  skip_if(system.file("exec", "fsgpu", package = "fsgpu") == "", "fsgpu is not installed")
  help <- run_cli("--help")
  expect_identical(help$status, 0L)
  expect_match(help$out[1], "^Usage: fsgpu")
  bad <- list(list(c("--bogus", "a.csv"), 2L, "unknown option '--bogus'"),
              list(character(), 2L, "no input file"),
              list(c("-k", "two", "a.csv"), 2L, "--select must be a whole number"),
              list(c("-m", "xyz", "a.csv"), 2L, "--method must be one of"),
              list("a.dat", 2L, "cannot tell the format"),
              list("-k", 2L, "-k needs a value"),
              list(c("--class", "y", "a.libsvm"), 2L, "class column is not for LibSVM"),
              list(c("--index-base", "0", "a.csv"), 2L, "index base is for LibSVM files only"),
              list(c("--format", "xls", "a.csv"), 2L, "format must be one of"),
              list(file.path(tempdir(), "absent.csv"), 1L, "cannot find the file"))
  for (case in bad) {
    res <- do.call(run_cli, as.list(case[[1]]))
    expect_identical(res$status, case[[2]], info = paste(case[[1]], collapse = " "))
    expect_true(any(grepl(case[[3]], res$err, fixed = TRUE)), info = paste(res$err, collapse = "\n"))
  }
  broken <- write_lines(c("1 1:1", "2 1:x"), ".libsvm")
  res <- run_cli(broken)
  expect_identical(res$status, 1L)
  expect_true(any(grepl("line 2, column 5", res$err, fixed = TRUE)))
  res <- run_cli("-k", "50", "-q", write_lines(c("1 1:1", "2 2:1"), ".libsvm"))
  expect_identical(res$status, 1L)
  expect_true(any(grepl("k must be between 1 and 2", res$err, fixed = TRUE)))
})

test_that("a stray huge index in a small LibSVM file needs n_features", {
  f <- tempfile(fileext = ".libsvm")
  writeLines(c("1 1:0.5 2000000000:1", "0 2:1"), f)
  expect_error(read_libsvm(f), "give n_features")
})

test_that("a column named in numeric = or categorical = is never taken as the sample IDs", {
  tf <- tempfile(fileext = ".csv")
  on.exit(unlink(tf))
  writeLines(c("id,a,class", "s1,1.5,x", "s2,2.5,y", "s3,3.5,x", "s4,4.5,y"), tf)
  expect_message(read_delimited(tf), "taking column 'id' as the sample IDs")
  kept <- read_delimited(tf, categorical = "id")
  expect_true("id" %in% colnames(kept$x))
})
