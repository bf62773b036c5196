// Interaction search: MDFS's discretization draws, the CPU engine against a direct computation
// of the counts and gains, thread counts, contrast variables, codes computed by blocks of columns,
// and the GPU against the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "core/interaction_codes.h"
#include "core/interactions.h"

using namespace fsgpu;

namespace {

struct Case {
  int32_t n_objects, n_classes, n_levels;
  int64_t n_vars;
  double missing;  // fraction of missing codes
  uint32_t seed;
};

struct Data {
  ClassLayout layout;
  std::vector<int32_t> labels;
  std::vector<int8_t> codes;  // [var][sample]
};

Data make_data(const Case& c) {
  std::mt19937 g(c.seed);
  Data d;
  d.labels.resize(c.n_objects);
  for (int32_t s = 0; s < c.n_objects; ++s) d.labels[s] = s < c.n_classes ? s : int32_t(g() % c.n_classes);
  d.layout = ClassLayout::from_labels(d.labels.data(), c.n_objects, c.n_classes);
  d.codes.resize(size_t(c.n_vars) * c.n_objects);
  for (int64_t v = 0; v < c.n_vars; ++v)
    for (int32_t s = 0; s < c.n_objects; ++s) {
      int8_t code = int8_t(g() % c.n_levels);
      // Some variables follow the class, so that gains differ.
      if (v % 3 == 0 && g() % 2) code = int8_t(d.labels[s] % c.n_levels);
      if (std::uniform_real_distribution<double>(0, 1)(g) < c.missing) code = -1;
      d.codes[v * c.n_objects + s] = code;
    }
  return d;
}

InteractionBits bits_of(const Case& c, const Data& d, int threads) {
  return build_interaction_bits(d.layout, c.n_vars, c.n_levels,
                                [&](int64_t v, int8_t* out) {
                                  std::copy_n(d.codes.begin() + v * c.n_objects, c.n_objects, out);
                                },
                                threads);
}

// The gains of one tuple straight from the definition: count the objects valid in every variable
// of the tuple, add p_c to each cell, sum over an axis for the reduced table.
std::vector<double> direct_gains(const Case& c, const Data& d, const std::vector<int32_t>& tuple, double xi) {
  const int32_t k = static_cast<int32_t>(tuple.size()), m = c.n_levels;
  int32_t cells = 1;
  for (int32_t i = 0; i < k; ++i) cells *= m;
  std::vector<double> size(c.n_classes, 0);
  for (int32_t s = 0; s < c.n_objects; ++s) size[d.labels[s]] += 1;
  const double smallest = *std::min_element(size.begin(), size.end());
  std::vector<double> table(size_t(cells) * c.n_classes, 0);
  for (int32_t s = 0; s < c.n_objects; ++s) {
    int32_t cell = 0, weight = 1;
    bool ok = true;
    for (int32_t i = 0; i < k; ++i, weight *= m) {
      const int8_t code = d.codes[tuple[i] * c.n_objects + s];
      ok &= code >= 0;
      cell += code * weight;
    }
    if (ok) table[size_t(d.labels[s]) * cells + cell] += 1;
  }
  for (int32_t y = 0; y < c.n_classes; ++y)
    for (int32_t cell = 0; cell < cells; ++cell) table[size_t(y) * cells + cell] += size[y] / smallest * xi;
  auto cond_entropy = [&](const std::vector<double>& t, int32_t n_cells) {
    double h = 0;
    for (int32_t cell = 0; cell < n_cells; ++cell) {
      double total = 0;
      for (int32_t y = 0; y < c.n_classes; ++y) total += t[size_t(y) * n_cells + cell];
      for (int32_t y = 0; y < c.n_classes; ++y) {
        const double n = t[size_t(y) * n_cells + cell];
        h -= n * std::log2(n / total);
      }
    }
    return h;
  };
  const double full = cond_entropy(table, cells);
  std::vector<double> gains(k);
  for (int32_t axis = 0, weight = 1; axis < k; ++axis, weight *= m) {
    const int32_t reduced_cells = cells / m;
    std::vector<double> reduced(size_t(reduced_cells) * c.n_classes, 0);
    for (int32_t y = 0; y < c.n_classes; ++y)
      for (int32_t cell = 0; cell < cells; ++cell) {
        const int32_t low = cell % weight, high = cell / weight / m;
        reduced[size_t(y) * reduced_cells + low + high * weight] += table[size_t(y) * cells + cell];
      }
    gains[axis] = cond_entropy(reduced, reduced_cells) - full;
  }
  return gains;
}

void check_against_direct(const Case& c, int32_t k, int64_t n_real) {
  const Data d = make_data(c);
  const InteractionBits bits = bits_of(c, d, 2);
  const double xi = 0.25;
  const GainTables tables(bits, xi);
  InteractionTask task;
  task.dimensions = k;
  task.n_real = n_real;
  task.with_tuples = true;
  const InteractionBest got = cpu_interactions(bits, tables, task, 3, nullptr);
  // The direct maximum per variable over the same tuples.
  std::vector<double> best(c.n_vars, -INFINITY);
  std::vector<int32_t> tuple(k);
  std::function<void(int32_t, int32_t, int64_t)> walk = [&](int32_t pos, int32_t from, int64_t limit) {
    if (pos == k) {
      const std::vector<double> g = direct_gains(c, d, tuple, xi);
      const bool contrast = tuple[k - 1] >= n_real;
      for (int32_t i = contrast ? k - 1 : 0; i < k; ++i) best[tuple[i]] = std::max(best[tuple[i]], g[i]);
      return;
    }
    for (int32_t v = from; v < limit; ++v) {
      tuple[pos] = v;
      walk(pos + 1, v + 1, limit);
    }
  };
  walk(0, 0, n_real);
  for (int64_t cv = n_real; cv < c.n_vars; ++cv) {
    tuple[k - 1] = static_cast<int32_t>(cv);
    std::function<void(int32_t, int32_t)> prefix = [&](int32_t pos, int32_t from) {
      if (pos == k - 1) {
        const std::vector<double> g = direct_gains(c, d, tuple, xi);
        best[cv] = std::max(best[cv], g[k - 1]);
        return;
      }
      for (int32_t v = from; v < n_real; ++v) {
        tuple[pos] = v;
        prefix(pos + 1, v + 1);
      }
    };
    prefix(0, 0);
  }
  for (int64_t v = 0; v < c.n_vars; ++v)
    EXPECT(std::fabs(got.gain[v] - best[v]) <= 1e-7 * std::max(1.0, std::fabs(best[v])),
           "k=%d m=%d var %lld: engine %.12g, direct %.12g", k, c.n_levels, (long long)v, got.gain[v], best[v]);
  // The reported tuple holds the variable and reaches its gain.
  for (int64_t v = 0; v < c.n_vars; ++v) {
    std::vector<int32_t> t(got.tuple.begin() + v * k, got.tuple.begin() + (v + 1) * k);
    int32_t pos = -1;
    for (int32_t i = 0; i < k; ++i) pos = t[i] == v ? i : pos;
    EXPECT(pos >= 0, "var %lld not in its tuple", (long long)v);
    if (pos >= 0) {
      const double g = direct_gains(c, d, t, xi)[pos];
      EXPECT(std::fabs(g - best[v]) <= 1e-7 * std::max(1.0, std::fabs(best[v])), "tuple of var %lld", (long long)v);
    }
  }
  // Independent of the thread count, bit for bit.
  const InteractionBest one = cpu_interactions(bits, tables, task, 1, nullptr);
  EXPECT(one.gain == got.gain && one.tuple == got.tuple, "k=%d: 1 thread differs from 3", k);
}

bool same_hits(const std::vector<InteractionHit>& a, const std::vector<InteractionHit>& b) {
  if (a.size() != b.size()) return false;
  for (size_t h = 0; h < a.size(); ++h)
    if (hit_before(a[h], b[h]) || hit_before(b[h], a[h]) || a[h].gain != b[h].gain ||
        a[h].discretization != b[h].discretization)
      return false;
  return true;
}

// The collected gains (MDFS's interesting tuples) against the direct gains of every tuple of
// real variables: the rows above the threshold, filtered by interesting variables, in order;
// independent of the thread count; contrast tuples never listed; too many is an error.
void collected_against_direct(const Case& c, int32_t k, int64_t n_real) {
  const Data d = make_data(c);
  const InteractionBits bits = bits_of(c, d, 2);
  const GainTables tables(bits, 0.25);
  // The direct gains of every real tuple, in lexicographic order.
  std::vector<std::vector<int32_t>> tuples;
  std::vector<std::vector<double>> gains;
  std::vector<int32_t> tuple(k);
  std::function<void(int32_t, int32_t)> walk = [&](int32_t pos, int32_t from) {
    if (pos == k) {
      tuples.push_back(tuple);
      gains.push_back(direct_gains(c, d, tuple, 0.25));
      return;
    }
    for (int32_t v = from; v < n_real; ++v) {
      tuple[pos] = v;
      walk(pos + 1, v + 1);
    }
  };
  walk(0, 0);
  std::vector<double> sorted;
  for (const auto& g : gains) sorted.insert(sorted.end(), g.begin(), g.end());
  std::sort(sorted.begin(), sorted.end());
  // Thresholds between two gains (so that rounding cannot move a gain across), and none.
  const double between = (sorted[sorted.size() * 2 / 3] + sorted[sorted.size() * 2 / 3 + 1]) / 2;
  for (double threshold : {-double(INFINITY), between}) {
    for (int filter = 0; filter < 3; ++filter) {
      InteractionTask task;
      task.dimensions = k;
      task.n_real = n_real;
      task.collect = true;
      task.threshold = threshold;
      if (filter > 0) {
        task.interesting.assign(size_t(n_real), 0);
        task.interesting[1] = task.interesting[2] = task.interesting[n_real - 1] = 1;
        task.require_all = filter == 2;
      }
      const InteractionBest got = cpu_interactions(bits, tables, task, 3, nullptr);
      size_t row = 0;
      bool ok = true;
      for (size_t t = 0; t < tuples.size(); ++t) {
        if (!task.collects(tuples[t].data())) continue;
        for (int32_t i = 0; i < k; ++i) {
          if (!(gains[t][i] > threshold)) continue;
          ok = ok && row < got.hits.size() && got.hits[row].var == tuples[t][i] &&
               std::equal(tuples[t].begin(), tuples[t].end(), got.hits[row].tuple) &&
               std::fabs(got.hits[row].gain - gains[t][i]) <= 1e-7 * std::max(1.0, std::fabs(gains[t][i]));
          ++row;
        }
      }
      EXPECT(ok && row == got.hits.size(), "k=%d m=%d filter %d threshold %g: %zu rows, %zu expected", k,
             c.n_levels, filter, threshold, got.hits.size(), row);
      const InteractionBest one = cpu_interactions(bits, tables, task, 1, nullptr);
      EXPECT(same_hits(one.hits, got.hits), "k=%d: collected gains differ between 1 and 3 threads", k);
      // The bests are those of the search that does not collect.
      InteractionTask plain = task;
      plain.collect = false;
      EXPECT(cpu_interactions(bits, tables, plain, 2, nullptr).gain == got.gain, "k=%d: collecting changed the bests",
             k);
      if (threshold == -INFINITY && filter == 0) {
        task.max_hits = static_cast<int64_t>(got.hits.size()) - 1;
        bool threw = false;
        try {
          cpu_interactions(bits, tables, task, 2, nullptr);
        } catch (const std::runtime_error&) {
          threw = true;
        }
        EXPECT(threw, "k=%d: more gains than max_hits did not throw", k);
      }
    }
  }
}

// Merging discretizations: per (tuple, variable) the larger gain, the earlier on ties.
void merge_discretizations() {
  auto hit = [](int32_t a, int32_t b, int32_t var, double gain, int32_t d) {
    InteractionHit h;
    h.tuple[0] = a;
    h.tuple[1] = b;
    h.var = var;
    h.gain = gain;
    h.discretization = d;
    return h;
  };
  std::vector<InteractionHit> into = {hit(0, 1, 0, 2.0, 0), hit(0, 1, 1, 3.0, 0), hit(0, 3, 3, 1.0, 0)};
  merge_discretization_hits(into, {hit(0, 1, 1, 3.0, 1), hit(0, 2, 0, 5.0, 1), hit(0, 3, 3, 1.5, 1)});
  const std::vector<InteractionHit> expected = {hit(0, 1, 0, 2.0, 0), hit(0, 1, 1, 3.0, 0), hit(0, 2, 0, 5.0, 1),
                                                hit(0, 3, 3, 1.5, 1)};
  EXPECT(same_hits(into, expected), "merged discretizations");
}

void discretization_draws() {
  // Thresholds at sorted positions of MDFS's draws (divisions 2, range 0.5, 100 distinct values):
  // levels hold positions 0..done0, done0+1..done1, the rest.
  struct Draw {
    uint32_t seed, discretization, variable;
    int32_t done0, done1;
  } draws[] = {{0, 0, 0, 32, 73}, {0, 0, 2, 21, 68}, {0, 1, 0, 24, 71}, {12345, 0, 0, 41, 62},
               {2147483647u, 1, 2, 25, 67}};
  std::vector<double> values(100), sorted;
  for (int i = 0; i < 100; ++i) values[i] = 99 - i;  // unsorted on purpose
  std::vector<int8_t> codes(100);
  for (const Draw& d : draws) {
    mdfs_discretize(values.data(), 100, 2, 0.5, d.seed, d.discretization, d.variable, sorted, codes.data());
    int count[3] = {0, 0, 0};
    for (int8_t code : codes) ++count[code];
    EXPECT(count[0] == d.done0 + 1 && count[1] == d.done1 - d.done0 && count[2] == 99 - d.done1,
           "seed %u: levels %d %d %d", d.seed, count[0], count[1], count[2]);
  }
  // Missing values stay missing; range 0 is equal frequency; ties go to the lower level.
  std::vector<double> tied = {1, 1, 1, 1, 2, 2, NAN, 3, 3, 3};
  std::vector<int8_t> tc(tied.size());
  mdfs_discretize(tied.data(), int32_t(tied.size()), 1, 0.0, 7, 0, 0, sorted, tc.data());
  EXPECT(tc[6] == -1 && tc[0] == 0 && tc[3] == 0 && tc[9] == 1, "ties and missing");
}

// Codes computed by blocks of columns (interaction_block_codes) equal those of the definition,
// contrast variables discretized after permuting their values; the engines searching the stored
// codes give what they give on the definition's codes (the GPU too, when there is one).
void block_codes(const GpuStatus& gpu, double missing) {
  std::mt19937 g(31);
  const int32_t n_rows = 150, discretizations = 3;
  const int64_t n_columns = 17;
  InteractionCoding coding;
  for (int32_t r = 0; r < n_rows; ++r)
    if (r % 7 != 3) coding.rows.push_back(r);  // objects without a class are left out
  coding.n_real = n_columns;
  for (int32_t j = 0; j < 30; ++j) coding.contrast_source.push_back(int32_t(g() % n_columns));
  coding.contrast_seed = 4242;
  coding.divisions = 2;
  coding.range = 0.4;
  coding.seed = 77;
  const int32_t n = coding.n_objects();
  const int64_t n_vars = coding.n_vars();
  std::vector<double> values(size_t(n_columns) * n_rows);
  for (double& v : values) {
    v = std::round(std::uniform_real_distribution<double>(0, 20)(g));  // ties
    if (std::uniform_real_distribution<double>(0, 1)(g) < missing) v = NAN;
  }
  // The definition: a contrast variable's values permuted, then discretized with its own draws.
  std::vector<int8_t> expected(size_t(discretizations) * n_vars * n), stored(expected.size(), 99);
  std::vector<double> column(n), scratch;
  std::vector<int32_t> order;
  for (int32_t d = 0; d < discretizations; ++d)
    for (int64_t v = 0; v < n_vars; ++v) {
      if (v >= coding.n_real) coding.contrast_order(v - coding.n_real, order);
      for (int32_t s = 0; s < n; ++s)
        column[s] = values[coding.column_of(v) * n_rows + coding.rows[v < coding.n_real ? s : order[s]]];
      mdfs_discretize(column.data(), n, coding.divisions, coding.range, coding.seed, uint32_t(d), uint32_t(v), scratch,
                      expected.data() + (d * n_vars + v) * n);
    }
  // Uneven blocks, on 1 and 3 threads.
  const int64_t sizes[] = {5, 1, 7, 4};
  for (int64_t first = 0, b = 0; first < n_columns; first += sizes[b++]) {
    const std::vector<int64_t> vars = variables_of_columns(coding, first, sizes[b]);
    std::vector<int8_t> codes(size_t(discretizations) * vars.size() * n), codes1(codes.size());
    interaction_block_codes(coding, values.data() + first * n_rows, n_rows, first, vars, discretizations,
                            codes.data(), 3);
    interaction_block_codes(coding, values.data() + first * n_rows, n_rows, first, vars, discretizations,
                            codes1.data(), 1);
    EXPECT(codes == codes1, "block at %lld: 1 thread differs from 3", (long long)first);
    for (int32_t d = 0; d < discretizations; ++d)
      for (size_t i = 0; i < vars.size(); ++i)
        std::copy_n(codes.begin() + (d * vars.size() + i) * n, n, stored.begin() + (d * n_vars + vars[i]) * n);
  }
  EXPECT(stored == expected, "codes by blocks differ from the definition (missing %g)", missing);
  // The engines on the stored codes.
  std::vector<int32_t> labels(n);
  for (int32_t s = 0; s < n; ++s) labels[s] = s % 2;
  const ClassLayout layout = ClassLayout::from_labels(labels.data(), n, 2);
  GpuOptions options;
  if (!gpu.devices.empty()) options.devices = {gpu.devices[0].id};
  for (int32_t d = 0; d < discretizations; ++d) {
    const InteractionBits bits = build_interaction_bits(
        layout, n_vars, 3, stored_interaction_codes(stored.data(), n, n_vars, d), 2);
    const InteractionBits defined = build_interaction_bits(
        layout, n_vars, 3,
        [&](int64_t v, int8_t* out) { std::copy_n(expected.begin() + (d * n_vars + v) * n, n, out); }, 2);
    EXPECT(bits.bits == defined.bits && bits.valid == defined.valid && bits.level_count == defined.level_count,
           "discretization %d: bitmaps differ", d);
    const GainTables tables(bits, 0.25);
    for (int32_t k = 2; k <= 3; ++k) {
      InteractionTask task;
      task.dimensions = k;
      task.n_real = coding.n_real;
      task.with_tuples = true;
      const InteractionBest cpu = cpu_interactions(bits, tables, task, 2, nullptr);
      const InteractionBest direct = cpu_interactions(defined, GainTables(defined, 0.25), task, 1, nullptr);
      EXPECT(cpu.gain == direct.gain && cpu.tuple == direct.tuple, "k=%d d=%d: stored codes differ", k, d);
      if (gpu.devices.empty()) continue;
      const std::string problem = gpu_interactions_problem(bits, task, options);
      if (!problem.empty()) {
        EXPECT(missing > 0, "GPU refuses k=%d: %s", k, problem.c_str());
        continue;
      }
      const InteractionBest dev = gpu_interactions(bits, tables, task, options, nullptr);
      EXPECT(dev.gain == cpu.gain && dev.tuple == cpu.tuple, "k=%d d=%d: GPU differs on stored codes", k, d);
    }
  }
}

void gpu_matches_cpu(const GpuStatus& gpu) {
  if (gpu.devices.empty()) {
    std::printf("interactions: no GPU, GPU tests skipped\n");
    return;
  }
  GpuOptions options;
  options.devices = {gpu.devices[0].id};
  const Case cases[] = {{1024, 2, 3, 700, 0, 11}, {333, 2, 2, 300, 0, 12}, {517, 3, 4, 257, 0, 13},
                        {200, 2, 3, 130, 0, 14}, {64, 2, 3, 90, 0, 15}};
  // The device's shared memory for a block, then smaller GPUs' (sm_86/89: 99 KB) and a limit
  // that leaves the gain tables no room in shared memory (they are read from global memory).
  for (int cap : {0, 101376, 49152})
  for (const Case& c : cases) {
    options.shared_memory_cap = cap;
    const Data d = make_data(c);
    const InteractionBits bits = bits_of(c, d, 4);
    const GainTables tables(bits, 0.25);
    for (int32_t k = 2; k <= 3; ++k) {
      for (int with_contrast = 0; with_contrast < 2; ++with_contrast) {
        InteractionTask task;
        task.dimensions = k;
        task.n_real = with_contrast ? c.n_vars * 2 / 3 : c.n_vars;
        task.with_tuples = true;
        if (k == 3 && c.n_vars > 300) task.n_real = std::min<int64_t>(task.n_real, 300);
        const std::string problem = gpu_interactions_problem(bits, task, options);
        if (!problem.empty()) {
          EXPECT(false, "GPU refuses k=%d m=%d: %s", k, c.n_levels, problem.c_str());
          continue;
        }
        // Collect every gain above a threshold (about 5 bits per 1,000 objects), in two cases of
        // three only from the tuples holding an interesting variable (or made of them).
        task.collect = true;
        task.threshold = 0.5 * c.n_objects / 100.0;
        if (c.seed % 3 != 2) {
          task.interesting.assign(size_t(task.n_real), 0);
          for (int64_t v = 0; v < task.n_real; v += 5) task.interesting[v] = 1;
          task.require_all = c.seed % 3 == 1;
        }
        const InteractionBest cpu = cpu_interactions(bits, tables, task, 4, nullptr);
        const InteractionBest dev = gpu_interactions(bits, tables, task, options, nullptr);
        EXPECT(same_hits(cpu.hits, dev.hits), "GPU k=%d m=%d n=%d contrast=%d: collected gains differ (%zu on the CPU, "
               "%zu on the GPU)", k, c.n_levels, c.n_objects, with_contrast, cpu.hits.size(), dev.hits.size());
        int64_t differ = 0, tuples_differ = 0;
        const int64_t n_scored = with_contrast ? c.n_vars : task.n_real;
        for (int64_t v = 0; v < n_scored; ++v) {
          differ += cpu.gain[v] != dev.gain[v];
          for (int32_t i = 0; i < k; ++i) tuples_differ += cpu.tuple[v * k + i] != dev.tuple[v * k + i];
        }
        EXPECT(differ == 0 && tuples_differ == 0,
               "GPU k=%d m=%d n=%d contrast=%d cap=%d: %lld gains, %lld tuple entries differ", k, c.n_levels,
               c.n_objects, with_contrast, cap, (long long)differ, (long long)tuples_differ);
      }
    }
  }
  options.shared_memory_cap = 0;
  // Two devices (or one device twice) split the work with the same result.
  if (gpu.devices.size() > 1) options.devices = {gpu.devices[0].id, gpu.devices[1].id};
  else options.devices = {gpu.devices[0].id, gpu.devices[0].id};
  const Case c = {1024, 2, 3, 500, 0, 21};
  const Data d = make_data(c);
  const InteractionBits bits = bits_of(c, d, 4);
  const GainTables tables(bits, 0.25);
  InteractionTask task;
  task.dimensions = 2;
  task.n_real = 400;
  task.with_tuples = true;
  task.collect = true;
  task.threshold = -INFINITY;  // every pair: 159,600 rows, past a device's first buffer (a batch runs again)
  const InteractionBest cpu = cpu_interactions(bits, tables, task, 4, nullptr);
  const InteractionBest dev = gpu_interactions(bits, tables, task, options, nullptr);
  EXPECT(cpu.gain == dev.gain && cpu.tuple == dev.tuple, "two devices differ from the CPU");
  EXPECT(same_hits(cpu.hits, dev.hits) && dev.hits.size() == 2 * 400 * 399 / 2,
         "two devices: collected gains differ from the CPU's");
  // Too many gains: an error, not a huge buffer.
  task.max_hits = 1000;
  bool threw = false;
  try {
    gpu_interactions(bits, tables, task, options, nullptr);
  } catch (const std::runtime_error&) {
    threw = true;
  }
  EXPECT(threw, "GPU: more gains than max_hits did not throw");
}

// The tensor-core pair kernel skips a pair's exact gains when a float bound on them stays below
// both variables' best gains so far. Exact ties (copies of a variable, whose pairs with a third
// have equal gains), near ties (a copy with one object changed), small and large pseudo-counts
// (negative and large table terms) and 2 to 4 classes, without collecting (every pair screened),
// must give the CPU's best gains and tuples.
void gpu_pair_screen(const GpuStatus& gpu) {
  if (gpu.devices.empty()) return;
  GpuOptions options;
  options.devices = {gpu.devices[0].id};
  // (6,500 objects: tables that fit shared memory only in their 64-bit form, which took the
  // screen's shared tables past the block's limit before 2026-11-29.)
  const Case cases[] = {{1024, 2, 3, 900, 0, 41}, {2048, 3, 3, 600, 0, 42}, {700, 4, 2, 800, 0, 43},
                        {1500, 2, 2, 700, 0, 44}, {6500, 2, 3, 150, 0, 45}};
  for (const Case& c : cases) {
    Data d = make_data(c);
    std::mt19937 g(c.seed);
    for (int64_t v = 1; v < c.n_vars; v += 7) {  // copies of the previous variable, some with one change
      std::copy_n(d.codes.begin() + (v - 1) * c.n_objects, c.n_objects, d.codes.begin() + v * c.n_objects);
      if (v % 2) d.codes[v * c.n_objects + g() % c.n_objects] = int8_t(g() % c.n_levels);
    }
    const InteractionBits bits = bits_of(c, d, 4);
    for (double xi : {0.01, 0.25, 3.0}) {
      const GainTables tables(bits, xi);
      for (int with_contrast = 0; with_contrast < 2; ++with_contrast) {
        InteractionTask task;
        task.dimensions = 2;
        task.n_real = with_contrast ? c.n_vars * 3 / 4 : c.n_vars;
        task.with_tuples = true;
        const std::string problem = gpu_interactions_problem(bits, task, options);
        if (!problem.empty()) {
          EXPECT(false, "GPU refuses the screen case (n=%d): %s", c.n_objects, problem.c_str());
          continue;
        }
        const InteractionBest cpu = cpu_interactions(bits, tables, task, 4, nullptr);
        const InteractionBest dev = gpu_interactions(bits, tables, task, options, nullptr);
        EXPECT(cpu.gain == dev.gain && cpu.tuple == dev.tuple,
               "GPU pair screen n=%d classes=%d m=%d xi=%g contrast=%d: bests or tuples differ from the CPU",
               c.n_objects, c.n_classes, c.n_levels, xi, with_contrast);
      }
    }
  }
}

// Every dimension, level count and class count on the GPU (the pair, triple and quadruple kernels
// and the tuple kernel, which takes the rest) against the CPU: bests,
// tuples and collected gains, the whole search and in tiles whose starts are not multiples of the
// word size, merged.
void gpu_every_dimension(const GpuStatus& gpu) {
  if (gpu.devices.empty()) return;
  GpuOptions options;
  options.devices = {gpu.devices[0].id};
  struct Shape {
    int32_t k, n_objects, n_classes, n_levels;
    int64_t n_vars;
  };
  const Shape shapes[] = {{1, 1000, 2, 3, 3000}, {1, 300, 7, 4, 500},  {1, 200, 2, 2, 300},  {2, 300, 6, 3, 150},
                          {3, 200, 5, 3, 60},    {4, 1024, 2, 3, 36},  {4, 333, 3, 2, 40},
                          {4, 200, 4, 4, 18},    {4, 150, 6, 3, 20},   {5, 1024, 2, 3, 22},  {5, 300, 2, 2, 30},
                          {5, 130, 3, 4, 14},    {5, 100, 5, 3, 14},   {4, 200, 2, 2, 30},   {4, 190, 2, 4, 16},
                          {4, 333, 2, 3, 45},    {5, 333, 2, 3, 26},
                          // 5-way, 3 levels, 2 classes (quint_stream_kernel): several tiles of m's
                          // and an odd object count; counts past the flat table's (32) in every
                          // voxel, over many words a class
                          {5, 150, 2, 3, 48},    {5, 20000, 2, 3, 16}};
  uint32_t seed = 100;
  for (const Shape& sh : shapes) {
    const Case c = {sh.n_objects, sh.n_classes, sh.n_levels, sh.n_vars, 0, ++seed};
    const Data d = make_data(c);
    const InteractionBits bits = bits_of(c, d, 4);
    const GainTables tables(bits, 0.25);
    for (int with_contrast = 0; with_contrast < 2; ++with_contrast) {
      InteractionTask task;
      task.dimensions = sh.k;
      task.n_real = with_contrast ? c.n_vars * 2 / 3 : c.n_vars;
      task.with_tuples = true;
      task.collect = true;
      task.threshold = 0.3 * c.n_objects / 100.0;
      if (seed % 3 != 2) {
        task.interesting.assign(size_t(task.n_real), 0);
        for (int64_t v = 0; v < task.n_real; v += 4) task.interesting[v] = 1;
        task.require_all = seed % 3 == 1;
      }
      const std::string problem = gpu_interactions_problem(bits, task, options);
      if (!problem.empty()) {
        EXPECT(false, "GPU refuses k=%d m=%d classes=%d: %s", sh.k, c.n_levels, c.n_classes, problem.c_str());
        continue;
      }
      const InteractionBest cpu = cpu_interactions(bits, tables, task, 4, nullptr);
      const InteractionBest dev = gpu_interactions(bits, tables, task, options, nullptr);
      // Tiles: first variables cut at starts that are not multiples of 64 (k = 1: over every variable).
      const int64_t firsts = sh.k == 1 ? c.n_vars : task.n_real;
      const int64_t cuts[] = {0, firsts / 7 + 1, firsts / 2 + 3, firsts};
      InteractionBest tiled(c.n_vars, sh.k, true);
      for (int t = 0; t < 3; ++t) {
        InteractionTask tile = task;
        tile.first_begin = cuts[t];
        tile.first_end = cuts[t + 1];
        const InteractionBest part = gpu_interactions(bits, tables, tile, options, nullptr);
        tiled.merge(part);
        tiled.hits.insert(tiled.hits.end(), part.hits.begin(), part.hits.end());
      }
      std::sort(tiled.hits.begin(), tiled.hits.end(), hit_before);
      int64_t differ = 0, tuples_differ = 0, tiles_differ = 0;
      for (int64_t v = 0; v < c.n_vars; ++v) {
        differ += cpu.gain[v] != dev.gain[v];
        tiles_differ += cpu.gain[v] != tiled.gain[v];
        for (int32_t i = 0; i < sh.k; ++i) {
          tuples_differ += cpu.tuple[v * sh.k + i] != dev.tuple[v * sh.k + i];
          tiles_differ += cpu.tuple[v * sh.k + i] != tiled.tuple[v * sh.k + i];
        }
      }
      EXPECT(differ == 0 && tuples_differ == 0,
             "GPU k=%d m=%d classes=%d contrast=%d: %lld gains, %lld tuple entries differ from the CPU", sh.k,
             c.n_levels, c.n_classes, with_contrast, (long long)differ, (long long)tuples_differ);
      EXPECT(tiles_differ == 0, "GPU tiles k=%d m=%d classes=%d contrast=%d: %lld entries differ from the CPU", sh.k,
             c.n_levels, c.n_classes, with_contrast, (long long)tiles_differ);
      EXPECT(same_hits(cpu.hits, dev.hits) && same_hits(cpu.hits, tiled.hits),
             "GPU k=%d m=%d classes=%d contrast=%d: collected gains differ (%zu on the CPU, %zu on the GPU, %zu in "
             "tiles)", sh.k, c.n_levels, c.n_classes, with_contrast, cpu.hits.size(), dev.hits.size(),
             tiled.hits.size());
      std::printf("interactions GPU: k=%d m=%d classes=%d objects=%d contrast=%d compared\n", sh.k, c.n_levels,
                  c.n_classes, c.n_objects, with_contrast);
      // (Tables of more cells than objects hold small gains: nothing may pass there.)
      if (tuple_cells(sh.k, c.n_levels) * c.n_classes < c.n_objects)
        EXPECT(!cpu.hits.empty(), "k=%d m=%d classes=%d: the threshold collects nothing", sh.k, c.n_levels,
               c.n_classes);
    }
  }
  // Two devices (or one twice) split 1- to 5-way searches with the CPU's result.
  GpuOptions two = options;
  two.devices = {gpu.devices[0].id, gpu.devices.size() > 1 ? gpu.devices[1].id : gpu.devices[0].id};
  for (int32_t k = 1; k <= 5; ++k) {
    const Case c = {700, 2, 3, k == 1 ? 999 : k == 4 ? 40 : 24, 0, 200u + uint32_t(k)};
    const Data d = make_data(c);
    const InteractionBits bits = bits_of(c, d, 4);
    const GainTables tables(bits, 0.25);
    InteractionTask task;
    task.dimensions = k;
    task.n_real = c.n_vars - 4;
    task.with_tuples = true;
    const InteractionBest cpu = cpu_interactions(bits, tables, task, 4, nullptr);
    const InteractionBest dev = gpu_interactions(bits, tables, task, two, nullptr);
    EXPECT(cpu.gain == dev.gain && cpu.tuple == dev.tuple, "k=%d: two devices differ from the CPU", k);
  }
  // Missing values stay on the CPU.
  const Case c = {200, 2, 3, 20, 0.05, 99};
  const Data d = make_data(c);
  InteractionTask task;
  task.dimensions = 4;
  task.n_real = c.n_vars;
  EXPECT(gpu_interactions_problem(bits_of(c, d, 2), task, options).find("missing") != std::string::npos,
         "GPU: missing values not refused");
}

// The bit planes (each worker zeroes the words it fills) do not depend on the threads, and the
// GPU's word-major copy holds every plane's word at [word][level][var], zeros elsewhere (padding
// variables and levels past the last plane), for strides that are not whole blocks of 64.
void word_major_layout() {
  for (const Case& c : {Case{130, 2, 3, 70, 0, 41}, Case{97, 3, 4, 150, 0.05, 42}, Case{64, 2, 2, 1, 0, 43}}) {
    const Data d = make_data(c);
    const InteractionBits bits = bits_of(c, d, 3);
    const InteractionBits one = bits_of(c, d, 1);
    EXPECT(bits.bits == one.bits && bits.valid == one.valid && bits.level_count == one.level_count,
           "seed %u: bit planes differ between 1 and 3 threads", c.seed);
    const int32_t room = 3;
    const int64_t stride = c.n_vars + 37;
    for (int threads : {1, 3}) {
      const RowVector<uint64_t> out = word_major_bits(bits, stride, room, threads);
      bool same = out.size() == size_t(stride) * bits.words * room;
      for (int32_t w = 0; same && w < bits.words; ++w)
        for (int32_t level = 0; level < room; ++level)
          for (int64_t v = 0; v < stride; ++v) {
            const uint64_t want = v < c.n_vars && level < c.n_levels - 1 ? bits.level_bits(v, level)[w] : 0;
            same &= out[(size_t(w) * room + level) * stride + v] == want;
          }
      EXPECT(same, "seed %u, %d threads: word-major bitmaps differ from the planes", c.seed, threads);
    }
  }
}

}  // namespace

void interaction_tests(const GpuStatus& gpu) {
  discretization_draws();
  word_major_layout();
  check_against_direct({150, 2, 3, 9, 0, 1}, 1, 9);
  check_against_direct({150, 2, 3, 9, 0, 2}, 2, 9);
  check_against_direct({131, 3, 2, 8, 0, 3}, 3, 8);
  check_against_direct({97, 2, 4, 7, 0, 4}, 2, 7);
  check_against_direct({120, 2, 3, 9, 0.05, 5}, 2, 9);   // missing values: each tuple's valid objects
  check_against_direct({120, 2, 3, 8, 0.05, 6}, 3, 8);
  check_against_direct({140, 2, 3, 10, 0, 7}, 2, 7);     // 3 contrast variables
  check_against_direct({140, 2, 2, 10, 0.03, 8}, 3, 7);
  check_against_direct({70, 2, 2, 7, 0, 9}, 5, 7);
  check_against_direct({70, 2, 3, 6, 0, 10}, 4, 6);
  collected_against_direct({150, 2, 3, 9, 0, 31}, 2, 9);
  collected_against_direct({131, 3, 2, 8, 0, 32}, 3, 7);     // a contrast variable: never listed
  collected_against_direct({97, 2, 4, 7, 0.05, 33}, 2, 7);   // missing values
  collected_against_direct({70, 2, 2, 7, 0, 34}, 4, 7);
  collected_against_direct({60, 2, 3, 6, 0, 35}, 5, 6);
  merge_discretizations();
  block_codes(gpu, 0);     // the GPU takes these
  block_codes(gpu, 0.05);  // missing values
  gpu_matches_cpu(gpu);
  gpu_pair_screen(gpu);
  gpu_every_dimension(gpu);
}
