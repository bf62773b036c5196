#include <algorithm>

#include "cuda_check.cuh"
#include "core/code_matrix.h"
#include "impurity_counts.cuh"
#include "sorted_rows.cuh"

namespace fsgpu {

namespace {

constexpr int kThreads = 256;

// The block's sum of 128-bit parts, in thread 0.
__device__ __forceinline__ Wide impurity_block_sum(Wide v, Wide* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  Wide total = 0;
  if (threadIdx.x == 0)
    for (int t = 0; t < kThreads; ++t) total += scratch[t];
  __syncthreads();
  return total;  // valid in thread 0
}

// impurity_sum() (core/impurity_counts.cpp) counts every sample; here only the stored codes
// other than the base are counted and the base code's cells are derived from S's counts,
// n(base, s, .) = n(s, .) - sum of the other codes' cells, so the cells, hence the integers
// summed, are the same.
template <class Code>
__global__ void __launch_bounds__(kThreads) impurity_pass_kernel(FeatureBlockView block, StepView step,
                                                                 uint32_t* global_scratch, size_t words) {
  extern __shared__ uint32_t shared_tables[];
  __shared__ Wide reduce_scratch[kThreads];
  uint32_t* tables = global_scratch ? global_scratch + blockIdx.x * words : shared_tables;
  const int32_t ls = step.s_levels;
  const size_t max_cells = static_cast<size_t>(block.max_levels) * ls;
  uint32_t* n_xs = tables;
  uint32_t* n_xsy = n_xs + max_cells;
  int32_t* bounds = reinterpret_cast<int32_t*>(n_xsy + max_cells);  // class boundaries of the feature
  if (!global_scratch)  // shared tables start as garbage; global ones are left all-zero
    for (size_t i = threadIdx.x; i < 2 * max_cells; i += kThreads) tables[i] = 0;
  __syncthreads();

  const Code* all_codes = static_cast<const Code*>(block.codes);
  const bool sparse = block.entry_start != nullptr;
  for (int64_t lf = blockIdx.x; lf < block.n_features; lf += gridDim.x) {
    const int64_t f = block.first + lf;
    if (step.retired[f]) continue;
    const int64_t begin = sparse ? block.entry_start[lf] : lf * block.row_stride;
    const int32_t n_entries = sparse ? static_cast<int32_t>(block.entry_start[lf + 1] - begin) : step.n_samples;
    const Code* codes = all_codes + begin;
    const int32_t* rows = sparse ? block.entry_row + begin : nullptr;
    const uint16_t base = step.base[f];
    const int32_t levels = step.levels[f];
    const size_t cells = static_cast<size_t>(levels) * ls;
    for (int32_t c = threadIdx.x; c <= step.n_classes; c += kThreads)
      bounds[c] = sparse ? first_row_at_least(rows, n_entries, step.class_start[c]) : step.class_start[c];

    auto count = [&](int32_t first, int32_t last, uint32_t* table) {
      for (int32_t e = first + threadIdx.x; e < last; e += kThreads) {
        const uint16_t x = codes[e];
        if (x != base) atomicAdd(&table[static_cast<size_t>(x) * ls + step.s_codes[sparse ? rows[e] : e]], 1u);
      }
    };
    // The base code's cells: n_s[s] less the counted cells of s.
    auto derive_base = [&](uint32_t* table, const uint32_t* n_s) {
      if (base == kNoBase) return;
      for (int32_t s = threadIdx.x; s < ls; s += kThreads) {
        uint32_t counted = 0;
        for (int32_t x = 0; x < levels; ++x)
          if (x != base) counted += table[static_cast<size_t>(x) * ls + s];
        table[static_cast<size_t>(base) * ls + s] = n_s[s] - counted;
      }
    };

    count(0, n_entries, n_xs);
    __syncthreads();
    derive_base(n_xs, step.s_counts);
    __syncthreads();
    Wide sum = 0;  // this thread's part
    for (int32_t c = 0; c < step.n_classes; ++c) {
      count(bounds[c], bounds[c + 1], n_xsy);
      __syncthreads();
      derive_base(n_xsy, step.s_class_counts + static_cast<size_t>(c) * ls);
      __syncthreads();
      for (size_t cell = threadIdx.x; cell < cells; cell += kThreads) {
        const uint32_t v = n_xsy[cell];
        if (v) {
          sum += gini_term(v, n_xs[cell]);
          n_xsy[cell] = 0;
        }
      }
      __syncthreads();  // drained before the next class counts into it
    }
    for (size_t cell = threadIdx.x; cell < cells; cell += kThreads) n_xs[cell] = 0;
    const Wide total = impurity_block_sum(sum, reduce_scratch);  // also orders the clears before reuse
    if (threadIdx.x == 0) update_feature(step.rule, gini_fixed(total), 0, step.state[f]);
  }
  if (global_scratch)
    for (int32_t c = threadIdx.x; c <= step.n_classes; c += kThreads) bounds[c] = 0;
}

using ImpurityKernel = void (*)(FeatureBlockView, StepView, uint32_t*, size_t);

ImpurityKernel impurity_kernel(bool wide) {
  return wide ? impurity_pass_kernel<uint16_t> : impurity_pass_kernel<uint8_t>;
}

}  // namespace

CountLayout plan_impurity(const FeatureBlockView& block, const StepView& step, int device) {
  CountLayout layout;
  layout.words = 2 * static_cast<size_t>(block.max_levels) * step.s_levels + step.n_classes + 1;
  int shared_limit = 0, sms = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const size_t bytes = layout.words * sizeof(uint32_t);
  const size_t static_bytes = kThreads * sizeof(Wide) + 1024;
  const bool in_shared = bytes + static_bytes <= static_cast<size_t>(shared_limit);
  layout.shared_bytes = in_shared ? bytes : 0;
  const ImpurityKernel kernel = impurity_kernel(block.wide);
  allow_dynamic_shared(kernel);
  int per_sm = 0;
  FSGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, layout.shared_bytes));
  layout.grid = static_cast<int>(std::min<int64_t>(block.n_features, int64_t(std::max(per_sm, 1)) * sms));
  if (!in_shared) {  // tables in global memory: up to a quarter of what is free
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t affordable = static_cast<int64_t>(std::max<size_t>(free_bytes / 4, size_t(1) << 30) / bytes);
    layout.grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(layout.grid, affordable)));
  }
  return layout;
}

void launch_impurity_pass(const FeatureBlockView& block, const StepView& step, const CountLayout& layout,
                          uint32_t* global_scratch, cudaStream_t stream) {
  if (block.n_features == 0) return;
  const ImpurityKernel kernel = impurity_kernel(block.wide);
  allow_dynamic_shared(kernel);
  kernel<<<layout.grid, kThreads, layout.shared_bytes, stream>>>(block, step,
                                                                 layout.shared_bytes ? nullptr : global_scratch,
                                                                 layout.words);
  check_launch("impurity_pass_kernel");
}

}  // namespace fsgpu
