// Turning input columns into compact codes (see code_matrix.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>

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

bool EncodeReport::any_bad() const {
  return std::any_of(bad_row.begin(), bad_row.end(), [](int32_t r) { return r >= 0; });
}

namespace {

constexpr int32_t kMissingInteger = INT32_MIN;  // R's NA_integer_

std::string feature_label(int64_t feature) { return "feature " + std::to_string(feature + 1); }

// Distinct values of a categorical column within [lo, hi], mapped to 0..levels-1 in increasing order.
class CategoricalCodes {
 public:
  CategoricalCodes(const int32_t* v, int32_t n, int32_t lo, int32_t hi) : lo_(lo) {
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

// Equal-width bins over v's range (and 0's, for sparse columns with zeros); `bad` is set to
// the first missing or infinite value's index, or -1.
EqualWidthBins numeric_bins(const double* v, int64_t n, bool has_zeros, int nbins, int32_t& bad) {
  EqualWidthBins bins;
  bins.nbins = nbins;
  double lo = has_zeros ? 0.0 : INFINITY, hi = has_zeros ? 0.0 : -INFINITY;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {  // branch-free: x - x is 0 unless x is NaN or infinite
    const double x = v[i];
    finite &= x - x == 0;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  bad = -1;
  for (int64_t i = 0; !finite && i < n; ++i)
    if (!std::isfinite(v[i])) bad = static_cast<int32_t>(i), finite = true;
  bins.lo = lo;
  bins.hi = hi;
  return bins;
}

// How one dense column becomes codes, decided from one pass over it.
struct ColumnPlan {
  int32_t bad = -1;     // the first missing or infinite value
  bool binned = false;  // a categorical column binned (bin_above)
  EqualWidthBins bins;  // numeric and binned columns
  std::unique_ptr<CategoricalCodes> categories;
  int64_t levels = 1;
};

ColumnPlan plan_column(const ColumnSource& col, int32_t n, int nbins, int64_t feature) {
  ColumnPlan plan;
  if (col.numeric) {
    plan.bins = numeric_bins(col.numeric, n, false, nbins, plan.bad);
    plan.levels = plan.bins.hi > plan.bins.lo ? nbins : 1;
    return plan;
  }
  const int32_t* v = col.categorical;
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (int32_t i = 0; i < n; ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  if (lo == kMissingInteger) {  // NA is the smallest int
    plan.bad = static_cast<int32_t>(std::find(v, v + n, kMissingInteger) - v);
    return plan;
  }
  // A range of span + 1 values holds at most that many distinct ones: no count needed below it.
  const int64_t span = static_cast<int64_t>(hi) - lo;
  bool bin = col.bin_above == 0;
  if (col.bin_above > 0 && span >= col.bin_above) {
    plan.categories = std::make_unique<CategoricalCodes>(v, n, lo, hi);
    bin = plan.categories->levels() > col.bin_above;
  }
  if (bin) {  // as the same values stored as doubles
    plan.binned = true;
    plan.categories.reset();
    plan.bins.nbins = nbins;
    plan.bins.lo = lo;
    plan.bins.hi = hi;
    plan.levels = plan.bins.hi > plan.bins.lo ? nbins : 1;
    return plan;
  }
  if (!plan.categories) plan.categories = std::make_unique<CategoricalCodes>(v, n, lo, hi);
  plan.levels = plan.categories->levels();
  if (plan.levels > kMaxLevels)
    throw std::runtime_error(feature_label(feature) + " has more than 65535 distinct values; pass it as numeric to bin it");
  return plan;
}

// Writes the column's codes at class-sorted positions; returns its most frequent code and that code's count.
template <class Code>
std::pair<uint16_t, int64_t> write_codes(const ColumnPlan& plan, const ColumnSource& col, const ClassLayout& layout,
                                         Code* out, std::vector<int64_t>& counts) {
  counts.assign(static_cast<size_t>(plan.levels), 0);
  const int32_t n = layout.n_samples;
  const int32_t* position = layout.position.data();
  auto put = [&](int32_t i, uint16_t code) {
    ++counts[code];
    out[position[i]] = static_cast<Code>(code);
  };
  if (col.numeric) {
    for (int32_t i = 0; i < n; ++i) put(i, plan.bins(col.numeric[i]));
  } else if (plan.binned) {
    for (int32_t i = 0; i < n; ++i) put(i, plan.bins(static_cast<double>(col.categorical[i])));
  } else {
    for (int32_t i = 0; i < n; ++i) put(i, (*plan.categories)(col.categorical[i]));
  }
  const auto top = std::max_element(counts.begin(), counts.end());
  return {static_cast<uint16_t>(top - counts.begin()), *top};
}

// The common case of a categorical column, values within fewer than 256 of each other (codes,
// genotypes, small counts) that stay categories, in one pass over it: within such a window a
// value's low byte identifies it, so the low bytes are written at class-sorted positions and
// counted while the range is found, then renumbered in place, in the values' order, to
// 0..levels-1 (CategoricalCodes' codes). Returns false, having found nothing else, for any
// other column (a missing value included: plan_column() finds it), which the caller codes
// from a ColumnPlan; the bytes written are then overwritten.
bool write_small_category(const ColumnSource& col, const ClassLayout& layout, uint8_t* out, uint16_t& levels,
                          uint16_t& mode, int64_t& mode_count) {
  if (!col.categorical || col.bin_above == 0) return false;
  const int32_t* v = col.categorical;
  const int32_t* position = layout.position.data();
  uint32_t seen[256] = {};
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (int32_t i = 0; i < layout.n_samples; ++i) {
    const uint8_t low = static_cast<uint8_t>(v[i]);
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
    ++seen[low];
    out[position[i]] = low;
  }
  const int64_t span = static_cast<int64_t>(hi) - lo;
  if (lo == kMissingInteger || span >= 256 || (col.bin_above > 0 && span >= col.bin_above)) return false;
  uint8_t code[256] = {};
  int32_t next = 0;
  bool same = true;  // every low byte is its own code already (values 0..levels-1: no renumbering)
  mode_count = -1;
  for (int64_t offset = 0; offset <= span; ++offset) {  // the values in increasing order
    const uint8_t low = static_cast<uint8_t>(lo + offset);
    if (!seen[low]) continue;
    code[low] = static_cast<uint8_t>(next);
    same &= low == next;
    if (static_cast<int64_t>(seen[low]) > mode_count) {  // the first of the most frequent
      mode = static_cast<uint16_t>(next);
      mode_count = seen[low];
    }
    ++next;
  }
  if (!same)
    for (int32_t p = 0; p < layout.n_samples; ++p) out[p] = code[out[p]];
  levels = static_cast<uint16_t>(next);
  return true;
}

// Dense codes where most cells hold their feature's mode (text counts, SNPs, sparse data
// passed as a dense matrix) are kept sparse instead: only the other codes are stored and
// visited, and the mode's counts are derived, exactly as for sparse input.
void sparsify_if_smaller(CodeMatrix& m, const std::vector<uint16_t>& mode, const std::vector<int64_t>& mode_count,
                         int threads) {
  const int64_t n = m.n_samples;
  std::vector<int64_t> start(static_cast<size_t>(m.n_features) + 1, 0);
  for (int64_t f = 0; f < m.n_features; ++f) start[f + 1] = start[f] + (n - mode_count[f]);
  if (!sparse_is_smaller(start.back(), n, m.n_features, m.code_bytes())) return;
  std::vector<int32_t> rows(static_cast<size_t>(start.back()));
  RowVector<uint8_t> codes8(m.wide ? 0 : rows.size());
  RowVector<uint16_t> codes16(m.wide ? rows.size() : 0);
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

// The base of a dense feature: its most frequent code, if common enough to pay for deriving it.
uint16_t dense_base(uint16_t mode, int64_t mode_count, int32_t n_samples) {
  return mode_count * kBaseShareDenominator < n_samples ? kNoBase : mode;
}

bool sparse_is_smaller(int64_t entries, int64_t n_samples, int64_t n_features, int code_bytes) {
  const double sparse_bytes = static_cast<double>(entries) * (code_bytes + 4) + 8.0 * (n_features + 1);
  return 2 * sparse_bytes < static_cast<double>(n_samples) * n_features * code_bytes;
}

CodeMatrix encode_dense(const std::vector<ColumnSource>& columns, const ClassLayout& layout,
                        int nbins, int threads, EncodeReport* report, const CodedHook& on_coded) {
  check_nbins(nbins);
  CodeMatrix m;
  const int32_t n = layout.n_samples;
  const int64_t p = static_cast<int64_t>(columns.size());
  m.n_samples = n;
  m.n_features = p;
  m.levels.resize(p);
  m.base.resize(p);
  std::vector<int32_t> bad(p, -1);
  std::vector<uint8_t> binned(p, 0), wide(p, 0);
  std::vector<uint16_t> mode(p);
  std::vector<int64_t> mode_count(p);
  // Codes are written as bytes in the pass that reads the column (the column stays in cache
  // from its range to its codes); the rare columns of more than 256 levels are coded again,
  // as 16-bit codes, once every width is known.
  m.codes8.resize(static_cast<size_t>(n) * p);
  parallel_for(p, threads, 4, [&](int64_t begin, int64_t end, int worker) {
    std::vector<int64_t> counts;
    for (int64_t f = begin; f < end; ++f) {
      uint8_t* out = m.codes8.data() + static_cast<size_t>(f) * n;
      if (write_small_category(columns[f], layout, out, m.levels[f], mode[f], mode_count[f])) continue;
      const ColumnPlan plan = plan_column(columns[f], n, nbins, f);
      if (plan.bad >= 0) {
        if (!report)
          throw std::runtime_error((columns[f].numeric ? "x has a missing or infinite value in "
                                                       : "x has a missing value in ") + feature_label(f));
        bad[f] = plan.bad;
        continue;
      }
      binned[f] = plan.binned;
      m.levels[f] = static_cast<uint16_t>(plan.levels);
      if (plan.levels > 256) {
        wide[f] = 1;
        continue;
      }
      std::tie(mode[f], mode_count[f]) = write_codes(plan, columns[f], layout, out, counts);
    }
    if (on_coded) on_coded(m.codes8.data(), begin, end, worker);
  });
  if (report) {
    report->bad_row = bad;
    report->binned = binned;
    if (report->any_bad()) return CodeMatrix();
  }
  if (std::find(wide.begin(), wide.end(), 1) != wide.end()) {
    m.wide = true;
    m.codes16.resize(m.codes8.size());
    parallel_for(p, threads, 4, [&](int64_t begin, int64_t end, int) {
      std::vector<int64_t> counts;
      for (int64_t f = begin; f < end; ++f) {
        uint16_t* out = m.codes16.data() + static_cast<size_t>(f) * n;
        if (wide[f]) {
          std::tie(mode[f], mode_count[f]) =
              write_codes(plan_column(columns[f], n, nbins, f), columns[f], layout, out, counts);
        } else {
          const uint8_t* narrow = m.codes8.data() + static_cast<size_t>(f) * n;
          std::copy(narrow, narrow + n, out);
        }
      }
    });
    RowVector<uint8_t>().swap(m.codes8);
  }
  for (int64_t f = 0; f < p; ++f) m.base[f] = dense_base(mode[f], mode_count[f], n);
  sparsify_if_smaller(m, mode, mode_count, threads);
  return m;
}

CodeMatrix encode_sparse(const int32_t* i, const int32_t* p, const double* x, int64_t n_features,
                         const ClassLayout& layout, int nbins, int threads, EncodeReport* report) {
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
  std::vector<int32_t> bad(n_features, -1);
  parallel_for(n_features, threads, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t f = begin; f < end; ++f) {
      const int64_t nnz = p[f + 1] - p[f];
      if (nnz < 0 || nnz > n) throw std::runtime_error("malformed sparse matrix");
      int32_t bad_entry = -1;
      EqualWidthBins bins = numeric_bins(x + p[f], nnz, nnz < n, nbins, bad_entry);
      if (bad_entry >= 0) {
        if (!report) throw std::runtime_error("x has a missing or infinite value in " + feature_label(f));
        bad[f] = i[p[f] + bad_entry];  // rows ascend within a column: the first bad sample
        continue;
      }
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
  if (report) {
    report->bad_row = bad;
    report->binned.assign(n_features, 0);
    if (report->any_bad()) return CodeMatrix();
  }
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
