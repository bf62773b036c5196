// The entropy estimators of infotheo (Meyer 2008), as per-count terms.
//
// Every estimator here estimates H from the counts n_1..n_m of a table's m observed cells
// (N = sum n_i) in the same form as the plug-in one:
//   N * H = t(N) - sum_i t(n_i)
// with its own term t (t(0) = 0), so that every information in fsgpu, a sum of entropies with
// signs, stays a sum of table terms (plogp_table.h: fixed point, exact, the same on CPU and GPU):
//   emp: t(n) = n log n                                H = log N - sum (n_i/N) log n_i
//   mm:  t(n) = n log n - 1/2 (n > 0)                  H = H_emp + (m - 1) / (2N)   (Miller-Madow)
//   sg:  t(n) = n digamma(n + 1)                       H = digamma(N + 1) - sum (n_i/N) digamma(n_i + 1)
// "sg" is what infotheo's "sg" computes: the posterior mean of the entropy under a symmetric
// Dirichlet prior a, sum_i (n_i + a)(digamma(N + m a + 1) - digamma(n_i + a + 1)) / (N + m a), with
// a = 1/m as infotheo's C++ writes it, `1/freq.size()`: an integer division, so a = 0 whenever
// more than one cell is observed (and with one cell H = 0 for every a). Schurmann and
// Grassberger's a = 1/m proper would not be a per-count term.
//
// infotheo's "shrink" (the same posterior mean with a = lambda/(1 - lambda) * N/m for the
// James-Stein intensity lambda, log m when lambda >= 1) depends on the whole table through m
// and sum n_i^2; it is not a per-count term and fsgpu does not offer it.
#pragma once

#include <cstdint>
#include <string>

namespace fsgpu {

enum class Estimator : int32_t { empirical, miller_madow, schurmann_grassberger };

// "emp", "mm" or "sg"; throws std::invalid_argument naming anything else.
Estimator estimator_of(const std::string& name);

// t(n) in bits (t(n) in nats / ln 2), in long double for the table's fixed-point rounding.
long double entropy_term_bits(Estimator estimator, int64_t n);

}  // namespace fsgpu
