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
  t.row_end = n_features;
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
  t.row_end = static_cast<int64_t>(t.rows.size());
  return t;
}

PairTask PairTask::tile(int64_t begin, int64_t end) const {
  if (begin < 0 || begin > end || end > static_cast<int64_t>(rows.size()))
    throw std::invalid_argument("a tile's rows must lie within the task's rows");
  PairTask t = *this;
  t.row_begin = begin;
  t.row_end = end;
  return t;
}

int64_t PairTask::n_pairs() const {
  // Position r pairs with n_features - 1 - r features: the sum over [row_begin, row_end).
  const int64_t count = row_end - row_begin;
  return count * (n_features - 1) - (row_begin + row_end - 1) * count / 2;
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
  ClassTerms class_terms = ClassTerms::of(layout, plogp);
  d.estimator = plogp.estimator();
  const bool shrink = d.estimator == Estimator::shrink;
  if (shrink) {
    std::vector<uint32_t> sizes(layout.n_classes);
    for (int32_t c = 0; c < layout.n_classes; ++c) sizes[c] = layout.class_start[c + 1] - layout.class_start[c];
    class_terms.class_terms = shrink_cell_terms(sizes, class_terms.plogp_n);
  }
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
      if (shrink) {
        xy = shrink_cell_terms(std::vector<uint32_t>(counts.begin(), counts.begin() + levels * layout.n_classes),
                               class_terms.plogp_n);
        xt = shrink_cell_terms(std::vector<uint32_t>(total, total + levels), class_terms.plogp_n);
      }
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

// One worker's count tables and the (code, class) words of its block of rows.
struct PairScratch {
  std::vector<uint32_t> table, joint_table;
  std::vector<uint32_t> shrink_cells;  // the pair's n(a, b), for the shrink estimator
  std::vector<uint32_t> row_codes;  // per row of the block, per sample: a * n_classes + y
  int64_t block = -1;               // whose rows row_codes holds
};

// Records a worker gathers before handing them to its collector (or the shared one).
constexpr int64_t kWorkerBatch = 4096;

// A unit of work is a tile: a block of kRowBlock rows against a range of columns whose codes
// (about kTileBytes) stay in cache while each row of the block runs through them, so that a
// column's codes come from memory once per block of rows instead of once per row. Within the
// tile, rows run through the columns one after the other: counting each column against every
// row of the block in turn missed L1 less but was 15-25% slower (Xeon, 2 MB L2; 104, 500 and
// 1,000 samples), the counting loops being bound by instructions, not by memory.
constexpr int64_t kRowBlock = 16;
constexpr int64_t kTileBytes = int64_t(1) << 17;

// A worker of the CPU search: its scratch, its passing pairs not yet handed on, and (in a
// bounded search) its own best pairs with their filter.
struct PairWorker {
  explicit PairWorker(PairCollector own) : best(std::move(own)) {}
  PairScratch scratch;
  std::vector<PairRecord> batch;
  PairCollector best;
  PairFilter filter;
};

// Whether the pair's n(a, b, y) table is small enough to be counted in one pass and scanned.
bool small_table(int32_t li, int32_t lj, int32_t classes, int64_t n) {
  return int64_t(li) * lj * classes <= std::max<int64_t>(4 * n, 4096);
}

// n(a, b, y) for a pair with a small table (the usual binned data), from row i's (a, y) words
// `rc`: one pass over (b, a, y) cells, then a scan that clears them. The counting functions are
// kept out of line: inlined into the search's loops, their pointers were spilled to the stack
// (20% slower). With shrink_cells (the shrink estimator), `joint` is its estimate instead.
[[gnu::noinline]] PairSums count_small(const uint32_t* rc, int32_t li, const uint16_t* cj, int32_t lj,
                                       int32_t classes, int64_t n, const PlogpTable& plogp,
                                       std::vector<uint32_t>& scratch_table, std::vector<uint32_t>* shrink_cells) {
  const int64_t cells = int64_t(li) * lj * classes;
  if (static_cast<int64_t>(scratch_table.size()) < cells) scratch_table.assign(cells, 0);
  uint32_t* table = scratch_table.data();
  const uint32_t b_stride = static_cast<uint32_t>(li * classes);
  for (int64_t p = 0; p < n; ++p) ++table[cj[p] * b_stride + rc[p]];
  PairSums s;
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
    if (shrink_cells && total) shrink_cells->push_back(total);
  }
  if (shrink_cells) {
    s.joint = shrink_cell_terms(*shrink_cells, plogp(n));
    shrink_cells->clear();
  }
  return s;
}

// n(a, b, y) for a pair with a large table (many categories): class by class, cleared by
// revisiting what was counted, so that the cost does not depend on the number of levels.
[[gnu::noinline]] PairSums count_large(const PairData& d, int32_t i, int32_t j, const PlogpTable& plogp,
                                       PairScratch& w) {
  const CodeMatrix& x = *d.x;
  const ClassLayout& layout = *d.layout;
  const int64_t n = x.n_samples;
  const int32_t li = x.levels[i], lj = x.levels[j], classes = layout.n_classes;
  const uint16_t* ci = d.codes.data() + i * n;
  const uint16_t* cj = d.codes.data() + j * n;
  PairSums s;
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
    if (d.estimator == Estimator::shrink) w.shrink_cells.push_back(v);
    v = 0;
  }
  if (d.estimator == Estimator::shrink) {
    s.joint = shrink_cell_terms(w.shrink_cells, plogp(n));
    w.shrink_cells.clear();
  }
  return s;
}

}  // namespace

void cpu_pair_search(const PairData& d, const PairTask& task, const PlogpTable& plogp, PairCollector& collector,
                     int threads, const Checkpoint& between_slices, int64_t slice_work) {
  if (d.estimator == Estimator::shrink && d.constants.measure != PairMeasure::mutual)
    throw std::invalid_argument("the shrink estimator is for the mutual information of pairs only");
  const int64_t max_levels = d.x->max_levels();
  if (max_levels * max_levels > kMaxPairCells)
    throw std::runtime_error("features with " + std::to_string(max_levels) +
                             " levels are too many for pair tables; bin or merge categories first");
  const CodeMatrix& x = *d.x;
  const ClassLayout& layout = *d.layout;
  const int64_t n = x.n_samples, n_rows = task.row_end - task.row_begin;
  const int32_t n_features = static_cast<int32_t>(task.n_features), classes = layout.n_classes;
  threads = std::max(1, threads);
  // Units of work: each block of kRowBlock rows (from the task's row_begin) against ranges of
  // `chunk` columns, from the first column it pairs with (first_unit[b] numbers the units of
  // block b, a prefix sum). At
  // least 8 columns, so that preparing the block's codes costs little next to counting them,
  // unless slices are so small that every thread would otherwise get few units.
  const int64_t n_blocks = (n_rows + kRowBlock - 1) / kRowBlock;
  slice_work = std::max<int64_t>(slice_work, 1);
  const int64_t samples = std::max<int64_t>(n, 1);
  const int64_t chunk = std::max<int64_t>(1, std::min(std::max<int64_t>(8, kTileBytes / (2 * samples)),
                                                      slice_work / (8 * kRowBlock * samples)));
  auto first_column = [&](int64_t b) { return task.all_pairs ? task.rows[task.row_begin + b * kRowBlock] + 1 : 0; };
  std::vector<int64_t> first_unit(n_blocks + 1, 0);
  for (int64_t b = 0; b < n_blocks; ++b)
    first_unit[b + 1] = first_unit[b] + (n_features - first_column(b) + chunk - 1) / chunk;
  const int64_t n_units = first_unit.back();
  // Slices of about slice_work per thread (between them the workers' pairs reach the collector,
  // its filter is refreshed and the user may interrupt), with several units for every thread.
  const int64_t work = task.n_pairs() * std::max<int64_t>(n, 1);
  const int64_t slices = std::min(work / (slice_work * threads), n_units / (8 * int64_t(threads)));
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
  auto unit_pairs = [&](int64_t unit, int worker) {
    PairWorker& w = workers[worker];
    const int64_t block = std::upper_bound(first_unit.begin(), first_unit.end(), unit) - first_unit.begin() - 1;
    const int64_t r0 = task.row_begin + block * kRowBlock, r1 = std::min(task.row_end, r0 + kRowBlock);
    const int64_t c0 = first_column(block) + (unit - first_unit[block]) * chunk;
    const int32_t c1 = static_cast<int32_t>(std::min<int64_t>(n_features, c0 + chunk));
    std::vector<uint32_t>& row_codes = w.scratch.row_codes;
    if (w.scratch.block != block) {
      row_codes.resize(static_cast<size_t>((r1 - r0) * n));
      for (int64_t r = r0; r < r1; ++r) {
        const uint16_t* ci = d.codes.data() + task.rows[r] * n;
        uint32_t* rc = row_codes.data() + (r - r0) * n;
        for (int32_t c = 0; c < classes; ++c)
          for (int32_t p = layout.class_start[c]; p < layout.class_start[c + 1]; ++p) rc[p] = ci[p] * classes + c;
      }
      w.scratch.block = block;
    }
    for (int64_t r = r0; r < r1; ++r) {
      const int32_t i = task.rows[r], li = x.levels[i];
      const uint32_t* rc = row_codes.data() + (r - r0) * n;
      for (int32_t j = static_cast<int32_t>(c0); j < c1; ++j) {
        if (task.all_pairs ? j <= i : j == i || (task.row_rank[j] >= 0 && task.row_rank[j] <= r)) continue;
        const int32_t lj = x.levels[j];
        const PairSums s = small_table(li, lj, classes, n)
                               ? count_small(rc, li, d.codes.data() + j * n, lj, classes, n, plogp, w.scratch.table,
                                             d.estimator == Estimator::shrink ? &w.scratch.shrink_cells : nullptr)
                               : count_large(d, i, j, plogp, w.scratch);
        const int32_t lo = std::min(i, j), hi = std::max(i, j);
        const int64_t key = pair_key(d.constants, s.joint_class, s.joint, d.sums.relevance[lo], d.sums.relevance[hi],
                                     d.sums.x_terms[lo], d.sums.x_terms[hi]);
        if (!passes(filter, key, lo, hi) || (bounded && !passes(w.filter, key, lo, hi))) continue;
        PairRecord rec;
        rec.i = lo;
        rec.j = hi;
        rec.key = key;
        rec.joint_class = s.joint_class;
        rec.joint = s.joint;
        rec.cells = s.cells;
        w.batch.push_back(rec);
        if (static_cast<int64_t>(w.batch.size()) >= kWorkerBatch) hand_on(w);
      }
    }
  };
  auto merge = [&] {
    for (PairWorker& w : workers) {
      hand_on(w);
      if (bounded) collector.merge(w.best);
    }
    filter = collector.filter();
  };
  sliced_parallel_for(n_units, slices, threads, 1,
                      [&](double done) {
                        merge();
                        if (between_slices) between_slices(done);
                      },
                      unit_pairs);
  merge();
}

}  // namespace fsgpu
