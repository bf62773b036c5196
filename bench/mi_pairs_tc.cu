// The GPU pair search's engine time (no R) with the tensor-core and the popcount kernels, on
// synthetic codes: every pair, top k by I(Y; Xi,Xj). Checks that both kernels (and, on a slice
// of the features, the CPU) return the same pairs, bit for bit. Build from the repository root
// against the objects of the CUDA test build:
//   cmake -S tests/cpp -B /tmp/b -DFSGPU_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
//     -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/b -j16 --target test_core
//   ar rcs /tmp/libfsgpu.a $(find /tmp/b/CMakeFiles/test_core.dir -name '*.o' ! -name 'test_*')
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp -Isrc -Isrc/core \
//     bench/mi_pairs_tc.cu /tmp/libfsgpu.a -lgomp -o /tmp/mi_pairs_tc
// Run: mi_pairs_tc FEATURES SAMPLES LEVELS CLASSES TOP KERNELS [CPU_FEATURES]
//   KERNELS: tensor, popcount or both; CPU_FEATURES: features of the CPU check (0: none).
//   The issue's shape: mi_pairs_tc 100000 1000 10 3 1000 tensor
// Prints one CSV line per kernel: shape, seconds of the whole search (bitmaps built and
// uploaded included), seconds of its set-up alone (a search of one row), pairs per second of
// the rest, mma per pair and the tensor-core bound at 0.57 mma per SM per clock (an H100's,
// measured by bench/b1_mma_peak.cu).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "core/pairs.h"

using namespace fsgpu;

namespace {

double seconds_of(const std::function<void()>& run) {
  const auto t0 = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<PairRecord> search(PairData& data, const PairTask& task, const PlogpTable& plogp, int64_t top,
                               GpuPairKernel kernel, double* seconds) {
  PairCollector collector(top, false, 0);
  GpuOptions options;
  options.devices = {0};
  data.gpu_kernel = kernel;
  const double s = seconds_of([&] { gpu_pair_search(data, task, plogp, collector, options, nullptr); });
  if (seconds) *seconds = s;
  return collector.finish();
}

bool same(const std::vector<PairRecord>& a, const std::vector<PairRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].i != b[k].i || a[k].j != b[k].j || a[k].key != b[k].key || a[k].joint_class != b[k].joint_class ||
        a[k].joint != b[k].joint || a[k].cells != b[k].cells)
      return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: mi_pairs_tc FEATURES SAMPLES LEVELS CLASSES TOP tensor|popcount|both [CPU_FEATURES]\n");
    return 2;
  }
  const int64_t p = std::atoll(argv[1]);
  const int32_t n = std::atoi(argv[2]), levels = std::atoi(argv[3]), classes = std::atoi(argv[4]);
  const int64_t top = std::atoll(argv[5]);
  const std::string kernels = argv[6];
  const int64_t cpu_features = argc > 7 ? std::atoll(argv[7]) : 0;
  const int threads = 16;

  // Codes uniform over the levels; the class follows features 1 and 2 (a planted pair).
  std::mt19937 g(7);
  std::vector<int32_t> labels(n);
  std::vector<std::vector<int32_t>> columns(p, std::vector<int32_t>(n));
  for (int64_t f = 0; f < p; ++f)
    for (int32_t s = 0; s < n; ++s) columns[f][s] = int32_t(g() % levels);
  for (int32_t s = 0; s < n; ++s)
    labels[s] = s < classes ? s : g() % 3 == 0 ? int32_t(g() % classes) : (columns[1][s] + columns[2][s]) % classes;
  const ClassLayout layout = ClassLayout::from_labels(labels.data(), n, classes);
  auto encode = [&](int64_t features) {
    std::vector<ColumnSource> sources(features);
    for (int64_t f = 0; f < features; ++f) sources[f].categorical = columns[f].data();
    return encode_dense(sources, layout, 2, threads);
  };
  const CodeMatrix x = encode(p);
  const PlogpTable plogp(n);
  PairData data = PairData::of(x, layout, plogp, PairMeasure::joint, threads);
  const PairTask all = PairTask::all(p), one_row = PairTask::with({0}, p);

  cudaDeviceProp dev;
  if (cudaGetDeviceProperties(&dev, 0) != cudaSuccess) {
    std::fprintf(stderr, "no GPU\n");
    return 1;
  }
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  const double mma_per_clock = 0.57;  // m16n8k256 per SM per clock, measured by bench/b1_mma_peak.cu on an H100
  int64_t chunks = 0;
  for (int32_t c = 0; c < classes; ++c)
    chunks += (layout.class_start[c + 1] - layout.class_start[c] + 255) / 256;
  const int64_t level_pairs = (x.max_levels() + 1) / 2;
  // Per warp, level pair pair and chunk: 4 mma for 8 x 16 pairs.
  const double mma_per_pair = double(level_pairs * level_pairs * chunks) * 4 / 128;
  const double pairs = double(all.n_pairs());
  const double tensor_bound = pairs * mma_per_pair / (dev.multiProcessorCount * mma_per_clock * clock_khz * 1e3);

  std::printf("device,features,samples,levels,classes,top,kernel,pairs,search_s,setup_s,pairs_per_s,"
              "mma_per_pair,tensor_bound_s,of_tensor_peak,identical\n");
  std::vector<PairRecord> reference;
  bool have_reference = false;
  {
    double warm = 0;  // the CUDA context, outside every timing
    search(data, one_row, plogp, 10, GpuPairKernel::automatic, &warm);
  }
  for (GpuPairKernel kernel : {GpuPairKernel::tensor, GpuPairKernel::popcount}) {
    const std::string name = kernel == GpuPairKernel::tensor ? "tensor" : "popcount";
    if (kernels != "both" && kernels != name) continue;
    double setup = 0, total = 0;
    search(data, one_row, plogp, top, kernel, &setup);
    const std::vector<PairRecord> best = search(data, all, plogp, top, kernel, &total);
    const bool identical = !have_reference || same(best, reference);
    if (!have_reference) reference = best, have_reference = true;
    const double rate = pairs / std::max(total - setup, 1e-9);
    std::printf("%s,%lld,%d,%d,%d,%lld,%s,%.0f,%.4f,%.4f,%.4g,%.3f,%.4f,%.4f,%s\n", dev.name, (long long)p, n,
                int(x.max_levels()), classes, (long long)top, name.c_str(), pairs, total, setup, rate, mma_per_pair,
                tensor_bound, tensor_bound / std::max(total - setup, 1e-9), identical ? "yes" : "NO");
    std::fflush(stdout);
  }
  if (cpu_features > 0) {
    // The first cpu_features features, CPU against the tensor kernel.
    const CodeMatrix xs = encode(std::min(cpu_features, p));
    PairData small = PairData::of(xs, layout, plogp, PairMeasure::joint, threads);
    const PairTask task = PairTask::all(xs.n_features);
    PairCollector collector(top, false, 0);
    double cpu_s = seconds_of([&] { cpu_pair_search(small, task, plogp, collector, threads, nullptr); });
    const std::vector<PairRecord> cpu_best = collector.finish();
    double gpu_s = 0;
    const bool equal = same(cpu_best, search(small, task, plogp, top, GpuPairKernel::tensor, &gpu_s));
    std::printf("cpu check: %lld features, %lld pairs, cpu %.3f s (%d threads), tensor %.3f s, top %lld %s\n",
                (long long)xs.n_features, (long long)task.n_pairs(), cpu_s, threads, gpu_s, (long long)top,
                equal ? "identical" : "DIFFERENT");
  }
  return 0;
}
