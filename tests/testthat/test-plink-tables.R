# read_plink()'s .bim and .fam tables: plain ones are read in C++, anything else by
# utils::read.table(), with the same data frames and the same errors.

reference_table <- function(file, columns, classes) {
  utils::read.table(file, header = FALSE, colClasses = classes, col.names = columns, comment.char = "", quote = "",
                    stringsAsFactors = FALSE)
}

bim_columns <- c("chr", "snp", "cm", "bp", "allele1", "allele2")
bim_classes <- c("character", "character", "numeric", "numeric", "character", "character")
fam_columns <- c("family", "id", "father", "mother", "sex", "phenotype")
fam_classes <- c("character", "character", "character", "character", "integer", "character")

test_that("plain .bim and .fam tables are read as read.table() reads them", {
  bim <- tempfile(fileext = ".bim")
  # Plain integers are parsed in C++ (signs, leading zeros, -0; 16 digits go to R's parser).
  writeLines(c("1\trs1\t0\t100\tA\tG", "  X  rs_2 0.25\t2e5 NA C", "", "MT\tNA\t-1.5\t0x10\tT\tTT",
               "\t26 rs4 NA 7 A G   ", "1 rs5 -0 +0042 A G", "1 rs6 -17 1234567890123456 A G",
               "1 rs7 999999999999999 -999999999999999 A G"), bim)
  fast <- fsgpu:::fsgpu_read_plink_table(bim, bim_columns, bim_classes)
  expect_false(is.null(fast))
  expect_identical(fast, reference_table(bim, bim_columns, bim_classes))
  expect_identical(1 / fast$cm[5], -Inf)  # -0 keeps its sign, as R reads it
  fam <- tempfile(fileext = ".fam")
  writeLines(c("f1 s1 0 0 1 -9", "f2 s2 s1 0 NA 2", "f3 s3 0 0 0 case", "f4 s4 0 0 +02 1", "f5 s5 0 0 -0 1"), fam)
  fast <- fsgpu:::fsgpu_read_plink_table(fam, fam_columns, fam_classes)
  expect_false(is.null(fast))
  expect_identical(fast, reference_table(fam, fam_columns, fam_classes))
  # No newline after the last line (read.table() warns of it; the table is the same).
  cat("1 rs9 0 5 A G", file = bim)
  expect_identical(fsgpu:::fsgpu_read_plink_table(bim, bim_columns, bim_classes),
                   suppressWarnings(reference_table(bim, bim_columns, bim_classes)))
})

test_that("other tables go to read.table(): a short line, a carriage return, a word for a number", {
  bim <- tempfile(fileext = ".bim")
  for (lines in list(c("1 rs1 0 100 A G", "1 rs2 0 200 A"), c("1 rs1 0 100 A G\r", "1 rs2 0 200 A G\r"),
                     c("1 rs1 zero 100 A G"), c("1 rs1 0 100 A G extra"), character(0))) {
    writeLines(lines, bim)
    expect_null(fsgpu:::fsgpu_read_plink_table(bim, bim_columns, bim_classes))
  }
  fam <- tempfile(fileext = ".fam")
  writeLines(c("f1 s1 0 0 1.5 -9"), fam)
  expect_null(fsgpu:::fsgpu_read_plink_table(fam, fam_columns, fam_classes))
  # Through read_plink(): CRLF files read as before, a broken .bim is an error naming it.
  prefix <- tempfile()
  g <- matrix(c(0L, 1L, 2L, NA, 2L, 1L, 0L, 0L), 4, 2, dimnames = list(paste0("s", 1:4), c("a", "b")))
  write_plink(prefix, g)
  plain <- read_plink(prefix)
  writeLines(paste0(readLines(paste0(prefix, ".bim")), "\r"), paste0(prefix, ".bim"))
  expect_identical(read_plink(prefix), plain)
  writeLines(c("1 a 0 1 A G", "1 b 0"), paste0(prefix, ".bim"))
  expect_error(read_plink(prefix), "cannot read .*\\.bim")
})

test_that("packed genotypes give the matrix's gains with and without objects left out and missing levels", {
  g <- with_seed(8, matrix(sample(0:2, 45 * 7, replace = TRUE), 45, 7,
                           dimnames = list(paste0("s", 1:45), paste0("rs", 1:7))))
  g[c(5, 60, 200)] <- NA
  prefix <- write_plink(tempfile(), g)
  packed <- read_plink(prefix, packed = TRUE)$genotypes
  y <- factor(rep(c("a", "b", "b"), length.out = 45))
  y_na <- replace(y, c(2, 30), NA)
  for (case in list(list(y = y, missing = "exclude"), list(y = y_na, missing = "exclude"),
                    list(y = y, missing = "level"), list(y = y_na, missing = "level"))) {
    run <- function(x, ...) suppressMessages(find_interactions(x, case$y, dimensions = 2, contrast = FALSE,
                                                               missing = case$missing, backend = "cpu", ...))
    expect_identical(run(packed)$scores$gain, run(g, levels = 3)$scores$gain,
                     info = case$missing)
  }
})
