#include "joint_counts.h"

#include <algorithm>
#include <climits>
#include <cstdint>
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

// The sums of a dense feature without a base code, state by state (see StateGroups):
// the same cells, so the same integers, as the table-wide count.
JointSums grouped_joint_sums(const uint8_t* codes8, const uint16_t* codes16, int32_t levels, const Conditioning& s,
                             const StateGroups& g, const ClassLayout& layout, const PlogpTable& plogp,
                             CountScratch& scratch) {
  scratch.class_table.resize(std::max<size_t>(scratch.class_table.size(), levels));
  scratch.pair_table.resize(std::max<size_t>(scratch.pair_table.size(), levels));
  uint32_t* n_xsy = scratch.class_table.data();  // of the current state and class
  uint32_t* n_xs = scratch.pair_table.data();    // of the current state
  auto& in_class = scratch.touched_class;
  auto& in_state = scratch.touched_state;
  JointSums sums;
  auto close_class = [&] {
    for (uint16_t x : in_class) {
      sums.xsy += plogp(n_xsy[x]);
      if (n_xs[x] == 0) in_state.push_back(x);
      n_xs[x] += n_xsy[x];
      n_xsy[x] = 0;
    }
    in_class.clear();
  };
  for (int32_t v = 0; v < s.levels; ++v) {
    int32_t current_class = -1;
    for (int32_t k = g.state_start[v]; k < g.state_start[v + 1]; ++k) {
      const int32_t pos = g.by_state[k];
      if (layout.class_of[pos] != current_class) {
        close_class();
        current_class = layout.class_of[pos];
      }
      const uint16_t x = codes16 ? codes16[pos] : codes8[pos];
      if (n_xsy[x]++ == 0) in_class.push_back(x);
    }
    close_class();
    for (uint16_t x : in_state) {
      sums.xs += plogp(n_xs[x]);
      n_xs[x] = 0;
    }
    in_state.clear();
  }
  return sums;
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
  const size_t n = s.codes.size();
  std::vector<uint32_t> codes(n);
  const uint64_t pairs = static_cast<uint64_t>(s.levels) * f.levels;
  if (pairs <= std::max<uint64_t>(4 * n, uint64_t(1) << 20)) {  // states numbered as first met, through a table
    std::vector<uint32_t> id(pairs, UINT32_MAX);
    uint32_t next = 0;
    for (size_t i = 0; i < n; ++i) {
      uint32_t& state = id[static_cast<uint64_t>(s.codes[i]) * f.levels + f.codes[i]];
      if (state == UINT32_MAX) state = next++;
      codes[i] = state;
    }
    return tabulate(std::move(codes), static_cast<int32_t>(next), layout, plogp);
  }
  std::vector<uint64_t> pair(n);  // too many possible pairs for a table: number the observed ones in order
  for (size_t i = 0; i < n; ++i) pair[i] = static_cast<uint64_t>(s.codes[i]) * f.levels + f.codes[i];
  std::vector<uint64_t> states = pair;
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());
  for (size_t i = 0; i < n; ++i)
    codes[i] = static_cast<uint32_t>(std::lower_bound(states.begin(), states.end(), pair[i]) - states.begin());
  return tabulate(std::move(codes), static_cast<int32_t>(states.size()), layout, plogp);
}

Conditioning Conditioning::with_pure_states_merged(const ClassLayout& layout, const PlogpTable& plogp) const {
  std::vector<int32_t> pure_class(levels, -1);  // the class of a state whose samples all have one
  for (int32_t c = 0; c < layout.n_classes; ++c)
    for (int32_t v = 0; v < levels; ++v)
      if (counts[v] > 0 && class_counts[static_cast<size_t>(c) * levels + v] == counts[v]) pure_class[v] = c;
  std::vector<uint32_t> mixed_id(levels, UINT32_MAX), pure_id(layout.n_classes, UINT32_MAX);
  std::vector<uint32_t> merged(codes.size());
  uint32_t next = 0;
  for (size_t i = 0; i < codes.size(); ++i) {
    const uint32_t v = codes[i];
    uint32_t& state = pure_class[v] >= 0 ? pure_id[pure_class[v]] : mixed_id[v];
    if (state == UINT32_MAX) state = next++;
    merged[i] = state;
  }
  return tabulate(std::move(merged), static_cast<int32_t>(next), layout, plogp);
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

StateGroups StateGroups::of(const Conditioning& s) {
  StateGroups g;  // a stable counting sort by state keeps the class order
  g.state_start.assign(static_cast<size_t>(s.levels) + 1, 0);
  for (int32_t v = 0; v < s.levels; ++v) g.state_start[v + 1] = g.state_start[v] + static_cast<int32_t>(s.counts[v]);
  std::vector<int32_t> next(g.state_start.begin(), g.state_start.end() - 1);
  g.by_state.resize(s.codes.size());
  for (size_t i = 0; i < s.codes.size(); ++i) g.by_state[next[s.codes[i]]++] = static_cast<int32_t>(i);
  return g;
}

JointSums joint_sums(const CodeMatrix& x, int64_t feature, const Conditioning& s, const ClassLayout& layout,
                     const PlogpTable& plogp, CountScratch& scratch, const StateGroups* groups) {
  if (groups && !x.sparse && x.base[feature] == kNoBase) {
    const int64_t begin = x.entries_begin(feature);
    return grouped_joint_sums(x.wide ? nullptr : x.codes8.data() + begin, x.wide ? x.codes16.data() + begin : nullptr,
                              x.levels[feature], s, *groups, layout, plogp, scratch);
  }
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
