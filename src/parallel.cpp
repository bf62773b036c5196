// Glue for the R layer's BPPARAM (R/parallel.R): the data a pair search's workers get.
#include <Rcpp.h>

#include <algorithm>

#include "input_codes.h"

using namespace fsgpu;

// The codes every feature of x has in a pair search (bins of numeric columns, compacted
// categories), as a samples x features integer matrix in sample order: integer columns, which
// the workers' own encoding keeps as they are up to the numbering of their levels (counts, and
// so every value of the search, do not depend on it).
// [[Rcpp::export]]
Rcpp::IntegerMatrix fsgpu_pair_codes(SEXP x, int n_samples, int nbins, int threads) {
  FSGPU_GLUE_BEGIN
  // One class: class-sorted positions are the samples themselves.
  const ClassLayout layout = ClassLayout::one_class(n_samples);
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads);
  Rcpp::IntegerMatrix out(n_samples, static_cast<int>(codes.n_features));
  int* o = out.begin();
  for (int64_t f = 0; f < codes.n_features; ++f) {
    int* column = o + f * n_samples;
    if (codes.sparse) std::fill(column, column + n_samples, static_cast<int>(codes.base[f]));
    for (int64_t e = codes.entries_begin(f); e < codes.entries_end(f); ++e) column[codes.row(f, e)] = codes.code(e);
  }
  return out;
  FSGPU_GLUE_END
}
