#include "plogp_table.h"

#include <cmath>
#include <stdexcept>

#include "parallel.h"

namespace fsgpu {

PlogpTable::PlogpTable(int64_t max_count, Estimator estimator, int threads) : estimator_(estimator) {
  if (max_count < 0 || max_count > kMaxSamples)
    throw std::runtime_error("at most 40,000,000 samples are supported");
  terms_.resize(static_cast<size_t>(max_count) + 1, 0);
  // long double keeps the rounding of the last fixed-point bit honest for large n (and costs
  // tens of milliseconds a million terms: hence the threads).
  parallel_for(max_count, threads, 65536, [&](int64_t begin, int64_t end, int) {
    for (int64_t n = begin + 1; n <= end; ++n)
      terms_[static_cast<size_t>(n)] =
          static_cast<int64_t>(std::llround(entropy_term_bits(estimator, n) * 4294967296.0L));
  });
}

}  // namespace fsgpu
