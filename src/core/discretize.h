// Discretization: cut points per feature by a supervised criterion (CAIM, CACC, Ameva, MDLP)
// or by equal-width and equal-frequency bins, on the CPU (discretize.cpp) and on GPUs
// (cuda/discretize.cu), with the same results.
//
// Every method sees a feature as its distinct non-missing values v_0 < ... < v_{T-1} with class
// counts. Candidate cut t (0 <= t < T-1) lies between v_t and v_{t+1}, at their midpoint;
// intervals (c_{k-1}, c_k] are closed on the right. The class counts of the values up to v_t
// (the prefix counts) give any interval's quanta in O(classes), so a candidate is scored without
// rescanning the data. The criteria themselves are in discretize_criteria.h, shared with the GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint.h"

namespace fsgpu {

enum class DiscretizeMethod : int32_t { caim, cacc, ameva, mdlp, equal_width, equal_freq };

inline bool is_supervised(DiscretizeMethod m) {
  return m != DiscretizeMethod::equal_width && m != DiscretizeMethod::equal_freq;
}

struct DiscretizeTask {
  DiscretizeMethod method = DiscretizeMethod::caim;
  int32_t n_samples = 0;
  int64_t n_features = 0;
  const int32_t* labels = nullptr;  // per sample, 0..n_classes-1; unused (all 0) when unsupervised
  int32_t n_classes = 1;
  int32_t nbins = 0;                // equal_width and equal_freq
  // Column-major n_samples x n_features values when the input is a dense double matrix: the GPU
  // copies its columns straight from here. Otherwise null, and `read` is the only source.
  const double* dense = nullptr;
  // Writes feature f's n_samples values (NaN = missing) to out; called from worker threads.
  std::function<void(int64_t f, double* out)> read;
};

// A feature's discretization.
struct FeatureCuts {
  std::vector<double> cuts;  // inner cut points, ascending
  double lo = 0, hi = 0;     // smallest and largest non-missing value (NaN when all are missing)
  // CAIM, CACC and Ameva: the criterion of the final scheme. MDLP: the class information of
  // the intervals, I(Y; interval) in bits. Equal width and frequency: NaN.
  double criterion = 0;
  int32_t missing = 0;       // samples with a missing value
};

// Classes the GPU engine takes: its distinct-value pass keeps 17 counters per class in shared memory.
constexpr int32_t kMaxGpuDiscretizeClasses = 1024;

// Cut points of every feature, features split over `threads`; between_slices runs on the calling
// thread between slices of features (where the caller may check for an interrupt).
std::vector<FeatureCuts> cpu_discretize(const DiscretizeTask& task, int threads,
                                        const Checkpoint& between_slices);

// Interval codes 1..k of every value (NA_code for missing values), n_samples x n_features
// column-major: the number of cuts below the value plus one (intervals closed on the right), or
// for equal_width the equal-width bin of [lo, hi] plus one, as the selection's binning does.
void discretize_codes(const DiscretizeTask& task, const std::vector<FeatureCuts>& cuts, int32_t na_code,
                      int32_t* codes, int threads);

// --- pieces shared by the CPU and GPU engines -------------------------------------------------

// The criterion reported for a top-down scheme of k intervals whose terms sum to sum (n values,
// s classes present): CAIM's and Ameva's value, CACC's sqrt(y / (y + n)).
double reported_criterion(DiscretizeMethod m, double sum, int32_t k, int32_t n, int32_t s, const double* ln);

// Equal-width cut points of [lo, hi] (none when hi == lo), for display: codes use the binning
// rule of EqualWidthBins, where a value on a boundary goes to the bin above.
std::vector<double> equal_width_cuts(double lo, double hi, int32_t nbins);

// Host tables of logarithms that device code reads instead of calling log(), so that both
// backends use the very same numbers: ln(k) for CACC, log2(m) and log2(3^k - 2) for MDLP.
struct DiscretizeTables {
  std::vector<double> ln;        // ln(k), k = 0..n_samples (ln(0) unused)
  std::vector<double> log2;      // log2(m), m = 0..n_samples
  std::vector<double> log2_3k;   // log2(3^k - 2), k = 0..n_classes
  std::vector<int64_t> plogp;    // m log2(m) in fixed point (plogp_table.h), m = 0..n_samples
  static DiscretizeTables make(int32_t n_samples, int32_t n_classes);
};

}  // namespace fsgpu
