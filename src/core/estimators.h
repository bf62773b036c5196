// The entropy estimators of infotheo (Meyer 2008): per-count terms, and shrink table by table.
//
// Every per-count estimator estimates H from the counts n_1..n_m of a table's m observed cells
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
// infotheo's "shrink" is the same posterior mean with a = lambda/(1 - lambda) * N/m, where
// lambda = m (N^2 - sum n_i^2) / ((N - 1)(m sum n_i^2 - N^2)) is the James-Stein shrinkage
// intensity towards the uniform distribution on the m observed cells, and H = log m when
// lambda >= 1 (a uniform table: lambda is infinite). It depends on the whole table, so it is
// not a per-count term: shrink_cell_terms() evaluates it table by table on the CPU, where the
// counts are at hand, and converts it to the same fixed-point form. With one cell H = 0 (infotheo
// divides 0 by 0 there and returns NaN).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fsgpu {

enum class Estimator : int32_t { empirical, miller_madow, schurmann_grassberger, shrink };

// "emp", "mm", "sg" or "shrink"; throws std::invalid_argument naming anything else.
Estimator estimator_of(const std::string& name);

// Whether the estimator is a per-count term t (all but shrink).
inline bool per_count_terms(Estimator e) { return e != Estimator::shrink; }

// t(n) in bits (t(n) in nats / ln 2), in long double for the table's fixed-point rounding. The
// shrink estimator has no such term: its tables hold the plug-in terms (see shrink_cell_terms).
long double entropy_term_bits(Estimator estimator, int64_t n);

// The shrink entropy of a table in the fixed-point form of plogp_table.h: the sum of terms S
// for which N * H = plogp_n - S, i.e. plogp_n - round(N * H * 2^32) with H in bits, where
// plogp_n is the plug-in table's plogp(N). `counts` are the table's cells (zeros are skipped;
// their order does not matter: they are sorted first, which is why the vector is taken by value).
int64_t shrink_cell_terms(std::vector<uint32_t> counts, int64_t plogp_n);

}  // namespace fsgpu
