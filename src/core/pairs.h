// Information of feature pairs: I(Y; Xi,Xj) for every pair (mi_pairs) and I(Xi;Xj) (mi_matrix).
//
// One count of n(a, b, y) per pair gives two sums (fixed point, as plogp_table.h):
//   joint_class = sum plogp(n(a,b,y)),   joint = sum plogp(n(a,b))
// and with each feature's own sums every measure is an exact integer (N * bits * 2^32):
//   I(Y; Xi,Xj) = joint_class - joint - sum_y plogp(n(y)) + plogp(N)
//   I(Xi; Xj)   = joint - sum_a plogp(n(a)) - sum_b plogp(n(b)) + plogp(N)
// so CPU and GPU agree bitwise and equal values tie exactly (then the lower indices win).
//
// Pairs are never held all at once unless asked: engines hand over pairs in batches to a
// PairCollector, which keeps the best `top` (or all at or above a threshold). The collector's
// current cut-off goes back to the engines, which pass on only the pairs that beat it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint.h"
#include "code_matrix.h"
#include "criteria.h"  // FSGPU_HD
#include "plogp_table.h"

namespace fsgpu {

enum class PairMeasure : int32_t {
  joint,        // I(Y; Xi,Xj)
  interaction,  // I(Y; Xi,Xj) - I(Y;Xi) - I(Y;Xj): positive = synergy (Jakulin's sign)
  mutual        // I(Xi; Xj), no class
};

// What the measure needs beyond a pair's own sums: constants and per-feature sums.
struct PairConstants {
  PairMeasure measure = PairMeasure::joint;
  int64_t plogp_n = 0;      // plogp(N)
  int64_t class_terms = 0;  // sum_y plogp(n(y))
};

// Per feature: relevance = N * I(X;Y) (fixed point) and x_terms = sum_a plogp(n(a)).
struct FeatureSums {
  std::vector<int64_t> relevance, x_terms;
};

FSGPU_HD inline int64_t pair_key(const PairConstants& c, int64_t joint_class, int64_t joint, int64_t relevance_i,
                                 int64_t relevance_j, int64_t x_terms_i, int64_t x_terms_j) {
  if (c.measure == PairMeasure::mutual) return c.plogp_n - x_terms_i - x_terms_j + joint;
  const int64_t information = joint_class - joint - c.class_terms + c.plogp_n;
  return c.measure == PairMeasure::joint ? information : information - relevance_i - relevance_j;
}

struct PairRecord {
  int32_t i = 0, j = 0;   // features, i < j
  int64_t key = 0;        // the measure, fixed point
  int64_t joint_class = 0, joint = 0;
  int32_t cells = 0;      // observed (a, b) combinations: the G-test's degrees of freedom
  int32_t pad = 0;
};

// The order of results: larger key first, then lower i, then lower j. A strict total order,
// so which pairs are kept does not depend on the order they were found in.
FSGPU_HD inline bool pair_before(int64_t key, int32_t i, int32_t j, int64_t key2, int32_t i2, int32_t j2) {
  if (key != key2) return key > key2;
  if (i != i2) return i < i2;
  return j < j2;
}

// The pairs an engine must evaluate: every pair (rows[r], column) with column != rows[r], except
// those counted from the other side: when the column is itself a row feature, only if its row
// position is above r. With rows = all features this is every pair i < j once. Row position r
// has n_features - 1 - r pairs either way.
//
// Only the row positions [row_begin, row_end) are evaluated: all of them unless the task is a
// tile(), one share of a search split across processes (the R layer's BPPARAM), whose pairs are
// exactly those the whole search evaluates from these rows.
struct PairTask {
  std::vector<int32_t> rows;       // distinct features, ascending
  std::vector<int32_t> row_rank;   // per feature: its position in rows, or -1
  bool all_pairs = false;          // rows are all features
  int64_t n_features = 0;
  int64_t row_begin = 0, row_end = 0;

  static PairTask all(int64_t n_features);
  static PairTask with(const std::vector<int32_t>& features, int64_t n_features);
  // This task restricted to row positions [begin, end) (0 <= begin <= end <= rows.size()).
  PairTask tile(int64_t begin, int64_t end) const;
  int64_t n_pairs() const;  // pairs of the rows in [row_begin, row_end)
};

// Which passing pairs a batch must report, given the collector's state.
struct PairFilter {
  enum Mode : int32_t { everything, at_least, beat } mode = everything;
  int64_t min_key = 0;             // at_least: key >= min_key
  int64_t key = 0;                 // beat: pair_before(pair, (key, i, j))
  int32_t i = 0, j = 0;
};

FSGPU_HD inline bool passes(const PairFilter& f, int64_t key, int32_t i, int32_t j) {
  if (f.mode == PairFilter::everything) return true;
  if (f.mode == PairFilter::at_least) return key >= f.min_key;
  return pair_before(key, i, j, f.key, f.i, f.j);
}

// Where a collector built with one sends every record (mi_matrix writes them into its output).
using PairSink = std::function<void(const PairRecord&)>;

// Keeps the best `top` pairs (top < 0: no limit) among those with key >= min_key (when
// has_min), in pair_before order. top = 0 would keep nothing and has no cut-off pair to filter
// by: the constructor throws std::invalid_argument. Built with a sink instead, it keeps
// nothing: every pair goes to the sink as it arrives (no top, no threshold), and finish()
// returns no records.
class PairCollector {
 public:
  PairCollector(int64_t top, bool has_min, int64_t min_key);
  explicit PairCollector(PairSink sink);
  void add(std::vector<PairRecord>& batch);  // consumes the batch
  PairFilter filter() const;                 // what engines may still skip
  std::vector<PairRecord> finish();          // sorted

  // Whether at most `top` pairs are kept (top > 0), so that held() stays bounded.
  bool bounded() const { return top_ > 0; }
  int64_t top() const { return top_; }
  // Records held now: at most 2 * top after each add() when bounded.
  int64_t held() const { return static_cast<int64_t>(kept_.size()); }
  // An empty collector with the same top and threshold (and no sink): a worker's own, merged
  // into this one.
  PairCollector empty_like() const { return PairCollector(top_, has_min_, min_key_); }
  // Takes over everything `other` holds. Its filter stays valid: the pairs it let through are
  // here now, so whatever it still rejects cannot enter this collector's result either.
  void merge(PairCollector& other) { add(other.kept_); }

 private:
  void trim();
  int64_t top_;
  bool has_min_;
  int64_t min_key_;
  PairSink sink_;
  std::vector<PairRecord> kept_;
  bool full_ = false;  // top_ pairs were kept: only pairs beating cut_ can enter
  PairRecord cut_;     // the worst of them
};

// How the GPU search counts a pair's n(a, b, y): AND + popcount of one-hot bitmaps on the CUDA
// cores, or the binary tensor cores (mma AND + POPC, sm_80 and later). automatic takes the
// tensor cores on devices that have them; tests force either to compare both with the CPU.
enum class GpuPairKernel : int32_t { automatic, popcount, tensor };

// The dense codes of every feature by class-sorted position (sparse features expanded),
// the per-feature sums, and the data's constants. Sums are made with the table's estimator;
// with shrink (estimators.h), table by table from the counts, in the same fixed-point form:
// only the mutual measure (mi_matrix) can then be searched, and only on the CPU.
struct PairData {
  const CodeMatrix* x = nullptr;
  const ClassLayout* layout = nullptr;
  std::vector<uint16_t> codes;  // [feature * n_samples + position]
  FeatureSums sums;
  PairConstants constants;
  Estimator estimator = Estimator::empirical;
  GpuPairKernel gpu_kernel = GpuPairKernel::automatic;

  static PairData of(const CodeMatrix& x, const ClassLayout& layout, const PlogpTable& plogp, PairMeasure measure,
                     int threads);
};

// Why the GPU cannot search with the shrink estimator (gpu_pair_search_problem's reason).
constexpr const char* kShrinkCpuOnly =
    "estimator = \"shrink\" runs on the CPU only: its shrinkage intensity depends on each whole table";

// Levels per feature the GPU search takes (one bitmap per level): its work per pair grows with
// levels squared, and features with more levels are counted faster on the CPU.
constexpr int kMaxGpuPairLevels = 64;

// The CPU engine: evaluates the task's pairs on `threads` threads in slices of rows (by work:
// about slice_work pair-sample operations per thread each), and hands the passing pairs to the
// collector.
// Bounded (top) searches keep each worker's best in a collector of its own, merged into
// `collector` between slices, so memory is O(threads * top). Unbounded collectors get each
// worker's batches as they fill: their add() (and sink) may run on worker threads, one at a
// time. between_slices runs on the calling thread.
constexpr int64_t kPairSliceWork = int64_t(1) << 26;  // about 0.1 s of a core
void cpu_pair_search(const PairData& data, const PairTask& task, const PlogpTable& plogp, PairCollector& collector,
                     int threads, const Checkpoint& between_slices, int64_t slice_work = kPairSliceWork);

}  // namespace fsgpu
