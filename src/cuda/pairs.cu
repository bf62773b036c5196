// The pair search on GPUs: n(a, b, y) of every pair by AND and popcount of one-hot bitmaps.
//
// Two kernels count. The tensor-core kernel (sm_80 and later, the default there) treats the
// one-hot planes of two features as a binary matrix product: rows (feature i, level a) against
// columns (feature j, level b) over 256 samples of one class per mma (m16n8k256, AND + POPC).
// Each class is padded to whole 256-sample chunks, so a chunk's counts are n(a, b, y) of one
// class. Features are stored in pairs of levels, so that a lane's four results of an mma are the
// cells (2p..2p+1, 2q..2q+1) of ONE pair: every lane owns its pairs and sums their plogp terms
// in registers, with no exchange between lanes. Counting then costs a few mma per pair; the
// plogp look-ups of the (levels^2 x (classes + 1)) cells, the same in both kernels, bound it.
// The cells of a feature's last level could be derived from its marginals, but that saves mma
// work only, not look-ups, so every cell is counted.
//
// The popcount kernel (devices without binary tensor cores, or when asked): each feature becomes
// one bitmap per level over the class-sorted samples, every class starting on a fresh 32-bit
// word, so n(a, b, y) = sum over class y's words of popc(bits(Xi=a) & bits(Xj=b)). Bitmaps are
// stored level-major with features innermost, bits[(level * words + word) * stride + f], so the
// 16 lanes of a half-warp that hold consecutive features read consecutive words. A block takes a
// 64 x 64 tile of (row feature, column feature) pairs; each thread counts 4 x 4 pairs in
// registers, so every word loaded feeds four popcounts.
//
// Both make the sums of pairs.h through the same fixed-point plogp table as the CPU (exact
// integer sums, so their order does not matter), so the two agree bitwise. Pairs that pass the
// collector's filter (its current k-th best, refreshed between batches) are appended to an
// output list (warp-aggregated): only those reach the host.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "b1_mma.cuh"
#include "cuda_check.cuh"

namespace fsgpu {

namespace {

constexpr int kPairTile = 64;                       // features per side of a block's tile
constexpr int kPairSide = 16;                       // threads per side
constexpr int kPairsPerSide = kPairTile / kPairSide;  // pairs per thread per side
constexpr int kPairThreads = kPairSide * kPairSide;
// Pairs evaluated per batch bound the output list (records of 40 bytes).
constexpr int64_t kBatchPairs = int64_t(1) << 23;
// Popcounts per batch (pairs x levels^2 x words): between batches the collector's filter is
// refreshed and the user may interrupt, so a batch stays well under a second on one GPU.
constexpr int64_t kBatchPopcounts = int64_t(1000000) * 1000000;
// Free device memory the search leaves alone: the runtime's own and allocation rounding.
constexpr int64_t kMemoryHeadroom = int64_t(256) << 20;

// The tensor-core kernel: column features a warp counts at once (kTensorTiles mma tiles of 4
// features x 2 levels), against the warp's 8 row features.
constexpr int kTensorTiles = 4;
constexpr int kTensorColumns = 4 * kTensorTiles;
constexpr int kChunkSamples = 256;  // samples of one mma
constexpr int kChunkWords = 16;     // 32-bit words of one feature's level pair and chunk
// The plogp table goes to shared memory up to this many entries (48 KB, no opt-in needed).
constexpr int32_t kSharedTableEntries = 6144;

struct PairKernelArgs {
  const uint32_t* bits;
  int64_t stride;          // popcount: features, padded to whole tiles
  int32_t words;           // popcount: per level
  int32_t levels;          // popcount: the largest level count
  const int32_t* class_words;  // popcount: n_classes + 1 word offsets
  int32_t level_pairs;     // tensor: ceil(largest level count / 2)
  int32_t chunks;          // tensor: 256-sample chunks, classes padded to whole chunks
  const int32_t* class_chunks;  // tensor: n_classes + 1 chunk offsets
  int32_t table_size;      // entries of plogp
  int32_t n_classes;
  const int64_t* plogp;
  const int64_t* relevance;
  const int64_t* x_terms;
  const int32_t* rows;
  const int32_t* row_rank;
  int32_t n_rows, n_features;
  int32_t row_begin, row_end;  // the task's row positions (a tile of the rows)
  bool all_pairs;
  int32_t first_row_tile, first_col_tile;
  PairConstants constants;
  PairFilter filter;
  PairRecord* out;
  unsigned long long* n_out;
};

// One thread per feature and word: bit k of bits[(a * words + w) * stride + f] is whether
// feature f has code a at the k-th sample of that word. Words are strided over grid.y, which
// cannot exceed 65,535 (2 million samples).
__global__ void build_bitmaps_kernel(const uint16_t* codes, int32_t n_samples, int64_t n_features, int64_t stride,
                                     int32_t words, int32_t levels, const int32_t* class_start,
                                     const int32_t* class_words, int32_t n_classes, uint32_t* bits) {
  const int64_t f = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (f >= stride) return;
  int32_t c = 0;  // the class of word w; words only grow, so the search resumes where it was
  for (int32_t w = blockIdx.y; w < words; w += gridDim.y) {
    while (w >= class_words[c + 1]) ++c;
    const int32_t first = class_start[c] + (w - class_words[c]) * 32;
    const int32_t last = min(first + 32, class_start[c + 1]);
    for (int32_t a = 0; a < levels; ++a) {
      uint32_t word = 0;
      if (f < n_features)
        for (int32_t p = first; p < last; ++p) word |= uint32_t(codes[f * n_samples + p] == a) << (p - first);
      bits[(int64_t(a) * words + w) * stride + f] = word;
    }
  }
}

// Appends the pair (i, j) of row position row_pos to the output list when the task evaluates it
// (a position of this tile of the rows, a real column, counted from this side) and it passes
// the filter. One atomic per warp; every lane of the warp calls it.
__device__ inline void emit_pair(const PairKernelArgs& a, int32_t row_pos, int32_t i, int32_t j, int64_t joint_class,
                                 int64_t joint, int32_t cells) {
  bool keep = row_pos >= a.row_begin && row_pos < a.row_end && j < a.n_features && j != i;
  if (keep) keep = a.all_pairs ? j > i : (a.row_rank[j] < 0 || a.row_rank[j] > row_pos);
  PairRecord rec;
  if (keep) {
    rec.i = min(i, j);
    rec.j = max(i, j);
    rec.key = pair_key(a.constants, joint_class, joint, a.relevance[rec.i], a.relevance[rec.j], a.x_terms[rec.i],
                       a.x_terms[rec.j]);
    rec.joint_class = joint_class;
    rec.joint = joint;
    rec.cells = cells;
    keep = passes(a.filter, rec.key, rec.i, rec.j);
  }
  const unsigned lane = threadIdx.x % 32;
  const unsigned mask = __ballot_sync(0xffffffffu, keep);
  if (!mask) return;
  unsigned long long base = 0;
  if (lane == 0) base = atomicAdd(a.n_out, static_cast<unsigned long long>(__popc(mask)));
  base = __shfl_sync(0xffffffffu, base, 0);
  if (keep) a.out[base + __popc(mask & ((1u << lane) - 1))] = rec;
}

__global__ void __launch_bounds__(kPairThreads) pair_kernel(PairKernelArgs a) {
  const int row_tile = a.first_row_tile + blockIdx.y, col_tile = a.first_col_tile + blockIdx.x;
  if (a.all_pairs && col_tile < row_tile) return;  // the lower triangle: counted from the other side
  const int tx = threadIdx.x % kPairSide, ty = threadIdx.x / kPairSide;
  int32_t row_pos[kPairsPerSide], fi[kPairsPerSide], fj[kPairsPerSide];
  for (int r = 0; r < kPairsPerSide; ++r) {
    row_pos[r] = row_tile * kPairTile + ty + kPairSide * r;
    fi[r] = row_pos[r] < a.n_rows ? a.rows[row_pos[r]] : 0;
    fj[r] = col_tile * kPairTile + tx + kPairSide * r;  // < stride: padded bitmaps are zero
  }
  int64_t joint_class[kPairsPerSide][kPairsPerSide] = {}, joint[kPairsPerSide][kPairsPerSide] = {};
  int32_t cells[kPairsPerSide][kPairsPerSide] = {};
  for (int32_t la = 0; la < a.levels; ++la) {
    for (int32_t lb = 0; lb < a.levels; ++lb) {
      uint32_t n_ab[kPairsPerSide][kPairsPerSide] = {};
      for (int32_t c = 0; c < a.n_classes; ++c) {
        uint32_t n_aby[kPairsPerSide][kPairsPerSide] = {};
        const int32_t w_end = __ldg(a.class_words + c + 1);
        for (int32_t w = __ldg(a.class_words + c); w < w_end; ++w) {
          const uint32_t* bits_a = a.bits + (int64_t(la) * a.words + w) * a.stride;
          const uint32_t* bits_b = a.bits + (int64_t(lb) * a.words + w) * a.stride;
          uint32_t wi[kPairsPerSide], wj[kPairsPerSide];
          for (int r = 0; r < kPairsPerSide; ++r) wi[r] = __ldg(bits_a + fi[r]);
          for (int s = 0; s < kPairsPerSide; ++s) wj[s] = __ldg(bits_b + fj[s]);
          for (int r = 0; r < kPairsPerSide; ++r)
            for (int s = 0; s < kPairsPerSide; ++s) n_aby[r][s] += __popc(wi[r] & wj[s]);
        }
        for (int r = 0; r < kPairsPerSide; ++r)
          for (int s = 0; s < kPairsPerSide; ++s) {
            joint_class[r][s] += __ldg(a.plogp + n_aby[r][s]);
            n_ab[r][s] += n_aby[r][s];
          }
      }
      for (int r = 0; r < kPairsPerSide; ++r)
        for (int s = 0; s < kPairsPerSide; ++s) {
          joint[r][s] += __ldg(a.plogp + n_ab[r][s]);
          cells[r][s] += n_ab[r][s] != 0;
        }
    }
  }
  for (int r = 0; r < kPairsPerSide; ++r)
    for (int s = 0; s < kPairsPerSide; ++s)
      emit_pair(a, row_pos[r], fi[r], fj[s], joint_class[r][s], joint[r][s], cells[r][s]);
}

// The tensor-core kernel (see the top of the file). Bitmaps: per feature, level pair p and
// chunk k, 16 words at ((f * level_pairs + p) * chunks + k) * 16, word 4t + m holding samples
// 32t.. (m = 0) and 128 + 32t.. (m = 1) of the chunk at level 2p, and the same at level 2p + 1
// (m = 2, 3): lane (g, t) reads its row fragment as one 16-byte word, its column fragment as
// one 8-byte word. A block takes 64 row positions x 64 columns: warp w the rows 8w..8w+7
// (lane g: row 8w + g, at levels 2p and 2p + 1), against 16 columns at a time (mma tile nt:
// features 4nt..4nt+3 at levels 2q, 2q + 1; lane t receives those of feature 4nt + t).
template <bool SharedTable>
__global__ void __launch_bounds__(kPairThreads, 2) pair_tensor_kernel(PairKernelArgs a) {
  extern __shared__ int64_t table[];
  const int row_tile = a.first_row_tile + blockIdx.y, col_tile = a.first_col_tile + blockIdx.x;
  if (a.all_pairs && col_tile < row_tile) return;  // the lower triangle: counted from the other side
  if (SharedTable) {
    for (int32_t v = threadIdx.x; v < a.table_size; v += blockDim.x) table[v] = __ldg(a.plogp + v);
    __syncthreads();
  }
  auto plogp = [&](uint32_t n) { return SharedTable ? table[n] : __ldg(a.plogp + n); };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int32_t row_first = row_tile * kPairTile + warp * 8;
  if (row_first >= a.row_end || row_first + 8 <= a.row_begin) return;  // the whole warp: no mma left
  const int32_t row_pos = row_first + g;
  const int32_t i = a.rows[min(row_pos, a.n_rows - 1)];  // rows past the end count, unreported
  const int64_t feature_words = int64_t(a.level_pairs) * a.chunks * kChunkWords;
  const uint32_t* row_bits = a.bits + i * feature_words + 4 * t;
  for (int32_t col0 = col_tile * kPairTile; col0 < (col_tile + 1) * kPairTile && col0 < a.n_features;
       col0 += kTensorColumns) {
    if (a.all_pairs && col0 + kTensorColumns - 1 <= row_first) continue;  // every column <= every row
    const uint32_t* col_bits[kTensorTiles];
#pragma unroll
    for (int nt = 0; nt < kTensorTiles; ++nt)
      col_bits[nt] = a.bits + min(col0 + 4 * nt + g / 2, a.n_features - 1) * feature_words + 4 * t + 2 * (g % 2);
    // The fragments of step (p, q, k): level pair p of the rows, q of the columns, chunk k.
    auto fetch = [&](int32_t p, int32_t q, int32_t k, uint32_t(&x)[4], uint32_t(&y)[kTensorTiles][2]) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(row_bits + (int64_t(p) * a.chunks + k) * kChunkWords));
      x[0] = v.x, x[1] = v.z, x[2] = v.y, x[3] = v.w;
#pragma unroll
      for (int nt = 0; nt < kTensorTiles; ++nt) {
        const uint2 w = __ldg(reinterpret_cast<const uint2*>(col_bits[nt] + (int64_t(q) * a.chunks + k) * kChunkWords));
        y[nt][0] = w.x, y[nt][1] = w.y;
      }
    };
    // Steps run (p, q) by (p, q), chunks innermost; each step's fragments are loaded one step
    // ahead, so that their latency hides behind the mma and plogp look-ups of the step before
    // (the loop bounds are known only at run time: the compiler cannot do it). (np, nq, nk) is
    // the next step, wrapping to the first after the last (a load whose result is not used).
    uint32_t x[4], y[kTensorTiles][2];
    fetch(0, 0, 0, x, y);
    int32_t np = 0, nq = 0, nk = 0;
    auto advance = [&] {
      if (++nk < a.chunks) return;
      nk = 0;
      if (++nq < a.level_pairs) return;
      nq = 0;
      if (++np == a.level_pairs) np = 0;
    };
    advance();
    int64_t joint_class[kTensorTiles] = {}, joint[kTensorTiles] = {};
    int32_t cells[kTensorTiles] = {};
    for (int32_t p = 0; p < a.level_pairs; ++p)
      for (int32_t q = 0; q < a.level_pairs; ++q) {
        uint32_t n_ab[kTensorTiles][4] = {};
        int32_t n_aby[kTensorTiles][4] = {};
        int32_t c = 0, class_end = __ldg(a.class_chunks + 1);
        for (int32_t k = 0; k < a.chunks; ++k) {
          uint32_t x_next[4], y_next[kTensorTiles][2];
          fetch(np, nq, nk, x_next, y_next);
          advance();
#pragma unroll
          for (int nt = 0; nt < kTensorTiles; ++nt) b1_mma_and_popc(n_aby[nt], x, y[nt]);
#pragma unroll
          for (int r = 0; r < 4; ++r) x[r] = x_next[r];
#pragma unroll
          for (int nt = 0; nt < kTensorTiles; ++nt) y[nt][0] = y_next[nt][0], y[nt][1] = y_next[nt][1];
          if (k + 1 < class_end) continue;
          // Class c's last chunk: its n(a, b, y) are complete.
#pragma unroll
          for (int nt = 0; nt < kTensorTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              joint_class[nt] += plogp(n_aby[nt][e]);
              n_ab[nt][e] += n_aby[nt][e];
              n_aby[nt][e] = 0;
            }
          if (++c < a.n_classes) class_end = __ldg(a.class_chunks + c + 1);
        }
#pragma unroll
        for (int nt = 0; nt < kTensorTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            joint[nt] += plogp(n_ab[nt][e]);
            cells[nt] += n_ab[nt][e] != 0;
          }
      }
#pragma unroll
    for (int nt = 0; nt < kTensorTiles; ++nt)
      emit_pair(a, row_pos, i, col0 + 4 * nt + t, joint_class[nt], joint[nt], cells[nt]);
  }
}

// One thread per feature, level pair, chunk and t: the 16 bytes at word 4t of the tensor
// kernel's bitmaps (see above). chunk_begin/chunk_end: the chunk's class-sorted positions.
__global__ void build_tensor_bitmaps_kernel(const uint16_t* codes, int32_t n_samples, int64_t n_features,
                                            int32_t level_pairs, int32_t chunks, const int32_t* chunk_begin,
                                            const int32_t* chunk_end, uint4* bits) {
  const int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (index >= n_features * level_pairs * chunks * 4) return;
  const int t = static_cast<int>(index % 4);
  const int32_t k = static_cast<int32_t>(index / 4 % chunks);
  const int32_t p = static_cast<int32_t>(index / (4 * int64_t(chunks)) % level_pairs);
  const int64_t f = index / (4 * int64_t(chunks) * level_pairs);
  const uint16_t* feature = codes + f * n_samples;
  uint32_t m[4];
  for (int h = 0; h < 2; ++h) {  // samples 32t.. and 128 + 32t.. of the chunk
    const int32_t first = chunk_begin[k] + 32 * (t + 4 * h), last = min(first + 32, chunk_end[k]);
    uint32_t low = 0, high = 0;
    for (int32_t pos = first; pos < last; ++pos) {
      low |= uint32_t(feature[pos] == 2 * p) << (pos - first);
      high |= uint32_t(feature[pos] == 2 * p + 1) << (pos - first);
    }
    m[h] = low;
    m[2 + h] = high;
  }
  bits[index] = make_uint4(m[0], m[1], m[2], m[3]);
}

// A batch in flight: its stream, output list and count. Two per device, so that the next batch
// is queued while the host takes the last one's pairs and the device finishes the one between,
// and no device waits for the host between batches.
// Members are destroyed in reverse order: the device buffers' cudaFree waits for the device, so
// a search left by an exception (an interrupt between batches) frees n_host only after the copy
// into it.
struct PairSlot {
  PinnedBuffer<unsigned long long> n_host;  // pinned: its copy does not hold up the other devices
  std::unique_ptr<Stream> stream;
  DeviceBuffer<PairRecord> out;
  DeviceBuffer<unsigned long long> n_out;
  bool busy = false;
};
constexpr int kSlots = 2;

// One device's copy of the data and its batches in flight.
struct PairDevice {
  int id = 0;
  DeviceBuffer<uint32_t> bits;
  DeviceBuffer<int32_t> class_words, class_chunks, rows, row_rank;
  DeviceBuffer<int64_t> plogp, relevance, x_terms;
  PairSlot slots[kSlots];
};

// Row tiles [first_row_tile, + n_row_tiles) against column tiles [first_col_tile, + n_col_tiles).
struct Batch {
  int32_t first_row_tile = 0, n_row_tiles = 0, first_col_tile = 0, n_col_tiles = 0;
};

// How a search is laid out on the devices and cut into batches, and the memory it needs.
struct PairPlan {
  bool tensor = false;                // the tensor-core kernel, else the popcount one
  int32_t levels = 0, words = 0, n_col_tiles = 0;
  int64_t stride = 0;                 // features, padded to whole tiles
  std::vector<int32_t> class_words;   // n_classes + 1 word offsets
  // The tensor kernel's 256-sample chunks: per class their offsets, per chunk its positions.
  int32_t level_pairs = 0, chunks = 0;
  std::vector<int32_t> class_chunks, chunk_begin, chunk_end;
  std::vector<Batch> batches;
  int64_t capacity = 0;               // records of the largest batch
  size_t n_devices = 0;               // devices used: no more than batches
  int64_t device_bytes = 0;           // what each of them holds at most

  int64_t bitmap_words() const {
    return tensor ? int64_t(level_pairs) * chunks * kChunkWords * n_features : int64_t(levels) * words * stride;
  }
  int64_t n_features = 0;

  // first_tiles > 0: the first batch of each device takes at most that many tiles (then the
  // rest of its row tile), enough for a top-k search's first cut-off.
  static PairPlan of(const PairData& data, const PairTask& task, size_t n_devices, bool tensor,
                     int64_t first_tiles = 0);
};

PairPlan PairPlan::of(const PairData& data, const PairTask& task, size_t n_devices, bool tensor,
                      int64_t first_tiles) {
  const CodeMatrix& x = *data.x;
  const ClassLayout& layout = *data.layout;
  PairPlan p;
  p.tensor = tensor;
  p.n_features = x.n_features;
  p.levels = x.max_levels();
  p.level_pairs = (p.levels + 1) / 2;
  p.class_chunks.assign(layout.n_classes + 1, 0);
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    const int32_t first = layout.class_start[c], last = layout.class_start[c + 1];
    for (int32_t b = first; b < last; b += kChunkSamples) {
      p.chunk_begin.push_back(b);
      p.chunk_end.push_back(std::min(b + kChunkSamples, last));
    }
    p.class_chunks[c + 1] = static_cast<int32_t>(p.chunk_begin.size());
  }
  p.chunks = p.class_chunks.back();
  const int64_t n_features = x.n_features;
  p.stride = (n_features + kPairTile - 1) / kPairTile * kPairTile;
  p.class_words.assign(layout.n_classes + 1, 0);
  for (int32_t c = 0; c < layout.n_classes; ++c)
    p.class_words[c + 1] = p.class_words[c] + (layout.class_start[c + 1] - layout.class_start[c] + 31) / 32;
  p.words = p.class_words.back();
  p.n_col_tiles = static_cast<int32_t>(p.stride / kPairTile);
  const int32_t n_rows = static_cast<int32_t>(task.rows.size());
  // The row tiles that hold the task's row positions (a tile of the rows may start or end
  // inside one: the kernel skips the positions outside it).
  const int32_t first_row_tile = static_cast<int32_t>(task.row_begin / kPairTile);
  const int32_t end_row_tile = static_cast<int32_t>((task.row_end + kPairTile - 1) / kPairTile);

  // Batches of row tiles evaluating at most kBatchPairs pairs (so that the output list cannot
  // overflow) and kBatchPopcounts popcounts; a row tile whose columns alone exceed that is
  // split into ranges of column tiles. The first batch of each device is one row tile (or its
  // first first_tiles), so that a top-k search learns its cut-off early and the host takes few
  // pairs before the filter applies. With all pairs, row tile t starts at column tile t: its
  // blocks left of the diagonal would have nothing to count.
  constexpr int64_t tile = int64_t(kPairTile) * kPairTile;
  const int64_t per_pair = std::max<int64_t>(1, int64_t(p.levels) * p.levels * p.words);
  const int64_t max_tiles = std::max<int64_t>(1, std::min(kBatchPairs, kBatchPopcounts / per_pair) / tile);
  auto first_col = [&](int32_t t) { return task.all_pairs ? t : 0; };
  for (int32_t t = first_row_tile; t < end_row_tile;) {
    const int32_t c0 = first_col(t), cols = p.n_col_tiles - c0;
    const bool first_round = p.batches.size() < n_devices;
    if (first_round && first_tiles > 0 && cols > first_tiles) {
      p.batches.push_back({t, 1, c0, static_cast<int32_t>(first_tiles)});
      for (int32_t c = c0 + static_cast<int32_t>(first_tiles); c < p.n_col_tiles; c += static_cast<int32_t>(max_tiles))
        p.batches.push_back({t, 1, c, static_cast<int32_t>(std::min<int64_t>(max_tiles, p.n_col_tiles - c))});
      ++t;
      continue;
    }
    if (cols > max_tiles) {
      for (int32_t c = c0; c < p.n_col_tiles; c += static_cast<int32_t>(max_tiles))
        p.batches.push_back({t, 1, c, static_cast<int32_t>(std::min<int64_t>(max_tiles, p.n_col_tiles - c))});
      ++t;
      continue;
    }
    Batch b{t, 0, c0, cols};
    int64_t tiles = 0;
    while (t < end_row_tile &&
           (b.n_row_tiles == 0 || (!first_round && tiles + p.n_col_tiles - first_col(t) <= max_tiles))) {
      tiles += p.n_col_tiles - first_col(t);
      ++b.n_row_tiles;
      ++t;
    }
    p.batches.push_back(b);
  }
  for (const Batch& b : p.batches) {
    int64_t tiles = 0;  // tiles with pairs to count: those not left of the diagonal
    for (int32_t t = b.first_row_tile; t < b.first_row_tile + b.n_row_tiles; ++t)
      tiles += b.first_col_tile + b.n_col_tiles - std::max(first_col(t), b.first_col_tile);
    p.capacity = std::max(p.capacity, tiles * tile);
  }
  p.n_devices = std::min(n_devices, p.batches.size());

  // Peak bytes on a device: the bitmaps throughout; first the codes they are built from, then
  // (the codes freed) the sums, rows and output list of the search.
  const int64_t n = x.n_samples;
  const int64_t bitmaps = p.bitmap_words() * int64_t(sizeof(uint32_t));
  const int64_t build = n * n_features * int64_t(sizeof(uint16_t)) +
                        (layout.n_classes + 1 + 2 * int64_t(p.chunks)) * int64_t(sizeof(int32_t));
  const int64_t search = (n + 1 + 2 * n_features) * int64_t(sizeof(int64_t)) +
                         (n_rows + (task.all_pairs ? 0 : n_features)) * int64_t(sizeof(int32_t)) +
                         kSlots * (p.capacity * int64_t(sizeof(PairRecord)) + int64_t(sizeof(unsigned long long)));
  p.device_bytes = bitmaps + 2 * (layout.n_classes + 1) * int64_t(sizeof(int32_t)) + std::max(build, search);
  return p;
}

std::string gigabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

// Why the plan cannot run on the first plan.n_devices of `devices`, or "".
std::string memory_problem(const PairPlan& plan, const PairData& data, const GpuOptions& options) {
  const std::string needs = "the GPU pair search needs " + gigabytes(plan.device_bytes) +
                            " per device for the bitmaps of " + std::to_string(data.x->n_features) + " features (" +
                            std::to_string(plan.levels) + " levels x " + std::to_string(data.x->n_samples) +
                            " samples) and its buffers";
  const std::string advice = "; use backend = \"cpu\" or fewer features";
  if (options.memory_limit > 0 && plan.device_bytes > options.memory_limit)
    return needs + ", above the memory limit of " + gigabytes(options.memory_limit) + advice;
  for (size_t d = 0; d < plan.n_devices; ++d) {
    ScopedDevice on(options.devices[d]);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (plan.device_bytes + kMemoryHeadroom > static_cast<int64_t>(free_bytes))
      return needs + "; device " + std::to_string(options.devices[d]) + " has " +
             gigabytes(static_cast<int64_t>(free_bytes)) + " free" + advice;
  }
  return "";
}

// Whether the search counts on the tensor cores: asked, or automatic and every device has them.
bool tensor_kernel(const PairData& data, const GpuOptions& options) {
  if (data.gpu_kernel != GpuPairKernel::automatic) return data.gpu_kernel == GpuPairKernel::tensor;
  for (int device : options.devices) {
    int major = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 8) return false;
  }
  return true;
}

// Why the tensor kernel, when asked for, cannot run on the devices, or "".
std::string tensor_problem(const PairData& data, const GpuOptions& options) {
  if (data.gpu_kernel != GpuPairKernel::tensor) return "";
  for (int device : options.devices) {
    int major = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 8)
      return "the tensor-core pair search needs binary tensor cores (compute capability 8.0 or later); device " +
             std::to_string(device) + " has " + std::to_string(major) + ".x";
  }
  return "";
}

std::string levels_problem(const PairData& data) {
  const int32_t levels = data.x->max_levels();
  if (levels <= kMaxGpuPairLevels) return "";
  return "the GPU pair search takes features with up to " + std::to_string(kMaxGpuPairLevels) + " levels, not " +
         std::to_string(levels) + "; use backend = \"cpu\" or fewer bins";
}

}  // namespace

std::string gpu_pair_search_problem(const PairData& data, const PairTask& task, const GpuOptions& options) {
  if (!per_count_terms(data.estimator)) return kShrinkCpuOnly;
  std::string problem = levels_problem(data);
  if (!problem.empty()) return problem;
  if (options.devices.empty()) return "no GPU device given";
  problem = tensor_problem(data, options);
  if (!problem.empty()) return problem;
  if (task.n_pairs() == 0) return "";
  return memory_problem(PairPlan::of(data, task, options.devices.size(), tensor_kernel(data, options)), data,
                        options);
}

void gpu_pair_search(const PairData& data, const PairTask& task, const PlogpTable& plogp, PairCollector& collector,
                     const GpuOptions& options, const Checkpoint& between_batches) {
  const CodeMatrix& x = *data.x;
  const ClassLayout& layout = *data.layout;
  const std::string problem = gpu_pair_search_problem(data, task, options);
  if (!problem.empty()) throw std::runtime_error(problem);
  const int32_t n_rows = static_cast<int32_t>(task.rows.size());
  if (task.n_pairs() == 0) return;
  const int64_t n_features = x.n_features;
  // A top-k search's first batch: about 4 x top pairs (tiles hold 4,096).
  const int64_t first_tiles = collector.bounded() ? std::max<int64_t>(4, 4 * collector.top() / 4096 + 1) : 0;
  const PairPlan plan =
      PairPlan::of(data, task, options.devices.size(), tensor_kernel(data, options), first_tiles);

  std::vector<PairDevice> devices(plan.n_devices);
  for (size_t d = 0; d < devices.size(); ++d) {
    PairDevice& dev = devices[d];
    dev.id = options.devices[d];
    ScopedDevice on(dev.id);
    for (PairSlot& slot : dev.slots) slot.stream = std::make_unique<Stream>();
    cudaStream_t s = dev.slots[0].stream->get();
    dev.class_words.upload(plan.class_words.data(), plan.class_words.size(), s);
    dev.class_chunks.upload(plan.class_chunks.data(), plan.class_chunks.size(), s);
    dev.bits.resize(static_cast<size_t>(plan.bitmap_words()));
    {  // the codes only while the bitmaps are built: the plan's peak counts them before the rest
      DeviceBuffer<uint16_t> codes;
      DeviceBuffer<int32_t> class_start, chunk_begin, chunk_end;
      codes.upload(data.codes.data(), data.codes.size(), s);
      if (plan.tensor) {
        chunk_begin.upload(plan.chunk_begin.data(), plan.chunk_begin.size(), s);
        chunk_end.upload(plan.chunk_end.data(), plan.chunk_end.size(), s);
        const int64_t threads = n_features * plan.level_pairs * plan.chunks * 4;
        build_tensor_bitmaps_kernel<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(
            codes.data(), x.n_samples, n_features, plan.level_pairs, plan.chunks, chunk_begin.data(), chunk_end.data(),
            reinterpret_cast<uint4*>(dev.bits.data()));
        check_launch("build_tensor_bitmaps_kernel");
      } else {
        class_start.upload(layout.class_start.data(), layout.class_start.size(), s);
        const dim3 grid(static_cast<unsigned>((plan.stride + 255) / 256),
                        static_cast<unsigned>(std::min<int32_t>(plan.words, 65535)));
        build_bitmaps_kernel<<<grid, 256, 0, s>>>(codes.data(), x.n_samples, n_features, plan.stride, plan.words,
                                                  plan.levels, class_start.data(), dev.class_words.data(),
                                                  layout.n_classes, dev.bits.data());
        check_launch("build_bitmaps_kernel");
      }
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    dev.plogp.upload(plogp.data(), plogp.size(), s);
    dev.relevance.upload(data.sums.relevance.data(), data.sums.relevance.size(), s);
    dev.x_terms.upload(data.sums.x_terms.data(), data.sums.x_terms.size(), s);
    dev.rows.upload(task.rows.data(), task.rows.size(), s);
    if (!task.all_pairs) dev.row_rank.upload(task.row_rank.data(), task.row_rank.size(), s);
    for (PairSlot& slot : dev.slots) {
      slot.out.resize(static_cast<size_t>(plan.capacity));
      slot.n_out.resize(1);
      slot.n_host = PinnedBuffer<unsigned long long>(1);
    }
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));  // host vectors stay alive anyway; errors surface here
  }

  PairKernelArgs args{};
  args.stride = plan.stride;
  args.words = plan.words;
  args.levels = plan.levels;
  args.level_pairs = plan.level_pairs;
  args.chunks = plan.chunks;
  args.table_size = static_cast<int32_t>(plogp.size());
  args.n_classes = layout.n_classes;
  args.n_rows = n_rows;
  args.row_begin = static_cast<int32_t>(task.row_begin);
  args.row_end = static_cast<int32_t>(task.row_end);
  args.n_features = static_cast<int32_t>(n_features);
  args.all_pairs = task.all_pairs;
  args.constants = data.constants;
  const std::vector<Batch>& batches = plan.batches;
  // Queues batch `index` on a free slot of device d with the collector's filter now.
  auto launch = [&](size_t d, size_t index) {
    PairDevice& dev = devices[d];
    PairSlot* slot = dev.slots[0].busy ? &dev.slots[1] : &dev.slots[0];
    const Batch& b = batches[index];
    ScopedDevice on(dev.id);
    cudaStream_t s = slot->stream->get();
    args.filter = collector.filter();
    args.bits = dev.bits.data();
    args.class_words = dev.class_words.data();
    args.class_chunks = dev.class_chunks.data();
    args.plogp = dev.plogp.data();
    args.relevance = dev.relevance.data();
    args.x_terms = dev.x_terms.data();
    args.rows = dev.rows.data();
    args.row_rank = dev.row_rank.data();
    args.first_row_tile = b.first_row_tile;
    args.first_col_tile = b.first_col_tile;
    args.out = slot->out.data();
    args.n_out = slot->n_out.data();
    FSGPU_CUDA_CHECK(cudaMemsetAsync(slot->n_out.data(), 0, sizeof(unsigned long long), s));
    const dim3 grid(b.n_col_tiles, b.n_row_tiles);
    if (!plan.tensor) {
      pair_kernel<<<grid, kPairThreads, 0, s>>>(args);
    } else if (args.table_size <= kSharedTableEntries) {
      pair_tensor_kernel<true><<<grid, kPairThreads, args.table_size * sizeof(int64_t), s>>>(args);
    } else {
      pair_tensor_kernel<false><<<grid, kPairThreads, 0, s>>>(args);
    }
    check_launch("pair_kernel");
    FSGPU_CUDA_CHECK(cudaMemcpyAsync(slot->n_host.data(), slot->n_out.data(), sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, s));
    slot->busy = true;
    return slot;
  };
  // Batches in flight, oldest first: their device and slot. The first batch of each device
  // runs alone, so that the second starts with the cut-off the first found; then each device
  // keeps two in flight, each queued with the filter of every batch taken so far.
  struct InFlight {
    size_t device;
    PairSlot* slot;
  };
  std::deque<InFlight> in_flight;
  size_t next = 0, done = 0;
  for (size_t d = 0; d < devices.size() && next < batches.size(); ++d) in_flight.push_back({d, launch(d, next++)});
  std::vector<PairRecord> found;
  while (!in_flight.empty()) {
    const InFlight f = in_flight.front();
    in_flight.pop_front();
    {
      ScopedDevice on(devices[f.device].id);
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(f.slot->stream->get()));
      const unsigned long long n_found = *f.slot->n_host.data();
      found.resize(n_found);
      if (n_found)
        FSGPU_CUDA_CHECK(cudaMemcpy(found.data(), f.slot->out.data(), n_found * sizeof(PairRecord),
                                    cudaMemcpyDeviceToHost));
      f.slot->busy = false;
    }
    collector.add(found);
    ++done;
    for (int k = 0; k < kSlots && next < batches.size(); ++k) {
      PairDevice& dev = devices[f.device];
      if (dev.slots[0].busy && dev.slots[1].busy) break;
      in_flight.push_back({f.device, launch(f.device, next++)});
    }
    if (between_batches && done < batches.size())
      between_batches(static_cast<double>(done) / static_cast<double>(batches.size()));
  }
}

}  // namespace fsgpu
