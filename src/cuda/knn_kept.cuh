// An index's reference points kept on the devices between searches (gpu_backend.h's
// GpuKnnKept): the rows the kNN and range searches would otherwise upload on every call.
#pragma once

#include <memory>
#include <vector>

#include "core/knn.h"
#include "cuda_check.cuh"

namespace fsgpu {

// The single-precision rows of both searches are padded to a multiple of this (knn.cu's
// staging chunk, knn_range.cu's rows).
constexpr int32_t kKnnStride32 = 8;

struct GpuKnnKept {
  struct OnDevice {
    int device = 0;
    DeviceBuffer<float> rows32;      // knn_float_rows() centred on the reference mean, n x stride32
    DeviceBuffer<float> rows32_t;    // the same, transposed (stride32 x n): the range screen's layout
    DeviceBuffer<double> rows64;     // the prepared rows, n x stride
    DeviceBuffer<double> norms;      // spearman's row lengths (empty otherwise)
  };
  int64_t n = 0;
  int32_t stride = 0, stride32 = 0;
  std::vector<std::unique_ptr<OnDevice>> devices;

  GpuKnnKept() = default;
  GpuKnnKept(const GpuKnnKept&) = delete;
  GpuKnnKept& operator=(const GpuKnnKept&) = delete;
  // Frees each copy with its device current (errors ignored: nothing can be done about them).
  ~GpuKnnKept() {
    int previous = 0;
    const bool restore = cudaGetDevice(&previous) == cudaSuccess;
    for (auto& d : devices) {
      if (cudaSetDevice(d->device) == cudaSuccess) d.reset();
    }
    if (restore) cudaSetDevice(previous);
  }
  // The copy on `device`, or null; only for the reference points it was made from (same size).
  const OnDevice* on(int device, const KnnPoints& reference) const {
    if (reference.n != n || reference.stride != stride) return nullptr;
    for (const auto& d : devices)
      if (d && d->device == device) return d.get();
    return nullptr;
  }
};

}  // namespace fsgpu
