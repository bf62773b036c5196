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
#'   Default: the length of `vocabulary` when given, else the largest index in the file.
#' @param vocabulary The features' names: a character vector of two or more, or the path of a
#'   text file (`.gz`, `.bz2` and `.xz` too) with one name per line; name \eqn{i} is that of the
#'   \eqn{i}-th index (index 1 of a 1-based file, index 0 of a 0-based one). It sets the
#'   width: an index beyond the last name is an error.
#' @return A list with `x`, a `Matrix::dgCMatrix` with one row per sample and one column per
#'   feature, named by `vocabulary` or else `f<index>` by the indices of the file (`f1`, `f2`,
#'   ... for 1-based files); `y`, the labels (see `labels`); and, when some line has one,
#'   `qid`, the query ids (`NA` where a line has none).
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
#' # with the features' names
#' colnames(read_libsvm(file, vocabulary = c("age", "dose", "weight", "height"))$x)
#' @export
read_libsvm <- function(file, labels = c("factor", "numeric"), index_base = NULL, n_features = NULL,
                        vocabulary = NULL) {
  labels <- match.arg(labels)
  base <- if (is.null(index_base)) -1L else {
    if (!identical(as.numeric(index_base), 0) && !identical(as.numeric(index_base), 1))
      stop("index_base must be 0, 1 or NULL (detect)", call. = FALSE)
    as.integer(index_base)
  }
  width <- if (is.null(n_features)) -1 else check_count(n_features, "n_features", min = 0)
  if (!is.null(vocabulary)) {
    vocabulary <- read_vocabulary(vocabulary)
    if (width < 0) width <- length(vocabulary)
    else if (width != length(vocabulary))
      stop(sprintf("n_features (%d) differs from the vocabulary's %d names", width, length(vocabulary)), call. = FALSE)
  }
  bytes <- read_file_bytes(file)
  parsed <- with_file_context(file, tryCatch(fsgpu_parse_libsvm(bytes, base, width), error = function(e) {
    if (is.null(vocabulary) || !is.null(n_features)) stop(e)
    stop(sub("beyond n_features = ([0-9]+)", "beyond the vocabulary's \\1 names", conditionMessage(e)), call. = FALSE)
  }))
  if (parsed$dim[1L] == 0L) stop(file, ": no samples (only blank or comment lines)", call. = FALSE)
  loadNamespace("Matrix")  # methods::new() finds the class once Matrix is loaded
  names <- if (is.null(vocabulary)) paste0("f", seq_len(parsed$dim[2L]) - 1L + parsed$index_base) else vocabulary
  x <- methods::new("dgCMatrix", i = parsed$i, p = parsed$p, x = parsed$x, Dim = parsed$dim,
                    Dimnames = list(NULL, names))
  out <- list(x = x, y = libsvm_labels(parsed$labels, parsed$lines, labels, file))
  if (!is.null(parsed$qid)) out$qid <- parsed$qid
  out
}

# Feature names: a character vector, or a file of one name per line (compressed or not).
read_vocabulary <- function(vocabulary) {
  if (!is.character(vocabulary) || anyNA(vocabulary) || !length(vocabulary))
    stop("vocabulary must be the features' names or the path of a file with one name per line", call. = FALSE)
  if (length(vocabulary) == 1L) {  # a path: a one-feature vocabulary is a file of one line
    check_file(vocabulary)
    con <- gzfile(vocabulary, "r")
    on.exit(close(con))
    file <- vocabulary
    vocabulary <- readLines(con, warn = FALSE)
    if (!length(vocabulary)) stop(file, ": the vocabulary is empty", call. = FALSE)
  }
  vocabulary
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
#' integer, or double when it has many distinct values (see `categorical`); nominal
#' `{a, b, ...}` is a factor with the declared levels in declared order;
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
#' @param categorical,numeric How to read columns of whole numbers, which fsgpu's jobs would
#'   otherwise bin or take as categories by their rule (see `categorical` in
#'   [select_features()]). By default such a column stays integer, unless it has more distinct
#'   values than 10 (or than the default number of bins, above 1,000 samples): then it is read
#'   as double, to be binned, with one message naming those columns. `categorical` (`TRUE`, or
#'   columns by name, by index in the file, or one `TRUE`/`FALSE` per column) reads columns as
#'   factors, categories whatever `nbins` a job gets; `numeric` (`TRUE` or columns) reads
#'   them as double, always binned. `categorical = FALSE` is `numeric = TRUE`. Columns named in
#'   neither follow the default.
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
read_arff <- function(file, class = NULL, categorical = NULL, numeric = NULL) {
  bytes <- read_file_bytes(file)
  parsed <- with_file_context(file, fsgpu_parse_arff(bytes))
  n <- if (length(parsed$columns)) length(parsed$columns[[1L]]) else 0L
  if (n == 0L) stop(file, ": no instances after @data", call. = FALSE)
  data <- structure(parsed$columns, class = "data.frame", row.names = .set_row_names(n))
  roles <- column_roles(categorical, numeric, names(data))
  j <- class_index(data, class, default = ncol(data), file)
  features <- setdiff(seq_along(data), j)
  out <- list(x = reader_columns(data[, features, drop = FALSE], roles[features]), y = if (length(j)) data[[j]])
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
#' Numbers with a fraction are double and binned by the jobs; columns of whole numbers are
#' integer when they have few distinct values (categories unless a job is given `nbins`), and
#' double when they have many (see `categorical`); text columns become factors (categories).
#' `NA`, `?` and empty fields are missing values. Fields may be quoted with `"`.
#'
#' A column of sample IDs is taken out of the data and names its rows: the column `id` names,
#' or by default the first column (other than the class) when its values are all different
#' and either not numbers, or its name is `id`, `sample`, `sample_id`, `sample.id`, `sampleid`,
#' `sample_name` or empty (in any case), as in files written by [utils::write.csv()] with row
#' names. A message says which column was taken.
#'
#' @param file Path to the file (`.gz`, `.bz2` and `.xz` are decompressed).
#' @param class The class column, by name or index: it becomes `y` and leaves `x`. The
#'   default, `NULL`, takes the column named `class` (in any case) when there is exactly one,
#'   else the last column; `FALSE` takes none (`y` is `NULL`).
#' @param id The column of sample IDs, by name or index: it leaves `x` and becomes its row
#'   names (its values must be all different). The default, `NULL`, detects one as above;
#'   `FALSE` takes none.
#' @inheritParams read_arff
#' @param sep The field separator. Default: a tab for files named `.tsv` or `.tab` (before any
#'   compression suffix), a comma otherwise.
#' @param header Whether the first line holds the column names (otherwise they are `V1`,
#'   `V2`, ...).
#' @return A list with `x`, a data frame of the other columns (rows named by the IDs when
#'   there is an ID column), and `y`, the class column (a factor for text, integer or double
#'   for numbers).
#' @seealso [read_libsvm()] and [read_arff()].
#' @examples
#' file <- tempfile(fileext = ".csv")
#' writeLines(c("sample,class,g1,g2,g3",
#'              "p1,tumour,1.5,0,2",
#'              "p2,normal,0.3,1,2",
#'              "p3,tumour,2.1,0,1"), file)
#' d <- read_delimited(file)
#' d$x
#' d$y
#' # g2 and g3 as categories whatever nbins a job gets
#' str(read_delimited(file, categorical = c("g2", "g3"))$x)
#' @export
read_delimited <- function(file, class = NULL, sep = NULL, header = TRUE, id = NULL, categorical = NULL,
                           numeric = NULL) {
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
  roles <- column_roles(categorical, numeric, names(data))
  default <- which(tolower(names(data)) == "class")
  if (length(default) != 1L) default <- ncol(data)
  j <- class_index(data, class, default = default, file)
  ids <- id_index(data, id, j, file, chosen = c(categorical, numeric))
  features <- setdiff(seq_along(data), c(j, ids))
  x <- reader_columns(data[, features, drop = FALSE], roles[features])
  if (length(ids)) rownames(x) <- as.character(data[[ids]])
  list(x = x, y = if (length(j)) data[[j]])
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
#' @param index_base,vocabulary For LibSVM files, as in [read_libsvm()].
#' @param id For CSV and TSV files, the sample ID column, as in [read_delimited()].
#' @param categorical,numeric For ARFF, CSV and TSV files: how to read columns of whole
#'   numbers, as in [read_arff()] and [read_delimited()].
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
read_features <- function(file, format = "auto", class = NULL, index_base = NULL, id = NULL, categorical = NULL,
                          numeric = NULL, vocabulary = NULL) {
  format <- read_format(file, format, class, index_base, id, categorical, numeric, vocabulary)
  switch(format,
         arff = read_arff(file, class = class, categorical = categorical, numeric = numeric),
         csv = read_delimited(file, class = class, sep = ",", id = id, categorical = categorical, numeric = numeric),
         tsv = read_delimited(file, class = class, sep = "\t", id = id, categorical = categorical, numeric = numeric),
         libsvm = read_libsvm(file, index_base = index_base, vocabulary = vocabulary))
}

read_formats <- c("arff", "csv", "tsv", "libsvm")

# The format read_features() reads file in, checked with its other arguments before the file is
# opened (the command line calls it to tell a bad command line from a bad file).
read_format <- function(file, format, class, index_base, id = NULL, categorical = NULL, numeric = NULL,
                        vocabulary = NULL) {
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
  if (format != "libsvm" && !is.null(vocabulary))
    stop("a vocabulary is for LibSVM files only: the other formats name their columns", call. = FALSE)
  if (!format %in% c("csv", "tsv") && !is.null(id)) stop("an ID column is for CSV and TSV files only", call. = FALSE)
  if (format == "libsvm" && (!is.null(categorical) || !is.null(numeric)))
    stop("categorical and numeric columns are for ARFF, CSV and TSV files: LibSVM values are all numbers",
         call. = FALSE)
  format
}

# The format a file's name tells (before any compression suffix), or NA.
format_by_name <- function(file) {
  extension <- tolower(sub("^.*\\.", "", basename(without_compression(file))))
  switch(extension, arff = "arff", csv = "csv", tsv = , tab = "tsv", libsvm = , svm = , svmlight = "libsvm",
         NA_character_)
}

# The index of the class column (integer(0) for class = FALSE); class as the readers take it.
class_index <- function(data, class, default, file) {
  if (isFALSE(class)) return(integer())
  j <- column_index(data, class, default, file, "class")
  if (ncol(data) < 2L)
    stop(sprintf("%s: the class '%s' is the only column: no features left (class = FALSE keeps it as one)",
                 file, names(data)[j]), call. = FALSE)
  j
}

# The index of the column `which` (a name or an index; NULL for `default`), or an error.
column_index <- function(data, which, default, file, arg) {
  columns <- names(data)
  if (is.null(which)) return(default)
  if (is.character(which) && length(which) == 1L && !is.na(which)) {
    found <- which(columns == which)
    if (length(found) != 1L)
      stop(sprintf("%s: %s = '%s' %s; columns: %s", file, arg, which,
                   if (length(found)) "names several columns" else "names no column", quote_list(columns)),
           call. = FALSE)
    return(found)
  }
  if (is.numeric(which) && length(which) == 1L && !is.na(which) && which == round(which) && which >= 1 &&
      which <= length(columns)) {
    return(as.integer(which))
  }
  stop(sprintf("%s must be a column name, an index from 1 to %d, NULL (the default) or FALSE (none)", arg,
               length(columns)), call. = FALSE)
}

# The index of the sample ID column (integer(0) for none): `id`, or by default the first column
# other than the class (index `class`) when its values are all different and it is text or
# named as IDs are, and the user did not name it in `categorical` or `numeric` (`chosen`). At
# least one feature must be left.
id_index <- function(data, id, class, file, chosen = NULL) {
  if (isFALSE(id)) return(integer())
  if (!is.null(id)) {
    j <- column_index(data, id, NULL, file, "id")
    if (j %in% class) stop(sprintf("%s: id = '%s' is the class column", file, names(data)[j]), call. = FALSE)
    v <- data[[j]]
    if (anyNA(v) || anyDuplicated(v))
      stop(sprintf("%s: the ID column '%s' has %s", file, names(data)[j],
                   if (anyNA(v)) "missing values" else paste("repeated values:", quote_list(unique(v[duplicated(v)])))),
           call. = FALSE)
    return(j)
  }
  j <- setdiff(seq_along(data), class)[1L]
  if (length(data) - length(class) < 2L) return(integer())
  v <- data[[j]]
  if ((is.character(chosen) && names(data)[j] %in% chosen) || (is.numeric(chosen) && j %in% chosen))
    return(integer())
  named <- grepl("^(id|samples?|sample[._ ]?(id|name))?$", names(data)[j], ignore.case = TRUE)
  if (anyNA(v) || anyDuplicated(v) || !(named || is.factor(v) || is.character(v))) return(integer())
  message(sprintf("%s: taking column '%s' as the sample IDs (the row names of x); id = FALSE keeps it as a feature",
                  file, names(data)[j]))
  j
}

# The features read from a file as the jobs should take them (column_roles() and the rule of
# resolve_columns() in inputs.R): TRUE roles become factors, FALSE roles double, and whole
# numbers with more distinct values than integer_level_limit() double, with one message.
reader_columns <- function(x, roles) {
  limit <- integer_level_limit(nrow(x))
  text <- vapply(x, function(v) !is.numeric(v), logical(1))
  if (any(text & roles %in% FALSE))
    stop("numeric: ", quote_list(names(x)[text & roles %in% FALSE]), " hold text, not numbers", call. = FALSE)
  rule <- is.na(roles) & vapply(x, is.integer, logical(1))
  rule[rule] <- fsgpu_more_values_than(x, which(rule), limit, 1L)
  for (j in which(roles %in% TRUE & !text)) x[[j]] <- factor(x[[j]])
  for (j in which((roles %in% FALSE & !text) | rule)) x[[j]] <- as.double(x[[j]])
  if (any(rule)) {
    message(sprintf(paste0("Reading %s column%s of whole numbers with more than %d distinct values (%s) as numbers, ",
                           "to be binned; categorical = TRUE (or the columns' names) keeps them as categories"),
                    format(sum(rule), big.mark = ","), if (sum(rule) > 1) "s" else "", limit,
                    quote_list(names(x)[rule], max = 3L)))
  }
  x
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
