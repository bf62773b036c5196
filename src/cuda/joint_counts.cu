#include <algorithm>

#include "b1_mma.cuh"
#include "cuda_check.cuh"
#include "core/joint_counts.h"
#include "joint_counts.cuh"
#include "sorted_rows.cuh"

namespace fsgpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPlogpCached = 1024;
constexpr int kVector = 16;  // bytes per vector load
constexpr int kWarpRounds = 4;  // entries per lane in small_features_kernel
constexpr int kWarpEntries = 32 * kWarpRounds;  // sparse features this small take a warp each

__device__ __forceinline__ int64_t block_sum(int64_t v, int64_t* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  int64_t total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) total += scratch[w];
  __syncthreads();
  return total;  // valid in thread 0
}

// Steps follow joint_sums() in src/core/joint_counts.cpp; see there for the why.
// The same integers are added, in another order, so the result is the same.
template <class Code>
__global__ void __launch_bounds__(kThreads) score_pass_kernel(FeatureBlockView block, StepView step,
                                                                      uint32_t* global_scratch, size_t words) {
  extern __shared__ uint32_t shared_tables[];
  __shared__ int64_t reduce_scratch[kThreads / 32];
  __shared__ int64_t plogp_small[kPlogpCached];  // most counts are small: keep their terms close
  const int32_t n_cached = min(kPlogpCached, step.n_samples + 1);
  for (int32_t i = threadIdx.x; i < n_cached; i += kThreads) plogp_small[i] = step.plogp[i];
  auto plogp = [&](uint32_t v) { return v < static_cast<uint32_t>(n_cached) ? plogp_small[v] : step.plogp[v]; };
  uint32_t* tables = global_scratch ? global_scratch + blockIdx.x * words : shared_tables;
  const int32_t ls = step.s_levels;
  const size_t max_cells = static_cast<size_t>(block.max_levels) * ls;
  uint32_t* n_xsy = tables;
  uint32_t* n_xs = n_xsy + max_cells;
  uint32_t* counted_sy = n_xs + max_cells;
  uint32_t* counted_s = counted_sy + ls;
  int32_t* bounds = reinterpret_cast<int32_t*>(counted_s + ls);  // class boundaries of the feature
  // Shared tables start as garbage; global ones are kept all-zero between launches (zeroed when
  // allocated, drained by every feature, bounds cleared at exit), since clearing tables of
  // CMI's many joint states at every launch would cost more than counting.
  if (!global_scratch)
    for (size_t i = threadIdx.x; i < 2 * max_cells + 2 * ls; i += kThreads) tables[i] = 0;
  __syncthreads();

  const Code* all_codes = static_cast<const Code*>(block.codes);
  const bool sparse = block.entry_start != nullptr;
  for (int64_t lf = blockIdx.x; lf < block.n_features; lf += gridDim.x) {
    const int64_t f = block.first + lf;
    if (step.retired[f]) continue;
    const int64_t begin = sparse ? block.entry_start[lf] : lf * block.row_stride;
    const int32_t n_entries = sparse ? static_cast<int32_t>(block.entry_start[lf + 1] - begin) : step.n_samples;
    if (sparse && n_entries <= kWarpEntries) continue;  // small_features_kernel's
    const Code* codes = all_codes + begin;
    const int32_t* rows = sparse ? block.entry_row + begin : nullptr;
    const uint16_t base = step.base[f];
    const bool derived = base != kNoBase;
    const size_t cells = static_cast<size_t>(step.levels[f]) * ls;
    for (int32_t c = threadIdx.x; c <= step.n_classes; c += kThreads)
      bounds[c] = sparse ? first_row_at_least(rows, n_entries, step.class_start[c]) : step.class_start[c];
    __syncthreads();

    // The (x, s) cell of entry e, or -1 for the base code.
    auto cell_of = [&](int32_t e, int32_t& s) -> int64_t {
      const uint16_t x = codes[e];
      if (x == base) return -1;
      s = step.s_codes[sparse ? rows[e] : e];
      return static_cast<int64_t>(x) * ls + s;
    };
    auto revisit = [](int32_t first, int32_t last, size_t size) {
      return int64_t(kTouchRatio) * (last - first) < static_cast<int64_t>(size);
    };
    // The base code's cells from the all-base sum, corrected where something was counted
    // (revisiting the entries), or over every s; counted[] is left zeroed.
    auto derive = [&](uint32_t* counted, const uint32_t* n_s, int64_t all_base, int32_t first, int32_t last,
                      uint32_t* fold) -> int64_t {
      int64_t sum = 0;
      if (revisit(first, last, ls)) {
        if (threadIdx.x == 0) sum = all_base;
        for (int32_t e = first + threadIdx.x; e < last; e += kThreads) {
          int32_t s;
          if (cell_of(e, s) < 0) continue;
          const uint32_t v = atomicExch(&counted[s], 0u);
          if (v) {
            sum += plogp(n_s[s] - v) - plogp(n_s[s]);
            if (fold) atomicAdd(&fold[s], v);
          }
        }
      } else {
        for (int32_t s = threadIdx.x; s < ls; s += kThreads) {
          sum += plogp(n_s[s] - counted[s]);
          if (fold) fold[s] += counted[s];
          counted[s] = 0;
        }
      }
      return sum;
    };

    int64_t xsy = 0, xs = 0;  // this thread's parts of the sums (criteria.h)
    for (int32_t c = 0; c < step.n_classes; ++c) {
      const int32_t first = bounds[c], last = bounds[c + 1];
      // Dense rows start 16-byte aligned: the aligned middle of the class is read 16 bytes of
      // codes at a time (one byte a load keeps too few bytes in flight to use the bandwidth).
      constexpr int32_t V = kVector / sizeof(Code);
      const int32_t body_first = sparse ? last : min(last, (first + V - 1) / V * V);
      const int32_t body_last = sparse ? last : max(body_first, last / V * V);
      auto count_scalar = [&](int32_t from, int32_t to) {
        for (int32_t e = from + threadIdx.x; e < to; e += kThreads) {
          int32_t s;
          const int64_t cell = cell_of(e, s);
          if (cell >= 0) atomicAdd(&n_xsy[cell], 1u);
        }
      };
      count_scalar(first, body_first);
      count_scalar(body_last, last);
      for (int32_t chunk = body_first / V + threadIdx.x; chunk < body_last / V; chunk += kThreads) {
        union { uint4 v; Code c[V]; } x;
        x.v = reinterpret_cast<const uint4*>(codes)[chunk];
        if (V == 16 && step.s_codes8) {  // S as bytes: one load for 16 codes instead of four
          union { uint4 v; uint8_t c[16]; } sv;
          sv.v = __ldg(reinterpret_cast<const uint4*>(step.s_codes8) + chunk);
#pragma unroll
          for (int j = 0; j < V; ++j)
            if (x.c[j] != base) atomicAdd(&n_xsy[static_cast<int64_t>(x.c[j]) * ls + sv.c[j]], 1u);
          continue;
        }
        union { uint4 v[V / 4]; uint32_t c[V]; } sv;
#pragma unroll
        for (int q = 0; q < V / 4; ++q) sv.v[q] = reinterpret_cast<const uint4*>(step.s_codes)[chunk * (V / 4) + q];
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (x.c[j] != base) atomicAdd(&n_xsy[static_cast<int64_t>(x.c[j]) * ls + sv.c[j]], 1u);
      }
      __syncthreads();
      if (revisit(first, last, cells)) {
        for (int32_t e = first + threadIdx.x; e < last; e += kThreads) {
          int32_t s;
          const int64_t cell = cell_of(e, s);
          if (cell < 0) continue;
          const uint32_t v = atomicExch(&n_xsy[cell], 0u);
          if (v) {
            xsy += plogp(v);
            n_xs[cell] += v;  // only the thread that drained this cell gets here
            if (derived) atomicAdd(&counted_sy[s], v);
          }
        }
      } else {
        // When ls divides the block, each thread sees one s only and sums it in a register.
        const bool one_s = kThreads % ls == 0;
        uint32_t mine = 0;
        for (size_t cell = threadIdx.x; cell < cells; cell += kThreads) {
          const uint32_t v = n_xsy[cell];
          if (v) {
            n_xsy[cell] = 0;
            xsy += plogp(v);
            n_xs[cell] += v;
            if (!derived) continue;
            if (one_s) mine += v; else atomicAdd(&counted_sy[cell % ls], v);
          }
        }
        if (one_s && mine) atomicAdd(&counted_sy[threadIdx.x % ls], mine);
      }
      __syncthreads();  // the table is drained before anyone counts the next class into it
      if (derived)  // counted_sy is next written after the next class's counting barrier
        xsy += derive(counted_sy, step.s_class_counts + static_cast<size_t>(c) * ls, step.s_class_terms[c], first, last,
                    counted_s);
    }
    __syncthreads();
    if (revisit(0, n_entries, cells)) {
      for (int32_t e = threadIdx.x; e < n_entries; e += kThreads) {
        int32_t s;
        const int64_t cell = cell_of(e, s);
        if (cell < 0) continue;
        const uint32_t v = atomicExch(&n_xs[cell], 0u);
        if (v) xs += plogp(v);
      }
    } else {
      for (size_t cell = threadIdx.x; cell < cells; cell += kThreads) {
        const uint32_t v = n_xs[cell];
        if (v) {
          n_xs[cell] = 0;
          xs += plogp(v);
        }
      }
    }
    if (derived) xs += derive(counted_s, step.s_counts, step.rule.s_terms, 0, n_entries, nullptr);
    const int64_t xsy_total = block_sum(xsy, reduce_scratch);  // also orders the table clears before reuse
    const int64_t xs_total = block_sum(xs, reduce_scratch);
    if (threadIdx.x == 0) update_feature(step.rule, xsy_total, xs_total, step.state[f]);
  }
  if (global_scratch)
    for (int32_t c = threadIdx.x; c <= step.n_classes; c += kThreads) bounds[c] = 0;
}

// Sparse features with at most kWarpEntries entries: a warp per feature, no tables and no
// barriers. Each lane holds up to kWarpRounds entries; for each kind of cell, every entry
// counts the entries sharing its cell by seeing all keys go round the warp, and the first
// entry of each cell adds the cell's term. The terms are joint_sums()'s: the base
// code's cells start from the all-base sums and are corrected where entries fell.
// small_feature_sums<R>() is one feature of at most 32 R entries (R a lane): R is a template
// argument so that a feature of few entries compares only the rounds it has.
template <int R>
__device__ __forceinline__ void small_feature_sums(const FeatureBlockView& block, const StepView& step, int64_t begin,
                                                   int32_t n_entries, int lane, int64_t& xsy, int64_t& xs) {
  // Keys of this lane's entries (entry r * 32 + lane): the cells (x,s,y), (x,s), (s,y), s.
  uint64_t key[4][R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int32_t e = r * 32 + lane;
    uint32_t x = 0, s = 0, y = 0;
    if (e < n_entries) {
      const int32_t row = block.entry_row[begin + e];
      x = block.wide ? static_cast<const uint16_t*>(block.codes)[begin + e]
                     : static_cast<const uint8_t*>(block.codes)[begin + e];
      s = step.s_codes[row];
      y = step.class_of[row];
    }
    const uint64_t xs_key = static_cast<uint64_t>(x) * step.s_levels + s;
    key[0][r] = xs_key * step.n_classes + y;
    key[1][r] = xs_key;
    key[2][r] = static_cast<uint64_t>(y) * step.s_levels + s;  // also the index into n(s, y)
    key[3][r] = s;
  }
#pragma unroll
  for (int kind = 0; kind < 4; ++kind) {
    uint32_t count[R] = {};
    bool first[R];
#pragma unroll
    for (int r = 0; r < R; ++r) first[r] = true;
#pragma unroll
    for (int r2 = 0; r2 < R; ++r2) {
      for (int from = 0; from < 32; ++from) {
        const uint64_t other = __shfl_sync(0xffffffffu, key[kind][r2], from);
        const int32_t j = r2 * 32 + from;
        if (j >= n_entries) break;  // uniform: the same j on every lane
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if (other != key[kind][r]) continue;
          ++count[r];
          if (j < r * 32 + lane) first[r] = false;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r * 32 + lane >= n_entries || !first[r]) continue;
      const uint32_t n = count[r];
      const uint64_t k = key[kind][r];
      if (kind == 0) xsy += step.plogp[n];
      if (kind == 1) xs += step.plogp[n];
      if (kind == 2) xsy += step.plogp[step.s_class_counts[k] - n] - step.plogp[step.s_class_counts[k]];
      if (kind == 3) xs += step.plogp[step.s_counts[k] - n] - step.plogp[step.s_counts[k]];
    }
  }
}

__global__ void __launch_bounds__(kThreads) small_features_kernel(FeatureBlockView block, StepView step) {
  static_assert(kWarpRounds == 4, "small_features_kernel dispatches 1 to 4 rounds");
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  for (int64_t lf = blockIdx.x * int64_t(kThreads / 32) + threadIdx.x / 32; lf < block.n_features; lf += warps) {
    const int64_t f = block.first + lf;
    const int64_t begin = block.entry_start[lf];
    const int32_t n_entries = static_cast<int32_t>(block.entry_start[lf + 1] - begin);
    if (step.retired[f] || n_entries > kWarpEntries) continue;  // uniform across the warp
    int64_t xsy = 0, xs = 0;
    switch ((n_entries + 31) / 32) {
      case 0:
      case 1: small_feature_sums<1>(block, step, begin, n_entries, lane, xsy, xs); break;
      case 2: small_feature_sums<2>(block, step, begin, n_entries, lane, xsy, xs); break;
      case 3: small_feature_sums<3>(block, step, begin, n_entries, lane, xsy, xs); break;
      default: small_feature_sums<4>(block, step, begin, n_entries, lane, xsy, xs); break;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      xsy += __shfl_down_sync(0xffffffffu, xsy, offset);
      xs += __shfl_down_sync(0xffffffffu, xs, offset);
    }
    if (lane == 0)  // the base code's cells start from S's own sums
      update_feature(step.rule, xsy + step.rule.s_class_terms, xs + step.rule.s_terms, step.state[f]);
  }
}

// ---- Dense codes of few levels: counting on the binary tensor cores ---------------------------
//
// Within a class, n(x, s) = sum over its samples of onehot(x) onehot(s)^T. Stored as bit planes
// (one bit a sample for each level: PlaneLayout in joint_counts.cuh), that is a product of
// binary matrices, which mma.sync's b1 form with .and.popc computes exactly: no shared-memory
// atomic per code read, and no per-sample work at all in the count loop. A warp takes 256
// samples (8 words) a tile: lane (g, t) loads rows g and g + 8 of X's planes and column g of
// S's at words t and 4 + t of the tile (b1_mma.cuh's layout), so the warp reads each word once.
// Classes start at whole tiles (their padding bits are 0), so a tile is one class's. The
// counts' terms are the same integers as score_pass_kernel's: the sums are equal bitwise.
constexpr int kPlaneTileWords = 8;

// Bit planes of rows of codes (features, or S as its one row): word w of row r holds, for each
// level a < levels_pad, which of the 32 samples of that word have code a. A warp a word.
template <class Code>
__global__ void __launch_bounds__(kThreads) planes_kernel(const Code* codes, int64_t row_stride, int64_t n_rows,
                                                          PlaneLayout planes, uint32_t* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  const int64_t tasks = n_rows * planes.words;
  for (int64_t task = blockIdx.x * int64_t(kThreads / 32) + threadIdx.x / 32; task < tasks; task += warps) {
    const int64_t row = task / planes.words;
    const int32_t w = static_cast<int32_t>(task % planes.words);
    int32_t lo = 0, hi = planes.n_classes - 1;  // the class of word w: the last whose first word is <= w
    while (lo < hi) {
      const int32_t mid = (lo + hi + 1) / 2;
      if (planes.class_words[mid] <= w) lo = mid; else hi = mid - 1;
    }
    const int32_t p = planes.class_start[lo] + (w - planes.class_words[lo]) * 32 + lane;
    const uint32_t code = p < planes.class_start[lo + 1] ? static_cast<uint32_t>(codes[row * row_stride + p]) : ~0u;
    uint32_t mine = 0;
    for (int a = 0; a < planes.levels; ++a) {
      const uint32_t bits = __ballot_sync(0xffffffffu, code == static_cast<uint32_t>(a));
      if (lane == a) mine = bits;
    }
    if (lane < planes.levels) out[(row * planes.words + w) * planes.levels + lane] = mine;
  }
}

// A warp takes one feature at a time (8 a block): 16 rows of X's planes (levels 0..15) against
// NT tiles of 8 columns of S's.
template <int NT>
__global__ void __launch_bounds__(kThreads) plane_counts_kernel(FeatureBlockView block, StepView step) {
  constexpr int kCells = NT * 4;  // counters a lane holds
  constexpr int LX = 16, LS = 8 * NT;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  const PlaneLayout& planes = step.planes;
  const uint32_t* s_planes = step.s_planes;
  for (int64_t lf = blockIdx.x * int64_t(kThreads / 32) + threadIdx.x / 32; lf < block.n_features; lf += warps) {
    const int64_t f = block.first + lf;
    if (step.retired[f]) continue;  // the same for the whole warp
    const uint32_t* x_planes = block.planes + lf * planes.words * LX;
    int64_t xsy = 0, xs = 0;     // the lane's parts of the sums (criteria.h)
    uint32_t n_xs[kCells] = {};  // the lane's n(x, s), summed over the classes
    for (int32_t c = 0; c < step.n_classes; ++c) {
      int32_t acc[NT][4] = {};
#pragma unroll 4  // several tiles' loads in flight
      for (int32_t w0 = planes.class_words[c]; w0 < planes.class_words[c + 1]; w0 += kPlaneTileWords) {
        const uint32_t* xa = x_planes + static_cast<int64_t>(w0 + t) * LX + g;
        const uint32_t* xb = xa + 4 * LX;
        const uint32_t* sa = s_planes + static_cast<int64_t>(w0 + t) * LS + g;
        const uint32_t* sb = sa + 4 * LS;
        const uint32_t a[4] = {__ldg(xa), __ldg(xa + 8), __ldg(xb), __ldg(xb + 8)};
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          const uint32_t b[2] = {__ldg(sa + 8 * n), __ldg(sb + 8 * n)};
          b1_mma_and_popc(acc[n], a, b);
        }
      }
      // The class's n(x, s, y): each cell is held by one lane, at the same place in every class.
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const uint32_t v = static_cast<uint32_t>(acc[n][i]);
          if (v) xsy += step.plogp[v];
          n_xs[n * 4 + i] += v;
        }
    }
#pragma unroll
    for (int i = 0; i < kCells; ++i)
      if (n_xs[i]) xs += step.plogp[n_xs[i]];
    for (int offset = 16; offset > 0; offset /= 2) {
      xsy += __shfl_down_sync(0xffffffffu, xsy, offset);
      xs += __shfl_down_sync(0xffffffffu, xs, offset);
    }
    if (lane == 0) update_feature(step.rule, xsy, xs, step.state[f]);
  }
}

__global__ void narrow_codes_kernel(const uint32_t* s_codes, int32_t n, int32_t padded, uint8_t* out) {
  for (int32_t i = blockIdx.x * kThreads + threadIdx.x; i < padded; i += gridDim.x * kThreads)
    out[i] = i < n ? static_cast<uint8_t>(s_codes[i]) : 0xFF;
}

// A feature's codes widened to S's 32-bit codes (and bytes when s_codes8 is not null): dense
// rows read as they lie, sparse ones over a fill of the base code.
template <class Code>
__global__ void widen_codes_kernel(const Code* row, int32_t n, int32_t padded, uint32_t* s_codes, uint8_t* s_codes8) {
  for (int32_t i = blockIdx.x * kThreads + threadIdx.x; i < padded; i += gridDim.x * kThreads) {
    const uint32_t v = i < n ? row[i] : 0xFFu;
    if (i < n) s_codes[i] = v;
    if (s_codes8) s_codes8[i] = static_cast<uint8_t>(v);
  }
}

__global__ void fill_codes_kernel(uint32_t* s_codes, int32_t n, uint32_t value) {
  for (int32_t i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads) s_codes[i] = value;
}

template <class Code>
__global__ void scatter_codes_kernel(const Code* codes, const int32_t* rows, int64_t n_entries, uint32_t* s_codes) {
  for (int64_t e = blockIdx.x * int64_t(kThreads) + threadIdx.x; e < n_entries; e += int64_t(gridDim.x) * kThreads)
    s_codes[rows[e]] = codes[e];
}

// n(s, y): in a block's shared table when `in_shared` (few cells), else straight into global memory.
__global__ void class_counts_kernel(const uint32_t* s_codes, const int32_t* class_of, int32_t n, int32_t levels,
                                    int32_t cells, bool in_shared, uint32_t* class_counts) {
  extern __shared__ uint32_t table[];
  if (in_shared) {
    for (int32_t c = threadIdx.x; c < cells; c += kThreads) table[c] = 0;
    __syncthreads();
  }
  uint32_t* counts = in_shared ? table : class_counts;
  for (int32_t i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
    atomicAdd(&counts[class_of[i] * levels + static_cast<int32_t>(s_codes[i])], 1u);
  if (!in_shared) return;
  __syncthreads();
  for (int32_t c = threadIdx.x; c < cells; c += kThreads)
    if (table[c]) atomicAdd(&class_counts[c], table[c]);
}

__device__ __forceinline__ bool better(const DeviceCandidate& a, const DeviceCandidate& b) {
  if (a.feature < 0) return false;
  if (b.feature < 0) return true;
  return a.key > b.key || (a.key == b.key && a.feature < b.feature);
}

__device__ __forceinline__ void reduce_best(DeviceCandidate mine, DeviceCandidate* out) {
  __shared__ DeviceCandidate best[kThreads];
  best[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride && better(best[threadIdx.x + stride], best[threadIdx.x]))
      best[threadIdx.x] = best[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = best[0];
}

__global__ void best_partial_kernel(const FeatureState* state, const uint8_t* retired, int64_t n,
                                    DeviceCandidate* partial) {
  DeviceCandidate mine{0, -1};
  for (int64_t f = blockIdx.x * int64_t(kThreads) + threadIdx.x; f < n; f += int64_t(gridDim.x) * kThreads) {
    DeviceCandidate c{state[f].key, f};
    if (!retired[f] && better(c, mine)) mine = c;
  }
  reduce_best(mine, partial + blockIdx.x);
}

__global__ void best_final_kernel(const DeviceCandidate* partial, int n_partial, DeviceCandidate* out) {
  DeviceCandidate mine{0, -1};
  for (int i = threadIdx.x; i < n_partial; i += kThreads)
    if (better(partial[i], mine)) mine = partial[i];
  reduce_best(mine, out);
}

}  // namespace

using CountKernel = void (*)(FeatureBlockView, StepView, uint32_t*, size_t);
// The counting kernel for 8- or 16-bit codes.
static CountKernel count_kernel(bool wide) {
  return wide ? score_pass_kernel<uint16_t> : score_pass_kernel<uint8_t>;
}

using PlaneKernel = void (*)(FeatureBlockView, StepView);
// The bit-plane kernel for S's planes, or null where the block or S has none.
static PlaneKernel plane_kernel(const FeatureBlockView& block, const StepView& step) {
  if (!block.planes || !step.s_planes) return nullptr;
  return step.s_plane_levels == 8 ? plane_counts_kernel<1> : plane_counts_kernel<2>;
}

CountLayout plan_counts(const FeatureBlockView& block, const StepView& step, int device) {
  CountLayout layout;
  int major = 0, multiprocessors = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  if (const PlaneKernel kernel = major >= 8 ? plane_kernel(block, step) : nullptr) {
    int per_sm = 0;
    FSGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
    per_sm = std::max(per_sm, 1);
    if (block.n_features >= int64_t(kPlaneFeaturesPerSM) * multiprocessors) {
      layout.plane_grid = static_cast<int>(std::min<int64_t>((block.n_features + kThreads / 32 - 1) / (kThreads / 32),
                                                             int64_t(per_sm) * multiprocessors));
      return layout;
    }
  }
  const size_t cells = static_cast<size_t>(block.max_levels) * step.s_levels;
  layout.words = 2 * cells + 2 * static_cast<size_t>(step.s_levels) + step.n_classes + 1;
  int shared_limit = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t bytes = layout.words * sizeof(uint32_t);
  const size_t static_bytes = (kThreads / 32 + kPlogpCached) * sizeof(int64_t) + 1024;
  const bool in_shared = bytes + static_bytes <= static_cast<size_t>(shared_limit);
  layout.shared_bytes = in_shared ? bytes : 0;
  auto kernel = count_kernel(block.wide);
  allow_dynamic_shared(kernel);
  int per_sm = 0;
  FSGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, layout.shared_bytes));
  layout.grid = static_cast<int>(std::min<int64_t>(block.n_features, int64_t(std::max(per_sm, 1)) * multiprocessors));
  if (!in_shared) {  // tables in global memory (CMI's many joint states): up to a quarter of what is free
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t affordable = static_cast<int64_t>(std::max<size_t>(free_bytes / 4, size_t(1) << 30) / bytes);
    layout.grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(layout.grid, affordable)));
  }
  return layout;
}

void launch_score_pass(const FeatureBlockView& block, const StepView& step, const CountLayout& layout,
                                uint32_t* global_scratch, cudaStream_t stream, const SideStream& side) {
  if (block.n_features == 0) return;
  if (layout.plane_grid) {
    plane_kernel(block, step)<<<layout.plane_grid, kThreads, 0, stream>>>(block, step);
    check_launch("plane_counts_kernel");
    return;
  }
  uint32_t* scratch = layout.shared_bytes ? nullptr : global_scratch;
  const CountKernel kernel = count_kernel(block.wide);
  allow_dynamic_shared(kernel);
  // The two kernels take disjoint features; the large ones' blocks start first.
  const bool beside = block.entry_start && side.stream;
  if (beside) FSGPU_CUDA_CHECK(cudaEventRecord(side.fork, stream));
  kernel<<<layout.grid, kThreads, layout.shared_bytes, stream>>>(block, step, scratch, layout.words);
  check_launch("score_pass_kernel");
  if (block.entry_start) {
    const int grid = static_cast<int>(std::min<int64_t>((block.n_features + kThreads / 32 - 1) / (kThreads / 32), 65535));
    cudaStream_t small_stream = beside ? side.stream : stream;
    if (beside) FSGPU_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork, 0));
    small_features_kernel<<<grid, kThreads, 0, small_stream>>>(block, step);
    check_launch("small_features_kernel");
    if (beside) {
      FSGPU_CUDA_CHECK(cudaEventRecord(side.join, side.stream));
      FSGPU_CUDA_CHECK(cudaStreamWaitEvent(stream, side.join, 0));
    }
  }
}

void launch_narrow_codes(const uint32_t* s_codes, int32_t n_samples, uint8_t* out, cudaStream_t stream) {
  const int32_t padded = (n_samples + 15) / 16 * 16;
  narrow_codes_kernel<<<std::min(1024, (padded + kThreads - 1) / kThreads), kThreads, 0, stream>>>(s_codes, n_samples,
                                                                                                   padded, out);
  check_launch("narrow_codes_kernel");
}

void launch_condition(const FeatureBlockView& block, int64_t lf, int64_t entry_begin, int64_t n_entries, uint16_t base,
                      int32_t levels, const int32_t* class_of, int32_t n_classes, int32_t n_samples, uint32_t* s_codes,
                      uint8_t* s_codes8, uint32_t* class_counts, cudaStream_t stream) {
  const int32_t padded = (n_samples + 15) / 16 * 16;
  const int grid = std::min(1024, (padded + kThreads - 1) / kThreads);
  if (block.entry_start) {
    fill_codes_kernel<<<grid, kThreads, 0, stream>>>(s_codes, n_samples, base);
    check_launch("fill_codes_kernel");
    if (n_entries) {
      const int entry_grid = static_cast<int>(std::min<int64_t>(1024, (n_entries + kThreads - 1) / kThreads));
      if (block.wide)
        scatter_codes_kernel<<<entry_grid, kThreads, 0, stream>>>(static_cast<const uint16_t*>(block.codes) + entry_begin,
                                                                  block.entry_row + entry_begin, n_entries, s_codes);
      else
        scatter_codes_kernel<<<entry_grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(block.codes) + entry_begin,
                                                                  block.entry_row + entry_begin, n_entries, s_codes);
      check_launch("scatter_codes_kernel");
    }
  } else {
    const int64_t at = lf * block.row_stride;
    if (block.wide)
      widen_codes_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const uint16_t*>(block.codes) + at, n_samples,
                                                        padded, s_codes, s_codes8);
    else
      widen_codes_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(block.codes) + at, n_samples,
                                                        padded, s_codes, s_codes8);
    check_launch("widen_codes_kernel");
  }
  const int32_t cells = n_classes * levels;
  FSGPU_CUDA_CHECK(cudaMemsetAsync(class_counts, 0, static_cast<size_t>(cells) * sizeof(uint32_t), stream));
  constexpr int32_t kSharedCells = 8192;  // 32 kB: within every device's default dynamic shared memory
  const bool in_shared = cells <= kSharedCells;
  class_counts_kernel<<<std::min(grid, 264), kThreads, in_shared ? cells * sizeof(uint32_t) : 0, stream>>>(
      s_codes, class_of, n_samples, levels, cells, in_shared, class_counts);
  check_launch("class_counts_kernel");
}

void launch_planes(const uint8_t* codes, int64_t row_stride, int64_t n_rows, const PlaneLayout& planes, uint32_t* out,
                   cudaStream_t stream) {
  const int64_t blocks = (n_rows * planes.words + kThreads / 32 - 1) / (kThreads / 32);
  planes_kernel<<<static_cast<int>(std::min<int64_t>(blocks, 65535)), kThreads, 0, stream>>>(codes, row_stride, n_rows,
                                                                                           planes, out);
  check_launch("planes_kernel");
}

void launch_planes(const uint32_t* codes, const PlaneLayout& planes, uint32_t* out, cudaStream_t stream) {
  const int64_t blocks = (planes.words + kThreads / 32 - 1) / (kThreads / 32);
  planes_kernel<<<static_cast<int>(std::min<int64_t>(blocks, 65535)), kThreads, 0, stream>>>(codes, 0, 1, planes, out);
  check_launch("planes_kernel");
}

void launch_best_candidate(const FeatureState* state, const uint8_t* retired, int64_t n, DeviceCandidate* partial,
                           int n_partial, DeviceCandidate* out, cudaStream_t stream) {
  best_partial_kernel<<<n_partial, kThreads, 0, stream>>>(state, retired, n, partial);
  check_launch("best_partial_kernel");
  best_final_kernel<<<1, kThreads, 0, stream>>>(partial, n_partial, out);
  check_launch("best_final_kernel");
}

}  // namespace fsgpu
