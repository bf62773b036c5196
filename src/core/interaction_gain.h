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
// Every n log2 n term comes from a host table indexed by the integer count, in fixed point
// (multiples of 2^-32, as plogp_table.h), so sums are exact integers: the result depends neither
// on the engine nor on the order of the cells, and mathematically equal gains (a tuple and its
// transpose, copies of a variable) are equal, so ties are real ties.
#pragma once

#include <cstdint>

#include "criteria.h"  // FSGPU_HD

// Forced inline, so that calls with constant k and m unroll (the same operations in the same
// order as any other call).
#ifdef __CUDA_ARCH__
#define FSGPU_GAIN_INLINE __forceinline__
#define FSGPU_UNROLL _Pragma("unroll")
#else
#define FSGPU_GAIN_INLINE __attribute__((always_inline)) inline
#define FSGPU_UNROLL
#endif

namespace fsgpu {

FSGPU_HD inline int32_t tuple_cells(int32_t k, int32_t m) {
  int32_t cells = 1;
  for (int32_t d = 0; d < k; ++d) cells *= m;
  return cells;
}

// The tables of GainTables (interactions.h) as plain pointers, for either side.
constexpr double kGainScale = 4294967296.0;  // 2^32

struct GainTableView {
  int32_t n_classes = 0, n_levels = 0, stride = 0;  // stride: entries per class (N + 1)
  const int64_t* cell = nullptr;          // [class][n]: (n + p_c) log2(n + p_c)
  const int64_t* cell_total = nullptr;    // [n]: (n + P) log2(n + P)
  const int64_t* merged = nullptr;        // [class][n]: (n + m p_c) log2(n + m p_c)
  const int64_t* merged_total = nullptr;  // [n]: (n + m P) log2(n + m P)
};

// Turns counts in which level m - 1 of a position means "any level" (a lower-order count) into
// the full table: n(.., m-1, ..) = n(.., any, ..) - sum_{l < m-1} n(.., l, ..), one axis at a time.
FSGPU_HD FSGPU_GAIN_INLINE void complete_counts(int32_t* counts, int32_t k, int32_t m, int32_t n_classes) {
  const int32_t cells = tuple_cells(k, m);
  FSGPU_UNROLL
  for (int32_t c = 0; c < n_classes; ++c) {
    int32_t* t = counts + c * cells;
    FSGPU_UNROLL
    for (int32_t d = 0, weight = 1; d < k; ++d, weight *= m) {
      FSGPU_UNROLL
      for (int32_t cell = 0; cell < cells; ++cell) {
        if ((cell / weight) % m != m - 1) continue;
        int32_t rest = t[cell];
        FSGPU_UNROLL
        for (int32_t level = 0; level < m - 1; ++level) rest -= t[cell - (m - 1 - level) * weight];
        t[cell] = rest;
      }
    }
  }
}

// condH of the full table (pseudo-counts p_c), or of the table summed over axis d (pseudo-counts
// m p_c; d < 0: the full table), in fixed point.
FSGPU_HD FSGPU_GAIN_INLINE int64_t tuple_cond_entropy(const int32_t* counts, int32_t k, int32_t m, int32_t n_classes,
                                                      const GainTableView& t, int32_t d) {
  const int32_t cells = tuple_cells(k, m);
  int64_t h = 0;
  if (d < 0) {
    FSGPU_UNROLL
    for (int32_t cell = 0; cell < cells; ++cell) {
      int32_t total = 0;
      int64_t classes = 0;
      FSGPU_UNROLL
      for (int32_t c = 0; c < n_classes; ++c) {
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
  FSGPU_UNROLL
  for (int32_t cell = 0; cell < cells; ++cell) {
    if ((cell / weight) % m != 0) continue;  // one voxel of the reduced table per line along axis d
    int32_t total = 0;
    int64_t classes = 0;
    FSGPU_UNROLL
    for (int32_t c = 0; c < n_classes; ++c) {
      int32_t n = 0;
      FSGPU_UNROLL
      for (int32_t level = 0; level < m; ++level) n += counts[c * cells + cell + level * weight];
      total += n;
      classes += t.merged[c * t.stride + n];
    }
    h += t.merged_total[total] - classes;
  }
  return h;
}

FSGPU_HD inline double gain_bits(int64_t fixed) { return static_cast<double>(fixed) / kGainScale; }

// IG of each variable of the tuple (gains[d] for position d) from its full counts.
// (m and n_classes are those of the tables; engines may pass them as constants.)
FSGPU_HD FSGPU_GAIN_INLINE void tuple_gains(const int32_t* counts, int32_t k, int32_t m, int32_t n_classes,
                                            const GainTableView& t, double* gains) {
  const int64_t full = tuple_cond_entropy(counts, k, m, n_classes, t, -1);
  FSGPU_UNROLL
  for (int32_t d = 0; d < k; ++d) gains[d] = gain_bits(tuple_cond_entropy(counts, k, m, n_classes, t, d) - full);
}

}  // namespace fsgpu
