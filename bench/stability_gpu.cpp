// GPU timing of the subsample selections of stability_selection() without R: one JMI selection
// (k = 50) on all samples against 100 complementary-pair subsamples (half the samples each), all
// together in the batched kernel (gpu_select_subsamples(), src/cuda/batched_select.cu), and, for
// the speed-up, one after another each on its own GPU engine (the path before the batched
// kernel, still the fallback: `loop` of them, projected). Synthetic data of the chowdary and
// nakayama shapes (104 and 105 x 22,283 dense, 2 and 10 classes, 5 levels) and of the news20
// shape (15,935 x 62,061 sparse at density 0.23%, 20 classes, 26 bins). `agrees_with_cpu`: how
// many batched selections (features and scores) equal the CPU engine's on the same subsample
// (microarrays: all of them; news20: the first 20). Built against the objects of the tests/cpp
// CMake build (see bench/README.md).
//
//   stability_gpu [resamples=100] [k=50] [loop=10] [svhn]
//
// With `svhn`, only the SVHN shape (531,131 x 3,072 dense codes 0..15, 10 classes; issue 20 asks
// for its time and its ratio to the memory-bandwidth limit): the limit is reading the codes once
// a step for all subsamples together (k x 1.63 GB at 3.35 TB/s); two subsamples are checked
// against the CPU and two run one after another.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "core/batched_select.h"
#include "core/cpu_engine.h"
#include "core/gpu_backend.h"

using namespace fsgpu;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Complementary halves of every class, `resamples / 2` draws.
std::vector<std::vector<int32_t>> pairs_of(const std::vector<int32_t>& y, int classes, int resamples,
                                           std::mt19937& rng) {
  std::vector<std::vector<int32_t>> by_class(classes), out;
  for (int32_t i = 0; i < static_cast<int32_t>(y.size()); ++i) by_class[y[i]].push_back(i);
  for (int r = 0; r < resamples / 2; ++r) {
    std::vector<int32_t> a, b;
    for (auto s : by_class) {
      std::shuffle(s.begin(), s.end(), rng);
      const size_t half = s.size() / 2;
      a.insert(a.end(), s.begin(), s.begin() + half);
      b.insert(b.end(), s.begin() + half, s.begin() + 2 * half);
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    out.push_back(a);
    out.push_back(b);
  }
  return out;
}

void run(const char* shape, const CodeMatrix& codes, const ClassLayout& layout, const std::vector<int32_t>& y,
         int classes, int resamples, int k, int loop, size_t checked, const GpuOptions& gpu, std::mt19937& rng) {
  SelectionOptions o;
  o.method = Method::jmi;
  o.k = k;
  select_features(*make_gpu_engine(codes, layout, gpu), o, nullptr);  // warm-up: context, kernels
  Clock::time_point t = Clock::now();
  auto engine = make_gpu_engine(codes, layout, gpu);
  const Selection single = select_features(*engine, o, nullptr);
  const double single_s = since(t);
  const auto samples = pairs_of(y, classes, resamples, rng);
  gpu_select_subsamples(codes, layout, {samples[0]}, o, gpu, nullptr);  // warm-up of the batched kernels
  t = Clock::now();
  const std::vector<Selection> sel = gpu_select_subsamples(codes, layout, samples, o, gpu, nullptr);
  const double batched_s = since(t);
  // The previous path: one GPU engine a subsample, on the first `loop` subsamples, projected.
  const std::vector<std::vector<int32_t>> first(samples.begin(), samples.begin() + std::min<size_t>(loop, samples.size()));
  const SubsampleEngine on_gpu = [&](const Subsample& sub, int) { return make_gpu_engine(sub.codes, sub.layout, gpu); };
  t = Clock::now();
  select_on_subsamples(codes, layout, first, {o}, 1, nullptr, on_gpu);
  const double loop_s = since(t) * static_cast<double>(samples.size()) / static_cast<double>(first.size());
  const std::vector<std::vector<int32_t>> cpu_samples(samples.begin(), samples.begin() + std::min(checked, samples.size()));
  const auto cpu = select_on_subsamples(codes, layout, cpu_samples, {o}, 16, nullptr);
  size_t agree = 0;
  for (size_t i = 0; i < cpu.size(); ++i)
    agree += sel[i].features == cpu[i].features && sel[i].scores == cpu[i].scores;
  std::printf("%s,%d,%lld,%d,%d,%.4f,%.4f,%.1f,%.3f,%.1f,%zu/%zu\n", shape, layout.n_samples,
              static_cast<long long>(codes.n_features), k, resamples, single_s, batched_s, batched_s / single_s,
              loop_s, loop_s / batched_s, agree, cpu.size());
  std::printf("# %s: single selection took %zu features\n", shape, single.features.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the log even if a later step aborts
  const int resamples = argc > 1 ? std::atoi(argv[1]) : 100;
  const int k = argc > 2 ? std::atoi(argv[2]) : 50;
  const int loop = argc > 3 ? std::max(1, std::atoi(argv[3])) : 10;
  const GpuStatus status = gpu_status();
  if (status.devices.empty()) {
    std::printf("no GPU: %s\n", status.problem.c_str());
    return 1;
  }
  GpuOptions gpu;
  gpu.devices = {status.devices[0].id};
  std::printf("# %s\nshape,n_samples,n_features,k,resamples,single_seconds,batched_seconds,ratio,loop_seconds,speedup_over_loop,agrees_with_cpu\n",
              status.devices[0].name.c_str());
  std::mt19937 rng(1);
  if (argc > 4 && std::strcmp(argv[4], "svhn") == 0) {
    const int32_t n = 531131, p = 3072, classes = 10;
    std::vector<int32_t> y(n), values(size_t(n) * p);
    for (int32_t i = 0; i < n; ++i) y[i] = static_cast<int32_t>(rng() % classes);
#pragma omp parallel for schedule(static)
    for (int32_t j = 0; j < p; ++j)  // a hash of (sample, feature); the first 32 features lean on the class
      for (int32_t i = 0; i < n; ++i) {
        uint64_t h = (uint64_t(j) << 32 | uint32_t(i)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        values[size_t(j) * n + i] = j < 32 && (h & 3) ? (y[i] + j) % 16 : static_cast<int32_t>((h >> 8) % 16);
      }
    const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
    std::vector<ColumnSource> cols(p);
    for (int32_t j = 0; j < p; ++j) cols[j].categorical = values.data() + size_t(j) * n;
    const Clock::time_point t = Clock::now();
    run("svhn-shape", encode_dense(cols, layout, 16, 16), layout, y, classes, resamples, k, std::min(loop, 2), 2, gpu,
        rng);
    std::printf("# svhn-shape: encoded and run in %.1f s; the bandwidth limit of the batched job is %.4f s "
                "(k x n x p bytes at 3.35 TB/s)\n", since(t), double(k) * n * p / 3.35e12);
    return 0;
  }
  // Dense microarray shapes (5 levels, 10 features tied to the class): chowdary (2 classes of 62
  // and 42) and nakayama (105 samples, 10 classes of 10 or 11).
  auto dense_shape = [&](const char* name, const std::vector<int32_t>& y, int classes) {
    const int32_t n = static_cast<int32_t>(y.size()), p = 22283;
    std::vector<int32_t> values(size_t(n) * p);
    for (int32_t j = 0; j < p; ++j)
      for (int32_t i = 0; i < n; ++i)
        values[size_t(j) * n + i] = j < 10 && rng() % 4 ? (y[i] * 2 + j) % 5 : static_cast<int32_t>(rng() % 5);
    const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
    std::vector<ColumnSource> cols(p);
    for (int32_t j = 0; j < p; ++j) cols[j].categorical = values.data() + size_t(j) * n;
    run(name, encode_dense(cols, layout, 2, 16), layout, y, classes, resamples, k, loop, 100, gpu, rng);
  };
  {
    std::vector<int32_t> y(104);
    for (int32_t i = 0; i < 104; ++i) y[i] = i < 62 ? 0 : 1;
    dense_shape("chowdary-shape", y, 2);
  }
  {
    std::vector<int32_t> y(105);
    for (int32_t i = 0; i < 105; ++i) y[i] = i * 10 / 105;
    dense_shape("nakayama-shape", y, 10);
  }
  {  // news20 shape: counts 1..20 at density 0.23%
    const int32_t n = 15935, p = 62061, classes = 20;
    std::vector<int32_t> y(n);
    for (int32_t i = 0; i < n; ++i) y[i] = static_cast<int32_t>(rng() % classes);
    std::vector<int32_t> rows, start(1, 0);
    std::vector<double> x;
    for (int32_t j = 0; j < p; ++j) {
      for (int32_t i = 0; i < n; ++i)
        if (rng() % 10000 < 23 || (j < 10 && y[i] == j && rng() % 2)) {
          rows.push_back(i);
          x.push_back(1 + rng() % 20);
        }
      start.push_back(static_cast<int32_t>(rows.size()));
    }
    const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
    run("news20-shape", encode_sparse(rows.data(), start.data(), x.data(), p, layout, 26, 16), layout, y, classes,
        resamples, k, loop, 20, gpu, rng);
  }
  return 0;
}
