// The GPU pair search's two kernels (binary tensor cores, popcount) against the CPU engine, bit
// for bit: 2 to 64 levels, 2 to 7 classes and none (the mutual measure), sample counts that are
// no multiple of 32, 128 or 256, constant features, features with fewer levels than the
// widest, top-k with ties, thresholds, `with` tasks, tiles of the rows and the three measures.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "check.h"
#include "core/pairs.h"

using namespace fsgpu;

namespace {

struct PairCase {
  uint32_t seed;
  int32_t n, p, classes, levels;
};

bool same_records(const std::vector<PairRecord>& a, const std::vector<PairRecord>& b, const char* what,
                  const PairCase& c) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k].i == b[k].i && a[k].j == b[k].j && a[k].key == b[k].key &&
         a[k].joint_class == b[k].joint_class && a[k].joint == b[k].joint && a[k].cells == b[k].cells)
    ++k;
  if (k == a.size() && k == b.size()) return true;
  std::printf("  case %u (%s): %zu vs %zu records, first difference at %zu", c.seed, what, a.size(), b.size(), k);
  if (k < a.size() && k < b.size())
    std::printf(": (%d, %d, key %lld, cells %d) vs (%d, %d, key %lld, cells %d)", a[k].i, a[k].j,
                (long long)a[k].key, a[k].cells, b[k].i, b[k].j, (long long)b[k].key, b[k].cells);
  std::printf("\n");
  return false;
}

// Codes with the given widest level count: most features uniform over all levels, some over
// fewer, feature 5 constant, feature 9 a copy of feature 2 (its pairs tie with 2's), feature 11
// nearly all one level (the encoder may keep it sparse). The class follows features 1 and 4.
struct Codes {
  std::vector<int32_t> labels;
  std::vector<std::vector<int32_t>> columns;
};

Codes make_codes(const PairCase& c) {
  std::mt19937 g(c.seed);
  Codes d;
  d.columns.assign(c.p, std::vector<int32_t>(c.n));
  for (int32_t f = 0; f < c.p; ++f) {
    const int32_t levels = f % 7 == 3 ? std::max(1, c.levels / 2 + 1) : c.levels;
    for (int32_t s = 0; s < c.n; ++s) d.columns[f][s] = int32_t(g() % levels);
  }
  for (int32_t s = 0; s < c.n; ++s) {
    d.columns[5][s] = 4;
    d.columns[9][s] = d.columns[2][s];
    d.columns[11][s] = g() % 50 == 0 ? 1 : 0;
  }
  d.labels.resize(c.n);
  for (int32_t s = 0; s < c.n; ++s)
    d.labels[s] = s < c.classes ? s
                  : g() % 4 == 0 ? int32_t(g() % c.classes)
                                 : (d.columns[1][s] + 2 * d.columns[4][s]) % c.classes;
  return d;
}

CodeMatrix encode(const Codes& d, const ClassLayout& layout) {
  std::vector<ColumnSource> sources(d.columns.size());
  for (size_t f = 0; f < d.columns.size(); ++f) sources[f].categorical = d.columns[f].data();
  return encode_dense(sources, layout, 2, 2);
}

std::vector<PairRecord> cpu(const PairData& data, const PairTask& task, const PlogpTable& plogp, int64_t top,
                            bool has_min = false, int64_t min_key = 0) {
  PairCollector collector(top, has_min, min_key);
  cpu_pair_search(data, task, plogp, collector, 2, nullptr);
  return collector.finish();
}

std::vector<PairRecord> gpu(PairData& data, GpuPairKernel kernel, const PairTask& task, const PlogpTable& plogp,
                            int64_t top, bool has_min = false, int64_t min_key = 0) {
  PairCollector collector(top, has_min, min_key);
  GpuOptions options;
  options.devices = {0};
  data.gpu_kernel = kernel;
  gpu_pair_search(data, task, plogp, collector, options, nullptr);
  return collector.finish();
}

}  // namespace

void pair_kernel_tests(const GpuStatus& gpu_status) {
  if (gpu_status.devices.empty()) {
    std::printf("pair kernels: no GPU, skipped\n");
    return;
  }
  const bool tensor_cores = gpu_status.devices[0].major >= 8;
  const PairCase cases[] = {{1, 37, 150, 2, 2},   {2, 291, 150, 3, 3},  {3, 1001, 150, 3, 10},
                            {4, 2083, 90, 7, 16}, {5, 517, 70, 5, 33},  {6, 300, 70, 2, 64},
                            {7, 1000, 130, 3, 64}, {8, 7001, 40, 4, 10}, {9, 255, 200, 2, 10}};
  for (const PairCase& c : cases) {
    const Codes codes = make_codes(c);
    const ClassLayout layout = ClassLayout::from_labels(codes.labels.data(), c.n, c.classes);
    const ClassLayout unsupervised = ClassLayout::one_class(c.n);
    const CodeMatrix x = encode(codes, layout), x_one = encode(codes, unsupervised);
    const PlogpTable plogp(c.n);
    std::printf("pair kernels: case %u, %d samples, %d features, %d classes, %d levels\n", c.seed, c.n, c.p,
                c.classes, int(x.max_levels()));
    for (PairMeasure measure : {PairMeasure::joint, PairMeasure::interaction, PairMeasure::mutual}) {
      const bool mutual = measure == PairMeasure::mutual;
      PairData data = PairData::of(mutual ? x_one : x, mutual ? unsupervised : layout, plogp, measure, 2);
      const PairTask all = PairTask::all(c.p);
      const std::vector<PairRecord> full = cpu(data, all, plogp, -1);
      EXPECT(int64_t(full.size()) == all.n_pairs(), "case %u: every pair", c.seed);
      for (GpuPairKernel kernel : {GpuPairKernel::popcount, GpuPairKernel::tensor}) {
        if (kernel == GpuPairKernel::tensor && !tensor_cores) continue;
        const char* name = kernel == GpuPairKernel::tensor ? "tensor" : "popcount";
        EXPECT(same_records(full, gpu(data, kernel, all, plogp, -1), name, c),
               "case %u: %s kernel, all pairs, measure %d", c.seed, name, int(measure));
        // Top k cut inside a run of tied pairs (feature 9 copies feature 2) keeps the lower indices.
        for (int64_t top : {int64_t(1), int64_t(37), int64_t(500)}) {
          const int64_t k = std::min<int64_t>(top, int64_t(full.size()));
          EXPECT(same_records(std::vector<PairRecord>(full.begin(), full.begin() + k),
                              gpu(data, kernel, all, plogp, top), name, c),
                 "case %u: %s kernel, top %lld, measure %d", c.seed, name, (long long)top, int(measure));
        }
        const int64_t cut = full[full.size() / 5].key;
        EXPECT(same_records(cpu(data, all, plogp, -1, true, cut), gpu(data, kernel, all, plogp, -1, true, cut), name,
                            c),
               "case %u: %s kernel, threshold, measure %d", c.seed, name, int(measure));
        const PairTask with = PairTask::with({int32_t(c.p - 1), 9, 2, 0, c.p / 2}, c.p);
        EXPECT(same_records(cpu(data, with, plogp, -1), gpu(data, kernel, with, plogp, -1), name, c),
               "case %u: %s kernel, with, measure %d", c.seed, name, int(measure));
        const PairTask tile = all.tile(c.p / 5, c.p - 3);
        EXPECT(same_records(cpu(data, tile, plogp, 40), gpu(data, kernel, tile, plogp, 40), name, c),
               "case %u: %s kernel, tile of rows, measure %d", c.seed, name, int(measure));
      }
    }
  }
}
