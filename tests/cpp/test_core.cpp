// Core tests without R: the CPU engine against a plain double-precision computation of
// I(X;Y), I(X,S;Y) and I(X;Y|S), thread-count independence, dense against sparse, and (built
// with CUDA, on a GPU) the GPU engine against the CPU engine for every criterion, resident and
// streamed. The criteria's formulas are checked against pure R in tests/testthat.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/cpu_engine.h"
#include "core/gpu_backend.h"
#include "core/pairs.h"
#include "core/select.h"
#include "check.h"

using namespace fsgpu;

int failures = 0, checks = 0;

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

// H(A) in bits, and H(A,Y) with y's codes put beside a's.
template <class T>
double entropy_reference(const std::vector<T>& a) {
  std::map<T, double> na;
  for (const T& v : a) na[v] += 1;
  double n = double(a.size()), h = 0;
  for (auto& kv : na) h -= kv.second / n * std::log2(kv.second / n);
  return h;
}

double joint_entropy_reference(const std::vector<int64_t>& a, const std::vector<int32_t>& y) {
  std::vector<std::pair<int64_t, int32_t>> ay(a.size());
  for (size_t i = 0; i < a.size(); ++i) ay[i] = {a[i], y[i]};
  return entropy_reference(ay);
}

// praznik's Gini impurity gain G(A;Y) = sum p(a,y)^2 / p(a) - sum p(y)^2, with doubles.
double gini_reference(const std::vector<int64_t>& a, const std::vector<int32_t>& y) {
  std::map<std::pair<int64_t, int32_t>, double> nay;
  std::map<int64_t, double> na;
  std::map<int32_t, double> ny;
  for (size_t i = 0; i < a.size(); ++i) {
    nay[{a[i], y[i]}] += 1;
    na[a[i]] += 1;
    ny[y[i]] += 1;
  }
  double n = double(a.size()), g = 0;
  for (auto& kv : nay) g += kv.second * kv.second / (na[kv.first.first] * n);
  for (auto& kv : ny) g -= kv.second * kv.second / (n * n);
  return g;
}

// A normalised I(A;Y) (criteria.h: Normalization) from the double references.
double normalized_reference(Normalization how, const std::vector<int64_t>& a, const std::vector<int32_t>& y) {
  const double mi = mi_reference(a, y);
  const double h = how == Normalization::su    ? (entropy_reference(a) + entropy_reference(y)) / 2
                   : how == Normalization::nmi ? joint_entropy_reference(a, y)
                                               : entropy_reference(a);
  return h > 0 ? mi / h : 0;
}

// infotheo's I(X;Y) by estimator, in bits, from the cell counts: H(X) + H(Y) - H(X,Y) with
// mm: H = plug-in + (m - 1)/2N nats; sg: H = digamma(N + 1) - sum n/N digamma(n + 1), where
// digamma(n + 1) = 1 + 1/2 + ... + 1/n - Euler's gamma (which cancels in the sum).
double estimated_mi_reference(const std::vector<int64_t>& a, const std::vector<int32_t>& y, Estimator e) {
  std::map<std::pair<int64_t, int32_t>, double> nay;
  std::map<int64_t, double> na;
  std::map<int32_t, double> ny;
  for (size_t i = 0; i < a.size(); ++i) {
    nay[{a[i], y[i]}] += 1;
    na[a[i]] += 1;
    ny[y[i]] += 1;
  }
  const double n = double(a.size());
  auto harmonic = [](double k) {
    double h = 0;
    for (double i = 1; i <= k; ++i) h += 1 / i;
    return h;
  };
  auto entropy = [&](const auto& counts) {
    double h = e == Estimator::schurmann_grassberger ? harmonic(n) : std::log(n);
    for (const auto& kv : counts)
      h -= kv.second / n * (e == Estimator::schurmann_grassberger ? harmonic(kv.second) : std::log(kv.second));
    if (e == Estimator::miller_madow) h += (double(counts.size()) - 1) / (2 * n);
    return h / std::log(2.0);
  };
  return entropy(na) + entropy(ny) - entropy(nay);
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

void same_selection(const Selection& a, const Selection& b, const std::string& what) {
  EXPECT(a.features == b.features, "%s: selections differ", what.c_str());
  bool equal = a.scores.size() == b.scores.size();
  size_t i = 0;
  for (; equal && i < a.scores.size(); ++i) equal = a.scores[i] == b.scores[i];
  EXPECT(equal, "%s: scores differ (%zu of %zu: %.17g vs %.17g)", what.c_str(), i, a.scores.size(),
         i > 0 && i <= a.scores.size() ? a.scores[i - 1] : 0.0, i > 0 && i <= b.scores.size() ? b.scores[i - 1] : 0.0);
}

const char* name_of(Method m) {
  static const char* names[] = {"mim", "mrmr", "mifs", "cife", "condred", "betagamma", "icap",
                                "cmim", "jmi", "disr", "cmi", "jmim", "njmim", "jmi3", "jim"};
  return names[static_cast<int>(m)];
}

// A selection of k with one criterion, as the R layer would ask for it.
SelectionOptions options_for(Method method, int64_t k, std::vector<int64_t> fixed = {}) {
  SelectionOptions o;
  o.method = method;
  o.k = k;
  o.fixed = std::move(fixed);
  if (method == Method::mifs || method == Method::betagamma) o.beta = 0.7;   // non-integral: double scores
  if (method == Method::cife) o.gamma = 1;
  if (method == Method::condred) o.beta = 0, o.gamma = 1;
  if (method == Method::betagamma) o.gamma = 0.4;
  o.min_score = never_negative(method) ? 0 : -INFINITY;
  return o;
}

const Method kMethods[] = {Method::mim,  Method::mrmr, Method::mifs, Method::cife, Method::condred,
                           Method::betagamma, Method::icap, Method::cmim, Method::jmi, Method::disr,
                           Method::cmi,  Method::jmim, Method::njmim, Method::jmi3, Method::jim};

const Normalization kNormalizations[] = {Normalization::su, Normalization::nmi, Normalization::gain_ratio};

bool same_pairs(const std::vector<PairRecord>& a, const std::vector<PairRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].i != b[k].i || a[k].j != b[k].j || a[k].key != b[k].key || a[k].joint_class != b[k].joint_class ||
        a[k].joint != b[k].joint || a[k].cells != b[k].cells)
      return false;
  return true;
}

std::vector<PairRecord> search(const PairData& data, const PairTask& task, int64_t top, bool has_min, int64_t min_key,
                               int threads, const std::vector<int>& devices = {},
                               int64_t slice_work = kPairSliceWork, int* slices = nullptr) {
  PlogpTable plogp(data.layout->n_samples);
  PairCollector collector(top, has_min, min_key);
  if (devices.empty()) {
    cpu_pair_search(data, task, plogp, collector, threads, [&](double) { if (slices) ++*slices; }, slice_work);
  } else {
    GpuOptions options;
    options.devices = devices;
    gpu_pair_search(data, task, plogp, collector, options, nullptr);
  }
  return collector.finish();
}

// The pair search: sums against the double reference, top-k and thresholds against the full
// list, threads, and the GPU against the CPU (for both measures and the unsupervised I(Xi;Xj)).
void pair_tests(uint32_t seed, const CodeMatrix& x, const CodeMatrix& x_sparse, const ClassLayout& layout,
                const std::vector<int32_t>& y, const GpuStatus& gpu) {
  const PlogpTable plogp(layout.n_samples);
  const ClassLayout unsupervised = ClassLayout::one_class(layout.n_samples);
  for (PairMeasure measure : {PairMeasure::joint, PairMeasure::interaction, PairMeasure::mutual}) {
    const ClassLayout& lay = measure == PairMeasure::mutual ? unsupervised : layout;
    // Unsupervised codes are the same samples in the original order: re-encode positions.
    CodeMatrix xm = x;
    if (measure == PairMeasure::mutual && !x.sparse) {
      for (int64_t f = 0; f < x.n_features; ++f)
        for (int32_t i = 0; i < layout.n_samples; ++i) {
          const int64_t from = f * x.n_samples + layout.position[i], to = f * x.n_samples + i;
          if (x.wide) xm.codes16[to] = x.codes16[from]; else xm.codes8[to] = x.codes8[from];
        }
    } else if (measure == PairMeasure::mutual) {
      continue;  // sparse rows are class-sorted positions; the dense case covers I(Xi;Xj)
    }
    const PairData data = PairData::of(xm, lay, plogp, measure, 2);
    const PairTask all = PairTask::all(x.n_features);
    const std::vector<PairRecord> full = search(data, all, -1, false, 0, 1);
    EXPECT(int64_t(full.size()) == all.n_pairs(), "case %u: every pair reported", seed);
    EXPECT(same_pairs(full, search(data, all, -1, false, 0, 3)), "case %u: pairs differ by threads", seed);
    if (measure != PairMeasure::mutual)
      EXPECT(same_pairs(full, search(PairData::of(x_sparse, lay, plogp, measure, 2), all, -1, false, 0, 2)),
             "case %u: sparse pairs differ", seed);
    // A few pairs against doubles.
    for (size_t k = 0; k < full.size(); k += full.size() / 7 + 1) {
      const PairRecord& r = full[k];
      std::vector<int64_t> a = column_codes(x, layout, r.i), b = column_codes(x, layout, r.j), ab(a.size());
      for (size_t s = 0; s < a.size(); ++s) ab[s] = a[s] * 70000 + b[s];
      double ref;
      if (measure == PairMeasure::mutual) {
        std::vector<int32_t> b32(b.begin(), b.end());
        ref = mi_reference(a, b32);
      } else {
        ref = mi_reference(ab, y);
        if (measure == PairMeasure::interaction) ref -= mi_reference(a, y) + mi_reference(b, y);
      }
      EXPECT(std::fabs(fixed_to_bits(r.key, layout.n_samples) - ref) < 1e-9, "case %u: pair (%d, %d) measure %d",
             seed, r.i, r.j, int(measure));
    }
    const int64_t top = std::min<int64_t>(37, int64_t(full.size()));
    const std::vector<PairRecord> best = search(data, all, top, false, 0, 2);
    EXPECT(same_pairs(best, std::vector<PairRecord>(full.begin(), full.begin() + top)), "case %u: top %lld", seed,
           (long long)top);
    // Many workers' collectors, and many slices (each merging them), keep the same pairs.
    EXPECT(same_pairs(best, search(data, all, top, false, 0, 16)), "case %u: top with 16 threads", seed);
    EXPECT(same_pairs(std::vector<PairRecord>(full.begin(), full.begin() + 1), search(data, all, 1, false, 0, 16)),
           "case %u: top 1 with 16 threads", seed);
    int slices = 0;
    EXPECT(same_pairs(best, search(data, all, top, false, 0, 3, {}, 1000, &slices)), "case %u: top, sliced", seed);
    EXPECT(x.n_features < 40 || slices > 0, "case %u: the sliced search ran in one slice", seed);
    slices = 0;
    EXPECT(same_pairs(full, search(data, all, -1, false, 0, 3, {}, 1000, &slices)), "case %u: all pairs, sliced",
           seed);
    // A sink gets every pair once (from worker threads, one at a time) and nothing is kept.
    std::vector<PairRecord> sunk;
    PairCollector sink([&](const PairRecord& r) { sunk.push_back(r); });
    cpu_pair_search(data, all, plogp, sink, 3, nullptr, 1000);
    EXPECT(sink.held() == 0 && sink.finish().empty(), "case %u: a sink collector keeps nothing", seed);
    std::sort(sunk.begin(), sunk.end(), [](const PairRecord& a, const PairRecord& b) {
      return pair_before(a.key, a.i, a.j, b.key, b.i, b.j);
    });
    EXPECT(same_pairs(full, sunk), "case %u: the sink's pairs differ", seed);
    const int64_t cut = full[full.size() / 3].key;
    std::vector<PairRecord> above;
    for (const PairRecord& r : full)
      if (r.key >= cut) above.push_back(r);
    EXPECT(same_pairs(above, search(data, all, -1, true, cut, 2)), "case %u: threshold", seed);
    const PairTask with = PairTask::with({int32_t(x.n_features - 1), 3, 0}, x.n_features);
    std::vector<PairRecord> involving;
    for (const PairRecord& r : full)
      if (r.i == 0 || r.i == 3 || r.j == 3 || r.j == x.n_features - 1) involving.push_back(r);
    EXPECT(same_pairs(involving, search(data, with, -1, false, 0, 2)), "case %u: with", seed);
    if (gpu.devices.empty()) continue;
    const std::vector<int> one = {0};
    EXPECT(same_pairs(full, search(data, all, -1, false, 0, 0, one)), "case %u: gpu all pairs, measure %d", seed,
           int(measure));
    EXPECT(same_pairs(best, search(data, all, top, false, 0, 0, one)), "case %u: gpu top", seed);
    EXPECT(same_pairs(above, search(data, all, -1, true, cut, 0, one)), "case %u: gpu threshold", seed);
    EXPECT(same_pairs(involving, search(data, with, -1, false, 0, 0, one)), "case %u: gpu with", seed);
    if (gpu.devices.size() > 1)
      EXPECT(same_pairs(best, search(data, all, top, false, 0, 0, {0, 1})), "case %u: two gpus top", seed);
    // A memory limit below what the bitmaps need is refused up front, with the reason.
    GpuOptions small;
    small.devices = one;
    small.memory_limit = 1000;
    const std::string problem = gpu_pair_search_problem(data, all, small);
    EXPECT(problem.find("needs") != std::string::npos, "case %u: memory problem '%s'", seed, problem.c_str());
    bool refused = false;
    try {
      PairCollector collector(top, false, 0);
      gpu_pair_search(data, all, plogp, collector, small, nullptr);
    } catch (const std::runtime_error& e) {
      refused = problem == e.what();
    }
    EXPECT(refused, "case %u: a search beyond the memory limit is refused", seed);
    small.memory_limit = 0;
    EXPECT(gpu_pair_search_problem(data, all, small).empty(), "case %u: a small search fits", seed);
  }
}

// The collector alone: top = 0 is refused; a bounded collector holds at most 2 * top records
// after each batch; workers' collectors merged in any grouping keep exactly the best top.
void collector_tests() {
  bool refused = false;
  try {
    PairCollector none(0, false, 0);
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  EXPECT(refused, "a collector with top = 0 is refused");

  std::mt19937 rng(11);
  std::vector<PairRecord> all(20000);
  for (size_t k = 0; k < all.size(); ++k) {
    all[k].i = int32_t(k % 97);
    all[k].j = int32_t(k);
    all[k].key = int64_t(rng() % 500);  // many exact ties: the order falls back to (i, j)
  }
  std::vector<PairRecord> sorted = all;
  std::sort(sorted.begin(), sorted.end(), [](const PairRecord& a, const PairRecord& b) {
    return pair_before(a.key, a.i, a.j, b.key, b.i, b.j);
  });
  for (int64_t top : {int64_t(1), int64_t(37), int64_t(1000)}) {
    PairCollector main(top, false, 0);
    std::vector<PairCollector> workers;
    for (int w = 0; w < 5; ++w) workers.push_back(main.empty_like());
    int64_t most = 0;
    for (size_t first = 0; first < all.size(); first += 300) {
      PairCollector& w = workers[(first / 300) % workers.size()];
      std::vector<PairRecord> batch(all.begin() + first, all.begin() + std::min(all.size(), first + 300));
      w.add(batch);
      most = std::max(most, w.held());
      if (first % 3000 == 0) main.merge(w);
      most = std::max(most, main.held());
    }
    for (PairCollector& w : workers) main.merge(w);
    EXPECT(most <= 2 * top, "top %lld: a collector held %lld records", (long long)top, (long long)most);
    const std::vector<PairRecord> best = main.finish();
    bool same = int64_t(best.size()) == top;
    for (int64_t k = 0; same && k < top; ++k) same = best[k].i == sorted[k].i && best[k].j == sorted[k].j;
    EXPECT(same, "top %lld: merged workers' collectors differ from the full sort", (long long)top);
  }
}

// JIM's Gini gains of different tables that are mathematically equal tie exactly. With classes
// 0 1 2 0 0 0, X1 = 0 0 0 1 1 1 sums 1/3 + 1/3 + 1/3 + 9/3 = 4 and X2 = 0 0 1 1 2 2 sums
// 1/2 + 1/2 + 1/2 + 1/2 + 4/2 = 4: the first feature is X1, the lower index, scored as X2.
void jim_tie_tests(const GpuStatus& gpu) {
  const std::vector<int32_t> y = {0, 1, 2, 0, 0, 0};
  const std::vector<double> x = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2};
  const ClassLayout layout = ClassLayout::from_labels(y.data(), 6, 3);
  std::vector<ColumnSource> cols(2);
  for (int j = 0; j < 2; ++j) cols[j].numeric = x.data() + 6 * j;
  const CodeMatrix codes = encode_dense(cols, layout, 3, 1);
  std::vector<std::unique_ptr<SelectionEngine>> engines;
  engines.emplace_back(new CpuEngine(codes, layout, 1));
  if (!gpu.devices.empty()) {
    GpuOptions options;
    options.devices.push_back(0);  // not "= {0}": GCC 12 -O3 warns (-Wnonnull) on that assignment here
    engines.emplace_back(make_gpu_engine(codes, layout, options));
  }
  const double gain = 4.0 / 6 - (16.0 + 1 + 1) / 36;  // sum p(x,y)^2 / p(x) - sum p(y)^2
  for (auto& engine : engines) {
    const Selection best = select_features(*engine, options_for(Method::jim, 1), nullptr);
    EXPECT(best.features.size() == 1 && best.features[0] == 0 && std::fabs(best.scores[0] - gain) < 1e-12,
           "JIM: X1 first, scored G = %.17g", best.scores.empty() ? 0.0 : best.scores[0]);
  }
  for (int64_t f : {0, 1}) {
    CpuEngine engine(codes, layout, 1);
    const Selection one = select_features(engine, options_for(Method::jim, 1, {f}), nullptr);
    EXPECT(one.scores.size() == 1 && std::fabs(one.scores[0] - gain) < 1e-12, "JIM: G(X%lld;Y)", (long long)f);
    CpuEngine other(codes, layout, 1);
    const Selection first = select_features(other, options_for(Method::jim, 1, {0}), nullptr);
    EXPECT(one.scores == first.scores, "JIM: equal gains of X1 and X2 are equal keys");
  }
}

// shrink_cell_terms: a uniform table has entropy log2 m, one cell none; zeros and order do not count.
void shrink_tests() {
  const PlogpTable plogp(12);
  auto bits = [&](std::vector<uint32_t> counts) {
    return fixed_to_bits(plogp(12) - shrink_cell_terms(counts, plogp(12)), 12);
  };
  EXPECT(std::fabs(bits({3, 3, 3, 3}) - 2) < 1e-9, "shrink of a uniform table: %g", bits({3, 3, 3, 3}));
  EXPECT(bits({12}) == 0, "shrink of one cell: %g", bits({12}));
  EXPECT(shrink_cell_terms({5, 0, 7}, plogp(12)) == shrink_cell_terms({7, 5}, plogp(12)), "shrink: zeros and order");
  // lambda = 2 (144 - 74) / (11 (148 - 144)) > 1: log2 2.
  EXPECT(std::fabs(bits({5, 7}) - 1) < 1e-9, "shrink with lambda >= 1: %g", bits({5, 7}));
}

// The dense encoder's integer columns: categories (the one-pass window of fewer than 256
// values, and the wide ranges), the rule's bin_above, missing values reported with their first
// sample, and every thread count giving the same codes.
void encode_tests() {
  const int32_t n = 600;
  std::vector<int32_t> y(n);
  for (int32_t i = 0; i < n; ++i) y[i] = (i * 7) % 3;
  const ClassLayout layout = ClassLayout::from_labels(y.data(), n, 3);
  std::vector<std::vector<int32_t>> v(5, std::vector<int32_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    v[0][i] = -40 + (i * 13) % 90;               // a window of 90 values below and above 0: categories
    v[1][i] = (i % 4) * 700000000 - 1000000000;  // 4 values far apart: categories, sorted
    v[2][i] = (i * 31) % 500;                    // 500 values: binned under a rule of 100
    v[3][i] = 7;                                 // constant
    v[4][i] = i % 3;
  }
  auto columns = [&](int64_t rule) {
    std::vector<ColumnSource> cols(v.size());
    for (size_t j = 0; j < v.size(); ++j) {
      cols[j].categorical = v[j].data();
      cols[j].bin_above = rule;
    }
    return cols;
  };
  EncodeReport report;
  const CodeMatrix one = encode_dense(columns(100), layout, 8, 1, &report);
  EXPECT(!report.any_bad() && report.binned == std::vector<uint8_t>({0, 0, 1, 0, 0}), "encode: the rule's decisions");
  EXPECT(one.levels == std::vector<uint16_t>({90, 4, 8, 1, 3}), "encode: levels %d %d %d %d %d", one.levels[0],
         one.levels[1], one.levels[2], one.levels[3], one.levels[4]);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t p = layout.position[i];
    EXPECT(one.code(0 * n + p) == v[0][i] + 40 && one.code(int64_t(n) + p) == i % 4 &&
               one.code(3 * int64_t(n) + p) == 0 && one.code(4 * int64_t(n) + p) == v[4][i],
           "encode: category codes of sample %d", i);
  }
  const CodeMatrix three = encode_dense(columns(100), layout, 8, 3);
  EXPECT(three.codes8 == one.codes8 && three.levels == one.levels && three.base == one.base,
         "encode: 1 and 3 threads differ");
  // on_coded sees every feature once, by a worker below the thread count, with its final codes.
  std::vector<uint8_t> seen(size_t(n) * v.size(), 0);
  std::vector<int> calls(v.size(), 0);
  std::mutex mutex;
  bool workers_ok = true;
  const CodeMatrix hooked = encode_dense(columns(100), layout, 8, 3, nullptr,
                                         [&](const uint8_t* codes, int64_t first, int64_t last, int worker) {
                                           std::lock_guard<std::mutex> lock(mutex);
                                           workers_ok &= worker >= 0 && worker < 3;
                                           for (int64_t f = first; f < last; ++f) {
                                             ++calls[f];
                                             std::copy(codes + f * n, codes + (f + 1) * n, seen.begin() + f * n);
                                           }
                                         });
  EXPECT(workers_ok && calls == std::vector<int>(v.size(), 1) && hooked.codes8 == one.codes8 &&
             std::equal(seen.begin(), seen.end(), one.codes8.begin()),
         "encode: on_coded saw each feature's final codes once");
  v[4][17] = INT32_MIN;  // R's NA
  v[1][5] = INT32_MIN;
  v[1][3] = INT32_MIN;
  const CodeMatrix bad = encode_dense(columns(-1), layout, 8, 2, &report);
  EXPECT(bad.n_features == 0 && report.bad_row == std::vector<int32_t>({-1, 3, -1, -1, 17}),
         "encode: missing values reported at their first sample");
  bool threw = false;
  try {
    encode_dense(columns(-1), layout, 8, 2);
  } catch (const std::runtime_error&) {
    threw = true;
  }
  EXPECT(threw, "encode: a missing value throws without a report");
}

// Small categories coded in one pass: values that are their own codes (no renumbering), values
// with a gap, shifted or negative, a full 256-value window; with and without a wide column (the
// byte codes then rewritten as 16-bit). Every code is checked against the rank of its value
// among the column's distinct values (the code arrays are not zeroed before the threads write
// them) at 1, 2, 3 and 8 threads, and every base against the column's mode.
void small_category_tests() {
  const int32_t n = 997;
  std::vector<int32_t> y(n);
  for (int32_t i = 0; i < n; ++i) y[i] = (i * 11 + i / 7) % 10;
  const ClassLayout layout = ClassLayout::from_labels(y.data(), n, 10);
  std::vector<std::vector<int32_t>> v(6, std::vector<int32_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    v[0][i] = i % 4 == 0 ? 0 : (i * 7) % 16;      // 0..15, all present, 0 the mode: its own codes
    v[1][i] = (i * 5) % 9 == 1 ? 0 : (i * 5) % 9;  // 0, 2..8: renumbered
    v[2][i] = 5 + (i * 3) % 16;                   // 5..20
    v[3][i] = -3 + (i * 13) % 7;                  // -3..3
    v[4][i] = (i * 37) % 256;                     // a full window of 256 values
    v[5][i] = (i * 17) % 300;                     // 300 levels: 16-bit codes for the whole matrix
  }
  for (int64_t p : {5, 6}) {
    std::vector<ColumnSource> cols(p);
    for (int64_t f = 0; f < p; ++f) cols[f].categorical = v[f].data();
    for (int threads : {1, 2, 3, 8}) {
      EncodeReport report;
      const CodeMatrix m = encode_dense(cols, layout, 8, threads, &report);
      EXPECT(!m.sparse && m.wide == (p == 6) && !report.any_bad(), "small categories: layout (%d threads)", threads);
      for (int64_t f = 0; f < p; ++f) {
        std::vector<int32_t> distinct(v[f]);
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        std::vector<int64_t> count(distinct.size(), 0);
        bool codes_ok = m.levels[f] == distinct.size();
        for (int32_t i = 0; i < n; ++i) {
          const int64_t rank = std::lower_bound(distinct.begin(), distinct.end(), v[f][i]) - distinct.begin();
          ++count[rank];
          codes_ok &= m.code(f * n + layout.position[i]) == rank;
        }
        const int64_t mode = std::max_element(count.begin(), count.end()) - count.begin();
        const uint16_t base = count[mode] * kBaseShareDenominator < n ? kNoBase : static_cast<uint16_t>(mode);
        EXPECT(codes_ok && m.base[f] == base, "small categories: feature %d of %d, %d threads", static_cast<int>(f),
               static_cast<int>(p), threads);
      }
    }
  }
}

// Dense byte codes counted packed (PackedClasses: every class's count of a cell in one word)
// give the same sums as the class-by-class count, for every feature against no condition, a
// feature and a joint condition; with odd class sizes, a single class, classes of one sample,
// and layouts whose fields do not fit a word (not usable: the class-by-class count runs).
void packed_count_tests() {
  struct Shape { uint32_t seed; int32_t n, classes; bool usable; };
  for (const Shape& shape : {Shape{21, 104, 2, true}, Shape{22, 105, 10, true}, Shape{23, 51, 1, true},
                             Shape{24, 37, 30, true}, Shape{25, 1023, 3, true}, Shape{26, 300, 12, false},
                             Shape{27, 5000, 2, false}}) {
    Data d = make_data(shape.seed, shape.n, 12, shape.classes, shape.seed % 2 ? 0.6 : -1);
    const ClassLayout layout =
        d.classes == 1 ? ClassLayout::one_class(d.n) : ClassLayout::from_labels(d.y.data(), d.n, d.classes);
    const CodeMatrix x = encode(d, layout, false, 5);
    const PlogpTable plogp(layout.n_samples);
    const PackedClasses packed = PackedClasses::of(layout, plogp);
    EXPECT(packed.usable() == shape.usable, "packed counts: %d samples in %d classes usable %d", shape.n,
           shape.classes, int(packed.usable()));
    std::vector<Conditioning> conditions{Conditioning::none(layout, plogp), Conditioning::on_feature(x, layout, 1, plogp)};
    conditions.push_back(Conditioning::joined(conditions[1], x, 2, layout, plogp));
    CountScratch a, b;
    for (size_t k = 0; k < conditions.size(); ++k)
      for (int64_t f = 0; f < x.n_features; ++f) {
        const JointSums plain = joint_sums(x, f, conditions[k], layout, plogp, a);
        const JointSums fast = joint_sums(x, f, conditions[k], layout, plogp, b, nullptr, &packed);
        EXPECT(plain.xsy == fast.xsy && plain.xs == fast.xs, "packed counts: %d samples in %d classes, condition %zu, "
               "feature %lld", shape.n, shape.classes, k, (long long)f);
      }
    EXPECT(std::all_of(b.packed_table.begin(), b.packed_table.end(), [](uint64_t v) { return v == 0; }),
           "packed counts: tables left zeroed (%d samples)", shape.n);
  }
}

// The GPU engine builds S's codes and n(s, y) on the device (condition_on): the same tables as
// the host's, on byte and 16-bit codes, dense and sparse, with few classes (shared-memory
// counts) and many (n(s, y) of 60 x 300 cells counted in global memory), and the same
// selections as the CPU engine's.
void condition_tests(const GpuStatus& gpu) {
  if (gpu.devices.empty()) return;
  const int32_t n = 3000;
  for (int32_t classes : {3, 60}) {
    std::vector<int32_t> y(n);
    for (int32_t i = 0; i < n; ++i) y[i] = (i * 7 + i / 13) % classes;
    const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
    const PlogpTable plogp(n);
    std::vector<std::vector<int32_t>> v(6, std::vector<int32_t>(n));
    std::vector<double> sparse_x;
    std::vector<int32_t> sparse_i, sparse_p(1, 0);
    for (int32_t i = 0; i < n; ++i) {
      v[0][i] = (i * 7) % 16;
      v[1][i] = (y[i] + (i % 5 == 0 ? i % 3 : 0)) % 16;  // informative
      v[2][i] = i % 2 ? 0 : (i * 13) % 11;
      v[3][i] = (i * 17 + y[i]) % 300;  // 300 levels: 16-bit codes for a matrix holding it
      v[4][i] = (y[i] * 5 + i % 4) % 300;
      v[5][i] = 3;
    }
    for (size_t f = 0; f < v.size(); ++f) {
      for (int32_t i = 0; i < n; ++i)
        if (v[f][i] != 0 && (i + int32_t(f)) % 3 != 0) {  // a third of each column dropped: a sparse base code
          sparse_i.push_back(i);
          sparse_x.push_back(v[f][i]);
        }
      sparse_p.push_back(int32_t(sparse_i.size()));
    }
    std::vector<CodeMatrix> matrices;
    for (size_t p : {size_t(3), v.size()}) {  // byte codes; 16-bit codes
      std::vector<ColumnSource> cols(p);
      for (size_t f = 0; f < p; ++f) cols[f].categorical = v[f].data();
      matrices.push_back(encode_dense(cols, layout, 8, 2));
    }
    matrices.push_back(encode_sparse(sparse_i.data(), sparse_p.data(), sparse_x.data(), int64_t(v.size()), layout, 16, 2));
    // Codes sent while they are encoded (CodeUpload): adopted by the engine when they are its
    // byte codes, left aside when the matrix turns out 16-bit.
    for (size_t p : {size_t(3), v.size()}) {
      std::vector<ColumnSource> cols(p);
      for (size_t f = 0; f < p; ++f) cols[f].categorical = v[f].data();
      std::unique_ptr<CodeUpload> upload = start_code_upload(0, n, int64_t(p), 3);
      EXPECT(upload != nullptr, "start_code_upload refused %zu features", p);
      if (!upload) continue;
      const CodeMatrix m = encode_dense(cols, layout, 8, 3, nullptr,
                                        [&](const uint8_t* codes, int64_t first, int64_t last, int worker) {
                                          upload->send(codes, first, last, worker);
                                        });
      GpuOptions options;
      options.devices.push_back(0);  // see jim_tie_tests
      options.preloaded = upload.get();
      auto g = make_gpu_engine(m, layout, options);
      upload.reset();
      CpuEngine cpu(m, layout, 2);  // an engine runs one selection: its features retire as they are chosen
      const Selection expected = select_features(cpu, options_for(Method::jmi, 3), nullptr);
      const std::string what = std::string("preloaded ") + (m.wide ? "16-bit" : "byte") + " codes";
      same_selection(expected, select_features(*g, options_for(Method::jmi, 3), nullptr), what);
      // An upload nothing was sent to (an encoder path without on_coded) is not adopted.
      std::unique_ptr<CodeUpload> idle = start_code_upload(0, n, m.n_features, 1);
      options.preloaded = idle.get();
      auto unsent = make_gpu_engine(m, layout, options);
      same_selection(expected, select_features(*unsent, options_for(Method::jmi, 3), nullptr), "unsent " + what);
    }
    matrices.push_back(encode_sparse(sparse_i.data(), sparse_p.data(), sparse_x.data(), int64_t(v.size()), layout, 300, 2));
    for (const CodeMatrix& m : matrices) {
      const std::string what = std::string(m.sparse ? "sparse" : "dense") + (m.wide ? " 16-bit" : " bytes") + ", " +
                               std::to_string(classes) + " classes";
      GpuOptions options;
      options.devices.push_back(0);  // see jim_tie_tests
      auto g = make_gpu_engine(m, layout, options);
      for (int64_t f = 0; f < m.n_features; ++f) {
        const Conditioning ref = Conditioning::on_feature(m, layout, f, plogp);
        const Conditioning s = g->condition_on(f);
        EXPECT(s.resident_feature == f && s.codes.empty() && s.levels == ref.levels &&
                   s.class_counts == ref.class_counts && s.counts == ref.counts && s.class_terms == ref.class_terms &&
                   s.total_term == ref.total_term,
               "condition_on: %s, feature %lld: tables differ from the host's", what.c_str(), (long long)f);
      }
      const int64_t k = std::min<int64_t>(5, m.n_features);
      for (Method method : {Method::jmi, Method::mrmr, Method::jim, Method::jmi3, Method::cmim}) {
        CpuEngine cpu(m, layout, 2);
        const Selection ref = select_features(cpu, options_for(method, k), nullptr);
        auto gm = make_gpu_engine(m, layout, options);
        same_selection(ref, select_features(*gm, options_for(method, k), nullptr),
                       "condition_on: " + what + " " + name_of(method));
        if (method == Method::jmi3) continue;  // its joint conditions are built on the host from the codes
        // The engine says it no longer reads the host's code arrays: it selects the same with them freed.
        CodeMatrix copy = m;
        auto freed = make_gpu_engine(copy, layout, options);
        EXPECT(!freed->reads_host_codes(), "reads_host_codes: %s", what.c_str());
        RowVector<uint8_t>().swap(copy.codes8);
        RowVector<uint16_t>().swap(copy.codes16);
        std::vector<int32_t>().swap(copy.entry_row);
        same_selection(ref, select_features(*freed, options_for(method, k), nullptr),
                       "host codes freed: " + what + " " + name_of(method));
      }
    }
  }
}

int main(int argc, char** argv) {
  const GpuStatus gpu = gpu_status();
  // One group of tests alone (`test_core pairs`, ...), for short runs on a GPU host.
  const std::pair<const char*, std::function<void()>> groups[] = {
      {"pairs", [&] { pair_kernel_tests(gpu); }},  // the GPU pair kernels against the CPU
      {"knn", [&] { knn_tests(gpu); }},             // CPU against brute force, GPU against CPU
      {"batched", [&] { batched_tests(gpu); }},     // the selections on subsamples
      {"interactions", [&] { interaction_tests(gpu); }},  // the interaction search, CPU and GPU
  };
  for (const auto& group : groups)
    if (argc > 1 && std::string(argv[1]) == group.first) {
      group.second();
      std::printf("%d passed, %d failed\n", checks - failures, failures);
      return failures ? 1 : 0;
    }
  // "selection": only the selection engines (the GPU's against the CPU's), not the other jobs.
  const bool selection_only = argc > 1 && std::string(argv[1]) == "selection";
  encode_tests();
  small_category_tests();
  packed_count_tests();
  shrink_tests();
  collector_tests();
  jim_tie_tests(gpu);
  condition_tests(gpu);
  std::printf("GPU: %s\n", gpu.devices.empty() ? gpu.problem.c_str() : gpu.devices[0].name.c_str());
  struct Case { uint32_t seed; int32_t n, p, classes; double zeros; int nbins; };
  const Case cases[] = {{1, 60, 40, 3, 0.3, 8}, {2, 300, 120, 12, 0.9, 16}, {3, 1000, 50, 2, 0.5, 64},
                        {4, 25, 30, 20, 0.2, 4}, {5, 2000, 200, 5, 0.97, 64}, {6, 500, 80, 4, -1, 64},
                        {7, 3000, 60, 3, -1, 16}, {8, 4000, 60, 3, 0.975, 16}, {9, 5000, 40, 6, 0.99, 8},
                        // CMI's joint condition gets thousands of mixed states: the CPU counts
                        // state by state, the GPU's tables outgrow shared memory
                        {10, 20000, 16, 2, -1, 64},
                        // Dense byte codes of at most 16 levels with 16 features a multiprocessor
                        // or more are counted from bit planes on the tensor cores (joint_counts.cu,
                        // plane_counts_kernel); 32 levels with few features stay on the atomics
                        {11, 700, 2200, 7, -1, 16}, {12, 1500, 30, 5, 0.4, 32}};
  for (const Case& c : cases) {
    Data d = make_data(c.seed, c.n, c.p, c.classes, c.zeros);
    ClassLayout layout = ClassLayout::from_labels(d.y.data(), d.n, d.classes);
    CodeMatrix dense = encode(d, layout, false, c.nbins), sparse = encode(d, layout, true, c.nbins);
    const std::vector<int32_t> y(d.y);

    // I(X;Y), then I(X,S;Y) and I(X;Y|S) = I(X,S;Y) - I(S;Y), against the double reference.
    CpuEngine engine(dense, layout, 2);
    const std::vector<double> mi = mi_scores(engine);
    for (int64_t f = 0; f < dense.n_features; ++f)
      EXPECT(std::fabs(mi[f] - mi_reference(column_codes(dense, layout, f), y)) < 1e-9, "case %u: I(X%lld;Y)",
             c.seed, (long long)f);
    // infotheo's estimators: the same engines with another table of terms; dense, sparse and
    // every thread count (and the GPU) agree bitwise.
    for (Estimator e : {Estimator::miller_madow, Estimator::schurmann_grassberger}) {
      CpuEngine one(dense, layout, 1, nullptr, CpuEngine::kSliceEntries, e);
      CpuEngine three(sparse, layout, 3, nullptr, CpuEngine::kSliceEntries, e);
      const std::vector<double> est = mi_scores(one);
      EXPECT(mi_scores(three) == est, "case %u: estimator %d dense 1 thread vs sparse 3", c.seed, int(e));
      for (int64_t f = 0; f < dense.n_features; ++f)
        EXPECT(std::fabs(est[f] - estimated_mi_reference(column_codes(dense, layout, f), y, e)) < 1e-9,
               "case %u: estimator %d I(X%lld;Y)", c.seed, int(e), (long long)f);
      if (!gpu.devices.empty()) {
        GpuOptions options;
        options.devices = {0};
        EXPECT(mi_scores(*make_gpu_engine(sparse, layout, options, e)) == est, "case %u: gpu estimator %d", c.seed,
               int(e));
      }
    }
    // shrink, table by table: dense and sparse codes and every thread count agree bitwise, and
    // the estimates stay within the plug-in's bounds of sense (0 <= H(X) <= log2 of its levels).
    {
      const PlogpTable shrink(layout.n_samples, Estimator::shrink);
      const PairData a = PairData::of(dense, layout, shrink, PairMeasure::mutual, 1);
      const PairData b = PairData::of(sparse, layout, shrink, PairMeasure::mutual, 3);
      EXPECT(a.sums.relevance == b.sums.relevance && a.sums.x_terms == b.sums.x_terms,
             "case %u: shrink sums dense vs sparse", c.seed);
      for (int64_t f = 0; f < dense.n_features; ++f) {
        const double h = fixed_to_bits(a.constants.plogp_n - a.sums.x_terms[f], layout.n_samples);
        EXPECT(h >= 0 && h <= std::log2(double(dense.levels[f])) + 1e-12, "case %u: shrink H(X%lld) = %g", c.seed,
               (long long)f, h);
      }
    }
    const int64_t s = 1;
    const Conditioning cond = Conditioning::on_feature(dense, layout, s, engine.plogp());
    const std::vector<double> joint_mi = conditional_scores(engine, cond, Method::jmi);
    const std::vector<double> cond_mi = conditional_scores(engine, cond, Method::cmi);
    const std::vector<int64_t> sc = column_codes(dense, layout, s);
    for (int64_t f = 0; f < 6 && f < dense.n_features; ++f) {
      std::vector<int64_t> joint = column_codes(dense, layout, f);
      for (size_t i = 0; i < joint.size(); ++i) joint[i] = joint[i] * 70000 + sc[i];
      const double ref = mi_reference(joint, y);
      EXPECT(std::fabs(joint_mi[f] - ref) < 1e-9, "case %u: I(X%lld,S;Y)", c.seed, (long long)f);
      EXPECT(std::fabs(cond_mi[f] - (ref - mi_reference(sc, y))) < 1e-9, "case %u: I(X%lld;Y|S)", c.seed, (long long)f);
    }

    // Normalised I(X;Y) against the double references; JIM's first step against praznik's G(X;Y).
    std::map<Normalization, std::vector<double>> normalized;
    for (Normalization how : kNormalizations) {
      normalized[how] = mi_scores(engine, how);
      for (int64_t f = 0; f < dense.n_features; ++f)
        EXPECT(std::fabs(normalized[how][f] - normalized_reference(how, column_codes(dense, layout, f), y)) < 1e-9,
               "case %u: normalisation %d of I(X%lld;Y)", c.seed, int(how), (long long)f);
    }
    {
      CpuEngine jim(dense, layout, 2);
      const Selection first = select_features(jim, options_for(Method::jim, 1), nullptr);
      double best = 0;
      for (int64_t f = 0; f < dense.n_features; ++f) best = std::max(best, gini_reference(column_codes(dense, layout, f), y));
      EXPECT(first.features.size() == 1 &&
                 std::fabs(first.scores[0] - gini_reference(column_codes(dense, layout, first.features[0]), y)) < 1e-9 &&
                 first.scores[0] > best - 1e-9,
             "case %u: JIM's first feature has the highest G(X;Y)", c.seed);
    }

    const int64_t k = std::min<int64_t>(12, c.p);
    std::map<Method, Selection> reference;
    for (Method method : kMethods) {
      CpuEngine cpu1(dense, layout, 1), cpu3(dense, layout, 3), cpu_sparse(sparse, layout, 2);
      const Selection ref = select_features(cpu1, options_for(method, k), nullptr);
      reference[method] = ref;
      same_selection(ref, select_features(cpu3, options_for(method, k), nullptr), "threads 1 vs 3");
      same_selection(ref, select_features(cpu_sparse, options_for(method, k), nullptr), "dense vs sparse");
      const bool gini = method == Method::jim;  // JIM's first score is the impurity gain G(X;Y)
      EXPECT(!ref.features.empty() && (gini || ref.scores[0] == mi[ref.features[0]]), "case %u: first score is I(X;Y)",
             c.seed);
      CpuEngine forced(dense, layout, 2);
      const Selection with_fixed = select_features(forced, options_for(method, k, {7, 3}), nullptr);
      EXPECT(with_fixed.features.size() >= 2 && with_fixed.features[0] == 7 && with_fixed.features[1] == 3 &&
             (gini || with_fixed.scores[0] == mi[7]), "case %u: fixed features come first", c.seed);
    }
    int slice_calls = 0;
    bool fractions_ok = true;  // within each pass: strictly between 0 and 1, increasing
    double last_done = 0;
    CpuEngine sliced(dense, layout, 2, [&](double done) {
      ++slice_calls;
      fractions_ok = fractions_ok && done > 0 && done < 1;
      last_done = done;
    }, dense.n_entries() / 7 + 1);
    const Selection& jmi = reference[Method::jmi];
    same_selection(jmi, select_features(sliced, options_for(Method::jmi, k), nullptr), "sliced steps");
    EXPECT(slice_calls >= 5 * int(jmi.features.size()), "between_slices ran %d times", slice_calls);
    EXPECT(fractions_ok && last_done > 0.5, "between_slices fractions in (0, 1), the last %g", last_done);
    if (dense.max_levels() <= 64 && dense.n_features * dense.n_samples <= 200000)
      pair_tests(c.seed, dense, sparse, layout, y, gpu);
    if (gpu.devices.empty()) continue;
    for (const CodeMatrix* m : {&dense, &sparse}) {
      for (int64_t limit : {int64_t(0), int64_t(2000)}) {
        GpuOptions options;
        options.devices = {0};
        options.memory_limit = limit;
        for (Method method : kMethods) {
          auto g = make_gpu_engine(*m, layout, options);
          same_selection(reference[method], select_features(*g, options_for(method, k), nullptr),
                         std::string(m->sparse ? "gpu sparse " : "gpu dense ") + name_of(method) + " case " +
                             std::to_string(c.seed) + " limit " + std::to_string(limit));
        }
        auto g = make_gpu_engine(*m, layout, options);
        EXPECT(mi_scores(*g) == mi, "gpu mi_scores differ");
        for (Normalization how : kNormalizations)
          EXPECT(mi_scores(*g, how) == normalized[how], "gpu normalised mi_scores %d differ", int(how));
        EXPECT(conditional_scores(*g, cond, Method::jmi) == joint_mi, "gpu I(X,S;Y) differ");
        EXPECT(conditional_scores(*g, cond, Method::cmi) == cond_mi, "gpu I(X;Y|S) differ");
        if (gpu.devices.size() > 1) {
          options.devices = {0, 1};
          for (Method method : {Method::jmi, Method::cmi, Method::mrmr}) {
            auto g2 = make_gpu_engine(*m, layout, options);
            same_selection(reference[method], select_features(*g2, options_for(method, k), nullptr), "two gpus");
          }
        }
      }
    }
  }
  if (selection_only) {
    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
  }
  discretize_tests(gpu);
  knn_tests(gpu);
  interaction_tests(gpu);
  pair_kernel_tests(gpu);
  text_format_tests();
  batched_tests(gpu);
  std::printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
