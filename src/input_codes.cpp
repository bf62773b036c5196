#include "input_codes.h"

namespace fsgpu {

ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes) {
  return ClassLayout::from_labels(y.begin(), static_cast<int32_t>(y.size()), n_classes);
}

CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads) {
  const int32_t n = layout.n_samples;
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    Rcpp::IntegerVector dim = m.slot("Dim"), i = m.slot("i"), p = m.slot("p");
    Rcpp::NumericVector values = m.slot("x");
    if (dim[0] != n) Rcpp::stop("x has %d rows but y has %d samples", dim[0], n);
    return encode_sparse(i.begin(), p.begin(), values.begin(), dim[1], layout, nbins, threads);
  }
  std::vector<ColumnSource> columns;
  auto add = [&](SEXP column, R_xlen_t offset) {
    ColumnSource c;
    switch (TYPEOF(column)) {
      case REALSXP: c.numeric = REAL(column) + offset; break;
      case INTSXP: c.categorical = INTEGER(column) + offset; break;
      case LGLSXP: c.categorical = LOGICAL(column) + offset; break;
      default: Rcpp::stop("x must be numeric, integer or logical");
    }
    columns.push_back(c);
  };
  if (Rf_isMatrix(x)) {
    if (Rf_nrows(x) != n) Rcpp::stop("x has %d rows but y has %d samples", Rf_nrows(x), n);
    for (int j = 0; j < Rf_ncols(x); ++j) add(x, static_cast<R_xlen_t>(j) * n);
  } else if (TYPEOF(x) == VECSXP) {
    for (R_xlen_t j = 0; j < XLENGTH(x); ++j) {
      SEXP column = VECTOR_ELT(x, j);
      if (XLENGTH(column) != n) Rcpp::stop("column %d of x has the wrong length", static_cast<int>(j + 1));
      add(column, 0);
    }
  } else {
    Rcpp::stop("x must be a matrix, a list of columns or a dgCMatrix");
  }
  return encode_dense(columns, layout, nbins, threads);
}

}  // namespace fsgpu
