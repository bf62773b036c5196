# make demo: JMI on the ALL leukemia microarrays (Bioconductor package ALL, Chiaretti et al.
# 2004): 12,625 probe sets x 128 patients; which genes tell B-cell from T-cell ALL?
suppressPackageStartupMessages({
  library(fsgpu)
  library(ALL)
  library(SummarizedExperiment)
})
data(ALL, package = "ALL")
lineage <- factor(substr(as.character(ALL$BT), 1, 1), levels = c("B", "T"), labels = c("B cell", "T cell"))
se <- SummarizedExperiment(assays = list(exprs = Biobase::exprs(ALL)),
                           colData = data.frame(lineage = lineage, row.names = colnames(ALL)))
cat(sprintf("ALL: %d probe sets x %d patients (%s)\n\n", nrow(se), ncol(se),
            paste(sprintf("%d %s", table(lineage), levels(lineage)), collapse = ", ")))
print(backend_info())
cat("\n")
sel <- select_features(se, class = "lineage", k = 20, nbins = 8, quiet = TRUE)
print(sel, n = 20)
cat("\nThe first probe set alone separates B from T cells (its score is H(Y)), so every candidate",
    "\nties on I(X,S;Y) with it and the lowest column wins rank 2; later ranks add information",
    "\nabout the class jointly with each selected gene.\n\n")

# A harder question on the same arrays: among B-cell patients, BCR/ABL fusion vs no
# molecular abnormality (NEG).
b <- se[, lineage == "B cell" & ALL$mol.biol %in% c("BCR/ABL", "NEG")]
b$fusion <- droplevels(ALL$mol.biol[lineage == "B cell" & ALL$mol.biol %in% c("BCR/ABL", "NEG")])
cat(sprintf("B-cell ALL, BCR/ABL vs NEG: %d patients\n", ncol(b)))
print(select_features(b, class = "fusion", k = 10, nbins = 4, quiet = TRUE))
