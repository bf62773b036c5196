// Counting n(x, s, y) for one feature X against a conditioning variable S and the class Y.
//
// What every engine computes per feature is the pair of sums
//   xsy = sum_{x,s,y} plogp(n_xsy),   xs = sum_{x,s} plogp(n_xs)      (fixed point)
// from which criteria.h derives every criterion's terms. The CUDA kernel (src/cuda/joint_counts.cu) follows
// the same steps; this is its CPU twin and the reference it is tested against.
//
// Counting goes class by class over an Lx x Ls table (samples are class-sorted). A class with
// far fewer entries than cells is finished by revisiting its entries ("touch"), others by
// scanning the table; either way the table is left zeroed for the next class. The cells of X's
// base code are derived from n(s, y), not counted (dense byte codes do add its entries to its
// row, to avoid a branch per entry, and clear the row before anything reads it). Dense byte
// codes with few cells for their samples are instead counted for all classes at once, each
// class a field of one 64-bit word a cell (PackedClasses): one pass over the samples, one read
// of each cell.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "code_matrix.h"
#include "plogp_table.h"

namespace fsgpu {

// A table is finished by revisiting its entries only when they are this many times fewer than
// its cells: scanning costs much less per cell than a revisit costs per entry.
constexpr int kTouchRatio = 4;

// From this many states of S on, the CPU counts dense features state by state (StateGroups).
constexpr int32_t kGroupedStates = 512;

// S expanded to dense class-sorted codes, with its count tables. Unconditioned: one level.
// S is a feature, a vector given by the user, or (CMI) the joint variable of several features,
// whose states can number up to N: hence 32-bit codes.
// The sums of plogp over n(s, y) and n(s) let the base code's cells be corrected only where
// other codes were counted, so a sparse feature costs its stored entries, not levels(S).
struct Conditioning {
  int32_t levels = 1;                 // Ls
  std::vector<uint32_t> codes;        // by class-sorted position
  std::vector<uint32_t> class_counts; // n(s, y) at [y * Ls + s]
  std::vector<uint32_t> counts;       // n(s)
  std::vector<int64_t> class_terms;   // per class y: sum_s plogp(n(s, y))
  int64_t total_term = 0;             // sum_s plogp(n(s))
  // S is this feature of the GPU engine that made it (SelectionEngine::condition_on), its codes
  // kept on the device: `codes` is empty. -1 otherwise.
  int64_t resident_feature = -1;

  static Conditioning none(const ClassLayout& layout, const PlogpTable& plogp);
  static Conditioning on_feature(const CodeMatrix& x, const ClassLayout& layout, int64_t feature,
                                 const PlogpTable& plogp);
  // The joint variable of S and a feature, its observed states numbered from 0.
  static Conditioning joined(const Conditioning& s, const CodeMatrix& x, int64_t feature, const ClassLayout& layout,
                             const PlogpTable& plogp);
  // S with the states that hold one class only merged into one state per class. The cells of
  // such a state add equal terms to sum plogp(n(x,s,y)) and sum plogp(n(x,s)), so N*H(Y|X,S),
  // I(X;Y|S) and I(X,S;Y) are exactly unchanged (the sums themselves are not): CMI's joint
  // condition keeps few states however many features it joins.
  Conditioning with_pure_states_merged(const ClassLayout& layout, const PlogpTable& plogp) const;

  int64_t all_class_terms() const;  // sum_{s,y} plogp(n(s, y))
  // counts, class_terms and total_term from levels and class_counts (however they were counted).
  void add_terms(const ClassLayout& layout, const PlogpTable& plogp);
};

// The class's own sums, fixed for a data set.
struct ClassTerms {
  int64_t plogp_n = 0;        // plogp(N)
  int64_t class_terms = 0;    // sum_y plogp(n(y))
  int64_t entropy() const { return plogp_n - class_terms; }  // N * H(Y)
  static ClassTerms of(const ClassLayout& layout, const PlogpTable& plogp);
};

// With many states (CMI's joint condition), the positions of S grouped by state, class-sorted
// within each state, so that the CPU counts a dense feature state by state in tables of
// levels(X) cells rather than in one of levels(X) x Ls cells that no cache holds.
struct StateGroups {
  std::vector<int32_t> by_state, state_start;
  static StateGroups of(const Conditioning& s);
};

// Count tables hold levels(X) x levels(S) cells; refuses sizes no engine can hold.
void check_table_size(const CodeMatrix& x, const Conditioning& s);


// A cell's counts of every class packed into one 64-bit word: a field per class, as wide as
// its size needs, and one for the cell's total. A dense byte-coded feature is then counted in one
// pass with one add a sample, whatever its class, and each cell is read once: the total's term
// from the plogp table, and the class fields' terms a group of fields at a time from tables of
// their sums. Those sums are the same integers added in another order, so the results are
// exactly the class-by-class count's; what changes is the work per cell: the class-by-class count
// scans its table once per class, which on few samples (a subsample of a microarray) costs
// more than the samples themselves.
struct PackedClasses {
  struct Group {
    int32_t shift = 0;
    uint64_t mask = 0;
    size_t first_term = 0;  // where the group's table starts in `terms`
  };
  std::vector<uint64_t> increment;  // per class-sorted position: one in its class's field and one in the total's
  int32_t total_shift = 0;
  std::vector<Group> groups;
  std::vector<int64_t> terms;       // per group, indexed by its fields' bits: the sum of their plogp terms

  bool usable() const { return !increment.empty(); }
  // Empty (not usable) when the fields do not fit one word or their tables would not stay in cache.
  static PackedClasses of(const ClassLayout& layout, const PlogpTable& plogp);
};

// Reusable per-thread tables for joint_sums, all-zero between calls.
struct alignas(64) CountScratch {  // aligned: workers must not share cache lines
  std::vector<uint32_t> class_table, pair_table, counted_sy, counted_s;
  std::vector<uint64_t> packed_table;  // PackedClasses' cells, two tables taking alternate samples
  std::vector<uint16_t> touched_class, touched_state;  // codes counted in the current class and state
};

struct JointSums {
  int64_t xsy = 0, xs = 0;
};

// The sums of feature X against S; xs - xsy is N * H(Y | X, S). `groups`, when given, are S's
// (a pass against S with at least kGroupedStates states should give them); `packed`, when
// usable, layout's (dense byte-coded features with few cells are then counted packed).
JointSums joint_sums(const CodeMatrix& x, int64_t feature, const Conditioning& s, const ClassLayout& layout,
                     const PlogpTable& plogp, CountScratch& scratch, const StateGroups* groups = nullptr,
                     const PackedClasses* packed = nullptr);

// The entries of `feature` that fall in class c: [first, last) of its entry range.
inline void class_entries(const CodeMatrix& x, int64_t feature, const ClassLayout& layout, int32_t c,
                          int64_t& first, int64_t& last) {
  const int64_t begin = x.entries_begin(feature);
  if (!x.sparse) {
    first = begin + layout.class_start[c];
    last = begin + layout.class_start[c + 1];
    return;
  }
  const int32_t* rows = x.entry_row.data();
  const int64_t end = x.entries_end(feature);
  first = std::lower_bound(rows + begin, rows + end, layout.class_start[c]) - rows;
  last = std::lower_bound(rows + first, rows + end, layout.class_start[c + 1]) - rows;
}

}  // namespace fsgpu
