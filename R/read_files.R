# Readers of the field's file formats: LibSVM/SVMlight, Weka ARFF and delimited text (CSV,
# TSV). All return list(x =, y =), samples in rows, ready for select_features(d$x, d$y) and
# the other jobs. The LibSVM and ARFF parsers are C++ (src/core/text_formats.cpp) working on
# the file's bytes, read here through a connection that decompresses gzip, bzip2 and xz.

#' Read a LibSVM / SVMlight file
#'
#' Reads sparse data in the text format of LibSVM and SVMlight, one sample per line:
#' `<label> [qid:<n>] <index>:<value> <index>:<value> ... [# comment]`, into a sparse matrix
#' with samples in rows and features in columns, plus the labels. Files compressed with gzip,
#' bzip2 or xz are decompressed on the fly.
#'
#' The parser is strict where the format is ambiguous and says where: an error names the file,
#' line and column. Blank lines and lines holding only a `#` comment are skipped; `#` starts a
#' comment anywhere; fields are separated by spaces or tabs; Windows line ends (CRLF) and
#' trailing spaces are fine. Indices may come in any order within a line, but an index given
#' twice on one line is an error. Explicit zeros (`5:0`) are not stored, though they count
#' for the width. Multi-label lines (`1,3 ...`) are an error: fsgpu's jobs take one class per
#' sample.
#'
#' @param file Path to the file (`.gz`, `.bz2` and `.xz` are decompressed).
#' @param labels `"factor"` (default): the labels as a factor; when every label is a number the
#'   levels are those numbers in increasing order (so `+1` and `1` are one class), otherwise the
#'   distinct labels sorted (in C locale order). `"numeric"`: the labels as numbers, an error
#'   naming the line when one is not a number.
#' @param index_base `1` (LibSVM's convention) or `0`; the default, `NULL`, reads the indices as
#'   0-based when some index is 0 and as 1-based otherwise (as scikit-learn's
#'   `load_svmlight_file()` does).
#' @param n_features The number of columns, for files that must have the same width (a training
#'   and a test file whose last features do not occur in both); an index beyond it is an error.
#'   Default: the largest index in the file.
#' @return A list with `x`, a `Matrix::dgCMatrix` with one row per sample and one column per
#'   feature, named `f<index>` by the indices of the file (`f1`, `f2`, ... for 1-based files);
#'   `y`, the labels (see `labels`); and, when some line has one, `qid`, the query ids (`NA`
#'   where a line has none).
#' @seealso [read_arff()] and [read_delimited()], which return the same shape.
#' @examples
#' file <- tempfile(fileext = ".libsvm")
#' writeLines(c("# two classes, four features",
#'              "+1 1:0.5 3:2",
#'              "-1 2:1 4:3.5 # a comment",
#'              "+1 4:1 1:0.25"), file)
#' d <- read_libsvm(file)
#' d$x
#' d$y
#' # the same file as a test set of six features
#' dim(read_libsvm(file, n_features = 6)$x)
#' @export
read_libsvm <- function(file, labels = c("factor", "numeric"), index_base = NULL, n_features = NULL) {
  labels <- match.arg(labels)
  base <- if (is.null(index_base)) -1L else {
    if (!identical(as.numeric(index_base), 0) && !identical(as.numeric(index_base), 1))
      stop("index_base must be 0, 1 or NULL (detect)", call. = FALSE)
    as.integer(index_base)
  }
  width <- if (is.null(n_features)) -1 else check_count(n_features, "n_features", min = 0)
  bytes <- read_file_bytes(file)
  parsed <- with_file_context(file, fsgpu_parse_libsvm(bytes, base, width))
  if (parsed$dim[1L] == 0L) stop(file, ": no samples (only blank or comment lines)", call. = FALSE)
  loadNamespace("Matrix")  # methods::new() finds the class once Matrix is loaded
  x <- methods::new("dgCMatrix", i = parsed$i, p = parsed$p, x = parsed$x, Dim = parsed$dim,
                    Dimnames = list(NULL, paste0("f", seq_len(parsed$dim[2L]) - 1L + parsed$index_base)))
  out <- list(x = x, y = libsvm_labels(parsed$labels, parsed$lines, labels, file))
  if (!is.null(parsed$qid)) out$qid <- parsed$qid
  out
}

# LibSVM labels as a factor or as numbers; lines are the samples' lines, for the message.
libsvm_labels <- function(text, lines, as, file) {
  numbers <- suppressWarnings(as.numeric(text))
  numeric <- is.finite(numbers)
  if (as == "numeric") {
    if (!all(numeric)) {
      bad <- which(!numeric)[1L]
      stop(sprintf("%s: line %.0f: the label '%s' is not a number (labels = \"numeric\")", file, lines[bad],
                   text[bad]), call. = FALSE)
    }
    return(numbers)
  }
  if (all(numeric)) factor(numbers) else factor(text, levels = sort(unique(text), method = "radix"))
}

#' Read a Weka ARFF file
#'
#' Reads the Attribute-Relation File Format of Weka (and of CUDA-JMI and FEAST's tools) into
#' a data frame with one row per instance, and takes the class attribute out of it. Dense
#' (`1.5,red,?`) and sparse (`{0 1.5, 3 red}`) instances can be mixed; files compressed with
#' gzip, bzip2 or xz are decompressed on the fly. Errors name the file, line and column.
#'
#' Attribute types become columns as follows: `numeric` and `real` are double; `integer` is
#' integer (which fsgpu's jobs treat as categories, not binned: convert with [as.numeric()] to
#' bin them); nominal `{a, b, ...}` is a factor with the declared levels in declared order;
#' `string` and `date` are character (dates are not converted). `?` is a missing value (`NA`).
#' Keywords and type names are case-insensitive; names and values may be quoted with `'` or
#' `"` (with backslash escapes), which also allows spaces in them; `%` starts a comment. In a
#' sparse instance the attributes left out are 0, the first level of a nominal attribute, or an
#' empty string, as in Weka. Relational attributes and instance weights are not supported. A
#' sparse file becomes a dense data frame: for large sparse data use LibSVM files and
#' [read_libsvm()].
#'
#' @param file Path to the file (`.gz`, `.bz2` and `.xz` are decompressed).
#' @param class The class attribute, by name or index: it becomes `y` and leaves `x`. The
#'   default, `NULL`, takes the last attribute, as Weka and CUDA-JMI do; `FALSE` takes none
#'   (`y` is `NULL`), for the unsupervised jobs such as [knn_graph()] and [mi_matrix()].
#' @return A list with `x`, a data frame of the other attributes (one column each, named as
#'   declared); `y`, the class column (a factor for a nominal class); and `relation`, the
#'   relation's name.
#' @seealso [read_libsvm()] and [read_delimited()], which return the same shape.
#' @examples
#' file <- tempfile(fileext = ".arff")
#' writeLines(c("% weather, abridged",
#'              "@relation weather",
#'              "@attribute outlook {sunny, overcast, rainy}",
#'              "@attribute temperature numeric",
#'              "@attribute 'wind speed' integer",
#'              "@attribute play {yes, no}",
#'              "@data",
#'              "sunny, 85, 3, no",
#'              "overcast, ?, 10, yes",
#'              "{0 rainy, 1 70.5, 3 yes}"), file)
#' d <- read_arff(file)
#' d$x
#' d$y
#' str(read_arff(file, class = "outlook")$y)
#' @export
read_arff <- function(file, class = NULL) {
  bytes <- read_file_bytes(file)
  parsed <- with_file_context(file, fsgpu_parse_arff(bytes))
  n <- if (length(parsed$columns)) length(parsed$columns[[1L]]) else 0L
  if (n == 0L) stop(file, ": no instances after @data", call. = FALSE)
  data <- structure(parsed$columns, class = "data.frame", row.names = .set_row_names(n))
  out <- split_class(data, class, default = ncol(data), file)
  out$relation <- parsed$relation
  out
}

#' Read a CSV or TSV file with a class column
#'
#' Reads delimited text (comma- or tab-separated, with a header line by default) with
#' [utils::read.table()] and takes the class column out of it, returning the same shape as
#' [read_libsvm()] and [read_arff()]. Files compressed with gzip, bzip2 or xz are decompressed
#' on the fly.
#'
#' Columns of whole numbers are read as integers, which fsgpu's jobs treat as categories (not
#' binned); other numbers are double and binned; text columns become factors (categories).
#' `NA`, `?` and empty fields are missing values. Fields may be quoted with `"`.
#'
#' @param file Path to the file (`.gz`, `.bz2` and `.xz` are decompressed).
#' @param class The class column, by name or index: it becomes `y` and leaves `x`. The
#'   default, `NULL`, takes the column named `class` (in any case) when there is exactly one,
#'   else the last column; `FALSE` takes none (`y` is `NULL`).
#' @param sep The field separator. Default: a tab for files named `.tsv` or `.tab` (before any
#'   compression suffix), a comma otherwise.
#' @param header Whether the first line holds the column names (otherwise they are `V1`,
#'   `V2`, ...).
#' @return A list with `x`, a data frame of the other columns, and `y`, the class column (a
#'   factor for text, integer or double for numbers).
#' @seealso [read_libsvm()] and [read_arff()].
#' @examples
#' file <- tempfile(fileext = ".csv")
#' writeLines(c("class,g1,g2,g3",
#'              "tumour,1.5,0,2",
#'              "normal,0.3,1,2",
#'              "tumour,2.1,0,1"), file)
#' d <- read_delimited(file)
#' d$x
#' d$y
#' @export
read_delimited <- function(file, class = NULL, sep = NULL, header = TRUE) {
  check_file(file)
  if (is.null(sep)) sep <- if (identical(format_by_name(file), "tsv")) "\t" else ","
  if (!is.character(sep) || length(sep) != 1L || nchar(sep) != 1L) stop("sep must be one character", call. = FALSE)
  if (!isTRUE(header) && !isFALSE(header)) stop("header must be TRUE or FALSE", call. = FALSE)
  # read.table() would wrap a line with extra fields into the next row, and a header one field
  # short would make the first column row names: every line must have the first line's width.
  fields <- with_file_context(file, utils::count.fields(file, sep = sep, quote = "\"", comment.char = "",
                                                        blank.lines.skip = FALSE))
  widths <- fields[!is.na(fields) & fields > 0L]
  if (length(widths) && any(widths != widths[1L])) {
    line <- which(!is.na(fields) & fields > 0L & fields != widths[1L])[1L]
    stop(sprintf("%s: line %d has %d fields, but the first line has %d", file, line, fields[line], widths[1L]),
         call. = FALSE)
  }
  data <- with_file_context(file, utils::read.table(
    file, header = header, sep = sep, quote = "\"", na.strings = c("NA", "?", ""), check.names = FALSE,
    stringsAsFactors = TRUE, comment.char = "", strip.white = TRUE, row.names = NULL, blank.lines.skip = TRUE))
  if (nrow(data) == 0L) stop(file, ": no data lines", call. = FALSE)
  default <- which(tolower(names(data)) == "class")
  if (length(default) != 1L) default <- ncol(data)
  split_class(data, class, default = default, file)
}

#' Read a data file, its format told by its name
#'
#' `read_features()` reads ARFF, CSV, TSV and LibSVM files with [read_arff()],
#' [read_delimited()] or [read_libsvm()], whichever the format calls for; by default the format
#' is told by the file's name: `.arff`; `.csv`; `.tsv` or `.tab`; `.libsvm`, `.svm` or
#' `.svmlight`, each optionally followed by `.gz`, `.bz2` or `.xz`. The command line
#' (`exec/fsgpu`) reads its input with it.
#'
#' @param file Path to the file (`.gz`, `.bz2` and `.xz` are decompressed).
#' @param format `"auto"` (default: from the file's name), `"arff"`, `"csv"`, `"tsv"` or
#'   `"libsvm"`.
#' @param class The class column of an ARFF, CSV or TSV file, as in [read_arff()] and
#'   [read_delimited()]; LibSVM files have their labels first on each line and take none.
#' @param index_base For LibSVM files, as in [read_libsvm()].
#' @return What the reader returns: a list with `x` and `y` (and `relation` for ARFF, `qid` for
#'   LibSVM files that have query ids).
#' @seealso [read_plink()] for PLINK genotypes.
#' @examples
#' file <- tempfile(fileext = ".csv.gz")
#' con <- gzfile(file, "w")
#' writeLines(c("g1,g2,class", "1.5,0,tumour", "0.3,1,normal"), con)
#' close(con)
#' read_features(file)$y
#' @export
read_features <- function(file, format = "auto", class = NULL, index_base = NULL) {
  format <- read_format(file, format, class, index_base)
  switch(format,
         arff = read_arff(file, class = class),
         csv = read_delimited(file, class = class, sep = ","),
         tsv = read_delimited(file, class = class, sep = "\t"),
         libsvm = read_libsvm(file, index_base = index_base))
}

read_formats <- c("arff", "csv", "tsv", "libsvm")

# The format read_features() reads file in, checked with its other arguments before the file is
# opened (the command line calls it to tell a bad command line from a bad file).
read_format <- function(file, format, class, index_base) {
  check_path(file)
  if (!is.character(format) || length(format) != 1L || !format %in% c("auto", read_formats))
    stop("format must be one of ", quote_list(c("auto", read_formats)), call. = FALSE)
  if (format == "auto") {
    format <- format_by_name(file)
    if (is.na(format))
      stop(sprintf("cannot tell the format of '%s' from its name; give the format (%s)", file,
                   paste(read_formats, collapse = ", ")), call. = FALSE)
  }
  if (format == "libsvm" && !is.null(class))
    stop("a class column is not for LibSVM files: their labels come first on each line", call. = FALSE)
  if (format != "libsvm" && !is.null(index_base)) stop("the index base is for LibSVM files only", call. = FALSE)
  format
}

# The format a file's name tells (before any compression suffix), or NA.
format_by_name <- function(file) {
  extension <- tolower(sub("^.*\\.", "", basename(without_compression(file))))
  switch(extension, arff = "arff", csv = "csv", tsv = , tab = "tsv", libsvm = , svm = , svmlight = "libsvm",
         NA_character_)
}

# list(x = data without the class column, y = that column); class as the readers take it.
split_class <- function(data, class, default, file) {
  if (isFALSE(class)) return(list(x = data, y = NULL))
  columns <- names(data)
  j <- if (is.null(class)) default else if (is.character(class) && length(class) == 1L && !is.na(class)) {
    found <- which(columns == class)
    if (length(found) != 1L)
      stop(sprintf("%s: class = '%s' %s; columns: %s", file, class,
                   if (length(found)) "names several columns" else "names no column", quote_list(columns)),
           call. = FALSE)
    found
  } else if (is.numeric(class) && length(class) == 1L && !is.na(class) && class == round(class) &&
             class >= 1 && class <= length(columns)) {
    as.integer(class)
  } else {
    stop(sprintf("class must be a column name, an index from 1 to %d, NULL (the default) or FALSE (none)",
                 length(columns)), call. = FALSE)
  }
  if (length(columns) < 2L)
    stop(sprintf("%s: the class '%s' is the only column: no features left (class = FALSE keeps it as one)",
                 file, columns[j]), call. = FALSE)
  list(x = data[, -j, drop = FALSE], y = data[[j]])
}

check_path <- function(file) {
  if (!is.character(file) || length(file) != 1L || is.na(file)) stop("file must be one path", call. = FALSE)
}

check_file <- function(file) {
  check_path(file)
  if (!file.exists(file)) stop("cannot find the file ", file, call. = FALSE)
  if (dir.exists(file)) stop(file, " is a directory, not a file", call. = FALSE)
}

without_compression <- function(file) sub("\\.(gz|bz2|xz)$", "", file, ignore.case = TRUE)

# The file's bytes, decompressed: gzfile() recognises gzip, bzip2 and xz by their magic
# numbers and reads plain files as they are (file() decompresses only in text mode).
read_file_bytes <- function(file) {
  check_file(file)
  con <- gzfile(file, "rb")
  on.exit(close(con))
  chunks <- list()
  repeat {
    chunk <- readBin(con, "raw", n = 2^24)
    if (length(chunk) == 0L) break
    chunks[[length(chunks) + 1L]] <- chunk
  }
  if (length(chunks) == 1L) chunks[[1L]] else as.raw(unlist(chunks, use.names = FALSE))
}

# Evaluates expr; an error becomes "<file>: <message>" (the parsers' messages start with the
# line and column).
with_file_context <- function(file, expr) {
  tryCatch(expr, error = function(e) stop(sprintf("%s: %s", file, conditionMessage(e)), call. = FALSE))
}
