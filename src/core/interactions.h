// Exhaustive interaction search with MDFS's statistic (Mnich & Rudnicki; Piliszek et al.).
//
// Every variable has m levels (discretized values or genotypes). For a k-tuple of variables the
// objects of each class are counted in each of the m^k voxels; a pseudo-count p_c is added to
// every cell; the information gain of variable v in the tuple is
//   IG_v = N * [H(Y | tuple without v) - H(Y | tuple)]   (bits)
// and a variable's score is its largest IG over every tuple that contains it (interaction_gain.h
// has the formulas).
//
// Counting is bit-sliced, as in the MDFS GPU engine: objects are grouped by class, each class
// padded to whole 64-bit words, and each variable stored as one bitmap per level except the
// last. A tuple's counts come from AND + popcount for the combinations of counted levels; a
// position may also be "any level" (the variable's valid objects), and the cells of a variable's
// last level follow by subtraction (tuple_counts_from_marginals). Only (m-1)^k cells need the
// k-way AND; the rest are lower-order counts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint.h"
#include "code_matrix.h"  // ClassLayout
#include "interaction_gain.h"
#include "row_vector.h"

namespace fsgpu {

constexpr int kMaxInteractionDimensions = 5;
constexpr int kMaxInteractionLevels = 16;
// Cells of a tuple's table (m^k per class) an engine keeps at once.
constexpr int kMaxInteractionCells = 4096;

// One discretization of every variable, bit-sliced by class-sorted position.
struct InteractionBits {
  int32_t n_objects = 0, n_classes = 0;
  int32_t n_levels = 0;                  // m
  int64_t n_vars = 0;
  int32_t words = 0;                     // 64-bit words per bitmap: the classes' padded words
  std::vector<int32_t> class_size;       // objects per class
  std::vector<int32_t> class_word;       // n_classes + 1 offsets: class c's words
  RowVector<uint64_t> bits;              // [var][level < m - 1][word]: the object has that level
  std::vector<uint64_t> valid;           // [var][word]: the value is not missing; empty if none is
  std::vector<uint8_t> has_missing;      // per variable
  std::vector<int32_t> level_count;      // [var][level < m][class]: objects (non-missing)

  const uint64_t* level_bits(int64_t var, int level) const {
    return bits.data() + (var * (n_levels - 1) + level) * int64_t(words);
  }
  const uint64_t* valid_bits(int64_t var) const { return valid.data() + var * int64_t(words); }
  bool any_missing() const { return !valid.empty(); }
};

// Codes of one variable in sample order: 0..n_levels-1, or -1 for missing. Called from worker
// threads, for different variables at once.
using VariableCodes = std::function<void(int64_t var, int8_t* codes)>;

// Bitmaps and level counts of n_vars variables from their codes; throws when a code is out of range.
InteractionBits build_interaction_bits(const ClassLayout& layout, int64_t n_vars, int32_t n_levels,
                                       const VariableCodes& codes_of, int threads);

// MDFS's random discretization of one variable into divisions + 1 levels: thresholds at jittered
// quantiles of its sorted values (range = 0: equal frequency), drawn from (seed, discretization,
// variable) alone, so any engine and thread draws the same. values: n numbers (NaN = missing,
// code -1); sorted: scratch of n.
void mdfs_discretize(const double* values, int32_t n, int32_t divisions, double range, uint32_t seed,
                     uint32_t discretization, uint32_t variable, std::vector<double>& sorted, int8_t* codes);

// One variable's gain in one tuple, collected because it exceeds the task's threshold (MDFS's
// ComputeInterestingTuples).
struct InteractionHit {
  int32_t tuple[kMaxInteractionDimensions] = {};  // ascending; positions past the dimensions are 0
  int32_t var = 0;                                // one of the tuple's variables
  int32_t discretization = 0;                     // 0-based; the engines leave 0
  double gain = 0;
};

// The order of collected gains: by tuple (lexicographic), then by variable, as MDFS lists them.
bool hit_before(const InteractionHit& a, const InteractionHit& b);

// Per variable, its largest gain over the tuples that contain it, and (when asked) the tuple
// (ascending variable indices): ties go to the lexicographically smallest tuple. With a collecting
// task, also every gain above the threshold, in hit_before order.
struct InteractionBest {
  int32_t dimensions = 0;
  std::vector<double> gain;             // -inf where no tuple was evaluated
  std::vector<int32_t> tuple;           // [var][dimensions] or empty
  std::vector<InteractionHit> hits;     // collected gains (InteractionTask::collect)

  InteractionBest() = default;
  InteractionBest(int64_t n_vars, int32_t dimensions, bool with_tuples);
  // Takes a (gain, tuple) for var when it beats the current one.
  void offer(int64_t var, double gain, const int32_t* tuple_of_var);
  // Keeps, per variable, the better of the two (the same order as offer()).
  void merge(const InteractionBest& other);
};

// Tables of the pseudo-counted n log2 n terms the gains are built from (interaction_gain.h).
struct GainTables {
  int32_t n_classes = 0, n_levels = 0, n_objects = 0;
  std::vector<double> pseudo;           // p_c per class
  // [class][n] = (n + p_c) log2(n + p_c) and [n] = (n + P) log2(n + P), P = sum p_c, for the
  // cells of a tuple; and the same with m p_c for the cells of its sub-tuples (merged over m).
  std::vector<int64_t> cell, cell_total, merged, merged_total;  // fixed point (kGainScale)

  // pseudo_count: MDFS's xi; p_c = xi N_c / N_min.
  GainTables(const InteractionBits& bits, double pseudo_count);
  GainTableView view() const;
};

// Which tuples: the variables [0, n_real) are real and [n_real, n_vars) are contrast variables
// (permuted copies), as in MDFS 1.4: real variables are scored over the k-tuples of real
// variables; each contrast variable over the tuples of k - 1 real variables and itself (it is
// the tuple's last position), and only its own gain counts.
//
// A tuple's first variable is its smallest (for a contrast variable's tuples, a real variable, or
// with dimensions = 1 the contrast variable itself). Only tuples whose first variable is in
// [first_begin, first_end) are evaluated (first_end < 0: no upper end): by default all; a range
// is one share of a search split across processes (the R layer's BPPARAM), whose per-variable
// bests merge into the whole search's with InteractionBest's order.
//
// Collecting (MDFS's ComputeInterestingTuples): besides the bests, every (tuple, variable, gain)
// with gain > threshold over the evaluated tuples of real variables (never a contrast variable's
// tuple) whose variables pass the filter: with `interesting` (a flag per real variable), a tuple
// must hold at least one interesting variable, or only interesting ones with require_all; every
// variable of a kept tuple is reported. More than max_hits collected gains is an error (memory).
struct InteractionTask {
  int32_t dimensions = 2;
  int64_t n_real = 0;
  bool with_tuples = false;
  int64_t first_begin = 0, first_end = -1;
  bool collect = false;
  double threshold = 0;
  std::vector<uint8_t> interesting;  // empty: every tuple
  bool require_all = false;
  int64_t max_hits = int64_t(1) << 40;

  bool first_in_range(int64_t var) const { return var >= first_begin && (first_end < 0 || var < first_end); }
  // Whether the gains of a tuple of real variables are collected (before the threshold).
  bool collects(const int32_t* tuple) const {
    if (!collect) return false;
    if (interesting.empty()) return true;
    int32_t n = 0;
    for (int32_t i = 0; i < dimensions; ++i) n += interesting[tuple[i]] != 0;
    return require_all ? n == dimensions : n > 0;
  }
};

// Throws when more than task.max_hits gains were collected.
void check_hit_count(int64_t n_hits, const InteractionTask& task);

// Merges the collected gains of a later discretization into those of the earlier ones (both in
// hit_before order): per (tuple, variable) the larger gain, the earlier discretization on ties.
void merge_discretization_hits(std::vector<InteractionHit>& into, const std::vector<InteractionHit>& later);

// Throws when a search of this shape is not possible: dimensions outside 1..5, more cells than
// kMaxInteractionCells, fewer real variables than dimensions.
void check_interaction_task(const InteractionBits& bits, const InteractionTask& task);

// Each variable's condH alone (its table with pseudo-counts m p_c, fixed point), summed exactly as
// tuple_cond_entropy sums a pair's table without the pair's other variable: so the gains of a
// pair without missing values are alone[other] - condH(pair), bit for bit.
std::vector<int64_t> single_entropies(const InteractionBits& bits, const GainTableView& view, int threads);

// The bitmaps word-major, [word][level][var] with `stride` >= n_vars variables and room for
// `level_room` >= m - 1 levels (the rest zero): the GPU's layout, where neighbouring threads
// read neighbouring variables. Uninitialised until the threads write it.
RowVector<uint64_t> word_major_bits(const InteractionBits& bits, int64_t stride, int32_t level_room, int threads);

// The CPU engine: every k-tuple of the variables, on `threads` threads; between_slices runs on
// the calling thread (interrupts). Results are independent of the thread count.
InteractionBest cpu_interactions(const InteractionBits& bits, const GainTables& tables, const InteractionTask& task,
                                 int threads, const Checkpoint& between_slices);

}  // namespace fsgpu
