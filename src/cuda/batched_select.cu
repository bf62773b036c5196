// Many selections on subsamples of one data set at once (stability selection, issue 20).
//
// The code matrix goes to the device once, as the selection engine holds it. A subsample is a
// vector of 0/1 weights over the class-sorted positions; every subsample has its own feature
// states, retired flags and newest selected feature S_r. A step of all subsamples is three
// launches: prepare_kernel (a block a subsample: retires S_r, spreads S_r's codes over the
// positions with kAbsent outside the subsample, and counts n(s, y) and n(s) in the subsample),
// count_kernel (a block a feature, a warp a (feature, subsample) pair; for dense data of few
// samples and levels, dense_count_kernel, and for sparse features of few entries,
// sparse_lane_kernel, a thread a pair: the sums
//   xsy = sum plogp(n(x,s,y)),  xs = sum plogp(n(x,s))
// over the subsample, then update_feature() of criteria.h, as the engines call it) and
// best_kernel (a block a subsample: highest key, lowest index). Only the winners come back.
//
// The sums are the same integers as joint_sums()' on the subsample's own codes: counts do not
// depend on the sample order or on classes missing from the subsample (their cells are 0, and
// plogp(0) = 0), and the table of terms is the same for every N. So keys, ties and selections are
// bitwise the CPU engine's.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "core/joint_counts.h"
#include "cuda_check.cuh"
#include "joint_counts.cuh"
#include "sorted_rows.cuh"

namespace fsgpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kPlogpCached = 1024;
constexpr uint16_t kAbsent = 0xFFFF;  // S's code at a position outside the subsample: no code reaches it
constexpr int64_t kNone = -1;         // S of the relevance pass: one state
constexpr int64_t kDone = -2;         // the subsample's selection has ended
constexpr int kStageWords = 64;       // per warp: up to 32 entries' (x, s) cells and classes
constexpr int kDenseThreads = 128;    // dense_count_kernel: a thread a subsample

// Everything the kernels read, on the device.
struct BatchView {
  const void* codes = nullptr;          // uint8_t or uint16_t: dense [f * n_samples + position], or sparse entries
  bool sparse = false;
  const int64_t* entry_start = nullptr; // sparse
  const int32_t* entry_row = nullptr;   // sparse: class-sorted positions, ascending
  const uint16_t* levels = nullptr;
  const uint16_t* base = nullptr;       // sparse: the code of the unstored entries
  int64_t n_features = 0;
  int32_t n_samples = 0, n_classes = 0;
  const int32_t* class_start = nullptr;
  const int32_t* class_of = nullptr;
  const int64_t* plogp = nullptr;
  int32_t n_resamples = 0;
  int32_t s_stride = 1;                 // cells of S per class in the tables: the most levels of any feature
  int32_t max_levels = 1;
  int32_t table_words = 0;              // per warp in count_kernel
  const uint8_t* member = nullptr;      // [r * n_samples + position]: 1 in subsample r
  const int32_t* size = nullptr;        // [r]: samples in subsample r
  const int64_t* s_feature = nullptr;   // [r]: S_r, kNone or kDone
  uint16_t* s_codes = nullptr;          // [r * n_samples + position]
  uint16_t* s_codes_t = nullptr;        // the same, [position * n_resamples + r] (dense_count_kernel)
  uint32_t* s_class_counts = nullptr;   // [(r * n_classes + y) * s_stride + s]: n(s, y)
  uint32_t* s_counts = nullptr;         // [r * s_stride + s]: n(s)
  StepRule* rules = nullptr;            // [r]: s_terms and s_class_terms filled in by prepare_kernel
  uint8_t* retired = nullptr;           // [r * n_features + f]
  FeatureState* state = nullptr;        // [r * n_features + f]
  DeviceCandidate* best = nullptr;      // [r]
  const int64_t* warp_features = nullptr;  // count_kernel's features (sparse), or null: all
  int64_t n_warp_features = 0;
  const int64_t* lane_features = nullptr;  // sparse_lane_kernel's
  int64_t n_lane_features = 0;
};

template <class Code>
__global__ void __launch_bounds__(kThreads) prepare_kernel(BatchView v, bool pass) {
  const int32_t r = blockIdx.x;
  const int64_t s = v.s_feature[r];
  if (s == kDone) return;
  if (s >= 0 && threadIdx.x == 0) v.retired[r * v.n_features + s] = 1;
  if (!pass) return;  // MIM after its first step: nothing is counted
  const int32_t n = v.n_samples;
  const uint8_t* member = v.member + int64_t(r) * n;
  uint16_t* sc = v.s_codes + int64_t(r) * n;
  const Code* codes = static_cast<const Code*>(v.codes);
  for (int32_t i = threadIdx.x; i < n; i += kThreads) {
    uint16_t code = kAbsent;
    if (member[i]) code = s < 0 ? 0 : v.sparse ? v.base[s] : codes[s * n + i];
    sc[i] = code;
    if (v.s_codes_t) v.s_codes_t[int64_t(i) * v.n_resamples + r] = code;
  }
  uint32_t* sy = v.s_class_counts + int64_t(r) * v.n_classes * v.s_stride;
  uint32_t* sn = v.s_counts + int64_t(r) * v.s_stride;
  for (int32_t i = threadIdx.x; i < v.n_classes * v.s_stride; i += kThreads) sy[i] = 0;
  for (int32_t i = threadIdx.x; i < v.s_stride; i += kThreads) sn[i] = 0;
  __syncthreads();
  if (s >= 0 && v.sparse) {
    for (int64_t e = v.entry_start[s] + threadIdx.x; e < v.entry_start[s + 1]; e += kThreads) {
      const int32_t row = v.entry_row[e];
      if (!member[row]) continue;
      sc[row] = codes[e];
      if (v.s_codes_t) v.s_codes_t[int64_t(row) * v.n_resamples + r] = codes[e];
    }
    __syncthreads();
  }
  for (int32_t i = threadIdx.x; i < n; i += kThreads) {
    const uint16_t code = sc[i];
    if (code == kAbsent) continue;
    atomicAdd(&sy[v.class_of[i] * v.s_stride + code], 1u);
    atomicAdd(&sn[code], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // S's own sums, as Conditioning has them (total_term, all_class_terms())
    const int32_t ls = s < 0 ? 1 : v.levels[s];
    int64_t s_terms = 0, s_class_terms = 0;
    for (int32_t a = 0; a < ls; ++a) s_terms += v.plogp[sn[a]];
    for (int32_t i = 0; i < v.n_classes; ++i)
      for (int32_t a = 0; a < ls; ++a) s_class_terms += v.plogp[sy[i * v.s_stride + a]];
    v.rules[r].s_terms = s_terms;
    v.rules[r].s_class_terms = s_class_terms;
  }
}

// The sum over the warp, in every lane.
__device__ __forceinline__ int64_t warp_sum(int64_t x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// One (feature, subsample) pair, a warp. `tables` are the warp's: n(x,s) of a class, n(x,s)
// over the classes, the counted n(s,y) of a class and the counted n(s) (sparse), then the stage;
// all zero between pairs. Sparse features start from S's own sums for the unstored (base)
// entries' cells and correct them where entries fell, as joint_sums() does.
template <class Code>
__device__ void pair_sums(const BatchView& v, int64_t f, int32_t r, const int32_t* bounds, const int64_t* plogp_small,
                          int32_t n_cached, uint32_t* tables, int64_t& xsy_out, int64_t& xs_out) {
  const int lane = threadIdx.x % 32;
  auto plogp = [&](uint32_t n) { return n < static_cast<uint32_t>(n_cached) ? plogp_small[n] : v.plogp[n]; };
  const bool sparse = v.sparse;
  const int64_t begin = sparse ? v.entry_start[f] : f * v.n_samples;
  const int32_t n_entries = sparse ? static_cast<int32_t>(v.entry_start[f + 1] - begin) : v.n_samples;
  const Code* codes = static_cast<const Code*>(v.codes) + begin;
  const int32_t* rows = sparse ? v.entry_row + begin : nullptr;
  const uint16_t* sc = v.s_codes + int64_t(r) * v.n_samples;
  const int64_t s_feature = v.s_feature[r];
  const int32_t ls = s_feature < 0 ? 1 : v.levels[s_feature];
  const uint16_t base = v.base[f];
  const uint32_t* sy_counts = v.s_class_counts + int64_t(r) * v.n_classes * v.s_stride;
  const uint32_t* s_counts = v.s_counts + int64_t(r) * v.s_stride;
  const int32_t max_cells = v.max_levels * v.s_stride;
  uint32_t* n_xsy = tables;
  uint32_t* n_xs = n_xsy + max_cells;
  uint32_t* counted_sy = n_xs + max_cells;
  uint32_t* counted_s = counted_sy + v.s_stride;
  uint32_t* stage = counted_s + v.s_stride;
  // The (x, s) cell of entry e, or -1 when it is not counted (outside the subsample; sparse: the base code).
  auto cell_of = [&](int32_t e, int32_t& s) -> int32_t {
    s = sc[sparse ? rows[e] : e];
    if (s == kAbsent) return -1;
    const uint16_t x = codes[e];
    if (sparse && x == base) return -1;
    return static_cast<int32_t>(x) * ls + s;
  };
  const StepRule& rule = v.rules[r];
  int64_t xsy = 0, xs = 0;
  if (sparse && lane == 0) {
    xsy = rule.s_class_terms;
    xs = rule.s_terms;
  }

  // At most 32 counted entries (most sparse features): each cell's count is one
  // __match_any_sync over the warp, no tables.
  int32_t staged = 0;
  bool few = sparse || v.size[r] <= 32;  // a dense feature counts every sample of the subsample
  for (int32_t e0 = 0; e0 < n_entries && few; e0 += 32) {
    const int32_t e = e0 + lane;
    int32_t s = 0, cell = -1;
    if (e < n_entries) cell = cell_of(e, s);
    const uint32_t taken = __ballot_sync(0xffffffffu, cell >= 0);
    if (staged + __popc(taken) > 32) {
      few = false;
    } else if (cell >= 0) {
      const int at = staged + __popc(taken & ((1u << lane) - 1));
      stage[at] = static_cast<uint32_t>(cell);
      stage[32 + at] = static_cast<uint32_t>(v.class_of[sparse ? rows[e] : e]);
    }
    staged += __popc(taken);
  }
  __syncwarp();
  if (few) {
    if (lane < staged) {
      const unsigned on = (staged == 32 ? 0xffffffffu : (1u << staged) - 1);
      const uint32_t cell = stage[lane], y = stage[32 + lane];
      const uint32_t s = cell % ls;
      const unsigned below = (1u << lane) - 1;
      unsigned m = __match_any_sync(on, static_cast<unsigned long long>(cell) * v.n_classes + y);
      if (!(m & below)) xsy += plogp(__popc(m));
      m = __match_any_sync(on, cell);
      if (!(m & below)) xs += plogp(__popc(m));
      if (sparse) {
        m = __match_any_sync(on, y * ls + s);
        const uint32_t n_sy = sy_counts[y * v.s_stride + s];
        if (!(m & below)) xsy += plogp(n_sy - __popc(m)) - plogp(n_sy);
        m = __match_any_sync(on, s);
        if (!(m & below)) xs += plogp(s_counts[s] - __popc(m)) - plogp(s_counts[s]);
      }
    }
    __syncwarp();
    xsy_out = warp_sum(xsy);
    xs_out = warp_sum(xs);
    return;
  }

  // Tables, class by class (bounds: the feature's entries of each class), drained by revisiting
  // the entries when they are far fewer than the cells, else by a scan; as joint_sums().
  const int32_t cells = static_cast<int32_t>(v.levels[f]) * ls;
  for (int32_t c = 0; c < v.n_classes; ++c) {
    const int32_t first = bounds[c], last = bounds[c + 1];
    if (first == last) continue;  // nothing counted: sparse base cells are S's own, already in xsy
    for (int32_t e = first + lane; e < last; e += 32) {
      int32_t s;
      const int32_t cell = cell_of(e, s);
      if (cell >= 0) atomicAdd(&n_xsy[cell], 1u);
    }
    __syncwarp();
    if (int64_t(kTouchRatio) * (last - first) < cells) {
      for (int32_t e = first + lane; e < last; e += 32) {
        int32_t s;
        const int32_t cell = cell_of(e, s);
        if (cell < 0) continue;
        const uint32_t n = atomicExch(&n_xsy[cell], 0u);
        if (!n) continue;
        xsy += plogp(n);
        n_xs[cell] += n;  // only the lane that drained this cell gets here
        if (sparse) atomicAdd(&counted_sy[s], n);
      }
    } else {
      for (int32_t cell = lane; cell < cells; cell += 32) {
        const uint32_t n = n_xsy[cell];
        if (!n) continue;
        n_xsy[cell] = 0;
        xsy += plogp(n);
        n_xs[cell] += n;
        if (sparse) atomicAdd(&counted_sy[cell % ls], n);
      }
    }
    __syncwarp();
    if (sparse) {  // the base code's cells of class c: n(s, c) less what was counted
      const uint32_t* n_sc = sy_counts + int64_t(c) * v.s_stride;
      for (int32_t e = first + lane; e < last; e += 32) {
        int32_t s;
        if (cell_of(e, s) < 0) continue;
        const uint32_t n = atomicExch(&counted_sy[s], 0u);
        if (!n) continue;
        xsy += plogp(n_sc[s] - n) - plogp(n_sc[s]);
        atomicAdd(&counted_s[s], n);
      }
      __syncwarp();
    }
  }
  if (int64_t(kTouchRatio) * n_entries < cells) {
    for (int32_t e = lane; e < n_entries; e += 32) {
      int32_t s;
      const int32_t cell = cell_of(e, s);
      if (cell < 0) continue;
      const uint32_t n = atomicExch(&n_xs[cell], 0u);
      if (n) xs += plogp(n);
    }
  } else {
    for (int32_t cell = lane; cell < cells; cell += 32) {
      const uint32_t n = n_xs[cell];
      if (!n) continue;
      n_xs[cell] = 0;
      xs += plogp(n);
    }
  }
  __syncwarp();
  if (sparse) {
    for (int32_t e = lane; e < n_entries; e += 32) {
      int32_t s;
      if (cell_of(e, s) < 0) continue;
      const uint32_t n = atomicExch(&counted_s[s], 0u);
      if (n) xs += plogp(s_counts[s] - n) - plogp(s_counts[s]);
    }
    __syncwarp();
  }
  xsy_out = warp_sum(xsy);
  xs_out = warp_sum(xs);
}

// The table's first terms (counts up to N, at most kPlogpCached) copied to `small` by the
// block's threads; returns how many. The caller synchronises before reading them.
__device__ __forceinline__ int32_t cache_plogp(const BatchView& v, int64_t* small, int threads) {
  const int32_t n_cached = min(kPlogpCached, v.n_samples + 1);
  for (int32_t i = threadIdx.x; i < n_cached; i += threads) small[i] = v.plogp[i];
  return n_cached;
}

template <class Code>
__global__ void __launch_bounds__(kThreads) count_kernel(BatchView v) {
  extern __shared__ uint32_t shared[];
  __shared__ int64_t plogp_small[kPlogpCached];
  const int32_t n_cached = cache_plogp(v, plogp_small, kThreads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int32_t* bounds = reinterpret_cast<int32_t*>(shared);
  uint32_t* tables = shared + (v.n_classes + 4) / 4 * 4 + warp * v.table_words;
  for (int32_t i = lane; i < v.table_words; i += 32) tables[i] = 0;
  const int64_t n_features = v.warp_features ? v.n_warp_features : v.n_features;
  for (int64_t i = blockIdx.x; i < n_features; i += gridDim.x) {
    const int64_t f = v.warp_features ? v.warp_features[i] : i;
    __syncthreads();  // every warp is done with the previous feature's bounds
    if (v.sparse) {
      const int64_t begin = v.entry_start[f];
      const int32_t n = static_cast<int32_t>(v.entry_start[f + 1] - begin);
      for (int32_t c = threadIdx.x; c <= v.n_classes; c += kThreads)
        bounds[c] = first_row_at_least(v.entry_row + begin, n, v.class_start[c]);
    } else {
      for (int32_t c = threadIdx.x; c <= v.n_classes; c += kThreads) bounds[c] = v.class_start[c];
    }
    __syncthreads();
    // The warp's t-th pair is updated by lane t % 32, 32 pairs at a time, side by side.
    int32_t mine = -1, t = 0;
    int64_t mine_xsy = 0, mine_xs = 0;
    auto flush = [&] {
      if (mine >= 0) update_feature(v.rules[mine], mine_xsy, mine_xs, v.state[mine * v.n_features + f]);
      mine = -1;
    };
    for (int32_t r = warp; r < v.n_resamples; r += kWarps) {
      if (v.s_feature[r] == kDone || v.retired[r * v.n_features + f]) continue;  // the same for the whole warp
      int64_t xsy, xs;
      pair_sums<Code>(v, f, r, bounds, plogp_small, n_cached, tables, xsy, xs);
      if (lane == t % 32) {
        mine = r;
        mine_xsy = xsy;
        mine_xs = xs;
      }
      if (++t % 32 == 0) flush();
    }
    flush();
  }
}

// Sparse features of at most kLaneEntries entries (most of a text matrix): a thread a (feature,
// subsample) pair, with no atomics and no barriers between pairs. The block stages the feature's
// counted entries once for all subsamples, ordered by (class, code), and their order by code.
// Each thread gathers S_r's codes at those rows into its own column of `stash`, then walks the
// groups of equal (class, code), of a class, and of equal code, counting its S codes in its own
// columns of three tables and draining them at each group's end: the cells, and so the integer
// sums, of pair_sums(), base cells included.
constexpr int kLaneThreads = 128;
constexpr int kLaneEntries = 64;       // a thread stages at most one entry
constexpr uint8_t kLaneAbsent = 0xFF;  // stash: outside the subsample (S has at most 255 levels here)
// Where an ordered entry stands in its groups (of a class; of equal code within it, or in order b).
constexpr uint8_t kStartsClass = 1, kStartsCode = 2, kEndsClass = 4, kEndsCode = 8;
constexpr uint8_t kLoneClass = kStartsClass | kEndsClass, kLoneCode = kStartsCode | kEndsCode;
static_assert(kLaneEntries <= kLaneThreads && kLaneEntries <= 256, "one staged entry a thread, orders in bytes");

// sparse_lane_kernel's dynamic shared memory: three tables of s_stride 16-bit counts a thread,
// the stash (a byte an entry a thread), the staged entries as read and as ordered. Small, for
// many blocks a multiprocessor: the kernel waits on shared memory more than it computes.
size_t lane_shared_bytes(int32_t s_stride) {
  return (size_t(3) * s_stride * kLaneThreads * 2 + 3) / 4 * 4 + size_t(kLaneEntries) * kLaneThreads +
         size_t(kLaneEntries) * 23;
}

template <class Code>
__global__ void __launch_bounds__(kLaneThreads) sparse_lane_kernel(BatchView v) {
  extern __shared__ uint32_t lane_shared[];
  __shared__ int64_t plogp_small[kPlogpCached];
  const int32_t n_cached = cache_plogp(v, plogp_small, kLaneThreads);
  auto plogp = [&](uint32_t n) { return n < static_cast<uint32_t>(n_cached) ? plogp_small[n] : v.plogp[n]; };
  const int32_t t = threadIdx.x, stride = v.s_stride;
  // This thread's columns ([s * kLaneThreads]): n(x, s, y) of a (class, code) group, the counted
  // n(s, y) of a class, the counted n(s); zero between groups.
  uint16_t* cell_counts = reinterpret_cast<uint16_t*>(lane_shared) + t;
  uint16_t* class_counts = cell_counts + stride * kLaneThreads;
  uint16_t* s_counted = class_counts + stride * kLaneThreads;
  uint8_t* stash_all = reinterpret_cast<uint8_t*>(lane_shared + (3 * stride * kLaneThreads + 1) / 2);
  uint8_t* stash = stash_all + t;  // [e * kLaneThreads]: S_r's code at ordered entry e
  int32_t* raw_row = reinterpret_cast<int32_t*>(stash_all + kLaneEntries * kLaneThreads);
  int32_t* raw_y = raw_row + kLaneEntries;  // -1: not counted (the base code)
  int32_t* row_a = raw_y + kLaneEntries;    // by (class, code, position)
  int32_t* y_a = row_a + kLaneEntries;
  uint16_t* raw_x = reinterpret_cast<uint16_t*>(y_a + kLaneEntries);
  uint16_t* x_a = raw_x + kLaneEntries;
  uint8_t* order_b = reinterpret_cast<uint8_t*>(x_a + kLaneEntries);  // by (code, position): indices into _a
  uint8_t* flags_a = order_b + kLaneEntries;
  uint8_t* flags_b = flags_a + kLaneEntries;
  for (int32_t s = 0; s < 3 * stride; ++s) cell_counts[s * kLaneThreads] = 0;
  const Code* codes = static_cast<const Code*>(v.codes);
  for (int64_t i = blockIdx.x; i < v.n_lane_features; i += gridDim.x) {
    const int64_t f = v.lane_features[i];
    const int64_t begin = v.entry_start[f];
    const int32_t n_raw = static_cast<int32_t>(v.entry_start[f + 1] - begin);
    __syncthreads();  // every thread is done with the previous feature's entries
    bool keep = false;
    int32_t row = 0, y = -1;
    uint16_t x = 0;
    if (t < n_raw) {
      row = v.entry_row[begin + t];
      x = codes[begin + t];
      keep = x != v.base[f];
      if (keep) y = v.class_of[row];
      raw_row[t] = row;
      raw_x[t] = x;
      raw_y[t] = y;
    }
    const int32_t m = __syncthreads_count(keep);
    if (keep) {  // ranks in both orders (positions ascend, so ties keep them in order)
      int32_t rank_a = 0, rank_b = 0;
      for (int32_t j = 0; j < n_raw; ++j) {
        const int32_t yj = raw_y[j];
        if (yj < 0) continue;
        const uint16_t xj = raw_x[j];
        const bool before = xj < x || (xj == x && j < t);
        rank_a += yj < y || (yj == y && before);
        rank_b += before;
      }
      row_a[rank_a] = row;
      y_a[rank_a] = y;
      x_a[rank_a] = x;
      order_b[rank_b] = static_cast<uint8_t>(rank_a);
    }
    __syncthreads();
    if (t < m) {
      const bool last = t == m - 1;
      flags_a[t] = (t == 0 || y_a[t] != y_a[t - 1] ? kStartsClass | kStartsCode : x_a[t] != x_a[t - 1] ? kStartsCode : 0) |
                   (last || y_a[t + 1] != y_a[t] ? kEndsClass | kEndsCode : x_a[t + 1] != x_a[t] ? kEndsCode : 0);
      const uint16_t code = x_a[order_b[t]];
      flags_b[t] = (t == 0 || x_a[order_b[t - 1]] != code ? kStartsCode : 0) |
                   (last || x_a[order_b[t + 1]] != code ? kEndsCode : 0);
    }
    __syncthreads();
    for (int32_t r = t; r < v.n_resamples; r += kLaneThreads) {
      if (v.s_feature[r] == kDone || v.retired[r * v.n_features + f]) continue;
      const uint16_t* sc = v.s_codes_t + r;
#pragma unroll 8
      for (int32_t e = 0; e < m; ++e) {  // independent loads: unrolled, several in flight
        const uint16_t s = sc[static_cast<int64_t>(row_a[e]) * v.n_resamples];
        stash[e * kLaneThreads] = s == kAbsent ? kLaneAbsent : static_cast<uint8_t>(s);
      }
      const StepRule& rule = v.rules[r];
      int64_t xsy = rule.s_class_terms, xs = rule.s_terms;  // every entry in the base cells, corrected below
      const uint32_t* n_sy = v.s_class_counts + int64_t(r) * v.n_classes * stride;
      const uint32_t* n_s = v.s_counts + int64_t(r) * stride;
      // Drains `table` over the entries [from, to] of an order (through `order` when given).
      auto drain = [&](uint16_t* table, int32_t from, int32_t to, const uint8_t* order, auto&& use) {
        for (int32_t e = from; e <= to; ++e) {
          const uint8_t s = stash[(order ? order[e] : e) * kLaneThreads];
          if (s == kLaneAbsent) continue;
          const uint32_t n = table[s * kLaneThreads];
          if (!n) continue;
          table[s * kLaneThreads] = 0;
          use(s, n);
        }
      };
      // By (class, code): n(x, s, y); at a class's end, its base cells n(s, y) less what was
      // counted. Most groups of a text matrix hold one entry: their cells need no table.
      const int64_t plogp_one = plogp(1);
      for (int32_t e = 0, group = 0, klass = 0; e < m; ++e) {
        const uint8_t s = stash[e * kLaneThreads], flags = flags_a[e];
        const bool counted = s != kLaneAbsent;
        if ((flags & kLoneClass) == kLoneClass) {
          if (counted) {
            const uint32_t n_sc = n_sy[int64_t(y_a[e]) * stride + s];
            xsy += plogp_one + plogp(n_sc - 1) - plogp(n_sc);
            ++s_counted[s * kLaneThreads];
          }
          group = klass = e + 1;
          continue;
        }
        if ((flags & kLoneCode) == kLoneCode) {
          if (counted) {
            xsy += plogp_one;
            ++class_counts[s * kLaneThreads];
            ++s_counted[s * kLaneThreads];
          }
          group = e + 1;
        } else {
          if (counted) ++cell_counts[s * kLaneThreads];
          if (flags & kEndsCode) {
            drain(cell_counts, group, e, nullptr, [&](uint8_t s, uint32_t n) {
              xsy += plogp(n);
              class_counts[s * kLaneThreads] += n;
              s_counted[s * kLaneThreads] += n;
            });
            group = e + 1;
          }
        }
        if (flags & kEndsClass) {
          const uint32_t* n_sc = n_sy + int64_t(y_a[e]) * stride;
          drain(class_counts, klass, e, nullptr,
                [&](uint8_t s, uint32_t n) { xsy += plogp(n_sc[s] - n) - plogp(n_sc[s]); });
          klass = e + 1;
        }
      }
      drain(s_counted, 0, m - 1, nullptr, [&](uint8_t s, uint32_t n) { xs += plogp(n_s[s] - n) - plogp(n_s[s]); });
      // By code: n(x, s).
      for (int32_t k = 0, group = 0; k < m; ++k) {
        const uint8_t s = stash[order_b[k] * kLaneThreads], flags = flags_b[k];
        if ((flags & kLoneCode) == kLoneCode) {
          if (s != kLaneAbsent) xs += plogp_one;
          group = k + 1;
          continue;
        }
        if (s != kLaneAbsent) ++cell_counts[s * kLaneThreads];
        if (flags & kEndsCode) {
          drain(cell_counts, group, k, order_b, [&](uint8_t, uint32_t n) { xs += plogp(n); });
          group = k + 1;
        }
      }
      update_feature(rule, xsy, xs, v.state[r * v.n_features + f]);
    }
  }
}

// Dense codes of few samples, levels and classes (microarrays): a thread a (feature, subsample)
// pair, with no atomics and no barriers between pairs. The block reads the feature's codes into
// shared memory once for all subsamples; each thread counts n(x, s, y) of its subsample in its
// own column of an 8- or 16-bit table [cell][thread] (conflict-free: a thread's cells are in its own
// bank), cell (x * s_stride + s) * n_classes + y, then drains it into the sums. S's codes are read
// transposed ([position][subsample]), so neighbouring threads read neighbouring codes.
template <class Code, class Count>
__global__ void __launch_bounds__(kDenseThreads) dense_count_kernel(BatchView v) {
  // Dynamic shared memory, sized to the data: plogp of 0..N, the tables, the feature's codes.
  extern __shared__ int64_t plogp_small[];
  const int32_t n = v.n_samples, classes = v.n_classes, stride = v.s_stride;
  for (int32_t i = threadIdx.x; i <= n; i += kDenseThreads) plogp_small[i] = v.plogp[i];
  const int32_t cube = v.max_levels * stride * classes;
  Count* counts = reinterpret_cast<Count*>(plogp_small + n + 1) + threadIdx.x;
  Code* x_codes = reinterpret_cast<Code*>(reinterpret_cast<Count*>(plogp_small + n + 1) +
                                          static_cast<size_t>(cube) * kDenseThreads);
  auto plogp = [&](uint32_t k) { return plogp_small[k]; };
  for (int32_t cell = 0; cell < cube; ++cell) counts[cell * kDenseThreads] = 0;
  const Code* all_codes = static_cast<const Code*>(v.codes);
  for (int64_t f = blockIdx.x; f < v.n_features; f += gridDim.x) {
    __syncthreads();  // every thread is done with the previous feature's codes
    for (int32_t i = threadIdx.x; i < n; i += kDenseThreads) x_codes[i] = all_codes[f * n + i];
    __syncthreads();
    const int32_t lx = v.levels[f];
    for (int32_t r = threadIdx.x; r < v.n_resamples; r += kDenseThreads) {
      const int64_t s_feature = v.s_feature[r];
      if (s_feature == kDone || v.retired[r * v.n_features + f]) continue;
      const int32_t ls = s_feature < 0 ? 1 : v.levels[s_feature];
      const uint16_t* sc = v.s_codes_t + r;
      for (int32_t c = 0; c < classes; ++c)
        for (int32_t i = v.class_start[c]; i < v.class_start[c + 1]; ++i) {
          const uint16_t s = sc[static_cast<int64_t>(i) * v.n_resamples];
          if (s != kAbsent) ++counts[((static_cast<int32_t>(x_codes[i]) * stride + s) * classes + c) * kDenseThreads];
        }
      int64_t xsy = 0, xs = 0;
      for (int32_t x = 0; x < lx; ++x)
        for (int32_t s = 0; s < ls; ++s) {
          Count* cell = counts + (x * stride + s) * classes * kDenseThreads;
          uint32_t n_xs = 0;
          for (int32_t y = 0; y < classes; ++y) {
            const uint32_t k = cell[y * kDenseThreads];
            if (!k) continue;
            cell[y * kDenseThreads] = 0;
            xsy += plogp(k);
            n_xs += k;
          }
          if (n_xs) xs += plogp(n_xs);
        }
      update_feature(v.rules[r], xsy, xs, v.state[r * v.n_features + f]);
    }
  }
}

__device__ __forceinline__ bool better(const DeviceCandidate& a, const DeviceCandidate& b) {
  if (a.feature < 0) return false;
  if (b.feature < 0) return true;
  return a.key > b.key || (a.key == b.key && a.feature < b.feature);
}

// Subsample r's candidate with the highest key, the lowest index among equal keys.
__global__ void __launch_bounds__(kThreads) best_kernel(BatchView v) {
  __shared__ DeviceCandidate best[kThreads];
  const int32_t r = blockIdx.x;
  if (v.s_feature[r] == kDone) return;
  DeviceCandidate mine{0, -1};
  const FeatureState* state = v.state + int64_t(r) * v.n_features;
  const uint8_t* retired = v.retired + int64_t(r) * v.n_features;
  for (int64_t f = threadIdx.x; f < v.n_features; f += kThreads) {
    const DeviceCandidate c{state[f].key, f};
    if (!retired[f] && better(c, mine)) mine = c;
  }
  best[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride && better(best[threadIdx.x + stride], best[threadIdx.x]))
      best[threadIdx.x] = best[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) v.best[r] = best[0];
}

using DenseKernel = void (*)(BatchView);
// dense_count_kernel for the codes' width and 8- or 16-bit counts.
DenseKernel dense_kernel(bool wide, int32_t n_samples) {
  if (n_samples <= 255) return wide ? dense_count_kernel<uint16_t, uint8_t> : dense_count_kernel<uint8_t, uint8_t>;
  return wide ? dense_count_kernel<uint16_t, uint16_t> : dense_count_kernel<uint8_t, uint16_t>;
}

// What a batch needs: shared memory per count block, device bytes of the codes and per subsample.
struct BatchPlan {
  int32_t s_stride = 1, table_words = 0;
  size_t shared_bytes = 0;
  size_t dense_shared_bytes = 0;  // dense_count_kernel's; 0 when count_kernel counts
  size_t lane_shared_bytes = 0;   // sparse_lane_kernel's; 0 when it cannot run
  int64_t code_bytes = 0, per_resample = 0, budget = 0;
  std::string problem;
};

BatchPlan plan_batch(const CodeMatrix& x, const ClassLayout& layout, const GpuOptions& options) {
  BatchPlan p;
  if (options.devices.empty()) {
    p.problem = "no GPU devices given";
    return p;
  }
  ScopedDevice on(options.devices[0]);
  p.s_stride = std::max<int32_t>(1, x.max_levels());
  const int64_t max_cells = int64_t(p.s_stride) * p.s_stride;
  p.table_words = static_cast<int32_t>(2 * max_cells + 2 * p.s_stride + kStageWords);
  p.shared_bytes = (static_cast<size_t>(layout.n_classes + 4) / 4 * 4 + size_t(kWarps) * p.table_words) * 4;
  int shared_limit = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.devices[0]));
  const size_t static_bytes = kPlogpCached * sizeof(int64_t) + 1024;
  // A thread a pair when the tables of the block's threads fit and draining one costs
  // no more than counting a few times over (cells at most 4 N).
  const int64_t n = layout.n_samples, f = x.n_features;
  const int64_t cube = max_cells * layout.n_classes;
  // Counts of a class fit 8 bits when N does, else 16.
  const size_t count_bytes = n <= 255 ? 1 : 2;
  const size_t dense_bytes = static_cast<size_t>(n + 1) * 8 + static_cast<size_t>(cube) * kDenseThreads * count_bytes +
                             static_cast<size_t>(n) * x.code_bytes();
  if (!x.sparse && n <= 65535 && cube <= 4 * n && dense_bytes + 1024 <= static_cast<size_t>(shared_limit))
    p.dense_shared_bytes = dense_bytes;
  if (x.sparse && p.s_stride <= 255 && lane_shared_bytes(p.s_stride) + static_bytes <= static_cast<size_t>(shared_limit))
    p.lane_shared_bytes = lane_shared_bytes(p.s_stride);
  if (!p.dense_shared_bytes && p.shared_bytes + static_bytes > static_cast<size_t>(shared_limit)) {
    p.problem = "features of " + std::to_string(p.s_stride) + " levels: count tables too large for shared memory";
    return p;
  }
  p.code_bytes = x.n_entries() * static_cast<int64_t>(x.code_bytes()) + (x.sparse ? x.n_entries() * 4 + (f + 1) * 8 : 0) +
                 f * 4 + n * 8 + (n + 1) * 8 + (x.sparse ? f * 8 : 0);  // sparse: the two kernels' feature lists
  p.per_resample = f * static_cast<int64_t>(sizeof(FeatureState) + 1) + n * 5 +
                   (int64_t(layout.n_classes) + 1) * p.s_stride * 4 + static_cast<int64_t>(sizeof(StepRule)) + 64;
  size_t free_bytes = 0, total_bytes = 0;
  FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  p.budget = static_cast<int64_t>(free_bytes) - (int64_t(512) << 20);
  if (options.memory_limit > 0) p.budget = std::min(p.budget, options.memory_limit);
  if (p.code_bytes + p.per_resample > p.budget) p.problem = "the codes and one subsample's states do not fit the device";
  return p;
}

// One device, the codes on it, and the buffers of a group of subsamples.
class Batch {
 public:
  Batch(const CodeMatrix& x, const ClassLayout& layout, const BatchPlan& plan, int device, int32_t group)
      : x_(x), layout_(layout), plan_(plan), plogp_(layout.n_samples) {
    const int64_t n = layout.n_samples;
    codes_.upload(x.wide ? reinterpret_cast<const uint8_t*>(x.codes16.data()) : x.codes8.data(),
                  static_cast<size_t>(x.n_entries()) * x.code_bytes());
    if (x.sparse) {
      entry_start_.upload(x.entry_start.data(), x.entry_start.size());
      entry_row_.upload(x.entry_row.data(), x.entry_row.size());
    }
    levels_.upload(x.levels.data(), x.levels.size());
    base_.upload(x.base.data(), x.base.size());
    class_start_.upload(layout.class_start.data(), layout.class_start.size());
    class_of_.upload(layout.class_of.data(), layout.class_of.size());
    plogp_d_.upload(plogp_.data(), plogp_.size());
    member_.resize(static_cast<size_t>(group * n));
    s_feature_.resize(group);
    s_codes_.resize(static_cast<size_t>(group * n));
    if (plan.lane_shared_bytes) {  // sparse features of few entries to sparse_lane_kernel, the rest to count_kernel
      std::vector<int64_t> lane, warp;
      for (int64_t f = 0; f < x.n_features; ++f)
        (x.entries_end(f) - x.entries_begin(f) <= kLaneEntries ? lane : warp).push_back(f);
      lane_features_.upload(lane.data(), lane.size());
      warp_features_.upload(warp.data(), warp.size());
      n_lane_ = static_cast<int64_t>(lane.size());
      n_warp_ = static_cast<int64_t>(warp.size());
    } else {
      n_warp_ = x.n_features;
    }
    if (plan.dense_shared_bytes || n_lane_) s_codes_t_.resize(static_cast<size_t>(group * n));
    s_class_counts_.resize(static_cast<size_t>(group) * layout.n_classes * plan.s_stride);
    s_counts_.resize(static_cast<size_t>(group) * plan.s_stride);
    rules_.resize(group);
    retired_.resize(static_cast<size_t>(group * x.n_features));
    state_.resize(static_cast<size_t>(group * x.n_features));
    best_.resize(group);
    int multiprocessors = 0, per_sm = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    if (plan.dense_shared_bytes) {
      const DenseKernel kernel = dense_kernel(x.wide, layout.n_samples);
      allow_dynamic_shared(kernel);
      FSGPU_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kDenseThreads, plan.dense_shared_bytes));
    } else {
      auto kernel = x.wide ? count_kernel<uint16_t> : count_kernel<uint8_t>;
      allow_dynamic_shared(kernel);
      FSGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, plan.shared_bytes));
    }
    grid_ = static_cast<int>(std::min<int64_t>(std::max<int64_t>(n_warp_, 1), int64_t(std::max(per_sm, 1)) * multiprocessors));
    if (n_lane_) {
      auto kernel = x.wide ? sparse_lane_kernel<uint16_t> : sparse_lane_kernel<uint8_t>;
      allow_dynamic_shared(kernel);
      FSGPU_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kLaneThreads, plan.lane_shared_bytes));
      lane_grid_ = static_cast<int>(std::min<int64_t>(n_lane_, int64_t(std::max(per_sm, 1)) * multiprocessors));
    }
  }

  // The selections on samples[first, last).
  void select(const std::vector<std::vector<int32_t>>& samples, size_t first, size_t last,
              const SelectionOptions& o, const Checkpoint& between_steps, double done_before, double share,
              std::vector<Selection>& out) {
    const int32_t g = static_cast<int32_t>(last - first);
    const int32_t n = layout_.n_samples;
    std::vector<uint8_t> member(static_cast<size_t>(g) * n, 0);
    std::vector<int32_t> size(g, 0);
    std::vector<StepRule> base_rules(g);
    std::vector<int32_t> class_count(layout_.n_classes);
    for (int32_t r = 0; r < g; ++r) {
      std::fill(class_count.begin(), class_count.end(), 0);
      for (int32_t i : samples[first + r]) {  // as subsample_of() checks them
        if (i < 0 || i >= n) throw std::invalid_argument("subsample index out of range");
        const int32_t p = layout_.position[i];
        uint8_t& m = member[static_cast<size_t>(r) * n + p];
        if (m) throw std::invalid_argument("a subsample takes a sample more than once");
        m = 1;
        ++class_count[layout_.class_of[p]];
      }
      size[r] = static_cast<int32_t>(samples[first + r].size());
      if (size[r] < 1) throw std::invalid_argument("a subsample has no samples");
      // select.cpp's make_rule() on the subsample (S's sums come from prepare_kernel).
      StepRule& rule = base_rules[r];
      rule.method = o.method;
      rule.class_terms = 0;
      for (int32_t c : class_count) rule.class_terms += plogp_(c);
      rule.plogp_n = plogp_(size[r]);
      rule.class_entropy = rule.plogp_n - rule.class_terms;
      rule.beta = o.beta;
      rule.gamma = o.gamma;
      auto small_integer = [](double v) { return v == std::round(v) && std::fabs(v) <= 1048576; };
      rule.integral = small_integer(o.beta) && small_integer(o.gamma);
    }
    member_.upload(member.data(), member.size());
    size_.upload(size.data(), size.size());
    FSGPU_CUDA_CHECK(cudaMemset(retired_.data(), 0, retired_.size()));
    FSGPU_CUDA_CHECK(cudaMemset(state_.data(), 0, state_.size() * sizeof(FeatureState)));

    BatchView v = view(g);
    std::vector<int64_t> s_feature(g, kNone);
    std::vector<StepRule> rules(base_rules);
    std::vector<DeviceCandidate> best(g);
    const bool wide = x_.wide;
    for (int64_t step = 0; step < o.k; ++step) {
      if (std::all_of(s_feature.begin(), s_feature.end(), [](int64_t s) { return s == kDone; })) break;
      if (between_steps) between_steps(done_before + share * static_cast<double>(step) / static_cast<double>(o.k));
      for (int32_t r = 0; r < g; ++r) {
        rules[r] = base_rules[r];
        rules[r].step = static_cast<int32_t>(step);
        rules[r].n_selected = step;
      }
      const bool pass = step == 0 || o.method != Method::mim;  // MIM ranks by relevance alone
      rules_.upload(rules.data(), g);
      s_feature_.upload(s_feature.data(), g);
      (wide ? prepare_kernel<uint16_t> : prepare_kernel<uint8_t>)<<<g, kThreads>>>(v, pass);
      check_launch("prepare_kernel");
      if (pass) {
        if (plan_.dense_shared_bytes) {
          dense_kernel(wide, n)<<<grid_, kDenseThreads, plan_.dense_shared_bytes>>>(v);
          check_launch("dense_count_kernel");
        } else {
          if (n_lane_) {
            (wide ? sparse_lane_kernel<uint16_t> : sparse_lane_kernel<uint8_t>)<<<lane_grid_, kLaneThreads,
                                                                                  plan_.lane_shared_bytes>>>(v);
            check_launch("sparse_lane_kernel");
          }
          if (n_warp_) {
            (wide ? count_kernel<uint16_t> : count_kernel<uint8_t>)<<<grid_, kThreads, plan_.shared_bytes>>>(v);
            check_launch("count_kernel");
          }
        }
      }
      best_kernel<<<g, kThreads>>>(v);
      check_launch("best_kernel");
      FSGPU_CUDA_CHECK(cudaMemcpy(best.data(), best_.data(), g * sizeof(DeviceCandidate), cudaMemcpyDeviceToHost));
      for (int32_t r = 0; r < g; ++r) {
        if (s_feature[r] == kDone) continue;
        Selection& sel = out[first + r];
        if (best[r].feature < 0) {
          s_feature[r] = kDone;
          continue;
        }
        const double score = key_to_score(rules[r], best[r].key, size[r]);
        if (score <= o.min_score) {
          s_feature[r] = kDone;
          continue;
        }
        sel.features.push_back(best[r].feature);
        sel.scores.push_back(score);
        s_feature[r] = best[r].feature;
      }
    }
  }

 private:
  BatchView view(int32_t g) const {
    BatchView v;
    v.codes = codes_.data();
    v.sparse = x_.sparse;
    v.entry_start = x_.sparse ? entry_start_.data() : nullptr;
    v.entry_row = x_.sparse ? entry_row_.data() : nullptr;
    v.levels = levels_.data();
    v.base = base_.data();
    v.n_features = x_.n_features;
    v.n_samples = layout_.n_samples;
    v.n_classes = layout_.n_classes;
    v.class_start = class_start_.data();
    v.class_of = class_of_.data();
    v.plogp = plogp_d_.data();
    v.n_resamples = g;
    v.s_stride = plan_.s_stride;
    v.max_levels = plan_.s_stride;
    v.table_words = plan_.table_words;
    v.member = member_.data();
    v.size = size_.data();
    v.s_feature = s_feature_.data();
    v.s_codes = s_codes_.data();
    v.s_codes_t = s_codes_t_.size() ? s_codes_t_.data() : nullptr;
    if (n_lane_) {
      v.warp_features = warp_features_.data();
      v.n_warp_features = n_warp_;
      v.lane_features = lane_features_.data();
      v.n_lane_features = n_lane_;
    }
    v.s_class_counts = s_class_counts_.data();
    v.s_counts = s_counts_.data();
    v.rules = rules_.data();
    v.retired = retired_.data();
    v.state = state_.data();
    v.best = best_.data();
    return v;
  }

  const CodeMatrix& x_;
  const ClassLayout& layout_;
  BatchPlan plan_;
  PlogpTable plogp_;
  int grid_ = 1, lane_grid_ = 1;
  int64_t n_lane_ = 0, n_warp_ = 0;  // features of sparse_lane_kernel and of count_kernel (or the dense kernel)
  DeviceBuffer<uint8_t> codes_, member_, retired_;
  DeviceBuffer<int64_t> entry_start_, s_feature_, plogp_d_, lane_features_, warp_features_;
  DeviceBuffer<int32_t> entry_row_, class_start_, class_of_, size_;
  DeviceBuffer<uint16_t> levels_, base_, s_codes_, s_codes_t_;
  DeviceBuffer<uint32_t> s_class_counts_, s_counts_;
  DeviceBuffer<StepRule> rules_;
  DeviceBuffer<FeatureState> state_;
  DeviceBuffer<DeviceCandidate> best_;
};

// Criteria whose pass conditions on the newest feature alone, with plogp sums.
bool batched_method(Method m) { return m != Method::cmi && m != Method::jmi3 && m != Method::jim; }

}  // namespace

std::string gpu_subsamples_problem(const CodeMatrix& x, const ClassLayout& layout, const SelectionOptions& selection,
                                   const GpuOptions& options) {
  if (!batched_method(selection.method))
    return "the criterion conditions on more than the newest feature, or counts impurity";
  if (!selection.fixed.empty()) return "fixed features";
  return plan_batch(x, layout, options).problem;
}

std::vector<Selection> gpu_select_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                             const std::vector<std::vector<int32_t>>& samples,
                                             const SelectionOptions& selection, const GpuOptions& options,
                                             const Checkpoint& between_steps) {
  const std::string problem = gpu_subsamples_problem(x, layout, selection, options);
  if (!problem.empty()) throw std::invalid_argument("batched GPU selection: " + problem);
  std::vector<Selection> out(samples.size());
  if (samples.empty()) return out;
  const BatchPlan plan = plan_batch(x, layout, options);
  ScopedDevice on(options.devices[0]);
  const int64_t fit = (plan.budget - plan.code_bytes) / plan.per_resample;
  const int32_t group = static_cast<int32_t>(std::max<int64_t>(1, std::min<int64_t>(fit, samples.size())));
  Batch batch(x, layout, plan, options.devices[0], group);
  const double total = static_cast<double>(samples.size());
  for (size_t first = 0; first < samples.size(); first += group) {
    const size_t last = std::min(samples.size(), first + group);
    batch.select(samples, first, last, selection, between_steps, first / total, (last - first) / total, out);
  }
  return out;
}

}  // namespace fsgpu
