#include "input_codes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"

namespace fsgpu {

namespace {

// bin_above's value, from R's deferred input, for a double column taken as categories (the codes
// of its distinct values) rather than binned: categorical = for numbers.
constexpr int kDoubleCategory = -2;

// Features of a features x samples block (rows of a column-major matrix with leading dimension
// lda: an assay, or a block read from a DelayedArray) made columns, in tiles of 64 x 64 on
// `threads` threads. The tiles are shared out over both features and samples: a block of many
// samples has few features (rows_per_block()), too few feature tiles to keep threads busy.
template <class T>
std::vector<T> transposed_rows(const T* a, int64_t lda, int64_t rows, int64_t n, int threads) {
  std::vector<T> out(static_cast<size_t>(rows * n));
  constexpr int64_t tile = 64;
  const int64_t sample_tiles = (n + tile - 1) / tile;
  parallel_for((rows + tile - 1) / tile * sample_tiles, threads, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t f0 = t / sample_tiles * tile, s0 = t % sample_tiles * tile;
      const int64_t f1 = std::min(rows, f0 + tile), s1 = std::min(n, s0 + tile);
      for (int64_t s = s0; s < s1; ++s)
        for (int64_t f = f0; f < f1; ++f) out[f * n + s] = a[f + s * lda];
    }
  });
  return out;
}

// The codes 1..k of a double column's distinct values in increasing order, as R's
// match(v, sort(unique(v))); NA_INTEGER for NA, NaN and +-Inf, which the encoder reports.
void double_category_codes(const double* v, int32_t n, int32_t* out) {
  std::vector<double> values;
  values.reserve(n);
  for (int32_t i = 0; i < n; ++i)
    if (std::isfinite(v[i])) values.push_back(v[i]);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (int32_t i = 0; i < n; ++i)
    out[i] = std::isfinite(v[i])
                 ? static_cast<int32_t>(std::lower_bound(values.begin(), values.end(), v[i]) - values.begin()) + 1
                 : NA_INTEGER;
}

// "feature N ..." of a piece whose first feature is `first` as "feature N + first ...".
std::string shifted_message(const std::string& message, int64_t first) {
  const std::string prefix = "feature ";
  if (message.compare(0, prefix.size(), prefix) != 0) return message;
  size_t digits = 0;
  const int64_t f = std::stoll(message.substr(prefix.size()), &digits);
  return prefix + std::to_string(f + first) + message.substr(prefix.size() + digits);
}

// Features encoded in consecutive pieces (blocks of a DelayedArray or of an assay, runs of a
// sparse matrix's columns), each with its report, joined at the end into the one code matrix
// that encoding them all at once gives.
class Pieces {
 public:
  Pieces(const ClassLayout& layout, int nbins, int threads) : layout_(layout), nbins_(nbins), threads_(threads) {}

  // Dense columns: double columns marked kDoubleCategory (bin_above) are made categories first.
  void add_dense(std::vector<ColumnSource> columns) {
    const int32_t n = layout_.n_samples;
    std::vector<int64_t> marked;
    for (size_t f = 0; f < columns.size(); ++f)
      if (columns[f].numeric && columns[f].bin_above == kDoubleCategory) marked.push_back(static_cast<int64_t>(f));
    std::vector<int32_t> categories(marked.size() * static_cast<size_t>(n));
    parallel_for(static_cast<int64_t>(marked.size()), threads_, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t k = begin; k < end; ++k) double_category_codes(columns[marked[k]].numeric, n, &categories[k * n]);
    });
    for (size_t k = 0; k < marked.size(); ++k) {
      ColumnSource& c = columns[marked[k]];
      c.numeric = nullptr;
      c.categorical = &categories[k * n];
      c.bin_above = -1;
    }
    add([&](EncodeReport* r) { return encode_dense(columns, layout_, nbins_, threads_, r); },
        static_cast<int64_t>(columns.size()));
  }

  // Columns j0 .. j0 + count - 1 of a dgCMatrix, binned.
  void add_sparse(const int32_t* i, const int32_t* p, const double* x, int64_t j0, int64_t count) {
    add([&](EncodeReport* r) { return encode_sparse(i, p + j0, x, count, layout_, nbins_, threads_, r); }, count);
  }

  // Features x samples rows of a double, integer or logical matrix (leading dimension lda), with
  // the bin_above of the deferred input from limits[first()].
  template <class T>
  void add_rows(const T* a, int64_t lda, int64_t rows, const Rcpp::IntegerVector& limits) {
    const int32_t n = layout_.n_samples;
    const std::vector<T> columns_of = transposed_rows(a, lda, rows, n, threads_);
    std::vector<ColumnSource> columns(static_cast<size_t>(rows));
    for (int64_t f = 0; f < rows; ++f) {
      ColumnSource& c = columns[f];
      if constexpr (std::is_same_v<T, double>) c.numeric = columns_of.data() + f * n;
      else c.categorical = columns_of.data() + f * n;
      if (limits.size()) c.bin_above = limits[first() + f];
    }
    add_dense(std::move(columns));
  }

  int64_t first() const { return static_cast<int64_t>(report_.bad_row.size()); }

  // The joined matrix; bad values go to `report` (the matrix is then empty) or, without one,
  // throw naming the first such feature.
  CodeMatrix finish(EncodeReport* report) {
    if (report) *report = report_;
    if (report_.any_bad()) {
      if (report) return CodeMatrix();
      const auto bad = std::find_if(report_.bad_row.begin(), report_.bad_row.end(), [](int32_t r) { return r >= 0; });
      throw std::runtime_error("x has a missing or infinite value in feature " +
                               std::to_string(bad - report_.bad_row.begin() + 1));
    }
    return join();
  }

 private:
  template <class Encode>
  void add(Encode encode, int64_t count) {
    EncodeReport r;
    try {
      codes_.push_back(encode(&r));
    } catch (std::runtime_error& e) {
      throw std::runtime_error(shifted_message(e.what(), first()));
    }
    report_.bad_row.insert(report_.bad_row.end(), r.bad_row.begin(), r.bad_row.end());
    report_.binned.insert(report_.binned.end(), r.binned.begin(), r.binned.end());
    if (static_cast<int64_t>(r.bad_row.size()) != count) throw std::logic_error("a piece's report has the wrong size");
  }

  CodeMatrix join();

  const ClassLayout& layout_;
  int nbins_, threads_;
  std::vector<CodeMatrix> codes_;
  EncodeReport report_;
};

// A feature's codes, dense, from a dense or sparse piece.
void column_codes(const CodeMatrix& m, int64_t f, uint16_t* out) {
  if (!m.sparse) {
    for (int64_t e = m.entries_begin(f); e < m.entries_end(f); ++e) out[e - m.entries_begin(f)] = m.code(e);
    return;
  }
  std::fill(out, out + m.n_samples, m.base[f]);
  for (int64_t e = m.entries_begin(f); e < m.entries_end(f); ++e) out[m.entry_row[e]] = m.code(e);
}

CodeMatrix Pieces::join() {
  if (codes_.size() == 1) return std::move(codes_[0]);
  const int32_t n = layout_.n_samples;
  CodeMatrix m;
  m.n_samples = n;
  std::vector<std::pair<const CodeMatrix*, int64_t>> where;  // each feature's piece and place in it
  bool all_sparse = true;
  for (const CodeMatrix& piece : codes_) {
    m.wide |= piece.wide;
    all_sparse &= piece.sparse;
    m.levels.insert(m.levels.end(), piece.levels.begin(), piece.levels.end());
    for (int64_t f = 0; f < piece.n_features; ++f) where.emplace_back(&piece, f);
  }
  const int64_t p = static_cast<int64_t>(where.size());
  m.n_features = p;
  auto put = [&m](int64_t at, uint16_t code) {
    if (m.wide) m.codes16[at] = code; else m.codes8[at] = static_cast<uint8_t>(code);
  };
  std::vector<int64_t> start(static_cast<size_t>(p) + 1, 0);
  if (all_sparse) {  // sparse pieces (of a sparse matrix): their entries and bases as they are
    for (int64_t f = 0; f < p; ++f) {
      const auto& [piece, g] = where[f];
      start[f + 1] = start[f] + piece->entries_end(g) - piece->entries_begin(g);
      m.base.push_back(piece->base[g]);
    }
    m.sparse = true;
    m.entry_row.resize(static_cast<size_t>(start.back()));
    if (m.wide) m.codes16.resize(m.entry_row.size()); else m.codes8.resize(m.entry_row.size());
    parallel_for(p, threads_, 64, [&](int64_t begin, int64_t end, int) {
      for (int64_t f = begin; f < end; ++f) {
        const auto& [piece, g] = where[f];
        int64_t at = start[f];
        for (int64_t e = piece->entries_begin(g); e < piece->entries_end(g); ++e, ++at) {
          m.entry_row[at] = piece->entry_row[e];
          put(at, piece->code(e));
        }
      }
    });
    m.entry_start = std::move(start);
    codes_.clear();
    return m;
  }
  // Otherwise what encode_dense() makes of all the features at once, by its own rules
  // (dense_base(), sparse_is_smaller()): each feature's mode (the lowest of its most frequent
  // codes) is its base when common enough, and the matrix is kept sparse, without the modes,
  // when that is smaller.
  std::vector<uint16_t> mode(p);
  std::vector<int64_t> mode_count(p);
  parallel_for(p, threads_, 16, [&](int64_t begin, int64_t end, int) {
    std::vector<uint16_t> column(n);
    std::vector<int64_t> counts;
    for (int64_t f = begin; f < end; ++f) {
      column_codes(*where[f].first, where[f].second, column.data());
      counts.assign(m.levels[f] + size_t{1}, 0);
      for (uint16_t code : column) ++counts[code];
      const auto top = std::max_element(counts.begin(), counts.end());
      mode[f] = static_cast<uint16_t>(top - counts.begin());
      mode_count[f] = *top;
    }
  });
  for (int64_t f = 0; f < p; ++f) start[f + 1] = start[f] + (n - mode_count[f]);
  m.sparse = sparse_is_smaller(start.back(), n, p, m.code_bytes());
  const size_t size = m.sparse ? static_cast<size_t>(start.back()) : static_cast<size_t>(n) * p;
  if (m.wide) m.codes16.resize(size); else m.codes8.resize(size);
  if (m.sparse) m.entry_row.resize(size);
  parallel_for(p, threads_, 16, [&](int64_t begin, int64_t end, int) {
    std::vector<uint16_t> column(n);
    for (int64_t f = begin; f < end; ++f) {
      column_codes(*where[f].first, where[f].second, column.data());
      if (!m.sparse) {
        for (int32_t s = 0; s < n; ++s) put(f * n + s, column[s]);
        continue;
      }
      int64_t at = start[f];
      for (int32_t s = 0; s < n; ++s) {
        if (column[s] == mode[f]) continue;
        m.entry_row[at] = s;
        put(at++, column[s]);
      }
    }
  });
  m.base.resize(p);
  for (int64_t f = 0; f < p; ++f)
    m.base[f] = m.sparse ? mode[f] : dense_base(mode[f], mode_count[f], n);
  if (m.sparse) m.entry_start = std::move(start);
  codes_.clear();
  return m;
}

// How many features of an assay are read into one transposed block: about 16 million values.
int64_t rows_per_block(int64_t rows, int32_t n) { return std::max<int64_t>(1, std::min<int64_t>(rows, (1 << 24) / n)); }

// Rows `first` .. `first + rows - 1` of the features x samples matrix a (an R matrix) as pieces.
void add_matrix_rows(Pieces& pieces, SEXP a, int64_t first, int64_t rows, const Rcpp::IntegerVector& limits) {
  const int64_t lda = Rf_nrows(a);
  switch (TYPEOF(a)) {
    case REALSXP: pieces.add_rows(REAL(a) + first, lda, rows, limits); break;
    case INTSXP: pieces.add_rows(INTEGER(a) + first, lda, rows, limits); break;
    case LGLSXP: pieces.add_rows(LOGICAL(a) + first, lda, rows, limits); break;
    default: Rcpp::stop("the assay must be numeric, integer or logical");
  }
}

// A dgCMatrix whose double columns marked kDoubleCategory are categories: runs of binned columns
// are encoded sparse, runs of categories from their dense codes.
CodeMatrix sparse_with_categories(const int32_t* i, const int32_t* p, const double* x, int64_t features,
                                  const Rcpp::IntegerVector& limits, const ClassLayout& layout, int nbins, int threads,
                                  EncodeReport* report) {
  const int32_t n = layout.n_samples;
  Pieces pieces(layout, nbins, threads);
  for (int64_t j0 = 0; j0 < features;) {
    const bool category = limits[j0] == kDoubleCategory;
    int64_t j1 = j0 + 1;
    while (j1 < features && (limits[j1] == kDoubleCategory) == category) ++j1;
    if (!category) {
      pieces.add_sparse(i, p, x, j0, j1 - j0);
    } else {
      std::vector<double> values(static_cast<size_t>(j1 - j0) * n, 0.0);
      std::vector<ColumnSource> columns(static_cast<size_t>(j1 - j0));
      parallel_for(j1 - j0, threads, 16, [&](int64_t begin, int64_t end, int) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t j = j0 + k;
          if (p[j + 1] - p[j] < 0 || p[j + 1] - p[j] > n) throw std::runtime_error("malformed sparse matrix");
          for (int64_t e = p[j]; e < p[j + 1]; ++e) {
            if (i[e] < 0 || i[e] >= n) throw std::runtime_error("malformed sparse matrix");
            values[k * n + i[e]] = x[e];
          }
        }
      });
      for (int64_t k = 0; k < j1 - j0; ++k) {
        columns[k].numeric = &values[k * n];
        columns[k].bin_above = kDoubleCategory;
      }
      pieces.add_dense(std::move(columns));
    }
    j0 = j1;
  }
  return pieces.finish(report);
}

}  // namespace

ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes) {
  return ClassLayout::from_labels(y.begin(), static_cast<int32_t>(y.size()), n_classes);
}

int64_t dense_columns(SEXP x) {
  if (Rf_isObject(x)) return 0;  // dgCMatrix, and R's classed inputs (transposed, blocks, columns)
  if (Rf_isMatrix(x)) return Rf_ncols(x);
  return TYPEOF(x) == VECSXP ? XLENGTH(x) : 0;
}

CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads, SEXP bin_above,
                        EncodeReport* report, const CodedHook& on_coded) {
  const int32_t n = layout.n_samples;
  // R's converted input left for the encoder to convert (resolve_columns(convert = FALSE)):
  // list(x, bin_above) of class "fsgpu_columns", for glue that takes no bin_above of its own.
  if (TYPEOF(x) == VECSXP && Rf_inherits(x, "fsgpu_columns")) {
    if (!Rf_isNull(bin_above)) Rcpp::stop("bin_above is given twice");
    bin_above = VECTOR_ELT(x, 1);
    x = VECTOR_ELT(x, 0);
  }
  const Rcpp::IntegerVector limits = Rf_isNull(bin_above) ? Rcpp::IntegerVector() : Rcpp::IntegerVector(bin_above);
  const bool categories = std::find(limits.begin(), limits.end(), kDoubleCategory) != limits.end();
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    Rcpp::IntegerVector dim = m.slot("Dim"), i = m.slot("i"), p = m.slot("p");
    Rcpp::NumericVector values = m.slot("x");
    if (dim[0] != n) Rcpp::stop("x has %d rows but y has %d samples", dim[0], n);
    if (limits.size() && limits.size() != dim[1]) Rcpp::stop("bin_above must have one value per column of x");
    if (categories)
      return sparse_with_categories(i.begin(), p.begin(), values.begin(), dim[1], limits, layout, nbins, threads,
                                    report);
    return encode_sparse(i.begin(), p.begin(), values.begin(), dim[1], layout, nbins, threads, report);
  }
  // R's deferred input for an assay with features in rows: list(assay), class "fsgpu_transposed",
  // read in place, its columns made block by block (never a whole transposed copy).
  if (TYPEOF(x) == VECSXP && Rf_inherits(x, "fsgpu_transposed")) {
    SEXP a = VECTOR_ELT(x, 0);
    if (!Rf_isMatrix(a) || Rf_ncols(a) != n) Rcpp::stop("the assay has %d columns but y has %d samples", Rf_ncols(a), n);
    const int64_t features = Rf_nrows(a);
    if (limits.size() && limits.size() != features) Rcpp::stop("bin_above must have one value per row of the assay");
    Pieces pieces(layout, nbins, threads);
    const int64_t step = rows_per_block(features, n);
    for (int64_t first = 0; first < features; first += step)
      add_matrix_rows(pieces, a, first, std::min(step, features - first), limits);
    return pieces.finish(report);
  }
  // A DelayedArray assay (R's delayed_blocks()): list(read, n_blocks), class "fsgpu_blocks";
  // read(b) gives block b of whole rows, in order, as an ordinary matrix with features in rows.
  if (TYPEOF(x) == VECSXP && Rf_inherits(x, "fsgpu_blocks")) {
    Rcpp::List blocks(x);
    Rcpp::Function read = blocks["read"];
    const int n_blocks = Rcpp::as<int>(blocks["n_blocks"]);
    Pieces pieces(layout, nbins, threads);
    for (int b = 1; b <= n_blocks; ++b) {
      Rcpp::RObject block = read(b);
      if (!Rf_isMatrix(block) || Rf_ncols(block) != n)
        Rcpp::stop("block %d of the assay is not a matrix of %d columns", b, n);
      if (limits.size() && pieces.first() + Rf_nrows(block) > limits.size())
        Rcpp::stop("bin_above must have one value per row of the assay");
      add_matrix_rows(pieces, block, 0, Rf_nrows(block), limits);
      Rcpp::checkUserInterrupt();
    }
    if (limits.size() && pieces.first() != limits.size())
      Rcpp::stop("bin_above must have one value per row of the assay");
    return pieces.finish(report);
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
    if (limits.size()) c.bin_above = limits[columns.size()];
    columns.push_back(c);
  };
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
  if (!categories) return encode_dense(columns, layout, nbins, threads, report, on_coded);
  Pieces pieces(layout, nbins, threads);  // one piece: its double categories made codes first
  pieces.add_dense(std::move(columns));
  return pieces.finish(report);
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

using namespace fsgpu;

namespace {

// The first infinite and the first missing (NA or NaN) of a column's values v[0..count), whose
// 1-based sample numbers are row(k) + 1 (rows ascending): one branch-free pass, the offenders
// located only in a column that has any.
template <class Row>
void first_bad(const double* v, int64_t count, Row row, int32_t& infinite, int32_t& missing) {
  bool clean = true;
  for (int64_t k = 0; k < count; ++k) clean &= std::isfinite(v[k]);
  if (clean) return;
  for (int64_t k = 0; k < count && (infinite < 0 || missing < 0); ++k) {
    if (std::isinf(v[k]) && infinite < 0) infinite = static_cast<int32_t>(row(k) + 1);
    if (std::isnan(v[k]) && missing < 0) missing = static_cast<int32_t>(row(k) + 1);
  }
}

}  // namespace

// The checks of x (a matrix, list of columns or dgCMatrix, as numeric_columns_from_r() takes
// it) for the jobs that check in R (check_finite() in R/inputs.R, check_discretize_values() in
// R/discretize.R), in one threaded pass over x read in place: per column, the first sample
// holding +-Inf and the first holding NA or NaN. A list of infinite_rows, infinite_cols,
// missing_rows and missing_cols (1-based, columns ascending), for R to name features and samples.
// A dgCMatrix is scanned in its stored entries only (its zeros are finite), so the check costs
// its entries, not n x p.
// [[Rcpp::export]]
Rcpp::List fsgpu_bad_values(SEXP x, int n_samples, int threads) {
  FSGPU_GLUE_BEGIN
  const int64_t n = n_samples;
  int64_t p = 0;
  std::vector<int32_t> infinite, missing;
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    Rcpp::IntegerVector dim = m.slot("Dim"), i = m.slot("i"), starts = m.slot("p");
    Rcpp::NumericVector values = m.slot("x");
    if (dim[0] != n) Rcpp::stop("x has %d rows, not %d", dim[0], n_samples);
    p = dim[1];
    infinite.assign(p, -1);
    missing.assign(p, -1);
    const int *rows = i.begin(), *start = starts.begin();
    const double* v = values.begin();
    parallel_for(p, threads, 64, [&](int64_t begin, int64_t end, int) {
      for (int64_t f = begin; f < end; ++f) {
        const int* column_rows = rows + start[f];
        first_bad(v + start[f], start[f + 1] - start[f], [&](int64_t k) { return column_rows[k]; }, infinite[f],
                  missing[f]);
      }
    });
  } else {
    const NumericColumns columns = numeric_columns_from_r(x, n_samples);
    p = columns.n_features;
    infinite.assign(p, -1);
    missing.assign(p, -1);
    parallel_for(p, threads, 8, [&](int64_t begin, int64_t end, int) {
      std::vector<double> buffer(columns.dense ? 0 : n);
      for (int64_t f = begin; f < end; ++f) {
        const double* v = columns.dense ? columns.dense + f * n : buffer.data();
        if (!columns.dense) columns.read(f, buffer.data());
        first_bad(v, n, [](int64_t k) { return k; }, infinite[f], missing[f]);
      }
    });
  }
  std::vector<int> infinite_rows, infinite_cols, missing_rows, missing_cols;
  for (int64_t f = 0; f < p; ++f) {
    if (infinite[f] > 0) {
      infinite_rows.push_back(infinite[f]);
      infinite_cols.push_back(static_cast<int>(f + 1));
    }
    if (missing[f] > 0) {
      missing_rows.push_back(missing[f]);
      missing_cols.push_back(static_cast<int>(f + 1));
    }
  }
  return Rcpp::List::create(Rcpp::Named("infinite_rows") = Rcpp::wrap(infinite_rows),
                            Rcpp::Named("infinite_cols") = Rcpp::wrap(infinite_cols),
                            Rcpp::Named("missing_rows") = Rcpp::wrap(missing_rows),
                            Rcpp::Named("missing_cols") = Rcpp::wrap(missing_cols));
  FSGPU_GLUE_END
}

// The integer rule's count (more_values_than() in R/inputs.R) for the integer columns `columns`
// (1-based) of x (an integer matrix or a list of columns), read in place on `threads` threads:
// per column, whether it has more than `limit` distinct values, NA not counted.
// [[Rcpp::export]]
Rcpp::LogicalVector fsgpu_more_values_than(SEXP x, Rcpp::IntegerVector columns, int limit, int threads) {
  FSGPU_GLUE_BEGIN
  std::vector<const int*> data(columns.size());
  int64_t n = 0;
  for (R_xlen_t k = 0; k < columns.size(); ++k) {
    const R_xlen_t j = columns[k] - 1;
    SEXP v = Rf_isMatrix(x) ? x : VECTOR_ELT(x, j);
    if (TYPEOF(v) != INTSXP) Rcpp::stop("column %d of x is not integer", static_cast<int>(j + 1));
    n = Rf_isMatrix(x) ? Rf_nrows(x) : XLENGTH(v);
    data[k] = INTEGER(v) + (Rf_isMatrix(x) ? j * n : 0);
  }
  std::vector<int> more(columns.size(), 0);
  parallel_for(static_cast<int64_t>(columns.size()), threads, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t k = begin; k < end; ++k) {
      const int* v = data[k];
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t i = 0; i < n; ++i) {
        if (v[i] == NA_INTEGER) continue;
        lo = std::min<int64_t>(lo, v[i]);
        hi = std::max<int64_t>(hi, v[i]);
      }
      if (lo > hi || hi - lo < limit) continue;  // no values, or too narrow a range to hold more
      int64_t distinct = 0;
      if (hi - lo < 4 * n) {
        std::vector<uint8_t> seen(static_cast<size_t>(hi - lo + 1), 0);
        for (int64_t i = 0; i < n; ++i)
          if (v[i] != NA_INTEGER && !seen[v[i] - lo]) {
            seen[v[i] - lo] = 1;
            ++distinct;
          }
      } else {
        std::vector<int> values;
        values.reserve(n);
        for (int64_t i = 0; i < n; ++i)
          if (v[i] != NA_INTEGER) values.push_back(v[i]);
        std::sort(values.begin(), values.end());
        distinct = std::unique(values.begin(), values.end()) - values.begin();
      }
      more[k] = distinct > limit;
    }
  });
  return Rcpp::LogicalVector(more.begin(), more.end());
  FSGPU_GLUE_END
}
