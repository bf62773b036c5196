// The discretization criteria, compiled for the host and the device so that the CPU and GPU
// engines make every decision with the same numbers (see discretize.h for the model).
//
// Top-down methods (Kurgan & Cios's CAIM loop): start with one interval, repeatedly add the
// candidate cut whose scheme scores best, and keep it while the scheme's criterion grows (or, for
// CAIM and CACC, while there are fewer intervals than classes). For a fixed number of intervals
// each criterion is increasing in a sum of per-interval terms:
//   CAIM            sum_r max_c q_rc^2 / M_r                     criterion = sum / k
//   CACC, Ameva     sum_r (sum_c q_rc^2 / M_c) / M_r             chi2 = N (sum - 1)
// (CACC = sqrt(y / (y + N)) with y = chi2 / ln k; Ameva = chi2 / (k (S - 1))). So the best
// candidate is the one whose split raises the sum most: its gain term(left) + term(right) -
// term(parent) needs only the split interval's counts, O(classes) from prefix counts.
//
// Rounding: terms are doubles, and candidates whose gains are mathematically equal can differ in
// the last bits. Gains within kDiscretizeTie of the best (relative to the scheme's sum) count as
// tied and the lowest candidate wins; a scheme replaces the current one only when its criterion
// is larger by more than kDiscretizeTie relative to the numbers it came from. Every operation is
// a plain IEEE double operation that neither compiler may fuse into an fma.
//
// MDLP (Fayyad & Irani): recursive binary splits that minimise the class entropy, accepted by the
// MDL rule. Entropies are exact fixed-point integers (plogp_table.h); only the MDL test uses
// doubles, from host tables of logarithms.
#pragma once

#include <cstdint>

#include "criteria.h"  // FSGPU_HD
#include "discretize.h"
#include "plogp_table.h"

namespace fsgpu {

constexpr double kDiscretizeTie = 1e-9;

FSGPU_HD inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

FSGPU_HD inline double sub_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

FSGPU_HD inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// The cut between distinct values a < b: their midpoint, or a itself where a and b are adjacent
// doubles and the midpoint rounds up to b; so a <= cut < b, and a value equal to a cut falls in
// the interval below it. (Halving is exact, so a/2 + b/2 is the correctly rounded midpoint and
// cannot overflow.)
FSGPU_HD inline double cut_between(double a, double b) {
  const double m = add_rn(a * 0.5, b * 0.5);
  return m < b ? m : a;
}

// Class counts of runs of distinct values, from prefix counts: row t holds the counts of each
// class among the values <= v_t.
struct PrefixCounts {
  const int32_t* rows = nullptr;  // T x n_classes
  int32_t n_classes = 1;

  // Samples of class c with a value among v_first..v_last.
  FSGPU_HD int32_t count(int32_t first, int32_t last, int32_t c) const {
    const int64_t s = n_classes;
    return rows[last * s + c] - (first > 0 ? rows[(first - 1) * s + c] : 0);
  }
};

// One interval's term of the sum that the top-down criteria grow (see above); class_totals are
// the feature's class counts M_c as doubles (CACC and Ameva only).
FSGPU_HD inline double interval_term(DiscretizeMethod m, const PrefixCounts& p, int32_t first, int32_t last,
                                     const double* class_totals) {
  int64_t total = 0;
  if (m == DiscretizeMethod::caim) {
    int64_t largest = 0;
    for (int32_t c = 0; c < p.n_classes; ++c) {
      const int64_t q = p.count(first, last, c);
      total += q;
      largest = q > largest ? q : largest;
    }
    return static_cast<double>(largest * largest) / static_cast<double>(total);
  }
  double s = 0;
  for (int32_t c = 0; c < p.n_classes; ++c) {
    const int64_t q = p.count(first, last, c);
    total += q;
    if (q) s = add_rn(s, static_cast<double>(q * q) / class_totals[c]);
  }
  return s / static_cast<double>(total);
}

// What splitting the interval first..last (whose term is parent) after v_t adds to the sum.
FSGPU_HD inline double split_gain(DiscretizeMethod m, const PrefixCounts& p, int32_t first, int32_t t, int32_t last,
                                  double parent, const double* class_totals) {
  return sub_rn(add_rn(interval_term(m, p, first, t, class_totals), interval_term(m, p, t + 1, last, class_totals)),
                parent);
}

// Gains at or above this count as tied with the best gain, for a scheme whose terms sum to sum.
FSGPU_HD inline double tied_gain_floor(double best_gain, double sum) {
  return sub_rn(best_gain, mul_rn(kDiscretizeTie, sum));
}

// Two trees over fixed slots keep each top-down step O(split interval + log T) however many
// intervals there are (CACC can make thousands):
//  - the sum tree holds each interval's term at the slot of its first distinct value (0
//    elsewhere) and adds them pairwise in a fixed shape, so a scheme's sum of terms is the same
//    double on both backends whatever order its intervals were made in;
//  - the gain tree holds each candidate's gain (-inf once it is a cut) and finds the lowest
//    candidate whose gain reaches a floor.
// Both are heaps over `size` leaves (a power of two): node i has children 2i and 2i + 1, and
// leaf j is node size + j.

FSGPU_HD inline int32_t tree_size(int32_t leaves) {
  int32_t size = 1;
  while (size < leaves) size *= 2;
  return size;
}

// Sets a slot of the sum tree and the sums above it; returns the new total.
FSGPU_HD inline double sum_tree_set(double* tree, int32_t size, int32_t slot, double value) {
  int32_t i = size + slot;
  tree[i] = value;
  for (i /= 2; i >= 1; i /= 2) tree[i] = add_rn(tree[2 * i], tree[2 * i + 1]);
  return tree[1];
}

FSGPU_HD inline void gain_tree_pull(double* tree, int32_t node) {
  const double a = tree[2 * node], b = tree[2 * node + 1];
  tree[node] = a >= b ? a : b;
}

// The lowest candidate whose gain is at least floor (floor must not exceed the largest gain).
FSGPU_HD inline int32_t gain_tree_first_at_least(const double* tree, int32_t size, double floor) {
  int32_t i = 1;
  while (i < size) i = tree[2 * i] >= floor ? 2 * i : 2 * i + 1;
  return i - size;
}

// A scheme's criterion, ordered as the method orders schemes (CACC's is y = chi2 / ln k, which
// orders as sqrt(y / (y + N)) does), with the size of the numbers it was computed from, which
// bounds its rounding error. k intervals whose terms sum to sum, n values of s classes.
struct SchemeValue {
  double value = 0, scale = 0;
};

FSGPU_HD inline SchemeValue scheme_value(DiscretizeMethod m, double sum, int32_t k, int32_t n, int32_t s,
                                         const double* ln) {
  SchemeValue v;
  if (k < 2) return v;  // one interval: the loops start from a criterion of 0
  if (m == DiscretizeMethod::caim) {
    v.value = sum / k;
    v.scale = v.value;
  } else {
    const double divisor = m == DiscretizeMethod::ameva ? static_cast<double>(k) * (s - 1) : ln[k];
    v.value = mul_rn(static_cast<double>(n), sub_rn(sum, 1.0)) / divisor;
    v.scale = mul_rn(static_cast<double>(n), sum) / divisor;
  }
  return v;
}

// Whether the top-down loop moves from its scheme of k intervals (terms summing to old_sum) to
// the best scheme of k + 1 (new_sum): CAIM and CACC always while k < s (the first s - 1 cuts are
// forced), otherwise when the criterion grows by more than rounding could explain.
FSGPU_HD inline bool topdown_accepts(DiscretizeMethod m, double new_sum, double old_sum, int32_t k, int32_t n,
                                     int32_t s, const double* ln) {
  if (m != DiscretizeMethod::ameva && k < s) return true;
  const SchemeValue a = scheme_value(m, new_sum, k + 1, n, s, ln), b = scheme_value(m, old_sum, k, n, s, ln);
  return sub_rn(a.value, b.value) > mul_rn(kDiscretizeTie, a.scale > b.scale ? a.scale : b.scale);
}

// MDLP: plogp(M) - sum_c plogp(q_c) = M H(Y | interval) 2^32 of the values v_first..v_last,
// and the number of classes present among them.
FSGPU_HD inline int64_t interval_entropy(const PrefixCounts& p, int32_t first, int32_t last, const int64_t* plogp,
                                         int32_t* present) {
  int64_t total = 0, terms = 0;
  int32_t k = 0;
  for (int32_t c = 0; c < p.n_classes; ++c) {
    const int32_t q = p.count(first, last, c);
    total += q;
    terms += plogp[q];
    k += q > 0;
  }
  *present = k;
  return plogp[total] - terms;
}

// Pointers into DiscretizeTables (host or device copies).
struct TableView {
  const double* ln = nullptr;
  const double* log2 = nullptr;
  const double* log2_3k = nullptr;
  const int64_t* plogp = nullptr;
};

// Fayyad & Irani's MDL rule for splitting an interval of n values (entropy numerator h, k
// classes) into n1 + n2 (h1, k1 and h2, k2): accept when
//   n Gain > log2(n - 1) + log2(3^k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2)).
FSGPU_HD inline bool mdlp_accepts(int32_t n, int64_t h, int32_t k, int32_t n1, int64_t h1, int32_t k1, int32_t n2,
                                  int64_t h2, int32_t k2, const TableView& t) {
  auto entropy = [](int64_t numerator, int32_t size) {  // bits; the divisor is exact (a power of 2 times size)
    return static_cast<double>(numerator) / (static_cast<double>(size) * kPlogpScale);
  };
  const double delta =
      sub_rn(t.log2_3k[k], sub_rn(sub_rn(mul_rn(k, entropy(h, n)), mul_rn(k1, entropy(h1, n1))),
                                  mul_rn(k2, entropy(h2, n2))));
  const double n_gain = static_cast<double>(h - h1 - h2) / kPlogpScale;
  return n_gain > add_rn(t.log2[n - 1], delta);
}

// The smallest distinct value index t with at least j/nbins of the n values at or below v_t
// (cum[t]: values <= v_t): equal-frequency cut j falls after it.
FSGPU_HD inline int32_t equal_freq_index(const int32_t* cum, int32_t n_distinct, int32_t j, int32_t nbins,
                                         int32_t n) {
  int32_t lo = 0, hi = n_distinct - 1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (static_cast<int64_t>(cum[mid]) * nbins >= static_cast<int64_t>(j) * n) hi = mid; else lo = mid + 1;
  }
  return lo;
}

}  // namespace fsgpu
