# Input coercion and validation shared by every job.
#
# The C++ glue accepts exactly three shapes of x (samples x features): a base matrix of type
# double or integer, a plain list of double/integer columns, or a Matrix::dgCMatrix. The engines
# bin double data and take integer data as categories. Everything here turns user input into one
# of those shapes and rejects what the engines cannot take, with messages that name the culprits.
# Which columns are binned is decided here, once, for every job that bins (resolve_columns()):
# integer storage says nothing of what the numbers mean (counts, intensities, codes).

#' Normalise and validate x and y of a supervised job
#'
#' @param x A matrix (double, integer or logical), a data.frame (numeric, integer, logical and
#'   factor columns), or a Matrix object; rows are samples, columns are features.
#' @param y Class labels, one per sample: factor, character, integer, logical, or whole numbers.
#' @param arg_x,arg_y How to name `x` and `y` in error messages.
#' @param convert FALSE: columns to bin or to make categories are left for the encoder to
#'   convert (resolve_columns()), for a job whose glue takes no deferred checks.
#' @return A list with `x` (normalised, see above), `y` (integer class codes 0..n_classes-1),
#'   `classes` (character labels of the codes), `feature_names` (character), `sample_names`
#'   (character or NULL), `n_samples`, `n_features` and `sparse` (TRUE for a dgCMatrix).
#' @noRd
prepare_input <- function(x, y, arg_x = "x", arg_y = "y", allow_missing = FALSE, binning = NULL, defer = FALSE,
                          input = normalise_x(x, arg_x), convert = TRUE) {
  defer <- defer && !allow_missing && !is.null(binning)
  if (!allow_missing && !defer) check_finite(input, arg_x, binning$threads)
  labels <- encode_classes(y, input$n_samples, input$sample_names, arg_y, arg_x)
  if (defer) return(defer_columns(c(input, labels), binning, arg_x))
  prepare_columns(c(input, labels), binning, convert)
}

# Deferred checks (`defer = TRUE`, for a job whose glue passes input_report's arguments to
# codes_from_r()): the scan for NA, NaN and Inf and the integer rule's count of distinct values
# run in C++, in the pass that encodes the data (threaded, reading x in place), instead of
# here over the whole matrix. The input then carries `bin_above` (per column, see
# ColumnSource::bin_above in src/core/code_matrix.h) and the glue returns a report that
# finish_input() turns into the same errors, notes and message as prepare_input() without it.

#' The input for deferred checks: x as given, and per column the glue's bin_above: -1 (a
#' category, or a double column binned), 0 (binned), the rule's limit (binned when it has more
#' distinct values) or -2 (a double column made the codes of its distinct values, in C++)
#' @noRd
defer_columns <- function(input, binning, arg) {
  roles <- binning$roles
  if (is.null(roles)) roles <- column_roles(binning$categorical, NULL, input$feature_names)
  integer <- input$kinds == "integer"
  bin <- integer & (roles %in% FALSE | (is.na(roles) & binning$asked))
  rule <- integer & is.na(roles) & !binning$asked
  categorise <- input$kinds == "double" & roles %in% TRUE
  input$bin_above <- ifelse(bin, 0L, ifelse(rule, integer_level_limit(input$n_samples), ifelse(categorise, -2L, -1L)))
  input$kinds[categorise] <- "integer"  # as resolve_columns() leaves them
  input$deferred_arg <- arg
  input$binning <- binning
  input
}

#' After a job with deferred checks: the error naming features and samples when x held NA,
#' NaN or Inf, else the input with the notes and message of announce_columns(). `report` is
#' the glue's (report_to_r() in src/input_codes.cpp).
#' @noRd
finish_input <- function(input, report) {
  if (is.null(input$bin_above)) return(input)
  if (length(report$bad_columns)) stop_nonfinite(report$bad_rows, report$bad_columns, input, input$deferred_arg)
  double_category <- input$bin_above == -2L
  integer <- input$kinds == "integer" & !double_category
  treatment <- list(binned = report$binned, by_rule = report$binned & input$bin_above > 0L,
                    integer_category = integer & !report$binned, double_category = double_category)
  input$kinds[report$binned] <- "double"  # as resolve_columns() leaves them
  announce_columns(input, treatment, input$feature_names, input$n_samples)
}

#' Normalise x of an unsupervised job (no class)
#' @noRd
prepare_unsupervised_input <- function(x, arg_x = "x", allow_missing = FALSE, binning = NULL, defer = FALSE,
                                       input = normalise_x(x, arg_x)) {
  defer <- defer && !allow_missing && !is.null(binning)
  if (!allow_missing && !defer) check_finite(input, arg_x, binning$threads)
  if (defer) return(defer_columns(input, binning, arg_x))
  prepare_columns(input, binning)
}

#' Normalise a SummarizedExperiment
#'
#' Features are the rows of the assay and samples its columns, so the assay is transposed.
#'
#' @param se A SummarizedExperiment.
#' @param class Name of the `colData` column holding the class labels, or NULL for an
#'   unsupervised job.
#' @param assay Name or index of the assay; NULL for the default (see resolve_assay()).
#' @param allow_missing Leave NA and Inf in place for the caller to check (discretization).
#' @param binning For the jobs that bin: binning_request().
#' @param defer,convert For a job whose glue takes the deferred checks, or converts columns:
#'   see prepare_input().
#' @return The structure of [prepare_input()] (of [prepare_unsupervised_input()] without class),
#'   whose `notes` name the assay; for a DelayedArray assay, that of delayed_se_input(), which
#'   apply_discretization() codes (and resolves the columns of, block by block).
#' @noRd
prepare_se_input <- function(se, class, assay = NULL, allow_missing = FALSE, binning = NULL, defer = FALSE,
                             convert = TRUE) {
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
  assay <- check_assay(se, assay)
  a <- SummarizedExperiment::assay(se, assay, withDimnames = TRUE)
  label <- assay_label(assay)
  deferred <- defer && !allow_missing && !is.null(binning)
  # A DelayedArray stays where it is, to be coded block by block (see delayed.R): by the encoder
  # when the checks are deferred, else in R.
  if (is_delayed(a) && !deferred) {
    y <- if (!is.null(class)) SummarizedExperiment::colData(se)[[class]]
    input <- delayed_se_input(a, y, label, sprintf("colData column '%s'", class))
    if (!is.null(binning)) binning$roles <- column_roles(binning$categorical, NULL, input$feature_names)
    input$binning <- binning
    input$notes <- label
    input$assay <- assay
    return(input)
  }
  # A dense matrix whose checks are deferred is read in place (its columns made in C++);
  # otherwise Matrix::t keeps sparse assays sparse, and anything else is realised first.
  normalised <- if (deferred && is_delayed(a)) delayed_blocks_input(a, label) else if (deferred) transposed_input(a)
  xt <- if (!is.null(normalised)) NULL else if (methods::is(a, "Matrix")) Matrix::t(a) else t(as.matrix(a))
  if (is.null(normalised)) normalised <- normalise_x(xt, label)
  input <- if (is.null(class)) {
    prepare_unsupervised_input(xt, arg_x = label, allow_missing = allow_missing, binning = binning, defer = defer,
                               input = normalised)
  } else {
    prepare_input(xt, SummarizedExperiment::colData(se)[[class]], arg_x = label,
                  arg_y = sprintf("colData column '%s'", class), allow_missing = allow_missing, binning = binning,
                  defer = defer, input = normalised, convert = convert)
  }
  input$notes <- c(label, input$notes)
  input$assay <- assay
  input
}

#' normalise_x(t(a)) for a dense double, integer or logical assay `a` (features in rows) whose
#' checks are deferred, without the transposition: x is list(a) of class "fsgpu_transposed",
#' which only the encoder reads (codes_from_r() makes its columns, a block of rows at a time).
#' NULL for any other assay.
#' @noRd
transposed_input <- function(a) {
  if (!is.matrix(a) || !typeof(a) %in% c("double", "integer", "logical") || !all(dim(a) > 0L)) return(NULL)
  feature_names <- rownames(a)
  if (is.null(feature_names)) feature_names <- paste0("X", seq_len(nrow(a)))
  list(x = structure(list(a), class = "fsgpu_transposed"), feature_names = feature_names,
       sample_names = colnames(a), n_samples = ncol(a), n_features = nrow(a), sparse = FALSE,
       kinds = rep(column_kind(a[0L]), nrow(a)))
}

#' The input restricted to some features (1-based indices), in that order
#' @noRd
subset_features <- function(input, index) {
  x <- input$x
  input$x <- if (isTRUE(input$delayed)) x[index, , drop = FALSE]  # features x samples, still delayed
             else if (is.list(x) && !is.data.frame(x)) x[index] else x[, index, drop = FALSE]
  input$feature_names <- input$feature_names[index]
  if (!is.null(input$kinds)) input$kinds <- input$kinds[index]
  input$n_features <- length(index)
  input
}

#' The assay of se that a job uses, checked: `assay` itself (a name, or an index, given as its
#' name when the assay has one), or by default `"logcounts"` when se has such an assay (as
#' scater and scran), else the first.
#' @noRd
check_assay <- function(se, assay) {
  assays <- SummarizedExperiment::assayNames(se)
  n <- length(SummarizedExperiment::assays(se))
  if (is.null(assay) && n > 0L) assay <- if ("logcounts" %in% assays) "logcounts" else 1L
  ok <- length(assay) == 1L && !is.na(assay) &&
    ((is.character(assay) && assay %in% assays) || (is.numeric(assay) && assay %in% seq_len(n)))
  if (!ok) {
    stop("assay must be the name or index of one assay of se; it has ", n, " assay(s)",
         if (length(assays)) paste0(": ", quote_list(assays)), call. = FALSE)
  }
  if (is.numeric(assay) && length(assays) >= assay && !is.na(assays[assay]) && nzchar(assays[assay]) &&
      sum(assays == assays[assay]) == 1L) {
    return(assays[assay])
  }
  if (is.numeric(assay)) as.integer(assay) else assay
}

#' How results and messages name an assay (checked by check_assay())
#' @noRd
assay_label <- function(assay) if (is.character(assay)) sprintf("assay '%s'", assay) else paste("assay", assay)

#' A result with notes about its input (the assay used, the columns binned) added to its run
#' record, which prints them under the line saying where the job ran
#' @noRd
with_notes <- function(result, notes) {
  if (!length(notes)) return(result)
  # .subset2: an igraph object is a list whose [[ looks up vertices
  if (is.list(result) && !is.data.frame(result) && inherits(.subset2(result, "run"), "fsgpu_backend_used")) {
    result$run$notes <- c(result$run$notes, notes)
  } else if (inherits(attr(result, "run"), "fsgpu_backend_used")) {
    attr(result, "run")$notes <- c(attr(result, "run")$notes, notes)
  }
  result
}

#' Turn x into one of the shapes the glue accepts, with its names and sizes
#' @noRd
normalise_x <- function(x, arg) {
  feature_names <- colnames(x)
  if (is.data.frame(x)) {
    # Automatic row names (1, 2, ...) are not sample names.
    sample_names <- if (.row_names_info(x) > 0L) rownames(x) else NULL
    dims <- dim(x)
    kinds <- vapply(x, column_kind, character(1), USE.NAMES = FALSE)
    x <- data_frame_columns(x, arg)
  } else if (methods::is(x, "Matrix")) {
    if (!methods::is(x, "sparseMatrix")) return(normalise_x(as.matrix(x), arg))
    x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
    sample_names <- rownames(x)
    dims <- dim(x)
    kinds <- rep("double", dims[2L])
  } else if (is.matrix(x) && (is.double(x) || is.integer(x) || is.logical(x))) {
    kinds <- rep(column_kind(x[0L]), ncol(x))
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
       n_samples = dims[1L], n_features = dims[2L], sparse = methods::is(x, "dgCMatrix"), kinds = kinds)
}

#' What a column's storage says: "double" (numbers, binned), "integer" (whole numbers that may
#' be counts or codes: see resolve_columns()) or "category" (factor, logical: never binned)
#' @noRd
column_kind <- function(v) {
  if (is.factor(v) || is.logical(v)) "category" else if (is.integer(v)) "integer" else "double"
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

# Which columns the jobs that bin (select_features(), the scores, mi_pairs(), mi_matrix(),
# mi_network()) bin and which they take as categories. Double columns are binned, factor and
# logical ones are categories. An integer column is binned when the user asks for bins (gives
# nbins or discretize), and otherwise when it has more distinct values than
# integer_level_limit(), with one message naming them; with few values it stays a category, as
# before. `categorical` overrides any of this per column. The readers apply the same rule
# (reader_columns() in read_files.R).

#' What a job that bins was asked: whether bins were asked for (nbins or discretize given),
#' the user's `categorical`, and the job's `threads` (for the checks of x, fsgpu_threads())
#' @noRd
binning_request <- function(nbins, discretize, categorical, threads = NULL) {
  ok <- is.null(categorical) || (is.logical(categorical) && length(categorical) && !anyNA(categorical)) ||
    ((is.character(categorical) || is.numeric(categorical)) && !anyNA(categorical))
  if (!ok)
    stop("categorical must be TRUE, FALSE, NULL (the default rule) or features: names, column indices, or one ",
         "TRUE or FALSE per feature", call. = FALSE)
  list(asked = !is.null(nbins) || !is.null(discretize), categorical = categorical, threads = threads)
}

#' An integer column with more distinct values than this is binned when no bins were asked
#' for: 10, or the default number of bins when that is larger (above 1,000 samples), and at
#' most half the samples (but at least 4), so that counts and codes with few levels stay
#' categories and intensities or wide counts do not become one category per value (with 10
#' samples, 10 values would make every feature a perfect, meaningless classifier).
#' @noRd
integer_level_limit <- function(n_samples) {
  as.integer(min(max(10, default_nbins(n_samples)), max(4, n_samples %/% 2)))
}


#' Per column: TRUE (a category), FALSE (binned) or NA (the default rule), from `categorical`
#' (TRUE, FALSE, NULL, or a selection of features: names, indices, or one logical per feature)
#' and, for the readers, `numeric` (TRUE or a selection, the columns to bin). A selection
#' overrides its columns only; the others follow the rule.
#' @noRd
column_roles <- function(categorical, numeric, feature_names) {
  n <- length(feature_names)
  where <- list(feature_names = feature_names, n_features = n)
  selected <- function(sel, arg) {
    if (isTRUE(sel)) return(rep(TRUE, n))
    if (isFALSE(sel) || is.null(sel)) return(rep(FALSE, n))
    if (is.logical(sel)) {
      if (length(sel) != n || anyNA(sel))
        stop(sprintf("%s: a logical selection needs one TRUE or FALSE per feature (%d), not %d values", arg, n,
                     length(sel)), call. = FALSE)
      return(sel)
    }
    seq_len(n) %in% resolve_features(sel, where, arg)
  }
  as_categorical <- selected(categorical, "categorical")
  as_numeric <- if (isFALSE(categorical)) rep(TRUE, n) else selected(numeric, "numeric")
  both <- as_categorical & as_numeric
  if (any(both))
    stop("categorical and numeric both name ", quote_list(feature_names[both]), call. = FALSE)
  ifelse(as_categorical, TRUE, ifelse(as_numeric, FALSE, NA))
}

#' The input with its columns as the engines take them: binned ones double, categories integer
#' (double categories become the codes of their distinct values), plus a note for the run
#' record and, when the rule binned integer columns, one message. Without `binning` (a job
#' that does not bin) the input is left as it is.
#' @noRd
prepare_columns <- function(input, binning, convert = TRUE) {
  if (is.null(binning)) return(input)
  resolved <- resolve_columns(input, binning, convert)
  input <- announce_columns(resolved$input, resolved$treatment, input$feature_names, input$n_samples)
  input$binning <- binning  # for z of the conditional scores (z_values())
  input
}

#' resolve_columns() without notes or message: list(input, treatment), where treatment has, per
#' column, whether it is an integer column binned (`binned`, `by_rule` when the rule chose it),
#' an integer column kept as a category (`integer_category`) or a double column made one
#' (`double_category`). binning$roles, when given, are the column roles (a block of a
#' DelayedArray gets its rows' roles); otherwise they come from binning$categorical. With
#' `convert = FALSE`, x is not converted here: it becomes list(x, bin_above) of class
#' "fsgpu_columns", bin_above as defer_columns() makes it but decided (0 or -1, or -2), which
#' codes_from_r() converts as it encodes.
#' @noRd
resolve_columns <- function(input, binning, convert = TRUE) {
  kinds <- input$kinds
  roles <- binning$roles
  if (is.null(roles)) roles <- column_roles(binning$categorical, NULL, input$feature_names)
  integer <- kinds == "integer"
  double <- kinds == "double"
  many <- rep(FALSE, input$n_features)
  rule <- integer & is.na(roles) & !binning$asked
  if (any(rule)) {
    limit <- integer_level_limit(input$n_samples)
    # integer columns are those of an integer matrix or a list (never of a dgCMatrix): counted in C++
    many[rule] <- fsgpu_more_values_than(input$x, which(rule), limit, fsgpu_threads(binning$threads))
  }
  bin <- integer & (roles %in% FALSE | (is.na(roles) & (binning$asked | many)))
  categorise <- double & roles %in% TRUE
  treatment <- list(binned = bin, by_rule = bin & rule, integer_category = integer & !bin,
                    double_category = categorise)
  if (!convert && (any(bin) || any(categorise))) {
    input$x <- structure(list(input$x, ifelse(bin, 0L, ifelse(categorise, -2L, -1L))), class = "fsgpu_columns")
    input$kinds[bin] <- "double"
    input$kinds[categorise] <- "integer"
  } else if (any(bin) || any(categorise)) {
    input$x <- convert_columns(input$x, bin, categorise)
    input$kinds[bin] <- "double"
    input$kinds[categorise] <- "integer"
    input$sparse <- methods::is(input$x, "dgCMatrix")
  }
  list(input = input, treatment = treatment)
}

#' Column j of x (a matrix, dgCMatrix or list of columns) as a plain vector
#' @noRd
feature_column <- function(x, j) if (is.list(x)) x[[j]] else as.vector(x[, j])

#' x with the columns `bin` as doubles and `categorise` as the codes of their distinct values
#' @noRd
convert_columns <- function(x, bin, categorise) {
  codes <- function(v) match(v, sort(unique(v)))
  if (is.matrix(x) && all(bin)) {
    storage.mode(x) <- "double"
    return(x)
  }
  if (is.matrix(x) && all(categorise)) {
    for (j in seq_len(ncol(x))) x[, j] <- codes(x[, j])
    storage.mode(x) <- "integer"
    return(x)
  }
  # Mixed: a list of columns (a sparse matrix with categories becomes dense columns).
  columns <- if (is.list(x)) x else lapply(seq_len(ncol(x)), function(j) feature_column(x, j))
  columns[bin] <- lapply(columns[bin], as.double)
  columns[categorise] <- lapply(columns[categorise], codes)
  columns
}

#' The note of the run record on what was done with integer and forced columns, and the one
#' message for the integer columns the rule binned
#' @noRd
announce_columns <- function(input, treatment, feature_names, n_samples) {
  columns <- function(which, what) {
    n <- sum(which)
    sprintf("%s %s column%s", format(n, big.mark = ","), what, if (n > 1) "s" else "")
  }
  notes <- c(
    if (any(treatment$binned)) paste(columns(treatment$binned, "integer"), "binned"),
    if (any(treatment$integer_category)) paste(columns(treatment$integer_category, "integer"), "as categories"),
    if (any(treatment$double_category)) paste(columns(treatment$double_category, "numeric"), "as categories"))
  input$notes <- c(input$notes, notes)
  if (any(treatment$by_rule)) {
    message(sprintf(paste0("Binning %s with more than %d distinct values (%s) as numbers; ",
                           "categorical = TRUE (or the columns' names) keeps them as categories"),
                    columns(treatment$by_rule, "integer"), integer_level_limit(n_samples),
                    quote_list(feature_names[treatment$by_rule], max = 3L)))
  }
  input
}

#' z of cmi_scores() and jmi_scores() given as values, as the engine takes it: a double vector
#' (binned) or integer categories, by the rule of the columns. `categorical = TRUE` or `FALSE`
#' applies to z too; a selection of features does not.
#' @noRd
z_values <- function(z, binning, n_samples) {
  if (!is.numeric(z)) return(as.integer(factor(z)))  # factor, character, logical
  categorical <- if (is.null(binning)) NULL else binning$categorical
  if (isTRUE(categorical)) return(match(z, sort(unique(z))))
  if (is.double(z)) return(z)
  if (isFALSE(categorical) || isTRUE(binning$asked)) return(as.double(z))
  limit <- integer_level_limit(n_samples)
  if (is.null(binning) || !fsgpu_more_values_than(list(z), 1L, limit, 1L)) return(z)
  message(sprintf(paste0("Binning z, integer values with more than %d distinct values, as numbers; ",
                         "categorical = TRUE keeps them as categories"), limit))
  as.double(z)
}

#' Stop when x holds NA, NaN or Inf, naming features and samples
#'
#' x is scanned in C++, in place, on the job's threads (fsgpu_threads(threads)) by
#' fsgpu_bad_values(); the offenders' first samples come back per column.
#' @noRd
check_finite <- function(input, arg, threads = NULL) {
  bad <- fsgpu_bad_values(input$x, input$n_samples, fsgpu_threads(threads))
  cols <- c(bad$infinite_cols, bad$missing_cols)
  if (!length(cols)) return(invisible())
  first <- tapply(c(bad$infinite_rows, bad$missing_rows), cols, min)  # per column, ascending
  stop_nonfinite(as.integer(first), as.integer(names(first)), input, arg)
}

#' Whether v holds no NA, NaN or Inf: one pass by sum() (no copy, unlike range()); only a
#' non-finite sum (a bad value, or an overflow of huge finite ones) looks further.
#' @noRd
all_finite <- function(v) {
  if (!is.double(v)) return(!anyNA(v))
  if (!length(v) || is.finite(sum(v))) return(TRUE)
  !anyNA(v) && !any(is.infinite(v))
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
  paste0(paste(names[seq_len(max)], collapse = ", "), " and ", format(more, big.mark = ","), " more")
}
