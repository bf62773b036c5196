// The exact kNN search on GPUs, with the neighbours and distances of the CPU engine (knn.h).
//
//   1. candidates_kernel: a block owns 128 query rows and runs over the reference rows 128 at a
//      time, scoring each tile in single precision (8 x 8 per thread, operands staged in shared
//      memory) and fusing the selection into it: a score that beats its row's worst kept
//      candidate goes through a small shared queue into the row's heap of the k + 32 best
//      candidates (in global memory). No distance matrix is ever written.
//   2. rerank_kernel, a block per query: the candidates sorted; every one that the
//      single-precision error bound cannot rule out gets knn_distance() in double precision,
//      and the k best by (distance, index) are the answer. When the heap's last candidate is
//      itself within the bound of the k-th, a point outside the heap could still belong: the
//      row is marked, and exact_kernel computes its distance to every reference point in double
//      precision, sorted by CUB.
// Reference points that do not fit the device stream through step 1 in blocks (the heaps carry
// over) and step 2 runs on the host (rerank_candidates() in core/knn.cpp, the same steps).
// Several GPUs split the query rows.
//
// The error bound (twice_bound): inputs rounded to float lose at most u = 2^-24 relative each,
// and a float sum of m terms at most m u of the sum of the terms' magnitudes; for the unit rows
// of the correlation metrics that magnitude is at most 1; for euclidean it is at most
// 2 (|a|^2 + |b|^2) and for manhattan |a|_1 + |b|_1, of the rows centred on the reference mean
// (which changes no distance and shrinks the bound). The double computation adds its own
// (m 2^-53 of the uncentred rows' magnitudes).
#include <cub/cub.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "core/knn_metric.h"
#include "cuda_check.cuh"

namespace fsgpu {

namespace {

constexpr int kTile = 128;      // query rows of a block, and reference rows of a tile
constexpr int kThreads = 256;   // 16 x 16 threads, 8 x 8 scores each
constexpr int kChunk = 8;       // dimensions staged per step
constexpr int kQueue = 24;      // shared queue per query row and round (shared memory stays under 48 KB)
constexpr int kExtra = 32;      // candidates kept beyond k
constexpr int kMaxGpuK = 4096;

using KnnCand = KnnCandidate;  // ordered by score, then index

__device__ __forceinline__ bool before(float s, int32_t j, float s2, int32_t j2) { return s < s2 || (s == s2 && j < j2); }

// Max-heap of up to `capacity` candidates (the worst on top).
__device__ void heap_offer(KnnCand* heap, int32_t& size, int32_t capacity, KnnCand c) {
  if (size < capacity) {
    int32_t i = size++;
    while (i > 0) {
      const int32_t parent = (i - 1) / 2;
      if (!before(heap[parent].score, heap[parent].index, c.score, c.index)) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = c;
    return;
  }
  if (!before(c.score, c.index, heap[0].score, heap[0].index)) return;
  int32_t i = 0;
  for (;;) {
    int32_t child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && before(heap[child].score, heap[child].index, heap[child + 1].score, heap[child + 1].index))
      ++child;
    if (!before(c.score, c.index, heap[child].score, heap[child].index)) break;
    heap[i] = heap[child];
    i = child;
  }
  heap[i] = c;
}

struct CandidateArgs {
  const float* queries;     // n_queries x stride32, prepared (euclidean, manhattan: centred)
  const float* refs;        // the reference block: n_block x stride32
  int64_t n_queries, first_query;  // this launch's query rows: first_query ..
  int64_t n_block, first_ref;      // reference rows of the block: global indices first_ref ..
  int32_t stride32;
  bool self;                // queries are the reference points: skip i == j
  KnnCand* heaps;         // per query row (global index - first_query) `capacity` candidates
  int32_t* sizes;
  int32_t capacity;
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

template <TileKind Kind>
__global__ void __launch_bounds__(kThreads) candidates_kernel(CandidateArgs a) {
  __shared__ float as[2][kChunk][kTile], bs[2][kChunk][kTile];
  __shared__ KnnCand queue[kTile][kQueue];
  __shared__ int32_t queued[kTile];
  __shared__ KnnCand worst[kTile];  // each row's heap top: what a score must beat
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t q0 = a.first_query + int64_t(blockIdx.x) * kTile;
  const bool correlation = Kind == TileKind::dot;
  if (threadIdx.x < kTile) {
    const int64_t row = q0 - a.first_query + threadIdx.x;
    const int32_t size = row < a.n_queries ? a.sizes[row] : 0;
    worst[threadIdx.x] = size < a.capacity ? KnnCand{INFINITY, INT_MAX} : a.heaps[row * a.capacity];
    queued[threadIdx.x] = 0;
  }
  // Staging: thread t loads row t / 2's floats 4 (t % 2) .. + 3 of the chunk, for A and B.
  const int load_row = threadIdx.x / 2, load_col = (threadIdx.x % 2) * 4;
  auto stage = [&](int buffer, int32_t k0, int64_t r0) {
    const int64_t qrow = q0 + load_row - a.first_query, rrow = r0 + load_row;
    float4 va = make_float4(0, 0, 0, 0), vb = va;
    if (qrow < a.n_queries) va = *reinterpret_cast<const float4*>(a.queries + qrow * a.stride32 + k0 + load_col);
    if (rrow < a.n_block) vb = *reinterpret_cast<const float4*>(a.refs + rrow * a.stride32 + k0 + load_col);
    as[buffer][load_col][load_row] = va.x;
    as[buffer][load_col + 1][load_row] = va.y;
    as[buffer][load_col + 2][load_row] = va.z;
    as[buffer][load_col + 3][load_row] = va.w;
    bs[buffer][load_col][load_row] = vb.x;
    bs[buffer][load_col + 1][load_row] = vb.y;
    bs[buffer][load_col + 2][load_row] = vb.z;
    bs[buffer][load_col + 3][load_row] = vb.w;
  };
  for (int64_t r0 = 0; r0 < a.n_block; r0 += kTile) {
    float acc[8][8];
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) acc[i][j] = 0;
    __syncthreads();
    stage(0, 0, r0);
    __syncthreads();
    for (int32_t k0 = 0, buffer = 0; k0 < a.stride32; k0 += kChunk, buffer ^= 1) {
      if (k0 + kChunk < a.stride32) stage(buffer ^ 1, k0 + kChunk, r0);
      for (int kk = 0; kk < kChunk; ++kk) {
        float va[8], vb[8];
        *reinterpret_cast<float4*>(va) = *reinterpret_cast<const float4*>(&as[buffer][kk][ty * 8]);
        *reinterpret_cast<float4*>(va + 4) = *reinterpret_cast<const float4*>(&as[buffer][kk][ty * 8 + 4]);
        *reinterpret_cast<float4*>(vb) = *reinterpret_cast<const float4*>(&bs[buffer][kk][tx * 8]);
        *reinterpret_cast<float4*>(vb + 4) = *reinterpret_cast<const float4*>(&bs[buffer][kk][tx * 8 + 4]);
        for (int i = 0; i < 8; ++i)
          for (int j = 0; j < 8; ++j) acc[i][j] = tile_term<Kind>(va[i], vb[j], acc[i][j]);
      }
      __syncthreads();
    }
    // Scores that beat their row's worst kept candidate go to the heaps, through the queues, in
    // rounds until none is left (a queue holds kQueue per row and round).
    uint64_t pending = 0;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        const int64_t qi = q0 + ty * 8 + i, rj = a.first_ref + r0 + tx * 8 + j;
        const bool valid = qi - a.first_query < a.n_queries && r0 + tx * 8 + j < a.n_block && !(a.self && qi == rj);
        if (correlation) acc[i][j] = 1.0f - acc[i][j];
        if (valid) pending |= uint64_t(1) << (i * 8 + j);
      }
    while (__syncthreads_or(pending != 0)) {
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
          const uint64_t bit = uint64_t(1) << (i * 8 + j);
          if (!(pending & bit)) continue;
          const int row = ty * 8 + i;
          const int32_t rj = static_cast<int32_t>(a.first_ref + r0 + tx * 8 + j);
          if (!before(acc[i][j], rj, worst[row].score, worst[row].index)) {
            pending &= ~bit;
            continue;
          }
          const int slot = atomicAdd(&queued[row], 1);
          if (slot < kQueue) {
            queue[row][slot] = KnnCand{acc[i][j], rj};
            pending &= ~bit;
          }
        }
      __syncthreads();
      if (threadIdx.x < kTile) {
        const int row = threadIdx.x;
        const int32_t n_queued = min(queued[row], kQueue);
        if (n_queued > 0) {
          const int64_t h = q0 - a.first_query + row;
          KnnCand* heap = a.heaps + h * a.capacity;
          int32_t size = a.sizes[h];
          for (int s = 0; s < n_queued; ++s) heap_offer(heap, size, a.capacity, queue[row][s]);
          a.sizes[h] = size;
          worst[row] = size < a.capacity ? KnnCand{INFINITY, INT_MAX} : heap[0];
        }
        queued[row] = 0;
      }
      __syncthreads();
    }
  }
}

struct RerankArgs {
  KnnMetric metric;
  const double* queries64;  // n_queries x stride, prepared (knn.h)
  const double* refs64;     // n_refs x stride
  const double *query_norms, *ref_norms;  // spearman's row lengths (null: 1)
  int32_t stride;
  int64_t n_queries, first_query;
  bool self;
  const KnnCand* heaps;
  const int32_t* sizes;
  int32_t capacity, k;
  const double* bound;      // per query: twice the single-precision error bound, in score units
  int32_t* out_index;       // n_queries x k
  double* out_distance;
  int32_t* exact_rows;      // rows whose candidates could miss a neighbour, appended
  int32_t* n_exact;
};

// Sorts n (key, index) pairs ascending in shared memory (bitonic over the next power of two).
template <class Key>
__device__ void block_sort(Key* key, int32_t* index, int32_t n, Key pad) {
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
  const int32_t pow2 = [&] { int32_t s = 1; while (s < a.capacity) s *= 2; return s; }();
  float* score = reinterpret_cast<float*>(shared);
  int32_t* index = reinterpret_cast<int32_t*>(score + pow2);
  double* exact = reinterpret_cast<double*>(index + pow2);
  int32_t* exact_index = reinterpret_cast<int32_t*>(exact + pow2);
  __shared__ int32_t n_close;
  const int64_t row = blockIdx.x;  // within this launch
  const int32_t size = a.sizes[row];
  const KnnCand* heap = a.heaps + row * a.capacity;
  for (int32_t i = threadIdx.x; i < size; i += blockDim.x) {
    score[i] = heap[i].score;
    index[i] = heap[i].index;
  }
  __syncthreads();
  block_sort(score, index, size, INFINITY);
  // Every candidate within the bound of the k-th score may be among the k nearest.
  const float kth = score[min(a.k, size) - 1];
  const double limit = double(kth) + a.bound[row];
  if (threadIdx.x == 0) {
    n_close = 0;
    while (n_close < size && double(score[n_close]) <= limit) ++n_close;
    if (size == a.capacity && n_close == size) a.exact_rows[atomicAdd(a.n_exact, 1)] = int32_t(a.first_query + row);
  }
  __syncthreads();
  const double* q = a.queries64 + (a.first_query + row) * a.stride;
  for (int32_t i = threadIdx.x; i < n_close; i += blockDim.x) {
    exact[i] = knn_distance(a.metric, q, a.refs64 + int64_t(index[i]) * a.stride, a.stride,
                            a.query_norms ? a.query_norms[row] : 1.0, a.ref_norms ? a.ref_norms[index[i]] : 1.0);
    exact_index[i] = index[i];
  }
  __syncthreads();
  block_sort(exact, exact_index, n_close, double(INFINITY));
  for (int32_t r = threadIdx.x; r < a.k; r += blockDim.x) {
    a.out_index[row * a.k + r] = exact_index[r];
    a.out_distance[row * a.k + r] = exact[r];
  }
}

// Exact distances of a batch of query rows to every reference point (the host skips self).
__global__ void exact_kernel(KnnMetric m, const double* queries64, const double* refs64, const double* query_norms,
                             const double* ref_norms, int32_t stride, int64_t n_refs, const int32_t* rows,
                             double* distance, int32_t* index) {
  const int32_t row = rows[blockIdx.y];
  const double* q = queries64 + int64_t(row) * stride;
  const double qn = query_norms ? query_norms[row] : 1.0;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n_refs; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = int64_t(blockIdx.y) * n_refs + j;
    distance[at] = knn_distance(m, q, refs64 + j * stride, stride, qn, ref_norms ? ref_norms[j] : 1.0);
    index[at] = static_cast<int32_t>(j);
  }
}

// Twice the bound on |single-precision score - knn_distance()| (in score units) for a query
// against any reference row, from the magnitudes of the float rows and of the double rows.
double twice_bound(KnnMetric m, int32_t terms, double size32, double max_size32, double size64, double max_size64) {
  const double u = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  const double per_term = is_correlation(m) ? 1 : m == KnnMetric::euclidean ? 2 : 1;
  const double f = per_term * (terms + 10) * u * (size32 + max_size32);
  const double d = per_term * (terms + 4) * u64 * (size64 + max_size64);
  return 2 * (f + d) * (1 + 1e-6);
}

struct KnnDevice {
  std::unique_ptr<Stream> stream;
  DeviceBuffer<float> queries32, refs32;
  DeviceBuffer<double> queries64, refs64, query_norms, ref_norms, bound, out_distance, exact_distance, exact_distance_alt;
  DeviceBuffer<KnnCand> heaps;
  DeviceBuffer<int32_t> sizes, out_index, exact_rows, n_exact, exact_index, exact_index_alt, offsets, rows;
  DeviceBuffer<unsigned char> sort_temp;
};

// Device-side exact fallback for rows (positions in the query buffer) whose candidates could miss
// a neighbour: every distance, a stable segmented sort, the first k that are not the row itself.
void exact_rows_on_device(KnnDevice& dev, cudaStream_t s, KnnMetric m, const double* queries64,
                          const double* query_norms, int64_t n_refs,
                          int32_t stride, int32_t k, const std::vector<int32_t>& buffer_rows,
                          const std::vector<int64_t>& global_rows, bool self, KnnResult& out) {
  const int64_t per_sort = std::max<int64_t>(1, (int64_t(1) << 27) / n_refs);
  for (size_t e0 = 0; e0 < buffer_rows.size(); e0 += per_sort) {
    const int32_t ne = static_cast<int32_t>(std::min<int64_t>(per_sort, buffer_rows.size() - e0));
    const int64_t total = int64_t(ne) * n_refs;
    dev.rows.upload(buffer_rows.data() + e0, ne, s);
    dev.exact_distance.reserve(total);
    dev.exact_distance_alt.reserve(total);
    dev.exact_index.reserve(total);
    dev.exact_index_alt.reserve(total);
    exact_kernel<<<dim3(static_cast<unsigned>(std::min<int64_t>((n_refs + 255) / 256, 4096)), ne), 256, 0, s>>>(
        m, queries64, dev.refs64.data(), query_norms, dev.ref_norms.size() ? dev.ref_norms.data() : nullptr, stride,
        n_refs, dev.rows.data(), dev.exact_distance.data(), dev.exact_index.data());
    check_launch("exact_kernel");
    std::vector<int32_t> offsets(ne + 1);
    for (int32_t r = 0; r <= ne; ++r) offsets[r] = static_cast<int32_t>(int64_t(r) * n_refs);
    dev.offsets.upload(offsets.data(), offsets.size(), s);
    cub::DoubleBuffer<double> keys(dev.exact_distance.data(), dev.exact_distance_alt.data());
    cub::DoubleBuffer<int32_t> values(dev.exact_index.data(), dev.exact_index_alt.data());
    size_t temp = 0;
    FSGPU_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp, keys, values, total, ne,
                                                               dev.offsets.data(), dev.offsets.data() + 1, s));
    dev.sort_temp.reserve(temp);
    FSGPU_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(dev.sort_temp.data(), temp, keys, values, total, ne,
                                                               dev.offsets.data(), dev.offsets.data() + 1, s));
    const int32_t take = static_cast<int32_t>(std::min<int64_t>(k + 1, n_refs));
    std::vector<double> dist(size_t(ne) * take);
    std::vector<int32_t> idx(dist.size());
    FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(dist.data(), take * sizeof(double), keys.Current(), n_refs * sizeof(double),
                                       take * sizeof(double), ne, cudaMemcpyDeviceToHost, s));
    FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(idx.data(), take * sizeof(int32_t), values.Current(), n_refs * sizeof(int32_t),
                                       take * sizeof(int32_t), ne, cudaMemcpyDeviceToHost, s));
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
    for (int32_t r = 0; r < ne; ++r) {
      const int64_t global = global_rows[e0 + r];
      int32_t written = 0;
      for (int32_t c = 0; c < take && written < k; ++c) {
        const int32_t j = idx[size_t(r) * take + c];
        if (self && j == global) continue;
        out.index[global * k + written] = j;
        out.distance[global * k + written] = dist[size_t(r) * take + c];
        ++written;
      }
    }
  }
}

}  // namespace

KnnResult gpu_knn(const KnnPoints& reference, const KnnPoints* queries, int32_t k, const GpuOptions& options,
                  const std::function<void()>& between_blocks, GpuKnnPhases* phases) {
  if (options.devices.empty()) throw std::runtime_error("no GPU device given");
  const bool self = queries == nullptr;
  const KnnPoints& q = self ? reference : *queries;
  if (q.metric != reference.metric || q.stride != reference.stride)
    throw std::invalid_argument("queries and reference points differ in metric or dimension");
  if (k < 1 || k > reference.n - (self ? 1 : 0))
    throw std::invalid_argument("k must be between 1 and the number of other points");
  if (k > kMaxGpuK)
    throw std::runtime_error("the GPU search takes k up to " + std::to_string(kMaxGpuK) + ", not " + std::to_string(k) +
                             "; use backend = \"cpu\"");
  if (reference.n > INT_MAX) throw std::runtime_error("more than 2^31 reference points");
  const KnnMetric m = reference.metric;
  const int32_t stride = reference.stride, stride32 = (reference.dim + kChunk - 1) / kChunk * kChunk;
  const int32_t capacity = static_cast<int32_t>(std::min<int64_t>(k + kExtra, reference.n));

  // Single-precision rows, centred for euclidean and manhattan, and each query's error bound.
  std::vector<double> centre;
  if (!is_correlation(m)) {
    centre.assign(reference.dim, 0.0);
    for (int64_t i = 0; i < reference.n; ++i)
      for (int32_t t = 0; t < reference.dim; ++t) centre[t] += reference.rows[i * reference.stride + t];
    for (double& c : centre) c /= static_cast<double>(reference.n);
  }
  const double* centre_data = centre.empty() ? nullptr : centre.data();
  const KnnFloatRows refs32 = knn_float_rows(reference, centre_data, stride32, options.host_threads);
  const KnnFloatRows own32 = self ? KnnFloatRows() : knn_float_rows(q, centre_data, stride32, options.host_threads);
  const KnnFloatRows& q32 = self ? refs32 : own32;
  const double max32 = *std::max_element(refs32.size32.begin(), refs32.size32.end());
  const double max64 = *std::max_element(refs32.size64.begin(), refs32.size64.end());
  std::vector<double> bound(q.n);
  for (int64_t i = 0; i < q.n; ++i) bound[i] = twice_bound(m, stride32, q32.size32[i], max32, q32.size64[i], max64);

  KnnResult out;
  out.n_queries = q.n;
  out.k = k;
  out.index.resize(static_cast<size_t>(q.n) * k);
  out.distance.resize(out.index.size());

  // Queries go to the devices in contiguous ranges, and through each in batches: enough blocks
  // to fill the device, about a second of work each (for interrupts).
  const size_t n_devices = std::min<size_t>(options.devices.size(), static_cast<size_t>((q.n + kTile - 1) / kTile));
  const int64_t per_device = (q.n + int64_t(n_devices) - 1) / int64_t(n_devices);
  const double pair_work = static_cast<double>(reference.n) * stride32;
  std::atomic<bool> cancel(false);
  std::vector<GpuKnnPhases> device_phases(n_devices);
  auto work = [&](size_t d) {
    KnnDevice dev;
    ScopedDevice on(options.devices[d]);
    dev.stream = std::make_unique<Stream>();
    cudaStream_t s = dev.stream->get();
    GpuKnnPhases& ph = device_phases[d];
    auto clock = std::chrono::steady_clock::now();
    auto mark = [&](double& phase) {
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
      const auto now = std::chrono::steady_clock::now();
      phase += std::chrono::duration<double>(now - clock).count();
      clock = now;
    };
    int multiprocessors = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, options.devices[d]));
    const int64_t batch = std::clamp<int64_t>(int64_t(4e13 / pair_work) / kTile * kTile,
                                              int64_t(4) * multiprocessors * kTile, int64_t(1) << 20);
    const int64_t first = int64_t(d) * per_device, last = std::min(q.n, first + per_device);
    const int64_t rows = std::min(batch, last - first);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t budget = options.memory_limit > 0 ? options.memory_limit : static_cast<int64_t>(free_bytes * 0.8);
    const int64_t query_bytes = self ? 0 : (last - first) * (stride32 * 4 + stride * 8);
    const int64_t batch_bytes = rows * (capacity * 8 + 4 + k * 12 + 12);
    const int64_t ref_bytes = reference.n * (int64_t(stride32) * 4 + int64_t(stride) * 8);
    // Resident: every reference row on the device, the rerank there too. Otherwise blocks of
    // float rows stream through the candidate pass and the host reranks.
    const bool resident = ref_bytes + query_bytes + batch_bytes <= budget;
    const int64_t block = resident ? reference.n
                                   : std::max<int64_t>(kTile, (budget - batch_bytes) / 2 / (int64_t(stride32) * 4) /
                                                                  kTile * kTile);
    if (resident) {
      dev.refs32.upload(refs32.rows.data(), refs32.rows.size(), s);
      dev.refs64.upload(reference.rows.data(), reference.rows.size(), s);
      dev.ref_norms.upload(reference.norms.data(), reference.norms.size(), s);
      if (!self) {
        dev.queries64.upload(q.rows.data() + first * stride, (last - first) * stride, s);
        if (!q.norms.empty()) dev.query_norms.upload(q.norms.data() + first, last - first, s);
      }
    } else {
      dev.refs32.resize(block * stride32);
    }
    if (!self || !resident) dev.queries32.upload(q32.rows.data() + first * stride32, (last - first) * stride32, s);
    dev.bound.upload(bound.data() + first, last - first, s);
    dev.heaps.resize(rows * capacity);
    dev.sizes.resize(rows);
    dev.out_index.resize(rows * k);
    dev.out_distance.resize(rows * k);
    dev.exact_rows.resize(rows);
    dev.n_exact.resize(1);
    mark(ph.upload);
    // Query buffers hold rows first.. (self and resident: the reference buffers, all rows).
    const bool queries_are_refs = self && resident;
    const float* queries32 = queries_are_refs ? dev.refs32.data() : dev.queries32.data();
    const double* queries64 = self ? dev.refs64.data() : dev.queries64.data();
    const double* ref_norms = reference.norms.empty() ? nullptr : dev.ref_norms.data();
    const double* query_norms = reference.norms.empty() ? nullptr : self ? ref_norms : dev.query_norms.data();
    const int64_t buffer_first = queries_are_refs ? 0 : first;
    std::vector<KnnCand> heaps;
    std::vector<int32_t> sizes, exact_buffer_rows;
    std::vector<int64_t> exact_global_rows;
    for (int64_t b0 = first; b0 < last && !cancel; b0 += batch) {
      const int64_t b1 = std::min(last, b0 + batch), nb = b1 - b0;
      FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.sizes.data(), 0, nb * sizeof(int32_t), s));
      for (int64_t r0 = 0; r0 < reference.n; r0 += block) {
        const int64_t nr = std::min(block, reference.n - r0);
        if (!resident) dev.refs32.upload(refs32.rows.data() + r0 * stride32, nr * stride32, s);
        CandidateArgs ca{};
        ca.queries = queries32 + (b0 - buffer_first) * stride32;
        ca.refs = dev.refs32.data();
        ca.n_queries = nb;
        ca.first_query = b0;
        ca.n_block = nr;
        ca.first_ref = r0;
        ca.stride32 = stride32;
        ca.self = self;
        ca.heaps = dev.heaps.data();
        ca.sizes = dev.sizes.data();
        ca.capacity = capacity;
        const unsigned blocks = static_cast<unsigned>((nb + kTile - 1) / kTile);
        if (is_correlation(m)) candidates_kernel<TileKind::dot><<<blocks, kThreads, 0, s>>>(ca);
        else if (m == KnnMetric::euclidean) candidates_kernel<TileKind::squared_difference><<<blocks, kThreads, 0, s>>>(ca);
        else candidates_kernel<TileKind::absolute_difference><<<blocks, kThreads, 0, s>>>(ca);
        check_launch("candidates_kernel");
      }
      mark(ph.candidates);
      sizes.resize(nb);
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(sizes.data(), dev.sizes.data(), nb * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
      if (!resident) {
        heaps.resize(size_t(nb) * capacity);
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(heaps.data(), dev.heaps.data(), heaps.size() * sizeof(KnnCand),
                                         cudaMemcpyDeviceToHost, s));
        mark(ph.download);
        rerank_candidates(reference, q, self, b0, nb, heaps.data(), sizes.data(), capacity, bound.data() + b0, out,
                          options.host_threads, &ph.exact_rows);
        mark(ph.rerank);
      } else {
        RerankArgs ra{};
        ra.metric = m;
        ra.queries64 = queries64 + (b0 - (self ? 0 : first)) * stride;
        ra.refs64 = dev.refs64.data();
        ra.query_norms = query_norms ? query_norms + (b0 - (self ? 0 : first)) : nullptr;
        ra.ref_norms = ref_norms;
        ra.stride = stride;
        ra.n_queries = nb;
        ra.first_query = 0;
        ra.self = self;
        ra.heaps = dev.heaps.data();
        ra.sizes = dev.sizes.data();
        ra.capacity = capacity;
        ra.k = k;
        ra.bound = dev.bound.data() + (b0 - first);
        ra.out_index = dev.out_index.data();
        ra.out_distance = dev.out_distance.data();
        ra.exact_rows = dev.exact_rows.data();
        ra.n_exact = dev.n_exact.data();
        FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.n_exact.data(), 0, sizeof(int32_t), s));
        int32_t pow2 = 1;
        while (pow2 < capacity) pow2 *= 2;
        const size_t shared = size_t(pow2) * (sizeof(float) + sizeof(int32_t) + sizeof(double) + sizeof(int32_t));
        FSGPU_CUDA_CHECK(cudaFuncSetAttribute(rerank_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(shared)));
        rerank_kernel<<<static_cast<unsigned>(nb), 128, shared, s>>>(ra);
        check_launch("rerank_kernel");
        int32_t n_exact = 0;
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(&n_exact, dev.n_exact.data(), sizeof n_exact, cudaMemcpyDeviceToHost, s));
        mark(ph.rerank);
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(out.index.data() + b0 * k, dev.out_index.data(), nb * k * sizeof(int32_t),
                                         cudaMemcpyDeviceToHost, s));
        FSGPU_CUDA_CHECK(cudaMemcpyAsync(out.distance.data() + b0 * k, dev.out_distance.data(),
                                         nb * k * sizeof(double), cudaMemcpyDeviceToHost, s));
        exact_buffer_rows.resize(n_exact);
        if (n_exact)
          FSGPU_CUDA_CHECK(cudaMemcpyAsync(exact_buffer_rows.data(), dev.exact_rows.data(), n_exact * sizeof(int32_t),
                                           cudaMemcpyDeviceToHost, s));
        mark(ph.download);
        if (n_exact) {
          exact_global_rows.resize(n_exact);
          for (int32_t e = 0; e < n_exact; ++e) {
            exact_global_rows[e] = b0 + exact_buffer_rows[e];
            exact_buffer_rows[e] += static_cast<int32_t>(b0 - (self ? 0 : first));
          }
          exact_rows_on_device(dev, s, m, queries64, query_norms, reference.n, stride, k, exact_buffer_rows,
                               exact_global_rows, self, out);
          ph.exact_rows += n_exact;
          mark(ph.rerank);
        }
      }
      for (int32_t v : sizes) ph.candidates_per_query += v;
    }
  };
  std::vector<std::future<void>> running;
  for (size_t d = 0; d < n_devices; ++d) running.push_back(std::async(std::launch::async, work, d));
  std::exception_ptr error;
  for (auto& r : running) {
    while (!error && r.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      try {
        if (between_blocks) between_blocks();
      } catch (...) {
        error = std::current_exception();
        cancel = true;
      }
    }
    try {
      r.get();
    } catch (...) {
      if (!error) error = std::current_exception();
      cancel = true;
    }
  }
  if (error) std::rethrow_exception(error);
  if (phases) {
    for (const GpuKnnPhases& p : device_phases) {
      phases->upload += p.upload;
      phases->candidates += p.candidates;
      phases->rerank += p.rerank;
      phases->download += p.download;
      phases->candidates_per_query += p.candidates_per_query;
      phases->exact_rows += p.exact_rows;
    }
    phases->candidates_per_query /= static_cast<double>(q.n);
  }
  return out;
}

}  // namespace fsgpu
