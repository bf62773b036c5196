#include "input_codes.h"

#include <algorithm>
#include <vector>

#include "core/parallel.h"

namespace fsgpu {

namespace {

// The columns of `a`, a p x n column-major matrix with features in rows (a SummarizedExperiment's
// assay), made in tiles of 64 x 64 on `threads` threads (R's t() takes one).
template <class T>
std::vector<T> transposed_columns(const T* a, int64_t p, int64_t n, int threads) {
  std::vector<T> out(static_cast<size_t>(p * n));
  constexpr int64_t tile = 64;
  parallel_for((p + tile - 1) / tile, threads, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t f0 = begin * tile; f0 < std::min(p, end * tile); f0 += tile) {
      const int64_t f1 = std::min(p, f0 + tile);
      for (int64_t s0 = 0; s0 < n; s0 += tile) {
        const int64_t s1 = std::min(n, s0 + tile);
        for (int64_t s = s0; s < s1; ++s)
          for (int64_t f = f0; f < f1; ++f) out[f * n + s] = a[f + s * p];
      }
    }
  });
  return out;
}

}  // namespace

ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes) {
  return ClassLayout::from_labels(y.begin(), static_cast<int32_t>(y.size()), n_classes);
}

int64_t dense_columns(SEXP x) {
  if (Rf_isS4(x) || (TYPEOF(x) == VECSXP && Rf_inherits(x, "fsgpu_transposed"))) return 0;
  if (Rf_isMatrix(x)) return Rf_ncols(x);
  return TYPEOF(x) == VECSXP ? XLENGTH(x) : 0;
}

CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads, SEXP bin_above,
                        EncodeReport* report, const CodedHook& on_coded) {
  const int32_t n = layout.n_samples;
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    Rcpp::IntegerVector dim = m.slot("Dim"), i = m.slot("i"), p = m.slot("p");
    Rcpp::NumericVector values = m.slot("x");
    if (dim[0] != n) Rcpp::stop("x has %d rows but y has %d samples", dim[0], n);
    return encode_sparse(i.begin(), p.begin(), values.begin(), dim[1], layout, nbins, threads, report);
  }
  const Rcpp::IntegerVector limits = Rf_isNull(bin_above) ? Rcpp::IntegerVector() : Rcpp::IntegerVector(bin_above);
  std::vector<ColumnSource> columns;
  auto add = [&](SEXP column, R_xlen_t offset) {
    ColumnSource c;
    switch (TYPEOF(column)) {
      case REALSXP: c.numeric = REAL(column) + offset; break;
      case INTSXP: c.categorical = INTEGER(column) + offset; break;
      case LGLSXP: c.categorical = LOGICAL(column) + offset; break;
      default: Rcpp::stop("x must be numeric, integer or logical");
    }
    if (c.categorical && limits.size()) c.bin_above = limits[columns.size()];
    columns.push_back(c);
  };
  // R's deferred input for an assay with features in rows: list(assay), class "fsgpu_transposed".
  if (TYPEOF(x) == VECSXP && Rf_inherits(x, "fsgpu_transposed")) {
    SEXP a = VECTOR_ELT(x, 0);
    if (!Rf_isMatrix(a) || Rf_ncols(a) != n) Rcpp::stop("the assay has %d columns but y has %d samples", Rf_ncols(a), n);
    const int64_t features = Rf_nrows(a);
    if (limits.size() && limits.size() != features) Rcpp::stop("bin_above must have one value per row of the assay");
    std::vector<double> reals;
    std::vector<int> integers;
    if (TYPEOF(a) == REALSXP) reals = transposed_columns(REAL(a), features, n, threads);
    else if (TYPEOF(a) == INTSXP) integers = transposed_columns(INTEGER(a), features, n, threads);
    else if (TYPEOF(a) == LGLSXP) integers = transposed_columns(LOGICAL(a), features, n, threads);
    else Rcpp::stop("the assay must be numeric, integer or logical");
    for (int64_t f = 0; f < features; ++f) {
      ColumnSource c;
      if (!reals.empty()) c.numeric = reals.data() + f * n;
      else c.categorical = integers.data() + f * n;
      if (c.categorical && limits.size()) c.bin_above = limits[f];
      columns.push_back(c);
    }
    return encode_dense(columns, layout, nbins, threads, report, on_coded);
  }
  R_xlen_t p = 0;
  if (Rf_isMatrix(x)) {
    if (Rf_nrows(x) != n) Rcpp::stop("x has %d rows but y has %d samples", Rf_nrows(x), n);
    p = Rf_ncols(x);
  } else if (TYPEOF(x) == VECSXP) {
    p = XLENGTH(x);
  } else {
    Rcpp::stop("x must be a matrix, a list of columns or a dgCMatrix");
  }
  if (limits.size() && limits.size() != p) Rcpp::stop("bin_above must have one value per column of x");
  if (Rf_isMatrix(x)) {
    for (int j = 0; j < p; ++j) add(x, static_cast<R_xlen_t>(j) * n);
  } else {
    for (R_xlen_t j = 0; j < p; ++j) {
      SEXP column = VECTOR_ELT(x, j);
      if (XLENGTH(column) != n) Rcpp::stop("column %d of x has the wrong length", static_cast<int>(j + 1));
      add(column, 0);
    }
  }
  return encode_dense(columns, layout, nbins, threads, report, on_coded);
}

Rcpp::List report_to_r(const EncodeReport& report) {
  std::vector<int> rows, cols;
  for (size_t f = 0; f < report.bad_row.size(); ++f) {
    if (report.bad_row[f] < 0) continue;
    rows.push_back(report.bad_row[f] + 1);
    cols.push_back(static_cast<int>(f + 1));
  }
  Rcpp::LogicalVector binned(report.binned.begin(), report.binned.end());
  return Rcpp::List::create(Rcpp::Named("binned") = binned, Rcpp::Named("bad_rows") = Rcpp::wrap(rows),
                            Rcpp::Named("bad_columns") = Rcpp::wrap(cols));
}

namespace {

// A column's storage, resolved on the main thread (REAL() and INTEGER() may allocate for ALTREP
// vectors, which worker threads must not do).
struct RawColumn {
  const double* real = nullptr;
  const int* integer = nullptr;  // integer or logical storage; NA_INTEGER is missing
};

RawColumn raw_column(SEXP v, R_xlen_t offset) {
  RawColumn c;
  if (TYPEOF(v) == REALSXP) c.real = REAL(v) + offset;
  else if (TYPEOF(v) == INTSXP) c.integer = INTEGER(v) + offset;
  else if (TYPEOF(v) == LGLSXP) c.integer = LOGICAL(v) + offset;
  return c;
}

void copy_as_doubles(const RawColumn& c, int32_t n, double* out) {
  if (c.real) {
    std::copy(c.real, c.real + n, out);
    return;
  }
  for (int32_t i = 0; i < n; ++i) out[i] = c.integer[i] == NA_INTEGER ? R_NaN : static_cast<double>(c.integer[i]);
}

bool numeric_type(SEXP v) { return TYPEOF(v) == REALSXP || TYPEOF(v) == INTSXP || TYPEOF(v) == LGLSXP; }

}  // namespace

NumericColumns numeric_columns_from_r(SEXP x, int32_t n) {
  NumericColumns out;
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    Rcpp::IntegerVector dim = m.slot("Dim"), i = m.slot("i"), p = m.slot("p");
    Rcpp::NumericVector values = m.slot("x");
    if (dim[0] != n) Rcpp::stop("x has %d rows, not %d", dim[0], n);
    const int *rows = i.begin(), *starts = p.begin();
    const double* v = values.begin();
    out.n_features = dim[1];
    out.read = [=](int64_t f, double* col) {
      std::fill(col, col + n, 0.0);
      for (int e = starts[f]; e < starts[f + 1]; ++e) col[rows[e]] = v[e];
    };
    return out;
  }
  std::vector<RawColumn> columns;
  if (Rf_isMatrix(x) && numeric_type(x)) {
    if (Rf_nrows(x) != n) Rcpp::stop("x has %d rows, not %d", Rf_nrows(x), n);
    for (int j = 0; j < Rf_ncols(x); ++j) columns.push_back(raw_column(x, static_cast<R_xlen_t>(j) * n));
    if (TYPEOF(x) == REALSXP) out.dense = REAL(x);
  } else if (TYPEOF(x) == VECSXP) {
    for (R_xlen_t j = 0; j < XLENGTH(x); ++j) {
      SEXP column = VECTOR_ELT(x, j);
      if (!numeric_type(column) || XLENGTH(column) != n)
        Rcpp::stop("column %d of x is not a numeric vector of length %d", static_cast<int>(j + 1), n);
      columns.push_back(raw_column(column, 0));
    }
  } else {
    Rcpp::stop("x must be a numeric matrix, a list of numeric columns or a dgCMatrix");
  }
  out.n_features = static_cast<int64_t>(columns.size());
  out.read = [columns = std::move(columns), n](int64_t f, double* col) { copy_as_doubles(columns[f], n, col); };
  return out;
}

}  // namespace fsgpu
