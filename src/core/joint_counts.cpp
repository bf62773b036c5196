#include "joint_counts.h"

#include <stdexcept>
#include <string>

namespace fsgpu {

Conditioning Conditioning::none(const ClassLayout& layout) {
  Conditioning s;
  s.levels = 1;
  s.codes.assign(layout.n_samples, 0);
  s.class_counts.resize(layout.n_classes);
  for (int32_t c = 0; c < layout.n_classes; ++c)
    s.class_counts[c] = static_cast<uint32_t>(layout.class_start[c + 1] - layout.class_start[c]);
  s.counts.assign(1, static_cast<uint32_t>(layout.n_samples));
  return s;
}

Conditioning Conditioning::on_feature(const CodeMatrix& x, const ClassLayout& layout, int64_t feature) {
  Conditioning s;
  s.levels = x.levels[feature];
  if (x.sparse) {
    s.codes.assign(layout.n_samples, x.base[feature]);
    for (int64_t e = x.entries_begin(feature); e < x.entries_end(feature); ++e)
      s.codes[x.entry_row[e]] = x.code(e);
  } else {
    s.codes.resize(layout.n_samples);
    const int64_t begin = x.entries_begin(feature);
    for (int32_t i = 0; i < layout.n_samples; ++i) s.codes[i] = x.code(begin + i);
  }
  s.class_counts.assign(static_cast<size_t>(layout.n_classes) * s.levels, 0);
  s.counts.assign(s.levels, 0);
  for (int32_t i = 0; i < layout.n_samples; ++i) {
    ++s.class_counts[static_cast<size_t>(layout.class_of[i]) * s.levels + s.codes[i]];
    ++s.counts[s.codes[i]];
  }
  return s;
}

void check_table_size(const CodeMatrix& x, const Conditioning& s) {
  if (static_cast<int64_t>(x.max_levels()) * s.levels > (int64_t(1) << 26))
    throw std::runtime_error("features have too many distinct values for joint counts (" +
                             std::to_string(x.max_levels()) + " x " + std::to_string(s.levels) +
                             " cells); pass such columns as numeric so that they are binned");
}

int64_t class_entropy(const ClassLayout& layout, const PlogpTable& plogp) {
  int64_t h = plogp(layout.n_samples);
  for (int32_t c = 0; c < layout.n_classes; ++c) h -= plogp(layout.class_start[c + 1] - layout.class_start[c]);
  return h;
}

namespace {

// Finishes one table of counts: adds sign * plogp(count) for every nonzero cell, hands the count
// to `fold` and clears the cell. Revisits the entries when they are fewer than the cells.
template <class CellOf, class Fold>
int64_t drain(std::vector<uint32_t>& table, int64_t n_entries, int64_t first, int64_t last, CellOf cell_of,
              Fold fold, const PlogpTable& plogp) {
  int64_t sum = 0;
  auto take = [&](size_t cell) {
    uint32_t v = table[cell];
    if (v) {
      sum += plogp(v);
      fold(cell, v);
      table[cell] = 0;
    }
  };
  if (kTouchRatio * n_entries < static_cast<int64_t>(table.size())) {
    for (int64_t e = first; e < last; ++e) {
      int64_t cell = cell_of(e);
      if (cell >= 0) take(static_cast<size_t>(cell));
    }
  } else {
    for (size_t cell = 0; cell < table.size(); ++cell) take(cell);
  }
  return sum;
}

}  // namespace

int64_t cond_class_entropy(const CodeMatrix& x, int64_t feature, const Conditioning& s,
                           const ClassLayout& layout, const PlogpTable& plogp, CountScratch& scratch) {
  const int32_t ls = s.levels;
  const size_t cells = static_cast<size_t>(x.levels[feature]) * ls;
  const uint16_t base = x.base[feature];
  scratch.class_table.resize(cells);  // tables are kept all-zero between calls
  scratch.pair_table.resize(cells);
  scratch.class_derived.assign(ls, 0);
  scratch.pair_derived.assign(ls, 0);
  auto& n_xsy = scratch.class_table;
  auto& n_xs = scratch.pair_table;
  auto& counted_sy = scratch.class_derived;  // per s: counted (non-base) entries of this class
  auto& counted_s = scratch.pair_derived;    // per s: counted entries of all classes

  // Cell of an entry, or -1 for the base code.
  auto cell_of = [&](int64_t e) -> int64_t {
    uint16_t code = x.code(e);
    if (code == base) return -1;
    return static_cast<int64_t>(code) * ls + s.codes[x.row(feature, e)];
  };

  int64_t h = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    int64_t first, last;
    class_entries(x, feature, layout, c, first, last);
    for (int64_t e = first; e < last; ++e) {
      int64_t cell = cell_of(e);
      if (cell >= 0) ++n_xsy[static_cast<size_t>(cell)];
    }
    h -= drain(n_xsy, last - first, first, last, cell_of,
               [&](size_t cell, uint32_t v) {
                 n_xs[cell] += v;
                 counted_sy[cell % ls] += v;
               },
               plogp);
    const uint32_t* n_sy = s.class_counts.data() + static_cast<size_t>(c) * ls;
    for (int32_t v = 0; v < ls; ++v) {
      h -= plogp(n_sy[v] - counted_sy[v]);  // the base code's cells in this class
      counted_s[v] += counted_sy[v];
      counted_sy[v] = 0;
    }
  }
  const int64_t first = x.entries_begin(feature), last = x.entries_end(feature);
  h += drain(n_xs, last - first, first, last, cell_of, [](size_t, uint32_t) {}, plogp);
  for (int32_t v = 0; v < ls; ++v) h += plogp(s.counts[v] - counted_s[v]);
  return h;
}

}  // namespace fsgpu
