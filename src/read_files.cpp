// Glue for read_libsvm() and read_arff(): the file's bytes (read and decompressed in R) in,
// the pieces of a dgCMatrix or of a data frame's columns out.
#include <Rcpp.h>

#include "core/text_formats.h"
#include "input_codes.h"

using namespace fsgpu;

// A dgCMatrix's slots (p, i, x, Dim), the labels as written, each sample's line, the qids
// (NULL when no line has one) and the index base used. index_base: 0, 1 or -1 (detect);
// n_features: the width, or -1 for the largest index.
// [[Rcpp::export]]
Rcpp::List fsgpu_parse_libsvm(Rcpp::RawVector bytes, int index_base, double n_features) {
  FSGPU_GLUE_BEGIN
  LibsvmOptions options;
  options.index_base = index_base;
  options.n_features = static_cast<int64_t>(n_features);
  const LibsvmData data =
      parse_libsvm(reinterpret_cast<const char*>(RAW(bytes)), static_cast<size_t>(bytes.size()), options);
  // The width comes from the largest index: a stray huge index in a small file would allocate
  // gigabytes of column pointers and names, so it needs the user's word (n_features).
  const int64_t stored = static_cast<int64_t>(data.column.size());
  if (n_features < 0 && data.n_features > 10000000 && data.n_features > 100 * (stored + data.n_rows))
    throw std::runtime_error("the largest feature index makes " + std::to_string(data.n_features) +
                             " columns for " + std::to_string(stored) +
                             " stored values; give n_features = to read it that wide");
  Rcpp::IntegerVector p(data.n_features + 1), i(data.column.size());
  Rcpp::NumericVector x(data.column.size());
  libsvm_to_columns(data, INTEGER(p), INTEGER(i), REAL(x));
  Rcpp::CharacterVector labels(data.n_rows);
  Rcpp::NumericVector lines(data.n_rows);
  for (int64_t r = 0; r < data.n_rows; ++r) {
    labels[r] = data.labels[r];
    lines[r] = static_cast<double>(data.line[r]);
  }
  SEXP qid = R_NilValue;
  if (!data.qid.empty()) {
    Rcpp::NumericVector q(data.n_rows);
    for (int64_t r = 0; r < data.n_rows; ++r) q[r] = data.qid[r] == kNoQid ? NA_REAL : static_cast<double>(data.qid[r]);
    qid = q;
  }
  return Rcpp::List::create(
      Rcpp::Named("p") = p, Rcpp::Named("i") = i, Rcpp::Named("x") = x,
      Rcpp::Named("dim") = Rcpp::IntegerVector::create(static_cast<int>(data.n_rows), static_cast<int>(data.n_features)),
      Rcpp::Named("labels") = labels, Rcpp::Named("lines") = lines, Rcpp::Named("qid") = qid,
      Rcpp::Named("index_base") = data.index_base);
  FSGPU_GLUE_END
}

// The relation's name, the columns as R vectors (numeric: double; integer: integer; nominal: a
// factor with the declared levels; string and date: character; ? is NA) named by attribute,
// and each attribute's type.
// [[Rcpp::export]]
Rcpp::List fsgpu_parse_arff(Rcpp::RawVector bytes) {
  FSGPU_GLUE_BEGIN
  const ArffData data = parse_arff(reinterpret_cast<const char*>(RAW(bytes)), static_cast<size_t>(bytes.size()));
  const R_xlen_t n = static_cast<R_xlen_t>(data.n_rows);
  Rcpp::List columns(data.columns.size());
  Rcpp::CharacterVector names(data.columns.size()), types(data.columns.size());
  for (size_t j = 0; j < data.columns.size(); ++j) {
    const ArffColumn& col = data.columns[j];
    names[j] = col.name;
    types[j] = arff_type_name(col.type);
    switch (col.type) {
      case ArffType::numeric: {
        Rcpp::NumericVector v(n);
        for (R_xlen_t r = 0; r < n; ++r) v[r] = col.missing[r] ? NA_REAL : col.numbers[r];
        columns[j] = v;
        break;
      }
      case ArffType::integer:
      case ArffType::nominal: {
        // Factor codes are 1-based.
        const int offset = col.type == ArffType::nominal ? 1 : 0;
        Rcpp::IntegerVector v(n);
        for (R_xlen_t r = 0; r < n; ++r) v[r] = col.missing[r] ? NA_INTEGER : col.codes[r] + offset;
        if (col.type == ArffType::nominal) {
          v.attr("levels") = Rcpp::CharacterVector(col.levels.begin(), col.levels.end());
          v.attr("class") = "factor";
        }
        columns[j] = v;
        break;
      }
      case ArffType::string:
      case ArffType::date: {
        Rcpp::CharacterVector v(n);
        for (R_xlen_t r = 0; r < n; ++r) {
          if (col.missing[r]) v[r] = NA_STRING;
          else v[r] = col.strings[r];
        }
        columns[j] = v;
        break;
      }
    }
  }
  columns.attr("names") = names;
  return Rcpp::List::create(Rcpp::Named("relation") = data.relation, Rcpp::Named("columns") = columns,
                            Rcpp::Named("types") = types);
  FSGPU_GLUE_END
}
