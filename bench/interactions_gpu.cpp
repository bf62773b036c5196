// The GPU interaction search alone (core API, no R): tuples per second for 1- to 5-way searches
// of random genotypes (3 levels, binary class, 1,024 objects by default), the figures
// bench/results/interactions-gpu-*.md records. Built from the C++ test build's objects:
//   cmake -S tests/cpp -B /tmp/b -DFSGPU_WITH_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/b -j
//   nvcc -O2 -std=c++17 -Isrc -Isrc/core -I/tmp/b bench/interactions_gpu.cpp
//     $(find /tmp/b/CMakeFiles/test_core.dir -name '*.o' ! -name 'test_*') -Xcompiler -fopenmp -o /tmp/ibench
//   /tmp/ibench [objects [dimensions [variables]]]
//   /tmp/ibench pairs [objects]
//   /tmp/ibench tuples [objects [dimensions]]
// Prints a CSV line per search: dimensions, variables, tuples, the bitmaps' build time on the
// host, the GPU search's time (best of two runs; upload and gains included) and tuples/s.
// `pairs`: issue 18's 1-way (1,000,000 variables) and 2-way (204,800) shapes, each checked
// bitwise against the CPU engine (the 1-way search whole, the 2-way one on the tile of the pairs
// whose first variable is below 48), and the bitmaps' build from an integer matrix (4 bytes a
// value, as R holds it) against the host's read bandwidth over the same matrix.
// `tuples`: issue 18's 3-, 4- and 5-way shapes (2,000, 300 and 120 variables; and 5-way of 60),
// each also checked bitwise against the CPU engine on a smaller search of the same codes (150, 60
// and 30 real variables and 6 contrast ones), best gains and tuples.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <random>
#include <vector>

#include <atomic>
#include <cstring>

#include "core/gpu_backend.h"
#include "core/interaction_pvalues.h"
#include "core/interactions.h"
#include "core/parallel.h"

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

// Genotype-like code of (variable, object) from a hash: reproducible and cheap.
int32_t hashed_code(int64_t v, int32_t s) {
  uint64_t x = (uint64_t(v) << 20 | uint64_t(s)) * 0x9E3779B97F4A7C15ull + 12345;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return int32_t(x % 3);
}

bool same_best(const InteractionBest& a, const InteractionBest& b) {
  return a.gain.size() == b.gain.size() &&
         std::memcmp(a.gain.data(), b.gain.data(), a.gain.size() * sizeof(double)) == 0 && a.tuple == b.tuple;
}

// Issue 18's 1- and 2-way shapes; see the header.
int pairs_bench(const ClassLayout& layout, const GpuOptions& options, int32_t n) {
  const int threads = 16;
  std::printf("what,variables,tuples,seconds,rate,check\n");
  {
    // An R integer matrix of 1,000,000 variables: 4 bytes a value, objects in columns' order.
    const int64_t p = 1000000;
    std::vector<int32_t> x(size_t(p) * n);
    parallel_for(p, threads, 256, [&](int64_t b, int64_t e, int) {
      for (int64_t v = b; v < e; ++v)
        for (int32_t s = 0; s < n; ++s) x[v * n + s] = hashed_code(v, s);
    });
    const double gb = double(x.size()) * 4 / 1e9;
    double read = INFINITY;
    for (int run = 0; run < 3; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      std::atomic<int64_t> total{0};
      parallel_for(p, threads, 256, [&](int64_t b, int64_t e, int) {
        int64_t sum = 0;
        for (const int32_t* it = x.data() + b * n; it != x.data() + e * n; ++it) sum += *it;
        total += sum;
      });
      read = std::min(read, seconds_since(t0));
      if (total.load() < 0) return 1;
    }
    std::printf("host_read_GBps,%lld,0,%.4f,%.4g,\n", (long long)p, read, gb / read);
    double build_s = INFINITY;
    InteractionBits bits;
    for (int run = 0; run < 2; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      bits = build_interaction_bits(
          layout, p, 3,
          [&](int64_t v, int8_t* codes) {
            const int32_t* col = x.data() + v * n;
            for (int32_t s = 0; s < n; ++s) codes[s] = int8_t(col[s]);
          },
          threads);
      build_s = std::min(build_s, seconds_since(t0));
    }
    std::printf("bitmaps_GBps,%lld,0,%.4f,%.4g,%.3f of host read\n", (long long)p, build_s, gb / build_s,
                read / build_s);
    const GainTables tables(bits, 0.25);
    InteractionTask task;
    task.dimensions = 1;
    task.n_real = p;
    double best = INFINITY;
    InteractionBest gpu(0, 1, false);
    for (int run = 0; run < 2; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      gpu = gpu_interactions(bits, tables, task, options, nullptr);
      best = std::min(best, seconds_since(t0));
    }
    auto t0 = std::chrono::steady_clock::now();
    const InteractionBest cpu = cpu_interactions(bits, tables, task, threads, nullptr);
    const double cpu_s = seconds_since(t0);
    std::printf("gpu_1way,%lld,%lld,%.4f,%.4g,%s\n", (long long)p, (long long)p, best, p / best,
                same_best(gpu, cpu) ? "equal to cpu" : "DIFFERS from cpu");
    std::printf("cpu_1way,%lld,%lld,%.4f,%.4g,\n", (long long)p, (long long)p, cpu_s, p / cpu_s);
  }
  // The host's part of the results (R's pchisq() aside): MDFS's p-value fit over every
  // variable (2-way searches without contrast variables) on 1 and 16 threads, Holm's adjustment.
  for (const int64_t p : {int64_t(204800), int64_t(1000000)}) {
    std::vector<double> tail(static_cast<size_t>(p));
    std::mt19937_64 draw(7);
    for (double& v : tail) v = std::uniform_real_distribution<double>(0, 1)(draw);
    std::sort(tail.begin(), tail.end(), std::greater<double>());
    double alpha[2] = {0, 0};
    for (int t = 0; t < 2; ++t) {
      const auto t0 = std::chrono::steady_clock::now();
      alpha[t] = mdfs_fit_alpha(tail.data(), p, PValueFit::exp, false, 8, t ? threads : 1);
      std::printf("pvalue_fit_%d_threads,%lld,0,%.4f,,alpha %.17g\n", t ? threads : 1, (long long)p,
                  seconds_since(t0), alpha[t]);
    }
    std::vector<double> adjusted(static_cast<size_t>(p));
    const auto t0 = std::chrono::steady_clock::now();
    holm_adjust(tail.data(), p, adjusted.data());
    std::printf("holm,%lld,0,%.4f,,%s\n", (long long)p, seconds_since(t0),
                alpha[0] == alpha[1] ? "fit equal on 1 and 16 threads" : "fit DIFFERS between thread counts");
  }
  {
    const int64_t p = 204800;
    const InteractionBits bits = build_interaction_bits(
        layout, p, 3,
        [&](int64_t v, int8_t* codes) {
          for (int32_t s = 0; s < n; ++s) codes[s] = int8_t(hashed_code(v, s));
        },
        threads);
    const GainTables tables(bits, 0.25);
    InteractionTask task;
    task.dimensions = 2;
    task.n_real = p;
    task.with_tuples = true;
    double best = INFINITY;
    for (int run = 0; run < 2; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      const InteractionBest all = gpu_interactions(bits, tables, task, options, nullptr);
      best = std::min(best, seconds_since(t0));
    }
    const double pairs = choose(double(p), 2);
    task.first_end = 48;
    const InteractionBest gpu = gpu_interactions(bits, tables, task, options, nullptr);
    const InteractionBest cpu = cpu_interactions(bits, tables, task, threads, nullptr);
    std::printf("gpu_2way,%lld,%.4g,%.4f,%.4g,tile first < 48 %s\n", (long long)p, pairs, best, pairs / best,
                same_best(gpu, cpu) ? "equal to cpu" : "DIFFERS from cpu");
  }
  return 0;
}

}  // namespace

// Issue 18's 3- to 5-way shapes; see the header.
int tuples_bench(const ClassLayout& layout, const GpuOptions& options, int32_t n, int32_t only) {
  std::printf("dimensions,variables,tuples,search_s,tuples_per_s,check_vars,equals_cpu\n");
  const struct {
    int32_t k;
    int64_t vars, check_vars;
  } shapes[] = {{3, 2000, 150}, {4, 300, 60}, {5, 60, 0}, {5, 120, 30}};
  int failed = 0;
  auto bits_of = [&](int64_t vars) {
    return build_interaction_bits(
        layout, vars, 3, [&](int64_t v, int8_t* codes) {
          for (int32_t s = 0; s < n; ++s) codes[s] = int8_t(hashed_code(v, s));
        },
        16);
  };
  for (const auto& sh : shapes) {
    if (only && sh.k != only) continue;
    const InteractionBits bits = bits_of(sh.vars);
    const GainTables tables(bits, 0.25);
    InteractionTask task;
    task.dimensions = sh.k;
    task.n_real = sh.vars;
    double best = INFINITY;
    for (int run = 0; run < 3; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      gpu_interactions(bits, tables, task, options, nullptr);
      best = std::min(best, seconds_since(t0));
    }
    bool same = true;
    if (sh.check_vars > 0) {
      // The CPU's check: a smaller search of the same codes, check_vars real and 6 contrast variables.
      const InteractionBits small = bits_of(sh.check_vars + 6);
      const GainTables small_tables(small, 0.25);
      InteractionTask check = task;
      check.n_real = sh.check_vars;
      check.with_tuples = true;
      same = same_best(cpu_interactions(small, small_tables, check, 16, nullptr),
                       gpu_interactions(small, small_tables, check, options, nullptr));
      failed += !same;
    }
    const double tuples = choose(double(sh.vars), sh.k);
    std::printf("%d,%lld,%.4g,%.4f,%.4g,%lld,%s\n", sh.k, (long long)sh.vars, tuples, best, tuples / best,
                (long long)sh.check_vars, sh.check_vars > 0 ? (same ? "yes" : "NO") : "-");
    std::fflush(stdout);
  }
  return failed ? 1 : 0;
}

int main(int argc, char** argv) {
  const bool pairs = argc > 1 && std::strcmp(argv[1], "pairs") == 0;
  const bool tuples = argc > 1 && std::strcmp(argv[1], "tuples") == 0;
  if (pairs || tuples) {
    --argc;
    ++argv;
  }
  const int32_t n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int32_t only = argc > 2 ? std::atoi(argv[2]) : 0;  // one dimension (for a profiler), or all
  const int64_t only_vars = argc > 3 ? std::atoll(argv[3]) : 0;  // and its variables, or the default
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
  if (pairs) return pairs_bench(layout, options, n);
  if (tuples) return tuples_bench(layout, options, n, only);
  const struct {
    int32_t k;
    int64_t vars;
  } shapes[] = {{1, 1000000}, {2, 20480}, {3, 2000}, {4, 300}, {5, 120}};
  for (const auto& sh : shapes) {
    if (only && sh.k != only) continue;
    const int64_t vars = only_vars > 0 ? only_vars : sh.vars;
    auto t0 = std::chrono::steady_clock::now();
    // Genotype-like codes from a hash of (variable, object): reproducible and cheap.
    const InteractionBits bits = build_interaction_bits(
        layout, vars, 3,
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
    task.n_real = vars;
    double best = INFINITY;
    for (int run = 0; run < 2; ++run) {
      t0 = std::chrono::steady_clock::now();
      const InteractionBest result = gpu_interactions(bits, tables, task, options, nullptr);
      best = std::min(best, seconds_since(t0));
    }
    const double tuples = choose(double(vars), sh.k);
    std::printf("%d,%lld,%.4g,%.3f,%.4f,%.4g\n", sh.k, (long long)vars, tuples, build, best, tuples / best);
    std::fflush(stdout);
  }
  return 0;
}
