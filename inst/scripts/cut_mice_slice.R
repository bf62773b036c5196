# Cuts the small slice of the heterogeneous-stock mice genotypes that fsgpu ships in
# inst/extdata (mice_slice.bed/.bim/.fam, mice_slice_coat.tsv), from the PLINK files of the
# development workspace's data folder (mice_hs_bglr: BGLR's mice data converted to PLINK, see
# inst/extdata/README.md).
#
# Usage, from the repository root:
#   Rscript inst/scripts/cut_mice_slice.R [SOURCE_DIR [TARGET_DIR]]
# SOURCE_DIR defaults to $FSGPU_DATA/mice_hs_bglr, else ../shared/data/mice_hs_bglr;
# TARGET_DIR to inst/extdata.
#
# What it keeps: every mouse (1,814), and the SNPs of two windows around the coat-colour loci,
# chromosome 2 from 75 to 90 cM (agouti, Asip, near 83 cM) and chromosome 4 from 25 to 55 cM
# (Tyrp1: its marker jfTRP is at 49 cM), plus every 40th SNP of the rest of the genome as background. The .bed is
# SNP-major, so a SNP is one block of ceiling(mice / 4) bytes: blocks are copied unchanged, and
# the genotypes are bitwise those of the source. The phenotype file keeps the ID and the coat
# colour of every mouse.

args <- commandArgs(trailingOnly = TRUE)
data_dir <- Sys.getenv("FSGPU_DATA", "../shared/data")
source_dir <- if (length(args) >= 1) args[[1]] else file.path(data_dir, "mice_hs_bglr")
target_dir <- if (length(args) >= 2) args[[2]] else file.path("inst", "extdata")
stopifnot(file.exists(file.path(source_dir, "mice.bed")), dir.exists(target_dir))

bim <- utils::read.table(file.path(source_dir, "mice.bim"), colClasses = "character",
                         col.names = c("chr", "snp", "cm", "bp", "a1", "a2"))
fam <- readLines(file.path(source_dir, "mice.fam"))
cm <- as.numeric(bim$cm)
window <- (bim$chr == "2" & cm >= 75 & cm <= 90) | (bim$chr == "4" & cm >= 25 & cm <= 55)
background <- !window & seq_len(nrow(bim)) %% 40 == 0
keep <- which(window | background)

bytes_per_snp <- ceiling(length(fam) / 4)
bed <- readBin(file.path(source_dir, "mice.bed"), "raw", n = 3 + bytes_per_snp * nrow(bim))
stopifnot(length(bed) == 3 + bytes_per_snp * nrow(bim),
          identical(bed[1:3], as.raw(c(0x6c, 0x1b, 0x01))))  # PLINK 1, SNP-major
blocks <- matrix(bed[-(1:3)], bytes_per_snp)
writeBin(c(bed[1:3], as.vector(blocks[, keep])), file.path(target_dir, "mice_slice.bed"))
utils::write.table(bim[keep, ], file.path(target_dir, "mice_slice.bim"), sep = "\t", quote = FALSE,
                   row.names = FALSE, col.names = FALSE)
writeLines(fam, file.path(target_dir, "mice_slice.fam"))

pheno <- utils::read.delim(gzfile(file.path(source_dir, "mice_pheno.tsv.gz")), colClasses = "character")
stopifnot(identical(pheno$IID, sapply(strsplit(fam, "[ \t]+"), `[`, 2)))
utils::write.table(pheno[c("IID", "CoatColour")], file.path(target_dir, "mice_slice_coat.tsv"), sep = "\t",
                   quote = FALSE, row.names = FALSE)

cat(sprintf("kept %d of %d SNPs (%d in the windows on chr 2 and 4, %d background) of %d mice\n",
            length(keep), nrow(bim), sum(window), sum(background), length(fam)))
