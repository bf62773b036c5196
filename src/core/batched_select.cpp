#include "batched_select.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "cpu_engine.h"
#include "parallel.h"

namespace fsgpu {

Subsample subsample_of(const CodeMatrix& x, const ClassLayout& layout, const std::vector<int32_t>& samples) {
  const int32_t m = static_cast<int32_t>(samples.size());
  if (m < 1) throw std::invalid_argument("a subsample has no samples");
  // Labels of the subsample, the classes it holds numbered in their order.
  std::vector<int32_t> present(layout.n_classes, 0), labels(m);
  for (int32_t i = 0; i < m; ++i) {
    if (samples[i] < 0 || samples[i] >= layout.n_samples) throw std::invalid_argument("subsample index out of range");
    present[layout.class_of[layout.position[samples[i]]]] = 1;
  }
  std::vector<int32_t> renumber(layout.n_classes, -1);
  int32_t n_present = 0;
  for (int32_t c = 0; c < layout.n_classes; ++c)
    if (present[c]) renumber[c] = n_present++;
  for (int32_t i = 0; i < m; ++i) labels[i] = renumber[layout.class_of[layout.position[samples[i]]]];

  Subsample out;
  out.layout = ClassLayout::from_labels(labels.data(), m, n_present);
  // from[q]: the position in x of the subsample's class-sorted position q; to[p]: the reverse (-1: not taken).
  std::vector<int32_t> from(m), to(layout.n_samples, -1);
  for (int32_t i = 0; i < m; ++i) {
    const int32_t p = layout.position[samples[i]];
    if (to[p] >= 0) throw std::invalid_argument("a subsample takes a sample more than once");
    from[out.layout.position[i]] = p;
    to[p] = out.layout.position[i];
  }

  CodeMatrix& c = out.codes;
  c.n_samples = m;
  c.n_features = x.n_features;
  c.sparse = x.sparse;
  c.wide = x.wide;
  c.levels = x.levels;
  c.base = x.base;
  if (!x.sparse) {
    const size_t cells = static_cast<size_t>(m) * static_cast<size_t>(x.n_features);
    if (x.wide) c.codes16.resize(cells); else c.codes8.resize(cells);
    for (int64_t f = 0; f < x.n_features; ++f) {
      const int64_t in = f * x.n_samples, at = f * m;
      if (x.wide) {
        for (int32_t q = 0; q < m; ++q) c.codes16[at + q] = x.codes16[in + from[q]];
      } else {
        for (int32_t q = 0; q < m; ++q) c.codes8[at + q] = x.codes8[in + from[q]];
      }
    }
    return out;
  }
  // Sparse: the stored entries of the rows taken, rows ascending in the subsample's positions.
  c.entry_start.assign(static_cast<size_t>(x.n_features) + 1, 0);
  std::vector<std::pair<int32_t, uint16_t>> kept;
  for (int64_t f = 0; f < x.n_features; ++f) {
    kept.clear();
    for (int64_t e = x.entries_begin(f); e < x.entries_end(f); ++e)
      if (to[x.entry_row[e]] >= 0) kept.emplace_back(to[x.entry_row[e]], x.code(e));
    std::sort(kept.begin(), kept.end());
    for (const auto& entry : kept) {
      c.entry_row.push_back(entry.first);
      if (x.wide) c.codes16.push_back(entry.second); else c.codes8.push_back(static_cast<uint8_t>(entry.second));
    }
    c.entry_start[f + 1] = static_cast<int64_t>(c.entry_row.size());
  }
  return out;
}

std::vector<Selection> select_on_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                            const std::vector<std::vector<int32_t>>& samples,
                                            const std::vector<SelectionOptions>& options, int threads,
                                            const Checkpoint& between_rounds,
                                            const SubsampleEngine& make_engine, int64_t side_by_side_bytes) {
  const int64_t n_samples = static_cast<int64_t>(samples.size());
  const int64_t n_pairs = n_samples * static_cast<int64_t>(options.size());
  std::vector<Selection> out(n_pairs);
  if (n_pairs == 0) return out;
  threads = std::max(threads, 1);
  // Side by side, one thread each, in rounds of two per thread (OpenMP does not nest): no
  // thread waits for another between steps. On the 2-core VM the microarrays' batches
  // (chowdary, nakayama) were 3-5% faster so and varied less than one after another, each
  // engine on both threads. Big dense subsamples go one after another all the same, so that
  // one gathered copy of the codes is held at a time rather than one a thread. Sparse
  // subsamples keep side by side: their gather (a sort per feature) and their steps' serial
  // parts would leave the other threads idle.
  size_t largest = 0;
  for (const std::vector<int32_t>& s : samples) largest = std::max(largest, s.size());
  const int64_t gathered_bytes = static_cast<int64_t>(largest) * x.n_features * static_cast<int64_t>(x.code_bytes());
  const bool one_by_one = !x.sparse && int64_t(threads) * gathered_bytes > side_by_side_bytes;
  const bool side_by_side = n_pairs >= threads && !one_by_one;
  const int engine_threads = side_by_side ? 1 : threads;
  const int64_t round = side_by_side ? 2 * static_cast<int64_t>(threads) : 1;
  for (int64_t first = 0; first < n_pairs; first += round) {
    if (first > 0 && between_rounds) between_rounds(static_cast<double>(first) / static_cast<double>(n_pairs));
    const int64_t last = std::min(n_pairs, first + round);
    parallel_for(last - first, side_by_side ? threads : 1, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t t = first + begin; t < first + end; ++t) {
        const Subsample sub = subsample_of(x, layout, samples[t % n_samples]);
        std::unique_ptr<SelectionEngine> engine =
            make_engine ? make_engine(sub, engine_threads)
                        : std::make_unique<CpuEngine>(sub.codes, sub.layout, engine_threads);
        out[t] = select_features(*engine, options[t / n_samples], nullptr);
      }
    });
  }
  return out;
}

std::vector<Selection> gpu_select_on_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                                const std::vector<std::vector<int32_t>>& samples,
                                                const std::vector<SelectionOptions>& options, const GpuOptions& gpu,
                                                const Checkpoint& between_steps) {
  std::vector<Selection> out;
  out.reserve(samples.size() * options.size());
  const double n_options = static_cast<double>(options.size());
  for (size_t m = 0; m < options.size(); ++m) {
    const Checkpoint part = [&](double done) {
      if (between_steps) between_steps((static_cast<double>(m) + done) / n_options);
    };
    std::vector<Selection> sel;
    if (gpu_subsamples_problem(x, layout, options[m], gpu).empty()) {
      sel = gpu_select_subsamples(x, layout, samples, options[m], gpu, part);
    } else {  // one at a time: GPU engines side by side would only compete for the device
      const SubsampleEngine on_gpu = [&](const Subsample& sub, int) { return make_gpu_engine(sub.codes, sub.layout, gpu); };
      sel = select_on_subsamples(x, layout, samples, {options[m]}, 1, part, on_gpu);
    }
    for (Selection& s : sel) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fsgpu
