// Sorting equal-length segments of (double key, int value) pairs with CUB.
#pragma once

#include <cub/cub.cuh>

#include <cstdint>
#include <vector>

#include "cuda_check.cuh"

namespace fsgpu {

// Sorts each of n_segments consecutive segments of `length` pairs by key, stably (equal keys keep
// their order); keys.Current() and values.Current() hold the result. offsets and temp are
// scratch, grown as needed.
inline void sort_segments(cub::DoubleBuffer<double>& keys, cub::DoubleBuffer<int32_t>& values, int32_t n_segments,
                          int64_t length, DeviceBuffer<int32_t>& offsets, DeviceBuffer<unsigned char>& temp,
                          cudaStream_t stream) {
  std::vector<int32_t> starts(n_segments + 1);
  for (int32_t s = 0; s <= n_segments; ++s) starts[s] = static_cast<int32_t>(int64_t(s) * length);
  offsets.upload(starts.data(), starts.size(), stream);
  const int64_t total = int64_t(n_segments) * length;
  size_t bytes = 0;
  FSGPU_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys, values, total, n_segments,
                                                             offsets.data(), offsets.data() + 1, stream));
  temp.reserve(bytes);
  FSGPU_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.data(), bytes, keys, values, total, n_segments,
                                                             offsets.data(), offsets.data() + 1, stream));
}

}  // namespace fsgpu
