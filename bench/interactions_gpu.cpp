// The GPU interaction search alone (core API, no R): tuples per second for 1- to 5-way searches
// of random genotypes (3 levels, binary class, 1,024 objects by default), the figures
// bench/results/interactions-gpu-*.md records. Built from the C++ test build's objects:
//   cmake -S tests/cpp -B /tmp/b -DFSGPU_WITH_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/b -j
//   nvcc -O2 -std=c++17 -Isrc -Isrc/core -I/tmp/b bench/interactions_gpu.cpp
//     $(find /tmp/b/CMakeFiles/test_core.dir/__/__/src -name '*.o') -Xcompiler -fopenmp -o /tmp/ibench
//   /tmp/ibench [objects [dimensions]]
// Prints a CSV line per search: dimensions, variables, tuples, the bitmaps' build time on the
// host, the GPU search's time (best of two runs; upload and gains included) and tuples/s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/gpu_backend.h"
#include "core/interactions.h"

using namespace fsgpu;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double choose(double n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int32_t n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int32_t only = argc > 2 ? std::atoi(argv[2]) : 0;  // one dimension (for a profiler), or all
  const GpuStatus gpu = gpu_status();
  if (gpu.devices.empty()) {
    std::printf("no GPU: %s\n", gpu.problem.c_str());
    return 1;
  }
  std::printf("# %s, %d objects, 3 levels, 2 classes, no contrast variables\n", gpu.devices[0].name.c_str(), n);
  std::printf("dimensions,variables,tuples,build_s,search_s,tuples_per_s\n");
  std::vector<int32_t> labels(n);
  std::mt19937 g(1);
  for (int32_t s = 0; s < n; ++s) labels[s] = int32_t(g() % 2);
  const ClassLayout layout = ClassLayout::from_labels(labels.data(), n, 2);
  GpuOptions options;
  options.devices = {gpu.devices[0].id};
  options.host_threads = 16;
  const struct {
    int32_t k;
    int64_t vars;
  } shapes[] = {{1, 1000000}, {2, 20480}, {3, 2000}, {4, 300}, {5, 120}};
  for (const auto& sh : shapes) {
    if (only && sh.k != only) continue;
    auto t0 = std::chrono::steady_clock::now();
    // Genotype-like codes from a hash of (variable, object): reproducible and cheap.
    const InteractionBits bits = build_interaction_bits(
        layout, sh.vars, 3,
        [&](int64_t v, int8_t* codes) {
          uint64_t x = uint64_t(v) * 0x9E3779B97F4A7C15ull + 12345;
          for (int32_t s = 0; s < n; ++s) {
            x ^= x >> 29;
            x *= 0xBF58476D1CE4E5B9ull;
            x ^= x >> 32;
            codes[s] = int8_t(x % 3);
          }
        },
        16);
    const GainTables tables(bits, 0.25);
    const double build = seconds_since(t0);
    InteractionTask task;
    task.dimensions = sh.k;
    task.n_real = sh.vars;
    double best = INFINITY;
    for (int run = 0; run < 2; ++run) {
      t0 = std::chrono::steady_clock::now();
      const InteractionBest result = gpu_interactions(bits, tables, task, options, nullptr);
      best = std::min(best, seconds_since(t0));
    }
    const double tuples = choose(double(sh.vars), sh.k);
    std::printf("%d,%lld,%.4g,%.3f,%.4f,%.4g\n", sh.k, (long long)sh.vars, tuples, build, best, tuples / best);
    std::fflush(stdout);
  }
  return 0;
}
