// The interaction search of core/interactions.h on GPUs: bit-sliced counting with AND + popcount,
// counters in registers, the gains computed on the device with the CPU's header
// (interaction_gain.h, host tables), so the results equal the CPU engine's bit for bit.
//
// Bitmaps are stored word-major, [word][level][variable], so that neighbouring threads (which
// take neighbouring variables) read neighbouring addresses.
//
// Pairs: on GPUs with binary tensor cores (sm_80 and later) and variables of 2 or 3 levels, one
// mma instruction (m16n8k256, AND + POPC) counts 16 (variable, level) rows against 8 (variable,
// level) columns over 256 objects of a class, so counting costs little beside the gain step.
// That step first bounds a pair's gains from float tables (half the shared-memory reads) and
// takes the exact fixed-point gains only for pairs whose bound reaches a variable's best gain so
// far (or the collecting threshold): the others can be neither a best nor tied with one.
// Otherwise a block scores a 64 x 64 tile of (row, column) variables; every thread holds a few
// rows and columns and keeps their (m-1)^2 counters per class in registers while words are
// staged through shared memory. Triples (i < j < l): a block takes one i and a tile of l's and
// walks the j's; the (i, l) counts stay in registers. With tensor cores, mma instructions count
// (j, i), (j, l) and, with rows I_a AND J_b, (i, j, l) for groups of j's; otherwise the block puts
// I AND J in shared memory for each j and every thread counts (i, j, l) and (j, l) with popcounts.
// The other cells (a level of one variable alone, the class sizes) come from known marginals, as
// in the CPU engine. Every other search (single variables, 4- and 5-tuples, more than 4 classes)
// goes to the tuple kernel: a thread per tuple, with the CPU's own table code; but quadruples and
// quintuples of 3-level variables and two classes, which count on the tensor cores as triples do.
//
// A variable's best gain is kept as an order-preserving 64-bit key with atomicMax; the tuple
// that reaches it (when asked) comes from a second pass, the smallest packed tuple among those
// whose gain equals the best (atomicMin): the CPU's tie rule.
//
// Collecting (InteractionTask::collect), the first pass also appends every gain above the
// threshold of a real tuple to a device buffer through an atomic counter; a batch whose gains
// overflow the buffer runs again with a buffer of the size it counted (the best keys' atomics are
// idempotent), and the host sorts the lists into the CPU's order.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "b1_mma.cuh"
#include "core/gpu_backend.h"
#include "core/interaction_gain.h"
#include "cuda_check.cuh"
#include "device_threads.cuh"

namespace fsgpu {

namespace {

constexpr int kMaxGpuClasses = 4;
constexpr int kMaxGpuLevels = 4;
constexpr int kTripleThreads = 128;
constexpr int kPairTile = 64;   // rows and columns of a pair block (16 x 16 threads)
constexpr int kPairChunk = 16;  // words staged per step
constexpr int kTensorWords = 4; // 64-bit words of one class per tensor-core mma (256 objects)

typedef unsigned long long Key;

// Gains in fixed point (interaction_gain.h) as unsigned keys in the same order; 0 is below
// every gain.
__host__ __device__ inline Key gain_key(int64_t fixed) { return Key(fixed) ^ (Key(1) << 63); }
__host__ __device__ inline int64_t key_fixed(Key k) { return static_cast<int64_t>(k ^ (Key(1) << 63)); }
constexpr int64_t kNoGain = INT64_MIN;

// Tuples packed so that their numeric order is their lexicographic order: 21 bits a variable
// for pairs and triples (pairs as (i, j, 0)), 64 / k bits for 4- and 5-tuples, all 64 for one.
__host__ __device__ inline Key pack_tuple(int32_t a, int32_t b, int32_t c = 0) {
  return (Key(a) << 42) | (Key(b) << 21) | Key(c);
}
__host__ __device__ inline int pack_shift(int32_t k, int32_t position) {
  return k == 2 || k == 3 ? 42 - 21 * position : (64 / k) * (k - 1 - position);
}
// Variables that a k-tuple's packing takes (its indices must be below this).
inline int64_t pack_limit(int32_t k) {
  return k == 1 ? int64_t(1) << 31 : int64_t(1) << (k <= 3 ? 21 : 64 / k);
}
inline void unpack_tuple(Key packed, int32_t k, int32_t* tuple) {
  const int bits = k == 1 ? 64 : k <= 3 ? 21 : 64 / k;
  const Key mask = bits >= 64 ? ~Key(0) : (Key(1) << bits) - 1;
  for (int32_t p = 0; p < k; ++p) tuple[p] = static_cast<int32_t>((packed >> pack_shift(k, p)) & mask);
}

// A collected gain: the packed tuple, the variable's position in it and its gain (fixed point).
struct Hit {
  Key tuple;
  int64_t gain;
  int32_t position;
};

struct SearchArgs {
  const uint64_t* bits;      // [word][level][var], var stride `stride`
  int64_t stride;
  int32_t words;
  int32_t n_classes;
  int32_t class_word[kMaxGpuClasses + 1];  // the pair and triple kernels' copies (up to 4 classes)
  int32_t class_size[kMaxGpuClasses];
  const int32_t* class_words;  // on the device, for any number of classes: n_classes + 1 offsets
  const int32_t* class_sizes;
  int32_t blocks;              // blocks that fill the device (the tuple kernel's grid)
  // Sub-tuples (3- to 5-tuples): the condH of each real (k-1)-tuple's table with merged
  // pseudo-counts, by colexicographic rank sum_p C(t_p, p + 1) (binomial: [p][v] = C(v, p + 1)),
  // which is a k-tuple's table summed over one position: computed once (sub_out, a pass of the
  // tuple kernel over the sub-tuples), read by every tuple that holds them (sub).
  const int64_t* binomial;
  int64_t* sub_out;
  const int64_t* sub;
  const int32_t* level_count;  // [var][level][class]
  const int64_t* alone;        // per variable: single_entropies()
  GainTableView tables;
  // Pairs: a bound (bits) on the error of a pair's gain from pair_entropy_screen(), so that the
  // exact gain is needed only where gain + bound could reach a variable's best (pair_tensor_kernel).
  float screen_bound;
  bool shared_tables;          // copy the tables into shared memory (they fit)
  bool tensor_cores;           // the device has binary tensor cores (sm_80+)
  int32_t n_real, n_vars;
  int32_t row_begin, row_end;  // the first variables of this launch
  bool contrast;               // the last position runs over the contrast variables
  bool tuple_pass;             // second pass: find the tuples reaching the best gains
  Key* best;                   // per variable
  Key* best_tuple;             // per variable
  // Collecting (first pass only): the gains of real tuples above `threshold` whose variables pass
  // the filter (`interesting`: a flag per real variable, or null for every tuple).
  bool collect;
  double threshold;
  const uint8_t* interesting;
  bool require_all;
  Hit* hits;
  unsigned long long* n_hits;  // counts every gain offered, also past the capacity
  unsigned long long hit_capacity;
};

// The colexicographic rank of the pair i < j (SearchArgs::sub).
__device__ inline int64_t pair_rank(int32_t i, int32_t j) { return int64_t(j) * (j - 1) / 2 + i; }

// Whether the gains of the real tuple (i, j) or (i, j, l) (l < 0 for pairs) are collected:
// InteractionTask::collects().
__device__ inline bool collects(const SearchArgs& a, int32_t i, int32_t j, int32_t l) {
  if (!a.collect || a.contrast) return false;
  if (!a.interesting) return true;
  const int n = a.interesting[i] + a.interesting[j] + (l >= 0 ? a.interesting[l] : 0);
  return a.require_all ? n == (l >= 0 ? 3 : 2) : n > 0;
}

// Appends the gain of the variable at `position` of a collected tuple when it exceeds the
// threshold (compared as the CPU compares it: the gain in bits as a double).
__device__ inline void collect_gain(const SearchArgs& a, Key packed, int32_t position, int64_t fixed) {
  if (!(gain_bits(fixed) > a.threshold)) return;
  const unsigned long long slot = atomicAdd(a.n_hits, 1ULL);
  if (slot < a.hit_capacity) a.hits[slot] = Hit{packed, fixed, position};
}

// The better of two keys: the larger gain (first pass) or the smaller tuple (tuple pass).
__device__ inline Key better_key(Key x, Key y, bool tuple_pass) { return tuple_pass ? min(x, y) : max(x, y); }

// Offers k to a key in global or shared memory, keeping the better.
__device__ inline void offer_key(Key* slot, Key k, bool tuple_pass) {
  if (tuple_pass) atomicMin(slot, k);
  else atomicMax(slot, k);
}

// Offers k to variable v's best gain (first pass) or best tuple (tuple pass).
__device__ inline void offer_best(const SearchArgs& a, int32_t v, Key k) {
  offer_key(a.tuple_pass ? a.best_tuple + v : a.best + v, k, a.tuple_pass);
}

__device__ inline const uint64_t* level_row(const SearchArgs& a, int32_t w, int level) {
  return a.bits + (int64_t(w) * (kMaxGpuLevels - 1) + level) * a.stride;
}

// The gain tables a block reads: copied into shared memory at `cache` when they fit (random
// lookups there cost far less than in L1), else the global ones. `merged`: also the tables of
// merged cells (triples need them; pairs take single_entropies instead).
__device__ inline GainTableView block_tables(const SearchArgs& a, int64_t* cache, bool merged, int tid, int threads) {
  GainTableView v = a.tables;
  if (!a.shared_tables) return v;
  const int32_t n = a.tables.stride, classes = a.tables.n_classes;
  int64_t* cell = cache;
  int64_t* cell_total = cell + classes * n;
  int64_t* merged_cell = cell_total + n;
  int64_t* merged_total = merged_cell + classes * n;
  for (int32_t e = tid; e < classes * n; e += threads) {
    cell[e] = a.tables.cell[e];
    if (merged) merged_cell[e] = a.tables.merged[e];
  }
  for (int32_t e = tid; e < n; e += threads) {
    cell_total[e] = a.tables.cell_total[e];
    if (merged) merged_total[e] = a.tables.merged_total[e];
  }
  v.cell = cell;
  v.cell_total = cell_total;
  if (merged) {
    v.merged = merged_cell;
    v.merged_total = merged_total;
  }
  return v;  // the caller synchronises before use
}

__host__ __device__ inline size_t table_bytes(int32_t stride, int32_t classes, bool merged) {
  return size_t(classes + 1) * stride * sizeof(int64_t) * (merged ? 2 : 1);
}

// The tensor-core pair kernel's tables: the 64-bit ones as 32-bit halves, then as floats.
__host__ __device__ inline size_t pair_table_bytes(int32_t stride, int32_t classes) {
  return table_bytes(stride, classes, false) * 3 / 2;
}

// The count of class c in cell (la, lb) of the pair (i, j) from its counts at levels below L,
// count(c, la, lb): the cells with level L follow from the row's and column's level counts and
// the class sizes (complete_counts' differences written out, so that the table lives in
// registers: the generic loops over a local array put it in local memory). Called in fully
// unrolled loops, so the branch is chosen at compile time.
template <int L, int NC, class Counts>
__device__ __forceinline__ int32_t pair_cell(const Counts& count, const int32_t (&row_levels)[NC][L],
                                             const int32_t (&col_levels)[NC][L], const SearchArgs& a, int c, int la,
                                             int lb) {
  int32_t n;
  if (la < L && lb < L) {
    n = static_cast<int32_t>(count(c, la, lb));
  } else if (la < L) {  // (la, last level of j)
    n = row_levels[c][la];
#pragma unroll
    for (int b = 0; b < L; ++b) n -= static_cast<int32_t>(count(c, la, b));
  } else if (lb < L) {  // (last level of i, lb)
    n = col_levels[c][lb];
#pragma unroll
    for (int x = 0; x < L; ++x) n -= static_cast<int32_t>(count(c, x, lb));
  } else {  // both last
    n = a.class_size[c];
#pragma unroll
    for (int x = 0; x < L; ++x) {
      n -= row_levels[c][x] + col_levels[c][x];
#pragma unroll
      for (int b = 0; b < L; ++b) n += static_cast<int32_t>(count(c, x, b));
    }
  }
  return n;
}

// Visits the terms of a pair's condH, row la by row: class(la, c, n) for the count n of class c
// in each cell (la, lb), then total(la, n) for the cell's total count (pair_cell() gives them).
// condH is the sum of the totals' table entries less the classes'.
template <int L, int NC, class Counts, class ClassTerm, class TotalTerm>
__device__ __forceinline__ void pair_terms(const Counts& count, const int32_t (&row_levels)[NC][L],
                                          const int32_t (&col_levels)[NC][L], const SearchArgs& a,
                                          ClassTerm&& class_term, TotalTerm&& total_term) {
#pragma unroll
  for (int la = 0; la <= L; ++la)
#pragma unroll
    for (int lb = 0; lb <= L; ++lb) {
      int32_t total = 0;
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const int32_t n = pair_cell<L, NC>(count, row_levels, col_levels, a, c, la, lb);
        total += n;
        class_term(la, c, n);
      }
      total_term(la, total);
    }
}

// condH (fixed point) of the pair (i, j) from its counts. Integer sums: the same as the CPU's.
template <int L, int NC, class Counts>
__device__ FSGPU_GAIN_INLINE int64_t pair_entropy(const Counts& count, const int32_t (&row_levels)[NC][L],
                                                  const int32_t (&col_levels)[NC][L], const SearchArgs& a,
                                                  const GainTableView& tables) {
  int64_t h = 0;
  pair_terms<L, NC>(
      count, row_levels, col_levels, a, [&](int, int c, int32_t n) { h -= tables.cell[c * tables.stride + n]; },
      [&](int, int32_t total) { h += tables.cell_total[total]; });
  return h;
}

template <int L, int NC>
__device__ FSGPU_GAIN_INLINE void load_level_counts(const SearchArgs& a, int32_t v, int32_t (&levels)[NC][L]) {
#pragma unroll
  for (int c = 0; c < NC; ++c)
#pragma unroll
    for (int la = 0; la < L; ++la) levels[c][la] = a.level_count[(int64_t(v) * (L + 1) + la) * NC + c];
}

// Pairs. Thread (tx, ty) holds rows ty + 16 r (r < TI) and columns tx + 16 q (q < TJ) of a
// block tile of 16 TI rows and 16 TJ columns.
// Two blocks per SM (at most 128 registers): measured 1.6 times faster than one block of up to
// 255 registers on an H100, despite a few spilled registers in the gain step.
template <int L, int NC, int TI, int TJ>
__global__ void __launch_bounds__(256, 2) pair_kernel(SearchArgs a) {
  constexpr int BI = 16 * TI, BJ = 16 * TJ;
  __shared__ uint64_t rows[kPairChunk][L][BI], cols[kPairChunk][L][BJ];
  __shared__ Key col_key[BJ];
  extern __shared__ int64_t table_cache[];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int32_t row0 = a.row_begin + blockIdx.y * BI;
  const int32_t col_first = a.contrast ? a.n_real : 0, col_end = a.contrast ? a.n_vars : a.n_real;
  const int32_t col0 = col_first + blockIdx.x * BJ;
  if (!a.contrast && col0 + BJ - 1 <= row0) return;  // every pair has column <= row
  const GainTableView tables = block_tables(a, table_cache, false, tid, 256);
  uint32_t count[NC][TI][TJ][L][L] = {};
  for (int c = 0; c < a.n_classes; ++c) {
    for (int32_t w0 = a.class_word[c]; w0 < a.class_word[c + 1]; w0 += kPairChunk) {
      const int chunk = min(kPairChunk, a.class_word[c + 1] - w0);
      __syncthreads();
      for (int e = tid; e < chunk * L * BI; e += 256) {
        const int v = e % BI, level = (e / BI) % L, w = e / (BI * L);
        rows[w][level][v] = level_row(a, w0 + w, level)[row0 + v];
      }
      for (int e = tid; e < chunk * L * BJ; e += 256) {
        const int v = e % BJ, level = (e / BJ) % L, w = e / (BJ * L);
        cols[w][level][v] = level_row(a, w0 + w, level)[col0 + v];
      }
      __syncthreads();
      for (int w = 0; w < chunk; ++w) {
        uint64_t x[TI][L], y[TJ][L];
#pragma unroll
        for (int r = 0; r < TI; ++r)
#pragma unroll
          for (int l = 0; l < L; ++l) x[r][l] = rows[w][l][ty + 16 * r];
#pragma unroll
        for (int q = 0; q < TJ; ++q)
#pragma unroll
          for (int l = 0; l < L; ++l) y[q][l] = cols[w][l][tx + 16 * q];
#pragma unroll
        for (int cc = 0; cc < NC; ++cc) {
          if (cc != c) continue;
#pragma unroll
          for (int r = 0; r < TI; ++r)
#pragma unroll
            for (int q = 0; q < TJ; ++q)
#pragma unroll
              for (int la = 0; la < L; ++la)
#pragma unroll
                for (int lb = 0; lb < L; ++lb) count[cc][r][q][la][lb] += __popcll(x[r][la] & y[q][lb]);
        }
      }
    }
  }
  // Gains, then per row and column the best key (first pass) or the smallest tuple reaching the
  // best gain (second pass); identity: 0 for max, all ones for min.
  const Key identity = a.tuple_pass ? ~Key(0) : Key(0);
  Key row_key[TI], col_best[TJ];
#pragma unroll
  for (int r = 0; r < TI; ++r) row_key[r] = identity;
#pragma unroll
  for (int q = 0; q < TJ; ++q) col_best[q] = identity;
#pragma unroll
  for (int r = 0; r < TI; ++r) {
    const int32_t i = row0 + ty + 16 * r;
    if (i >= a.row_end) continue;
    // The row's own values, once for its TJ pairs.
    int32_t row_levels[NC][L];
    load_level_counts<L, NC>(a, i, row_levels);
    const int64_t alone_i = a.alone[i];
#pragma unroll
    for (int q = 0; q < TJ; ++q) {
      const int32_t j = col0 + tx + 16 * q;
      if (j >= col_end || (!a.contrast && j <= i)) continue;
      int32_t col_levels[NC][L];
      load_level_counts<L, NC>(a, j, col_levels);
      const int64_t full = pair_entropy<L, NC>([&](int c, int la, int lb) { return count[c][r][q][la][lb]; },
                                               row_levels, col_levels, a, tables);
      const Key gi = gain_key(a.alone[j] - full), gj = gain_key(alone_i - full);
      const Key packed = pack_tuple(i, j);
      if (collects(a, i, j, -1)) {
        collect_gain(a, packed, 0, a.alone[j] - full);
        collect_gain(a, packed, 1, alone_i - full);
      }
      if (!a.tuple_pass) {
        row_key[r] = max(row_key[r], gi);
        col_best[q] = max(col_best[q], gj);
      } else {
        if (gi == a.best[i]) row_key[r] = min(row_key[r], packed);
        if (gj == a.best[j]) col_best[q] = min(col_best[q], packed);
      }
    }
  }
  // Rows: the 16 threads of a row are a half warp.
#pragma unroll
  for (int r = 0; r < TI; ++r) {
    Key k = row_key[r];
    for (int off = 8; off; off >>= 1) k = better_key(k, __shfl_xor_sync(0xffffffffu, k, off), a.tuple_pass);
    const int32_t i = row0 + ty + 16 * r;
    if (tx == 0 && !a.contrast && i < a.row_end && k != identity) {
      offer_best(a, i, k);
    }
  }
  // Columns: across the block's rows in shared memory.
  if (tid < BJ) col_key[tid] = identity;
  __syncthreads();
#pragma unroll
  for (int q = 0; q < TJ; ++q) {
    Key k = better_key(col_best[q], __shfl_xor_sync(0xffffffffu, col_best[q], 16), a.tuple_pass);
    if ((tid & 16) == 0 && k != identity) {
      offer_key(&col_key[tx + 16 * q], k, a.tuple_pass);
    }
  }
  __syncthreads();
  if (tid < BJ && col0 + tid < col_end && col_key[tid] != identity) {
    offer_best(a, col0 + tid, col_key[tid]);
  }
}

// 32 bits of variable v's level bitmap: half h of word w (0 past the class's last word).
__device__ inline uint32_t bitmap_half(const SearchArgs& a, int32_t w, int32_t w_end, int level, int32_t v, int h) {
  if (w >= w_end) return 0;
  return __ldg(reinterpret_cast<const uint32_t*>(level_row(a, w, level) + v) + h);
}

// The same halves through pointers stepped a word at a time, so that a loop over words pays no
// address arithmetic per read: half t % 2 of word w of variable v's level bitmap is
// half_row(a, level, v, t)[w * half_word_step(a)].
__device__ inline const uint32_t* half_row(const SearchArgs& a, int level, int32_t v, int t) {
  return reinterpret_cast<const uint32_t*>(a.bits) + (level * a.stride + v) * 2 + t % 2;
}
__device__ inline int64_t half_word_step(const SearchArgs& a) { return int64_t(kMaxGpuLevels - 1) * a.stride * 2; }

// The lane's fragments for the mma over words [w0, w0 + 4) of a class ending at w_end: rows
// (vars[0], levels[0]) and (vars[1], levels[1]) (a0..a3), or column (var, level) (b0, b1).
__device__ inline void row_fragment(const SearchArgs& a, int32_t w0, int32_t w_end, const int (&levels)[2],
                                    const int32_t (&vars)[2], int t, uint32_t (&x)[4]) {
  const int32_t w_lo = w0 + t / 2, w_hi = w0 + 2 + t / 2;
  x[0] = bitmap_half(a, w_lo, w_end, levels[0], vars[0], t % 2);
  x[1] = bitmap_half(a, w_lo, w_end, levels[1], vars[1], t % 2);
  x[2] = bitmap_half(a, w_hi, w_end, levels[0], vars[0], t % 2);
  x[3] = bitmap_half(a, w_hi, w_end, levels[1], vars[1], t % 2);
}

__device__ inline void column_fragment(const SearchArgs& a, int32_t w0, int32_t w_end, int level, int32_t var, int t,
                                       uint32_t (&y)[2]) {
  y[0] = bitmap_half(a, w0 + t / 2, w_end, level, var, t % 2);
  y[1] = bitmap_half(a, w0 + 2 + t / 2, w_end, level, var, t % 2);
}

// Pairs on the binary tensor cores, for L = 1 or 2 (variables of 2 or 3 levels). An mma tile has
// RV row variables x CV column variables: for L = 2 row r is (variable r % 8, level r / 8) and
// column c is (variable c / 2, level c % 2), so lane (g, t) receives the four level counts of
// the pair (g, t); for L = 1 rows and columns are variables and a lane receives four pairs.
// A warp takes RV rows and NT tiles of columns; the block's warps cover 64 rows and BJ columns.
template <int L, int NC>
struct TensorPairShape {
  static_assert(L == 1 || L == 2, "the tensor-core pairs take 2 or 3 levels");
  static constexpr int RV = 16 / L, CV = 8 / L;  // variables of an mma tile's rows and columns
  static constexpr int NT = NC == 2 ? 8 : 4;     // column tiles per warp: NC NT 4 counters a lane
  static constexpr int WR = kPairTile / RV, WC = 8 / WR, BJ = WC * NT * CV;  // warps 8 = WR x WC
};

// The pair gain tables in shared memory as 32-bit halves, v = hi * 2^32 + lo (lo unsigned):
// [class][n] then the totals [n] at class NC. A warp's lookups of one cell have counts within a
// few dozen of each other, so 32-bit words fall in distinct banks where 64-bit ones conflicted
// (ncu: 3.7-way, the shared pipe the limit). The block copies them from the global tables once;
// tables too large for shared memory stay 64-bit in global memory (Split = false).
struct SplitTables {
  const uint32_t* lo;
  const int32_t* hi;
  int32_t stride;
};

template <int NC>
__device__ inline SplitTables split_block_tables(const SearchArgs& a, uint32_t* cache, int tid, int threads) {
  const int32_t n = a.tables.stride, entries = (NC + 1) * n;
  uint32_t* lo = cache;
  int32_t* hi = reinterpret_cast<int32_t*>(cache + entries);
  for (int32_t e = tid; e < entries; e += threads) {
    const int64_t v = e < NC * n ? a.tables.cell[e] : a.tables.cell_total[e - NC * n];
    lo[e] = static_cast<uint32_t>(static_cast<uint64_t>(v));
    hi[e] = static_cast<int32_t>((v - static_cast<int64_t>(lo[e])) / (int64_t(1) << 32));
  }
  return SplitTables{lo, hi, n};  // the caller synchronises before use
}

// pair_entropy() from the split tables: the high halves summed in 32 bits, the low ones in 64,
// then joined. Every sum is exact (no overflow), so the result is pair_entropy()'s integer.
template <int L, int NC, class Counts>
__device__ FSGPU_GAIN_INLINE int64_t pair_entropy_split(const Counts& count, const int32_t (&row_levels)[NC][L],
                                                        const int32_t (&col_levels)[NC][L], const SearchArgs& a,
                                                        const SplitTables& t) {
  int32_t hi = 0;
  int64_t lo = 0;
  pair_terms<L, NC>(
      count, row_levels, col_levels, a,
      [&](int, int c, int32_t n) {
        hi -= t.hi[c * t.stride + n];
        lo -= t.lo[c * t.stride + n];
      },
      [&](int, int32_t total) {
        hi += t.hi[NC * t.stride + total];
        lo += t.lo[NC * t.stride + total];
      });
  return static_cast<int64_t>(hi) * (int64_t(1) << 32) + lo;
}

// The pair gain tables again as floats in bits (each entry v 2^-32 rounded once), after the split
// tables in shared memory: a table per class, then the totals'. The screen addresses them by
// 32-bit shared-memory byte addresses: a cell's address follows from its count with one LEA
// (counted cells) or one IADD3 (the others, from per-row and per-column constants), so a lookup
// costs no index arithmetic of its own.
template <int NC>
struct ScreenTables {
  uint32_t of[NC];        // the address of class c's entry 0
  uint32_t total_offset;  // the totals' entry of a cell: the sum of its classes' addresses plus this
};

template <int NC>
__device__ inline ScreenTables<NC> float_block_tables(const SearchArgs& a, float* cache, int tid, int threads) {
  const int32_t n = a.tables.stride, entries = (NC + 1) * n;
  for (int32_t e = tid; e < entries; e += threads) {
    const int64_t v = e < NC * n ? a.tables.cell[e] : a.tables.cell_total[e - NC * n];
    cache[e] = __double2float_rn(static_cast<double>(v) * (1.0 / kGainScale));
  }
  ScreenTables<NC> t;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(cache));
  t.total_offset = base + 4u * NC * n;
#pragma unroll
  for (int c = 0; c < NC; ++c) {
    t.of[c] = base + 4u * c * n;
    t.total_offset -= t.of[c];
  }
  return t;  // the caller synchronises before use
}

__device__ __forceinline__ float shared_float(uint32_t address) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(address));
  return v;
}

// The constants of a row's (column's) cells at its last level L, as addresses: with A(x, b) the
// address of class c's cell (x, b), A(x, L) = row(x) - sum_b A(x, b) and A(L, b) = column(b) -
// sum_x A(x, b) for b <= L, where row(x) = (L + 1) of[c] + 4 (objects of class c with the row at
// level x), column(b) likewise for b < L and column(L) = (L + 1) of[c] + 4 (class c's objects with
// the column at level L). (pair_cell()'s differences, on addresses.)
template <int L, int NC>
__device__ __forceinline__ void screen_row_constants(const ScreenTables<NC>& t, const int32_t (&levels)[NC][L],
                                                     uint32_t (&k)[NC][L]) {
#pragma unroll
  for (int c = 0; c < NC; ++c)
#pragma unroll
    for (int x = 0; x < L; ++x) k[c][x] = (L + 1) * t.of[c] + 4u * levels[c][x];
}

template <int L, int NC>
__device__ __forceinline__ void screen_column_constants(const ScreenTables<NC>& t, const int32_t (&levels)[NC][L],
                                                        const int32_t (&class_size)[kMaxGpuClasses],
                                                        uint32_t (&k)[NC][L + 1]) {
#pragma unroll
  for (int c = 0; c < NC; ++c) {
    int32_t last = class_size[c];
#pragma unroll
    for (int b = 0; b < L; ++b) {
      k[c][b] = (L + 1) * t.of[c] + 4u * levels[c][b];
      last -= levels[c][b];
    }
    k[c][L] = (L + 1) * t.of[c] + 4u * last;
  }
}

// condH of a pair in bits from the float tables: the same terms, in the same order, as
// pair_entropy_split() takes, at half its shared-memory reads. Its error stays below the bound
// that pair_screen_bound() derives on the host (its 9 (NC + 1) terms rounded once and added in any
// order: at most 9 (NC + 1) u S).
template <int L, int NC, class Counts>
__device__ __forceinline__ float pair_entropy_screen(const Counts& count, const uint32_t (&row_k)[NC][L],
                                                     const uint32_t (&col_k)[NC][L + 1], const ScreenTables<NC>& t) {
  uint32_t at[NC][L + 1][L + 1];
#pragma unroll
  for (int c = 0; c < NC; ++c) {
#pragma unroll
    for (int x = 0; x < L; ++x) {
      at[c][x][L] = row_k[c][x];
#pragma unroll
      for (int b = 0; b < L; ++b) {
        at[c][x][b] = t.of[c] + 4u * static_cast<uint32_t>(count(c, x, b));
        at[c][x][L] -= at[c][x][b];
      }
    }
#pragma unroll
    for (int b = 0; b <= L; ++b) {
      at[c][L][b] = col_k[c][b];
#pragma unroll
      for (int x = 0; x < L; ++x) at[c][L][b] -= at[c][x][b];
    }
  }
  float row[L + 1] = {};  // a partial sum a row: shorter chains of dependent additions
#pragma unroll
  for (int la = 0; la <= L; ++la)
#pragma unroll
    for (int lb = 0; lb <= L; ++lb) {
      uint32_t total = t.total_offset;
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        total += at[c][la][lb];
        row[la] -= shared_float(at[c][la][lb]);
      }
      row[la] += shared_float(total);
    }
  float h = 0.0f;
#pragma unroll
  for (int la = 0; la <= L; ++la) h += row[la];
  return h;
}

// A variable's best gain so far as a float no larger than it (bits); -inf before any gain.
__device__ inline float screen_floor(Key best) {
  return best == 0 ? -INFINITY : __double2float_rd(gain_bits(key_fixed(best)));
}

// Tiles of kPairTile rows x BJ columns, numbered row tile by row tile (tiles_x columns each): a
// block copies the gain tables into shared memory once and takes tiles blockIdx.x,
// blockIdx.x + gridDim.x, ... (a launch of as many blocks as stay resident), so that neither the
// copy nor a block's start is paid per tile. Within a tile every warp works alone on its RV rows
// and NT CV columns (no block barrier: while some warps wait for their words, others compute
// gains): it skips its part when wholly below the diagonal, reads its columns' constants into its
// own shared slots, counts with fragments read through pointers stepped a word at a time, and
// offers its keys straight to the variables' best ones (after the screen, rarely any).
template <int L, int NC, bool Split>
__global__ void __launch_bounds__(256, 2) pair_tensor_kernel(SearchArgs a, int32_t tiles_x, int64_t n_tiles) {
  using Shape = TensorPairShape<L, NC>;
  constexpr int RV = Shape::RV, CV = Shape::CV, NT = Shape::NT, WR = Shape::WR, BJ = Shape::BJ;
  constexpr int WCOLS = NT * CV;  // a warp's columns
  extern __shared__ int64_t table_cache[];
  // A warp's columns: level counts, screen constants, single entropies and best gains so far (bits).
  struct Column {
    int32_t level_count[NC][L];
    uint32_t screen[NC][L + 1];
    float alone, floor;
  };
  __shared__ Column warp_columns[8][WCOLS];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int32_t col_first = a.contrast ? a.n_real : 0, col_end = a.contrast ? a.n_vars : a.n_real;
  SplitTables split{};  // (Split: the tables in shared memory; without, the global ones)
  ScreenTables<NC> screen{};
  if constexpr (Split) {
    split = split_block_tables<NC>(a, reinterpret_cast<uint32_t*>(table_cache), tid, 256);
    screen = float_block_tables<NC>(a, reinterpret_cast<float*>(table_cache) + 2 * (NC + 1) * split.stride, tid, 256);
  }
  __syncthreads();  // the tables are ready
  Column* columns = warp_columns[warp];
  // Single-variable entropies in bits (rounded once) for the screen's bounds.
  auto alone_bits = [&](int32_t v) { return __double2float_rn(gain_bits(a.alone[min(v, a.n_vars - 1)])); };
  const Key identity = a.tuple_pass ? ~Key(0) : Key(0);
  const int64_t word_step = half_word_step(a);
  for (int64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    const int32_t rv0 = a.row_begin + static_cast<int32_t>(tile / tiles_x) * kPairTile + (warp % WR) * RV;
    const int32_t cv0 = col_first + static_cast<int32_t>(tile % tiles_x) * BJ + (warp / WR) * WCOLS;
    if (rv0 >= a.row_end || cv0 >= col_end || (!a.contrast && cv0 + WCOLS - 1 <= rv0)) continue;
    __syncwarp();  // the last tile's columns are read
    // Best gains offered so far (pass 1: by any warp; pass 2: the final ones), the columns' here and
    // the rows' after the count. A pair whose gains stay below both of its variables' is neither a
    // best nor tied with one; a stale value is only a lower floor.
    for (int col = lane; col < WCOLS; col += 32) {
      const int32_t j = cv0 + col;
      Column& info = columns[col];
      load_level_counts<L, NC>(a, min(j, a.n_vars - 1), info.level_count);
      if constexpr (Split) {
        info.floor = j >= col_end ? INFINITY : screen_floor(a.best[j]);
        info.alone = alone_bits(j);
        screen_column_constants<L, NC>(screen, info.level_count, a.class_size, info.screen);
      }
    }
    // The lane's rows g, g + 8 and column g as (variable, level).
    const int32_t row_var[2] = {rv0 + g, rv0 + (L == 2 ? g : g + 8)};
    const int row_level[2] = {0, L == 2 ? 1 : 0};
    const uint32_t* row_bits[2] = {half_row(a, row_level[0], row_var[0], t), half_row(a, row_level[1], row_var[1], t)};
    const uint32_t* col_bits = half_row(a, L == 2 ? g % 2 : 0, cv0 + (L == 2 ? g / 2 : g), t);
    int32_t acc[NC][NT][4] = {};
  #pragma unroll
    for (int c = 0; c < NC; ++c) {
      // Words w0 + t / 2 and w0 + 2 + t / 2 of each step of 4 (0 past the class's last word), as
      // row_fragment() reads them.
      const int32_t w_end = a.class_word[c + 1];
      const int64_t first = (a.class_word[c] + t / 2) * word_step;
      const uint32_t *r0 = row_bits[0] + first, *r1 = row_bits[1] + first, *cb = col_bits + first;
      for (int32_t w = a.class_word[c] + t / 2; w - t / 2 < w_end; w += kTensorWords) {
        const bool lo = w < w_end, hi = w + 2 < w_end;
        const uint32_t *r0_hi = r0 + 2 * word_step, *r1_hi = r1 + 2 * word_step, *cb_hi = cb + 2 * word_step;
        const uint32_t x[4] = {lo ? __ldg(r0) : 0u, lo ? __ldg(r1) : 0u, hi ? __ldg(r0_hi) : 0u, hi ? __ldg(r1_hi) : 0u};
  #pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint32_t y[2] = {lo ? __ldg(cb + 2 * nt * CV) : 0u, hi ? __ldg(cb_hi + 2 * nt * CV) : 0u};
          b1_mma_and_popc(acc[c][nt], x, y);
        }
        r0 += kTensorWords * word_step;
        r1 += kTensorWords * word_step;
        cb += kTensorWords * word_step;
      }
    }
    __syncwarp();  // the columns are ready
    // Gains: the lane's pairs are (row_var[p / 2 or 0], column) as described above.
    constexpr int ROWS = L == 2 ? 1 : 2, COLS = L == 2 ? 1 : 2;  // pairs per lane and tile: ROWS x COLS
    Key row_key[ROWS];
    int32_t row_levels[ROWS][NC][L];
    uint32_t row_screen[ROWS][NC][L];
    float row_alone[ROWS], floor_of_row[ROWS];
  #pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      row_key[r] = identity;
      load_level_counts<L, NC>(a, min(row_var[r], a.n_vars - 1), row_levels[r]);
      if constexpr (Split) {
        screen_row_constants<L, NC>(screen, row_levels[r], row_screen[r]);
        row_alone[r] = alone_bits(row_var[r]);
        // Contrast rows are not scored.
        floor_of_row[r] = a.contrast || row_var[r] >= a.row_end ? INFINITY : screen_floor(a.best[row_var[r]]);
      }
    }
  #pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
  #pragma unroll
      for (int q = 0; q < COLS; ++q) {
        Key col_key = identity;
        const int col = nt * CV + (L == 2 ? t : 2 * t + q);  // j - cv0
        const int32_t j = cv0 + col;
        const Column& info = columns[col];
        uint32_t col_k[NC][L + 1];
        float col_alone = 0.0f, floor_of_col = 0.0f;
        if constexpr (Split) {
#pragma unroll
          for (int c = 0; c < NC; ++c)
#pragma unroll
            for (int lb = 0; lb <= L; ++lb) col_k[c][lb] = info.screen[c][lb];
          col_alone = info.alone;
          floor_of_col = info.floor;
        }
  #pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          const int32_t i = row_var[r];
          if (i >= a.row_end || j >= col_end || (!a.contrast && j <= i)) continue;
          // L = 2: d[2 la + lb]; L = 1: d[2 r + q].
          const auto counted = [&](int c, int la, int lb) { return acc[c][nt][L == 2 ? 2 * la + lb : 2 * r + q]; };
          if constexpr (Split) {
            // The exact gains only where an upper bound of either reaches its variable's best
            // so far or (collecting) the threshold: the same keys and hits as for every pair.
            const float h = pair_entropy_screen<L, NC>(counted, row_screen[r], col_k, screen);
            const float bound_i = col_alone - h + a.screen_bound;
            const float bound_j = row_alone[r] - h + a.screen_bound;
            const bool may_collect = collects(a, i, j, -1) && double(fmaxf(bound_i, bound_j)) > a.threshold;
            if (bound_i < floor_of_row[r] && bound_j < floor_of_col && !may_collect) continue;
          }
          int32_t col_levels[NC][L];
#pragma unroll
          for (int c = 0; c < NC; ++c)
#pragma unroll
            for (int lb = 0; lb < L; ++lb) col_levels[c][lb] = info.level_count[c][lb];
          int64_t full;
          if constexpr (Split) full = pair_entropy_split<L, NC>(counted, row_levels[r], col_levels, a, split);
          else full = pair_entropy<L, NC>(counted, row_levels[r], col_levels, a, a.tables);
          const Key gi = gain_key(a.alone[j] - full), gj = gain_key(a.alone[i] - full);
          if (collects(a, i, j, -1)) {
            collect_gain(a, pack_tuple(i, j), 0, a.alone[j] - full);
            collect_gain(a, pack_tuple(i, j), 1, a.alone[i] - full);
          }
          if (!a.tuple_pass) {
            row_key[r] = max(row_key[r], gi);
            col_key = max(col_key, gj);
          } else {
            const Key packed = pack_tuple(i, j);
            if (gi == a.best[i]) row_key[r] = min(row_key[r], packed);
            if (gj == a.best[j]) col_key = min(col_key, packed);
          }
        }
        // A column is shared by the lanes of one t (and for L = 1 both rows): reduce over g (with
        // the screen, only where some lane holds a key).
        if (!Split || __any_sync(0xffffffffu, col_key != identity)) {
          for (int off = 4; off < 32; off <<= 1)
            col_key = better_key(col_key, __shfl_xor_sync(0xffffffffu, col_key, off), a.tuple_pass);
          if (g == 0 && col_key != identity) offer_best(a, j, col_key);
        }
      }
    }
    // A row is shared by the four lanes of one g.
  #pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      Key k = row_key[r];
      if (!a.contrast && (!Split || __any_sync(0xffffffffu, k != identity))) {
        for (int off = 1; off < 4; off <<= 1) k = better_key(k, __shfl_xor_sync(0xffffffffu, k, off), a.tuple_pass);
        if (t == 0 && k != identity) offer_best(a, row_var[r], k);
      }
    }
  }
}

// Triples i < j < l (or i < j real, l a contrast variable). Block: one i, kTripleThreads l's.
template <int L, int NC>
__global__ void __launch_bounds__(kTripleThreads) triple_kernel(SearchArgs a, int32_t l_tiles) {
  constexpr int M = L + 1, CELLS = M * M * M;
  extern __shared__ uint64_t shared[];
  uint64_t* ij = shared;                      // [word][L][L]: I_a AND J_b
  uint64_t* jw = shared + a.words * L * L;    // [word][L]: J_b
  int64_t* table_cache = reinterpret_cast<int64_t*>(jw + a.words * L);
  __shared__ int32_t ij_count[NC][L][L];
  const int32_t i = a.row_begin + blockIdx.x / l_tiles;
  const int32_t l_first = a.contrast ? a.n_real : 0, l_end = a.contrast ? a.n_vars : a.n_real;
  const int32_t l = l_first + (blockIdx.x % l_tiles) * kTripleThreads + threadIdx.x;
  const int32_t l_block_last = min(l_end - 1, l_first + (blockIdx.x % l_tiles + 1) * kTripleThreads - 1);
  if (i >= a.row_end) return;
  const int32_t j_end = a.contrast ? a.n_real : l_block_last;  // j < l
  if (i + 1 >= j_end) return;
  const GainTableView tables = block_tables(a, table_cache, true, threadIdx.x, kTripleThreads);
  const bool active = l < l_end && (a.contrast || l > i + 1);
  const int32_t lv = active ? l : i;  // inactive threads read something valid
  // (i, l) counts, once.
  int32_t il[NC][L][L] = {};
  for (int c = 0; c < a.n_classes; ++c)
    for (int32_t w = a.class_word[c]; w < a.class_word[c + 1]; ++w)
#pragma unroll
      for (int la = 0; la < L; ++la) {
        const uint64_t x = level_row(a, w, la)[i];
#pragma unroll
        for (int lc = 0; lc < L; ++lc) {
          const int n = __popcll(x & level_row(a, w, lc)[lv]);
#pragma unroll
          for (int cc = 0; cc < NC; ++cc)
            if (cc == c) il[cc][la][lc] += n;
        }
      }
  Key best_tuple_i = ~Key(0), best_tuple_l = ~Key(0);
  int64_t best_i = kNoGain, best_l = kNoGain;
  for (int32_t j = i + 1; j < j_end; ++j) {
    __syncthreads();
    for (int e = threadIdx.x; e < a.words * L * L; e += kTripleThreads) {
      const int lb = e % L, la = (e / L) % L, w = e / (L * L);
      ij[e] = level_row(a, w, la)[i] & level_row(a, w, lb)[j];
    }
    for (int e = threadIdx.x; e < a.words * L; e += kTripleThreads) jw[e] = level_row(a, e / L, e % L)[j];
    if (threadIdx.x < NC * L * L) (&ij_count[0][0][0])[threadIdx.x] = 0;
    __syncthreads();
    // The pair (i, j): a warp per cell.
    for (int cell = threadIdx.x / 32; cell < NC * L * L; cell += kTripleThreads / 32) {
      const int c = cell / (L * L), ab = cell % (L * L);
      int n = 0;
      for (int32_t w = a.class_word[c] + threadIdx.x % 32; w < a.class_word[c + 1]; w += 32)
        n += __popcll(ij[w * L * L + ab]);
      for (int off = 16; off; off >>= 1) n += __shfl_xor_sync(0xffffffffu, n, off);
      if (threadIdx.x % 32 == 0) (&ij_count[0][0][0])[cell] = n;
    }
    __syncthreads();
    const bool live = active && j < l;
    int64_t g[3] = {kNoGain, kNoGain, kNoGain};
    if (live) {
      int32_t ijl[NC][L][L][L] = {}, jl[NC][L][L] = {};
      for (int c = 0; c < a.n_classes; ++c)
        for (int32_t w = a.class_word[c]; w < a.class_word[c + 1]; ++w) {
          uint64_t z[L];
#pragma unroll
          for (int lc = 0; lc < L; ++lc) z[lc] = level_row(a, w, lc)[l];
#pragma unroll
          for (int cc = 0; cc < NC; ++cc) {
            if (cc != c) continue;
#pragma unroll
            for (int lc = 0; lc < L; ++lc) {
#pragma unroll
              for (int lb = 0; lb < L; ++lb) {
                jl[cc][lb][lc] += __popcll(jw[w * L + lb] & z[lc]);
#pragma unroll
                for (int la = 0; la < L; ++la) ijl[cc][la][lb][lc] += __popcll(ij[(w * L + la) * L + lb] & z[lc]);
              }
            }
          }
        }
      // The full table: cell = x + M y + M^2 z, level L meaning "any", completed as the CPU does.
      // (The tensor-core kernel writes the completion out by inclusion-exclusion, triple_cell(),
      // which keeps 2- and 3-level tables in registers; for the 4-level tables this kernel also
      // takes, that code outgrows the registers: 880-2,352 bytes of stack per thread, measured.)
      int32_t t[NC * CELLS];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        int32_t* tc = t + c * CELLS;
#pragma unroll
        for (int x = 0; x < M; ++x)
#pragma unroll
          for (int y = 0; y < M; ++y)
#pragma unroll
            for (int z = 0; z < M; ++z) {
              const int any = (x == L) + (y == L) + (z == L);
              int32_t n;
              if (any == 0) n = ijl[c][x][y][z];
              else if (z == L && any == 1) n = ij_count[c][x][y];
              else if (y == L && any == 1) n = il[c][x][z];
              else if (x == L && any == 1) n = jl[c][y][z];
              else if (any == 3) n = a.class_size[c];
              else {
                const int32_t var = x != L ? i : y != L ? j : l;
                const int level = x != L ? x : y != L ? y : z;
                n = a.level_count[(int64_t(var) * M + level) * NC + c];
              }
              tc[x + M * y + M * M * z] = n;
            }
      }
      complete_counts(t, 3, M, NC);
      const int64_t full = tuple_cond_entropy(t, 3, M, NC, tables, -1);
      g[2] = (a.sub ? a.sub[pair_rank(i, j)] : tuple_cond_entropy(t, 3, M, NC, tables, 2)) - full;
      if (!a.contrast) {
        g[0] = (a.sub ? a.sub[pair_rank(j, l)] : tuple_cond_entropy(t, 3, M, NC, tables, 0)) - full;
        g[1] = (a.sub ? a.sub[pair_rank(i, l)] : tuple_cond_entropy(t, 3, M, NC, tables, 1)) - full;
      }
    }
    const Key packed = pack_tuple(i, j, l);
    if (live && collects(a, i, j, l))
      for (int p = 0; p < 3; ++p) collect_gain(a, packed, p, g[p]);
    if (!a.tuple_pass) {
      if (live) {
        best_i = max(best_i, g[0]);
        best_l = max(best_l, g[2]);
      }
    } else if (live) {
      if (!a.contrast && gain_key(g[0]) == a.best[i]) best_tuple_i = min(best_tuple_i, packed);
      if (gain_key(g[2]) == a.best[l]) best_tuple_l = min(best_tuple_l, packed);
    }
    if (a.contrast) continue;
    // j is the same for the whole block: one atomic per warp.
    Key kj = a.tuple_pass ? (live && gain_key(g[1]) == a.best[j] ? packed : ~Key(0)) : (live ? gain_key(g[1]) : Key(0));
    for (int off = 16; off; off >>= 1) {
      kj = better_key(kj, __shfl_xor_sync(0xffffffffu, kj, off), a.tuple_pass);
    }
    if (threadIdx.x % 32 == 0) {
      if (a.tuple_pass && kj != ~Key(0)) atomicMin(a.best_tuple + j, kj);
      if (!a.tuple_pass && kj != 0) atomicMax(a.best + j, kj);
    }
  }
  if (!active) return;
  if (!a.tuple_pass) {
    if (!a.contrast && best_i != kNoGain) atomicMax(a.best + i, gain_key(best_i));
    if (best_l != kNoGain) atomicMax(a.best + l, gain_key(best_l));
  } else {
    if (best_tuple_i != ~Key(0)) atomicMin(a.best_tuple + i, best_tuple_i);
    if (best_tuple_l != ~Key(0)) atomicMin(a.best_tuple + l, best_tuple_l);
  }
}

// Two classes: the condH term of a voxel, cell_total[n0 + n1] - cell[0][n0] - cell[1][n1], from
// one lookup in a flat table of small counts held in shared memory, the same integer as
// tuple_cond_entropy's three lookups (fixed-point sums are exact in any order). Only the 5-way
// kernel takes it: its voxels hold about 2 objects a class at 1,024 objects; the 3- and 4-way
// ones hold about 19 and 6, spread over the flat table's two dimensions, and there bank conflicts
// cost more than the two lookups saved (H100, 2026-11-25: 3-way 7.5e9 instead of 1.0e10 triples/s).
constexpr int kFlatSide = 32;    // counts below this in both classes take the flat table
constexpr int kFlatStride = 36;  // its rows: small counts of both classes fall in distinct banks
constexpr int kPlaneWords = 32;  // quint_stream_kernel's slab of plane words in shared memory

// The block's flat table: flat[n0 + kFlatStride n1] = cell_total[n0 + n1] - cell[0][n0] - cell[1][n1],
// a voxel's condH term (two classes) in one lookup; the caller synchronises before use.
__device__ inline void fill_flat(const GainTableView& t, int64_t* flat, int tid, int threads) {
  for (int e = tid; e < kFlatSide * kFlatSide; e += threads) {
    const int n0 = e % kFlatSide, n1 = e / kFlatSide;
    flat[n0 + kFlatStride * n1] =
        n0 + n1 < t.stride ? t.cell_total[n0 + n1] - t.cell[n0] - t.cell[t.stride + n1] : 0;
  }
}

// A two-class voxel's condH term, the same integer as tuple_cond_entropy's.
__device__ FSGPU_GAIN_INLINE int64_t voxel_entropy(const int64_t* flat, const GainTableView& t, int32_t n0,
                                                   int32_t n1) {
  if (uint32_t(n0 | n1) < uint32_t(kFlatSide)) return flat[n0 + kFlatStride * n1];
  return t.cell_total[n0 + n1] - t.cell[n0] - t.cell[t.stride + n1];
}

// The tables whose terms a tuple's condH sums: the cells' (pseudo-counts p_c), or in a sub-tuple
// pass (SearchArgs::sub_out) the merged cells' (m p_c).
__device__ inline GainTableView full_terms(const SearchArgs& a, GainTableView v) {
  if (a.sub_out) {
    v.cell = v.merged;
    v.cell_total = v.merged_total;
  }
  return v;
}

// Triples on the binary tensor cores, for L = 1 or 2. A block takes one i and BL variables l
// (NT mma tiles of CV l's per warp) and walks the j's in groups of RV (the mma's rows, as for
// pairs: for L = 2 row r is (j r % 8, level r / 8), for L = 1 row r is j r). Per 256 objects of a
// class a warp runs one mma for the (j, i) counts (columns: i's levels, the rest zero) and per
// tile one for the (j, l) counts and one per level a of i for the (i, j, l) counts, whose rows
// are I_a AND J_b. Lane (g, t) then holds, for L = 2, the triple (i, j g, l t) and for L = 1 four
// triples (j g and g + 8, l 2t and 2t + 1); the other cells follow from marginals.
template <int L, int NC>
struct TensorTripleShape {
  static_assert(L == 1 || L == 2, "the tensor-core triples take 2 or 3 levels");
  static constexpr int RV = 16 / L, CV = 8 / L;                   // j's per group, l's per tile
  static constexpr int NT = (NC == 2 ? 2 : 1) * (L == 1 ? 2 : 1);  // tiles per warp
  static constexpr int BL = 8 * NT * CV;                           // l's per block (8 warps)
};

// The count of cell (x, y, z) of a triple's table (levels 0..L; L is the last level) from its
// marginals m(u, v, w), where a position equal to L means "any level": inclusion-exclusion over
// the positions at the last level (n(.., L, ..) = n(.., any, ..) - sum of the other levels).
template <int L, class Marginal>
__device__ FSGPU_GAIN_INLINE int32_t triple_cell(const Marginal& m, int x, int y, int z) {
  int32_t n = 0;
#pragma unroll
  for (int u = 0; u <= L; ++u) {
    if (x < L && u != x) continue;
#pragma unroll
    for (int v = 0; v <= L; ++v) {
      if (y < L && v != y) continue;
#pragma unroll
      for (int w = 0; w <= L; ++w) {
        if (z < L && w != z) continue;
        const bool minus = ((x == L && u < L) + (y == L && v < L) + (z == L && w < L)) % 2 == 1;
        n += minus ? -m(u, v, w) : m(u, v, w);
      }
    }
  }
  return n;
}

// condH of a triple's table n[class][x][y][z] (axis < 0) or of the table summed over an axis
// (merged cells), fixed point.
template <int L, int NC>
__device__ FSGPU_GAIN_INLINE int64_t triple_entropy(const int32_t (&n)[NC][L + 1][L + 1][L + 1], int axis,
                                                    const GainTableView& t) {
  constexpr int M = L + 1;
  int64_t h = 0;
#pragma unroll
  for (int x = 0; x < M; ++x)
#pragma unroll
    for (int y = 0; y < M; ++y)
#pragma unroll
      for (int z = 0; z < M; ++z) {
        // A cell of the full table, or a line along the axis (its first cell stands for it).
        if ((axis == 0 && x) || (axis == 1 && y) || (axis == 2 && z)) continue;
        int32_t total = 0;
        int64_t classes = 0;
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          int32_t count = 0;
#pragma unroll
          for (int e = 0; e < M; ++e) {
            if (axis < 0 && e) break;
            count += n[c][axis == 0 ? e : x][axis == 1 ? e : y][axis == 2 ? e : z];
          }
          total += count;
          classes += axis < 0 ? t.cell[c * t.stride + count] : t.merged[c * t.stride + count];
        }
        h += (axis < 0 ? t.cell_total[total] : t.merged_total[total]) - classes;
      }
  return h;
}

template <int L, int NC>
__global__ void __launch_bounds__(256, 1) triple_tensor_kernel(SearchArgs a, int32_t l_tiles) {
  using Shape = TensorTripleShape<L, NC>;
  constexpr int RV = Shape::RV, CV = Shape::CV, NT = Shape::NT, BL = Shape::BL;
  constexpr int ROWS = L == 2 ? 1 : 2, COLS = L == 2 ? 1 : 2;  // triples per lane and tile: ROWS x COLS
  extern __shared__ int64_t table_cache[];
  __shared__ Key j_best[2][RV];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int32_t i = a.row_begin + blockIdx.x / l_tiles;
  const int32_t l_first = a.contrast ? a.n_real : 0, l_end = a.contrast ? a.n_vars : a.n_real;
  const int32_t lb0 = l_first + (blockIdx.x % l_tiles) * BL;
  if (i >= a.row_end) return;
  const int32_t j_end = a.contrast ? a.n_real : min(a.n_real, lb0 + BL - 1);  // j < l
  if (i + 1 >= j_end) return;
  const GainTableView tables = block_tables(a, table_cache, true, tid, 256);
  const Key identity = a.tuple_pass ? ~Key(0) : Key(0);
  if (tid < 2 * RV) j_best[tid / RV][tid % RV] = identity;
  // The lane's l's, their level counts and (i, l) counts, once.
  const int32_t lw0 = lb0 + warp * NT * CV;
  auto l_of = [&](int nt, int q) { return lw0 + nt * CV + (L == 2 ? t : 2 * t + q); };
  int32_t il[NT][COLS][NC][L][L] = {}, l_levels[NT][COLS][NC][L], i_levels[NC][L];
  load_level_counts<L, NC>(a, i, i_levels);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int q = 0; q < COLS; ++q) {
      const int32_t l = min(l_of(nt, q), a.n_vars - 1);
      load_level_counts<L, NC>(a, l, l_levels[nt][q]);
#pragma unroll
      for (int c = 0; c < NC; ++c)
        for (int32_t w = a.class_word[c]; w < a.class_word[c + 1]; ++w)
#pragma unroll
          for (int x = 0; x < L; ++x) {
            const uint64_t iw = level_row(a, w, x)[i];
#pragma unroll
            for (int z = 0; z < L; ++z) il[nt][q][c][x][z] += __popcll(iw & level_row(a, w, z)[l]);
          }
    }
  __syncthreads();  // the tables are ready (block-uniform: every early return is the block's)
  Key best_i = identity, best_l[NT][COLS];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int q = 0; q < COLS; ++q) best_l[nt][q] = identity;
  // The lane's rows g, g + 8 (j, level b) and column g (l, level).
  const int row_j[2] = {g, L == 2 ? g : g + 8}, row_level[2] = {0, L == 2 ? 1 : 0};
  const int col_l = L == 2 ? g / 2 : g, col_level = L == 2 ? g % 2 : 0;
  const int64_t word_step = half_word_step(a);
  const uint32_t* i_bits[L];
#pragma unroll
  for (int x = 0; x < L; ++x) i_bits[x] = half_row(a, x, i, t);
  const uint32_t* l_bits = half_row(a, col_level, lw0 + col_l, t);
  int parity = 0;
  for (int32_t jg0 = i + 1; jg0 < j_end; jg0 += RV, parity ^= 1) {
    int32_t ij[NC][4] = {}, jl[NC][NT][4] = {}, ijl[NC][L][NT][4] = {};
    const uint32_t* j_bits[2] = {half_row(a, row_level[0], jg0 + row_j[0], t),
                                 half_row(a, row_level[1], jg0 + row_j[1], t)};
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      // Words w0 + t / 2 and w0 + 2 + t / 2 of each step of 4 (0 past the class's last word), as
      // bitmap_half() and row_fragment() read them, through pointers stepped a word at a time.
      const int32_t w_end = a.class_word[c + 1];
      const int64_t first = (a.class_word[c] + t / 2) * word_step, step = kTensorWords * word_step;
      const uint32_t *ip[L], *jp[2] = {j_bits[0] + first, j_bits[1] + first}, *lp = l_bits + first;
#pragma unroll
      for (int x = 0; x < L; ++x) ip[x] = i_bits[x] + first;
      for (int32_t w = a.class_word[c] + t / 2; w - t / 2 < w_end; w += kTensorWords) {
        const bool lo = w < w_end, hi = w + 2 < w_end;
        uint32_t i_lo[L], i_hi[L];
#pragma unroll
        for (int x = 0; x < L; ++x) {
          i_lo[x] = lo ? __ldg(ip[x]) : 0u;
          i_hi[x] = hi ? __ldg(ip[x] + 2 * word_step) : 0u;
          ip[x] += step;
        }
        const uint32_t jx[4] = {lo ? __ldg(jp[0]) : 0u, lo ? __ldg(jp[1]) : 0u, hi ? __ldg(jp[0] + 2 * word_step) : 0u,
                                hi ? __ldg(jp[1] + 2 * word_step) : 0u};
        // (j, i): column g is i's level g (only the first L columns).
        const uint32_t iy[2] = {g < L ? (g == 0 ? i_lo[0] : i_lo[L - 1]) : 0u,
                                g < L ? (g == 0 ? i_hi[0] : i_hi[L - 1]) : 0u};
        b1_mma_and_popc(ij[c], jx, iy);
        uint32_t ijx[L][4];
#pragma unroll
        for (int x = 0; x < L; ++x) {
          ijx[x][0] = i_lo[x] & jx[0];
          ijx[x][1] = i_lo[x] & jx[1];
          ijx[x][2] = i_hi[x] & jx[2];
          ijx[x][3] = i_hi[x] & jx[3];
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint32_t ly[2] = {lo ? __ldg(lp + 2 * nt * CV) : 0u, hi ? __ldg(lp + 2 * word_step + 2 * nt * CV) : 0u};
          b1_mma_and_popc(jl[c][nt], jx, ly);
#pragma unroll
          for (int x = 0; x < L; ++x) b1_mma_and_popc(ijl[c][x][nt], ijx[x], ly);
        }
        jp[0] += step;
        jp[1] += step;
        lp += step;
      }
    }
    // The (j, i) counts of the lane's j's sit in lane (g, 0): d[2 b + a] for L = 2, d[2 r] for L = 1.
    int32_t ij_lane[NC][4];
#pragma unroll
    for (int c = 0; c < NC; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) ij_lane[c][e] = __shfl_sync(0xffffffffu, ij[c][e], g * 4);
    Key j_key[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) j_key[r] = identity;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int32_t j = jg0 + row_j[r];
      int32_t j_levels[NC][L];
      load_level_counts<L, NC>(a, min(j, a.n_vars - 1), j_levels);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int q = 0; q < COLS; ++q) {
          const int32_t l = l_of(nt, q);
          if (j >= j_end || l >= l_end || (!a.contrast && l <= j)) continue;
          // Marginals; level L of a position means any level.
          auto marginal = [&](int c, int u, int v, int w) -> int32_t {
            const int e = L == 2 ? 0 : 2 * r + q;  // the lane's d index for L = 1
            if (u < L && v < L && w < L) return ijl[c][u][nt][L == 2 ? 2 * v + w : e];
            if (u < L && v < L) return ij_lane[c][L == 2 ? 2 * v + u : 2 * r];
            if (u < L && w < L) return il[nt][q][c][u][w];
            if (v < L && w < L) return jl[c][nt][L == 2 ? 2 * v + w : e];
            if (u < L) return i_levels[c][u];
            if (v < L) return j_levels[c][v];
            if (w < L) return l_levels[nt][q][c][w];
            return a.class_size[c];
          };
          int32_t n[NC][L + 1][L + 1][L + 1];
#pragma unroll
          for (int c = 0; c < NC; ++c) {
            auto m = [&](int u, int v, int w) { return marginal(c, u, v, w); };
#pragma unroll
            for (int x = 0; x <= L; ++x)
#pragma unroll
              for (int y = 0; y <= L; ++y)
#pragma unroll
                for (int z = 0; z <= L; ++z) n[c][x][y][z] = triple_cell<L>(m, x, y, z);
          }
          const int64_t full = triple_entropy<L, NC>(n, -1, full_terms(a, tables));
          if (a.sub_out) {  // a sub-tuple pass of a 4-way search
            a.sub_out[a.binomial[i] + a.binomial[a.n_real + j] + a.binomial[2 * a.n_real + l]] = full;
            continue;
          }
          const int64_t gain_l = (a.sub ? a.sub[pair_rank(i, j)] : triple_entropy<L, NC>(n, 2, tables)) - full;
          const Key packed = pack_tuple(i, j, l);
          if (!a.tuple_pass) {
            best_l[nt][q] = max(best_l[nt][q], gain_key(gain_l));
          } else if (gain_key(gain_l) == a.best[l]) {
            best_l[nt][q] = min(best_l[nt][q], packed);
          }
          if (a.contrast) continue;
          const int64_t gain_i = (a.sub ? a.sub[pair_rank(j, l)] : triple_entropy<L, NC>(n, 0, tables)) - full;
          const int64_t gain_j = (a.sub ? a.sub[pair_rank(i, l)] : triple_entropy<L, NC>(n, 1, tables)) - full;
          if (collects(a, i, j, l)) {
            collect_gain(a, packed, 0, gain_i);
            collect_gain(a, packed, 1, gain_j);
            collect_gain(a, packed, 2, gain_l);
          }
          const Key gi = gain_key(gain_i), gj = gain_key(gain_j);
          if (!a.tuple_pass) {
            best_i = max(best_i, gi);
            j_key[r] = max(j_key[r], gj);
          } else {
            if (gi == a.best[i]) best_i = min(best_i, packed);
            if (gj == a.best[j]) j_key[r] = min(j_key[r], packed);
          }
        }
    }
    // A j is shared by the four lanes of one g (and the block's warps): reduce, then once per
    // group from shared memory (double-buffered: one barrier a group).
    if (!a.contrast) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        Key k = j_key[r];
        for (int off = 1; off < 4; off <<= 1) k = better_key(k, __shfl_xor_sync(0xffffffffu, k, off), a.tuple_pass);
        if (t == 0 && k != identity) {
          offer_key(&j_best[parity][row_j[r]], k, a.tuple_pass);
        }
      }
      __syncthreads();
      if (tid < RV) {
        const Key k = j_best[parity][tid];
        if (k != identity) {
          offer_best(a, jg0 + tid, k);
        }
        j_best[parity][tid] = identity;  // written again two groups later, past a barrier
      }
    }
  }
  // An l is shared by the lanes of one t (and q): reduce over g.
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int q = 0; q < COLS; ++q) {
      Key k = best_l[nt][q];
      for (int off = 4; off < 32; off <<= 1) k = better_key(k, __shfl_xor_sync(0xffffffffu, k, off), a.tuple_pass);
      const int32_t l = l_of(nt, q);
      if (g == 0 && k != identity && l < l_end) {
        offer_best(a, l, k);
      }
    }
  if (a.contrast) return;
  for (int off = 1; off < 32; off <<= 1)
    best_i = better_key(best_i, __shfl_xor_sync(0xffffffffu, best_i, off), a.tuple_pass);
  if (lane == 0 && best_i != identity) {
    offer_best(a, i, best_i);
  }
}

// Any tuple (every dimension, 2 to 4 levels, any number of classes): a thread per tuple, its
// counted cells by AND + popcount over the tuple's bitmaps, the known ones from level counts and
// class sizes, and the gains with interaction_gain.h's own functions on a table in local memory
// (CAP >= cells x classes), as the CPU engine computes them.
//
// A launch takes the tuples whose first variable is in [row_begin, row_end), numbered by first
// variable and then by rank among the rest: S(i) tuples start at first variables i and later, so
// a number's first variable is found by bisection and the rest by unranking a combination.

// n choose r (0 when r > n), exact in 64 bits for the shapes pack_limit() lets through.
__host__ __device__ inline int64_t choose(int64_t n, int32_t r) {
  if (r < 0 || n < r) return 0;
  int64_t c = 1;
  for (int32_t i = 1; i <= r; ++i) c = c * (n - r + i) / i;  // c = C(n - r + i, i), exact
  return c;
}

// Tuples (real, or with a contrast variable last) whose first variable is i or later.
__host__ __device__ inline int64_t tuples_from(const SearchArgs& a, int32_t k, int64_t i) {
  if (k == 1) return a.n_vars - i;
  if (!a.contrast) return choose(a.n_real - i, k);
  return (a.n_vars - a.n_real) * choose(a.n_real - i, k - 1);
}

// The x-th tuple of the launch (0-based).
template <int K>
__device__ inline void tuple_at(const SearchArgs& a, int64_t x, int32_t (&t)[K]) {
  if (K == 1) {
    t[0] = static_cast<int32_t>(a.row_begin + x);
    return;
  }
  // The first variable: the last i with tuples_from(row_begin) - tuples_from(i) <= x.
  const int64_t before = tuples_from(a, K, a.row_begin);
  int32_t lo = a.row_begin, hi = a.row_end;  // lo qualifies, hi does not
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (before - tuples_from(a, K, mid) <= x) lo = mid;
    else hi = mid;
  }
  t[0] = lo;
  int64_t rank = x - (before - tuples_from(a, K, lo));
  int32_t r = K - 1;  // real variables after the first
  if (a.contrast) {
    const int64_t n_contrast = a.n_vars - a.n_real;
    t[K - 1] = static_cast<int32_t>(a.n_real + rank % n_contrast);
    rank /= n_contrast;
    r = K - 2;
  }
  // Positions 1..r: r of the variables after t[0], the rank-th in colexicographic order.
  int32_t top = a.n_real - 1 - t[0];  // offsets below top
  for (int32_t p = r; p >= 1; --p) {
    int32_t lo_c = p - 1, hi_c = top;  // the largest c < hi_c with C(c, p) <= rank
    while (hi_c - lo_c > 1) {
      const int32_t mid = lo_c + (hi_c - lo_c) / 2;
      if (choose(mid, p) <= rank) lo_c = mid;
      else hi_c = mid;
    }
    t[p] = t[0] + 1 + lo_c;
    rank -= choose(lo_c, p);
    top = lo_c;
  }
}

__host__ __device__ constexpr int const_cells(int k, int m) { return k == 0 ? 1 : m * const_cells(k - 1, m); }

// Whether a cell (digits base m, the first position fastest; m - 1 = any level) is counted by
// AND + popcount (two or more counted levels) with first digit `first` (-1: any digit).
__host__ __device__ constexpr bool counted_cell(int cell, int k, int m, int first) {
  int counted = 0;
  for (int d = 0, rest = cell; d < k; ++d, rest /= m) counted += rest % m != m - 1;
  return counted >= 2 && (first < 0 || cell % m == first);
}

// The counted cells (those with first digit FIRST, or all) of a tuple of K variables with M levels
// over words [w_begin, w_end), the counters in registers: per word each variable's level words
// are loaded once and every cell's AND runs on them (the compiler shares common prefixes).
template <int K, int M, int FIRST>
__device__ FSGPU_GAIN_INLINE void count_fixed(const SearchArgs& a, const int32_t (&t)[K], int32_t w_begin,
                                              int32_t w_end, int32_t* table) {
  constexpr int L = M - 1, CELLS = const_cells(K, M);
  int32_t n[CELLS];
#pragma unroll
  for (int cell = 0; cell < CELLS; ++cell) n[cell] = 0;
  const int64_t level_step = int64_t(kMaxGpuLevels - 1) * a.stride;
  for (int32_t w = w_begin; w < w_end; ++w) {
    uint64_t v[K][L];
#pragma unroll
    for (int d = 0; d < K; ++d)
#pragma unroll
      for (int l = 0; l < L; ++l) v[d][l] = __ldg(a.bits + w * level_step + int64_t(l) * a.stride + t[d]);
#pragma unroll
    for (int cell = 0; cell < CELLS; ++cell) {
      if (!counted_cell(cell, K, M, FIRST)) continue;
      uint64_t x = ~0ull;
#pragma unroll
      for (int d = 0, rest = cell; d < K; ++d, rest /= M)
        if (rest % M != L) x &= v[d][rest % M];
      n[cell] += __popcll(x);
    }
  }
#pragma unroll
  for (int cell = 0; cell < CELLS; ++cell)
    if (counted_cell(cell, K, M, FIRST)) table[cell] = n[cell];
}

// Every counted cell of class c's table; tables of more than 128 cells in passes by the first
// variable's digit, so that a pass's counters stay in registers.
template <int K, int M>
__device__ FSGPU_GAIN_INLINE void count_cells(const SearchArgs& a, const int32_t (&t)[K], int32_t c, int32_t* table) {
  const int32_t w_begin = a.class_words[c], w_end = a.class_words[c + 1];
  if constexpr (const_cells(K, M) <= 128) {
    count_fixed<K, M, -1>(a, t, w_begin, w_end, table);
  } else {
    count_fixed<K, M, 0>(a, t, w_begin, w_end, table);
    count_fixed<K, M, 1>(a, t, w_begin, w_end, table);
    if constexpr (M > 2) count_fixed<K, M, 2>(a, t, w_begin, w_end, table);
    if constexpr (M > 3) count_fixed<K, M, 3>(a, t, w_begin, w_end, table);
  }
}

// M, NC > 0: levels and classes known at compile time (counters in registers, the gain loops
// unrolled); 0: from the arguments.
template <int K, int CAP, int M = 0, int NC = 0>
__global__ void __launch_bounds__(256) tuple_kernel(SearchArgs a, int64_t n_tuples) {
  extern __shared__ int64_t table_cache[];
  const GainTableView tables = block_tables(a, table_cache, true, threadIdx.x, blockDim.x);
  __syncthreads();
  const int32_t m = M > 0 ? M : tables.n_levels, nc = NC > 0 ? NC : a.n_classes, cells = tuple_cells(K, m);
  const int64_t level_step = int64_t(kMaxGpuLevels - 1) * a.stride;  // from a word to the next
  int32_t counts[CAP];
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < n_tuples;
       x += int64_t(gridDim.x) * blockDim.x) {
    int32_t t[K];
    tuple_at<K>(a, x, t);
    // Known cells: no counted level (the class size) or one (that variable's level count).
    for (int32_t c = 0; c < nc; ++c) {
      int32_t* table = counts + c * cells;
      table[cells - 1] = a.class_sizes[c];
      for (int32_t d = 0, weight = 1; d < K; ++d, weight *= m)
        for (int32_t level = 0; level < m - 1; ++level)
          table[cells - 1 - (m - 1 - level) * weight] = a.level_count[(int64_t(t[d]) * m + level) * nc + c];
    }
    // Counted cells: two or more positions at a level below m - 1.
    if constexpr (M > 0) {
#pragma unroll
      for (int32_t c = 0; c < NC; ++c) count_cells<K, M>(a, t, c, counts + c * cells);
    } else {
      for (int32_t cell = 0; cell < cells; ++cell) {
        const uint64_t* row[K];
        int32_t n_rows = 0;
        for (int32_t d = 0, rest = cell; d < K; ++d, rest /= m)
          if (rest % m != m - 1) row[n_rows++] = a.bits + int64_t(rest % m) * a.stride + t[d];
        if (n_rows < 2) continue;
        for (int32_t c = 0; c < nc; ++c) {
          int32_t n = 0;
          for (int32_t w = a.class_words[c]; w < a.class_words[c + 1]; ++w) {
            uint64_t word = __ldg(row[0] + w * level_step);
            for (int32_t r = 1; r < n_rows; ++r) word &= __ldg(row[r] + w * level_step);
            n += __popcll(word);
          }
          counts[c * cells + cell] = n;
        }
      }
    }
    complete_counts(counts, K, m, nc);
    if (a.sub_out) {
      // A sub-tuple's pass: condH of the whole table with the merged pseudo-counts, by rank.
      GainTableView merged = tables;
      merged.cell = tables.merged;
      merged.cell_total = tables.merged_total;
      int64_t rank = 0;
#pragma unroll
      for (int p = 0; p < K; ++p) rank += a.binomial[p * a.n_real + t[p]];
      a.sub_out[rank] = tuple_cond_entropy(counts, K, m, nc, merged, -1);
      continue;
    }
    const int64_t full = tuple_cond_entropy(counts, K, m, nc, tables, -1);
    Key packed = 0;
#pragma unroll
    for (int p = 0; p < K; ++p) packed |= Key(t[p]) << pack_shift(K, p);
    // Real tuples score each variable; a contrast variable's tuple only its last (K = 1: the
    // variable alone, real or contrast).
    const bool real = K == 1 ? t[0] < a.n_real : !a.contrast;
    bool collected = real && a.collect;
    if (collected && a.interesting) {
      int32_t n = 0;
#pragma unroll
      for (int p = 0; p < K; ++p) n += a.interesting[t[p]];
      collected = a.require_all ? n == K : n > 0;
    }
#pragma unroll
    for (int p = 0; p < K; ++p) {
      if (!real && p != K - 1) continue;
      int64_t without = 0;  // condH of the table summed over position p
      if (K > 1 && a.sub) {
        int64_t rank = 0;  // of the real variables but t[p] (the colexicographic rank)
#pragma unroll
        for (int q = 0; q < K; ++q)
          if (q != p) rank += a.binomial[(q < p ? q : q - 1) * a.n_real + t[q]];
        without = a.sub[rank];
      } else {
        without = tuple_cond_entropy(counts, K, m, nc, tables, p);
      }
      const int64_t gain = without - full;
      if (collected) collect_gain(a, packed, p, gain);
      const Key key = gain_key(gain);
      const int32_t v = t[p];
      if (!a.tuple_pass) {
        if (key > a.best[v]) atomicMax(a.best + v, key);  // a stale read only costs an atomic
      } else if (key == a.best[v]) {
        atomicMin(a.best_tuple + v, packed);
      }
    }
  }
}

// Launches the tuple kernel for a launch's tuples, with a table of cells x classes.
template <int K>
void launch_tuples(const SearchArgs& a, cudaStream_t s) {
  const int64_t n_tuples = tuples_from(a, K, a.row_begin) - tuples_from(a, K, a.row_end);
  if (n_tuples <= 0) return;
  const int32_t table = tuple_cells(K, a.tables.n_levels) * a.n_classes;
  const size_t shared = a.shared_tables ? table_bytes(a.tables.stride, a.n_classes, true) : 0;
  const int blocks = static_cast<int>(std::min<int64_t>((n_tuples + 255) / 256, a.blocks));
  auto run = [&](auto kernel) {
    allow_dynamic_shared(kernel);
    kernel<<<blocks, 256, shared, s>>>(a, n_tuples);
    check_launch("tuple_kernel");
  };
  // Binary classes (the common case) with 2 to 4 levels: levels and classes as constants.
  if constexpr (K >= 4) {
    if (a.n_classes == 2) {
      switch (a.tables.n_levels) {
        case 2: return run(tuple_kernel<K, 2 * const_cells(K, 2), 2, 2>);
        case 3: return run(tuple_kernel<K, 2 * const_cells(K, 3), 3, 2>);
        case 4:
          if constexpr (K == 4) return run(tuple_kernel<K, 2 * const_cells(K, 4), 4, 2>);
          break;
        default: break;
      }
    }
  }
  if (table <= 256) run(tuple_kernel<K, 256>);
  else if (table <= 1024) run(tuple_kernel<K, 1024>);
  else run(tuple_kernel<K, kMaxInteractionCells>);
}

// Whether the pair and triple kernels take this search (else the tuple kernel does).
inline bool special_kernels(int32_t k, int32_t n_classes) {
  return (k == 2 || k == 3) && n_classes >= 2 && n_classes <= kMaxGpuClasses;
}

// Quadruples i < j < k < l of 3-level variables and two classes on the binary tensor cores, as
// Nobre et al. count them: a block takes one pair (i, j) and 32 variables l (a tile of 4 per
// warp) and walks the k's in groups of 8. The pair's planes I_a, J_b and P_ab = I_a AND J_b are
// combined on the CUDA cores with the rows of K (row r: k r % 8 at level r / 8, as for triples),
// and per 256 objects of a class a warp runs one mma of K against the columns I_0, I_1, J_0, J_1,
// P_00..P_11 (the (i, k), (j, k), (i, j, k) counts) and nine against its l's: K, I_a K, J_b K and
// P_ab K rows. Lane (g, t) then holds every cell of (i, j, k g, l t) with k and l counted; the
// cells with l at any level (per k, shuffled from its four lanes) and with k at any level (per l,
// counted once per block with popcounts) are marginals, and complete_counts() turns the whole
// table (in registers) into cells. The gains take the sub-tuples' condH (SearchArgs::sub). In a
// 5-way search's sub-tuple pass (SearchArgs::sub_out) it writes each quadruple's condH with
// merged pseudo-counts instead, as the triple kernel does for a 4-way search.
constexpr int kQuadTile = 32;  // l's per block

__device__ inline void offer_checked(const SearchArgs& a, int32_t v, int64_t gain, Key packed) {
  const Key key = gain_key(gain);
  if (!a.tuple_pass) {
    if (key > a.best[v]) atomicMax(a.best + v, key);  // a stale read only costs an atomic
  } else if (key == a.best[v]) {
    atomicMin(a.best_tuple + v, packed);
  }
}

// condH of tuple q's table without position p: the real sub-tuple's (SearchArgs::sub), by its
// colexicographic rank.
template <int K>
__device__ FSGPU_GAIN_INLINE int64_t sub_entropy(const SearchArgs& a, const int32_t (&q)[K], int p) {
  int64_t rank = 0;
#pragma unroll
  for (int r = 0; r < K; ++r)
    if (r != p) rank += a.binomial[(r < p ? r : r - 1) * a.n_real + q[r]];
  return a.sub[rank];
}

// condH without position p of a tuple of 3-level variables and two classes whose full counts
// are n: the sub-tuple's when known, else summed here.
template <int K>
__device__ FSGPU_GAIN_INLINE int64_t entropy_without(const SearchArgs& a, const int32_t (&q)[K], const int32_t* n,
                                                     const GainTableView& tables, int p) {
  return a.sub ? sub_entropy<K>(a, q, p) : tuple_cond_entropy(n, K, 3, 2, tables, p);
}

// Offers the gains of tuple q (full: the condH of its table; without(p): of the table without
// position p) to its variables, only the last when that is a contrast variable, and collects them.
template <int K, class Without>
__device__ FSGPU_GAIN_INLINE void offer_tuple(const SearchArgs& a, const int32_t (&q)[K], int64_t full,
                                              const Without& without) {
  Key packed = 0;
#pragma unroll
  for (int p = 0; p < K; ++p) packed |= Key(q[p]) << pack_shift(K, p);
  const int64_t gain_last = without(K - 1) - full;
  offer_checked(a, q[K - 1], gain_last, packed);
  if (a.contrast) return;
  int64_t gains[K - 1];
#pragma unroll
  for (int p = 0; p < K - 1; ++p) gains[p] = without(p) - full;
  bool collected = a.collect;
  if (collected && a.interesting) {
    int in = 0;
#pragma unroll
    for (int p = 0; p < K; ++p) in += a.interesting[q[p]];
    collected = a.require_all ? in == K : in > 0;
  }
  if (collected) {
    for (int p = 0; p < K - 1; ++p) collect_gain(a, packed, p, gains[p]);
    collect_gain(a, packed, K - 1, gain_last);
  }
#pragma unroll
  for (int p = 0; p < K - 1; ++p) offer_checked(a, q[p], gains[p], packed);
}

__global__ void __launch_bounds__(256, 1) quad_tensor_kernel(SearchArgs a, int32_t l_tiles) {
  constexpr int L = 2, NC = 2, CELLS = 81;
  extern __shared__ int64_t table_cache[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int32_t i = a.row_begin + blockIdx.y, j = blockIdx.x / l_tiles;
  const int32_t l_first = a.contrast ? a.n_real : 0, l_end = a.contrast ? a.n_vars : a.n_real;
  const int32_t lb0 = l_first + (blockIdx.x % l_tiles) * kQuadTile;
  if (i >= a.row_end || j <= i) return;
  const int32_t k_end = a.contrast ? a.n_real : min(a.n_real, lb0 + kQuadTile - 1);  // k < l
  if (j + 1 >= k_end) return;
  const GainTableView tables = block_tables(a, table_cache, true, tid, 256);
  const GainTableView terms = full_terms(a, tables);
  const int32_t lw0 = lb0 + warp * 4, l = lw0 + t, lv = min(l, a.n_vars - 1);
  // The pair's and the lane's l's marginals, once: (i, j), (i, l), (j, l), (i, j, l) per class.
  int32_t ij[NC][L][L] = {}, il[NC][L][L] = {}, jl[NC][L][L] = {}, ijl[NC][L][L][L] = {};
  int32_t i_levels[NC][L], j_levels[NC][L], l_levels[NC][L];
  load_level_counts<L, NC>(a, i, i_levels);
  load_level_counts<L, NC>(a, j, j_levels);
  load_level_counts<L, NC>(a, lv, l_levels);
#pragma unroll
  for (int c = 0; c < NC; ++c)
    for (int32_t w = a.class_word[c]; w < a.class_word[c + 1]; ++w) {
      uint64_t iw[L], jw[L], lw[L];
#pragma unroll
      for (int x = 0; x < L; ++x) {
        iw[x] = level_row(a, w, x)[i];
        jw[x] = level_row(a, w, x)[j];
        lw[x] = level_row(a, w, x)[lv];
      }
#pragma unroll
      for (int x = 0; x < L; ++x)
#pragma unroll
        for (int y = 0; y < L; ++y) {
          ij[c][x][y] += __popcll(iw[x] & jw[y]);
          il[c][x][y] += __popcll(iw[x] & lw[y]);
          jl[c][x][y] += __popcll(jw[x] & lw[y]);
#pragma unroll
          for (int z = 0; z < L; ++z) ijl[c][x][y][z] += __popcll(iw[x] & jw[y] & lw[z]);
        }
    }
  __syncthreads();  // the tables are ready
  const int32_t row_k[2] = {g, g};
  const int row_level[2] = {0, 1};
  const int col_l = g / 2, col_level = g % 2;
  for (int32_t kg0 = j + 1; kg0 < k_end; kg0 += 8) {
    // acc: [0] K, [1 + a] I_a K, [3 + b] J_b K, [5 + 2a + b] P_ab K against the l's; km: K
    // against I, J, P.
    int32_t acc[NC][9][4] = {}, km[NC][4] = {};
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int32_t w_end = a.class_word[c + 1];
      for (int32_t w0 = a.class_word[c]; w0 < w_end; w0 += kTensorWords) {
        const int32_t w_lo = w0 + t / 2, w_hi = w0 + 2 + t / 2;
        uint32_t i_half[L][2], j_half[L][2];
#pragma unroll
        for (int x = 0; x < L; ++x) {
          i_half[x][0] = bitmap_half(a, w_lo, w_end, x, i, t % 2);
          i_half[x][1] = bitmap_half(a, w_hi, w_end, x, i, t % 2);
          j_half[x][0] = bitmap_half(a, w_lo, w_end, x, j, t % 2);
          j_half[x][1] = bitmap_half(a, w_hi, w_end, x, j, t % 2);
        }
        uint32_t kx[4];
        row_fragment(a, w0, w_end, row_level, {kg0 + row_k[0], kg0 + row_k[1]}, t, kx);
        // Column g of the marginal mma: I_0, I_1, J_0, J_1, P_00, P_01, P_10, P_11.
        uint32_t my[2];
#pragma unroll
        for (int h = 0; h < 2; ++h)
          my[h] = g < 2 ? i_half[g & 1][h] : g < 4 ? j_half[g & 1][h] : i_half[(g - 4) >> 1][h] & j_half[g & 1][h];
        b1_mma_and_popc(km[c], kx, my);
        uint32_t ly[2];
        column_fragment(a, w0, w_end, col_level, lw0 + col_l, t, ly);
        b1_mma_and_popc(acc[c][0], kx, ly);
#pragma unroll
        for (int x = 0; x < L; ++x) {
          uint32_t rx[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) rx[e] = i_half[x][e / 2] & kx[e];
          b1_mma_and_popc(acc[c][1 + x], rx, ly);
#pragma unroll
          for (int e = 0; e < 4; ++e) rx[e] = j_half[x][e / 2] & kx[e];
          b1_mma_and_popc(acc[c][3 + x], rx, ly);
#pragma unroll
          for (int y = 0; y < L; ++y) {
#pragma unroll
            for (int e = 0; e < 4; ++e) rx[e] = i_half[x][e / 2] & j_half[y][e / 2] & kx[e];
            b1_mma_and_popc(acc[c][5 + 2 * x + y], rx, ly);
          }
        }
      }
    }
    // The k marginals of k g, from the four lanes of g: lane (g, s) holds columns 2s, 2s + 1 of
    // rows (k g, level 0) and (k g, level 1): kk[c][s][2 level + column parity].
    int32_t kk[NC][4][4];
#pragma unroll
    for (int c = 0; c < NC; ++c)
#pragma unroll
      for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) kk[c][s][e] = __shfl_sync(0xffffffffu, km[c][e], g * 4 + s);
    const int32_t k = kg0 + g;
    if (k >= k_end || l >= l_end || (!a.contrast && l <= k)) continue;
    int32_t k_levels[NC][L];
    load_level_counts<L, NC>(a, k, k_levels);
    // Marginal (u, v, w, x) of (i, j, k, l), level L meaning any.
    auto marginal = [&](int c, int u, int v, int w, int x) -> int32_t {
      if (w < L && x < L) {
        const int e = 2 * w + x;
        if (u < L && v < L) return acc[c][5 + 2 * u + v][e];
        if (u < L) return acc[c][1 + u][e];
        if (v < L) return acc[c][3 + v][e];
        return acc[c][0][e];
      }
      if (w < L) {  // l any: column pair s = 0 (I), 1 (J), 2 (P_0b), 3 (P_1b)
        if (u < L && v < L) return kk[c][2 + u][2 * w + v];
        if (u < L) return kk[c][0][2 * w + u];
        if (v < L) return kk[c][1][2 * w + v];
        return k_levels[c][w];
      }
      if (x < L) {  // k any
        if (u < L && v < L) return ijl[c][u][v][x];
        if (u < L) return il[c][u][x];
        if (v < L) return jl[c][v][x];
        return l_levels[c][x];
      }
      if (u < L && v < L) return ij[c][u][v];
      if (u < L) return i_levels[c][u];
      if (v < L) return j_levels[c][v];
      return a.class_size[c];
    };
    int32_t n[NC * CELLS];
#pragma unroll
    for (int c = 0; c < NC; ++c)
#pragma unroll
      for (int cell = 0; cell < CELLS; ++cell)
        n[c * CELLS + cell] = marginal(c, cell % 3, cell / 3 % 3, cell / 9 % 3, cell / 27);
    complete_counts(n, 4, 3, NC);
    const int64_t full = tuple_cond_entropy(n, 4, 3, NC, terms, -1);
    const int32_t q[4] = {i, j, k, l};
    if (a.sub_out) {
      int64_t rank = 0;
#pragma unroll
      for (int p = 0; p < 4; ++p) rank += a.binomial[p * a.n_real + q[p]];
      a.sub_out[rank] = full;
      continue;
    }
    offer_tuple<4>(a, q, full, [&](int p) { return entropy_without<4>(a, q, n, tables, p); });
  }
}

// Quintuples i < j < k < l < m of 3-level variables and two classes on the binary tensor cores:
// the quadruple kernel's scheme with a triple (i, j, k) per block, whose 26 plane combinations
// P_uvw (each of i, j, k at a level or at any level, not all at any) are ANDed with the rows of
// l (groups of 8) and counted against the warp's 4 m's: 27 mma per 256 objects of a class. The
// cells with m at any level come from 4 more mma (l's rows against the 26 combinations as
// columns, shuffled to the lanes of each l); those with l at any level are counted once per
// block. The table (486 counters) lives in local memory.
constexpr int kQuintTile = 32;  // m's per block

// 32 bits of the combination `combo` = u + 3 v + 9 w (3: any level) of i, j and k's planes.
__device__ __forceinline__ uint32_t combo_bits(int combo, const uint32_t (&ih)[2], const uint32_t (&jh)[2],
                                               const uint32_t (&kh)[2]) {
  const int u = combo % 3, v = combo / 3 % 3, w = combo / 9;
  uint32_t x = ~0u;
  if (u < 2) x &= ih[u];
  if (v < 2) x &= jh[v];
  if (w < 2) x &= kh[w];
  return x;
}

__global__ void __launch_bounds__(256, 1) quint_tensor_kernel(SearchArgs a, int32_t m_tiles) {
  constexpr int L = 2, NC = 2, CELLS = 243;
  extern __shared__ int64_t table_cache[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int32_t i = a.row_begin + blockIdx.y;
  const int64_t jk = blockIdx.x / m_tiles;
  const int32_t j = static_cast<int32_t>(jk / a.n_real), k = static_cast<int32_t>(jk % a.n_real);
  const int32_t m_first = a.contrast ? a.n_real : 0, m_end = a.contrast ? a.n_vars : a.n_real;
  const int32_t mb0 = m_first + (blockIdx.x % m_tiles) * kQuintTile;
  if (i >= a.row_end || j <= i || k <= j) return;
  const int32_t l_end = a.contrast ? a.n_real : min(a.n_real, mb0 + kQuintTile - 1);  // l < m
  if (k + 1 >= l_end) return;
  const GainTableView tables = block_tables(a, table_cache, true, tid, 256);
  const int32_t mw0 = mb0 + warp * 4, m = mw0 + t, mv = min(m, a.n_vars - 1);
  // The cells with l at any level, the same for every l: base[c][combo + 27 y] (y: m's level,
  // 2: any).
  int32_t base[NC * 81];
  int32_t m_levels[NC][L];
  load_level_counts<L, NC>(a, mv, m_levels);
#pragma unroll
  for (int c = 0; c < NC; ++c) {
#pragma unroll
    for (int combo = 0; combo < 26; ++combo) {
      const int u = combo % 3, v = combo / 3 % 3, w = combo / 9;
      int32_t n[3] = {0, 0, 0};
      for (int32_t word = a.class_word[c]; word < a.class_word[c + 1]; ++word) {
        uint64_t x = ~0ull;
        if (u < 2) x &= level_row(a, word, u)[i];
        if (v < 2) x &= level_row(a, word, v)[j];
        if (w < 2) x &= level_row(a, word, w)[k];
        n[0] += __popcll(x & level_row(a, word, 0)[mv]);
        n[1] += __popcll(x & level_row(a, word, 1)[mv]);
        n[2] += __popcll(x);
      }
#pragma unroll
      for (int y = 0; y < 3; ++y) base[c * 81 + combo + 27 * y] = n[y];
    }
    base[c * 81 + 26] = m_levels[c][0];
    base[c * 81 + 26 + 27] = m_levels[c][1];
    base[c * 81 + 26 + 54] = a.class_size[c];
  }
  __syncthreads();  // the tables are ready
  const int32_t row_l[2] = {g, g};
  const int row_level[2] = {0, 1};
  const int col_m = g / 2, col_level = g % 2;
  int32_t n[NC * CELLS];
  for (int32_t lg0 = k + 1; lg0 < l_end; lg0 += 8) {
    const int32_t l = lg0 + g;
    int32_t l_levels[NC][L];
    load_level_counts<L, NC>(a, min(l, a.n_vars - 1), l_levels);
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      // acc[combo]: P_combo AND L rows against the m's (combo 26: the l rows alone); lm[h]: the
      // l rows against combinations 8 h .. 8 h + 7 as columns.
      int32_t acc[27][4] = {}, lm[4][4] = {};
      const int32_t w_end = a.class_word[c + 1];
      for (int32_t w0 = a.class_word[c]; w0 < w_end; w0 += kTensorWords) {
        const int32_t w_lo = w0 + t / 2, w_hi = w0 + 2 + t / 2;
        uint32_t ih[2][2], jh[2][2], kh[2][2];  // [half: lo, hi][level]
#pragma unroll
        for (int x = 0; x < L; ++x) {
          ih[0][x] = bitmap_half(a, w_lo, w_end, x, i, t % 2);
          ih[1][x] = bitmap_half(a, w_hi, w_end, x, i, t % 2);
          jh[0][x] = bitmap_half(a, w_lo, w_end, x, j, t % 2);
          jh[1][x] = bitmap_half(a, w_hi, w_end, x, j, t % 2);
          kh[0][x] = bitmap_half(a, w_lo, w_end, x, k, t % 2);
          kh[1][x] = bitmap_half(a, w_hi, w_end, x, k, t % 2);
        }
        uint32_t lx[4];
        row_fragment(a, w0, w_end, row_level, {lg0 + row_l[0], lg0 + row_l[1]}, t, lx);
#pragma unroll
        for (int h = 0; h < 4; ++h) {
          const int q = 8 * h + g;  // this lane's column
          uint32_t my[2] = {0u, 0u};
          if (q < 26) {
            my[0] = combo_bits(q, ih[0], jh[0], kh[0]);
            my[1] = combo_bits(q, ih[1], jh[1], kh[1]);
          }
          b1_mma_and_popc(lm[h], lx, my);
        }
        uint32_t my[2];
        column_fragment(a, w0, w_end, col_level, mw0 + col_m, t, my);
#pragma unroll
        for (int combo = 0; combo < 27; ++combo) {
          uint32_t rx[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int half = e / 2;
            rx[e] = combo == 26 ? lx[e] : combo_bits(combo, ih[half], jh[half], kh[half]) & lx[e];
          }
          b1_mma_and_popc(acc[combo], rx, my);
        }
      }
      // Cells: u + 3 v + 9 w + 27 x + 81 y (x: l's level, y: m's; 2: any).
      int32_t* tc = n + c * CELLS;
#pragma unroll
      for (int combo = 0; combo < 27; ++combo)
#pragma unroll
        for (int e = 0; e < 4; ++e) tc[combo + 27 * (e / 2) + 81 * (e % 2)] = acc[combo][e];
      // m at any level: lane (g, s) of mma h holds combinations 8 h + 2 s + p at l's level x in
      // lm[h][2 x + p].
#pragma unroll
      for (int h = 0; h < 4; ++h)
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int32_t value = __shfl_sync(0xffffffffu, lm[h][e], g * 4 + s);
            const int q = 8 * h + 2 * s + e % 2;
            if (q < 26) tc[q + 27 * (e / 2) + 162] = value;
          }
      tc[26 + 162] = l_levels[c][0];
      tc[26 + 27 + 162] = l_levels[c][1];
#pragma unroll
      for (int y = 0; y < 3; ++y)
#pragma unroll
        for (int combo = 0; combo < 27; ++combo) tc[combo + 54 + 81 * y] = base[c * 81 + combo + 27 * y];
    }
    if (l >= l_end || m >= m_end || (!a.contrast && m <= l)) continue;
    complete_counts(n, 5, 3, NC);
    const int64_t full = tuple_cond_entropy(n, 5, 3, NC, tables, -1);
    const int32_t q[5] = {i, j, k, l, m};
    offer_tuple<5>(a, q, full, [&](int p) { return entropy_without<5>(a, q, n, tables, p); });
  }
}

// Quintuples of 3-level variables and two classes when the sub-tuples' condH are known
// (SearchArgs::sub), with each tuple's table reduced as it is counted: nothing of it is stored.
// A block takes triples (i, j, k) in turn (a grid-stride loop) and, per triple, tiles of 32 m's
// (4 per warp) and groups of 8 l's (as in quint_tensor_kernel). Every plane combination
// P_uvw = I_u AND J_v AND K_w with u, v, w at a level (level 2 = neither plane 0 nor 1, derived
// on the CUDA cores) is counted against the rows of l and the columns of m on the tensor cores,
// 9 combinations (one level of k) at a time, and the 9 voxels (l, m at levels 0-2) of each
// combination follow at once from marginals the block shares: per combination and m, the counts
// with l at any level (popcounts, per tile); per combination and l, those with m at any level
// (4 mma, per group). So every voxel is a complete cell, its condH term one lookup in a flat
// table of (class 0, class 1) counts (voxel_entropy), and the sum is the CPU's integer.
// The 32 bits of P_uvw (combo = u + 3 v + 9 w, each 0..2; level 2: neither plane) from the
// variables' two planes.
__device__ __forceinline__ uint32_t level_bits(const uint32_t (&h)[2], int level) {
  return level == 0 ? h[0] : level == 1 ? h[1] : ~(h[0] | h[1]);  // selects: h stays in registers
}

__global__ void __launch_bounds__(256, 1) quint_stream_kernel(SearchArgs a, int64_t n_triples) {
  constexpr int NC = 2, COMBOS = 27;
  __shared__ int64_t flat[kFlatSide * kFlatStride];
  __shared__ int4 m_marg[COMBOS * kQuintTile];  // [combo][m]: P AND M_y per class: {y0 c0, y1 c0, y0 c1, y1 c1}
  __shared__ int4 l_marg[NC * COMBOS * 8];      // [class][combo][l]: P AND L_x, x = 0, 1, 2
  __shared__ int32_t combo_count[NC * COMBOS];  // [class][combo]: P alone
  __shared__ uint64_t planes[COMBOS][kPlaneWords];  // a slab of P's words
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  fill_flat(a.tables, flat, tid, 256);
  SearchArgs triples = a;  // the triples (i, j, k) are real variables
  triples.contrast = false;
  for (int64_t item = blockIdx.x; item < n_triples; item += gridDim.x) {
    int32_t ijk[3];
    tuple_at<3>(triples, item, ijk);
    const int32_t i = ijk[0], j = ijk[1], k = ijk[2];
    const int32_t m_begin = a.contrast ? a.n_real : k + 2, m_end = a.contrast ? a.n_vars : a.n_real;
    if (m_begin >= m_end || k + 1 >= a.n_real) continue;  // (block-uniform)
    // The planes of (i, j, k) at word w: [variable][level 0, 1].
    auto load_planes = [&](int32_t w, uint64_t (&p)[3][2]) {
#pragma unroll
      for (int x = 0; x < 2; ++x) {
        p[0][x] = level_row(a, w, x)[i];
        p[1][x] = level_row(a, w, x)[j];
        p[2][x] = level_row(a, w, x)[k];
      }
    };
    auto combo_word = [](const uint64_t (&p)[3][2], int combo) {
      uint64_t x = ~0ull;
#pragma unroll
      for (int d = 0, rest = combo; d < 3; ++d, rest /= 3) {
        const int level = rest % 3;  // chosen by selects: p stays in registers
        x &= level == 0 ? p[d][0] : level == 1 ? p[d][1] : ~(p[d][0] | p[d][1]);
      }
      return x;
    };
    __syncthreads();  // the previous triple's marginals are read
    for (int e = tid; e < NC * COMBOS; e += 256) {
      const int c = e / COMBOS, combo = e % COMBOS;
      int32_t n = 0;
      for (int32_t w = a.class_word[c], left = a.class_size[c]; w < a.class_word[c + 1]; ++w, left -= 64) {
        uint64_t p[3][2];
        load_planes(w, p);
        const uint64_t valid = left >= 64 ? ~0ull : (1ull << left) - 1;  // level 2 stops at the class's end
        n += __popcll(combo_word(p, combo) & valid);
      }
      combo_count[e] = n;
    }
    for (int32_t mb0 = m_begin; mb0 < m_end; mb0 += kQuintTile) {
      // The m marginals: the combinations' planes pass through shared memory in slabs of words,
      // each thread keeping its jobs' (combination, m) counts.
      constexpr int JOBS = (COMBOS * kQuintTile + 255) / 256;
      int32_t nb[JOBS][NC][2] = {};
      for (int32_t ws = 0; ws < a.words; ws += kPlaneWords) {
        const int32_t slab = min(a.words - ws, kPlaneWords);
        __syncthreads();  // the previous slab's planes (and the previous tile's m marginals) are read
        for (int e = tid; e < COMBOS * kPlaneWords; e += 256) {
          const int combo = e / kPlaneWords, w = e % kPlaneWords;
          if (w < slab) {
            uint64_t p[3][2];
            load_planes(ws + w, p);
            planes[combo][w] = combo_word(p, combo);
          }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < JOBS; ++r) {
          const int e = tid + 256 * r;
          if (e >= COMBOS * kQuintTile) continue;
          const int combo = e / kQuintTile;
          const int32_t mv = mb0 + e % kQuintTile;  // within the padding past n_vars (zero planes)
          for (int32_t w = 0; w < slab; ++w) {
            const uint64_t x = planes[combo][w];
            const int32_t y0 = __popcll(x & level_row(a, ws + w, 0)[mv]), y1 = __popcll(x & level_row(a, ws + w, 1)[mv]);
            if (ws + w < a.class_word[1]) {
              nb[r][0][0] += y0;
              nb[r][0][1] += y1;
            } else {
              nb[r][1][0] += y0;
              nb[r][1][1] += y1;
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < JOBS; ++r) {
        const int e = tid + 256 * r;
        if (e < COMBOS * kQuintTile) m_marg[e] = make_int4(nb[r][0][0], nb[r][0][1], nb[r][1][0], nb[r][1][1]);
      }
      __syncthreads();
      const int32_t l_end = a.contrast ? a.n_real : min(a.n_real, mb0 + kQuintTile - 1);  // l < m
      const int32_t mw0 = mb0 + warp * 4, m = mw0 + t;
      for (int32_t lg0 = k + 1; lg0 < l_end; lg0 += 8) {
        const int32_t l = lg0 + g;
        {
          // Warp h + 4 c: class c's l rows against combinations 8 h .. 8 h + 7 as columns; lane
          // (g, s) gets combinations 8 h + 2 s + p at l's levels 0 and 1 in d[p] and d[2 + p].
          const int h = warp % 4, c = warp / 4, combo_col = 8 * h + g;
          int32_t d[4] = {};
          const int32_t w_end = a.class_word[c + 1];
          for (int32_t w0 = a.class_word[c]; w0 < w_end; w0 += kTensorWords) {
            uint32_t lx[4], py[2] = {0u, 0u};
            row_fragment(a, w0, w_end, {0, 1}, {l, l}, t, lx);
            if (combo_col < COMBOS) {
#pragma unroll
              for (int hf = 0; hf < 2; ++hf) {
                const int32_t w = w0 + 2 * hf + t / 2;
                uint32_t x = ~0u;
#pragma unroll
                for (int dv = 0, rest = combo_col; dv < 3; ++dv, rest /= 3) {
                  const int32_t v = dv == 0 ? i : dv == 1 ? j : k;
                  const uint32_t hv[2] = {bitmap_half(a, w, w_end, 0, v, t % 2), bitmap_half(a, w, w_end, 1, v, t % 2)};
                  x &= level_bits(hv, rest % 3);
                }
                py[hf] = x;
              }
            }
            b1_mma_and_popc(d, lx, py);
          }
#pragma unroll
          for (int p = 0; p < 2; ++p) {
            const int combo = 8 * h + 2 * t + p;
            if (combo < COMBOS) {
              const int32_t all = combo_count[c * COMBOS + combo];
              l_marg[(c * COMBOS + combo) * 8 + g] = make_int4(d[p], d[2 + p], all - d[p] - d[2 + p], 0);
            }
          }
        }
        __syncthreads();
        // A warp none of whose m's follows one of the group's l's leaves the multiprocessor to
        // the others (the triangle l < m of a tile's last groups).
        const bool busy = mw0 < m_end && (a.contrast || mw0 + 3 > lg0);
        int64_t h = 0;  // condH of the full table
#pragma unroll 1
        for (int kw = 0; kw < 3 && busy; ++kw) {  // k's level: combinations 9 kw .. 9 kw + 8
          int32_t acc[9][NC][4] = {};
#pragma unroll
          for (int c = 0; c < NC; ++c) {
            const int32_t w_end = a.class_word[c + 1];
            for (int32_t w0 = a.class_word[c]; w0 < w_end; w0 += kTensorWords) {
              uint32_t ih[2][2], jh[2][2], kh[2];  // [half][level]; k at its level kw
#pragma unroll
              for (int hf = 0; hf < 2; ++hf) {
                const int32_t w = w0 + 2 * hf + t / 2;
                uint32_t kk[2];
#pragma unroll
                for (int x = 0; x < 2; ++x) {
                  ih[hf][x] = bitmap_half(a, w, w_end, x, i, t % 2);
                  jh[hf][x] = bitmap_half(a, w, w_end, x, j, t % 2);
                  kk[x] = bitmap_half(a, w, w_end, x, k, t % 2);
                }
                kh[hf] = level_bits(kk, kw);
              }
              uint32_t lx[4], my[2];
              row_fragment(a, w0, w_end, {0, 1}, {l, l}, t, lx);
              column_fragment(a, w0, w_end, g % 2, mw0 + g / 2, t, my);
#pragma unroll
              for (int q = 0; q < 9; ++q) {
                uint32_t px[2], rx[4];
#pragma unroll
                for (int hf = 0; hf < 2; ++hf) px[hf] = level_bits(ih[hf], q % 3) & level_bits(jh[hf], q / 3) & kh[hf];
                rx[0] = px[0] & lx[0];
                rx[1] = px[0] & lx[1];
                rx[2] = px[1] & lx[2];
                rx[3] = px[1] & lx[3];
                b1_mma_and_popc(acc[q][c], rx, my);
              }
            }
          }
          // Lane (g, t) holds (l g, m t) at l's level x and m's level y in acc[q][c][2 x + y].
#pragma unroll
          for (int q = 0; q < 9; ++q) {
            const int combo = q + 9 * kw;
            const int4 mm = m_marg[combo * kQuintTile + warp * 4 + t];
            int32_t n[NC][3][3];
#pragma unroll
            for (int c = 0; c < NC; ++c) {
              const int4 lm = l_marg[(c * COMBOS + combo) * 8 + g];
              const int32_t(&d)[4] = acc[q][c];
              const int32_t m0 = c == 0 ? mm.x : mm.z, m1 = c == 0 ? mm.y : mm.w;
              n[c][0][0] = d[0];
              n[c][0][1] = d[1];
              n[c][1][0] = d[2];
              n[c][1][1] = d[3];
              n[c][0][2] = lm.x - d[0] - d[1];
              n[c][1][2] = lm.y - d[2] - d[3];
              n[c][2][0] = m0 - d[0] - d[2];
              n[c][2][1] = m1 - d[1] - d[3];
              n[c][2][2] = lm.z - n[c][2][0] - n[c][2][1];
            }
#pragma unroll
            for (int x = 0; x < 3; ++x)
#pragma unroll
              for (int y = 0; y < 3; ++y) h += voxel_entropy(flat, a.tables, n[0][x][y], n[1][x][y]);
          }
        }
        if (busy && l < l_end && m < m_end && (a.contrast || m > l)) {
          const int32_t q[5] = {i, j, k, l, m};
          offer_tuple<5>(a, q, h, [&](int p) { return sub_entropy<5>(a, q, p); });
        }
        __syncthreads();  // the l marginals are read before the next group's
      }
    }
  }
}

// The bound (bits) on |pair_entropy_screen() - condH| plus the rounding of the screen's gains,
// for pair_tensor_kernel. With u = 2^-24 and S the sum of the magnitudes of a pair's table terms
// (9 cells x (classes + 1), at most 45), rounding each term to a float errs by at most u S and
// adding them by at most 44 u S; the gains' single entropies (magnitude at most A), the
// subtraction, the bound's own addition and the floors (rounded down) add at most 4 u (A + S),
// so 128 u S + 16 u A is more than twice the error. S is bounded per table f
// (convex in n; the cells' counts sum to m, the class size or N) by f(m) + 8 max(f(0), 0) +
// 18 max(0, -min f): the sum of f over 9 cells is largest with all m in one (and f(m) is the
// largest of f over [0, m], so fewer valid objects do not raise it). A screened pair is thus
// skipped only when its exact gains are below both of its variables' bests.
float pair_screen_bound(const InteractionBits& b, const GainTables& tables, const std::vector<int64_t>& alone) {
  const int32_t stride = b.n_objects + 1;
  auto table_sum = [&](const int64_t* f, int32_t m) {
    double negative = 0;
    for (int32_t n = 0; n < stride; ++n) negative = std::max(negative, -gain_bits(f[n]));
    return gain_bits(f[m]) + 8 * std::max(gain_bits(f[0]), 0.0) + 18 * negative;
  };
  double terms = table_sum(tables.cell_total.data(), b.n_objects);
  for (int32_t c = 0; c < b.n_classes; ++c) terms += table_sum(tables.cell.data() + size_t(c) * stride, b.class_size[c]);
  double single = 0;
  for (int64_t h : alone) single = std::max(single, std::fabs(gain_bits(h)));
  const double bound = std::ldexp(128 * terms + 16 * single, -24) + std::ldexp(1.0, -20);
  return std::nextafter(static_cast<float>(bound), INFINITY);
}

// The kernel for (dimensions, levels, classes), launched over rows [begin, end).
template <int L, int NC>
void launch_shape(int32_t k, const SearchArgs& a, cudaStream_t s) {
  if constexpr (L <= 2) {
    if (k == 2 && a.tensor_cores) {
      constexpr int BJ = TensorPairShape<L, NC>::BJ;
      const int32_t n_cols = a.contrast ? a.n_vars - a.n_real : a.n_real;
      const int32_t tiles_x = (n_cols + BJ - 1) / BJ;
      const int64_t n_tiles = int64_t(tiles_x) * ((a.row_end - a.row_begin + kPairTile - 1) / kPairTile);
      // Two blocks stay resident per multiprocessor (a.blocks is 8 per multiprocessor). Measured on
      // an H100 (204,800 variables): 1.56 s with a block per tile, 1.41 s with resident blocks,
      // 1.21 s with the tables in shared memory as 32-bit halves.
      const int64_t blocks = std::min<int64_t>(n_tiles, a.blocks / 4);
      // Split tables: the same bytes as 32-bit halves, then the float tables of the screen.
      const size_t shared = a.shared_tables ? pair_table_bytes(a.tables.stride, NC) : 0;
      if (a.shared_tables) {
        allow_dynamic_shared(pair_tensor_kernel<L, NC, true>);
        pair_tensor_kernel<L, NC, true><<<unsigned(blocks), 256, shared, s>>>(a, tiles_x, n_tiles);
      } else {
        allow_dynamic_shared(pair_tensor_kernel<L, NC, false>);
        pair_tensor_kernel<L, NC, false><<<unsigned(blocks), 256, shared, s>>>(a, tiles_x, n_tiles);
      }
      check_launch("pair_tensor_kernel");
      return;
    }
  }
  if (k == 2) {
    // Pairs per thread such that the counters (NC L^2 per pair) stay within about 72 registers.
    constexpr int TI = L == 1 ? 4 : (L == 3 && NC > 2) ? 1 : 2;
    constexpr int TJ = L == 1 ? 4 : (L == 2 && NC == 2) ? 4 : 2;
    static_assert(TI * 16 <= kPairTile && kPairTile % (TI * 16) == 0, "row tiles must divide batches");
    const int32_t n_cols = a.contrast ? a.n_vars - a.n_real : a.n_real;
    dim3 grid((n_cols + 16 * TJ - 1) / (16 * TJ), (a.row_end - a.row_begin + 16 * TI - 1) / (16 * TI));
    const size_t shared = a.shared_tables ? table_bytes(a.tables.stride, NC, false) : 0;
    allow_dynamic_shared(pair_kernel<L, NC, TI, TJ>);
    pair_kernel<L, NC, TI, TJ><<<grid, dim3(16, 16), shared, s>>>(a);
    check_launch("pair_kernel");
    return;
  }
  const int32_t n_l = a.contrast ? a.n_vars - a.n_real : a.n_real;
  if constexpr (L <= 2) {
    if (a.tensor_cores) {
      constexpr int BL = TensorTripleShape<L, NC>::BL;
      const int32_t l_tiles = (n_l + BL - 1) / BL;
      const size_t shared = a.shared_tables ? table_bytes(a.tables.stride, NC, true) : 0;
      allow_dynamic_shared(triple_tensor_kernel<L, NC>);
      triple_tensor_kernel<L, NC><<<dim3((a.row_end - a.row_begin) * l_tiles), 256, shared, s>>>(a, l_tiles);
      check_launch("triple_tensor_kernel");
      return;
    }
  }
  const int32_t l_tiles = (n_l + kTripleThreads - 1) / kTripleThreads;
  const size_t shared = size_t(a.words) * (L * L + L) * sizeof(uint64_t) +
                        (a.shared_tables ? table_bytes(a.tables.stride, NC, true) : 0);
  allow_dynamic_shared(triple_kernel<L, NC>);
  triple_kernel<L, NC><<<dim3((a.row_end - a.row_begin) * l_tiles), kTripleThreads, shared, s>>>(a, l_tiles);
  check_launch("triple_kernel");
}

template <int L>
void launch_levels(int32_t k, const SearchArgs& a, cudaStream_t s) {
  switch (a.n_classes) {
    case 2: return launch_shape<L, 2>(k, a, s);
    case 3: return launch_shape<L, 3>(k, a, s);
    default: return launch_shape<L, 4>(k, a, s);
  }
}

void launch(int32_t k, int32_t m, const SearchArgs& a, cudaStream_t s) {
  if (k == 4 && m == 3 && a.n_classes == 2 && a.tensor_cores) {
    const int32_t n_l = a.contrast ? a.n_vars - a.n_real : a.n_real;
    const int32_t l_tiles = (n_l + kQuadTile - 1) / kQuadTile;
    const size_t shared = a.shared_tables ? table_bytes(a.tables.stride, 2, true) : 0;
    allow_dynamic_shared(quad_tensor_kernel);
    quad_tensor_kernel<<<dim3(a.n_real * l_tiles, a.row_end - a.row_begin), 256, shared, s>>>(a, l_tiles);
    check_launch("quad_tensor_kernel");
    return;
  }
  if (k == 5 && m == 3 && a.n_classes == 2 && a.tensor_cores && a.sub) {
    SearchArgs triples = a;
    triples.contrast = false;
    const int64_t n_triples = tuples_from(triples, 3, a.row_begin) - tuples_from(triples, 3, a.row_end);
    if (n_triples <= 0) return;
    quint_stream_kernel<<<unsigned(std::min<int64_t>(n_triples, a.blocks)), 256, 0, s>>>(a, n_triples);
    check_launch("quint_stream_kernel");
    return;
  }
  if (k == 5 && m == 3 && a.n_classes == 2 && a.tensor_cores) {
    const int32_t n_m = a.contrast ? a.n_vars - a.n_real : a.n_real;
    const int32_t m_tiles = (n_m + kQuintTile - 1) / kQuintTile;
    const size_t shared = a.shared_tables ? table_bytes(a.tables.stride, 2, true) : 0;
    allow_dynamic_shared(quint_tensor_kernel);
    quint_tensor_kernel<<<dim3(unsigned(int64_t(a.n_real) * a.n_real * m_tiles), a.row_end - a.row_begin), 256, shared,
                          s>>>(a, m_tiles);
    check_launch("quint_tensor_kernel");
    return;
  }
  if (!special_kernels(k, a.n_classes)) {
    switch (k) {
      case 1: return launch_tuples<1>(a, s);
      case 2: return launch_tuples<2>(a, s);
      case 3: return launch_tuples<3>(a, s);
      case 4: return launch_tuples<4>(a, s);
      default: return launch_tuples<5>(a, s);
    }
  }
  switch (m) {
    case 2: return launch_levels<1>(k, a, s);
    case 3: return launch_levels<2>(k, a, s);
    default: return launch_levels<3>(k, a, s);
  }
}

// One device's uploaded data and buffers.
struct InteractionDevice {
  Stream stream;
  DeviceBuffer<uint64_t> bits;
  DeviceBuffer<int32_t> level_count, class_words, class_sizes;
  DeviceBuffer<int64_t> alone, cell, cell_total, merged, merged_total, binomial, sub;
  DeviceBuffer<Key> best, best_tuple;
  DeviceBuffer<uint8_t> interesting;
  DeviceBuffer<Hit> hits;
  DeviceBuffer<unsigned long long> n_hits;
  std::vector<Hit> found;  // the collected gains of this device's batches
  SearchArgs args{};  // everything but the pass and the rows
};

// The devices' states, each released with its device current.
struct DeviceStates {
  const std::vector<int>& ids;
  std::vector<std::unique_ptr<InteractionDevice>> states;
  explicit DeviceStates(const std::vector<int>& device_ids) : ids(device_ids), states(device_ids.size()) {}
  ~DeviceStates() {
    for (size_t d = 0; d < states.size(); ++d) {
      if (!states[d]) continue;
      try {
        ScopedDevice scope(ids[d]);
        states[d].reset();
      } catch (...) {
        // nothing to do in a destructor: the device is gone
      }
    }
  }
};

size_t triple_shared_bytes(const InteractionBits& b) {
  const size_t L = b.n_levels - 1;
  return size_t(b.words) * (L * L + L) * sizeof(uint64_t);
}

// The shared memory that the kernel of a search of k-tuples takes for its gain tables and 3-way
// bitmaps (special: the pair, triple, quadruple and quintuple kernels; else the tuple kernel): the
// tensor-core pair kernel's tables in its three forms, the triples' with merged cells.
size_t table_shared_bytes(const InteractionBits& b, int32_t k, bool special, bool tensor_cores) {
  const int32_t stride = b.n_objects + 1;
  if (special && k == 2 && tensor_cores && b.n_levels <= 3) return pair_table_bytes(stride, b.n_classes);
  if (special) return table_bytes(stride, b.n_classes, k == 3) + triple_shared_bytes(b);
  return table_bytes(stride, b.n_classes, true) + (k == 3 ? triple_shared_bytes(b) : 0);
}

constexpr int64_t kPaddedVars = 256;  // past the last variable: room for a block's columns
// The gain tables go to shared memory when they take at most this, and leave the kernels' own
// shared memory room under the block's limit (up to 37 KB of static buffers, ptxas -v on sm_90).
constexpr int kSharedTableBudget = 160 * 1024;
constexpr int kKernelSharedRoom = 40 * 1024;
size_t table_budget(int device, const GpuOptions& options) {
  const int limit = block_shared_limit(device, options.shared_memory_cap);
  return static_cast<size_t>(std::max(0, std::min(kSharedTableBudget, limit - kKernelSharedRoom)));
}

}  // namespace

std::string gpu_interactions_problem(const InteractionBits& b, const InteractionTask& task, const GpuOptions& options) {
  const GpuStatus status = gpu_status();
  if (status.devices.empty()) return status.problem;
  if (options.devices.empty()) return "no GPU device given";
  const int32_t k = task.dimensions;
  if (k < 1 || k > kMaxInteractionDimensions)
    return "the GPU search takes 1- to " + std::to_string(kMaxInteractionDimensions) + "-way tuples";
  if (b.n_levels > kMaxGpuLevels)
    return "the GPU search takes variables with at most " + std::to_string(kMaxGpuLevels) + " levels";
  if (tuple_cells(k, b.n_levels) * b.n_classes > kMaxInteractionCells)
    return "the GPU search takes at most " + std::to_string(kMaxInteractionCells) + " cells per tuple";
  if (b.any_missing()) return "the GPU search takes data without missing values";
  if (b.n_vars >= pack_limit(k))
    return "the GPU's " + std::to_string(k) + "-way search takes fewer than " + std::to_string(pack_limit(k)) +
           " variables";
  for (int device : options.devices)
    if (k == 3 && triple_shared_bytes(b) > table_budget(device, options))
      return "too many objects for the GPU's 3-way search (its bitmaps must fit shared memory)";
  const int64_t padded = (b.n_vars + kPaddedVars - 1) / kPaddedVars * kPaddedVars + kPaddedVars;
  // Bitmaps (none for single variables), level counts, keys, tables, and the tuple kernel's
  // tables in local memory for every thread the device holds at once.
  const int64_t local = special_kernels(k, b.n_classes) ? 0 : int64_t(kMaxInteractionCells) * 4 * 2048 * 132;
  const int64_t n_sub = k >= 3 ? choose(task.n_real, k - 1) : 0;  // gpu_interactions' sub-tuples
  const int64_t sub = n_sub <= (int64_t(1) << 27) ? n_sub * 8 : 0;
  const int64_t bytes = (k == 1 ? 0 : padded * b.words * (kMaxGpuLevels - 1) * 8) + b.level_count.size() * 4 +
                        padded * 16 + int64_t(b.n_objects + 1) * (2 * b.n_classes + 2) * 8 + local + sub;
  for (int device : options.devices) {
    ScopedDevice scope(device);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t limit = options.memory_limit > 0 ? std::min<int64_t>(options.memory_limit, free_bytes)
                                                   : static_cast<int64_t>(free_bytes) - (int64_t(256) << 20);
    if (bytes > limit)
      return "the bitmaps need " + std::to_string(bytes >> 20) + " MiB on GPU " + std::to_string(device) + ", " +
             std::to_string(std::max<int64_t>(limit, 0) >> 20) + " MiB are free";
  }
  return "";
}

InteractionBest gpu_interactions(const InteractionBits& b, const GainTables& tables, const InteractionTask& task,
                                 const GpuOptions& options, const Checkpoint& between_batches) {
  check_interaction_task(b, task);
  const std::string problem = gpu_interactions_problem(b, task, options);
  if (!problem.empty()) throw std::runtime_error(problem);
  const int32_t k = task.dimensions;
  // Room past the last variable for a whole tile of columns that starts at any variable.
  const int64_t padded = (b.n_vars + kPaddedVars - 1) / kPaddedVars * kPaddedVars + kPaddedVars;
  // Word-major bitmaps with room for kMaxGpuLevels - 1 levels; padding variables stay zero.
  const int host_threads = std::max(1, options.host_threads);
  const bool special = special_kernels(k, b.n_classes);
  // Single variables need no bitmaps (their tables are level counts).
  const RowVector<uint64_t> host_bits =
      k == 1 ? RowVector<uint64_t>() : word_major_bits(b, padded, kMaxGpuLevels - 1, host_threads);
  const std::vector<int64_t> alone = special ? single_entropies(b, tables.view(), host_threads) : std::vector<int64_t>();
  const float screen_bound = k == 2 && special ? pair_screen_bound(b, tables, alone) : 0.0f;
  // Work in batches of first variables (those of the task's range; single variables are their
  // own first, contrast ones too), from both ends so batches cost about the same.
  const int64_t first_limit = k == 1 ? b.n_vars : task.n_real;
  const int64_t first_begin = std::min(task.first_begin, first_limit);
  const int64_t first_end = task.first_end < 0 ? first_limit : std::min(task.first_end, first_limit);
  const int64_t n_first = std::max<int64_t>(0, first_end - first_begin);
  // The tuple kernel: batches of at most about 2^28 tuples (the first variable's tuples are the most).
  const double first_tuples = k == 1 ? 1
                              : choose(task.n_real - first_begin - 1, k - 1) +
                                    double(b.n_vars - task.n_real) * choose(task.n_real - first_begin - 1, k - 2);
  const int64_t batch =
      !special ? std::max<int64_t>(1, static_cast<int64_t>(std::min(double(n_first) + 1, 268435456.0 / first_tuples)))
      : k == 2 ? kPairTile * std::max<int64_t>(1, 4096 / std::max<int64_t>(1, b.n_vars / 4096 + 1))
               : std::max<int64_t>(1, int64_t(2e9) / std::max<int64_t>(1, b.n_vars * b.n_vars));
  const int64_t n_batches = (n_first + batch - 1) / batch;
  // 3- to 5-tuples: the sub-tuples' condH computed once when they take at most 1 GiB.
  const int64_t n_sub = k >= 3 ? choose(task.n_real, k - 1) : 0;
  const bool use_sub = k >= 3 && n_sub <= (int64_t(1) << 27);
  std::vector<int64_t> binomial;
  if (use_sub)
    for (int32_t p = 0; p < k - 1; ++p)
      for (int64_t v = 0; v < task.n_real; ++v) binomial.push_back(choose(v, p + 1));
  const size_t n_devices = options.devices.size();
  std::vector<std::vector<Key>> device_best(n_devices), device_tuple(n_devices);
  std::atomic<int64_t> next_batch{0}, batches_done{0}, n_hits{0};
  std::atomic<bool> cancel{false};
  const int passes = task.with_tuples ? 2 : 1;
  std::vector<Key> best(size_t(b.n_vars), 0);
  // Pass 1 finds the best gains on every device; their maximum goes to every device for pass 2.
  // Each device's data stay uploaded from the first pass to the second.
  DeviceStates devices(options.devices);
  auto run_pass = [&](bool tuple_pass) {
    next_batch = 0;
    batches_done = 0;
    run_on_devices(
        n_devices,
        [&](size_t d) {
          ScopedDevice scope(options.devices[d]);
          if (!devices.states[d]) {
            auto dev = std::make_unique<InteractionDevice>();
            cudaStream_t s = dev->stream.get();
            dev->bits.upload(host_bits.data(), host_bits.size(), s);
            dev->level_count.upload(b.level_count.data(), b.level_count.size(), s);
            dev->alone.upload(alone.data(), alone.size(), s);
            dev->class_words.upload(b.class_word.data(), b.class_word.size(), s);
            dev->class_sizes.upload(b.class_size.data(), b.class_size.size(), s);
            dev->cell.upload(tables.cell.data(), tables.cell.size(), s);
            dev->cell_total.upload(tables.cell_total.data(), tables.cell_total.size(), s);
            dev->merged.upload(tables.merged.data(), tables.merged.size(), s);
            dev->merged_total.upload(tables.merged_total.data(), tables.merged_total.size(), s);
            SearchArgs& a = dev->args;
            a.bits = dev->bits.data();
            a.stride = padded;
            a.words = b.words;
            a.n_classes = b.n_classes;
            for (int32_t c = 0; c <= std::min(b.n_classes, kMaxGpuClasses); ++c) a.class_word[c] = b.class_word[c];
            for (int32_t c = 0; c < std::min(b.n_classes, kMaxGpuClasses); ++c) a.class_size[c] = b.class_size[c];
            a.class_words = dev->class_words.data();
            a.class_sizes = dev->class_sizes.data();
            a.level_count = dev->level_count.data();
            a.alone = dev->alone.data();
            a.screen_bound = screen_bound;  // 0 but for the tensor pair kernel's screen
            int major = 0;
            FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, options.devices[d]));
            a.tensor_cores = major >= 8;
            // Tables in shared memory when they leave room for the kernels' own buffers.
            a.shared_tables =
                table_shared_bytes(b, k, special, a.tensor_cores) <= table_budget(options.devices[d], options);
            a.tables = tables.view();
            a.tables.cell = dev->cell.data();
            a.tables.cell_total = dev->cell_total.data();
            a.tables.merged = dev->merged.data();
            a.tables.merged_total = dev->merged_total.data();
            a.n_real = static_cast<int32_t>(task.n_real);
            a.n_vars = static_cast<int32_t>(b.n_vars);
            if (task.collect) {
              a.threshold = task.threshold;
              a.require_all = task.require_all;
              if (!task.interesting.empty()) {
                dev->interesting.upload(task.interesting.data(), task.interesting.size(), s);
                a.interesting = dev->interesting.data();
              }
              dev->hits.resize(size_t(std::min<int64_t>(task.max_hits, int64_t(1) << 16)));
              dev->n_hits.resize(1);
            }
            int multiprocessors = 0;
            FSGPU_CUDA_CHECK(
                cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, options.devices[d]));
            a.blocks = 8 * multiprocessors;
            if (use_sub) {
              // The sub-tuples of the tuples whose first variable is in the range start there too.
              dev->binomial.upload(binomial.data(), binomial.size(), s);
              dev->sub.resize(size_t(n_sub));
              a.binomial = dev->binomial.data();
              SearchArgs pass = a;
              pass.sub_out = dev->sub.data();
              pass.row_begin = static_cast<int32_t>(first_begin);
              pass.row_end = static_cast<int32_t>(task.n_real);
              if (k == 3) launch_tuples<2>(pass, s);
              else if (k == 4 && a.tensor_cores && special_kernels(3, b.n_classes) && b.n_levels <= 3)
                launch(3, b.n_levels, pass, s);  // the tensor-core triple kernel
              else if (k == 4) launch_tuples<3>(pass, s);
              else launch(4, b.n_levels, pass, s);  // the quadruple kernel when it applies
              a.sub = dev->sub.data();
            }
            devices.states[d] = std::move(dev);
          }
          InteractionDevice& dev = *devices.states[d];
          cudaStream_t s = dev.stream.get();
          // The first pass starts from no gain, the second from every device's best.
          const std::vector<Key> start = tuple_pass ? best : std::vector<Key>(size_t(b.n_vars), 0);
          dev.best.upload(start.data(), start.size(), s);
          const std::vector<Key> no_tuple(size_t(b.n_vars), ~Key(0));
          dev.best_tuple.upload(no_tuple.data(), no_tuple.size(), s);
          SearchArgs a = dev.args;
          a.tuple_pass = tuple_pass;
          a.best = dev.best.data();
          a.best_tuple = dev.best_tuple.data();
          a.collect = task.collect && !tuple_pass;
          auto launch_batch = [&] {
            if (a.collect) {
              a.hits = dev.hits.data();
              a.hit_capacity = dev.hits.size();
              a.n_hits = dev.n_hits.data();
              FSGPU_CUDA_CHECK(cudaMemsetAsync(a.n_hits, 0, sizeof(unsigned long long), s));
            }
            for (int contrast = 0; contrast < 2; ++contrast) {
              a.contrast = contrast == 1;
              if (a.contrast && (task.n_real == b.n_vars || k == 1)) continue;  // k = 1: one launch takes all
              if (k == 3 && !a.contrast && a.row_begin >= task.n_real - 2) continue;
              launch(k, b.n_levels, a, s);
            }
            unsigned long long count = 0;
            if (a.collect)
              FSGPU_CUDA_CHECK(cudaMemcpyAsync(&count, a.n_hits, sizeof(count), cudaMemcpyDeviceToHost, s));
            FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
            return static_cast<int64_t>(count);
          };
          while (!cancel) {
            const int64_t t = next_batch++;
            if (t >= n_batches) break;
            // Batch t from the front when even, from the back when odd.
            const int64_t index = t % 2 == 0 ? t / 2 : n_batches - 1 - t / 2;
            a.row_begin = static_cast<int32_t>(first_begin + index * batch);
            a.row_end = static_cast<int32_t>(first_begin + std::min(n_first, (index + 1) * batch));
            int64_t count = launch_batch();
            if (a.collect) {
              check_hit_count(n_hits += count, task);  // before growing the buffer to the batch's count
              if (count > static_cast<int64_t>(dev.hits.size())) {
                dev.hits.resize(size_t(count));
                count = launch_batch();  // the same gains again: the best keys stay as they were
              }
              const size_t had = dev.found.size();
              dev.found.resize(had + size_t(count));
              FSGPU_CUDA_CHECK(cudaMemcpyAsync(dev.found.data() + had, dev.hits.data(), size_t(count) * sizeof(Hit),
                                               cudaMemcpyDeviceToHost, s));
              FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
            }
            ++batches_done;
          }
          std::vector<Key>& out = tuple_pass ? device_tuple[d] : device_best[d];
          out.resize(size_t(b.n_vars));
          FSGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), tuple_pass ? dev.best_tuple.data() : dev.best.data(),
                                           b.n_vars * sizeof(Key), cudaMemcpyDeviceToHost, s));
          FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
        },
        [&] {
          if (between_batches)
            between_batches(((tuple_pass ? 1 : 0) + static_cast<double>(batches_done) / n_batches) / passes);
        },
        cancel);
  };
  run_pass(false);
  for (size_t d = 0; d < n_devices; ++d)
    for (int64_t v = 0; v < b.n_vars; ++v) best[v] = std::max(best[v], device_best[d][v]);
  InteractionBest result(b.n_vars, k, task.with_tuples);
  for (int64_t v = 0; v < b.n_vars; ++v)
    if (best[v] != 0) result.gain[v] = gain_bits(key_fixed(best[v]));
  for (const auto& dev : devices.states) {
    if (!dev) continue;
    for (const Hit& h : dev->found) {
      InteractionHit hit;
      unpack_tuple(h.tuple, k, hit.tuple);
      hit.var = hit.tuple[h.position];
      hit.gain = gain_bits(h.gain);
      result.hits.push_back(hit);
    }
  }
  // The batches' order depends on the devices' timing; the list's order does not.
  std::sort(result.hits.begin(), result.hits.end(), hit_before);
  if (task.with_tuples) {
    run_pass(true);
    for (int64_t v = 0; v < b.n_vars; ++v) {
      Key t = ~Key(0);
      for (size_t d = 0; d < n_devices; ++d) t = std::min(t, device_tuple[d][v]);
      if (t == ~Key(0)) continue;
      unpack_tuple(t, k, result.tuple.data() + v * k);
    }
  }
  return result;
}

}  // namespace fsgpu
