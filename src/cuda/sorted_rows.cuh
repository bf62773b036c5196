// Device search in the ascending class-sorted rows of a sparse feature, shared by the counting
// kernels (joint_counts.cu, impurity_counts.cu): where each class's entries begin.
#pragma once

#include <cstdint>

namespace fsgpu {

// The first index i in [0, n) with rows[i] >= value, or n when there is none.
__device__ __forceinline__ int32_t first_row_at_least(const int32_t* rows, int32_t n, int32_t value) {
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    const int32_t mid = (lo + hi) / 2;
    if (rows[mid] < value) lo = mid + 1; else hi = mid;
  }
  return lo;
}

}  // namespace fsgpu
