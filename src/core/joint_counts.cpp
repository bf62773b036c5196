#include "joint_counts.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fsgpu {

namespace {

// Count tables and plogp sums of the codes s (by class-sorted position).
Conditioning tabulate(std::vector<uint32_t> codes, int32_t levels, const ClassLayout& layout,
                      const PlogpTable& plogp) {
  Conditioning s;
  s.levels = levels;
  s.codes = std::move(codes);
  s.class_counts.assign(static_cast<size_t>(layout.n_classes) * levels, 0);
  s.counts.assign(levels, 0);
  for (int32_t i = 0; i < layout.n_samples; ++i) {
    ++s.class_counts[static_cast<size_t>(layout.class_of[i]) * levels + s.codes[i]];
    ++s.counts[s.codes[i]];
  }
  s.class_terms.assign(layout.n_classes, 0);
  for (int32_t c = 0; c < layout.n_classes; ++c)
    for (int32_t v = 0; v < levels; ++v) s.class_terms[c] += plogp(s.class_counts[static_cast<size_t>(c) * levels + v]);
  for (int32_t v = 0; v < levels; ++v) s.total_term += plogp(s.counts[v]);
  return s;
}

}  // namespace

Conditioning Conditioning::none(const ClassLayout& layout, const PlogpTable& plogp) {
  return tabulate(std::vector<uint32_t>(layout.n_samples, 0), 1, layout, plogp);
}

Conditioning Conditioning::on_feature(const CodeMatrix& x, const ClassLayout& layout, int64_t feature,
                                      const PlogpTable& plogp) {
  std::vector<uint32_t> codes(layout.n_samples, x.sparse ? x.base[feature] : 0);
  for (int64_t e = x.entries_begin(feature); e < x.entries_end(feature); ++e) codes[x.row(feature, e)] = x.code(e);
  return tabulate(std::move(codes), x.levels[feature], layout, plogp);
}

Conditioning Conditioning::joined(const Conditioning& s, const CodeMatrix& x, int64_t feature,
                                  const ClassLayout& layout, const PlogpTable& plogp) {
  const Conditioning f = on_feature(x, layout, feature, plogp);
  std::vector<uint64_t> pair(s.codes.size());
  for (size_t i = 0; i < pair.size(); ++i) pair[i] = static_cast<uint64_t>(s.codes[i]) * f.levels + f.codes[i];
  std::vector<uint64_t> states = pair;
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());
  std::vector<uint32_t> codes(pair.size());
  for (size_t i = 0; i < pair.size(); ++i)
    codes[i] = static_cast<uint32_t>(std::lower_bound(states.begin(), states.end(), pair[i]) - states.begin());
  return tabulate(std::move(codes), static_cast<int32_t>(states.size()), layout, plogp);
}

int64_t Conditioning::all_class_terms() const {
  int64_t sum = 0;
  for (int64_t t : class_terms) sum += t;
  return sum;
}

void check_table_size(const CodeMatrix& x, const Conditioning& s) {
  if (static_cast<int64_t>(x.max_levels()) * s.levels > (int64_t(1) << 26))
    throw std::runtime_error("features have too many distinct values for joint counts (" +
                             std::to_string(x.max_levels()) + " x " + std::to_string(s.levels) +
                             " cells); pass such columns as numeric so that they are binned");
}

ClassTerms ClassTerms::of(const ClassLayout& layout, const PlogpTable& plogp) {
  ClassTerms t;
  t.plogp_n = plogp(layout.n_samples);
  for (int32_t c = 0; c < layout.n_classes; ++c) t.class_terms += plogp(layout.class_start[c + 1] - layout.class_start[c]);
  return t;
}

JointSums joint_sums(const CodeMatrix& x, int64_t feature, const Conditioning& s, const ClassLayout& layout,
                     const PlogpTable& plogp, CountScratch& scratch) {
  const int32_t ls = s.levels;
  const size_t cells = static_cast<size_t>(x.levels[feature]) * ls;
  const uint16_t base = x.base[feature];
  const bool derived = base != kNoBase;
  scratch.class_table.resize(cells);
  scratch.pair_table.resize(cells);
  scratch.counted_sy.resize(ls);
  scratch.counted_s.resize(ls);
  auto& n_xsy = scratch.class_table;
  auto& n_xs = scratch.pair_table;
  auto& counted_sy = scratch.counted_sy;  // per s: counted (non-base) entries of the class
  auto& counted_s = scratch.counted_s;    // per s: counted entries of all classes

  // Cell of an entry, or -1 for the base code.
  auto cell_of = [&](int64_t e) -> int64_t {
    const uint16_t code = x.code(e);
    if (code == base) return -1;
    return static_cast<int64_t>(code) * ls + s.codes[x.row(feature, e)];
  };
  // Whether [first, last) is few enough entries to revisit instead of scanning `size` cells.
  auto revisit = [](int64_t first, int64_t last, size_t size) {
    return kTouchRatio * (last - first) < static_cast<int64_t>(size);
  };

  JointSums sums;
  // Every nonzero cell of `table` once (revisiting [first, last) or scanning), then cleared.
  auto drain = [&](std::vector<uint32_t>& table, int64_t first, int64_t last, auto&& take) {
    if (revisit(first, last, table.size())) {
      for (int64_t e = first; e < last; ++e) {
        const int64_t cell = cell_of(e);
        if (cell >= 0 && table[cell]) {
          take(static_cast<size_t>(cell), table[cell]);
          table[cell] = 0;
        }
      }
    } else {
      for (size_t cell = 0; cell < table.size(); ++cell)
        if (table[cell]) {
          take(cell, table[cell]);
          table[cell] = 0;
        }
    }
  };
  // The base code's cells, n(s) - counted(s), corrected from the all-base sum `all_base` only
  // at the s where something was counted when that is cheaper than going over every s.
  auto derive = [&](std::vector<uint32_t>& counted, const uint32_t* n_s, int64_t all_base, int64_t first,
                    int64_t last, auto&& fold) {
    int64_t sum = 0;
    if (revisit(first, last, counted.size())) {
      sum = all_base;
      for (int64_t e = first; e < last; ++e) {
        const int64_t cell = cell_of(e);
        if (cell < 0) continue;
        const int32_t v = static_cast<int32_t>(cell % ls);
        if (counted[v]) {
          sum += plogp(n_s[v] - counted[v]) - plogp(n_s[v]);
          fold(v, counted[v]);
          counted[v] = 0;
        }
      }
    } else {
      for (int32_t v = 0; v < ls; ++v) {
        sum += plogp(n_s[v] - counted[v]);
        fold(v, counted[v]);
        counted[v] = 0;
      }
    }
    return sum;
  };

  for (int32_t c = 0; c < layout.n_classes; ++c) {
    int64_t first, last;
    class_entries(x, feature, layout, c, first, last);
    for (int64_t e = first; e < last; ++e) {
      const int64_t cell = cell_of(e);
      if (cell >= 0) ++n_xsy[static_cast<size_t>(cell)];
    }
    drain(n_xsy, first, last, [&](size_t cell, uint32_t v) {
      sums.xsy += plogp(v);
      n_xs[cell] += v;
      if (derived) counted_sy[cell % ls] += v;
    });
    if (derived)
      sums.xsy += derive(counted_sy, s.class_counts.data() + static_cast<size_t>(c) * ls, s.class_terms[c], first, last,
                  [&](int32_t v, uint32_t n) { counted_s[v] += n; });
  }
  const int64_t first = x.entries_begin(feature), last = x.entries_end(feature);
  drain(n_xs, first, last, [&](size_t, uint32_t v) { sums.xs += plogp(v); });
  if (derived) sums.xs += derive(counted_s, s.counts.data(), s.total_term, first, last, [](int32_t, uint32_t) {});
  return sums;
}

}  // namespace fsgpu
