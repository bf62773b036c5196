// Turning input columns into compact codes (see code_matrix.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "code_matrix.h"
#include "parallel.h"

namespace fsgpu {

ClassLayout ClassLayout::from_labels(const int32_t* labels, int32_t n_samples, int32_t n_classes) {
  if (n_samples < 1) throw std::runtime_error("no samples");
  if (n_classes < 2) throw std::runtime_error("y needs at least two classes");
  ClassLayout layout;
  layout.n_samples = n_samples;
  layout.n_classes = n_classes;
  layout.class_start.assign(static_cast<size_t>(n_classes) + 1, 0);
  for (int32_t i = 0; i < n_samples; ++i) {
    if (labels[i] < 0 || labels[i] >= n_classes) throw std::runtime_error("class label out of range");
    ++layout.class_start[labels[i] + 1];
  }
  for (int32_t c = 0; c < n_classes; ++c) {
    if (layout.class_start[c + 1] == 0) throw std::runtime_error("a class has no samples");
    layout.class_start[c + 1] += layout.class_start[c];
  }
  layout.position.resize(n_samples);
  layout.class_of.resize(n_samples);
  std::vector<int32_t> next(layout.class_start.begin(), layout.class_start.end() - 1);
  for (int32_t i = 0; i < n_samples; ++i) {  // stable: samples keep their order within a class
    int32_t p = next[labels[i]]++;
    layout.position[i] = p;
    layout.class_of[p] = labels[i];
  }
  return layout;
}

ClassLayout ClassLayout::one_class(int32_t n_samples) {
  if (n_samples < 1) throw std::runtime_error("no samples");
  ClassLayout layout;
  layout.n_samples = n_samples;
  layout.n_classes = 1;
  layout.class_start = {0, n_samples};
  layout.position.resize(n_samples);
  for (int32_t i = 0; i < n_samples; ++i) layout.position[i] = i;
  layout.class_of.assign(n_samples, 0);
  return layout;
}

uint16_t CodeMatrix::max_levels() const {
  uint16_t m = 1;
  for (uint16_t l : levels) m = std::max(m, l);
  return m;
}

namespace {

// Distinct values of a categorical column, mapped to 0..levels-1 in increasing order.
class CategoricalCodes {
 public:
  CategoricalCodes(const int32_t* v, int32_t n, int64_t feature) {
    int32_t lo = INT_MAX, hi = INT_MIN;
    for (int32_t i = 0; i < n; ++i) {
      if (v[i] == INT_MIN)
        throw std::runtime_error("x has a missing value in feature " + std::to_string(feature + 1));
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
    lo_ = lo;
    if (static_cast<int64_t>(hi) - lo < 4 * static_cast<int64_t>(n) + 65536) {  // a lookup table
      table_.assign(static_cast<size_t>(static_cast<int64_t>(hi) - lo + 1), -1);
      for (int32_t i = 0; i < n; ++i) table_[v[i] - lo] = 0;
      for (int32_t& t : table_)
        if (t == 0) t = levels_++;
    } else {  // wide ranges: sorted distinct values
      sorted_.assign(v, v + n);
      std::sort(sorted_.begin(), sorted_.end());
      sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
      levels_ = static_cast<int64_t>(sorted_.size());
    }
    if (levels_ > kMaxLevels)
      throw std::runtime_error("feature " + std::to_string(feature + 1) +
                               " has more than 65535 distinct values; pass it as numeric to bin it");
  }
  int64_t levels() const { return levels_; }
  uint16_t operator()(int32_t v) const {
    if (!table_.empty()) return static_cast<uint16_t>(table_[v - lo_]);
    return static_cast<uint16_t>(std::lower_bound(sorted_.begin(), sorted_.end(), v) - sorted_.begin());
  }

 private:
  int32_t lo_ = 0;
  int64_t levels_ = 0;
  std::vector<int32_t> table_, sorted_;
};

EqualWidthBins numeric_bins(const double* v, int64_t n, bool has_zeros, int nbins, int64_t feature) {
  EqualWidthBins bins;
  bins.nbins = nbins;
  bins.lo = has_zeros ? 0.0 : INFINITY;
  bins.hi = has_zeros ? 0.0 : -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i]))
      throw std::runtime_error("x has a missing or infinite value in feature " + std::to_string(feature + 1));
    bins.lo = std::min(bins.lo, v[i]);
    bins.hi = std::max(bins.hi, v[i]);
  }
  return bins;
}

// The base of a dense feature: its most frequent code, if common enough to pay for deriving it.
uint16_t dense_base(uint16_t mode, int64_t mode_count, int32_t n_samples) {
  return mode_count * kBaseShareDenominator < n_samples ? kNoBase : mode;
}

// Dense codes where most cells hold their feature's mode (text counts, SNPs, sparse data
// passed as a dense matrix) are kept sparse instead: only the other codes are stored and
// visited, and the mode's counts are derived, exactly as for sparse input.
void sparsify_if_smaller(CodeMatrix& m, const std::vector<uint16_t>& mode, const std::vector<int64_t>& mode_count,
                         int threads) {
  const int64_t n = m.n_samples;
  std::vector<int64_t> start(static_cast<size_t>(m.n_features) + 1, 0);
  for (int64_t f = 0; f < m.n_features; ++f) start[f + 1] = start[f] + (n - mode_count[f]);
  const double sparse_bytes = static_cast<double>(start.back()) * (m.code_bytes() + 4) + 8.0 * start.size();
  if (2 * sparse_bytes >= static_cast<double>(n) * m.n_features * m.code_bytes()) return;
  std::vector<int32_t> rows(static_cast<size_t>(start.back()));
  std::vector<uint8_t> codes8(m.wide ? 0 : rows.size());
  std::vector<uint16_t> codes16(m.wide ? rows.size() : 0);
  parallel_for(m.n_features, threads, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t f = begin; f < end; ++f) {
      int64_t at = start[f];
      for (int64_t e = f * n; e < (f + 1) * n; ++e) {
        const uint16_t code = m.code(e);
        if (code == mode[f]) continue;
        rows[at] = static_cast<int32_t>(e - f * n);
        if (m.wide) codes16[at] = code; else codes8[at] = static_cast<uint8_t>(code);
        ++at;
      }
    }
  });
  m.sparse = true;
  m.base = mode;
  m.entry_start = std::move(start);
  m.entry_row = std::move(rows);
  m.codes8 = std::move(codes8);
  m.codes16 = std::move(codes16);
}

void check_nbins(int nbins) {
  if (nbins < 2 || nbins > kMaxLevels) throw std::runtime_error("nbins must be between 2 and 65535");
}

}  // namespace

CodeMatrix encode_dense(const std::vector<ColumnSource>& columns, const ClassLayout& layout,
                        int nbins, int threads) {
  check_nbins(nbins);
  CodeMatrix m;
  m.n_samples = layout.n_samples;
  m.n_features = static_cast<int64_t>(columns.size());
  const int32_t n = layout.n_samples;
  m.levels.resize(columns.size());
  m.base.resize(columns.size());
  std::vector<EqualWidthBins> bins(columns.size());

  // Pass 1: levels of every column, which decide the code width.
  parallel_for(m.n_features, threads, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t f = begin; f < end; ++f) {
      const ColumnSource& col = columns[f];
      if (col.numeric) {
        bins[f] = numeric_bins(col.numeric, n, false, nbins, f);
        m.levels[f] = bins[f].hi > bins[f].lo ? static_cast<uint16_t>(nbins) : 1;
      } else {
        m.levels[f] = static_cast<uint16_t>(CategoricalCodes(col.categorical, n, f).levels());
      }
    }
  });
  m.wide = m.max_levels() > 256;
  const size_t cells = static_cast<size_t>(n) * columns.size();
  if (m.wide) m.codes16.resize(cells); else m.codes8.resize(cells);

  // Pass 2: codes at class-sorted positions, and each column's most frequent code.
  std::vector<uint16_t> mode(columns.size());
  std::vector<int64_t> mode_count(columns.size());
  parallel_for(m.n_features, threads, 16, [&](int64_t begin, int64_t end, int) {
    std::vector<int64_t> counts;
    for (int64_t f = begin; f < end; ++f) {
      const ColumnSource& col = columns[f];
      counts.assign(m.levels[f], 0);
      const size_t offset = static_cast<size_t>(f) * n;
      auto put = [&](int32_t i, uint16_t code) {
        ++counts[code];
        size_t at = offset + layout.position[i];
        if (m.wide) m.codes16[at] = code; else m.codes8[at] = static_cast<uint8_t>(code);
      };
      if (col.numeric) {
        for (int32_t i = 0; i < n; ++i) put(i, bins[f](col.numeric[i]));
      } else {
        CategoricalCodes codes(col.categorical, n, f);
        for (int32_t i = 0; i < n; ++i) put(i, codes(col.categorical[i]));
      }
      auto top = std::max_element(counts.begin(), counts.end());
      mode[f] = static_cast<uint16_t>(top - counts.begin());
      mode_count[f] = *top;
      m.base[f] = dense_base(mode[f], mode_count[f], n);
    }
  });
  sparsify_if_smaller(m, mode, mode_count, threads);
  return m;
}

CodeMatrix encode_sparse(const int32_t* i, const int32_t* p, const double* x, int64_t n_features,
                         const ClassLayout& layout, int nbins, int threads) {
  check_nbins(nbins);
  CodeMatrix m;
  m.sparse = true;
  m.n_samples = layout.n_samples;
  m.n_features = n_features;
  m.wide = nbins > 256;
  m.levels.resize(n_features);
  m.base.resize(n_features);
  const int32_t n = layout.n_samples;

  // Entries whose code is the base (the zero's bin) are derived, so they are not stored.
  std::vector<std::vector<std::pair<int32_t, uint16_t>>> kept(n_features);
  parallel_for(n_features, threads, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t f = begin; f < end; ++f) {
      const int64_t nnz = p[f + 1] - p[f];
      if (nnz < 0 || nnz > n) throw std::runtime_error("malformed sparse matrix");
      EqualWidthBins bins = numeric_bins(x + p[f], nnz, nnz < n, nbins, f);
      m.levels[f] = bins.hi > bins.lo ? static_cast<uint16_t>(nbins) : 1;
      m.base[f] = bins(0.0);
      auto& entries = kept[f];
      for (int64_t e = p[f]; e < p[f + 1]; ++e) {
        if (i[e] < 0 || i[e] >= n) throw std::runtime_error("malformed sparse matrix");
        uint16_t code = bins(x[e]);
        if (code != m.base[f]) entries.emplace_back(layout.position[i[e]], code);
      }
      std::sort(entries.begin(), entries.end());
    }
  });
  m.entry_start.assign(static_cast<size_t>(n_features) + 1, 0);
  for (int64_t f = 0; f < n_features; ++f)
    m.entry_start[f + 1] = m.entry_start[f] + static_cast<int64_t>(kept[f].size());
  const size_t n_entries = static_cast<size_t>(m.entry_start.back());
  m.entry_row.resize(n_entries);
  if (m.wide) m.codes16.resize(n_entries); else m.codes8.resize(n_entries);
  parallel_for(n_features, threads, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t f = begin; f < end; ++f) {
      size_t at = static_cast<size_t>(m.entry_start[f]);
      for (const auto& entry : kept[f]) {
        m.entry_row[at] = entry.first;
        if (m.wide) m.codes16[at] = entry.second; else m.codes8[at] = static_cast<uint8_t>(entry.second);
        ++at;
      }
      std::vector<std::pair<int32_t, uint16_t>>().swap(kept[f]);
    }
  });
  return m;
}

}  // namespace fsgpu
