#include "impurity_counts.h"

#include "criteria.h"

namespace fsgpu {

int64_t impurity_sum(const CodeMatrix& x, int64_t feature, const Conditioning& s, const ClassLayout& layout,
                     ImpurityScratch& scratch) {
  const int32_t n = layout.n_samples, ls = s.levels;
  const size_t cells = static_cast<size_t>(x.levels[feature]) * ls;
  scratch.codes.assign(n, x.sparse ? x.base[feature] : 0);
  for (int64_t e = x.entries_begin(feature); e < x.entries_end(feature); ++e) scratch.codes[x.row(feature, e)] = x.code(e);
  if (scratch.pair_counts.size() < cells) {
    scratch.pair_counts.resize(cells, 0);
    scratch.cell_counts.resize(cells, 0);
  }
  auto cell = [&](int32_t i) { return static_cast<int64_t>(scratch.codes[i]) * ls + s.codes[i]; };
  for (int32_t i = 0; i < n; ++i) ++scratch.pair_counts[cell(i)];
  Wide sum = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    scratch.touched.clear();
    for (int32_t i = layout.class_start[c]; i < layout.class_start[c + 1]; ++i) {
      const int64_t k = cell(i);
      if (scratch.cell_counts[k]++ == 0) scratch.touched.push_back(k);
    }
    for (int64_t k : scratch.touched) {
      sum += gini_term(scratch.cell_counts[k], scratch.pair_counts[k]);
      scratch.cell_counts[k] = 0;
    }
  }
  for (int32_t i = 0; i < n; ++i) scratch.pair_counts[cell(i)] = 0;
  return gini_fixed(sum);
}

int64_t impurity_offset(const ClassLayout& layout) {
  Wide sum = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c)
    sum += gini_term(static_cast<uint32_t>(layout.class_start[c + 1] - layout.class_start[c]),
                     static_cast<uint32_t>(layout.n_samples));
  return gini_fixed(sum);
}

}  // namespace fsgpu
