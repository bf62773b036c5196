// The pair search on GPUs: n(a, b, y) of every pair by AND and popcount of one-hot bitmaps.
//
// Each feature becomes one bitmap per level over the class-sorted samples, every class starting
// on a fresh 32-bit word, so n(a, b, y) = sum over class y's words of popc(bits(Xi=a) & bits(Xj=b)).
// Bitmaps are stored level-major with features innermost, bits[(level * words + word) * stride + f],
// so the 16 lanes of a half-warp that hold consecutive features read consecutive words.
// A block takes a 64 x 64 tile of (row feature, column feature) pairs; each thread counts 4 x 4
// pairs in registers, so every word loaded feeds four popcounts. Counts become the sums of
// pairs.h through the same fixed-point plogp table as the CPU, so the two agree bitwise.
// Pairs that pass the collector's filter are appended to an output list (warp-aggregated).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
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

struct PairKernelArgs {
  const uint32_t* bits;
  int64_t stride;          // features, padded to whole tiles
  int32_t words;           // per level
  int32_t levels;          // the largest level count
  const int32_t* class_words;  // n_classes + 1 word offsets
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
  const unsigned lane = threadIdx.x % 32;
  for (int r = 0; r < kPairsPerSide; ++r)
    for (int s = 0; s < kPairsPerSide; ++s) {
      const int32_t i = fi[r], j = fj[s];
      bool keep = row_pos[r] >= a.row_begin && row_pos[r] < a.row_end && j < a.n_features && j != i;
      if (keep) keep = a.all_pairs ? j > i : (a.row_rank[j] < 0 || a.row_rank[j] > row_pos[r]);
      PairRecord rec;
      if (keep) {
        rec.i = min(i, j);
        rec.j = max(i, j);
        rec.key = pair_key(a.constants, joint_class[r][s], joint[r][s], a.relevance[rec.i], a.relevance[rec.j],
                           a.x_terms[rec.i], a.x_terms[rec.j]);
        rec.joint_class = joint_class[r][s];
        rec.joint = joint[r][s];
        rec.cells = cells[r][s];
        keep = passes(a.filter, rec.key, rec.i, rec.j);
      }
      // One atomic per warp for its passing pairs.
      const unsigned mask = __ballot_sync(0xffffffffu, keep);
      if (!mask) continue;
      unsigned long long base = 0;
      if (lane == 0) base = atomicAdd(a.n_out, static_cast<unsigned long long>(__popc(mask)));
      base = __shfl_sync(0xffffffffu, base, 0);
      if (keep) a.out[base + __popc(mask & ((1u << lane) - 1))] = rec;
    }
}

// One device's copy of the data and its output list.
struct PairDevice {
  int id = 0;
  std::unique_ptr<Stream> stream;
  DeviceBuffer<uint32_t> bits;
  DeviceBuffer<int32_t> class_words, rows, row_rank;
  DeviceBuffer<int64_t> plogp, relevance, x_terms;
  DeviceBuffer<PairRecord> out;
  DeviceBuffer<unsigned long long> n_out;
  PinnedBuffer<unsigned long long> n_host;  // pinned: its copy does not hold up the other devices
};

// Row tiles [first_row_tile, + n_row_tiles) against column tiles [first_col_tile, + n_col_tiles).
struct Batch {
  int32_t first_row_tile = 0, n_row_tiles = 0, first_col_tile = 0, n_col_tiles = 0;
};

// How a search is laid out on the devices and cut into batches, and the memory it needs.
struct PairPlan {
  int32_t levels = 0, words = 0, n_col_tiles = 0;
  int64_t stride = 0;                 // features, padded to whole tiles
  std::vector<int32_t> class_words;   // n_classes + 1 word offsets
  std::vector<Batch> batches;
  int64_t capacity = 0;               // records of the largest batch
  size_t n_devices = 0;               // devices used: no more than batches
  int64_t device_bytes = 0;           // what each of them holds at most

  static PairPlan of(const PairData& data, const PairTask& task, size_t n_devices);
};

PairPlan PairPlan::of(const PairData& data, const PairTask& task, size_t n_devices) {
  const CodeMatrix& x = *data.x;
  const ClassLayout& layout = *data.layout;
  PairPlan p;
  p.levels = x.max_levels();
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
  // split into ranges of column tiles. The first batch of each device is one row tile, so that
  // a top-k search learns its cut-off early. With all pairs, row tile t starts at column tile
  // t: its blocks left of the diagonal would have nothing to count.
  constexpr int64_t tile = int64_t(kPairTile) * kPairTile;
  const int64_t per_pair = std::max<int64_t>(1, int64_t(p.levels) * p.levels * p.words);
  const int64_t max_tiles = std::max<int64_t>(1, std::min(kBatchPairs, kBatchPopcounts / per_pair) / tile);
  auto first_col = [&](int32_t t) { return task.all_pairs ? t : 0; };
  for (int32_t t = first_row_tile; t < end_row_tile;) {
    const int32_t c0 = first_col(t), cols = p.n_col_tiles - c0;
    if (cols > max_tiles) {
      for (int32_t c = c0; c < p.n_col_tiles; c += static_cast<int32_t>(max_tiles))
        p.batches.push_back({t, 1, c, static_cast<int32_t>(std::min<int64_t>(max_tiles, p.n_col_tiles - c))});
      ++t;
      continue;
    }
    Batch b{t, 0, c0, cols};
    int64_t tiles = 0;
    const bool first_round = p.batches.size() < n_devices;
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
  const int64_t bitmaps = int64_t(p.levels) * p.words * p.stride * int64_t(sizeof(uint32_t));
  const int64_t build = n * n_features * int64_t(sizeof(uint16_t)) + (layout.n_classes + 1) * int64_t(sizeof(int32_t));
  const int64_t search = (n + 1 + 2 * n_features) * int64_t(sizeof(int64_t)) +
                         (n_rows + (task.all_pairs ? 0 : n_features)) * int64_t(sizeof(int32_t)) +
                         p.capacity * int64_t(sizeof(PairRecord)) + int64_t(sizeof(unsigned long long));
  p.device_bytes = bitmaps + (layout.n_classes + 1) * int64_t(sizeof(int32_t)) + std::max(build, search);
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
  if (task.n_pairs() == 0) return "";
  return memory_problem(PairPlan::of(data, task, options.devices.size()), data, options);
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
  const PairPlan plan = PairPlan::of(data, task, options.devices.size());

  std::vector<PairDevice> devices(plan.n_devices);
  for (size_t d = 0; d < devices.size(); ++d) {
    PairDevice& dev = devices[d];
    dev.id = options.devices[d];
    ScopedDevice on(dev.id);
    dev.stream = std::make_unique<Stream>();
    cudaStream_t s = dev.stream->get();
    dev.class_words.upload(plan.class_words.data(), plan.class_words.size(), s);
    dev.bits.resize(static_cast<size_t>(plan.levels) * plan.words * plan.stride);
    {  // the codes only while the bitmaps are built: the plan's peak counts them before the rest
      DeviceBuffer<uint16_t> codes;
      DeviceBuffer<int32_t> class_start;
      codes.upload(data.codes.data(), data.codes.size(), s);
      class_start.upload(layout.class_start.data(), layout.class_start.size(), s);
      const dim3 grid(static_cast<unsigned>((plan.stride + 255) / 256),
                      static_cast<unsigned>(std::min<int32_t>(plan.words, 65535)));
      build_bitmaps_kernel<<<grid, 256, 0, s>>>(codes.data(), x.n_samples, n_features, plan.stride, plan.words,
                                                plan.levels, class_start.data(), dev.class_words.data(),
                                                layout.n_classes, dev.bits.data());
      check_launch("build_bitmaps_kernel");
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    dev.plogp.upload(plogp.data(), plogp.size(), s);
    dev.relevance.upload(data.sums.relevance.data(), data.sums.relevance.size(), s);
    dev.x_terms.upload(data.sums.x_terms.data(), data.sums.x_terms.size(), s);
    dev.rows.upload(task.rows.data(), task.rows.size(), s);
    if (!task.all_pairs) dev.row_rank.upload(task.row_rank.data(), task.row_rank.size(), s);
    dev.out.resize(static_cast<size_t>(plan.capacity));
    dev.n_out.resize(1);
    dev.n_host = PinnedBuffer<unsigned long long>(1);
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));  // host vectors stay alive anyway; errors surface here
  }

  PairKernelArgs args{};
  args.stride = plan.stride;
  args.words = plan.words;
  args.levels = plan.levels;
  args.n_classes = layout.n_classes;
  args.n_rows = n_rows;
  args.row_begin = static_cast<int32_t>(task.row_begin);
  args.row_end = static_cast<int32_t>(task.row_end);
  args.n_features = static_cast<int32_t>(n_features);
  args.all_pairs = task.all_pairs;
  args.constants = data.constants;
  std::vector<PairRecord> found;
  const std::vector<Batch>& batches = plan.batches;
  for (size_t next = 0; next < batches.size();) {
    // A round: one batch per device, all with the filter the collector has now. Every launch
    // and count copy is queued before any device is waited for, so the devices run together.
    args.filter = collector.filter();
    const size_t round = std::min(devices.size(), batches.size() - next);
    for (size_t d = 0; d < round; ++d) {
      PairDevice& dev = devices[d];
      const Batch& b = batches[next + d];
      ScopedDevice on(dev.id);
      cudaStream_t s = dev.stream->get();
      args.bits = dev.bits.data();
      args.class_words = dev.class_words.data();
      args.plogp = dev.plogp.data();
      args.relevance = dev.relevance.data();
      args.x_terms = dev.x_terms.data();
      args.rows = dev.rows.data();
      args.row_rank = dev.row_rank.data();
      args.first_row_tile = b.first_row_tile;
      args.first_col_tile = b.first_col_tile;
      args.out = dev.out.data();
      args.n_out = dev.n_out.data();
      FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.n_out.data(), 0, sizeof(unsigned long long), s));
      pair_kernel<<<dim3(b.n_col_tiles, b.n_row_tiles), kPairThreads, 0, s>>>(args);
      check_launch("pair_kernel");
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(dev.n_host.data(), dev.n_out.data(), sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, s));
    }
    for (size_t d = 0; d < round; ++d) {
      PairDevice& dev = devices[d];
      ScopedDevice on(dev.id);
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(dev.stream->get()));
      const unsigned long long n_found = *dev.n_host.data();
      found.resize(n_found);
      if (n_found)
        FSGPU_CUDA_CHECK(cudaMemcpy(found.data(), dev.out.data(), n_found * sizeof(PairRecord),
                                    cudaMemcpyDeviceToHost));
      collector.add(found);
    }
    next += round;
    if (between_batches && next < batches.size())
      between_batches(static_cast<double>(next) / static_cast<double>(batches.size()));
  }
}

}  // namespace fsgpu
