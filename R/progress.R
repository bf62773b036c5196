# Progress bars, interrupts and quiet runs: what every long job shares.

#' Progress, interrupts and messages of long jobs
#'
#' [select_features()], [mi_pairs()], [mi_matrix()], [discretize()], [knn_graph()] and
#' [find_interactions()] run their engines in pieces of well under a second each (slices of
#' features, pairs, queries or tuples, sized by their work, not their number) and return to R's
#' main thread between pieces. There they check for a user interrupt, so Ctrl-C (or Esc) stops a
#' job within about a second, on the CPU and on the GPUs, and report the fraction done.
#'
#' In interactive sessions the fraction done is shown as a progress bar of the cli package (when
#' it is installed), which appears only for jobs that last more than about two seconds (cli's
#' `cli.progress_show_after` option) and is removed when the job ends. It shows the percentage
#' done and an estimate of the time left before the job's name. `quiet = TRUE` shows no
#' bar and suppresses the job's messages (such as a note about constant rows or unlabelled
#' objects); `suppressMessages()` silences the messages alone. [mi_scores()], [cmi_scores()] and
#' [jmi_scores()], one pass each, take `quiet` too, for their messages and for the bar of a
#' `discretize` method fitted on the way; their results record `run` as the long jobs' do.
#'
#' Other front ends (a Shiny app, a log) can take the progress instead:
#' `options(fsgpu.progress_handler = function(job, done) ...)` is called with the job's name and
#' the fraction done, from 0 to 1 (1 once, when the job ends), in place of the bar and also in
#' non-interactive sessions, unless `quiet = TRUE`. Updates come at most every
#' `getOption("fsgpu.progress_interval", 0.1)` seconds. An error in the handler stops the job.
#'
#' @name fsgpu_progress
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200 * 30), 200, 30)
#' y <- factor(rep(c("a", "b"), 100))
#' seen <- numeric()
#' old <- options(fsgpu.progress_handler = function(job, done) seen <<- c(seen, done),
#'                fsgpu.progress_interval = 0)
#' sel <- select_features(x, y, k = 5, backend = "cpu")
#' options(old)
#' seen  # a step at a time, then 1
NULL

# Checks the quiet argument of a job.
check_quiet <- function(quiet) {
  if (!is.logical(quiet) || length(quiet) != 1 || is.na(quiet)) stop("quiet must be TRUE or FALSE", call. = FALSE)
  quiet
}

# Evaluates a job (lazily, so that its input checks are inside) with its messages suppressed
# when quiet.
quiet_if <- function(quiet, job) if (check_quiet(quiet)) suppressMessages(job) else job

# What the glue of a job takes as its `progress` (src/job_progress.h): NULL when nothing is to
# be shown, otherwise list(update = function(done), interval = seconds), plus finish(), which
# the R side calls through progress_done() when the glue has returned. The cli bar belongs to
# `envir`, the job's frame, and goes when it exits, also on an error or an interrupt.
job_progress <- function(job, quiet, envir = parent.frame()) {
  if (quiet) return(NULL)
  interval <- getOption("fsgpu.progress_interval", 0.1)
  if (!is.numeric(interval) || length(interval) != 1 || !is.finite(interval) || interval < 0)
    stop("options(fsgpu.progress_interval) must be a number of seconds", call. = FALSE)
  handler <- getOption("fsgpu.progress_handler")
  if (!is.null(handler)) {
    if (!is.function(handler)) stop("options(fsgpu.progress_handler) must be a function(job, done)", call. = FALSE)
    return(list(update = function(done) handler(job, done), interval = interval, finish = function() handler(job, 1)))
  }
  if (!interactive() || !requireNamespace("cli", quietly = TRUE)) return(NULL)
  # The bar, percentage and ETA come first, so that a console narrower than the line cuts the
  # job's name, not them (cli's default puts the name first). The fraction done is counted in
  # steps of 1/10,000, so the ETA (cli's: elapsed time x the fraction left / the fraction done)
  # shows from 0.01% on.
  bar <- cli::cli_progress_bar(job, total = progress_steps, clear = TRUE, .envir = envir,
                               format = "{cli::pb_bar} {cli::pb_percent} | ETA: {cli::pb_eta} | {cli::pb_name}")
  list(update = function(done) cli::cli_progress_update(set = floor(progress_steps * done), id = bar, .envir = envir),
       interval = interval, finish = function() cli::cli_progress_done(id = bar, .envir = envir))
}

progress_steps <- 10000

progress_done <- function(progress) {
  if (!is.null(progress)) progress$finish()
  invisible()
}
