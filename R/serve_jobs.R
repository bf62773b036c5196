# The service's five jobs: their parameters (named and defaulted as in the R functions), how a
# worker reads a job's files and calls the public R function exactly as a user would, and what
# it writes (result.csv/.json/.rds, plot.png, script.R: each to a temporary name, then renamed).

service_param <- function(name, type, default = NULL, choices = NULL, help = "", min = NULL, max = NULL)
  list(name = name, type = type, default = default, choices = choices, help = help, min = min, max = max)

service_common_params <- list(
  service_param("class", "string", NULL, help = "The class column of a CSV/TSV/ARFF file (name or 1-based number); default: a column named 'class', else the last"),
  service_param("id", "string", NULL, help = "The sample ID column of a CSV/TSV file (name or 1-based number), whose values name the samples in the results (e.g. the neighbours of a kNN graph), or 'none'; default: the first column when its values are text, all different, or it is named id, sample or sample_id"),
  service_param("phenotype", "string", NULL, help = "PLINK uploads: the column of the phenotype file (FID, IID, ...) to use as the class; default its last column, or the .fam's phenotype without a phenotype file")
)

service_job_types <- function() {
  nbins <- service_param("nbins", "int", NULL, min = 2, max = 256,
                         help = "Equal-width bins per numeric feature; default the cube root of the number of samples")
  disc <- service_param("discretize", "choice", NULL, choices = discretize_methods,
                        help = "Supervised bins instead of equal-width ones")
  categorical <- service_param("categorical", "string", NULL, help = paste(
    "Which columns are categories (each value a level) rather than binned: auto (columns of whole numbers",
    "with few values, unless nbins or discretize is given), true (all), false (none), or column names",
    "separated by commas (the others as auto)"))
  list(
    select = list(title = "Select features", `function` = "select_features", params = list(
      service_param("method", "choice", "jmi", selection_methods, "The selection criterion"),
      service_param("k", "int", 10L, min = 1, max = 1e6, help = "How many features to select"),
      nbins, disc, categorical)),
    pairs = list(title = "Feature pairs (mutual information)", `function` = "mi_pairs", params = list(
      service_param("top", "int", 1000L, min = 1, max = 1e7, help = "How many of the best pairs to return"),
      service_param("with", "string", NULL, help = "Only pairs with these features (names, comma-separated)"),
      service_param("by", "choice", "joint", c("joint", "interaction"), "The measure that ranks the pairs"),
      service_param("p_adjust", "choice", "none", c("none", stats::p.adjust.methods[stats::p.adjust.methods != "none"]),
                    "Multiple-testing adjustment of the p-values"),
      nbins, disc, categorical)),
    discretize = list(title = "Discretize", `function` = "discretize", params = list(
      service_param("method", "choice", "caim", discretize_methods, "The discretization method"),
      service_param("nbins", "int", NULL, min = 2, max = 256, help = "Bins of equal_width and equal_freq"))),
    knn = list(title = "k-nearest-neighbour graph", `function` = "knn_graph", params = list(
      service_param("k", "int", 10L, min = 1, max = 10000, help = "Neighbours per point"),
      service_param("metric", "choice", "pearson", c("pearson", "spearman", "cosine", "euclidean", "manhattan"), "The distance"),
      service_param("graph", "choice", "knn", c("knn", "mutual", "snn"),
                    "knn: every point and its neighbours; mutual: pairs that are each other's neighbours; snn: shared-nearest-neighbour weights"),
      service_param("points", "choice", "samples", c("samples", "features"), "Link the samples (rows of the file) or the features"))),
    interactions = list(title = "Interactions (MDFS)", `function` = "find_interactions", params = list(
      service_param("dimensions", "int", 2L, min = 1, max = 5, help = "The size of the tuples searched"),
      service_param("divisions", "int", 1L, min = 1, max = 15, help = "Thresholds per variable"),
      service_param("discretizations", "int", 1L, min = 1, max = 1000, help = "Random discretizations to take the maximum over"),
      service_param("contrast", "bool", TRUE, help = "Add contrast variables to calibrate the p-values"),
      service_param("p_adjust", "choice", "holm", c("none", stats::p.adjust.methods[stats::p.adjust.methods != "none"]),
                    "Multiple-testing adjustment of the p-values"),
      service_param("top", "int", NULL, min = 1, max = 1e7, help = "Keep only this many of the best variables"),
      service_param("seed", "int", NULL, min = 0, max = 2147483647,
                    help = "The seed of the discretizations and of set.seed() for the contrast variables; default: one chosen at submission and recorded")))
  )
}

service_formats <- c("csv", "tsv", "tab", "arff", "libsvm", "svm", "svmlight")

# The parameters of a job from the form's text fields: each checked against its type, range and
# choices, the missing ones at their defaults. Unknown fields are an error (a misspelt name
# would otherwise be silently ignored).
service_params <- function(job, fields) {
  types <- service_job_types()
  if (!is.character(job) || length(job) != 1L || !job %in% names(types))
    stop("job must be one of ", paste(names(types), collapse = ", "), call. = FALSE)
  spec <- c(types[[job]]$params, service_common_params)
  names(spec) <- vapply(spec, `[[`, "", "name")
  unknown <- setdiff(names(fields), c(names(spec), "job"))
  if (length(unknown)) stop(sprintf("unknown parameter%s for job '%s': %s", if (length(unknown) > 1) "s" else "", job,
                                    paste(unknown, collapse = ", ")), call. = FALSE)
  out <- list()
  for (p in spec) {
    value <- fields[[p$name]]
    if (is.null(value) || !nzchar(trimws(value)) || identical(value, "null") || identical(value, "default")) {
      out[p$name] <- list(p$default)
      next
    }
    value <- trimws(value)
    out[[p$name]] <- switch(p$type,
      int = {
        v <- suppressWarnings(as.numeric(value))
        if (is.na(v) || v != round(v) || v < p$min || v > p$max)
          stop(sprintf("%s must be a whole number from %s to %s, not '%s'", p$name, format(p$min), format(p$max, scientific = FALSE),
                       substr(value, 1, 40)), call. = FALSE)
        as.integer(v)
      },
      bool = {
        v <- tolower(value)
        if (!v %in% c("true", "false", "1", "0", "yes", "no", "on", "off"))
          stop(sprintf("%s must be true or false, not '%s'", p$name, substr(value, 1, 40)), call. = FALSE)
        v %in% c("true", "1", "yes", "on")
      },
      choice = {
        if (!value %in% p$choices) stop(sprintf("%s must be one of %s, not '%s'", p$name, paste(p$choices, collapse = ", "),
                                                substr(value, 1, 40)), call. = FALSE)
        value
      },
      string = {
        if (nchar(value) > 10000L) stop(p$name, " is too long", call. = FALSE)
        value
      })
  }
  if (job == "interactions" && is.null(out$seed)) out$seed <- as.integer(sum(as.integer(sodium::random(3)) * c(1, 256, 65536)))
  if (!is.null(out$categorical)) out["categorical"] <- list(service_categorical_text(out$categorical))
  out
}

# The categorical parameter of select and pairs (the R functions' `categorical =`): "auto" (the
# default rule, kept as NULL), "true", "false" (in any case), or column names separated by
# commas. The job keeps it as this text, normalised; service_categorical() makes the R value.
# The names are checked against the file's features by service_validate().
service_categorical_text <- function(value) {
  word <- tolower(value)
  if (word == "auto") return(NULL)
  if (word %in% c("true", "false")) return(word)
  names <- trimws(strsplit(value, ",", fixed = TRUE)[[1]])
  if (!length(names) || !all(nzchar(names)) || grepl(",\\s*$", value))
    stop(sprintf("categorical must be auto, true, false or column names separated by commas, not '%s'",
                 substr(value, 1, 40)), call. = FALSE)
  paste(names, collapse = ",")
}

service_categorical <- function(text) {
  if (is.null(text)) NULL else if (text == "true") TRUE else if (text == "false") FALSE else strsplit(text, ",", fixed = TRUE)[[1]]
}

# ---- the files of a job --------------------------------------------------------------------

# What a job's upload is: one data file (CSV/TSV/ARFF/LibSVM, compressed or not) or a PLINK
# set (.bed, .bim, .fam, and optionally a phenotype file). Returns, per file, the role and the
# server's name for it (only the extension, from a fixed list, comes from the user's name).
service_file_roles <- function(names) {
  lower <- tolower(names)
  plain <- sub("\\.(gz|bz2|xz)$", "", lower)
  compression <- ifelse(plain == lower, "", substring(lower, nchar(plain) + 1L))
  ext <- sub("^.*\\.", "", plain)
  ext[!grepl(".", plain, fixed = TRUE)] <- ""
  if (any(ext == "bed")) {
    for (e in c("bed", "bim", "fam"))
      if (sum(ext == e & compression == "") != 1L)
        stop("a PLINK upload needs one uncompressed .bed, .bim and .fam file (and optionally a phenotype file)", call. = FALSE)
    other <- which(!ext %in% c("bed", "bim", "fam"))
    if (length(other) > 1L) stop("a PLINK upload takes one phenotype file besides its .bed, .bim and .fam", call. = FALSE)
    role <- ifelse(ext %in% c("bed", "bim", "fam"), ext, "phenotype")
    stored <- ifelse(role == "phenotype", paste0("phenotype.", ifelse(ext == "csv", "csv", "txt"), compression),
                     paste0("input.", ext))
    return(data.frame(name = names, role = role, stored = stored, stringsAsFactors = FALSE))
  }
  if (length(names) != 1L) stop("upload one data file (or a PLINK .bed, .bim and .fam)", call. = FALSE)
  if (!ext %in% service_formats)
    stop(sprintf("cannot tell the format of '%s' from its name: the file must end in .%s (optionally .gz, .bz2 or .xz), or be a PLINK .bed/.bim/.fam set",
                 clean_file_name(names), paste(service_formats, collapse = ", .")), call. = FALSE)
  data.frame(name = names, role = "data", stored = paste0("data.", ext, compression), stringsAsFactors = FALSE)
}

# A user's file name as shown in messages and scripts: its base name, with anything but
# letters, digits, '.', '_' and '-' replaced.
clean_file_name <- function(name) {
  name <- gsub("[^A-Za-z0-9._-]", "_", basename(gsub("\\\\", "/", name)))
  if (!nzchar(name) || grepl("^\\.+$", name)) "file" else substr(name, 1L, 200L)
}

# The first n lines of a connection (with `until`, a pattern: n lines past the first line that
# matches it, as an ARFF file's @data), reading it in bytes: a line longer than `max_line` (16
# MB) is refused, naming the file and the line, and no more than `max_total` is read. A small
# compressed file can hold a line of gigabytes, which readLines() would build in the web process.
read_head_lines <- function(con, n, name, until = NULL, max_line = 16e6, max_total = 64e6) {
  lines <- character()
  carry <- raw()
  total <- 0
  last <- function() {
    at <- if (is.null(until)) 0L else grep(until, lines, ignore.case = TRUE)[1]
    if (is.na(at)) Inf else at + n
  }
  while (length(lines) < last() && total < max_total) {
    chunk <- readBin(con, "raw", n = 1048576L)
    if (!length(chunk)) break
    total <- total + length(chunk)
    bytes <- c(carry, chunk)
    ends <- which(bytes == as.raw(10L))
    if (length(ends)) {
      text <- rawToChar(bytes[seq_len(ends[length(ends)] - 1L)])
      lines <- c(lines, sub("\r$", "", strsplit(text, "\n", fixed = TRUE)[[1]]))
      carry <- bytes[-seq_len(ends[length(ends)])]
    } else {
      carry <- bytes
    }
    if (length(carry) > max_line)
      stop(sprintf("%s: line %d is longer than %s", name, length(lines) + 1L, format_bytes(max_line)), call. = FALSE)
  }
  if (length(carry) && length(lines) < last()) lines <- c(lines, rawToChar(carry))  # a last line without a newline
  utils::head(lines, min(last(), length(lines)))
}

# The cheap check the web process makes before queueing (it must not compute): the first lines
# of a data file, decompressed, read by the package's own strict reader (the same messages with
# file, line and column), the class column found; the magic bytes and first lines of a PLINK
# set. Errors further into a big file are found by the worker, which fails the job with the
# reader's message. Returns the parameters, with the phenotype column named.
service_validate <- function(dir, files, params, head_lines = 200L) {
  scratch <- tempfile("fsgpu-check-")
  dir.create(scratch)
  on.exit(unlink(scratch, recursive = TRUE))
  shown <- function(e) {
    message <- gsub(paste0(scratch, "/"), "", conditionMessage(e), fixed = TRUE)
    stop(message, call. = FALSE)
  }
  if ("data" %in% files$role) {
    stored <- file.path(dir, files$stored[files$role == "data"])
    name <- without_compression(clean_file_name(files$name[files$role == "data"]))
    format <- format_by_name(name)
    if (is.na(format)) format <- format_by_name(files$stored[files$role == "data"])
    lines <- tryCatch({
      con <- gzfile(stored, "rb")
      on.exit(close(con), add = TRUE)
      # an ARFF file's header may be long: the lines past @data are the ones to check
      read_head_lines(con, head_lines, name, until = if (format == "arff") "^\\s*@data")
    }, error = function(e) stop(sprintf("%s: cannot read or decompress the file (%s)", name, conditionMessage(e)), call. = FALSE),
    warning = function(w) stop(sprintf("%s: cannot read or decompress the file (%s)", name, conditionMessage(w)), call. = FALSE))
    if (!length(lines)) stop(name, ": the file is empty", call. = FALSE)
    head <- file.path(scratch, name)
    writeLines(lines, head, useBytes = TRUE)
    class <- service_class(params$class)
    data <- tryCatch(read_features(head, format = if (format == "tsv") "tsv" else format,
                                   class = if (format == "libsvm") NULL else class, id = service_id(params$id)), error = shown)
    # the columns named categorical must be features (not the class or ID column), as the R
    # functions check them (a LibSVM file's first lines need not hold every feature: its
    # worker checks)
    if (!is.null(params$categorical) && format != "libsvm")
      tryCatch(column_roles(service_categorical(params$categorical), NULL, colnames(data$x)),
               error = function(e) stop(sprintf("%s: %s", name, conditionMessage(e)), call. = FALSE))
  } else {
    if (!is.null(params$categorical))
      stop("categorical is for data files (CSV, TSV, ARFF, LibSVM): PLINK genotypes are categories", call. = FALSE)
    bed <- file.path(dir, "input.bed")
    con <- file(bed, "rb")
    magic <- readBin(con, "raw", n = 3L)
    close(con)
    if (length(magic) < 3L || !identical(magic, as.raw(c(0x6c, 0x1b, 0x01))))
      stop(sprintf("%s: not a SNP-major PLINK .bed file (its first bytes must be 6c 1b 01)",
                   clean_file_name(files$name[files$role == "bed"])), call. = FALSE)
    for (r in c("bim", "fam")) {
      first <- tryCatch(utils::read.table(file.path(dir, paste0("input.", r)), nrows = 5L, colClasses = "character",
                                          comment.char = "", quote = ""),
                        error = function(e) stop(sprintf("%s: %s", clean_file_name(files$name[files$role == r]), conditionMessage(e)),
                                                 call. = FALSE))
      if (ncol(first) != 6L) stop(sprintf("%s: a PLINK .%s file has 6 columns, not %d", clean_file_name(files$name[files$role == r]),
                                          r, ncol(first)), call. = FALSE)
    }
    if ("phenotype" %in% files$role)
      params$phenotype <- tryCatch(read_phenotype(file.path(dir, files$stored[files$role == "phenotype"]), params$phenotype,
                                                  nrows = head_lines, name = clean_file_name(files$name[files$role == "phenotype"])),
                                   error = shown)$column
  }
  params
}

service_class <- function(class) {
  if (is.null(class)) NULL else if (grepl("^[0-9]+$", class)) as.numeric(class) else class
}

# The id parameter as read_features() takes it: NULL (found by itself), FALSE (none), a column.
service_id <- function(id) {
  if (!is.null(id) && tolower(id) %in% c("none", "false")) FALSE else service_class(id)
}

# A phenotype table (FID, IID, then phenotypes; whitespace or comma separated) and the column
# taken as the class.
read_phenotype <- function(file, column, nrows = -1L, name = basename(file)) {
  sep <- if (grepl("\\.csv", file)) "," else ""
  table <- tryCatch(utils::read.table(file, header = TRUE, sep = sep, nrows = nrows, comment.char = "", quote = "\"",
                                      na.strings = c("NA", "-9", ""), check.names = FALSE, stringsAsFactors = TRUE),
                    error = function(e) stop(sprintf("%s: %s", name, conditionMessage(e)), call. = FALSE))
  if (ncol(table) < 3L || !identical(toupper(names(table)[1:2]), c("FID", "IID")))
    stop(sprintf("%s: a phenotype file has the columns FID, IID and one or more phenotypes", name), call. = FALSE)
  if (is.null(column)) column <- names(table)[ncol(table)]
  if (!column %in% names(table)[-(1:2)])
    stop(sprintf("%s: no phenotype column '%s'; columns: %s", name, column, paste(names(table)[-(1:2)], collapse = ", ")), call. = FALSE)
  list(id = as.character(table$IID), y = table[[column]], column = column)
}

# ---- running a job (in a worker) -----------------------------------------------------------

# Reads the job's input as a user would: read_features() or read_plink() (plus the class).
service_read_input <- function(dir, files, job, params) {
  if ("data" %in% files$role) {
    file <- file.path(dir, files$stored[files$role == "data"])
    class <- service_class(params$class)
    format <- format_by_name(file)
    data <- with_user_name(file, files$name[files$role == "data"],
                           read_features(file, class = if (format == "libsvm") NULL else class, id = service_id(params$id)))
    return(list(x = data$x, y = data$y))
  }
  plink <- read_plink(file.path(dir, "input"), packed = job == "interactions")
  y <- if ("phenotype" %in% files$role) {
    ph <- read_phenotype(file.path(dir, files$stored[files$role == "phenotype"]), params$phenotype,
                         name = clean_file_name(files$name[files$role == "phenotype"]))
    ph$y[match(plink$samples$id, ph$id)]
  } else {
    p <- plink$samples$phenotype
    p[p %in% c("-9", "0", "NA")] <- NA
    factor(p)
  }
  list(x = plink$genotypes, y = y)
}

# Errors of the readers name the server's file; the user knows theirs.
with_user_name <- function(file, name, expr) {
  tryCatch(expr, error = function(e) stop(gsub(file, clean_file_name(name), conditionMessage(e), fixed = TRUE), call. = FALSE))
}

# The arguments of the R call, besides the data: the parameters as the function takes them
# (PLINK genotypes, already in three levels, take no discretizations).
service_call_args <- function(job, params, plink = FALSE) {
  p <- params
  if (plink && job == "interactions") p$divisions <- p$discretizations <- p$seed <- NULL
  switch(job,
    select = list(k = p$k, method = p$method, nbins = p$nbins, discretize = p$discretize,
                  categorical = service_categorical(p$categorical)),
    pairs = list(top = p$top, with = if (!is.null(p$with)) trimws(strsplit(p$with, ",", fixed = TRUE)[[1]]),
                 by = p$by, p_adjust = p$p_adjust, nbins = p$nbins, discretize = p$discretize,
                 categorical = service_categorical(p$categorical)),
    discretize = list(method = p$method, nbins = p$nbins),
    knn = list(k = p$k, metric = p$metric, output = "edges", mutual = p$graph == "mutual", snn = p$graph == "snn"),
    interactions = list(dimensions = p$dimensions, divisions = p$divisions, discretizations = p$discretizations,
                        contrast = p$contrast, p_adjust = p$p_adjust, top = p$top, seed = p$seed))
}

# The data arguments of the job's R function, from the input.
service_call_data <- function(job, input, params) {
  switch(job,
    knn = list(x = if (params$points == "features") t(as.matrix(input$x)) else input$x),
    discretize = list(x = input$x, y = if (!params$method %in% unsupervised_discretize_methods) input$y),
    list(x = input$x, y = input$y))
}

# Calls the job's public R function on its data (service_call_data()), as a user would.
service_call <- function(job, data, params, backend = "auto", devices = NULL) {
  args <- Filter(Negate(is.null), service_call_args(job, params, plink = inherits(data$x, "fsgpu_genotypes")))
  # a BiocParallel back end for the jobs that take one (e.g. batchtools on a cluster), set by
  # the worker's administrator
  bpparam <- getOption("fsgpu.service_bpparam")
  if (!is.null(bpparam) && job %in% c("pairs", "knn", "interactions")) args$BPPARAM <- bpparam
  # the contrast variables of find_interactions() are drawn from R's generator
  if (job == "interactions") set.seed(params$seed)
  fun <- get(service_job_types()[[job]]$`function`, envir = asNamespace("fsgpu"))
  do.call(fun, c(Filter(Negate(is.null), data), args, list(backend = backend, devices = devices)))
}

# The result as the CSV holds it: as.data.frame(), list columns (discretize's cuts) as their
# values joined by ';'.
service_table <- function(result) {
  table <- as.data.frame(result)
  for (j in seq_along(table))
    if (is.list(table[[j]])) table[[j]] <- vapply(table[[j]], function(v) paste(as.character(v), collapse = ";"), "")
  table
}

# A short R script that reproduces the result with fsgpu on the same file(s).
service_script <- function(id, job, files, params) {
  name <- function(role) clean_file_name(files$name[files$role == role])
  read <- if ("data" %in% files$role) {
    format <- format_by_name(without_compression(name("data")))
    class <- service_class(params$class)
    sample_id <- service_id(params$id)
    sprintf("data <- read_features(%s%s%s)", deparse(name("data")),
            if (!is.null(class) && !identical(format, "libsvm")) paste0(", class = ", deparse(class)) else "",
            if (!is.null(sample_id)) paste0(", id = ", deparse(sample_id)) else "")
  } else {
    c(sprintf("plink <- read_plink(%s%s)", deparse(sub("\\.bed$", "", name("bed"))), if (job == "interactions") ", packed = TRUE" else ""),
      if ("phenotype" %in% files$role) c(
        sprintf("pheno <- read.table(%s, header = TRUE%s, na.strings = c(\"NA\", \"-9\", \"\"), check.names = FALSE, stringsAsFactors = TRUE)",
                deparse(name("phenotype")), if (grepl("\\.csv", files$stored[files$role == "phenotype"])) ", sep = \",\"" else ""),
        sprintf("data <- list(x = plink$genotypes, y = pheno[[%s]][match(plink$samples$id, pheno$IID)])",
                deparse(params$phenotype)))
      else c("y <- plink$samples$phenotype", "y[y %in% c(\"-9\", \"0\", \"NA\")] <- NA",
             "data <- list(x = plink$genotypes, y = factor(y))"))
  }
  args <- Filter(Negate(is.null), service_call_args(job, params, plink = !"data" %in% files$role && job == "interactions"))
  arg_text <- if (length(args)) paste0(", ", paste(names(args), vapply(args, function(a) paste(deparse(if (is.integer(a)) as.numeric(a) else a), collapse = ""), ""),
                                                  sep = " = ", collapse = ", ")) else ""
  data_args <- switch(job,
    knn = if (params$points == "features") "t(as.matrix(data$x))" else "data$x",
    discretize = if (params$method %in% unsupervised_discretize_methods) "data$x" else "data$x, data$y",
    "data$x, data$y")
  c(sprintf("# Reproduces job %s of the fsgpu service (fsgpu %s).", id, utils::packageVersion("fsgpu")),
    "library(fsgpu)", read,
    if (job == "interactions") sprintf("set.seed(%d)", params$seed),
    sprintf("result <- %s(%s%s)", service_job_types()[[job]]$`function`, data_args, arg_text),
    "table <- as.data.frame(result)",
    "table[] <- lapply(table, function(v) if (is.list(v)) vapply(v, function(e) paste(as.character(e), collapse = \";\"), \"\") else v)",
    "write.csv(table, \"result.csv\", row.names = FALSE)")
}

# Writes a file through a temporary name in the same directory, then renames it, so that a
# reader never sees a part of it. The name has the process id: a worker's child that goes on
# for a moment after its worker was killed never writes into the same file as the job's rerun.
write_then_rename <- function(path, write) {
  tmp <- file.path(dirname(path), sprintf(".tmp-%d-%s", Sys.getpid(), basename(path)))
  on.exit(unlink(tmp))
  write(tmp)
  if (!file.exists(tmp)) stop(sprintf("%s was not written", basename(path)), call. = FALSE)
  why <- "rename failed"
  done <- withCallingHandlers(file.rename(tmp, path), warning = function(w) {
    why <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  })
  if (!done) stop(why, call. = FALSE)
  invisible(path)
}

# Writes the job's results into its directory: result.csv (as the API promises), result.json
# (the first 5,000 rows, for the page's table), result.rds, plot.png (when the result has a
# plot method) and script.R. Returns list(rows, columns) for the job's record.
service_write_results <- function(dir, id, job, files, params, result) {
  table <- service_table(result)
  write_then_rename(file.path(dir, "result.csv"), function(f) utils::write.csv(table, f, row.names = FALSE))
  shown <- utils::head(table, 5000L)
  write_then_rename(file.path(dir, "result.json"), function(f) writeLines(jsonlite::toJSON(
    list(columns = names(table), rows = unname(lapply(seq_len(nrow(shown)), function(i) unname(as.list(shown[i, , drop = FALSE])))),
         total = nrow(table)), auto_unbox = TRUE, digits = NA, na = "null", null = "null"), f))
  write_then_rename(file.path(dir, "result.rds"), function(f) saveRDS(result, f))
  write_then_rename(file.path(dir, "script.R"), function(f) writeLines(service_script(id, job, files, params), f))
  # The plot is an extra: a server whose R cannot draw a PNG serves the results without it
  # (plot.png answers 404).
  type <- service_png_type()
  if (inherits(result, c("fsgpu_selection", "fsgpu_pairs", "fsgpu_interactions")) && nrow(table) && !is.null(type)) {
    tryCatch(write_then_rename(file.path(dir, "plot.png"), function(f) {
      # 10 x 6.7 inches at 144 pixels an inch: the text is readable on a high-density screen
      grDevices::png(f, width = 1440, height = 960, res = 144, type = type)
      on.exit(grDevices::dev.off())
      graphics::plot(result)
    }), error = function(e) message("job ", id, ": no plot (", conditionMessage(e), ")"))
  }
  list(rows = nrow(table), columns = names(table))
}

# The type of PNG device this R draws with ("cairo", else getOption("bitmapType")), or NULL
# where it cannot draw one (the GPU host's bundled R has neither cairo nor a display): tried,
# since capabilities() can say "png" where the X11 device then fails. The service's tests
# expect plot.png where this says it can be drawn.
service_png_type <- function() {
  type <- if (capabilities("cairo")) "cairo" else getOption("bitmapType")
  f <- tempfile(fileext = ".png")
  on.exit(unlink(f))
  drawn <- tryCatch(suppressWarnings({
    grDevices::png(f, type = type)
    tryCatch(graphics::plot.new(), finally = grDevices::dev.off())
    file.exists(f)
  }), error = function(e) FALSE)
  if (isTRUE(drawn)) type else NULL
}
