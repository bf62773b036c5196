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
sel <- select_features(se, class = "lineage", k = 20, nbins = 8, progress = FALSE)
print(sel, n = 20)
