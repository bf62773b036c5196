#include "pairs.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "joint_counts.h"
#include "parallel.h"

namespace fsgpu {

PairTask PairTask::all(int64_t n_features) {
  PairTask t;
  t.all_pairs = true;
  t.n_features = n_features;
  t.rows.resize(n_features);
  for (int64_t f = 0; f < n_features; ++f) t.rows[f] = static_cast<int32_t>(f);
  t.row_rank = t.rows;
  return t;
}

PairTask PairTask::with(const std::vector<int32_t>& features, int64_t n_features) {
  PairTask t;
  t.n_features = n_features;
  t.rows = features;
  std::sort(t.rows.begin(), t.rows.end());
  t.rows.erase(std::unique(t.rows.begin(), t.rows.end()), t.rows.end());
  t.row_rank.assign(n_features, -1);
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.rows[r] < 0 || t.rows[r] >= n_features) throw std::invalid_argument("feature index out of range");
    t.row_rank[t.rows[r]] = static_cast<int32_t>(r);
  }
  t.all_pairs = static_cast<int64_t>(t.rows.size()) == n_features;
  return t;
}

int64_t PairTask::n_pairs() const {
  const int64_t m = static_cast<int64_t>(rows.size());
  return m * (n_features - m) + m * (m - 1) / 2;
}

PairCollector::PairCollector(int64_t top, bool has_min, int64_t min_key)
    : top_(top), has_min_(has_min), min_key_(min_key) {
  if (top == 0) throw std::invalid_argument("a pair collector needs top > 0 (or top < 0: no limit)");
}

PairCollector::PairCollector(PairSink sink) : top_(-1), has_min_(false), min_key_(0), sink_(std::move(sink)) {
  if (!sink_) throw std::invalid_argument("a pair collector's sink must be callable");
}

namespace {
bool record_before(const PairRecord& a, const PairRecord& b) { return pair_before(a.key, a.i, a.j, b.key, b.i, b.j); }
}  // namespace

void PairCollector::add(std::vector<PairRecord>& batch) {
  if (sink_) {
    for (const PairRecord& r : batch) sink_(r);
    batch.clear();
    return;
  }
  for (const PairRecord& r : batch)
    if (!has_min_ || r.key >= min_key_) kept_.push_back(r);
  batch.clear();
  if (top_ >= 0 && static_cast<int64_t>(kept_.size()) > top_ && (!full_ || static_cast<int64_t>(kept_.size()) > 2 * top_))
    trim();
}

void PairCollector::trim() {
  if (top_ < 0 || static_cast<int64_t>(kept_.size()) < top_) return;
  std::nth_element(kept_.begin(), kept_.begin() + (top_ - 1), kept_.end(), record_before);
  kept_.resize(top_);
  full_ = true;
  cut_ = kept_[top_ - 1];
}

PairFilter PairCollector::filter() const {
  PairFilter f;
  if (full_) {
    f.mode = PairFilter::beat;
    f.key = cut_.key;
    f.i = cut_.i;
    f.j = cut_.j;
  } else if (has_min_) {
    f.mode = PairFilter::at_least;
    f.min_key = min_key_;
  }
  return f;
}

std::vector<PairRecord> PairCollector::finish() {
  trim();
  std::sort(kept_.begin(), kept_.end(), record_before);
  return std::move(kept_);
}

PairData PairData::of(const CodeMatrix& x, const ClassLayout& layout, const PlogpTable& plogp, PairMeasure measure,
                      int threads) {
  PairData d;
  d.x = &x;
  d.layout = &layout;
  const int64_t n = x.n_samples;
  d.codes.resize(static_cast<size_t>(n * x.n_features));
  d.sums.relevance.resize(x.n_features);
  d.sums.x_terms.resize(x.n_features);
  const ClassTerms class_terms = ClassTerms::of(layout, plogp);
  d.constants.measure = measure;
  d.constants.plogp_n = class_terms.plogp_n;
  d.constants.class_terms = class_terms.class_terms;
  parallel_for(x.n_features, threads, 64, [&](int64_t begin, int64_t end, int) {
    std::vector<uint32_t> counts;
    for (int64_t f = begin; f < end; ++f) {
      uint16_t* codes = d.codes.data() + f * n;
      if (x.sparse) std::fill(codes, codes + n, x.base[f]);
      for (int64_t e = x.entries_begin(f); e < x.entries_end(f); ++e) codes[x.row(f, e)] = x.code(e);
      // sum plogp(n(a)) and sum plogp(n(a, y)), class by class.
      const int32_t levels = x.levels[f];
      counts.assign(static_cast<size_t>(levels) * (layout.n_classes + 1), 0);
      uint32_t* total = counts.data() + static_cast<size_t>(levels) * layout.n_classes;
      for (int32_t c = 0; c < layout.n_classes; ++c)
        for (int32_t p = layout.class_start[c]; p < layout.class_start[c + 1]; ++p) ++counts[c * levels + codes[p]];
      int64_t xy = 0, xt = 0;
      for (int32_t c = 0; c < layout.n_classes; ++c)
        for (int32_t a = 0; a < levels; ++a) {
          xy += plogp(counts[c * levels + a]);
          total[a] += counts[c * levels + a];
        }
      for (int32_t a = 0; a < levels; ++a) xt += plogp(total[a]);
      d.sums.x_terms[f] = xt;
      d.sums.relevance[f] = xy - xt - class_terms.class_terms + class_terms.plogp_n;
    }
  });
  return d;
}

namespace {

struct PairSums {
  int64_t joint_class = 0, joint = 0;
  int32_t cells = 0;
};

// Count tables larger than this would not stay in any cache (and could not be allocated for
// features with tens of thousands of categories each).
constexpr int64_t kMaxPairCells = int64_t(1) << 24;

// One worker's count tables and row i's codes, reused across pairs.
struct PairScratch {
  std::vector<uint32_t> table, joint_table;
  std::vector<uint32_t> row_codes;  // code of Xi and class, as (a * n_classes + y)
  int32_t row = -1;
};

// Records a worker gathers before handing them to its collector (or the shared one).
constexpr int64_t kWorkerBatch = 4096;

// A worker of the CPU search: its scratch, its passing pairs not yet handed on, and (in a
// bounded search) its own best pairs with their filter.
struct PairWorker {
  explicit PairWorker(PairCollector own) : best(std::move(own)) {}
  PairScratch scratch;
  std::vector<PairRecord> batch;
  PairCollector best;
  PairFilter filter;
};

// n(a, b, y) for one pair. Small tables (the usual binned data) are counted in one pass over
// (b, a, y) cells and scanned; large ones (many categories) class by class and cleared by
// revisiting what was counted, so that their cost does not depend on the number of levels.
PairSums count_pair(const PairData& d, int32_t i, int32_t j, const PlogpTable& plogp, PairScratch& w) {
  const CodeMatrix& x = *d.x;
  const ClassLayout& layout = *d.layout;
  const int64_t n = x.n_samples;
  const int32_t li = x.levels[i], lj = x.levels[j], classes = layout.n_classes;
  const uint16_t* ci = d.codes.data() + i * n;
  const uint16_t* cj = d.codes.data() + j * n;
  PairSums s;
  const int64_t cells = int64_t(li) * lj * classes;
  if (cells <= std::max<int64_t>(4 * n, 4096)) {
    if (w.row != i) {
      w.row_codes.resize(n);
      for (int32_t c = 0; c < classes; ++c)
        for (int32_t p = layout.class_start[c]; p < layout.class_start[c + 1]; ++p) w.row_codes[p] = ci[p] * classes + c;
      w.row = i;
    }
    if (static_cast<int64_t>(w.table.size()) < cells) w.table.assign(cells, 0);
    uint32_t* table = w.table.data();
    const uint32_t* rc = w.row_codes.data();
    const uint32_t b_stride = static_cast<uint32_t>(li * classes);
    for (int64_t p = 0; p < n; ++p) ++table[cj[p] * b_stride + rc[p]];
    for (int64_t ab = 0; ab < int64_t(li) * lj; ++ab) {
      uint32_t* cell = table + ab * classes;
      uint32_t total = 0;
      for (int32_t c = 0; c < classes; ++c) {
        s.joint_class += plogp(cell[c]);
        total += cell[c];
        cell[c] = 0;
      }
      s.joint += plogp(total);
      s.cells += total != 0;
    }
    return s;
  }
  const size_t pair_cells = static_cast<size_t>(li) * lj;
  if (w.joint_table.size() < pair_cells) w.joint_table.assign(pair_cells, 0);
  if (w.table.size() < pair_cells) w.table.resize(pair_cells, 0);
  uint32_t* table = w.table.data();
  uint32_t* joint_table = w.joint_table.data();
  for (int32_t c = 0; c < classes; ++c) {
    const int32_t first = layout.class_start[c], last = layout.class_start[c + 1];
    for (int32_t p = first; p < last; ++p) ++table[ci[p] * lj + cj[p]];
    for (int32_t p = first; p < last; ++p) {
      uint32_t& v = table[ci[p] * lj + cj[p]];
      if (!v) continue;
      s.joint_class += plogp(v);
      joint_table[ci[p] * lj + cj[p]] += v;
      v = 0;
    }
  }
  for (int64_t p = 0; p < n; ++p) {
    uint32_t& v = joint_table[ci[p] * lj + cj[p]];
    if (!v) continue;
    s.joint += plogp(v);
    ++s.cells;
    v = 0;
  }
  return s;
}

}  // namespace

void cpu_pair_search(const PairData& d, const PairTask& task, const PlogpTable& plogp, PairCollector& collector,
                     int threads, const std::function<void()>& between_slices, int64_t slice_work) {
  const int64_t max_levels = d.x->max_levels();
  if (max_levels * max_levels > kMaxPairCells)
    throw std::runtime_error("features with " + std::to_string(max_levels) +
                             " levels are too many for pair tables; bin or merge categories first");
  const int64_t n_rows = static_cast<int64_t>(task.rows.size());
  threads = std::max(1, threads);
  // Slices of about slice_work (between them the workers' pairs reach the collector, its
  // filter is refreshed and the user may interrupt), with enough rows to keep every thread busy.
  const int64_t work = task.n_pairs() * std::max<int64_t>(d.x->n_samples, 1);
  const int64_t slices = std::min(work / std::max<int64_t>(slice_work, 1), n_rows / (4 * int64_t(threads)));
  // A bounded search gives each worker its own collector, consulted with the shared filter and
  // merged between slices, so that memory stays O(threads * top) however large a slice is.
  // Without a bound everything that passes is kept (or sunk) anyway: workers hand their
  // batches straight on, one at a time.
  const bool bounded = collector.bounded();
  std::vector<PairWorker> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) workers.emplace_back(collector.empty_like());
  std::mutex shared;
  PairFilter filter = collector.filter();
  auto hand_on = [&](PairWorker& w) {
    if (bounded) {
      w.best.add(w.batch);
      w.filter = w.best.filter();
    } else {
      std::lock_guard<std::mutex> lock(shared);
      collector.add(w.batch);
    }
  };
  auto row_pairs = [&](int64_t r, int worker) {
    PairWorker& w = workers[worker];
    const int32_t i = task.rows[r];
    const int32_t first = task.all_pairs ? i + 1 : 0;
    for (int32_t j = first; j < task.n_features; ++j) {
      if (j == i || (!task.all_pairs && task.row_rank[j] >= 0 && task.row_rank[j] <= r)) continue;
      const PairSums s = count_pair(d, i, j, plogp, w.scratch);
      const int32_t a = std::min(i, j), b = std::max(i, j);
      const int64_t key = pair_key(d.constants, s.joint_class, s.joint, d.sums.relevance[a], d.sums.relevance[b],
                                   d.sums.x_terms[a], d.sums.x_terms[b]);
      if (!passes(filter, key, a, b) || (bounded && !passes(w.filter, key, a, b))) continue;
      PairRecord rec;
      rec.i = a;
      rec.j = b;
      rec.key = key;
      rec.joint_class = s.joint_class;
      rec.joint = s.joint;
      rec.cells = s.cells;
      w.batch.push_back(rec);
      if (static_cast<int64_t>(w.batch.size()) >= kWorkerBatch) hand_on(w);
    }
  };
  auto merge = [&] {
    for (PairWorker& w : workers) {
      hand_on(w);
      if (bounded) collector.merge(w.best);
    }
    filter = collector.filter();
  };
  sliced_parallel_for(n_rows, slices, threads, 1,
                      [&] {
                        merge();
                        if (between_slices) between_slices();
                      },
                      row_pairs);
  merge();
}

}  // namespace fsgpu
