# PLINK 1 binary genotype files.

#' Read PLINK .bed/.bim/.fam genotypes
#'
#' Reads a PLINK 1 binary fileset (SNP-major .bed, the default of PLINK 1.9 and 2) with its
#' .bim (SNPs) and .fam (samples). Genotypes are counts of allele 1 (the .bim's fifth column),
#' 0, 1 or 2, as PLINK's `--recode A`; missing calls are `NA`.
#'
#' With `packed = TRUE` the genotypes stay in the .bed's two-bit form (a quarter of a byte per
#' call) and [find_interactions()] builds its bitmaps straight from them, never through an
#' integer or double matrix: the way to search data sets too large for a matrix in R. Missing
#' calls are then handled by `find_interactions(missing = )`: `"exclude"` (an object is left out
#' of the tuples of the SNPs it lacks) or `"level"` (a fourth level).
#'
#' The .bed is read on [fsgpu_threads()] threads.
#'
#' @param prefix The path without extension (`prefix.bed`, `prefix.bim`, `prefix.fam`), or of
#'   the .bed file.
#' @param snps SNPs to read (indices or names); default all. Only for `packed = FALSE`.
#' @param packed Keep the genotypes packed (see above).
#' @return A list with `genotypes` (a samples x SNPs integer matrix with the SNP and sample ids
#'   as dimnames, or with `packed = TRUE` an object of class `fsgpu_genotypes`, which carries the
#'   map for [find_interactions()] and its plot), `map` (the .bim
#'   as a data frame: `chr`, `snp`, `cm`, `bp`, `allele1`, `allele2`) and `samples` (the .fam:
#'   `family`, `id`, `father`, `mother`, `sex`, `phenotype`).
#' @examples
#' # A toy file set: 3 SNPs of 4 samples (two bits a call, SNP-major after the 3 magic bytes)
#' prefix <- file.path(tempdir(), "toy")
#' writeLines(c("1 snp1 0 1000 A G", "1 snp2 0 2000 C T", "2 snp3 0 500 A C"), paste0(prefix, ".bim"))
#' writeLines(sprintf("fam%d id%d 0 0 1 -9", 1:4, 1:4), paste0(prefix, ".fam"))
#' writeBin(as.raw(c(0x6c, 0x1b, 0x01, 0x1b, 0xe4, 0xff)), paste0(prefix, ".bed"))
#' geno <- read_plink(prefix)
#' geno$genotypes
#' geno$map
#' @export
read_plink <- function(prefix, snps = NULL, packed = FALSE) {
  if (!is.character(prefix) || length(prefix) != 1 || is.na(prefix)) stop("prefix must be one path", call. = FALSE)
  prefix <- sub("\\.(bed|bim|fam)$", "", prefix)
  files <- paste0(prefix, c(".bed", ".bim", ".fam"))
  absent <- files[!file.exists(files)]
  if (length(absent)) stop("cannot find ", quote_list(absent), call. = FALSE)
  read_table <- function(file, columns, classes) {
    # Plain tables in C++ (a million SNPs: R's reader takes over a second); anything else in R.
    fast <- fsgpu_read_plink_table(path.expand(file), columns, classes)
    if (!is.null(fast)) return(fast)
    table <- tryCatch(utils::read.table(file, header = FALSE, colClasses = classes, col.names = columns,
                                        comment.char = "", quote = "", stringsAsFactors = FALSE),
                      error = function(e) stop(sprintf("cannot read %s: %s", file, conditionMessage(e)), call. = FALSE))
    table
  }
  map <- read_table(files[2], c("chr", "snp", "cm", "bp", "allele1", "allele2"),
                    c("character", "character", "numeric", "numeric", "character", "character"))
  samples <- read_table(files[3], c("family", "id", "father", "mother", "sex", "phenotype"),
                        c("character", "character", "character", "character", "integer", "character"))
  # The genotypes after the header, checked against the .fam and .bim, into their own raw vector
  # (in slices of 16 MB, a slice a thread at a time).
  bytes <- fsgpu_read_bed(path.expand(files[1]), nrow(samples), nrow(map), fsgpu_threads(), 16 * 2^20)
  if (packed) {
    if (!is.null(snps)) stop("packed = TRUE reads every SNP", call. = FALSE)
    genotypes <- structure(list(bytes = bytes, n_samples = nrow(samples), n_snps = nrow(map), snp_names = map$snp,
                                sample_names = samples$id, map = map), class = "fsgpu_genotypes")
    return(list(genotypes = genotypes, map = map, samples = samples))
  }
  index <- if (is.null(snps)) seq_len(nrow(map)) else if (is.character(snps)) {
    found <- match(snps, map$snp)
    if (anyNA(found)) stop("SNPs not in the .bim: ", quote_list(snps[is.na(found)]), call. = FALSE)
    found
  } else {
    if (!is.numeric(snps) || anyNA(snps) || any(snps < 1 | snps > nrow(map) | snps != round(snps)))
      stop(sprintf("snps must be names or indices from 1 to %d", nrow(map)), call. = FALSE)
    as.integer(snps)
  }
  genotypes <- fsgpu_decode_bed(bytes, nrow(samples), index)
  dimnames(genotypes) <- list(samples$id, map$snp[index])
  list(genotypes = genotypes, map = map[index, , drop = FALSE], samples = samples)
}

#' @exportS3Method print fsgpu_genotypes
print.fsgpu_genotypes <- function(x, ...) {
  cat(sprintf("Packed PLINK genotypes: %s samples x %s SNPs (%s MB)\n", format(x$n_samples, big.mark = ","),
              format(x$n_snps, big.mark = ","), format(round(length(x$bytes) / 2^20, 1))))
  invisible(x)
}

#' @export
dim.fsgpu_genotypes <- function(x) c(x$n_samples, x$n_snps)
