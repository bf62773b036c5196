# Input coercion and validation shared by every job.
#
# The C++ glue accepts exactly three shapes of x (samples x features): a base matrix of type
# double or integer, a plain list of double/integer columns, or a Matrix::dgCMatrix. Double data
# are binned, integer data are categorical. Everything here turns user input into one of those
# shapes and rejects what the engines cannot take, with messages that name the culprits.

#' Normalise and validate x and y of a supervised job
#'
#' @param x A matrix (double, integer or logical), a data.frame (numeric, integer, logical and
#'   factor columns), or a Matrix object; rows are samples, columns are features.
#' @param y Class labels, one per sample: factor, character, integer, logical, or whole numbers.
#' @param arg_x,arg_y How to name `x` and `y` in error messages.
#' @return A list with `x` (normalised, see above), `y` (integer class codes 0..n_classes-1),
#'   `classes` (character labels of the codes), `feature_names` (character), `sample_names`
#'   (character or NULL), `n_samples`, `n_features` and `sparse` (TRUE for a dgCMatrix).
#' @noRd
prepare_input <- function(x, y, arg_x = "x", arg_y = "y", allow_missing = FALSE) {
  input <- normalise_x(x, arg_x)
  if (!allow_missing) check_finite(input, arg_x)
  labels <- encode_classes(y, input$n_samples, input$sample_names, arg_y, arg_x)
  c(input, labels)
}

#' Normalise x of an unsupervised job (no class)
#' @noRd
prepare_unsupervised_input <- function(x, arg_x = "x", allow_missing = FALSE) {
  input <- normalise_x(x, arg_x)
  if (!allow_missing) check_finite(input, arg_x)
  input
}

#' Normalise a SummarizedExperiment
#'
#' Features are the rows of the assay and samples its columns, so the assay is transposed.
#'
#' @param se A SummarizedExperiment.
#' @param class Name of the `colData` column holding the class labels, or NULL for an
#'   unsupervised job.
#' @param assay Name or index of the assay.
#' @param allow_missing Leave NA and Inf in place for the caller to check (discretization).
#' @return The structure of [prepare_input()] (of [prepare_unsupervised_input()] without class);
#'   for a DelayedArray assay, that of delayed_se_input(), which apply_discretization() codes.
#' @noRd
prepare_se_input <- function(se, class, assay = 1L, allow_missing = FALSE) {
  if (!requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    stop("the SummarizedExperiment package is needed for SummarizedExperiment input", call. = FALSE)
  }
  if (!methods::is(se, "SummarizedExperiment")) {
    stop("se must be a SummarizedExperiment", call. = FALSE)
  }
  columns <- colnames(SummarizedExperiment::colData(se))
  if (!is.null(class) && (!is.character(class) || length(class) != 1L || !class %in% columns)) {
    stop("class must name one colData column of se; available: ", quote_list(columns),
         call. = FALSE)
  }
  check_assay(se, assay)
  a <- SummarizedExperiment::assay(se, assay, withDimnames = TRUE)
  label <- if (is.character(assay)) sprintf("assay '%s'", assay) else paste("assay", assay)
  # A DelayedArray stays where it is, to be coded block by block (see delayed.R).
  if (is_delayed(a)) {
    y <- if (!is.null(class)) SummarizedExperiment::colData(se)[[class]]
    return(delayed_se_input(a, y, label, sprintf("colData column '%s'", class)))
  }
  # Matrix::t keeps sparse assays sparse; anything else is realised first.
  xt <- if (methods::is(a, "Matrix")) Matrix::t(a) else t(as.matrix(a))
  if (is.null(class)) return(prepare_unsupervised_input(xt, arg_x = label, allow_missing = allow_missing))
  prepare_input(xt, SummarizedExperiment::colData(se)[[class]],
                arg_x = label, arg_y = sprintf("colData column '%s'", class), allow_missing = allow_missing)
}

#' The input restricted to some features (1-based indices), in that order
#' @noRd
subset_features <- function(input, index) {
  x <- input$x
  input$x <- if (isTRUE(input$delayed)) x[index, , drop = FALSE]  # features x samples, still delayed
             else if (is.list(x) && !is.data.frame(x)) x[index] else x[, index, drop = FALSE]
  input$feature_names <- input$feature_names[index]
  input$n_features <- length(index)
  input
}

#' @noRd
check_assay <- function(se, assay) {
  assays <- SummarizedExperiment::assayNames(se)
  n <- length(SummarizedExperiment::assays(se))
  ok <- length(assay) == 1L && !is.na(assay) &&
    ((is.character(assay) && assay %in% assays) || (is.numeric(assay) && assay %in% seq_len(n)))
  if (!ok) {
    stop("assay must be the name or index of one assay of se; it has ", n, " assay(s)",
         if (length(assays)) paste0(": ", quote_list(assays)), call. = FALSE)
  }
}

#' Turn x into one of the shapes the glue accepts, with its names and sizes
#' @noRd
normalise_x <- function(x, arg) {
  feature_names <- colnames(x)
  if (is.data.frame(x)) {
    # Automatic row names (1, 2, ...) are not sample names.
    sample_names <- if (.row_names_info(x) > 0L) rownames(x) else NULL
    dims <- dim(x)
    x <- data_frame_columns(x, arg)
  } else if (methods::is(x, "Matrix")) {
    if (!methods::is(x, "sparseMatrix")) return(normalise_x(as.matrix(x), arg))
    x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
    sample_names <- rownames(x)
    dims <- dim(x)
  } else if (is.matrix(x) && (is.double(x) || is.integer(x) || is.logical(x))) {
    if (is.logical(x)) storage.mode(x) <- "integer"  # keeps dim and dimnames
    sample_names <- rownames(x)
    dims <- dim(x)
  } else {
    what <- if (is.matrix(x)) paste("a", typeof(x), "matrix") else
      sprintf("an object of class '%s'", class(x)[1L])
    stop(arg, " must be a numeric, integer or logical matrix, a data.frame, or a sparse Matrix ",
         "(e.g. dgCMatrix); got ", what, call. = FALSE)
  }
  if (dims[1L] == 0L || dims[2L] == 0L) {
    stop(arg, " is empty (", dims[1L], " samples, ", dims[2L], " features)", call. = FALSE)
  }
  if (is.null(feature_names)) feature_names <- paste0("X", seq_len(dims[2L]))
  list(x = x, feature_names = feature_names, sample_names = sample_names,
       n_samples = dims[1L], n_features = dims[2L], sparse = methods::is(x, "dgCMatrix"))
}

#' Columns of a data.frame as plain double (binned) or integer (categorical) vectors
#' @noRd
data_frame_columns <- function(df, arg) {
  kind <- vapply(df, function(v) {
    if (!is.null(dim(v))) "other"
    else if (is.factor(v) || is.logical(v) || is.integer(v)) "categorical"
    else if (is.double(v) && is.numeric(v)) "numeric"  # is.numeric() is FALSE for Date, difftime
    else if (is.character(v)) "character"
    else "other"
  }, character(1))
  if (any(kind == "character")) {
    stop(arg, " has character columns ", quote_list(names(df)[kind == "character"]),
         "; convert them to factors", call. = FALSE)
  }
  if (any(kind == "other")) {
    stop(arg, " has columns of unsupported types ", quote_list(names(df)[kind == "other"]),
         "; columns must be numeric, integer, logical or factor", call. = FALSE)
  }
  lapply(seq_along(df), function(j) {
    if (kind[j] == "numeric") as.double(df[[j]]) else as.integer(df[[j]])
  })
}

#' Stop when x holds NA, NaN or Inf, naming features and samples
#'
#' The cheap whole-object tests (anyNA, the range) run first; offenders are located only on
#' failure, so big inputs are scanned once without temporary copies.
#' @noRd
check_finite <- function(input, arg) {
  x <- input$x
  clean <- if (is.list(x)) all(vapply(x, all_finite, logical(1)))
           else if (methods::is(x, "dgCMatrix")) all_finite(x@x) else all_finite(x)
  if (clean) return(invisible())
  where <- nonfinite_cells(input, function(v) !is.finite(v))
  stop_nonfinite(where$rows, where$cols, input, arg)
}

#' Whether v holds no NA, NaN or Inf: one pass by sum() (no copy, unlike range()); only a
#' non-finite sum (a bad value, or an overflow of huge finite ones) looks further.
#' @noRd
all_finite <- function(v) {
  if (!is.double(v)) return(!anyNA(v))
  if (!length(v) || is.finite(sum(v))) return(TRUE)
  !anyNA(v) && !any(is.infinite(v))
}

#' Rows and columns (1-based) of the cells of x where bad(value) is TRUE
#' @noRd
nonfinite_cells <- function(input, bad) {
  x <- input$x
  if (is.list(x)) {
    rows <- lapply(x, function(v) which(bad(v)))
    return(list(rows = unlist(rows), cols = rep(seq_along(x), lengths(rows))))
  }
  if (methods::is(x, "dgCMatrix")) {
    entries <- which(bad(x@x))
    return(list(rows = x@i[entries] + 1L, cols = rep(seq_len(ncol(x)), diff(x@p))[entries]))
  }
  where <- which(bad(x), arr.ind = TRUE)
  list(rows = where[, 1L], cols = where[, 2L])
}

#' @noRd
stop_nonfinite <- function(rows, cols, input, arg, what = "missing or infinite values", hint = "") {
  features <- unique(cols)
  first_rows <- rows[match(features, cols)]
  shown <- utils::head(seq_along(features), 5L)
  where <- sprintf("feature '%s' (sample %s)", input$feature_names[features[shown]],
                   sample_ids(first_rows[shown], input$sample_names))
  more <- length(features) - length(shown)
  stop(arg, " has ", what, " in ", paste(where, collapse = ", "),
       if (more > 0L) paste(" and", more, "more features"), hint, call. = FALSE)
}

#' Class labels as 0-based integer codes
#'
#' Factors keep their level order (unused levels are dropped, with a message); other labels are
#' sorted, in the C locale for characters, so the codes do not depend on the session's locale.
#' @noRd
encode_classes <- function(y, n_samples, sample_names, arg, arg_x = "x") {
  if (!is.null(dim(y)) ||
      !(is.factor(y) || is.character(y) || is.integer(y) || is.logical(y) || is.double(y))) {
    stop(arg, " must be a vector of class labels (factor, character, integer or logical)",
         call. = FALSE)
  }
  if (length(y) != n_samples) {
    stop(arg, " has length ", length(y), " but ", arg_x, " has ", n_samples, " samples",
         call. = FALSE)
  }
  if (anyNA(y)) {
    missing <- which(is.na(y))
    stop(arg, " has missing values at ", if (length(missing) > 1L) "samples " else "sample ",
         name_list(sample_ids(missing, sample_names)), call. = FALSE)
  }
  if (is.double(y) && (!all(is.finite(y)) || any(y != round(y)))) {
    stop(arg, " must be a class label (factor, character, integer or logical), ",
         "not a continuous numeric variable", call. = FALSE)
  }
  if (is.factor(y)) {
    unused <- setdiff(levels(y), as.character(unique(y)))
    if (length(unused)) message("Dropped unused levels of ", arg, ": ", quote_list(unused))
    y <- droplevels(y)
    classes <- levels(y)
    codes <- as.integer(y) - 1L
  } else {
    values <- sort(unique(as.vector(y)), method = "radix")
    classes <- as.character(values)
    codes <- match(y, values) - 1L
  }
  if (length(classes) < 2L) {
    stop(arg, " must have at least two classes; it has one: ", quote_list(classes),
         call. = FALSE)
  }
  list(y = codes, classes = classes)
}

#' Samples by quoted name when there are names, by number otherwise
#' @noRd
sample_ids <- function(rows, sample_names) {
  if (is.null(sample_names)) as.character(rows) else sprintf("'%s'", sample_names[rows])
}

#' @noRd
quote_list <- function(names, max = 5L) name_list(sprintf("'%s'", names), max)

#' @noRd
name_list <- function(names, max = 5L) {
  more <- length(names) - max
  if (more <= 0L) return(paste(names, collapse = ", "))
  paste0(paste(names[seq_len(max)], collapse = ", "), " and ", more, " more")
}
