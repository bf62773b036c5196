// The exact kNN search on GPUs, with the neighbours and distances of the CPU engine (knn.h).
//
//   1. A candidate pass: a block owns 128 query rows and runs over the reference rows 128 at a
//      time, scoring each tile and fusing the selection into it: a score that beats its row's
//      worst kept candidate is queued in shared memory, and the queues go into the rows' heaps
//      of candidates (global memory) when one overflows (offer_scores). No distance matrix is
//      ever written. The correlation metrics are scored on tensor cores in half precision with
//      float sums (candidates_wgmma_kernel, warpgroup mma, on Hopper's sm_90a image;
//      candidates_mma_kernel, mma.sync m16n8k16, sm_80 and later, 16 warps a block; the block's
//      query rows stay in shared memory when they fit), the others, and the rows that need it,
//      in single precision (candidates_kernel, 8 x 8 scores per thread).
//   2. rerank_kernel, a block per query: the candidates sorted; every one that the pass's error
//      bound cannot rule out gets knn_key() in double precision, and the k best by (key, index)
//      are the answer (reported as knn_key_distance()). When the heap's last candidate is itself
//      within the bound of the k-th, a point outside the heap could still belong: the row is
//      marked and searched again, in single precision after a half-precision pass, and
//      otherwise by exact_kernel (every distance in double precision, sorted by CUB).
// Reference points that do not fit the device stream through a single-precision pass in blocks
// (the heaps carry over) and step 2 runs on the host (rerank_candidates() in core/knn.cpp, the
// same steps). Several GPUs split the query rows.
//
// Why the answer is exact. For a query, let S(j) be reference point j's score in the pass and
// K(j) its knn_key(), what the CPU orders by; let e bound |S(j) - K(j)| for every j (below; the
// bound arrays hold 2e). The pass keeps a set C of candidates: all other points when fewer than
// `capacity`, else `capacity` of them such that no point left out scores below the largest
// score in C (a heap keeps the best of what it is offered, and offer_scores only ever screens
// out a score that is no better than a kept one). Let s_k be the k-th smallest score in C. A
// point j with S(j) > s_k + 2e has K(j) > s_k + e, while k points of C have K <= s_k + e: j is
// not among the k nearest. So the k nearest lie among the points with S <= s_k + 2e ("close").
// If some candidate is not close, every point left out of C scores at least as high and is not
// close either: the k nearest are all in C's close part, and sorting that by (K, index) gives
// them, ties by index as the CPU. Otherwise (C full and all close) the row is unsure and goes to
// the next, tighter, search; the last one computes every K.
//
// The error bounds (knn_score_bounds() in core/knn.cpp): an input rounded to float (half) loses
// at most u = 2^-24 (2^-11) of itself, a half below 2^-14 up to 2^-25 absolutely, and a sum of
// m terms at most m u of the sum of the terms' magnitudes (2 m u on tensor cores, which may
// truncate); for the unit rows of the correlation metrics that magnitude is at most 1 (so
// neither huge nor tiny inputs can overflow a half, and underflow is the absolute term; a
// constant row is zeros, scoring exactly 1 as its key is); for euclidean it is at most
// 2 (|a|^2 + |b|^2) and for manhattan |a|_1 + |b|_1 of the rows centred on the reference mean
// (which changes no distance and shrinks the bound). The double computation adds its own
// m 2^-53 of the uncentred rows' magnitudes.
#include <cub/cub.cuh>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "core/knn_heap.h"
#include "core/knn_metric.h"
#include "core/parallel.h"
#include "cuda_check.cuh"
#include "device_threads.cuh"
#include "knn_kept.cuh"
#include "segmented_sort.cuh"

namespace fsgpu {

namespace {

constexpr int kTile = 128;      // query rows of a block, and reference rows of a tile
constexpr int kThreads = 256;   // single precision: 8 warps, 64 scores per thread
constexpr int kChunk = kKnnStride32;  // floats staged per step (single precision)
constexpr int kChunk16 = 64;    // halves staged per step (tensor cores)
constexpr int kWarpRows16 = 32;  // query rows of a tensor-core warp (16 warps a block)
constexpr int kQueue = 24;      // shared queue per query row and round
constexpr int kExtra32 = 32;    // candidates kept beyond k: single precision
constexpr int kExtra16 = 96;    // half precision, whose bound is wider
constexpr int kMaxGpuK = 4096;

using KnnCand = KnnCandidate;  // ordered by score, then index

using Precision = KnnPrecision;


// The query rows of a launch: local row r is query ids[r], or first + r without ids. Query data
// are indexed by query id; heaps, sizes and outputs by local row.
struct QueryRows {
  const int32_t* ids;
  int64_t first, count;
  __device__ int64_t id(int64_t r) const { return ids ? ids[r] : first + r; }
};

struct CandidateArgs {
  QueryRows rows;
  const void* queries;      // float or half rows of `stride` elements, by query id
  const void* refs;         // the reference block's rows
  int64_t n_block, first_ref;  // reference rows of the block: global indices first_ref ..
  int64_t query_base;       // the global index of query id 0 (streaming: the device's first query)
  int32_t stride;
  bool self;                // queries are the reference points: skip id + query_base == index
  KnnCand* heaps;           // per local row `capacity` candidates
  int32_t* sizes;
  int32_t capacity;
};

// A block's per-row state in shared memory for the fused selection.
struct SelectionState {
  KnnCand queue[kTile][kQueue];
  int32_t queued[kTile];
  KnnCand worst[kTile];     // each row's heap top: what a score must beat
  int64_t id[kTile];        // each row's query id (-1 past the end)
};

__device__ inline void load_selection_state(const CandidateArgs& a, SelectionState& st) {
  if (threadIdx.x < kTile) {
    const int64_t local = int64_t(blockIdx.x) * kTile + threadIdx.x;
    const bool valid = local < a.rows.count;
    const int32_t size = valid ? a.sizes[local] : 0;
    st.id[threadIdx.x] = valid ? a.rows.id(local) : -1;
    st.worst[threadIdx.x] = size < a.capacity ? KnnCand{INFINITY, INT_MAX} : a.heaps[local * a.capacity];
    st.queued[threadIdx.x] = 0;
  }
  __syncthreads();
}

// Moves each row's queued candidates into its heap (a thread per row) and refreshes the row's
// worst kept candidate. Called by every thread of the block.
__device__ inline void flush_queues(const CandidateArgs& a, SelectionState& st) {
  __syncthreads();
  if (threadIdx.x < kTile) {
    const int row = threadIdx.x;
    const int32_t n_queued = min(st.queued[row], kQueue);
    if (n_queued > 0) {
      const int64_t local = int64_t(blockIdx.x) * kTile + row;
      KnnCand* heap = a.heaps + local * a.capacity;
      int32_t size = a.sizes[local];
      KnnCand top = size > 0 ? heap[0] : KnnCand{};  // kept in a register: offers that lose cost no load
      for (int q = 0; q < n_queued; ++q) candidate_heap_offer(heap, size, a.capacity, st.queue[row][q], top);
      a.sizes[local] = size;
      st.worst[row] = size < a.capacity ? KnnCand{INFINITY, INT_MAX} : top;
    }
    st.queued[row] = 0;
  }
  __syncthreads();
}

// A thread's sums of a tile as scores: 1 - sum for the correlation metrics' dot products
// (kOneMinus), else the sums themselves.
template <bool kOneMinus>
__device__ __forceinline__ float score_of(const float* sums, int e) {
  return kOneMinus ? 1.0f - sums[e] : sums[e];
}

// Clears the pending scores (bit e: score e) that do not beat their row's worst kept candidate
// in (score, index) order: the full test, after a one-compare screen or a flush. `first` is the
// tile's first column's index.
template <bool kOneMinus, class Layout>
__device__ inline uint64_t keep_beating(uint64_t pending, const SelectionState& st, const float* sums, int32_t first,
                                        const Layout& layout) {
#pragma unroll
  for (int e = 0; e < Layout::kScores; ++e) {
    const uint64_t bit = uint64_t(1) << e;
    const KnnCand w = st.worst[layout.row_at(layout.row(e))];
    if ((pending & bit) &&
        !candidate_before(score_of<kOneMinus>(sums, e), first + layout.col_at(layout.col(e)), w.score, w.index))
      pending &= ~bit;
  }
  return pending;
}

// Offers a thread's Layout::kScores scores (score_of its sums) of the tile at reference row r0 to
// their rows' heaps. The scores lie on Layout::kRows rows of the tile: score e is on row slot
// layout.row(e) and column slot layout.col(e), at tile positions layout.row_at(slot) and
// layout.col_at(slot). A score that beats its row's worst kept candidate (as of the last flush)
// is queued in shared memory; the queues go into the heaps (flush_queues) only when one
// overflows, and at the end of the kernel. A stale worst lets more scores through, never fewer,
// and a heap keeps the best `capacity` of what it is offered, so every point left out scores no
// better than its heap's final worst: what the rerank relies on. Called by every thread of the
// block.
template <bool kOneMinus, class Layout>
__device__ inline void offer_scores(const CandidateArgs& a, SelectionState& st, int64_t r0, const float* sums,
                                    const Layout& layout) {
  static_assert(Layout::kScores <= 64, "pending scores are bits of a 64-bit mask");
  // A first, cheap screen against each row's worst score (rows past the end take none); the
  // few scores through it get the full test: a column inside the block, not the query itself,
  // and (score, index) order.
  float worst_score[Layout::kRows];
#pragma unroll
  for (int i = 0; i < Layout::kRows; ++i) {
    const int row = layout.row_at(i);
    worst_score[i] = st.id[row] >= 0 ? st.worst[row].score : -INFINITY;
  }
  // Each row slot's best score first (1 - sum: 1 - its largest sum, the same float, as rounding
  // 1 - s is monotone in s): most tiles have none to offer, and then cost a compare per score.
  float best[Layout::kRows];
#pragma unroll
  for (int i = 0; i < Layout::kRows; ++i) best[i] = kOneMinus ? -INFINITY : INFINITY;
#pragma unroll
  for (int e = 0; e < Layout::kScores; ++e)
    best[layout.row(e)] = kOneMinus ? fmaxf(best[layout.row(e)], sums[e]) : fminf(best[layout.row(e)], sums[e]);
  bool any = false;
#pragma unroll
  for (int i = 0; i < Layout::kRows; ++i) any |= (kOneMinus ? 1.0f - best[i] : best[i]) <= worst_score[i];
  uint64_t pending = 0;
  if (any) {
#pragma unroll
    for (int e = 0; e < Layout::kScores; ++e)
      if (score_of<kOneMinus>(sums, e) <= worst_score[layout.row(e)]) pending |= uint64_t(1) << e;
  }
  const int32_t first = static_cast<int32_t>(a.first_ref + r0);
  auto index = [&](int e) { return first + layout.col_at(layout.col(e)); };
  if (pending) {
#pragma unroll
    for (int e = 0; e < Layout::kScores; ++e) {
      const uint64_t bit = uint64_t(1) << e;
      const int32_t j = index(e);
      if ((pending & bit) && (j >= a.first_ref + a.n_block || (a.self && st.id[layout.row_at(layout.row(e))] + a.query_base == j)))
        pending &= ~bit;
    }
    pending = keep_beating<kOneMinus>(pending, st, sums, first, layout);
  }
  for (;;) {
    if (pending) {
#pragma unroll
      for (int e = 0; e < Layout::kScores; ++e) {
        const uint64_t bit = uint64_t(1) << e;
        if (!(pending & bit)) continue;
        const int row = layout.row_at(layout.row(e));
        const int slot = atomicAdd(&st.queued[row], 1);
        if (slot < kQueue) {
          st.queue[row][slot] = KnnCand{score_of<kOneMinus>(sums, e), index(e)};
          pending &= ~bit;
        }
      }
    }
    if (!__syncthreads_or(pending != 0)) return;
    flush_queues(a, st);  // a queue overflowed: empty them all, then offer what still beats the worst
    pending = keep_beating<kOneMinus>(pending, st, sums, first, layout);
  }
}

// The score layouts of the two candidate kernels: thread (tx, ty) of the single-precision one
// holds rows ty*8.. and columns tx*8.. of the tile; a tensor-core warp (warp_m, warp_n) holds
// fragment element e = (mi * 4 + ni) * 4 + c of its (16 kMi) x 32 part, at row
// warp_m*16*kMi + mi*16 + g + 8 (c / 2) and column warp_n*32 + ni*8 + 2t + c % 2.
struct GridLayout {
  static constexpr int kScores = 64, kRows = 8;
  int tx, ty;
  __device__ int row(int e) const { return e / 8; }
  __device__ int col(int e) const { return e % 8; }
  __device__ int row_at(int i) const { return ty * 8 + i; }
  __device__ int col_at(int j) const { return tx * 8 + j; }
};
template <int kMi>
struct MmaLayout {
  static constexpr int kScores = kMi * 16, kRows = kMi * 2;
  int warp_m, warp_n, g, t;
  __device__ int row(int e) const { return (e / 16) * 2 + (e % 4) / 2; }
  __device__ int col(int e) const { return ((e / 4) % 4) * 2 + e % 2; }
  __device__ int row_at(int i) const { return warp_m * 16 * kMi + (i / 2) * 16 + g + (i % 2) * 8; }
  __device__ int col_at(int j) const { return warp_n * 32 + (j / 2) * 8 + 2 * t + j % 2; }
};

// The single-precision terms of the three kinds of metric (a compile-time choice: the tile loop
// must not branch).
enum class TileKind { dot, squared_difference, absolute_difference };

template <TileKind Kind>
__device__ __forceinline__ float tile_term(float a, float b, float acc) {
  if (Kind == TileKind::dot) return fmaf(a, b, acc);
  const float d = a - b;
  return Kind == TileKind::squared_difference ? fmaf(d, d, acc) : acc + fabsf(d);
}

// Single precision: thread (tx, ty) scores rows ty*8.. x columns tx*8.. of each tile.
template <TileKind Kind>
__global__ void __launch_bounds__(kThreads) candidates_kernel(CandidateArgs a) {
  __shared__ float as[2][kChunk][kTile], bs[2][kChunk][kTile];
  __shared__ SelectionState st;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const float* queries = static_cast<const float*>(a.queries);
  const float* refs = static_cast<const float*>(a.refs);
  load_selection_state(a, st);
  // Staging: thread t loads row t / 2's floats 4 (t % 2) .. + 3 of the chunk, for A and B, into
  // registers before the current chunk's sums and stores them after, so the loads' latency hides
  // behind the sums.
  const int load_row = threadIdx.x / 2, load_col = (threadIdx.x % 2) * 4;
  float4 next_a, next_b;
  auto load = [&](int32_t k0, int64_t r0) {
    const int64_t id = st.id[load_row], rrow = r0 + load_row;
    next_a = next_b = make_float4(0, 0, 0, 0);
    if (id >= 0) next_a = *reinterpret_cast<const float4*>(queries + id * a.stride + k0 + load_col);
    if (rrow < a.n_block) next_b = *reinterpret_cast<const float4*>(refs + rrow * a.stride + k0 + load_col);
  };
  auto store = [&](int buffer) {
    as[buffer][load_col][load_row] = next_a.x;
    as[buffer][load_col + 1][load_row] = next_a.y;
    as[buffer][load_col + 2][load_row] = next_a.z;
    as[buffer][load_col + 3][load_row] = next_a.w;
    bs[buffer][load_col][load_row] = next_b.x;
    bs[buffer][load_col + 1][load_row] = next_b.y;
    bs[buffer][load_col + 2][load_row] = next_b.z;
    bs[buffer][load_col + 3][load_row] = next_b.w;
  };
  for (int64_t r0 = 0; r0 < a.n_block; r0 += kTile) {
    float acc[64];
    for (int e = 0; e < 64; ++e) acc[e] = 0;
    load(0, r0);
    __syncthreads();  // the last tile's operands are no longer read
    store(0);
    __syncthreads();
    for (int32_t k0 = 0, buffer = 0; k0 < a.stride; k0 += kChunk, buffer ^= 1) {
      const bool more = k0 + kChunk < a.stride;
      if (more) load(k0 + kChunk, r0);
      for (int kk = 0; kk < kChunk; ++kk) {
        float va[8], vb[8];
        *reinterpret_cast<float4*>(va) = *reinterpret_cast<const float4*>(&as[buffer][kk][ty * 8]);
        *reinterpret_cast<float4*>(va + 4) = *reinterpret_cast<const float4*>(&as[buffer][kk][ty * 8 + 4]);
        *reinterpret_cast<float4*>(vb) = *reinterpret_cast<const float4*>(&bs[buffer][kk][tx * 8]);
        *reinterpret_cast<float4*>(vb + 4) = *reinterpret_cast<const float4*>(&bs[buffer][kk][tx * 8 + 4]);
        for (int i = 0; i < 8; ++i)
          for (int j = 0; j < 8; ++j) acc[i * 8 + j] = tile_term<Kind>(va[i], vb[j], acc[i * 8 + j]);
      }
      if (more) store(buffer ^ 1);  // read last in the previous chunk, before its barrier
      __syncthreads();
    }
    offer_scores<Kind == TileKind::dot>(a, st, r0, acc, GridLayout{tx, ty});
  }
  flush_queues(a, st);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // used only by the tensor-core pass
__device__ __forceinline__ void cp_async16(void* shared, const void* global, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* shared) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
#endif

// Half precision on tensor cores (correlation metrics; sm_80 and later): the warps as
// (128 / kWarpRows) x 4, each scoring kWarpRows rows x 32 columns of a tile with mma.sync
// m16n8k16 (half inputs, float sums). 32-row warps (16 warps, 32 accumulators a thread) keep
// twice the warps of 64-row ones in flight, which is what the pass is short of (it is bound by
// latency, not by the tensor cores or shared memory). Resident: the block's 128 query rows are
// copied to shared memory once and stay there (only the reference rows stream through);
// otherwise (dimensions too many for shared memory) both stream. Operands come in chunks of
// kChunkH dimensions through a ring of kStages buffers filled by cp.async, the chunks of
// consecutive tiles in one stream, so loads run ahead across tile boundaries.
template <int kChunkH>
constexpr int mma_stages() { return kChunkH >= 64 ? 4 : 5; }

template <int kWarpRows>
constexpr int mma_threads() { return kTile / kWarpRows * 4 * 32; }

template <bool kResident, int kChunkH, int kWarpRows>
__global__ void __launch_bounds__(mma_threads<kWarpRows>()) candidates_mma_kernel(CandidateArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kThreadsH = mma_threads<kWarpRows>(), kMi = kWarpRows / 16, kStages = mma_stages<kChunkH>();
  extern __shared__ __align__(16) unsigned char staged[];
  __shared__ SelectionState st;
  // A row of halves in shared memory is padded by 8 (16 bytes): its pitch is then an odd number
  // of 16-byte units, so the 8 rows of an ldmatrix hit distinct banks.
  constexpr int kPad = kChunkH + 8;  // a staged chunk's pitch (80 or 144 bytes: odd numbers of 16)
  constexpr int kPieces = kTile * kChunkH / 8 / kThreadsH;  // 16-byte copies per thread and operand
  static_assert(kPieces * kThreadsH * 8 == kTile * kChunkH, "a chunk splits evenly over the threads");
  const int32_t pitch_a = kResident ? a.stride + 8 : kPad;
  __half* as = reinterpret_cast<__half*>(staged);  // resident: kTile x pitch_a; else kStages x kTile x kPad
  __half* bs = as + (kResident ? kTile * pitch_a : kStages * kTile * kPad);  // kStages x kTile x kPad
  const __half* queries = static_cast<const __half*>(a.queries);
  const __half* refs = static_cast<const __half*>(a.refs);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / 4, warp_n = warp % 4;
  const MmaLayout<kMi> layout{warp_m, warp_n, lane / 4, lane % 4};
  load_selection_state(a, st);
  if (kResident) {  // the query rows, 16 bytes a copy
    const int32_t parts = a.stride / 8;
    for (int32_t p = threadIdx.x; p < kTile * parts; p += kThreadsH) {
      const int row = p / parts, part = (p % parts) * 8;
      const int64_t id = st.id[row];
      cp_async16(as + row * pitch_a + part, queries + (id >= 0 ? id : 0) * a.stride + part, id >= 0);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  }
  const int chunks = a.stride / kChunkH;
  const int64_t steps = (a.n_block + kTile - 1) / kTile * chunks;
  // Step s: chunk c of the tile at reference row r0, in buffer s % kStages; the issuing side
  // runs kStages - 1 steps ahead. Counters, not divisions (64-bit ones cost more than the mma).
  // Each thread copies kPieces 16-byte pieces of B (and of A when not resident): piece p is row
  // p / (kChunkH / 8)'s halves 8 (p % (kChunkH / 8)) .. + 7 of the chunk.
  int issue_c = 0, issue_buffer = 0;
  int64_t issue_r0 = 0;
  auto stage = [&] {
    if (issue_r0 < a.n_block) {
      const int32_t k0 = issue_c * kChunkH;
#pragma unroll
      for (int i = 0; i < kPieces; ++i) {
        const int p = threadIdx.x + i * kThreadsH, row = p / (kChunkH / 8), part = (p % (kChunkH / 8)) * 8;
        const int64_t rrow = issue_r0 + row;
        cp_async16(bs + (issue_buffer * kTile + row) * kPad + part,
                   refs + (rrow < a.n_block ? rrow : 0) * a.stride + k0 + part, rrow < a.n_block);
        if (!kResident) {
          const int64_t id = st.id[row];
          cp_async16(as + (issue_buffer * kTile + row) * kPad + part,
                     queries + (id >= 0 ? id : 0) * a.stride + k0 + part, id >= 0);
        }
      }
      if (++issue_c == chunks) issue_c = 0, issue_r0 += kTile;
    }
    asm volatile("cp.async.commit_group;\n" ::);  // empty past the end: the group count stays uniform
    if (++issue_buffer == kStages) issue_buffer = 0;
  };
  for (int s = 0; s < kStages - 1; ++s) stage();
  float acc[kMi * 16];  // (m tile, n tile, fragment element)
#pragma unroll
  for (int e = 0; e < kMi * 16; ++e) acc[e] = 0;
  int c = 0, buffer = 0;
  int64_t r0 = 0;
  for (int64_t s = 0; s < steps; ++s) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));  // step s's chunk has landed
    __syncthreads();  // ... for every thread; and step s - 1's buffer is no longer read
    stage();
    const __half* a_chunk = kResident ? as + c * kChunkH : as + buffer * kTile * kPad;
    const __half* b_chunk = bs + buffer * kTile * kPad;
#pragma unroll
    for (int kk = 0; kk < kChunkH; kk += 16) {
      uint32_t af[kMi][4], bf[2][4];
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi)
        ldmatrix_x4(af[mi], a_chunk + (warp_m * kWarpRows + mi * 16 + lane % 16) * pitch_a + kk + (lane / 16) * 8);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        const int matrix = lane / 8;
        ldmatrix_x4(bf[nj],
                    b_chunk + (warp_n * 32 + nj * 16 + (matrix / 2) * 8 + lane % 8) * kPad + kk + (matrix % 2) * 8);
      }
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          float* d = &acc[(mi * 4 + ni) * 4];
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
              "{%0,%1,%2,%3};\n"
              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
              : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]), "r"(af[mi][3]), "r"(bf[ni / 2][(ni % 2) * 2]),
                "r"(bf[ni / 2][(ni % 2) * 2 + 1]));
        }
    }
    if (++buffer == kStages) buffer = 0;
    if (++c == chunks) {  // the tile is scored
      offer_scores<true>(a, st, r0, acc, layout);
#pragma unroll
      for (int e = 0; e < kMi * 16; ++e) acc[e] = 0;
      c = 0;
      r0 += kTile;
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::);
  flush_queues(a, st);
#endif
}

// Hopper (sm_90a images only): the same pass on warpgroup mma (wgmma), which reads both operands
// from shared memory itself, asynchronously, without the ldmatrix traffic through registers. Two
// warpgroups of 4 warps each score 64 query rows x the 128 reference rows of a tile
// (m64n128k16), in two sets of 64 float sums a thread that take turns tile by tile, so that a
// tile's scores are offered while the next tile's wgmma run. The block's query rows stay in
// shared memory; the reference rows stream through kWgStages buffers by cp.async, a 16 KB chunk
// (64 dimensions of a tile) at a time. The half rows are laid out on the device as the buffers
// want them (tiled_offset(): wgmma's 128-byte swizzle), so that a chunk is 16 contiguous KB and
// its copy a few instructions a thread. (Measured on an H200: the selection, not the tensor
// cores, bounds this pass; bulk copies through the tensor memory accelerator were no faster.)
constexpr int kWgThreads = 256;
constexpr int kWgStages = 6;
constexpr int kWgChunk = 64;                // halves of a chunk's row: 128 bytes
constexpr int kWgChunkBytes = kTile * 128;  // a chunk of the tile's 128 rows

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // the pass's device code, in the sm_90a image only
constexpr int kWgAhead = kWgStages - 2;     // chunks in flight ahead of the one being scored

// Where half (row, col) of rows of stride16 halves lies in the tiled layout: tile row / 128,
// then chunk col / 64, then row % 128 (128 bytes each), its 16-byte units in the swizzled order
// (unit u of row r at u ^ (r % 8)). Rows are padded to whole tiles with zeros.
__device__ inline int64_t tiled_offset(int64_t row, int32_t col, int32_t stride16) {
  const int64_t tile = row / kTile;
  const int32_t r = static_cast<int32_t>(row % kTile), unit = (col % kWgChunk) / 8;
  return ((tile * (stride16 / kWgChunk) + col / kWgChunk) * kTile + r) * kWgChunk + ((unit ^ (r % 8)) * 8) + col % 8;
}

// The m64nNk16 accumulators: lane (g, t) of warp w of a warpgroup holds, in d[4 j + c], row
// 16 w + g + 8 (c / 2) and column 8 j + 2 t + c % 2.
struct WgmmaLayout {
  static constexpr int kScores = 64, kRows = 2;
  int row0, t;  // row0: warpgroup * 64 + w * 16 + g
  __device__ int row(int e) const { return (e % 4) / 2; }
  __device__ int col(int e) const { return (e / 4) * 2 + e % 2; }
  __device__ int row_at(int i) const { return row0 + 8 * i; }
  __device__ int col_at(int j) const { return (j / 2) * 8 + 2 * t + j % 2; }
};

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The descriptor of a chunk's rows starting at `shared`: start address, 1,024 bytes between
// groups of 8 rows, 128-byte swizzle (mode 1); the leading offset is unused in this layout.
// Adding 2 moves the start 32 bytes (16 halves) along the rows.
__device__ __forceinline__ uint64_t swizzled_rows_desc(const void* shared) {
  return uint64_t((shared_address(shared) & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

// d (+)= A B^T over 16 dimensions, A 64 rows and B 128 rows, both K-major in shared memory.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
#endif

// Rows of half queries and references in the tiled layout (tiled_offset(); the reference block
// starts at row 0: the pass is resident).
__global__ void __launch_bounds__(kWgThreads, 1) candidates_wgmma_kernel(CandidateArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char wg_staged[];
  __shared__ SelectionState st;
  unsigned char* as = wg_staged + (1024 - shared_address(wg_staged) % 1024) % 1024;  // chunks x kWgChunkBytes
  const int chunks = a.stride / kWgChunk;
  unsigned char* bs = as + chunks * kWgChunkBytes;  // kWgStages x kWgChunkBytes: reference chunks
  const __half* queries = static_cast<const __half*>(a.queries);
  const __half* refs = static_cast<const __half*>(a.refs);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = warp / 4;
  const WgmmaLayout layout{group * 64 + (warp % 4) * 16 + lane / 4, lane % 4};
  load_selection_state(a, st);
  const int units = chunks * 8;  // 16-byte units of a query row
  for (int p = threadIdx.x; p < kTile * units; p += kWgThreads) {
    const int row = p / units, unit = p % units;
    const int64_t id = st.id[row];
    cp_async16(as + (unit / 8) * kWgChunkBytes + row * 128 + (((unit % 8) ^ (row % 8)) << 4),
               queries + tiled_offset(id >= 0 ? id : 0, unit * 8, a.stride), id >= 0);
  }
  asm volatile("cp.async.commit_group;\n" ::);
  // Step s scores chunk s (chunk s % chunks of tile s / chunks) from buffer s % kWgStages; chunks
  // are sent kWgAhead steps ahead, into the buffer that the wgmma of step s - 2 read (which
  // every warpgroup has waited for before the barrier of step s).
  const int64_t steps = (a.n_block + kTile - 1) / kTile * chunks;
  int64_t sent = 0;
  auto send = [&] {  // chunk `sent`: 16 KB, contiguous in the tiled layout
    if (sent < steps) {
      unsigned char* to = bs + (sent % kWgStages) * kWgChunkBytes + threadIdx.x * 16;
      const __half* from = refs + sent * (kWgChunkBytes / 2) + threadIdx.x * 8;
#pragma unroll
      for (int i = 0; i < kWgChunkBytes / 16 / kWgThreads; ++i)
        cp_async16(to + i * kWgThreads * 16, from + i * kWgThreads * 8, true);
    }
    asm volatile("cp.async.commit_group;\n" ::);  // empty past the end: the group count stays uniform
    ++sent;
  };
  for (int i = 0; i < kWgAhead; ++i) send();
  float sums0[64], sums1[64];
#pragma unroll
  for (int e = 0; e < 64; ++e) sums0[e] = sums1[e] = 0;
  int64_t s = 0;
  // Scores the tile at r0 into `sums`, offering the previous tile's `previous` (when r0 > 0)
  // once its last chunk is done, while this tile's first chunk runs.
  auto tile = [&](float (&sums)[64], float (&previous)[64], int64_t r0) {
    for (int c = 0; c < chunks; ++c, ++s) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(kWgAhead - 1));  // this chunk (and the query rows) landed
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // ... where wgmma reads them
      __syncthreads();  // ... for every thread; and the wgmma of step s - 2 are done
      send();
      const uint64_t desc_a = swizzled_rows_desc(as + c * kWgChunkBytes + group * 64 * 128);
      const uint64_t desc_b = swizzled_rows_desc(bs + (s % kWgStages) * kWgChunkBytes);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < kWgChunk / 16; ++kk)  // a tile's first one starts the sums
        wgmma_m64n128k16(sums, desc_a + 2 * kk, desc_b + 2 * kk, c > 0 || kk > 0);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");  // all but this chunk's
      if (c == 0 && r0 > 0) offer_scores<true>(a, st, r0 - kTile, previous, layout);
    }
  };
  // The next tile into `sums`; true when it was the last (then offered too).
  int64_t r0 = 0;
  auto next = [&](float (&sums)[64], float (&previous)[64]) {
    tile(sums, previous, r0);
    r0 += kTile;
    if (r0 < a.n_block) return false;
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    offer_scores<true>(a, st, r0 - kTile, sums, layout);
    return true;
  };
  while (!next(sums0, sums1) && !next(sums1, sums0)) {
  }
  asm volatile("cp.async.wait_group 0;\n" ::);
  flush_queues(a, st);
#endif
}

// Half rows in the tiled layout, from float rows of stride32 (zeros past them and past n_rows).
__global__ void to_half_tiled_kernel(const float* in, __half* out, int64_t n_rows, int32_t stride32, int32_t stride16) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t tiles = (n_rows + kTile - 1) / kTile;
  if (i >= tiles * kTile * stride16) return;
  // The inverse of tiled_offset(): i = ((tile * chunks + chunk) * 128 + r) * 64 + unit' * 8 + e.
  const int32_t e = static_cast<int32_t>(i % 8), unit = static_cast<int32_t>((i / 8) % 8);
  const int32_t r = static_cast<int32_t>((i / kWgChunk) % kTile);
  const int64_t tile_chunk = i / (int64_t(kWgChunk) * kTile), chunks = stride16 / kWgChunk;
  const int64_t row = tile_chunk / chunks * kTile + r;
  const int32_t col = static_cast<int32_t>(tile_chunk % chunks) * kWgChunk + ((unit ^ (r % 8)) * 8) + e;
  out[i] = __float2half_rn(row < n_rows && col < stride32 ? in[row * stride32 + col] : 0.0f);
}

// Whether `device` runs this build's sm_90a image, the only one with the wgmma pass (an sm_90
// device may run an older target's PTX instead): asked of the image itself, once per device.
__global__ void wgmma_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *out = 1;
#else
  *out = 0;
#endif
}

bool runs_wgmma(int device) {
  static std::mutex mutex;
  static std::map<int, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = known.find(device);
  if (found != known.end()) return found->second;
  int major = 0, minor = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  int runs = 0;
  if (major == 9 && minor == 0) {
    ScopedDevice on(device);
    DeviceBuffer<int> flag(1);
    wgmma_probe_kernel<<<1, 1>>>(flag.data());
    check_launch("wgmma_probe_kernel");
    FSGPU_CUDA_CHECK(cudaMemcpy(&runs, flag.data(), sizeof runs, cudaMemcpyDeviceToHost));
  }
  return known[device] = runs != 0;
}

// A tensor-core pass's kernel, block size and dynamic shared memory over rows of stride16 halves
// (query rows resident when they fit beside the selection state); kernel null when even the
// streaming pass's buffers do not fit the block's limit.
struct MmaPass {
  void (*kernel)(CandidateArgs) = nullptr;
  int threads = 0;
  size_t shared = 0;
  bool resident = false;
  bool tiled = false;  // half rows in the tiled layout (tiled_offset()), else row after row
};

template <int kChunkH, int kWarpRows>
MmaPass mma_pass(int32_t stride16, int shared_limit) {
  const size_t b = size_t(mma_stages<kChunkH>()) * kTile * (kChunkH + 8) * sizeof(__half);
  const size_t resident_bytes = b + size_t(kTile) * (stride16 + 8) * sizeof(__half);
  const size_t room = static_cast<size_t>(shared_limit) - std::min(static_cast<size_t>(shared_limit),
                                                                   sizeof(SelectionState) + 1024);
  MmaPass p;
  p.threads = mma_threads<kWarpRows>();
  if (resident_bytes <= room) {
    p = {candidates_mma_kernel<true, kChunkH, kWarpRows>, p.threads, resident_bytes, true};
  } else if (2 * b <= room) {
    p = {candidates_mma_kernel<false, kChunkH, kWarpRows>, p.threads, 2 * b, false};
  }
  return p;
}

// The wgmma pass, when its query rows and staging buffers fit beside the selection state.
MmaPass wgmma_pass(int32_t stride16, int shared_limit) {
  const size_t bytes = size_t(stride16 / kWgChunk + kWgStages) * kWgChunkBytes + 1024;  // + alignment slack
  const size_t room = static_cast<size_t>(shared_limit) - std::min(static_cast<size_t>(shared_limit),
                                                                   sizeof(SelectionState) + 1024);
  if (stride16 % kWgChunk || bytes > room) return MmaPass{};
  return MmaPass{candidates_wgmma_kernel, kWgThreads, bytes, true, true};
}

// The tensor-core pass for a block's shared memory limit: wgmma on devices that run the sm_90a
// image; else 64-dimension chunks where they fit (Hopper's 227 KB), else 32 (Ampere's 163 KB),
// resident query rows first; none (kernel null) where neither fits (Ada's and sm_86's 99 KB at
// more than 64 dimensions): then the single-precision pass runs, as exact, on the CUDA cores.
MmaPass choose_mma_pass(int32_t stride16, int shared_limit, bool wgmma) {
  for (const MmaPass& p : {wgmma ? wgmma_pass(stride16, shared_limit) : MmaPass{},
                           mma_pass<kChunk16, kWarpRows16>(stride16, shared_limit),
                           mma_pass<kChunk16 / 2, kWarpRows16>(stride16, shared_limit)})
    if (p.kernel) {
      allow_dynamic_shared(p.kernel);
      return p;
    }
  return MmaPass{};
}

// The float rows of prepared double rows of a correlation metric, as knn_float_rows() makes them
// (spearman's scaled to unit length; norms null: unit rows), zero-padded to stride32.
__global__ void float_rows_kernel(const double* rows64, const double* norms, int64_t n, int32_t dim, int32_t stride,
                                  int32_t stride32, float* out) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n * stride32) return;
  const int64_t row = i / stride32;
  const int32_t t = static_cast<int32_t>(i % stride32);
  const double norm = norms ? norms[row] : 1.0;
  const double scale = norm > 0 ? 1 / norm : 0.0;
  out[i] = t < dim ? __double2float_rn(__dmul_rn(rows64[row * stride + t], scale)) : 0.0f;
}

void float_rows(const double* rows64, const double* norms, const KnnPoints& p, int32_t stride32,
                DeviceBuffer<float>& out, cudaStream_t s) {
  out.resize(p.n * stride32);
  float_rows_kernel<<<static_cast<unsigned>((p.n * stride32 + 255) / 256), 256, 0, s>>>(
      rows64, p.norms.empty() ? nullptr : norms, p.n, p.dim, p.stride, stride32, out.data());
  check_launch("float_rows_kernel");
}

__global__ void to_half_kernel(const float* in, __half* out, int64_t n_rows, int32_t stride32, int32_t stride16) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n_rows * stride16) return;
  const int64_t row = i / stride16, col = i % stride16;
  out[i] = __float2half_rn(col < stride32 ? in[row * stride32 + col] : 0.0f);
}

// Half rows of float rows, row after row or in the tiled layout (whole tiles).
void to_half_rows(const float* rows32, int64_t n, int32_t stride32, int32_t stride16, bool tiled,
                  DeviceBuffer<__half>& out, cudaStream_t s) {
  const int64_t elements = (tiled ? (n + kTile - 1) / kTile * kTile : n) * stride16;
  out.resize(elements);
  const unsigned blocks = static_cast<unsigned>((elements + 255) / 256);
  if (tiled) to_half_tiled_kernel<<<blocks, 256, 0, s>>>(rows32, out.data(), n, stride32, stride16);
  else to_half_kernel<<<blocks, 256, 0, s>>>(rows32, out.data(), n, stride32, stride16);
  check_launch("to_half_kernel");
}

struct RerankArgs {
  KnnMetric metric;
  QueryRows rows;
  const double* queries64;  // by query id, stride each (knn.h's prepared rows)
  const double* refs64;
  const double *query_norms, *ref_norms;  // spearman's row lengths (null: 1)
  const double* bound;      // by query id: twice the pass's error bound, in score units
  int32_t stride;
  const KnnCand* heaps;     // by local row
  const int32_t* sizes;
  int32_t capacity, k;
  int32_t* out_index;       // by local row, k each
  double* out_distance;
  int32_t* unsure;          // query ids whose candidates could miss a neighbour, appended
  int32_t* n_unsure;
};

// Sorts n (key, index) pairs ascending in shared memory (bitonic over the next power of two).
template <class Key>
__device__ inline void block_sort(Key* key, int32_t* index, int32_t n, Key pad) {
  int32_t size = 1;
  while (size < n) size *= 2;
  for (int32_t i = n + threadIdx.x; i < size; i += blockDim.x) {
    key[i] = pad;
    index[i] = INT_MAX;
  }
  __syncthreads();
  for (int32_t len = 2; len <= size; len *= 2)
    for (int32_t stride = len / 2; stride > 0; stride /= 2) {
      for (int32_t i = threadIdx.x; i < size; i += blockDim.x) {
        const int32_t partner = i ^ stride;
        if (partner <= i) continue;
        const bool ascending = (i & len) == 0;
        const bool greater = key[i] > key[partner] || (key[i] == key[partner] && index[i] > index[partner]);
        if (greater == ascending) {
          const Key kt = key[i];
          key[i] = key[partner];
          key[partner] = kt;
          const int32_t it = index[i];
          index[i] = index[partner];
          index[partner] = it;
        }
      }
      __syncthreads();
    }
}

__global__ void rerank_kernel(RerankArgs a) {
  extern __shared__ unsigned char shared[];
  int32_t pow2 = 1;
  while (pow2 < a.capacity) pow2 *= 2;
  float* score = reinterpret_cast<float*>(shared);
  int32_t* index = reinterpret_cast<int32_t*>(score + pow2);
  double* exact = reinterpret_cast<double*>(index + pow2);
  int32_t* exact_index = reinterpret_cast<int32_t*>(exact + pow2);
  __shared__ int32_t n_close;
  const int64_t local = blockIdx.x, id = a.rows.id(local);
  const int32_t size = a.sizes[local];
  const KnnCand* heap = a.heaps + local * a.capacity;
  for (int32_t i = threadIdx.x; i < size; i += blockDim.x) {
    score[i] = heap[i].score;
    index[i] = heap[i].index;
  }
  __syncthreads();
  block_sort(score, index, size, INFINITY);
  // Every candidate within the bound of the k-th score may be among the k nearest.
  const double limit = double(score[min(a.k, size) - 1]) + a.bound[id];
  if (threadIdx.x == 0) {
    n_close = 0;
    while (n_close < size && double(score[n_close]) <= limit) ++n_close;
    if (size == a.capacity && n_close == size) a.unsure[atomicAdd(a.n_unsure, 1)] = static_cast<int32_t>(id);
  }
  __syncthreads();
  const double* q = a.queries64 + id * a.stride;
  const double q_norm = a.query_norms ? a.query_norms[id] : 1.0;
  for (int32_t i = threadIdx.x; i < n_close; i += blockDim.x) {
    exact[i] = knn_key(a.metric, q, a.refs64 + int64_t(index[i]) * a.stride, a.stride, q_norm,
                       a.ref_norms ? a.ref_norms[index[i]] : 1.0);
    exact_index[i] = index[i];
  }
  __syncthreads();
  block_sort(exact, exact_index, n_close, double(INFINITY));
  for (int32_t r = threadIdx.x; r < a.k; r += blockDim.x) {
    a.out_index[local * a.k + r] = exact_index[r];
    a.out_distance[local * a.k + r] = knn_key_distance(a.metric, exact[r]);
  }
}

// Exact keys (knn_key()) of some queries (by id) to every reference point (the host skips self).
__global__ void exact_kernel(KnnMetric m, const double* queries64, const double* refs64, const double* query_norms,
                             const double* ref_norms, int32_t stride, int64_t n_refs, const int32_t* ids,
                             double* distance, int32_t* index) {
  const int32_t id = ids[blockIdx.y];
  const double* q = queries64 + int64_t(id) * stride;
  const double qn = query_norms ? query_norms[id] : 1.0;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n_refs; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = int64_t(blockIdx.y) * n_refs + j;
    distance[at] = knn_key(m, q, refs64 + j * stride, stride, qn, ref_norms ? ref_norms[j] : 1.0);
    index[at] = static_cast<int32_t>(j);
  }
}

// Host-to-device copies of big arrays through page-locked staging buffers: a copy from pageable
// memory runs at a fraction of the bus's rate (the 57 MB of double rows of 24,158 x 295 points
// took 11 ms on an H100 host). Host threads fill one buffer while the others are on the bus.
// The buffers are kept for the process (allocating page-locked memory costs more than the copy)
// in a pool, a ring to each upload running at the time (one per device thread); never freed:
// a static destructor would run after the CUDA runtime has shut down.
constexpr size_t kStagingBytes = size_t(8) << 20;
constexpr int kStagingSlots = 3;
struct StagingRing {
  PinnedBuffer<unsigned char> slot[kStagingSlots];
};

class StagingLease {
 public:
  // A failure here (no page-locked memory, no events) frees what it took: a new ring's buffers
  // with the ring, a pooled ring back to the pool.
  explicit StagingLease(cudaStream_t s) : stream_(s) {
    {
      std::lock_guard<std::mutex> lock(mutex());
      if (!idle().empty()) {
        ring_ = idle().back();
        idle().pop_back();
      }
    }
    if (!ring_) {
      std::unique_ptr<StagingRing> ring(new StagingRing);
      for (auto& slot : ring->slot) slot = PinnedBuffer<unsigned char>(kStagingBytes);
      ring_ = ring.release();
    }
    try {
      for (cudaEvent_t& e : done_) FSGPU_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    } catch (...) {
      give_back();
      throw;
    }
  }
  // The ring goes back to the pool only once the bus has read it.
  ~StagingLease() {
    cudaStreamSynchronize(stream_);
    give_back();
  }
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;

  void copy(void* to, const void* from, size_t bytes, int threads) {
    for (size_t at = 0, c = 0; at < bytes; at += kStagingBytes, ++c) {
      const int b = static_cast<int>(c % kStagingSlots);
      const size_t len = std::min(kStagingBytes, bytes - at);
      if (c >= kStagingSlots) FSGPU_CUDA_CHECK(cudaEventSynchronize(done_[b]));  // the slot's last copy is done
      unsigned char* slot = ring_->slot[b].data();
      const unsigned char* src = static_cast<const unsigned char*>(from) + at;
      parallel_for(static_cast<int64_t>(len), threads, int64_t(1) << 20,
                   [&](int64_t begin, int64_t end, int) { std::memcpy(slot + begin, src + begin, end - begin); });
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(to) + at, slot, len, cudaMemcpyHostToDevice, stream_));
      FSGPU_CUDA_CHECK(cudaEventRecord(done_[b], stream_));
    }
  }

 private:
  void give_back() {
    for (cudaEvent_t e : done_)
      if (e) cudaEventDestroy(e);
    std::lock_guard<std::mutex> lock(mutex());
    idle().push_back(ring_);
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<StagingRing*>& idle() {
    static std::vector<StagingRing*>* rings = new std::vector<StagingRing*>;
    return *rings;
  }
  cudaStream_t stream_;
  StagingRing* ring_ = nullptr;
  cudaEvent_t done_[kStagingSlots] = {};
};

// Whether host memory is page-locked (a kept block of core/host_blocks.h that a GPU search had
// locked: gpu_lock_host_blocks()), so that the device can copy it directly.
bool page_locked(const void* p) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();  // not memory CUDA knows of: pageable
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

// Copies n elements of host memory into `to` (grown when needed), staged when they are many and
// pageable.
template <class T>
void upload_staged(DeviceBuffer<T>& to, const T* from, size_t n, cudaStream_t s, int threads) {
  if (n * sizeof(T) < kStagingBytes || page_locked(from)) return to.upload(from, n, s);
  to.reserve(n);
  StagingLease lease(s);
  lease.copy(to.data(), from, n * sizeof(T), threads);
}

// One device's copies of the points and its working buffers.
struct KnnDevice {
  std::unique_ptr<Stream> stream;
  DeviceBuffer<float> queries32, refs32;
  DeviceBuffer<__half> queries16, refs16;
  DeviceBuffer<double> queries64, refs64, query_norms, ref_norms, bound16, bound32, out_distance;
  DeviceBuffer<double> exact_distance, exact_distance_alt;
  DeviceBuffer<KnnCand> heaps;
  DeviceBuffer<int32_t> sizes, out_index, unsure, n_unsure, ids, exact_index, exact_index_alt, offsets;
  DeviceBuffer<unsigned char> sort_temp;

  // The device memory its buffers hold.
  size_t bytes() const {
    return bytes_of(queries32) + bytes_of(refs32) + bytes_of(queries16) + bytes_of(refs16) + bytes_of(queries64) +
           bytes_of(refs64) + bytes_of(query_norms) + bytes_of(ref_norms) + bytes_of(bound16) + bytes_of(bound32) +
           bytes_of(out_distance) + bytes_of(exact_distance) + bytes_of(exact_distance_alt) + bytes_of(heaps) +
           bytes_of(sizes) + bytes_of(out_index) + bytes_of(unsure) + bytes_of(n_unsure) + bytes_of(ids) +
           bytes_of(exact_index) + bytes_of(exact_index_alt) + bytes_of(offsets) + bytes_of(sort_temp);
  }
  template <class T>
  static size_t bytes_of(const DeviceBuffer<T>& b) {
    return b.size() * sizeof(T);
  }
};

// A device's KnnDevice from one search to the next, so that a search of the same sizes allocates
// nothing (a buffer is resized only when a search needs another size) and creates no stream:
// allocating and freeing a small search's buffers took 0.6-0.9 ms of its 14-16 ms on an H100.
// Kept only after a search that ended normally and while its buffers take at most
// kKeptDeviceBytes, so that a large search leaves no memory behind; those kept are never freed
// (a static destructor would run after the CUDA runtime has shut down). Construct it with its
// device current, and destroy it so too.
constexpr size_t kKeptDeviceBytes = size_t(512) << 20;

class KnnDeviceLease {
 public:
  explicit KnnDeviceLease(int device) : device_(device) {
    {
      std::lock_guard<std::mutex> lock(mutex());
      std::vector<std::unique_ptr<KnnDevice>>& idle = kept()[device];
      if (!idle.empty()) {
        dev_ = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (!dev_) dev_ = std::make_unique<KnnDevice>();
    if (!dev_->stream) dev_->stream = std::make_unique<Stream>();
  }
  ~KnnDeviceLease() {
    if (finished_ && dev_->bytes() <= kKeptDeviceBytes) {
      try {
        std::lock_guard<std::mutex> lock(mutex());
        kept()[device_].push_back(std::move(dev_));
        return;
      } catch (...) {  // no room to keep it: freed below
      }
    }
    // Freed here: on an error, once the stream no longer reads the host's memory.
    if (dev_ && cudaStreamSynchronize(dev_->stream->get()) != cudaSuccess) cudaGetLastError();
  }
  KnnDeviceLease(const KnnDeviceLease&) = delete;
  KnnDeviceLease& operator=(const KnnDeviceLease&) = delete;

  KnnDevice& get() { return *dev_; }
  // The search on this device ended normally: its buffers may serve the next one.
  void finished() { finished_ = true; }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<int, std::vector<std::unique_ptr<KnnDevice>>>& kept() {
    static auto* devices = new std::map<int, std::vector<std::unique_ptr<KnnDevice>>>;
    return *devices;
  }
  int device_;
  std::unique_ptr<KnnDevice> dev_;
  bool finished_ = false;
};

// The exact search of some queries (ids) on the device: every distance, a stable segmented sort
// (ties stay in index order), the first k that are not the query itself.
void exact_on_device(KnnDevice& dev, cudaStream_t s, KnnMetric m, const double* queries64, const double* query_norms,
                     const double* refs64, const double* ref_norms, int64_t n_refs, int32_t stride, int32_t k, const std::vector<int32_t>& ids,
                     bool self, KnnResult& out) {
  const int64_t per_sort = std::max<int64_t>(1, (int64_t(1) << 27) / n_refs);
  for (size_t e0 = 0; e0 < ids.size(); e0 += per_sort) {
    const int32_t ne = static_cast<int32_t>(std::min<int64_t>(per_sort, ids.size() - e0));
    const int64_t total = int64_t(ne) * n_refs;
    dev.ids.upload(ids.data() + e0, ne, s);
    dev.exact_distance.reserve(total);
    dev.exact_distance_alt.reserve(total);
    dev.exact_index.reserve(total);
    dev.exact_index_alt.reserve(total);
    exact_kernel<<<dim3(static_cast<unsigned>(std::min<int64_t>((n_refs + 255) / 256, 4096)), ne), 256, 0, s>>>(
        m, queries64, refs64, query_norms, ref_norms, stride, n_refs, dev.ids.data(),
        dev.exact_distance.data(), dev.exact_index.data());
    check_launch("exact_kernel");
    cub::DoubleBuffer<double> keys(dev.exact_distance.data(), dev.exact_distance_alt.data());
    cub::DoubleBuffer<int32_t> values(dev.exact_index.data(), dev.exact_index_alt.data());
    sort_segments(keys, values, ne, n_refs, dev.offsets, dev.sort_temp, s);
    const int32_t take = static_cast<int32_t>(std::min<int64_t>(k + 1, n_refs));
    std::vector<double> dist(size_t(ne) * take);
    std::vector<int32_t> idx(dist.size());
    FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(dist.data(), take * sizeof(double), keys.Current(), n_refs * sizeof(double),
                                       take * sizeof(double), ne, cudaMemcpyDeviceToHost, s));
    FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(idx.data(), take * sizeof(int32_t), values.Current(), n_refs * sizeof(int32_t),
                                       take * sizeof(int32_t), ne, cudaMemcpyDeviceToHost, s));
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    for (int32_t r = 0; r < ne; ++r) {
      const int64_t id = ids[e0 + r];
      int32_t written = 0;
      for (int32_t c = 0; c < take && written < k; ++c) {
        const int32_t j = idx[size_t(r) * take + c];
        if (self && j == id) continue;
        out.index[id * k + written] = j;
        out.distance[id * k + written] = knn_key_distance(m, dist[size_t(r) * take + c]);
        ++written;
      }
    }
  }
}

}  // namespace

std::shared_ptr<GpuKnnKept> gpu_knn_keep(const KnnPoints& reference, const GpuOptions& options) {
  auto kept = std::make_shared<GpuKnnKept>();
  kept->n = reference.n;
  kept->stride = reference.stride;
  kept->stride32 = (reference.dim + kKnnStride32 - 1) / kKnnStride32 * kKnnStride32;
  const std::vector<double> centre = knn_centre(reference);
  const KnnFloatRows rows32 =
      knn_float_rows(reference, centre.empty() ? nullptr : centre.data(), kept->stride32, options.host_threads);
  std::vector<float> transposed(rows32.rows.size());
  for (int64_t r = 0; r < reference.n; ++r)
    for (int32_t t = 0; t < kept->stride32; ++t)
      transposed[size_t(t) * reference.n + r] = rows32.rows[r * kept->stride32 + t];
  for (int device : options.devices) {
    ScopedDevice on(device);
    auto d = std::make_unique<GpuKnnKept::OnDevice>();
    d->device = device;
    d->rows32.upload(rows32.rows.data(), rows32.rows.size());
    d->rows32_t.upload(transposed.data(), transposed.size());
    d->rows64.upload(reference.rows.data(), reference.rows.size());
    d->norms.upload(reference.norms.data(), reference.norms.size());
    FSGPU_CUDA_CHECK(cudaDeviceSynchronize());  // the searches' streams do not wait for the default one
    kept->devices.push_back(std::move(d));
  }
  return kept;
}

KnnResult gpu_knn(const KnnPoints& reference, const KnnPoints* queries, int32_t k, const GpuOptions& options,
                  const Checkpoint& between_blocks, GpuKnnPhases* phases, const GpuKnnKept* kept) {
  if (options.devices.empty()) throw std::runtime_error("no GPU device given");
  check_knn_arguments(reference, queries, k);
  const bool self = queries == nullptr;
  const KnnPoints& q = self ? reference : *queries;
  if (k > kMaxGpuK)
    throw std::runtime_error("the GPU search takes k up to " + std::to_string(kMaxGpuK) + ", not " + std::to_string(k) +
                             "; use backend = \"cpu\"");
  if (reference.n > INT_MAX || q.n > INT_MAX) throw std::runtime_error("more than 2^31 points");
  const KnnMetric m = reference.metric;
  const int32_t stride = reference.stride, stride32 = (reference.dim + kChunk - 1) / kChunk * kChunk;
  const int32_t stride16 = (reference.dim + kChunk16 - 1) / kChunk16 * kChunk16;
  const int32_t capacity32 = static_cast<int32_t>(std::min<int64_t>(k + kExtra32, reference.n));
  const int32_t capacity16 = static_cast<int32_t>(std::min<int64_t>(k + kExtra16, reference.n));

  // Single-precision rows (centred for euclidean and manhattan) and each query's error bounds.
  // The correlation metrics' float rows are their double rows rounded (float_rows_kernel), which
  // a device holding every point makes itself: the host makes them only for a device that
  // streams (host_rows32), once.
  const std::vector<double> centre = knn_centre(reference);
  const double* centre_data = centre.empty() ? nullptr : centre.data();
  const bool rows_on_device = is_correlation(m);
  KnnFloatRows refs32 = knn_float_rows(reference, centre_data, stride32, options.host_threads, !rows_on_device);
  KnnFloatRows own32 = self ? KnnFloatRows() : knn_float_rows(q, centre_data, stride32, options.host_threads, !rows_on_device);
  const KnnFloatRows& q32 = self ? refs32 : own32;
  const std::vector<double> bound16 = knn_score_bounds(m, Precision::half, stride16, q32, refs32);
  const std::vector<double> bound32 = knn_score_bounds(m, Precision::single, stride32, q32, refs32);
  std::once_flag rows32_once;
  auto host_rows32 = [&] {
    std::call_once(rows32_once, [&] {
      if (!rows_on_device) return;
      refs32 = knn_float_rows(reference, nullptr, stride32, options.host_threads);
      if (!self) own32 = knn_float_rows(q, nullptr, stride32, options.host_threads);
    });
  };

  KnnResult out;
  out.n_queries = q.n;
  out.k = k;
  out.index.resize(static_cast<size_t>(q.n) * k);
  out.distance.resize(out.index.size());

  // Queries go to the devices in contiguous ranges, and through each in batches: enough blocks
  // to fill the device, about a second of work each (for interrupts). A pair costs its
  // dimensions plus about 256 dimensions' worth of candidate selection (with few dimensions,
  // 1.5 million points in 50, batches by dimensions alone took 4 s).
  const size_t n_devices = std::min<size_t>(options.devices.size(), static_cast<size_t>((q.n + kTile - 1) / kTile));
  const int64_t per_device = (q.n + int64_t(n_devices) - 1) / int64_t(n_devices);
  std::atomic<bool> cancel(false);
  std::atomic<int64_t> rows_done(0);  // queries through their first pass, for progress
  std::vector<GpuKnnPhases> device_phases(n_devices);
  auto work = [&](size_t d) {
    const int device = options.devices[d];
    ScopedDevice on(device);
    KnnDeviceLease lease(device);
    KnnDevice& dev = lease.get();
    cudaStream_t s = dev.stream->get();
    GpuKnnPhases& ph = device_phases[d];
    PhaseClock clock(s);
    auto mark = [&](double& phase) { clock.mark(phase); };
    int multiprocessors = 0, major = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    const int64_t first = int64_t(d) * per_device, last = std::min(q.n, first + per_device);
    const double pair_work = static_cast<double>(reference.n) * (stride32 + 256);
    const int64_t batch = std::clamp<int64_t>(int64_t(4e13 / pair_work) / kTile * kTile,
                                              int64_t(4) * multiprocessors * kTile, int64_t(1) << 20);
    const int64_t rows = std::min(batch, last - first);
    const int32_t max_capacity = std::max(capacity16, capacity32);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t budget = options.memory_limit > 0 ? options.memory_limit : static_cast<int64_t>(free_bytes * 0.8);
    const int64_t point_bytes = int64_t(stride32) * 4 + int64_t(stride16) * 2 + int64_t(stride) * 8 + 8;
    const int64_t batch_bytes = rows * (int64_t(max_capacity) * 8 + 4 + int64_t(k) * 12 + 8);
    const GpuKnnKept::OnDevice* on_device = kept ? kept->on(device, reference) : nullptr;
    const int64_t needed =
        (on_device ? 0 : reference.n * point_bytes) + (self ? 0 : q.n * point_bytes) + q.n * 16 + batch_bytes;
    // Resident: every point on the device, the rerank there too. Otherwise blocks of float
    // reference rows stream through a single-precision pass, and the host reranks.
    const bool resident = needed <= budget;
    const MmaPass mma = resident && is_correlation(m) && major >= 8
                            ? choose_mma_pass(stride16, block_shared_limit(device, options.shared_memory_cap),
                                              runs_wgmma(device))
                            : MmaPass{};
    const bool tensor = mma.kernel != nullptr;
    const int64_t block =
        resident ? reference.n
                 : std::max<int64_t>(kTile, (budget - batch_bytes - (last - first) * int64_t(stride32) * 4) / 2 /
                                                (int64_t(stride32) * 4) / kTile * kTile);
    // Query data by query id (ids index them; in streaming mode only this device's rows, from first).
    const int64_t query_base = resident ? 0 : first;
    // Resident: the reference rows the index keeps on this device, or uploaded now.
    const float* refs32_d = nullptr;
    const double *refs64_d = nullptr, *ref_norms_d = nullptr;
    if (resident && on_device) {
      refs32_d = on_device->rows32.data();
      refs64_d = on_device->rows64.data();
      ref_norms_d = on_device->norms.data();
    } else if (resident) {
      upload_staged(dev.refs64, reference.rows.data(), reference.rows.size(), s, options.host_threads);
      dev.ref_norms.upload(reference.norms.data(), reference.norms.size(), s);
      if (rows_on_device) float_rows(dev.refs64.data(), dev.ref_norms.data(), reference, stride32, dev.refs32, s);
      else upload_staged(dev.refs32, refs32.rows.data(), refs32.rows.size(), s, options.host_threads);
      refs32_d = dev.refs32.data();
      refs64_d = dev.refs64.data();
      ref_norms_d = dev.ref_norms.data();
    }
    if (resident) {
      if (!self) {
        upload_staged(dev.queries64, q.rows.data(), q.rows.size(), s, options.host_threads);
        dev.query_norms.upload(q.norms.data(), q.norms.size(), s);
        if (rows_on_device) float_rows(dev.queries64.data(), dev.query_norms.data(), q, stride32, dev.queries32, s);
        else upload_staged(dev.queries32, q32.rows.data(), q32.rows.size(), s, options.host_threads);
      }
      upload_staged(dev.bound16, bound16.data(), bound16.size(), s, options.host_threads);
      upload_staged(dev.bound32, bound32.data(), bound32.size(), s, options.host_threads);
      if (tensor) {
        to_half_rows(refs32_d, reference.n, stride32, stride16, mma.tiled, dev.refs16, s);
        if (!self) to_half_rows(dev.queries32.data(), q.n, stride32, stride16, mma.tiled, dev.queries16, s);
      }
    } else {
      host_rows32();
      dev.refs32.resize(block * stride32);
      upload_staged(dev.queries32, q32.rows.data() + first * stride32, (last - first) * stride32, s, options.host_threads);
    }
    dev.heaps.resize(rows * max_capacity);
    dev.sizes.resize(rows);
    dev.out_index.resize(rows * k);
    dev.out_distance.resize(rows * k);
    dev.unsure.resize(rows);
    dev.n_unsure.resize(1);
    dev.ids.resize(rows);
    mark(ph.upload);
    const float* queries32 = self && resident ? refs32_d : dev.queries32.data();
    const __half* queries16 = self ? dev.refs16.data() : dev.queries16.data();
    const double* refs64 = refs64_d;
    const double* queries64 = self ? refs64 : dev.queries64.data();
    const double* ref_norms = reference.norms.empty() ? nullptr : ref_norms_d;
    const double* query_norms = reference.norms.empty() ? nullptr : self ? ref_norms : dev.query_norms.data();

    // A pass over some queries (ids, or first.. without): candidates, then (resident) the rerank
    // on the device, whose unsure ids are returned, or (streaming) the rerank on the host.
    auto pass = [&](Precision precision, const int32_t* ids_host, int64_t first_id, int64_t count,
                    std::vector<int32_t>& unsure) {
      const int32_t capacity = precision == Precision::half ? capacity16 : capacity32;
      if (ids_host) dev.ids.upload(ids_host, count, s);
      const QueryRows rows_of{ids_host ? dev.ids.data() : nullptr, first_id - query_base, count};
      FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.sizes.data(), 0, count * sizeof(int32_t), s));
      const unsigned blocks = static_cast<unsigned>((count + kTile - 1) / kTile);
      for (int64_t r0 = 0; r0 < reference.n; r0 += block) {
        const int64_t nr = std::min(block, reference.n - r0);
        if (!resident) upload_staged(dev.refs32, refs32.rows.data() + r0 * stride32, nr * stride32, s, options.host_threads);
        CandidateArgs ca{};
        ca.rows = rows_of;
        ca.n_block = nr;
        ca.first_ref = r0;
        ca.query_base = query_base;
        ca.self = self;
        ca.heaps = dev.heaps.data();
        ca.sizes = dev.sizes.data();
        ca.capacity = capacity;
        if (precision == Precision::half) {
          ca.queries = queries16;
          ca.refs = dev.refs16.data();
          ca.stride = stride16;
          mma.kernel<<<blocks, mma.threads, mma.shared, s>>>(ca);
        } else {
          ca.queries = queries32;
          ca.refs = resident ? refs32_d : dev.refs32.data();
          ca.stride = stride32;
          if (is_correlation(m)) candidates_kernel<TileKind::dot><<<blocks, kThreads, 0, s>>>(ca);
          else if (m == KnnMetric::euclidean) candidates_kernel<TileKind::squared_difference><<<blocks, kThreads, 0, s>>>(ca);
          else candidates_kernel<TileKind::absolute_difference><<<blocks, kThreads, 0, s>>>(ca);
        }
        check_launch("candidates kernel");
      }
      mark(ph.candidates);
      std::vector<int32_t> sizes(count);
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(sizes.data(), dev.sizes.data(), count * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
      if (!resident) {
        std::vector<KnnCand> heaps(size_t(count) * capacity);
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(heaps.data(), dev.heaps.data(), heaps.size() * sizeof(KnnCand),
                                         cudaMemcpyDeviceToHost, s));
        mark(ph.download);
        rerank_candidates(reference, q, self, first_id, count, heaps.data(), sizes.data(), capacity,
                          bound32.data() + first_id, out, options.host_threads, &ph.exact_rows);
        mark(ph.rerank);
      } else {
        RerankArgs ra{};
        ra.metric = m;
        ra.rows = rows_of;
        ra.queries64 = queries64;
        ra.refs64 = refs64;
        ra.query_norms = query_norms;
        ra.ref_norms = ref_norms;
        ra.bound = precision == Precision::half ? dev.bound16.data() : dev.bound32.data();
        ra.stride = stride;
        ra.heaps = dev.heaps.data();
        ra.sizes = dev.sizes.data();
        ra.capacity = capacity;
        ra.k = k;
        ra.out_index = dev.out_index.data();
        ra.out_distance = dev.out_distance.data();
        ra.unsure = dev.unsure.data();
        ra.n_unsure = dev.n_unsure.data();
        FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.n_unsure.data(), 0, sizeof(int32_t), s));
        int32_t pow2 = 1;
        while (pow2 < capacity) pow2 *= 2;
        const size_t shared = size_t(pow2) * (sizeof(float) + sizeof(int32_t) + sizeof(double) + sizeof(int32_t));
        allow_dynamic_shared(rerank_kernel);
        rerank_kernel<<<static_cast<unsigned>(count), 128, shared, s>>>(ra);
        check_launch("rerank_kernel");
        int32_t n_unsure = 0;
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(&n_unsure, dev.n_unsure.data(), sizeof n_unsure, cudaMemcpyDeviceToHost, s));
        mark(ph.rerank);
        // Rows in order go straight into the result (page-locked when it is a kept host block,
        // so not through the driver's pageable copy); a retry's rows, by id, by way of a buffer.
        std::vector<int32_t> index;
        std::vector<double> distance;
        int32_t* index_to = out.index.data() + first_id * k;
        double* distance_to = out.distance.data() + first_id * k;
        if (ids_host) {
          index.resize(size_t(count) * k);
          distance.resize(index.size());
          index_to = index.data();
          distance_to = distance.data();
        }
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(index_to, dev.out_index.data(), size_t(count) * k * sizeof(int32_t),
                                         cudaMemcpyDeviceToHost, s));
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(distance_to, dev.out_distance.data(), size_t(count) * k * sizeof(double),
                                         cudaMemcpyDeviceToHost, s));
        unsure.resize(n_unsure);
        if (n_unsure)
          FSGPU_CUDA_CHECK(cudaMemcpyAsync(unsure.data(), dev.unsure.data(), n_unsure * sizeof(int32_t),
                                           cudaMemcpyDeviceToHost, s));
        mark(ph.download);
        for (int64_t r = 0; ids_host && r < count; ++r) {  // local rows to query ids
          const int64_t id = ids_host[r];
          std::copy(index.begin() + r * k, index.begin() + (r + 1) * k, out.index.begin() + id * k);
          std::copy(distance.begin() + r * k, distance.begin() + (r + 1) * k, out.distance.begin() + id * k);
        }
      }
      for (int32_t v : sizes) ph.candidates_per_query += v;
    };

    std::vector<int32_t> unsure, all_unsure;
    for (int64_t b0 = first; b0 < last && !cancel; b0 += batch) {
      const int64_t nb = std::min(last, b0 + batch) - b0;
      pass(tensor ? Precision::half : Precision::single, nullptr, b0, nb, unsure);
      all_unsure.insert(all_unsure.end(), unsure.begin(), unsure.end());
      rows_done += nb;
    }
    // Rows a half-precision pass could not settle: again in single precision; then exactly.
    if (tensor && !all_unsure.empty() && !cancel) {
      std::vector<int32_t> again;
      for (size_t e = 0; e < all_unsure.size(); e += rows) {
        const int64_t n = std::min<int64_t>(rows, all_unsure.size() - e);
        pass(Precision::single, all_unsure.data() + e, 0, n, unsure);
        again.insert(again.end(), unsure.begin(), unsure.end());
      }
      ph.retried_rows += static_cast<int64_t>(all_unsure.size());
      all_unsure.swap(again);
    }
    if (!all_unsure.empty() && !cancel) {
      exact_on_device(dev, s, m, queries64, query_norms, refs64, ref_norms, reference.n, stride, k, all_unsure, self,
                      out);
      ph.exact_rows += static_cast<int64_t>(all_unsure.size());
      mark(ph.rerank);
    }
    lease.finished();
  };
  run_on_devices(
      n_devices, work, [&] { if (between_blocks) between_blocks(static_cast<double>(rows_done) / q.n); }, cancel);
  if (phases) {
    for (const GpuKnnPhases& p : device_phases) *phases += p;
    phases->candidates_per_query /= static_cast<double>(q.n);
  }
  return out;
}

}  // namespace fsgpu
