// The exact range search on GPUs (knn.h's cpu_knn_range, with the same result):
//
//   1. screen_kernel: a block takes kScreenQueries queries (staged in shared memory, a chunk of
//      dimensions at a time) and 256 reference rows, one per thread, read from a transposed copy
//      so that a warp's loads are contiguous; every pair is scored in single precision as the
//      kNN candidate pass scores it, and a pair whose score is at most the query's screen (the
//      threshold's key plus the pass's error bound, knn_score_bounds() / 2) is appended to a
//      list of candidates. Every pair left out is provably beyond the threshold.
//   2. decide_kernel, a thread per candidate: knn_key() in double precision, the operations of
//      the CPU, decides; the distance is knn_key_distance() of it.
// The host puts each query's neighbours in index order. When the list overflows, the batch is
// screened again with a list of the size counted. Reference points that do not fit the device
// go through in blocks, and an index's copy kept on the device (GpuKnnKept) is used as it is;
// several GPUs split the queries.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu_backend.h"
#include "core/knn_metric.h"
#include "cuda_check.cuh"
#include "device_threads.cuh"
#include "knn_kept.cuh"

namespace fsgpu {

namespace {

constexpr int kScreenThreads = 256;  // reference rows of a block
constexpr int kScreenQueries = 8;    // queries of a block
constexpr int kScreenChunk = 128;    // dimensions staged at a time
constexpr int32_t kRangeStride = kKnnStride32;  // the float rows' padding

struct RangePair {
  int32_t query;  // local to the batch
  int32_t ref;    // local to the reference block
};

// Scores queries q0.. (local ids, `count` in the batch) against reference rows r of the block,
// single precision as the kNN passes do, and appends the pairs within their query's screen.
__global__ void __launch_bounds__(kScreenThreads)
screen_kernel(KnnMetric m, const float* queries32, int64_t count, const float* refs_t, int64_t n_block, int32_t stride32,
              const double* screen, RangePair* pairs, int64_t capacity, unsigned long long* n_pairs) {
  __shared__ float qs[kScreenQueries][kScreenChunk];
  const int64_t r = blockIdx.x * int64_t(kScreenThreads) + threadIdx.x;
  const int64_t q0 = int64_t(blockIdx.y) * kScreenQueries;
  float acc[kScreenQueries];
#pragma unroll
  for (int g = 0; g < kScreenQueries; ++g) acc[g] = 0;
  for (int32_t t0 = 0; t0 < stride32; t0 += kScreenChunk) {
    const int32_t width = min(kScreenChunk, stride32 - t0);
    __syncthreads();
    for (int e = threadIdx.x; e < kScreenQueries * kScreenChunk; e += kScreenThreads) {
      const int g = e / kScreenChunk, t = e % kScreenChunk;
      qs[g][t] = q0 + g < count && t < width ? queries32[(q0 + g) * stride32 + t0 + t] : 0.0f;
    }
    __syncthreads();
    if (r < n_block) {
      for (int32_t t = 0; t < width; ++t) {
        const float b = refs_t[int64_t(t0 + t) * n_block + r];
#pragma unroll
        for (int g = 0; g < kScreenQueries; ++g) {
          const float a = qs[g][t];
          if (is_correlation(m)) {
            acc[g] = fmaf(a, b, acc[g]);
          } else {
            const float d = a - b;
            acc[g] = m == KnnMetric::euclidean ? fmaf(d, d, acc[g]) : acc[g] + fabsf(d);
          }
        }
      }
    }
  }
  if (r >= n_block) return;
#pragma unroll
  for (int g = 0; g < kScreenQueries; ++g) {
    if (q0 + g >= count) break;
    const float score = is_correlation(m) ? 1.0f - acc[g] : acc[g];
    if (double(score) > screen[q0 + g]) continue;
    const unsigned long long at = atomicAdd(n_pairs, 1ull);
    if (at < static_cast<unsigned long long>(capacity)) pairs[at] = RangePair{static_cast<int32_t>(q0 + g), static_cast<int32_t>(r)};
  }
}

// knn_key() of each screened pair; key[e] is its distance when within the limit, NaN otherwise.
__global__ void decide_kernel(KnnMetric m, const RangePair* pairs, int64_t n_pairs, const double* queries64,
                              const double* query_norms, const double* refs64, const double* ref_norms, int32_t stride,
                              const double* key_limit, double* distance) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n_pairs) return;
  const RangePair p = pairs[e];
  const double key = knn_key(m, queries64 + int64_t(p.query) * stride, refs64 + int64_t(p.ref) * stride, stride,
                             query_norms ? query_norms[p.query] : 1.0, ref_norms ? ref_norms[p.ref] : 1.0);
  distance[e] = key <= key_limit[p.query] ? knn_key_distance(m, key) : NAN;
}

}  // namespace

KnnRangeResult gpu_knn_range(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds,
                             const GpuOptions& options, const Checkpoint& between_batches, const GpuKnnKept* kept) {
  if (options.devices.empty()) throw std::runtime_error("no GPU device given");
  check_range_arguments(reference, queries, thresholds);
  const KnnPoints& q = queries ? *queries : reference;
  if (reference.n > INT_MAX || q.n > INT_MAX) throw std::runtime_error("more than 2^31 points");
  const KnnMetric m = reference.metric;
  const int32_t stride = reference.stride;
  const int32_t stride32 = (reference.dim + kRangeStride - 1) / kRangeStride * kRangeStride;
  const std::vector<double> centre = knn_centre(reference);
  const KnnFloatRows refs32 = knn_float_rows(reference, centre.empty() ? nullptr : centre.data(), stride32,
                                             options.host_threads);
  const KnnFloatRows own32 =
      queries ? knn_float_rows(q, centre.empty() ? nullptr : centre.data(), stride32, options.host_threads) : KnnFloatRows();
  const KnnFloatRows& q32 = queries ? own32 : refs32;
  const std::vector<double> bound = knn_score_bounds(m, KnnPrecision::single, stride32, q32, refs32);
  std::vector<double> key_limit(q.n), screen(q.n);
  for (int64_t i = 0; i < q.n; ++i) {
    key_limit[i] = knn_threshold_key(m, thresholds[i]);
    screen[i] = key_limit[i] + bound[i] / 2;
  }

  std::vector<std::vector<std::pair<int32_t, double>>> found(q.n);
  const size_t n_devices =
      std::min<size_t>(options.devices.size(), static_cast<size_t>((q.n + kScreenQueries - 1) / kScreenQueries));
  const int64_t per_device = (q.n + int64_t(std::max<size_t>(n_devices, 1)) - 1) / int64_t(std::max<size_t>(n_devices, 1));
  std::atomic<bool> cancel(false);
  std::atomic<int64_t> rows_done(0);
  auto work = [&](size_t d) {
    const int device = options.devices[d];
    ScopedDevice on(device);
    Stream stream;
    cudaStream_t s = stream.get();
    const int64_t first = int64_t(d) * per_device, last = std::min(q.n, first + per_device);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t budget = options.memory_limit > 0 ? options.memory_limit : static_cast<int64_t>(free_bytes * 0.8);
    // A query batch: about 2^28 pairs, whose candidate list starts at up to 2^22 entries.
    const int64_t batch = std::clamp<int64_t>((int64_t(1) << 28) / std::max<int64_t>(reference.n, 1) /
                                                  kScreenQueries * kScreenQueries,
                                              kScreenQueries, int64_t(65535) * kScreenQueries);  // grid.y
    const int64_t batch_rows = std::min(batch, last - first);
    const int64_t query_bytes = batch_rows * (int64_t(stride32) * 4 + int64_t(stride) * 8 + 24);
    const int64_t pair_bytes = sizeof(RangePair) + sizeof(double);
    // The candidate list starts at a quarter of the budget at most (it grows when it overflows),
    // and the reference points take the rest, in blocks of at least a block's rows.
    int64_t capacity = std::max<int64_t>(
        1024, std::min({batch_rows * reference.n, int64_t(1) << 22, budget / 4 / pair_bytes}));
    const int64_t point_bytes = int64_t(stride32) * 4 + int64_t(stride) * 8 + 8;
    const int64_t room = budget - query_bytes - capacity * pair_bytes;
    // The index's copy on this device, when it has one, is the one block.
    const GpuKnnKept::OnDevice* on_device = kept ? kept->on(device, reference) : nullptr;
    const int64_t block =
        on_device ? reference.n : std::min<int64_t>(reference.n, std::max<int64_t>(kScreenThreads, room / point_bytes));

    DeviceBuffer<float> refs_t, queries32;
    DeviceBuffer<double> refs64, ref_norms, queries64, query_norms, screen_d, limit_d, distance;
    DeviceBuffer<RangePair> pairs;
    DeviceBuffer<unsigned long long> n_pairs(1);
    std::vector<float> transposed;
    for (int64_t r0 = 0; r0 < reference.n && !cancel; r0 += block) {
      const int64_t nr = std::min(block, reference.n - r0);
      const float* refs_t_d = on_device ? on_device->rows32_t.data() : nullptr;
      const double* refs64_d = on_device ? on_device->rows64.data() : nullptr;
      const double* ref_norms_d = on_device ? on_device->norms.data() : nullptr;
      if (!on_device) {
        transposed.assign(size_t(nr) * stride32, 0.0f);
        for (int64_t r = 0; r < nr; ++r)
          for (int32_t t = 0; t < stride32; ++t) transposed[size_t(t) * nr + r] = refs32.rows[(r0 + r) * stride32 + t];
        refs_t.upload(transposed.data(), transposed.size(), s);
        refs64.upload(reference.rows.data() + r0 * stride, nr * stride, s);
        if (!reference.norms.empty()) ref_norms.upload(reference.norms.data() + r0, nr, s);
        refs_t_d = refs_t.data();
        refs64_d = refs64.data();
        ref_norms_d = ref_norms.data();
      }
      for (int64_t b0 = first; b0 < last && !cancel; b0 += batch) {
        const int64_t nb = std::min(last, b0 + batch) - b0;
        queries32.upload(q32.rows.data() + b0 * stride32, nb * stride32, s);
        queries64.upload(q.rows.data() + b0 * stride, nb * stride, s);
        if (!q.norms.empty()) query_norms.upload(q.norms.data() + b0, nb, s);
        screen_d.upload(screen.data() + b0, nb, s);
        limit_d.upload(key_limit.data() + b0, nb, s);
        unsigned long long counted = 0;
        for (;;) {
          pairs.reserve(capacity);
          FSGPU_CUDA_CHECK(cudaMemsetAsync(n_pairs.data(), 0, sizeof(unsigned long long), s));
          const dim3 grid(static_cast<unsigned>((nr + kScreenThreads - 1) / kScreenThreads),
                          static_cast<unsigned>((nb + kScreenQueries - 1) / kScreenQueries));
          screen_kernel<<<grid, kScreenThreads, 0, s>>>(m, queries32.data(), nb, refs_t_d, nr, stride32,
                                                        screen_d.data(), pairs.data(), capacity, n_pairs.data());
          check_launch("screen_kernel");
          FSGPU_CUDA_CHECK(cudaMemcpyAsync(&counted, n_pairs.data(), sizeof counted, cudaMemcpyDeviceToHost, s));
          FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
          if (counted <= static_cast<unsigned long long>(capacity)) break;
          capacity = static_cast<int64_t>(counted);  // the list overflowed: again with room for all
        }
        const int64_t n = static_cast<int64_t>(counted);
        if (n == 0) continue;
        distance.reserve(n);
        decide_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(
            m, pairs.data(), n, queries64.data(), q.norms.empty() ? nullptr : query_norms.data(), refs64_d,
            reference.norms.empty() ? nullptr : ref_norms_d, stride, limit_d.data(), distance.data());
        check_launch("decide_kernel");
        std::vector<RangePair> host_pairs(n);
        std::vector<double> host_distance(n);
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(host_pairs.data(), pairs.data(), n * sizeof(RangePair), cudaMemcpyDeviceToHost, s));
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(host_distance.data(), distance.data(), n * sizeof(double),
                                         cudaMemcpyDeviceToHost, s));
        FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
        for (int64_t e = 0; e < n; ++e)
          if (!std::isnan(host_distance[e]))
            found[b0 + host_pairs[e].query].emplace_back(static_cast<int32_t>(r0 + host_pairs[e].ref), host_distance[e]);
        if (r0 + nr >= reference.n) rows_done += nb;
      }
    }
  };
  run_on_devices(
      n_devices, work, [&] { if (between_batches) between_batches(static_cast<double>(rows_done) / q.n); }, cancel);
  // The screen appends in any order; each query's neighbours in index order (indices are distinct).
  for (auto& f : found) std::sort(f.begin(), f.end());
  KnnRangeResult out;
  out.assemble(found);
  return out;
}

}  // namespace fsgpu
