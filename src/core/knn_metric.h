// The distance every kNN result reports and orders by, compiled for the host and the device so
// that both backends compute it operation for operation (see knn.h).
//
// Rows are prepared (knn.h) and padded with zeros to a multiple of 4 (a zero term changes no
// sum). euclidean and manhattan add their terms one after another in dimension order, as
// BiocNeighbors (1.16, and FNN) do, so that their distances are BiocNeighbors' to the last bit:
//   euclidean         sqrt(sum (a_t - b_t)^2)    (ordered by the sum of squares: knn_key())
//   manhattan         sum |a_t - b_t|
// The correlation metrics take the terms of dimensions t = 0, 1, 2, 3 (mod 4) in four running
// sums, added as (s0 + s1) + (s2 + s3):
//   pearson, cosine   1 - sum a_t b_t                       (at least 0; unit rows)
//   spearman          1 - (sum a_t b_t) / (|a| |b|)         (at least 0; 1 if a row is constant)
// Every product and sum is rounded on its own (add_rn, mul_rn: no fused multiply-add). Spearman's
// rows are integers, so its sum is exact and equal correlations give equal distances.
#pragma once

#include <cmath>
#include <cstdint>

#include "criteria.h"  // FSGPU_HD
#include "discretize_criteria.h"  // add_rn, sub_rn, mul_rn
#include "knn.h"

namespace fsgpu {

FSGPU_HD inline bool is_correlation(KnnMetric m) { return m == KnnMetric::pearson || m == KnnMetric::spearman || m == KnnMetric::cosine; }

// The term of one dimension.
FSGPU_HD inline double knn_term(KnnMetric m, double a, double b) {
  if (is_correlation(m)) return mul_rn(a, b);
  const double d = sub_rn(a, b);
  return m == KnnMetric::euclidean ? mul_rn(d, d) : fabs(d);
}

// The key a search orders by and compares with a threshold: the distance, but for euclidean the
// sum of squares (BiocNeighbors orders by it, and keeps a point within threshold t when it is at
// most t * t). norm_a and norm_b are the rows' KnnPoints::norm() (used by spearman only).
FSGPU_HD inline double knn_key(KnnMetric m, const double* a, const double* b, int32_t stride, double norm_a,
                               double norm_b) {
  if (!is_correlation(m)) {
    double s = 0;
    for (int32_t t = 0; t < stride; ++t) s = add_rn(s, knn_term(m, a[t], b[t]));
    return s;
  }
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t t = 0; t < stride; t += 4) {
    s0 = add_rn(s0, knn_term(m, a[t], b[t]));
    s1 = add_rn(s1, knn_term(m, a[t + 1], b[t + 1]));
    s2 = add_rn(s2, knn_term(m, a[t + 2], b[t + 2]));
    s3 = add_rn(s3, knn_term(m, a[t + 3], b[t + 3]));
  }
  double sum = add_rn(add_rn(s0, s1), add_rn(s2, s3));
  if (m == KnnMetric::spearman) {
    if (norm_a == 0 || norm_b == 0) return 1.0;
    sum = sum / mul_rn(norm_a, norm_b);
  }
  const double d = sub_rn(1.0, sum);
  return d > 0 ? d : 0.0;
}

// The distance of a key (the square root for euclidean; sqrt is correctly rounded on both sides).
FSGPU_HD inline double knn_key_distance(KnnMetric m, double key) { return m == KnnMetric::euclidean ? sqrt(key) : key; }

// The key of a distance threshold: a point is within threshold t when its key is at most this.
FSGPU_HD inline double knn_threshold_key(KnnMetric m, double t) { return m == KnnMetric::euclidean ? mul_rn(t, t) : t; }

// The distance of two prepared rows of `stride` values (a multiple of 4).
FSGPU_HD inline double knn_distance(KnnMetric m, const double* a, const double* b, int32_t stride, double norm_a,
                                    double norm_b) {
  return knn_key_distance(m, knn_key(m, a, b, stride, norm_a, norm_b));
}

// Whether neighbour (d, j) comes before (d2, j2): the smaller key, then the lower index.
FSGPU_HD inline bool knn_before(double d, int32_t j, double d2, int32_t j2) { return d < d2 || (d == d2 && j < j2); }

}  // namespace fsgpu
