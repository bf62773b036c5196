// Selections on subsamples (batched_select.h): each equals a selection on the subsample encoded
// alone, for every thread count, for dense and sparse codes, and on the GPU engine.
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
  std::vector<ColumnSource> cols(d.p);
  for (int32_t j = 0; j < d.p; ++j) cols[j].categorical = d.codes.data() + size_t(j) * d.n;
  const CodeMatrix codes = encode_dense(cols, layout, 2, 2);

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

  // The GPU engine on each subsample's gathered codes equals the CPU, dense and sparse. (One at a
  // time, as the R glue runs them: engines side by side would race on the counting kernel's
  // shared-memory cap, a process-wide setting.)
  if (gpu.devices.empty()) return;
  GpuOptions gpu_options;
  gpu_options.devices = {gpu.devices[0].id};
  const SubsampleEngine on_gpu = [&](const Subsample& sub, int) {
    return make_gpu_engine(sub.codes, sub.layout, gpu_options);
  };
  for (const CodeMatrix* m : {&codes, &sparse}) {
    const std::vector<Selection> cpu = select_on_subsamples(*m, layout, samples, options, 2, nullptr);
    const std::vector<Selection> got = select_on_subsamples(*m, layout, samples, options, 1, nullptr, on_gpu);
    for (size_t t = 0; t < cpu.size(); ++t)
      EXPECT(same(got[t], cpu[t]), "batched: GPU pair %zu (%s) differs from the CPU", t,
             m->sparse ? "sparse" : "dense");
  }
}
