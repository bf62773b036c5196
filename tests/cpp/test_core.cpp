// Core tests without R: the CPU engine against a plain double-precision computation of
// I(X,S;Y), thread-count independence, dense against sparse, and (built with CUDA, on a GPU)
// the GPU engine against the CPU engine, resident and streamed.
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "core/cpu_engine.h"
#include "core/gpu_backend.h"
#include "core/select_jmi.h"

using namespace fsgpu;

static int failures = 0, checks = 0;
#define EXPECT(cond, ...)                    \
  do {                                       \
    ++checks;                                \
    if (!(cond)) {                           \
      ++failures;                            \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);              \
      std::printf("\n");                     \
    }                                        \
  } while (0)

struct Data {
  int32_t n, p, classes;
  std::vector<int32_t> y;
  std::vector<double> x;  // column-major, many zeros
};

Data make_data(uint32_t seed, int32_t n, int32_t p, int32_t classes, double zero_fraction) {
  std::mt19937 rng(seed);
  Data d{n, p, classes, std::vector<int32_t>(n), std::vector<double>(size_t(n) * p)};
  for (int32_t i = 0; i < n; ++i) d.y[i] = i < classes ? i : int32_t(rng() % classes);
  std::uniform_real_distribution<double> u(0, 1);
  for (int32_t j = 0; j < p; ++j)
    for (int32_t i = 0; i < n; ++i) {
      // zero_fraction < 0: continuous values, so that no code is common enough to be a base
      double v = zero_fraction < 0 ? u(rng) * 100 + (j % 3 == 0 ? 20.0 * d.y[i] : 0.0)
                 : u(rng) < zero_fraction ? 0.0 : std::floor(u(rng) * 5) + (j % 3 == 0 ? d.y[i] : 0);
      d.x[size_t(j) * n + i] = v;
    }
  return d;
}

// I(A;Y) in bits for joint codes a, computed with doubles and logs.
double mi_reference(const std::vector<int64_t>& a, const std::vector<int32_t>& y) {
  std::map<std::pair<int64_t, int32_t>, double> nay;
  std::map<int64_t, double> na;
  std::map<int32_t, double> ny;
  for (size_t i = 0; i < a.size(); ++i) {
    nay[{a[i], y[i]}] += 1;
    na[a[i]] += 1;
    ny[y[i]] += 1;
  }
  double n = double(a.size()), mi = 0;
  for (auto& kv : nay) mi += kv.second / n * std::log2(kv.second * n / (na[kv.first.first] * ny[kv.first.second]));
  return mi;
}

std::vector<int64_t> column_codes(const CodeMatrix& m, const ClassLayout& layout, int64_t f) {
  PlogpTable plogp(layout.n_samples);
  Conditioning s = Conditioning::on_feature(m, layout, f, plogp);
  std::vector<int64_t> out(layout.n_samples);
  for (int32_t i = 0; i < layout.n_samples; ++i) out[i] = s.codes[layout.position[i]];
  return out;
}

CodeMatrix encode(const Data& d, const ClassLayout& layout, bool sparse, int nbins) {
  if (!sparse) {
    std::vector<ColumnSource> cols(d.p);
    for (int32_t j = 0; j < d.p; ++j) cols[j].numeric = d.x.data() + size_t(j) * d.n;
    return encode_dense(cols, layout, nbins, 2);
  }
  std::vector<int32_t> i, p(1, 0);
  std::vector<double> x;
  for (int32_t j = 0; j < d.p; ++j) {
    for (int32_t r = 0; r < d.n; ++r)
      if (d.x[size_t(j) * d.n + r] != 0) {
        i.push_back(r);
        x.push_back(d.x[size_t(j) * d.n + r]);
      }
    p.push_back(int32_t(i.size()));
  }
  return encode_sparse(i.data(), p.data(), x.data(), d.p, layout, nbins, 2);
}

void same_selection(const Selection& a, const Selection& b, const char* what) {
  EXPECT(a.features == b.features, "%s: selections differ", what);
  bool equal = a.scores.size() == b.scores.size();
  for (size_t i = 0; equal && i < a.scores.size(); ++i) equal = a.scores[i] == b.scores[i];
  EXPECT(equal, "%s: scores differ", what);
}

int main() {
  const GpuStatus gpu = gpu_status();
  std::printf("GPU: %s\n", gpu.devices.empty() ? gpu.problem.c_str() : gpu.devices[0].name.c_str());
  struct Case { uint32_t seed; int32_t n, p, classes; double zeros; int nbins; };
  const Case cases[] = {{1, 60, 40, 3, 0.3, 8}, {2, 300, 120, 12, 0.9, 16}, {3, 1000, 50, 2, 0.5, 64},
                        {4, 25, 30, 20, 0.2, 4}, {5, 2000, 200, 5, 0.97, 64}, {6, 500, 80, 4, -1, 64},
                        {7, 3000, 60, 3, -1, 16}, {8, 4000, 60, 3, 0.975, 16}, {9, 5000, 40, 6, 0.99, 8}};
  for (const Case& c : cases) {
    Data d = make_data(c.seed, c.n, c.p, c.classes, c.zeros);
    ClassLayout layout = ClassLayout::from_labels(d.y.data(), d.n, d.classes);
    CodeMatrix dense = encode(d, layout, false, c.nbins), sparse = encode(d, layout, true, c.nbins);

    // Relevance and one conditioned step against the double reference.
    CpuJmiEngine engine(dense, layout, 1);
    engine.accumulate_joint_mi(-1, true);
    Candidate best = engine.best_candidate();
    std::vector<int32_t> y(d.y);
    double best_ref = -1;
    for (int64_t f = 0; f < dense.n_features; ++f) best_ref = std::max(best_ref, mi_reference(column_codes(dense, layout, f), y));
    EXPECT(std::fabs(fixed_to_bits(best.score, d.n) - best_ref) < 1e-9, "case %u: max I(X;Y) %.12f vs %.12f", c.seed,
           fixed_to_bits(best.score, d.n), best_ref);
    const int64_t s = best.feature;
    engine.retire(s);
    engine.accumulate_joint_mi(s, true);
    for (int64_t f = 0; f < 5 && f < dense.n_features; ++f) {
      if (f == s) continue;
      std::vector<int64_t> joint = column_codes(dense, layout, f), sc = column_codes(dense, layout, s);
      for (size_t i = 0; i < joint.size(); ++i) joint[i] = joint[i] * 70000 + sc[i];
      CpuJmiEngine one(dense, layout, 1);
      one.accumulate_joint_mi(s, true);
      for (int64_t g = 0; g < dense.n_features; ++g)
        if (g != f) one.retire(g);
      EXPECT(std::fabs(fixed_to_bits(one.best_candidate().score, d.n) - mi_reference(joint, y)) < 1e-9,
             "case %u: I(X%lld,S;Y)", c.seed, (long long)f);
    }

    const int64_t k = std::min<int64_t>(15, c.p);
    CpuJmiEngine cpu1(dense, layout, 1), cpu3(dense, layout, 3), cpu_sparse(sparse, layout, 2);
    Selection ref = select_jmi(cpu1, k, d.n, nullptr);
    same_selection(ref, select_jmi(cpu3, k, d.n, nullptr), "threads 1 vs 3");
    same_selection(ref, select_jmi(cpu_sparse, k, d.n, nullptr), "dense vs sparse");
    int slice_calls = 0;
    CpuJmiEngine sliced(dense, layout, 2, [&] { ++slice_calls; }, dense.n_entries() / 7 + 1);
    same_selection(ref, select_jmi(sliced, k, d.n, nullptr), "sliced steps");
    EXPECT(slice_calls >= 5 * int(ref.features.size()), "between_slices ran %d times", slice_calls);
    CpuJmiEngine relevance(dense, layout, 2);
    const std::vector<double> mi = mi_scores(relevance, d.n);
    for (int64_t f = 0; f < 3 && f < dense.n_features; ++f)
      EXPECT(std::fabs(mi[f] - mi_reference(column_codes(dense, layout, f), y)) < 1e-9, "mi_scores, feature %lld",
             (long long)f);
    if (gpu.devices.empty()) continue;
    for (const CodeMatrix* m : {&dense, &sparse}) {
      for (int64_t limit : {int64_t(0), int64_t(2000)}) {
        GpuOptions options;
        options.devices = {0};
        options.memory_limit = limit;
        auto g = make_gpu_jmi_engine(*m, layout, options);
        EXPECT(mi_scores(*g, d.n) == mi, "gpu mi_scores differ");
        same_selection(ref, select_jmi(*g, k, d.n, nullptr), m->sparse ? "gpu sparse" : "gpu dense");
        if (gpu.devices.size() > 1) {
          options.devices = {0, 1};
          auto g2 = make_gpu_jmi_engine(*m, layout, options);
          EXPECT(mi_scores(*g2, d.n) == mi, "two-gpu mi_scores differ");
          same_selection(ref, select_jmi(*g2, k, d.n, nullptr), "two gpus");
        }
      }
    }
  }
  std::printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
