// The fit behind MDFS 1.5's p-values for the best gain over many tuples (ComputePValue): the
// chi-squared tail v of each variable's best gain is modelled as 1 - F^(1/alpha) ("exp") or
// F / alpha ("lin"), alpha fitted by weighted least squares on the sorted tails, ignoring the
// n0 - 1 smallest statistics, n0 chosen by a refining grid search.
#pragma once

#include <cstdint>
#include <vector>

namespace fsgpu {

enum class PValueFit { exp, lin };

// alpha for the tails `tail` (n >= 4 values) sorted by increasing statistic. With `last_only`
// (every value is a contrast variable, irrelevant by construction) each fit ends at the last
// value; else at the end point that fits best, past the min(n / 3, 30) smallest. Returns NaN
// when no fit is defined. O(n) per grid point, `search_points` grid points per round, fitted on
// `threads` threads (the same alpha for any number).
double mdfs_fit_alpha(const double* tail, int64_t n, PValueFit mode, bool last_only, int search_points,
                      int threads = 1);

// R's order(key) for n < 2^31 doubles: ascending, ties by index, NaN last (0-based). A radix sort
// of the keys' bits, so that a million p-values cost milliseconds rather than R's two orders.
std::vector<int32_t> ascending_order(const double* key, int64_t n);

// stats::p.adjust(p, "holm") of n p-values without NaN into out, bit for bit (the same products
// and running maxima in the same order), sorting only the p-values that can adjust below 1.
void holm_adjust(const double* p, int64_t n, double* out);

}  // namespace fsgpu
