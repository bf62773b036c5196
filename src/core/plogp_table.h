// Information from integer counts, computed exactly.
//
// Every entropy in fsgpu is a sum of n*log2(n) terms over the cells of a contingency table.
// Each term is read from a table as a fixed-point integer (32 fraction bits), so sums are exact
// integer arithmetic: independent of summation order, thread count and device, and two tables
// whose terms are equal give bitwise-equal scores. The table is built once on the host and the
// same integers are copied to every GPU.
//
// The table may hold another estimator's terms (estimators.h): every sum below then estimates
// the information with that estimator, through the same code and the same exact arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "estimators.h"

namespace fsgpu {

// Sums of fixed-point terms across selection steps can pass 2^63; 128 bits never overflow.
__extension__ typedef __int128 Wide;

constexpr double kPlogpScale = 4294967296.0;  // 2^32: one bit of information per sample

// N*log2(N) of the largest sample count must fit a 64-bit fixed-point sum.
constexpr int64_t kMaxSamples = 40000000;

// plogp(n) = round(n * log2(n) * 2^32), for n = 0..max_count (plogp(0) = plogp(1) = 0); for
// another estimator, round(t(n) * 2^32) with its term t in bits (estimators.h; t(0) = 0). A
// shrink table holds the plug-in terms: its estimates are made table by table (PairData).
class PlogpTable {
 public:
  // Built on `threads` threads (the terms are the same integers on any number).
  explicit PlogpTable(int64_t max_count, Estimator estimator = Estimator::empirical, int threads = 1);
  Estimator estimator() const { return estimator_; }
  int64_t operator()(int64_t n) const { return terms_[static_cast<size_t>(n)]; }
  const int64_t* data() const { return terms_.data(); }
  size_t size() const { return terms_.size(); }

 private:
  std::vector<int64_t> terms_;
  Estimator estimator_;
};

// A fixed-point information numerator (N * I * 2^32) as bits.
inline double fixed_to_bits(Wide numerator, int64_t n_samples) {
  return static_cast<double>(numerator) / (kPlogpScale * static_cast<double>(n_samples));
}

}  // namespace fsgpu
