// Selections on subsamples (batched_select.h): each equals a selection on the subsample encoded
// alone, for every thread count, for dense and sparse codes, and on the GPU engine.
#include <algorithm>
#include <random>

#include "check.h"
#include "core/batched_select.h"
#include "core/cpu_engine.h"

using namespace fsgpu;

namespace {

struct Categorical {
  int32_t n = 0, p = 0;
  std::vector<int32_t> y, codes;  // codes column-major, n per feature
};

// Small integer features, the first few tied to the class, some copies (ties), one constant.
Categorical make_data(uint32_t seed, int32_t n, int32_t p, int32_t classes) {
  std::mt19937 rng(seed);
  Categorical d;
  d.n = n;
  d.p = p;
  d.y.resize(n);
  for (int32_t i = 0; i < n; ++i) d.y[i] = i % classes;
  d.codes.resize(size_t(n) * p);
  for (int32_t j = 0; j < p; ++j)
    for (int32_t i = 0; i < n; ++i) {
      int32_t v = static_cast<int32_t>(rng() % 4);
      if (j < 4 && rng() % 3 != 0) v = (d.y[i] + j) % 4;
      d.codes[size_t(j) * n + i] = j == p - 1 ? 7 : v;
    }
  for (int32_t i = 0; i < n; ++i) d.codes[size_t(5) * n + i] = d.codes[size_t(1) * n + i];  // a tie with feature 1
  return d;
}

// All of d encoded as the batched selections take it (2 threads).
CodeMatrix encode_all(const Categorical& d, const ClassLayout& layout) {
  std::vector<ColumnSource> cols(d.p);
  for (int32_t j = 0; j < d.p; ++j) cols[j].categorical = d.codes.data() + size_t(j) * d.n;
  return encode_dense(cols, layout, 2, 2);
}

// The rows `rows` of d encoded on their own, with their own class layout (classes renumbered).
Subsample encode_alone(const Categorical& d, const std::vector<int32_t>& rows, int32_t classes) {
  std::vector<int32_t> present(classes, 0), renumber(classes, -1), y;
  for (int32_t r : rows) present[d.y[r]] = 1;
  int32_t k = 0;
  for (int32_t c = 0; c < classes; ++c)
    if (present[c]) renumber[c] = k++;
  for (int32_t r : rows) y.push_back(renumber[d.y[r]]);
  Subsample out;
  out.layout = ClassLayout::from_labels(y.data(), static_cast<int32_t>(rows.size()), k);
  std::vector<int32_t> values(rows.size() * size_t(d.p));
  std::vector<ColumnSource> cols(d.p);
  for (int32_t j = 0; j < d.p; ++j) {
    for (size_t i = 0; i < rows.size(); ++i) values[size_t(j) * rows.size() + i] = d.codes[size_t(j) * d.n + rows[i]];
    cols[j].categorical = values.data() + size_t(j) * rows.size();
  }
  out.codes = encode_dense(cols, out.layout, 2, 1);
  return out;
}

bool same(const Selection& a, const Selection& b) { return a.features == b.features && a.scores == b.scores; }

}  // namespace

void batched_tests(const GpuStatus& gpu) {
  const int32_t classes = 3;
  const Categorical d = make_data(11, 90, 24, classes);
  const ClassLayout layout = ClassLayout::from_labels(d.y.data(), d.n, classes);
  const CodeMatrix codes = encode_all(d, layout);

  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> samples;
  for (int r = 0; r < 7; ++r) {
    std::vector<int32_t> rows;
    for (int32_t i = 0; i < d.n; ++i)
      if (rng() % 2) rows.push_back(i);
    if (r == 6) rows = {0, 3, 6, 9, 12, 1, 4};  // unsorted; one class (2) absent
    samples.push_back(rows);
  }
  std::vector<SelectionOptions> options(4);
  const Method methods[] = {Method::jmi, Method::mrmr, Method::cmi, Method::jmi3};
  for (int m = 0; m < 4; ++m) {
    options[m].method = methods[m];
    options[m].k = 6;
    options[m].min_score = never_negative(methods[m]) ? 0 : -1e300;
  }

  std::vector<Selection> expected;
  for (const SelectionOptions& o : options)
    for (const auto& rows : samples) {
      const Subsample alone = encode_alone(d, rows, classes);
      CpuEngine engine(alone.codes, alone.layout, 1);
      expected.push_back(select_features(engine, o, nullptr));
    }
  for (int threads : {1, 2, 3, 64}) {
    int rounds = 0;
    const std::vector<Selection> got =
        select_on_subsamples(codes, layout, samples, options, threads, [&](double) { ++rounds; });
    EXPECT(got.size() == expected.size(), "batched: %zu selections", got.size());
    for (size_t t = 0; t < got.size() && t < expected.size(); ++t)
      EXPECT(same(got[t], expected[t]), "batched: threads %d, pair %zu differs from the subsample alone", threads, t);
    EXPECT(rounds > 0 || threads >= 64, "batched: no checkpoint between rounds (threads %d)", threads);
  }

  // Subsamples too big to gather one a thread (a limit of 0 bytes here): one after another,
  // each engine on both threads.
  {
    const Categorical wide = make_data(12, 40, 2053, 2);
    const ClassLayout wide_layout = ClassLayout::from_labels(wide.y.data(), wide.n, 2);
    const CodeMatrix wide_codes = encode_all(wide, wide_layout);
    std::vector<std::vector<int32_t>> halves(2);  // rows 0-19 and 20-39, both classes in each
    for (int32_t i = 0; i < wide.n; ++i) halves[i / 20].push_back(i);
    int rounds = 0;
    const std::vector<Selection> got =
        select_on_subsamples(wide_codes, wide_layout, halves, {options[0]}, 2, [&](double) { ++rounds; }, nullptr, 0);
    for (size_t t = 0; t < halves.size(); ++t) {
      const Subsample alone = encode_alone(wide, halves[t], 2);
      CpuEngine engine(alone.codes, alone.layout, 1);
      EXPECT(got.size() == halves.size() && same(got[t], select_features(engine, options[0], nullptr)),
             "batched, one subsample after another: subsample %zu differs from the subsample alone", t);
    }
    EXPECT(rounds == 1, "batched, one subsample after another: %d checkpoints between 2 subsamples", rounds);
  }

  // Sparse codes of the same values (zeros as the base) select as the dense ones.
  std::vector<int32_t> i_rows, p_start(1, 0);
  std::vector<double> values, dense(size_t(d.n) * d.p);
  for (int32_t j = 0; j < d.p; ++j) {
    for (int32_t i = 0; i < d.n; ++i) {
      const double v = j == d.p - 1 ? 0 : d.codes[size_t(j) * d.n + i] % 2 * (j % 3 + 1);
      dense[size_t(j) * d.n + i] = v;
      if (v != 0) {
        i_rows.push_back(i);
        values.push_back(v);
      }
    }
    p_start.push_back(static_cast<int32_t>(i_rows.size()));
  }
  const CodeMatrix sparse = encode_sparse(i_rows.data(), p_start.data(), values.data(), d.p, layout, 3, 2);
  std::vector<ColumnSource> numeric(d.p);
  for (int32_t j = 0; j < d.p; ++j) numeric[j].numeric = dense.data() + size_t(j) * d.n;
  const CodeMatrix dense_codes = encode_dense(numeric, layout, 3, 2);
  const std::vector<Selection> from_sparse = select_on_subsamples(sparse, layout, samples, options, 2, nullptr);
  const std::vector<Selection> from_dense = select_on_subsamples(dense_codes, layout, samples, options, 2, nullptr);
  for (size_t t = 0; t < from_sparse.size(); ++t)
    EXPECT(same(from_sparse[t], from_dense[t]), "batched: sparse pair %zu differs from dense", t);

  bool refused = false;
  try {
    subsample_of(codes, layout, {1, 2, 1});
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  EXPECT(refused, "batched: a repeated sample is refused");

  // On the GPU: the batched kernel (all subsamples of a criterion at once) for the criteria that
  // condition on the newest feature alone, one engine a subsample for CMI and JMI3 (their
  // fallback); each equals the CPU, dense and sparse, in one group or in groups of two.
  if (gpu.devices.empty()) return;
  GpuOptions gpu_options;
  gpu_options.devices = {gpu.devices[0].id};
  std::vector<SelectionOptions> gpu_methods = options;  // jmi, mrmr, cmi, jmi3
  for (Method m : {Method::mim, Method::cmim, Method::disr, Method::njmim, Method::icap, Method::jmim,
                   Method::betagamma}) {
    SelectionOptions o;
    o.method = m;
    o.k = 6;
    o.beta = 0.5;  // BetaGamma: not integral, double keys
    o.gamma = 0.25;
    o.min_score = never_negative(m) ? 0 : -1e300;
    gpu_methods.push_back(o);
  }
  for (const SelectionOptions& o : gpu_methods) {
    const bool batched = o.method != Method::cmi && o.method != Method::jmi3;
    EXPECT(gpu_subsamples_problem(codes, layout, o, gpu_options).empty() == batched,
           "batched: method %d %s be batched", static_cast<int>(o.method), batched ? "should" : "should not");
  }
  // More samples and levels than above: sparse features of at most 64 entries go to
  // sparse_lane_kernel (features 3 and 5: 64 and 65 entries, either side of its limit), the
  // others to count_kernel, whose pairs of more than 32 entries in a subsample take the count
  // tables and the others the warp's match path.
  const Categorical big = make_data(23, 400, 40, 5);
  const ClassLayout big_layout = ClassLayout::from_labels(big.y.data(), big.n, 5);
  std::vector<int32_t> big_rows, big_start(1, 0);
  std::vector<double> big_values;
  for (int32_t j = 0; j < big.p; ++j) {
    for (int32_t i = 0; i < big.n; ++i) {
      const int32_t c = big.codes[size_t(j) * big.n + i];
      if (j == 3 || j == 5) {
        if (i >= 64 + (j == 5)) continue;
      } else if (j == big.p - 1 || (j % 5 == 4 && i % 10 != 0) || (c == 0 && j % 2 == 0) || (j % 2 == 1 && c % 4 != 1)) {
        continue;
      }
      big_rows.push_back(i);
      big_values.push_back(c + 1 + (j % 3) * (i % 2));
    }
    big_start.push_back(static_cast<int32_t>(big_rows.size()));
  }
  const CodeMatrix big_sparse =
      encode_sparse(big_rows.data(), big_start.data(), big_values.data(), big.p, big_layout, 6, 2);
  std::vector<ColumnSource> big_cols(big.p);
  for (int32_t j = 0; j < big.p; ++j) big_cols[j].categorical = big.codes.data() + size_t(j) * big.n;
  const CodeMatrix big_dense = encode_dense(big_cols, big_layout, 2, 2);
  std::vector<std::vector<int32_t>> big_samples;
  for (int r = 0; r < 9; ++r) {
    std::vector<int32_t> rows;
    for (int32_t i = 0; i < big.n; ++i)
      if (rng() % 2) rows.push_back(i);
    if (r == 3) std::shuffle(rows.begin(), rows.end(), rng);  // unsorted
    if (r == 4) {  // class 4 absent
      rows.clear();
      for (int32_t i = 0; i < big.n; ++i)
        if (big.y[i] != 4 && rng() % 3) rows.push_back(i);
    }
    big_samples.push_back(rows);
  }
  // More subsamples than sparse_lane_kernel's block has threads: its threads take two each.
  std::vector<std::vector<int32_t>> many_samples(big_samples);
  while (many_samples.size() < 140) {
    std::vector<int32_t> rows;
    for (int32_t i = 0; i < big.n; ++i)
      if (rng() % 2) rows.push_back(i);
    many_samples.push_back(rows);
  }
  // Dense codes of 12 levels on 90 samples: more cells than dense_count_kernel takes (4 N), so
  // the warp kernel's count tables.
  std::vector<int32_t> many(d.codes.size());
  for (int32_t j = 0; j < d.p; ++j)
    for (int32_t i = 0; i < d.n; ++i) many[size_t(j) * d.n + i] = d.codes[size_t(j) * d.n + i] % 4 * 3 + (i * j) % 3;
  std::vector<ColumnSource> many_cols(d.p);
  for (int32_t j = 0; j < d.p; ++j) many_cols[j].categorical = many.data() + size_t(j) * d.n;
  const CodeMatrix many_levels = encode_dense(many_cols, layout, 2, 2);
  struct Case {
    const CodeMatrix* x;
    const ClassLayout* layout;
    const std::vector<std::vector<int32_t>>* samples;
    const char* name;
  };
  const Case cases[] = {{&codes, &layout, &samples, "dense"},
                        {&sparse, &layout, &samples, "sparse"},
                        {&many_levels, &layout, &samples, "dense, 12 levels"},
                        {&big_dense, &big_layout, &big_samples, "big dense"},
                        {&big_sparse, &big_layout, &big_samples, "big sparse"},
                        {&big_sparse, &big_layout, &many_samples, "big sparse, 140 subsamples"}};
  for (const Case& c : cases) {
    const std::vector<Selection> cpu = select_on_subsamples(*c.x, *c.layout, *c.samples, gpu_methods, 2, nullptr);
    for (int64_t limit : {int64_t(0), int64_t(1)}) {
      GpuOptions o = gpu_options;
      if (limit) {  // room for the codes and two subsamples (plan_batch()'s sizes): groups of two
        const CodeMatrix& x = *c.x;
        const int64_t n = c.layout->n_samples, f = x.n_features, e = x.n_entries();
        const int64_t codes = e * static_cast<int64_t>(x.code_bytes()) + (x.sparse ? e * 4 + (f + 1) * 8 : 0) + f * 4 +
                              n * 8 + (n + 1) * 8;
        const int64_t per_subsample = f * static_cast<int64_t>(sizeof(FeatureState) + 1) + n * 5 +
                                      (c.layout->n_classes + 1) * int64_t(x.max_levels()) * 4 +
                                      static_cast<int64_t>(sizeof(StepRule)) + 64;
        o.memory_limit = codes + 2 * per_subsample + per_subsample / 2;
      }
      int steps = 0;
      const std::vector<Selection> got =
          gpu_select_on_subsamples(*c.x, *c.layout, *c.samples, gpu_methods, o, [&](double) { ++steps; });
      EXPECT(got.size() == cpu.size(), "batched GPU (%s): %zu selections", c.name, got.size());
      EXPECT(steps > 0, "batched GPU (%s): no checkpoint", c.name);
      for (size_t t = 0; t < cpu.size() && t < got.size(); ++t)
        EXPECT(same(got[t], cpu[t]), "batched GPU (%s, groups %s): method %d, subsample %zu differs from the CPU",
               c.name, limit ? "of two" : "all", static_cast<int>(gpu_methods[t / c.samples->size()].method),
               t % c.samples->size());
    }
  }
}
