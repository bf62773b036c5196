#include "joint_counts.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fsgpu {

namespace {

// Count tables and plogp sums of the codes s (by class-sorted position).
Conditioning tabulate(std::vector<uint32_t> codes, int32_t levels, const ClassLayout& layout,
                      const PlogpTable& plogp) {
  Conditioning s;
  s.levels = levels;
  s.codes = std::move(codes);
  s.class_counts.assign(static_cast<size_t>(layout.n_classes) * levels, 0);
  // Positions are class-sorted: a class's counts come from its own range. This runs every
  // step on the host (the GPU engine on one device counts on the device instead: condition_on),
  // so it is kept to one plain loop per class.
  // Four partial tables taking turns, so that repeated codes do not wait on each other's
  // stores (the sums are the same integers).
  std::vector<uint32_t> partial(static_cast<size_t>(levels) * 3, 0);
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    uint32_t* counts = s.class_counts.data() + static_cast<size_t>(c) * levels;
    uint32_t *c1 = partial.data(), *c2 = c1 + levels, *c3 = c2 + levels;
    const uint32_t* codes = s.codes.data();
    int32_t i = layout.class_start[c];
    const int32_t last = layout.class_start[c + 1];
    for (; i + 3 < last; i += 4) {
      ++counts[codes[i]];
      ++c1[codes[i + 1]];
      ++c2[codes[i + 2]];
      ++c3[codes[i + 3]];
    }
    for (; i < last; ++i) ++counts[codes[i]];
    for (int32_t v = 0; v < levels; ++v) {
      counts[v] += c1[v] + c2[v] + c3[v];
      c1[v] = c2[v] = c3[v] = 0;
    }
  }
  s.add_terms(layout, plogp);
  return s;
}

// A feature's codes by class-sorted position.
std::vector<uint32_t> feature_codes(const CodeMatrix& x, const ClassLayout& layout, int64_t feature) {
  const int64_t begin = x.entries_begin(feature), end = x.entries_end(feature);
  if (!x.sparse) {
    if (x.wide) return std::vector<uint32_t>(x.codes16.begin() + begin, x.codes16.begin() + end);
    return std::vector<uint32_t>(x.codes8.begin() + begin, x.codes8.begin() + end);
  }
  std::vector<uint32_t> codes(layout.n_samples, x.base[feature]);
  for (int64_t e = begin; e < end; ++e) codes[x.entry_row[e]] = x.code(e);
  return codes;
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

// The sums of a dense byte-coded feature without a base code: every cell is counted. Two
// tables take alternate samples, so that a run of equal cells does not wait on its own
// stores; a cell's count is their sum, so the integers are those of the general loop.
JointSums dense_joint_sums(const uint8_t* codes, int32_t levels, const Conditioning& s, const ClassLayout& layout,
                           const PlogpTable& plogp, CountScratch& scratch) {
  const int32_t ls = s.levels;
  const size_t cells = static_cast<size_t>(levels) * ls;
  scratch.class_table.resize(std::max(scratch.class_table.size(), 2 * cells));  // kept all-zero between calls
  scratch.pair_table.resize(std::max(scratch.pair_table.size(), cells));
  uint32_t* even = scratch.class_table.data();
  uint32_t* odd = even + cells;
  uint32_t* n_xs = scratch.pair_table.data();
  const uint32_t* sc = s.codes.data();
  auto cell_at = [&](int32_t i) { return static_cast<size_t>(codes[i]) * ls + sc[i]; };
  // Few samples against many cells: visit the samples' cells rather than every cell.
  auto revisit = [&](int32_t first, int32_t last) { return int64_t(kTouchRatio) * (last - first) < int64_t(cells); };
  JointSums sums;
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    const int32_t first = layout.class_start[c], last = layout.class_start[c + 1];
    int32_t i = first;
    for (; i + 1 < last; i += 2) {
      ++even[cell_at(i)];
      ++odd[cell_at(i + 1)];
    }
    if (i < last) ++even[cell_at(i)];
    auto take = [&](size_t cell) {
      const uint32_t v = even[cell] + odd[cell];
      if (!v) return;
      sums.xsy += plogp(v);
      n_xs[cell] += v;
      even[cell] = odd[cell] = 0;
    };
    if (revisit(first, last)) {
      for (int32_t j = first; j < last; ++j) take(cell_at(j));
    } else {
      for (size_t cell = 0; cell < cells; ++cell) take(cell);
    }
  }
  auto take_xs = [&](size_t cell) {
    if (!n_xs[cell]) return;
    sums.xs += plogp(n_xs[cell]);
    n_xs[cell] = 0;
  };
  if (revisit(0, layout.n_samples)) {
    for (int32_t j = 0; j < layout.n_samples; ++j) take_xs(cell_at(j));
  } else {
    for (size_t cell = 0; cell < cells; ++cell) take_xs(cell);
  }
  return sums;
}

// The sums of a dense byte-coded feature counted packed (PackedClasses): one add a sample into
// one of two tables taking alternate samples (a run of equal cells then does not wait on its own
// stores; fields never carry, so a cell is their sum), then one read of every cell.
JointSums packed_joint_sums(const uint8_t* codes, int32_t levels, const Conditioning& s, const ClassLayout& layout,
                            const PackedClasses& packed, const PlogpTable& plogp, CountScratch& scratch) {
  const int32_t ls = s.levels;
  const size_t cells = static_cast<size_t>(levels) * ls;
  scratch.packed_table.resize(std::max(scratch.packed_table.size(), 2 * cells));  // kept all-zero between calls
  uint64_t* even = scratch.packed_table.data();
  uint64_t* odd = even + cells;
  const uint32_t* sc = s.codes.data();
  const uint64_t* one = packed.increment.data();  // by position: no loop a class
  const int32_t n = layout.n_samples;
  auto cell_at = [&](int32_t i) { return static_cast<size_t>(codes[i]) * ls + sc[i]; };
  int32_t i = 0;
  for (; i + 1 < n; i += 2) {
    even[cell_at(i)] += one[i];
    odd[cell_at(i + 1)] += one[i + 1];
  }
  if (i < n) even[cell_at(i)] += one[i];
  JointSums sums;
  // The scan is compiled for one to four groups (copied to locals, which the stores to the
  // tables cannot alias, so they stay in registers; unrolled, 0.10 s against 0.12 s for a
  // selection on nakayama), and loops over more.
  const int32_t total_shift = packed.total_shift;
  auto scan = [&](auto fixed) {
    constexpr int kGroups = decltype(fixed)::value;
    const int64_t* terms[kGroups > 0 ? kGroups : 1];
    int32_t shift[kGroups > 0 ? kGroups : 1];
    uint64_t mask[kGroups > 0 ? kGroups : 1];
    for (int k = 0; k < kGroups; ++k) {
      terms[k] = packed.terms.data() + packed.groups[k].first_term;
      shift[k] = packed.groups[k].shift;
      mask[k] = packed.groups[k].mask;
    }
    for (size_t cell = 0; cell < cells; ++cell) {
      const uint64_t v = even[cell] + odd[cell];
      even[cell] = odd[cell] = 0;
      sums.xs += plogp(static_cast<int64_t>(v >> total_shift));
      if constexpr (kGroups > 0) {
#pragma GCC unroll 4
        for (int k = 0; k < kGroups; ++k) sums.xsy += terms[k][(v >> shift[k]) & mask[k]];
      } else {
        for (const PackedClasses::Group& g : packed.groups)
          sums.xsy += packed.terms[g.first_term + ((v >> g.shift) & g.mask)];
      }
    }
  };
  switch (packed.groups.size()) {
    case 1: scan(std::integral_constant<int, 1>()); break;
    case 2: scan(std::integral_constant<int, 2>()); break;
    case 3: scan(std::integral_constant<int, 3>()); break;
    case 4: scan(std::integral_constant<int, 4>()); break;
    default: scan(std::integral_constant<int, 0>()); break;
  }
  return sums;
}

}  // namespace

PackedClasses PackedClasses::of(const ClassLayout& layout, const PlogpTable& plogp) {
  constexpr int kGroupBits = 10;  // a group's table holds at most 1,024 terms (8 KB): it stays in L1
  auto bits_for = [](int64_t n) {  // a field holding 0..n
    int bits = 0;
    while ((int64_t(1) << bits) <= n) ++bits;
    return bits;
  };
  PackedClasses p;
  std::vector<int32_t> size(layout.n_classes), width(layout.n_classes), shift(layout.n_classes);
  int used = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    size[c] = layout.class_start[c + 1] - layout.class_start[c];
    width[c] = bits_for(size[c]);
    if (width[c] > kGroupBits) return PackedClasses();
    shift[c] = used;
    used += width[c];
  }
  if (used + bits_for(layout.n_samples) > 64) return PackedClasses();
  p.total_shift = used;
  p.increment.resize(layout.n_samples);
  for (int32_t c = 0; c < layout.n_classes; ++c)
    std::fill(p.increment.begin() + layout.class_start[c], p.increment.begin() + layout.class_start[c + 1],
              (uint64_t(1) << shift[c]) | (uint64_t(1) << used));
  // Groups of consecutive classes whose fields together take at most kGroupBits bits.
  for (int32_t first = 0; first < layout.n_classes;) {
    int32_t last = first + 1;
    while (last < layout.n_classes && (last + 1 < layout.n_classes ? shift[last + 1] : used) - shift[first] <= kGroupBits)
      ++last;
    const int bits = (last < layout.n_classes ? shift[last] : used) - shift[first];
    Group g;
    g.shift = shift[first];
    g.mask = (uint64_t(1) << bits) - 1;
    g.first_term = p.terms.size();
    for (uint64_t index = 0; index <= g.mask; ++index) {
      int64_t sum = 0;  // bit patterns that no cell can hold (a field above its class's size) stay 0
      for (int32_t c = first; c < last; ++c) {
        const uint64_t field = (index >> (shift[c] - g.shift)) & ((uint64_t(1) << width[c]) - 1);
        if (field > static_cast<uint64_t>(size[c])) {
          sum = 0;
          break;
        }
        sum += plogp(static_cast<int64_t>(field));
      }
      p.terms.push_back(sum);
    }
    p.groups.push_back(g);
    first = last;
  }
  return p;
}

Conditioning Conditioning::none(const ClassLayout& layout, const PlogpTable& plogp) {
  return tabulate(std::vector<uint32_t>(layout.n_samples, 0), 1, layout, plogp);
}

Conditioning Conditioning::on_feature(const CodeMatrix& x, const ClassLayout& layout, int64_t feature,
                                      const PlogpTable& plogp) {
  return tabulate(feature_codes(x, layout, feature), x.levels[feature], layout, plogp);
}

Conditioning Conditioning::joined(const Conditioning& s, const CodeMatrix& x, int64_t feature,
                                  const ClassLayout& layout, const PlogpTable& plogp) {
  const std::vector<uint32_t> f_codes = feature_codes(x, layout, feature);
  const uint32_t f_levels = x.levels[feature];
  const size_t n = s.codes.size();
  std::vector<uint32_t> codes(n);
  const uint64_t pairs = static_cast<uint64_t>(s.levels) * f_levels;
  if (pairs <= std::max<uint64_t>(4 * n, uint64_t(1) << 20)) {  // the observed pairs numbered in order, by a table
    std::vector<uint32_t> id(pairs, 0);
    for (size_t i = 0; i < n; ++i) {
      codes[i] = s.codes[i] * f_levels + f_codes[i];
      id[codes[i]] = 1;
    }
    uint32_t next = 0;
    for (uint32_t& state : id) state = state ? next++ : 0;
    for (uint32_t& c : codes) c = id[c];
    return tabulate(std::move(codes), static_cast<int32_t>(next), layout, plogp);
  }
  std::vector<uint64_t> pair(n);  // too many possible pairs for a table: number the observed ones in order
  for (size_t i = 0; i < n; ++i) pair[i] = static_cast<uint64_t>(s.codes[i]) * f_levels + f_codes[i];
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
  std::vector<uint32_t> new_id(levels), pure_id(layout.n_classes, UINT32_MAX);
  uint32_t next = 0;
  for (int32_t v = 0; v < levels; ++v) {
    if (counts[v] == 0) continue;
    if (pure_class[v] < 0) {
      new_id[v] = next++;
    } else {
      uint32_t& id = pure_id[pure_class[v]];
      if (id == UINT32_MAX) id = next++;
      new_id[v] = id;
    }
  }
  std::vector<uint32_t> merged(codes.size());
  for (size_t i = 0; i < codes.size(); ++i) merged[i] = new_id[codes[i]];
  return tabulate(std::move(merged), static_cast<int32_t>(next), layout, plogp);
}

void Conditioning::add_terms(const ClassLayout& layout, const PlogpTable& plogp) {
  counts.assign(levels, 0);
  class_terms.assign(layout.n_classes, 0);
  total_term = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    const uint32_t* n_sy = class_counts.data() + static_cast<size_t>(c) * levels;
    for (int32_t v = 0; v < levels; ++v) {
      class_terms[c] += plogp(n_sy[v]);
      counts[v] += n_sy[v];
    }
  }
  for (int32_t v = 0; v < levels; ++v) total_term += plogp(counts[v]);
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
                     const PlogpTable& plogp, CountScratch& scratch, const StateGroups* groups,
                     const PackedClasses* packed) {
  if (groups && !x.sparse && x.base[feature] == kNoBase) {
    const int64_t begin = x.entries_begin(feature);
    return grouped_joint_sums(x.wide ? nullptr : x.codes8.data() + begin, x.wide ? x.codes16.data() + begin : nullptr,
                              x.levels[feature], s, *groups, layout, plogp, scratch);
  }
  // Packed when reading every cell costs no more than a few adds a sample.
  if (packed && packed->usable() && !x.sparse && !x.wide &&
      static_cast<int64_t>(x.levels[feature]) * s.levels * static_cast<int64_t>(1 + packed->groups.size()) <=
          int64_t(kTouchRatio) * layout.n_samples)
    return packed_joint_sums(x.codes8.data() + x.entries_begin(feature), x.levels[feature], s, layout, *packed, plogp,
                             scratch);
  // Dense byte codes: every cell counted, unless a base code pays for its derivation, which
  // scans S's levels per class (not worth it when there are few samples for the cells).
  const size_t all_cells = static_cast<size_t>(x.levels[feature]) * s.levels;
  if (!x.sparse && !x.wide &&
      (x.base[feature] == kNoBase || int64_t(kTouchRatio) * layout.n_samples < static_cast<int64_t>(all_cells)))
    return dense_joint_sums(x.codes8.data() + x.entries_begin(feature), x.levels[feature], s, layout, plogp, scratch);
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

  // Scans of every cell go without branches (plogp(0) = 0: on few samples a cell is as likely
  // empty as not, and mispredicted branches cost more than the stores) and take S's level from
  // the loop rather than from a division.
  const int32_t lx = x.levels[feature];
  uint32_t* const xsy_cells = n_xsy.data();
  uint32_t* const xs_cells = n_xs.data();
  uint32_t* const sy_counted = counted_sy.data();
  const bool dense_bytes = !x.sparse && !x.wide && derived;
  const uint8_t* const codes8 = x.codes8.data();
  const uint32_t* const s_codes = s.codes.data();
  const int64_t begin = x.entries_begin(feature);
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    int64_t first, last;
    class_entries(x, feature, layout, c, first, last);
    if (dense_bytes) {
      // Without a branch per entry (the base code, a fifth of the entries or more, would
      // mispredict it): base entries are counted too, into their row, which is then cleared.
      for (int64_t e = first; e < last; ++e) ++xsy_cells[static_cast<size_t>(codes8[e]) * ls + s_codes[e - begin]];
      std::fill_n(xsy_cells + static_cast<size_t>(base) * ls, ls, 0u);
    } else {
      for (int64_t e = first; e < last; ++e) {
        const int64_t cell = cell_of(e);
        if (cell >= 0) ++xsy_cells[cell];
      }
    }
    if (revisit(first, last, cells)) {
      drain(n_xsy, first, last, [&](size_t cell, uint32_t v) {
        sums.xsy += plogp(v);
        n_xs[cell] += v;
        if (derived) counted_sy[cell % ls] += v;
      });
    } else {
      for (int32_t a = 0, cell = 0; a < lx; ++a)
        for (int32_t v = 0; v < ls; ++v, ++cell) {
          const uint32_t n = xsy_cells[cell];
          xsy_cells[cell] = 0;
          sums.xsy += plogp(n);
          xs_cells[cell] += n;
          if (derived) sy_counted[v] += n;
        }
    }
    if (derived)
      sums.xsy += derive(counted_sy, s.class_counts.data() + static_cast<size_t>(c) * ls, s.class_terms[c], first, last,
                  [&](int32_t v, uint32_t n) { counted_s[v] += n; });
  }
  const int64_t first = x.entries_begin(feature), last = x.entries_end(feature);
  if (revisit(first, last, cells)) {
    drain(n_xs, first, last, [&](size_t, uint32_t v) { sums.xs += plogp(v); });
  } else {
    for (size_t cell = 0; cell < cells; ++cell) {
      sums.xs += plogp(xs_cells[cell]);
      xs_cells[cell] = 0;
    }
  }
  if (derived) sums.xs += derive(counted_s, s.counts.data(), s.total_term, first, last, [](int32_t, uint32_t) {});
  return sums;
}

}  // namespace fsgpu
