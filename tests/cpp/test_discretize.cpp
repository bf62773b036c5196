// Discretization without R: known answers, independence of the thread count, and (on a GPU)
// the GPU engine against the CPU engine for every method, bitwise, in one chunk and in many,
// on one device and on two. The methods themselves are checked against pure R in
// tests/testthat/test-discretize.R.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "core/discretize.h"

using namespace fsgpu;

namespace {

struct Values {
  int32_t n, p, classes;
  std::vector<int32_t> y;
  std::vector<double> x;  // column-major
};

// Features of every kind the engines must handle: continuous, informative, rounded (ties),
// few values, constant, missing values, signed zeros, and one class only among the non-missing.
Values make_values(uint32_t seed, int32_t n, int32_t p, int32_t classes) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  Values d{n, p, classes, std::vector<int32_t>(n), std::vector<double>(size_t(n) * p)};
  for (int32_t i = 0; i < n; ++i) d.y[i] = i < classes ? i : int32_t(rng() % classes);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int32_t j = 0; j < p; ++j)
    for (int32_t i = 0; i < n; ++i) {
      double v = normal(rng);
      switch (j % 8) {
        case 0: v += d.y[i]; break;
        case 1: v = std::round((v + d.y[i] * 0.7) * 4) / 4; break;
        case 2: v = double(rng() % 3); break;
        case 3: v = 1.5; break;
        case 4: v = rng() % 5 == 0 ? nan : v + 0.5 * (d.y[i] % 2); break;
        case 5: v = (rng() % 2 ? -0.0 : 0.0) + double(rng() % 3) * (d.y[i] == 0 ? 1 : -1); break;
        case 6: v = d.y[i] == 0 ? v : nan; break;
        default: break;
      }
      d.x[size_t(j) * n + i] = v;
    }
  return d;
}

DiscretizeTask task_for(const Values& d, DiscretizeMethod m, bool dense) {
  DiscretizeTask t;
  t.method = m;
  t.n_samples = d.n;
  t.n_features = d.p;
  t.labels = d.y.data();
  t.n_classes = d.classes;
  t.nbins = 6;
  if (dense) t.dense = d.x.data();
  t.read = [&d](int64_t f, double* out) { std::memcpy(out, d.x.data() + f * d.n, sizeof(double) * d.n); };
  return t;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_cuts(const std::vector<FeatureCuts>& a, const std::vector<FeatureCuts>& b, std::string& why) {
  if (a.size() != b.size()) return why = "feature counts", false;
  for (size_t f = 0; f < a.size(); ++f) {
    const bool same = a[f].cuts.size() == b[f].cuts.size() && same_bits(a[f].lo, b[f].lo) &&
                      same_bits(a[f].hi, b[f].hi) && same_bits(a[f].criterion, b[f].criterion) &&
                      a[f].missing == b[f].missing &&
                      (a[f].cuts.empty() || !std::memcmp(a[f].cuts.data(), b[f].cuts.data(), sizeof(double) * a[f].cuts.size()));
    if (!same) return why = "feature " + std::to_string(f), false;
  }
  return true;
}

const char* name_of(DiscretizeMethod m) {
  const char* names[] = {"caim", "cacc", "ameva", "mdlp", "equal_width", "equal_freq"};
  return names[int(m)];
}

}  // namespace

void discretize_tests(const GpuStatus& gpu) {
  // Known answers: two classes split by one gap get one cut at its midpoint; the
  // equal-frequency cuts of 1..8 in 4 bins.
  {
    Values d{8, 1, 2, std::vector<int32_t>(8), {1, 2, 3, 4, 10, 11, 12, 13}};
    for (int32_t i = 4; i < 8; ++i) d.y[i] = 1;
    for (DiscretizeMethod m : {DiscretizeMethod::caim, DiscretizeMethod::cacc, DiscretizeMethod::ameva,
                               DiscretizeMethod::mdlp}) {
      const auto r = cpu_discretize(task_for(d, m, true), 1, nullptr);
      EXPECT(r[0].cuts == std::vector<double>{7}, "%s: one cut at 7", name_of(m));
    }
    DiscretizeTask t = task_for(d, DiscretizeMethod::equal_freq, true);
    t.nbins = 4;
    EXPECT(cpu_discretize(t, 1, nullptr)[0].cuts == (std::vector<double>{2.5, 7, 11.5}), "equal_freq of 8 values");
  }
  struct Case { uint32_t seed; int32_t n, p, classes; };
  const Case cases[] = {{61, 40, 16, 2}, {62, 300, 24, 3}, {63, 2000, 16, 7}, {64, 97, 8, 40}, {65, 5000, 8, 2}};
  const DiscretizeMethod methods[] = {DiscretizeMethod::caim, DiscretizeMethod::cacc, DiscretizeMethod::ameva,
                                      DiscretizeMethod::mdlp, DiscretizeMethod::equal_width,
                                      DiscretizeMethod::equal_freq};
  for (const Case& c : cases) {
    const Values d = make_values(c.seed, c.n, c.p, c.classes);
    for (DiscretizeMethod m : methods) {
      const std::vector<FeatureCuts> ref = cpu_discretize(task_for(d, m, true), 1, nullptr);
      std::string why;
      EXPECT(same_cuts(ref, cpu_discretize(task_for(d, m, false), 3, nullptr), why), "case %u %s: threads: %s",
             c.seed, name_of(m), why.c_str());
      // Every cut lies between two distinct values, strictly below the upper one.
      for (int32_t f = 0; f < d.p; ++f)
        for (size_t k = 1; k < ref[f].cuts.size(); ++k)
          EXPECT(ref[f].cuts[k - 1] < ref[f].cuts[k], "case %u %s: cuts ascending", c.seed, name_of(m));
      if (gpu.devices.empty()) continue;
      for (int64_t limit : {int64_t(0), int64_t(1) << 16}) {  // one chunk; chunks of a few features
        for (bool dense : {true, false}) {
          GpuOptions options;
          options.devices.push_back(0);
          options.memory_limit = limit;
          EXPECT(same_cuts(ref, gpu_discretize(task_for(d, m, dense), options, nullptr), why),
                 "case %u %s: gpu (limit %lld, dense %d): %s", c.seed, name_of(m), (long long)limit, int(dense),
                 why.c_str());
        }
      }
      if (gpu.devices.size() > 1) {
        GpuOptions options;
        options.devices = std::vector<int>(2);
        options.devices[1] = 1;
        options.memory_limit = int64_t(1) << 16;
        EXPECT(same_cuts(ref, gpu_discretize(task_for(d, m, true), options, nullptr), why), "case %u %s: two gpus: %s",
               c.seed, name_of(m), why.c_str());
      }
    }
  }
}
