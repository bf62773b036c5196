// The GPU kNN engine on the kNN issue's shapes, without R: synthetic gene profiles shaped as
// bench/knn.R's (24,158 x 295 "base": 20 latent factors plus noise; 1,533,876 x 295
// "expanded_B": averages of pairs of base rows), exact Pearson k = 20 neighbours of every row.
// Prints, per shape, prepare_points() and gpu_knn() seconds with the engine's phases, checks
// the GPU against the CPU (every row of the small shape; a sample of rows of the large one
// against brute force), and times the candidate kernels alone on a slice of the large shape
// (the first queries against all points) with their rates against the H100's peaks.
//
// It includes cuda/knn.cu to reach the kernels, so it links the other objects of a
// tests/cpp build, not knn.cu's:
//   cmake -S tests/cpp -B /tmp/b -DFSGPU_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_BUILD_TYPE=Release
//   cmake --build /tmp/b -j16
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Isrc -Isrc/core -Xcompiler -fopenmp bench/knn_tc.cu \
//     $(find /tmp/b/CMakeFiles/test_core.dir -name '*.o' ! -name 'test_*' ! -name 'knn.cu.o') -o /tmp/knn_tc
//   /tmp/knn_tc [n_large] [kernels]     (kernels: only the candidate kernels on n_large points, for ncu)
#include "cuda/knn.cu"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include <sys/mman.h>

#include "core/parallel.h"

using namespace fsgpu;

namespace knn_tc_bench {  // named: knn.cu's unnamed namespace is in scope

constexpr int32_t kDim = 295, kFactors = 20, kK = 20;
constexpr int64_t kBase = 24158;
// Dense peaks of an H100 SXM (NVIDIA's figures, no sparsity), in TFLOP/s.
constexpr double kPeakFp16 = 989.4, kPeakTf32 = 494.7, kPeakFp32 = 66.9;

// The rate of mma.sync m16n8k16 (half inputs, float sums) alone: every warp of a full device
// runs 8 independent chains of it on registers. The tensor-core pass's own ceiling (Hopper's
// full FP16 rate needs wgmma, which the pass does not use).
__global__ void mma_peak_kernel(float* out, int iterations) {
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u}, b[2] = {threadIdx.x, 1u};
  float d[8][4] = {};
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < 8; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  float sum = 0;
  for (int c = 0; c < 8; ++c) sum += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (sum == 1.2345f) out[0] = sum;  // keeps the chains alive
}

double mma_sync_tflops(int multiprocessors) {
  DeviceBuffer<float> out(1);
  const int iterations = 4096, blocks = multiprocessors * 4, threads = 256;
  mma_peak_kernel<<<blocks, threads>>>(out.data(), 16);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  mma_peak_kernel<<<blocks, threads>>>(out.data(), iterations);
  cudaEventRecord(stop);
  FSGPU_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  return double(blocks) * threads / 32 * iterations * 8 * 16 * 8 * 16 * 2 / (ms * 1e-3) / 1e12;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Column-major base profiles: loadings x factors plus noise (sd 2), as bench/knn.R makes them.
std::vector<double> base_points() {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> f(kBase * kFactors), w(kFactors * kDim), x(kBase * kDim);
  for (double& v : f) v = normal(rng);
  for (double& v : w) v = normal(rng);
  for (int64_t i = 0; i < kBase; ++i)
    for (int32_t t = 0; t < kDim; ++t) {
      double s = 0;
      for (int32_t j = 0; j < kFactors; ++j) s += f[i * kFactors + j] * w[j * kDim + t];
      x[t * kBase + i] = s + 2 * normal(rng);
    }
  return x;
}

// n rows, each the average of two random base rows (column-major).
std::vector<double> expanded_points(const std::vector<double>& base, int64_t n, int threads) {
  std::vector<int32_t> a(n), b(n);
  std::mt19937_64 rng(2);
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<int32_t>(rng() % kBase), b[i] = static_cast<int32_t>(rng() % kBase);
  std::vector<double> x(n * kDim);
  parallel_for(kDim, threads, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t)
      for (int64_t i = 0; i < n; ++i) x[t * n + i] = (base[t * kBase + a[i]] + base[t * kBase + b[i]]) / 2;
  });
  return x;
}

bool same(const KnnResult& a, const KnnResult& b, int64_t first_row = 0) {
  for (int64_t i = 0; i < b.n_queries; ++i)
    for (int32_t c = 0; c < b.k; ++c)
      if (a.index[(first_row + i) * a.k + c] != b.index[i * b.k + c] ||
          a.distance[(first_row + i) * a.k + c] != b.distance[i * b.k + c])
        return false;
  return true;
}

void print_phases(const char* what, double seconds, const GpuKnnPhases& p) {
  std::printf("%s: %.4f s (upload %.4f, candidates %.4f, rerank %.4f, download %.4f, the rest %.4f; candidates/query "
              "%.1f, single-precision rows %lld, exact rows %lld)\n",
              what, seconds, p.upload, p.candidates, p.rerank, p.download,
              seconds - p.upload - p.candidates - p.rerank - p.download, p.candidates_per_query,
              (long long)p.retried_rows, (long long)p.exact_rows);
}

// The candidate kernels alone: `count` queries against every point, seconds of one launch.
void time_kernels(const KnnPoints& p, int64_t count, int threads) {
  const int32_t stride32 = (p.dim + kChunk - 1) / kChunk * kChunk, stride16 = (p.dim + kChunk16 - 1) / kChunk16 * kChunk16;
  const KnnFloatRows rows32 = knn_float_rows(p, nullptr, stride32, threads);
  DeviceBuffer<float> refs32;
  refs32.upload(rows32.rows.data(), rows32.rows.size());
  DeviceBuffer<__half> refs16;
  to_half_rows(refs32.data(), p.n, stride32, stride16, false, refs16, nullptr);
  const int32_t capacity = kK + kExtra16;
  DeviceBuffer<KnnCand> heaps(count * capacity);
  DeviceBuffer<int32_t> sizes(count);
  CandidateArgs ca{};
  ca.rows = QueryRows{nullptr, 0, count};
  ca.n_block = p.n;
  ca.self = true;
  ca.heaps = heaps.data();
  ca.sizes = sizes.data();
  ca.capacity = capacity;
  const unsigned blocks = static_cast<unsigned>((count + kTile - 1) / kTile);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  // Each row's candidates in (score, index) order, to compare the variants' heaps: every variant
  // must keep the same `capacity` best points of each row (their scores are the same sums).
  std::vector<KnnCand> reference_heaps;
  auto sorted_heaps = [&](int32_t cap) {
    std::vector<KnnCand> h(size_t(count) * cap);
    std::vector<int32_t> sz(count);
    FSGPU_CUDA_CHECK(cudaMemcpy(h.data(), heaps.data(), h.size() * sizeof(KnnCand), cudaMemcpyDeviceToHost));
    FSGPU_CUDA_CHECK(cudaMemcpy(sz.data(), sizes.data(), sz.size() * sizeof(int32_t), cudaMemcpyDeviceToHost));
    for (int64_t r = 0; r < count; ++r) {
      auto* row = h.data() + r * cap;
      for (int32_t e = sz[r]; e < cap; ++e) row[e] = KnnCand{INFINITY, INT_MAX};
      std::sort(row, row + cap, [](const KnnCand& x, const KnnCand& y) {
        return candidate_before(x.score, x.index, y.score, y.index);
      });
    }
    return h;
  };
  // Rep 0 warms up; rep 1 is the timing (its heaps are compared with the first variant's); rep 2
  // starts from rep 1's full heaps, so that almost no score enters one: the pass without its heap
  // work.
  auto timed = [&](const char* name, int32_t stride, double peak, auto launch, bool check) {
    for (int rep = 0; rep < 3; ++rep) {
      if (rep < 2) FSGPU_CUDA_CHECK(cudaMemset(sizes.data(), 0, count * sizeof(int32_t)));
      cudaEventRecord(start);
      launch();
      cudaEventRecord(stop);
      FSGPU_CUDA_CHECK(cudaEventSynchronize(stop));
      check_launch(name);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      if (rep == 0) continue;
      if (rep == 1 && check) {
        std::vector<KnnCand> h = sorted_heaps(capacity);
        if (reference_heaps.empty()) reference_heaps = h;
        bool equal = true;
        for (size_t e = 0; e < h.size() && equal; ++e)
          equal = h[e].score == reference_heaps[e].score && h[e].index == reference_heaps[e].index;
        std::printf("  %-34s heaps equal to the first variant's: %s\n", name, equal ? "yes" : "NO");
      }
      const double useful = 2.0 * count * p.n * p.dim / (ms * 1e-3) / 1e12;
      const double padded = 2.0 * count * p.n * stride / (ms * 1e-3) / 1e12;
      std::printf("  %-34s%s %8.3f s for %lld x %lld: %6.1f TFLOP/s of the %d dimensions (%6.1f padded to %d), "
                  "%.3f of its peak (%.0f), %.2f x the FP32 peak; whole search at this rate: %.2f s\n",
                  name, rep == 2 ? " (heaps full)" : "", ms * 1e-3, (long long)count, (long long)p.n, useful, p.dim, padded, stride, padded / peak, peak,
                  useful / kPeakFp32, ms * 1e-3 * double(p.n) / count);
    }
  };
  int shared_optin = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  // The first is the previous engine's pass (8 warps of 64 rows, 32-dimension chunks); the
  // engine's is kChunk16, kWarpRows16.
  struct Variant { const char* name; int chunk; MmaPass pass; };
  const Variant variants[] = {{"half mma, 64-row warps, 32-dim chunks", 32, mma_pass<32, 64>(stride16, shared_optin)},
                              {"half mma, 64-row warps, 64-dim chunks", 64, mma_pass<64, 64>(stride16, shared_optin)},
                              {"half mma, 32-row warps, 32-dim chunks", 32, mma_pass<32, 32>(stride16, shared_optin)},
                              {"half mma, 32-row warps, 64-dim chunks", 64, mma_pass<64, 32>(stride16, shared_optin)}};
  for (const Variant& v : variants) {
    if (stride16 % v.chunk || !v.pass.kernel) continue;
    allow_dynamic_shared(v.pass.kernel);
    ca.queries = refs16.data();
    ca.refs = refs16.data();
    ca.stride = stride16;
    std::printf("  %-34s %d threads, %zu bytes of dynamic shared memory, query rows %s\n", v.name, v.pass.threads,
                v.pass.shared, v.pass.resident ? "resident" : "streamed");
    timed(v.name, stride16, kPeakFp16, [&] { v.pass.kernel<<<blocks, v.pass.threads, v.pass.shared>>>(ca); }, true);
  }
  if (runs_wgmma(0)) {  // Hopper's pass, the engine's there (its sums in another order: heaps may differ by a rounding)
    const MmaPass w = wgmma_pass(stride16, shared_optin);
    DeviceBuffer<__half> tiled16;
    to_half_rows(refs32.data(), p.n, stride32, stride16, true, tiled16, nullptr);
    ca.queries = tiled16.data();
    ca.refs = tiled16.data();
    ca.stride = stride16;
    std::printf("  %-34s %d threads, %zu bytes of dynamic shared memory, query rows resident\n", "half wgmma, m64n128k16",
                w.threads, w.shared);
    allow_dynamic_shared(w.kernel);
    timed("half wgmma, m64n128k16", stride16, kPeakFp16, [&] { w.kernel<<<blocks, w.threads, w.shared>>>(ca); }, true);
  }
  ca.queries = refs32.data();
  ca.refs = refs32.data();
  ca.stride = stride32;
  ca.capacity = kK + kExtra32;
  timed("single precision (CUDA cores)", stride32, kPeakFp32,
        [&] { candidates_kernel<TileKind::dot><<<blocks, kThreads>>>(ca); }, false);
  std::printf("  (peaks, TFLOP/s: FP16 tensor %.1f, TF32 tensor %.1f, FP32 %.1f)\n", kPeakFp16, kPeakTf32, kPeakFp32);
}

}  // namespace knn_tc_bench

using namespace knn_tc_bench;

int main(int argc, char** argv) {
  const int64_t n_large = argc > 1 ? std::atoll(argv[1]) : 1533876;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cudaDeviceProp prop;
  FSGPU_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs; %d host threads\n", prop.name, prop.multiProcessorCount, threads);
  std::printf("mma.sync m16n8k16 f16 -> f32 alone: %.1f TFLOP/s\n", mma_sync_tflops(prop.multiProcessorCount));
  GpuOptions options;
  options.devices = {0};
  options.host_threads = threads;
  const std::vector<double> base = base_points();
  if (argc > 2 && std::string(argv[2]) == "kernels") {
    const std::vector<double> x = expanded_points(base, n_large, threads);
    const KnnPoints p = prepare_points(x.data(), n_large, kDim, KnnMetric::pearson, threads);
    std::printf("== candidate kernels on %lld x %d\n", (long long)n_large, kDim);
    time_kernels(p, std::min<int64_t>(n_large, int64_t(prop.multiProcessorCount) * kTile * 2), threads);
    return 0;
  }
  for (int64_t n : {kBase, n_large}) {
    const std::vector<double> x = n == kBase ? base : expanded_points(base, n, threads);
    std::printf("== %lld x %d, pearson, k = %d\n", (long long)n, kDim, kK);
    auto t = std::chrono::steady_clock::now();
    const KnnPoints p = prepare_points(x.data(), n, kDim, KnnMetric::pearson, threads);
    std::printf("prepare_points: %.3f s\n", seconds_since(t));
    if (n == kBase) {
      gpu_knn(p, nullptr, kK, options, nullptr, nullptr);  // warm-up
      // The fixed cost of a call: 2,000 points (read from the start of x as if it held 2,000 rows), twice.
      const KnnPoints small = prepare_points(x.data(), 2000, kDim, KnnMetric::pearson, threads);
      for (int rep = 0; rep < 2; ++rep) {
        GpuKnnPhases ph;
        t = std::chrono::steady_clock::now();
        gpu_knn(small, nullptr, kK, options, nullptr, &ph);
        print_phases("gpu_knn of 2,000 points", seconds_since(t), ph);
      }
      for (int rep = 0; rep < 2; ++rep) {
        t = std::chrono::steady_clock::now();
        prepare_points(x.data(), n, kDim, KnnMetric::pearson, threads);
        std::printf("prepare_points again: %.4f s\n", seconds_since(t));
      }
      // What of prepare_points is the first touch of its fresh rows (page faults), at these threads.
      for (int rep = 0; rep < 2; ++rep) {
        t = std::chrono::steady_clock::now();
        RowVector<double> rows(size_t(n) * p.stride);
        parallel_for(n, threads, 512, [&](int64_t begin, int64_t end, int) {
          std::fill(rows.data() + begin * p.stride, rows.data() + end * p.stride, 0.0);
        });
        std::printf("first touch of %.0f MB of rows: %.4f s\n", rows.size() * 8e-6, seconds_since(t));
      }
      // What a search's device buffers cost to allocate and free (cudaMalloc, cudaFree) at this size.
      for (int rep = 0; rep < 2; ++rep) {
        t = std::chrono::steady_clock::now();
        {
          const size_t sizes[] = {size_t(n) * p.stride * 8, size_t(n) * 320 * 4, size_t(n) * 320 * 2,
                                  size_t(n) * 116 * 8, size_t(n) * 8, size_t(n) * 8, size_t(n) * 4,
                                  size_t(n) * kK * 4, size_t(n) * kK * 8, size_t(n) * 4, 4, size_t(n) * 4};
          std::vector<DeviceBuffer<unsigned char>> buffers;
          for (size_t b : sizes) buffers.emplace_back(b);
        }
        std::printf("cudaMalloc and cudaFree of the search's 12 device buffers: %.4f s\n", seconds_since(t));
      }
      for (int rep = 0; rep < 2; ++rep) {  // the same in 2 MB pages, where the kernel gives them (madvise)
        t = std::chrono::steady_clock::now();
        const size_t huge = size_t(2) << 20, bytes = (size_t(n) * p.stride * 8 + huge - 1) / huge * huge;
        double* rows = static_cast<double*>(std::aligned_alloc(huge, bytes));
        madvise(rows, bytes, MADV_HUGEPAGE);
        parallel_for(n, threads, 512, [&](int64_t begin, int64_t end, int) {
          std::fill(rows + begin * p.stride, rows + end * p.stride, 0.0);
        });
        std::printf("first touch of the same in 2 MB pages (madvise): %.4f s\n", seconds_since(t));
        std::free(rows);
      }
    }
    const int reps = n == kBase ? 3 : 1;
    KnnResult gpu;
    for (int rep = 0; rep < reps; ++rep) {
      GpuKnnPhases phases;
      t = std::chrono::steady_clock::now();
      gpu = gpu_knn(p, nullptr, kK, options, nullptr, &phases);
      print_phases("gpu_knn", seconds_since(t), phases);
    }
    if (n == kBase) {
      t = std::chrono::steady_clock::now();
      const KnnResult cpu = cpu_knn(p, nullptr, kK, threads, nullptr);
      std::printf("cpu_knn (%d threads): %.3f s; GPU identical to CPU: %s\n", threads, seconds_since(t),
                  same(gpu, cpu) ? "yes" : "NO");
      time_kernels(p, n, threads);
      continue;
    }
    // Brute force for 64 rows spread over the points: every distance by knn_key().
    int64_t checked = 0, equal = 0;
    std::vector<std::vector<std::pair<double, int32_t>>> all(64);
    parallel_for(64, threads, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t s = begin; s < end; ++s) {
        const int64_t i = s * (n / 64);
        auto& a = all[s];
        for (int64_t j = 0; j < n; ++j)
          if (j != i)
            a.emplace_back(knn_key(p.metric, p.rows.data() + i * p.stride, p.rows.data() + j * p.stride, p.stride, 1, 1),
                           int32_t(j));
        std::partial_sort(a.begin(), a.begin() + kK, a.end());
      }
    });
    for (int64_t s = 0; s < 64; ++s) {
      const int64_t i = s * (n / 64);
      bool ok = true;
      for (int32_t c = 0; c < kK; ++c)
        ok = ok && gpu.index[i * kK + c] == all[s][c].second && gpu.distance[i * kK + c] == all[s][c].first;
      ++checked;
      equal += ok;
    }
    std::printf("rows checked against brute force: %lld, identical: %lld\n", (long long)checked, (long long)equal);
    time_kernels(p, std::min<int64_t>(n, int64_t(prop.multiProcessorCount) * kTile * 2), threads);
  }
  return 0;
}
