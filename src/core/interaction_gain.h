// A tuple's information gains from its counts, compiled for the host and the device so that the
// CPU and GPU engines give bitwise-equal gains.
//
// Cells: a tuple of k variables with m levels has m^k voxels; cell = sum_d level_d * m^d (the
// first variable varies fastest, as in MDFS). Counts are [class][cell].
//
// MDFS's statistic: a pseudo-count p_c is added to every cell of the tuple's table; the table
// without variable v is the sum of that table over v's axis, so its cells carry m p_c. With the
// count-weighted conditional entropy
//   condH(t) = sum_voxels [ T log2 T - sum_c t_c log2 t_c ],  T = sum_c t_c,
// the gain of v is IG_v = condH(table without v) - condH(table) (bits; about N I(Y; X_v | rest)).
// Every n log2 n term comes from a host table indexed by the integer count, and the sums run in
// one fixed order of plain additions, so the result does not depend on the engine.
#pragma once

#include <cstdint>

#include "criteria.h"  // FSGPU_HD

namespace fsgpu {

FSGPU_HD inline int32_t tuple_cells(int32_t k, int32_t m) {
  int32_t cells = 1;
  for (int32_t d = 0; d < k; ++d) cells *= m;
  return cells;
}

// The tables of GainTables (interactions.h) as plain pointers, for either side.
struct GainTableView {
  int32_t n_classes = 0, n_levels = 0, stride = 0;  // stride: entries per class (N + 1)
  const double* cell = nullptr;          // [class][n]: (n + p_c) log2(n + p_c)
  const double* cell_total = nullptr;    // [n]: (n + P) log2(n + P)
  const double* merged = nullptr;        // [class][n]: (n + m p_c) log2(n + m p_c)
  const double* merged_total = nullptr;  // [n]: (n + m P) log2(n + m P)
};

// Turns counts in which level m - 1 of a position means "any level" (a lower-order count) into
// the full table: n(.., m-1, ..) = n(.., any, ..) - sum_{l < m-1} n(.., l, ..), one axis at a time.
FSGPU_HD inline void complete_counts(int32_t* counts, int32_t k, int32_t m, int32_t n_classes) {
  const int32_t cells = tuple_cells(k, m);
  for (int32_t c = 0; c < n_classes; ++c) {
    int32_t* t = counts + c * cells;
    for (int32_t d = 0, weight = 1; d < k; ++d, weight *= m) {
      for (int32_t cell = 0; cell < cells; ++cell) {
        if ((cell / weight) % m != m - 1) continue;
        int32_t rest = t[cell];
        for (int32_t level = 0; level < m - 1; ++level) rest -= t[cell - (m - 1 - level) * weight];
        t[cell] = rest;
      }
    }
  }
}

// condH of the full table (pseudo-counts p_c), or of the table summed over axis d (pseudo-counts
// m p_c; d < 0: the full table).
FSGPU_HD inline double tuple_cond_entropy(const int32_t* counts, int32_t k, const GainTableView& t, int32_t d) {
  const int32_t m = t.n_levels, cells = tuple_cells(k, m);
  double h = 0;
  if (d < 0) {
    for (int32_t cell = 0; cell < cells; ++cell) {
      int32_t total = 0;
      double classes = 0;
      for (int32_t c = 0; c < t.n_classes; ++c) {
        const int32_t n = counts[c * cells + cell];
        total += n;
        classes += t.cell[c * t.stride + n];
      }
      h += t.cell_total[total] - classes;
    }
    return h;
  }
  int32_t weight = 1;
  for (int32_t e = 0; e < d; ++e) weight *= m;
  for (int32_t cell = 0; cell < cells; ++cell) {
    if ((cell / weight) % m != 0) continue;  // one voxel of the reduced table per line along axis d
    int32_t total = 0;
    double classes = 0;
    for (int32_t c = 0; c < t.n_classes; ++c) {
      int32_t n = 0;
      for (int32_t level = 0; level < m; ++level) n += counts[c * cells + cell + level * weight];
      total += n;
      classes += t.merged[c * t.stride + n];
    }
    h += t.merged_total[total] - classes;
  }
  return h;
}

// IG of each variable of the tuple (gains[d] for position d) from its full counts.
FSGPU_HD inline void tuple_gains(const int32_t* counts, int32_t k, const GainTableView& t, double* gains) {
  const double full = tuple_cond_entropy(counts, k, t, -1);
  for (int32_t d = 0; d < k; ++d) gains[d] = tuple_cond_entropy(counts, k, t, d) - full;
}

}  // namespace fsgpu
