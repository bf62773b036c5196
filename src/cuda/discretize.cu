// The discretization engine on GPUs: every feature of a chunk at once, with the decisions of
// discretize_criteria.h, so that the cuts equal the CPU engine's (core/discretize.cpp).
//
//   1. fill_keys_kernel: each value as a sort key (missing values as +inf, which sorts last; -0
//      as 0) with its sample's class; CUB's segmented sort orders each feature's segment. (NaN
//      keys would not do: CUB sorts small segments by comparison.)
//   2. distinct_kernel, a block per feature: the distinct values and their prefix class counts,
//      a tile of sorted values at a time, class counts by warp ballots.
//   3. The method, a block per feature and entirely on the device: the top-down loop of CAIM,
//      CACC and Ameva (the split interval's candidates rescored by the block, the best found and
//      the acceptance decided by one thread in the trees of discretize_criteria.h), MDLP's
//      recursive splits, or equal-frequency cuts.
//   4. cut_values_kernel: cut points at the chosen candidates, copied back with the summaries.
// Chunks of features are sized to the device's memory; several GPUs take chunks in turn, each
// from a host thread of its own.
#include <cub/cub.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/discretize_criteria.h"
#include "core/gpu_backend.h"
#include "cuda_check.cuh"
#include "device_threads.cuh"
#include "segmented_sort.cuh"

namespace fsgpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void fill_keys_kernel(double* keys, int32_t* classes, const int32_t* labels, int32_t n, int64_t total,
                                 int64_t first_feature, int32_t* infinite_feature) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const double v = keys[i];
  if (isinf(v)) atomicMin(infinite_feature, static_cast<int32_t>(first_feature + i / n));
  keys[i] = isnan(v) ? INFINITY : v + 0.0;
  classes[i] = labels ? labels[i % n] : 0;
}

// Per feature f of the chunk: values[f n + t] = v_t and prefix[(f n + t) S + c] = the samples of
// class c with a value <= v_t, for the T = n_distinct[f] distinct values; n_valid[f] non-missing.
__global__ void __launch_bounds__(kThreads)
    distinct_kernel(const double* keys, const int32_t* classes, int32_t n, int32_t n_classes, double* values,
                    int32_t* prefix, int32_t* n_distinct, int32_t* n_valid) {
  using Scan = cub::BlockScan<int32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int32_t valid_shared;
  extern __shared__ int32_t counters[];  // warp counts, warp bases, running totals: (2 kWarps + 1) S
  int32_t* warp_count = counters;
  int32_t* warp_base = counters + kWarps * n_classes;
  int32_t* running = counters + 2 * kWarps * n_classes;
  const int64_t f = blockIdx.x;
  const double* k = keys + f * n;
  const int32_t* cls = classes + f * n;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {  // missing values sort last, as +inf (data hold no infinite values)
    int32_t lo = 0, hi = n;
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      if (isinf(k[mid])) hi = mid; else lo = mid + 1;
    }
    valid_shared = lo;
  }
  for (int32_t c = threadIdx.x; c < n_classes; c += kThreads) running[c] = 0;
  __syncthreads();
  const int32_t m = valid_shared;
  const unsigned at_or_below = lane == 31 ? 0xffffffffu : (2u << lane) - 1;
  int32_t groups = 0;
  for (int32_t tile = 0; tile < m; tile += kThreads) {
    const int32_t i = tile + threadIdx.x;
    const bool valid = i < m;
    const double key = valid ? k[i] : 0;
    const int32_t c = valid ? cls[i] : -1;
    const int32_t run_end = valid && (i + 1 == m || k[i + 1] != key);
    int32_t rank, tile_groups;
    Scan(scan).ExclusiveSum(run_end, rank, tile_groups);
    for (int32_t cc = 0; cc < n_classes; ++cc) {
      const unsigned b = __ballot_sync(0xffffffffu, c == cc);
      if (lane == 0) warp_count[warp * n_classes + cc] = __popc(b);
    }
    __syncthreads();
    for (int32_t cc = threadIdx.x; cc < n_classes; cc += kThreads) {
      int32_t total = running[cc];
      for (int w = 0; w < kWarps; ++w) {
        warp_base[w * n_classes + cc] = total;
        total += warp_count[w * n_classes + cc];
      }
      running[cc] = total;
    }
    __syncthreads();
    const int64_t t = f * n + groups + rank;
    for (int32_t cc = 0; cc < n_classes; ++cc) {
      const unsigned b = __ballot_sync(0xffffffffu, c == cc);
      if (run_end) prefix[t * n_classes + cc] = warp_base[warp * n_classes + cc] + __popc(b & at_or_below);
    }
    if (run_end) values[t] = key;
    groups += tile_groups;
    __syncthreads();  // before the next tile's counts overwrite this one's
  }
  if (threadIdx.x == 0) {
    n_distinct[f] = groups;
    n_valid[f] = m;
  }
}

struct FeatureArgs {
  DiscretizeMethod method;
  int32_t n, n_classes, nbins;
  const int32_t *n_distinct, *n_valid;
  const double* values;
  const int32_t* prefix;
  double* scratch;     // per feature n doubles: MDLP's stack of intervals, then the cut points
  double* sum_tree;    // per feature 4n doubles (top-down; see discretize_criteria.h)
  double* gain_tree;   // per feature 4n doubles (top-down)
  int32_t *first_of, *last_of;  // per feature n: the interval each candidate splits (MDLP: cut flags)
  int32_t* cuts;       // per feature up to n candidates, ascending
  int32_t *n_cuts, *present;
  double* sum;         // top-down: the final sum of terms
  long long* information;  // MDLP: the class information of the final intervals (fixed point)
  TableView tables;
};

using BlockScan = cub::BlockScan<int32_t, kThreads>;

// The classes present among a feature's values and (for CACC, Ameva) their counts as doubles.
__device__ inline int32_t class_totals(const PrefixCounts& p, int32_t n_distinct, double* totals) {
  __shared__ int32_t present;
  if (threadIdx.x == 0) present = 0;
  __syncthreads();
  int32_t mine = 0;
  for (int32_t c = threadIdx.x; c < p.n_classes; c += kThreads) {
    const int32_t q = n_distinct > 0 ? p.count(0, n_distinct - 1, c) : 0;
    totals[c] = q;
    mine += q > 0;
  }
  atomicAdd(&present, mine);
  __syncthreads();
  return present;
}

// Writes the indices t < count with flagged(t), ascending, to out; returns how many (all threads).
template <class Flag>
__device__ inline int32_t compact_indices(int32_t count, Flag flagged, int32_t* out, typename BlockScan::TempStorage& scan) {
  int32_t written = 0;
  for (int32_t tile = 0; tile < count; tile += kThreads) {
    const int32_t t = tile + threadIdx.x;
    const int32_t flag = t < count && flagged(t);
    int32_t rank, total;
    BlockScan(scan).ExclusiveSum(flag, rank, total);
    if (flag) out[written + rank] = t;
    written += total;
    __syncthreads();
  }
  return written;
}

// Kurgan & Cios's loop for CAIM, CACC and Ameva, step for step as topdown_cuts() on the CPU:
// one thread walks the trees and decides, the block rescores the split interval's candidates.
__global__ void __launch_bounds__(kThreads) topdown_kernel(FeatureArgs a) {
  __shared__ typename BlockScan::TempStorage scan;
  __shared__ int32_t best_shared, first_shared, last_shared;
  __shared__ bool accepted_shared;
  __shared__ double left_shared, right_shared, sum_shared;
  extern __shared__ double totals[];  // n_classes
  const int64_t f = blockIdx.x;
  const DiscretizeMethod m = a.method;
  const int32_t n_distinct = a.n_distinct[f];
  const PrefixCounts p{a.prefix + f * a.n * a.n_classes, a.n_classes};
  double* sum_tree = a.sum_tree + f * 4 * a.n;
  double* gain_tree = a.gain_tree + f * 4 * a.n;
  int32_t* first_of = a.first_of + f * a.n;
  int32_t* last_of = a.last_of + f * a.n;
  const int32_t present = class_totals(p, n_distinct, totals);
  if (n_distinct < 2 || present < 2) {
    if (threadIdx.x == 0) {
      a.n_cuts[f] = 0;
      a.present[f] = present;
      a.sum[f] = 0;
    }
    return;
  }
  const int32_t sum_size = tree_size(n_distinct), gain_size = tree_size(n_distinct - 1);
  for (int32_t i = threadIdx.x; i < 2 * sum_size; i += kThreads) sum_tree[i] = 0;
  for (int32_t i = threadIdx.x; i < 2 * gain_size; i += kThreads) gain_tree[i] = -INFINITY;
  double* gains = gain_tree + gain_size;
  auto score_candidates = [&](int32_t first, int32_t last, double parent) {
    for (int32_t c = first + threadIdx.x; c < last; c += kThreads) {
      gains[c] = split_gain(m, p, first, c, last, parent, totals);
      first_of[c] = first;
      last_of[c] = last;
    }
  };
  auto pull_range = [&](int32_t lo, int32_t hi) {  // the gain tree above candidates lo..hi
    for (int32_t l = (gain_size + lo) / 2, h = (gain_size + hi) / 2; l >= 1; l /= 2, h /= 2) {
      for (int32_t node = l + threadIdx.x; node <= h; node += kThreads) gain_tree_pull(gain_tree, node);
      __syncthreads();
    }
  };
  __syncthreads();
  const double whole = interval_term(m, p, 0, n_distinct - 1, totals);
  if (threadIdx.x == 0) sum_shared = sum_tree_set(sum_tree, sum_size, 0, whole);
  score_candidates(0, n_distinct - 1, whole);
  __syncthreads();
  pull_range(0, n_distinct - 2);
  double sum = sum_shared;
  for (int32_t k = 1;; ++k) {
    const double best_gain = gain_tree[1];
    if (best_gain == -INFINITY) break;
    if (threadIdx.x == 0) {
      const int32_t best = gain_tree_first_at_least(gain_tree, gain_size, tied_gain_floor(best_gain, sum));
      const int32_t first = first_of[best], last = last_of[best];
      const double left = interval_term(m, p, first, best, totals), right = interval_term(m, p, best + 1, last, totals);
      sum_tree_set(sum_tree, sum_size, first, left);
      const double new_sum = sum_tree_set(sum_tree, sum_size, best + 1, right);
      const bool accepted = topdown_accepts(m, new_sum, sum, k, a.n_valid[f], present, a.tables.ln);
      if (accepted) gains[best] = -INFINITY;
      accepted_shared = accepted;
      best_shared = best;
      first_shared = first;
      last_shared = last;
      left_shared = left;
      right_shared = right;
      sum_shared = new_sum;
    }
    __syncthreads();
    if (!accepted_shared) break;
    const int32_t best = best_shared, first = first_shared, last = last_shared;
    sum = sum_shared;
    score_candidates(first, best, left_shared);
    score_candidates(best + 1, last, right_shared);
    __syncthreads();
    pull_range(first, last - 1);
  }
  // The cuts are the candidates whose gain is -inf, in order.
  const int32_t n_cut = compact_indices(n_distinct - 1, [&](int32_t t) { return gains[t] == -INFINITY; },
                                        a.cuts + f * a.n, scan);
  if (threadIdx.x == 0) {
    a.n_cuts[f] = n_cut;
    a.present[f] = present;
    a.sum[f] = sum;
  }
}

struct Split {
  long long entropy;
  int32_t at;
};
struct SplitMin {
  __device__ Split operator()(const Split& a, const Split& b) const {
    return (b.entropy < a.entropy || (b.entropy == a.entropy && b.at < a.at)) ? b : a;
  }
};

// Fayyad & Irani's MDLP as mdlp_cuts() on the CPU: intervals wait on a stack; the block finds an
// interval's best split (lowest entropy, then lowest candidate), one thread applies the MDL rule.
__global__ void __launch_bounds__(kThreads) mdlp_kernel(FeatureArgs a) {
  using Reduce = cub::BlockReduce<Split, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename BlockScan::TempStorage scan;
  } temp;
  __shared__ int32_t first_shared, last_shared, n_open;
  __shared__ bool done;
  __shared__ long long remaining;
  extern __shared__ double totals[];
  const int64_t f = blockIdx.x;
  const int32_t n_distinct = a.n_distinct[f];
  const PrefixCounts p{a.prefix + f * a.n * a.n_classes, a.n_classes};
  int2* open = reinterpret_cast<int2*>(a.scratch + f * a.n);  // at most one open interval per distinct value
  int32_t* is_cut = a.first_of + f * a.n;
  const int64_t* plogp = a.tables.plogp;
  const int32_t present = class_totals(p, n_distinct, totals);
  if (n_distinct < 2 || present < 2) {
    if (threadIdx.x == 0) {
      a.n_cuts[f] = 0;
      a.present[f] = present;
      a.information[f] = 0;
    }
    return;
  }
  for (int32_t t = threadIdx.x; t < n_distinct - 1; t += kThreads) is_cut[t] = 0;
  if (threadIdx.x == 0) {
    open[0] = make_int2(0, n_distinct - 1);
    n_open = 1;
    remaining = 0;
  }
  __syncthreads();
  for (;;) {
    // Thread 0 alone reads and changes the stack, between barriers: a warp that read n_open
    // after thread 0 popped would leave the loop early.
    if (threadIdx.x == 0) {
      done = n_open == 0;
      if (!done) {
        const int2 top = open[--n_open];
        first_shared = top.x;
        last_shared = top.y;
      }
    }
    __syncthreads();
    if (done) break;
    const int32_t first = first_shared, last = last_shared;
    Split mine{LLONG_MAX, -1};
    int32_t k1, k2;
    for (int32_t c = first + threadIdx.x; c < last; c += kThreads) {
      const long long e = interval_entropy(p, first, c, plogp, &k1) + interval_entropy(p, c + 1, last, plogp, &k2);
      if (e < mine.entropy) mine = Split{e, c};
    }
    const Split best = Reduce(temp.reduce).Reduce(mine, SplitMin());
    if (threadIdx.x == 0) {
      int32_t k = 0;
      const int64_t h = interval_entropy(p, first, last, plogp, &k);
      bool split = false;
      if (best.at >= 0) {
        const int64_t h1 = interval_entropy(p, first, best.at, plogp, &k1);
        const int64_t h2 = interval_entropy(p, best.at + 1, last, plogp, &k2);
        auto size = [&](int32_t from, int32_t to) {
          int32_t s = 0;
          for (int32_t c = 0; c < p.n_classes; ++c) s += p.count(from, to, c);
          return s;
        };
        split = mdlp_accepts(size(first, last), h, k, size(first, best.at), h1, k1, size(best.at + 1, last), h2, k2,
                             a.tables);
      }
      if (split) {
        is_cut[best.at] = 1;
        open[n_open++] = make_int2(best.at + 1, last);
        open[n_open++] = make_int2(first, best.at);
      } else {
        remaining += h;
      }
    }
    __syncthreads();
  }
  const int32_t n_cut = compact_indices(n_distinct - 1, [&](int32_t t) { return is_cut[t] != 0; }, a.cuts + f * a.n,
                                        temp.scan);
  if (threadIdx.x == 0) {
    int32_t k = 0;
    a.n_cuts[f] = n_cut;
    a.present[f] = present;
    a.information[f] = interval_entropy(p, 0, n_distinct - 1, plogp, &k) - remaining;
  }
}

// Equal-frequency cuts, a thread per feature (unsupervised: the prefix counts are cumulative counts).
__global__ void equal_freq_kernel(FeatureArgs a, int32_t n_features) {
  const int32_t f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f >= n_features) return;
  const int32_t n_distinct = a.n_distinct[f];
  const int32_t* cum = a.prefix + int64_t(f) * a.n;
  int32_t* cuts = a.cuts + int64_t(f) * a.n;
  int32_t n_cut = 0;
  for (int32_t j = 1; j < a.nbins && n_distinct > 1; ++j) {
    const int32_t t = equal_freq_index(cum, n_distinct, j, a.nbins, a.n_valid[f]);
    if (t < n_distinct - 1 && (n_cut == 0 || t > cuts[n_cut - 1])) cuts[n_cut++] = t;
  }
  a.n_cuts[f] = n_cut;
  a.present[f] = 1;
}

// Cut points at the chosen candidates (into scratch, n per feature), and each feature's range.
__global__ void cut_values_kernel(FeatureArgs a, double* lo, double* hi) {
  const int64_t f = blockIdx.x;
  const int32_t n_distinct = a.n_distinct[f];
  const double* v = a.values + f * a.n;
  const int32_t* cuts = a.cuts + f * a.n;
  double* out = a.scratch + f * a.n;
  for (int32_t i = threadIdx.x; i < a.n_cuts[f]; i += blockDim.x) out[i] = cut_between(v[cuts[i]], v[cuts[i] + 1]);
  if (threadIdx.x == 0) {
    lo[f] = n_distinct > 0 ? v[0] : NAN;
    hi[f] = n_distinct > 0 ? v[n_distinct - 1] : NAN;
  }
}

// One device's buffers, sized for its largest chunk of features.
struct DiscretizeDevice {
  int id = 0;
  std::unique_ptr<Stream> stream;
  DeviceBuffer<double> keys, keys_alt, values, scratch, sum_tree, gain_tree, sum, lo, hi;
  DeviceBuffer<int32_t> classes, classes_alt, prefix, first_of, last_of, cuts, offsets, labels, n_distinct, n_valid,
      n_cuts, present, infinite;
  DeviceBuffer<long long> information;
  DeviceBuffer<double> ln, log2, log2_3k;
  DeviceBuffer<int64_t> plogp;
  DeviceBuffer<unsigned char> sort_temp;
};

// The features' summaries and cut points, copied back from the device.
struct ChunkResult {
  std::vector<int32_t> n_cuts, present, n_valid;
  std::vector<double> sum, lo, hi, cut_values;
  std::vector<long long> information;
  int32_t max_cuts = 0;
};


void run_chunk(const DiscretizeTask& task, DiscretizeDevice& dev, int64_t first, int32_t count,
               std::vector<double>& staging, ChunkResult& res, GpuDiscretizePhases& phases) {
  const int32_t n = task.n_samples, classes = task.n_classes;
  const int64_t total = int64_t(count) * n;
  cudaStream_t s = dev.stream->get();
  PhaseClock clock(s);
  if (task.dense) {
    dev.keys.upload(task.dense + first * n, total, s);
  } else {
    for (int32_t f = 0; f < count; ++f) task.read(first + f, staging.data() + int64_t(f) * n);
    dev.keys.upload(staging.data(), total, s);
  }
  clock.mark(phases.upload);
  const int32_t no_feature = INT_MAX;
  dev.infinite.upload(&no_feature, 1, s);
  fill_keys_kernel<<<static_cast<unsigned>((total + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      dev.keys.data(), dev.classes.data(), task.labels ? dev.labels.data() : nullptr, n, total, first,
      dev.infinite.data());
  check_launch("fill_keys_kernel");
  cub::DoubleBuffer<double> keys(dev.keys.data(), dev.keys_alt.data());
  cub::DoubleBuffer<int32_t> cls(dev.classes.data(), dev.classes_alt.data());
  sort_segments(keys, cls, count, n, dev.offsets, dev.sort_temp, s);
  clock.mark(phases.sort);
  const size_t counters = (2 * kWarps + 1) * size_t(classes) * sizeof(int32_t);
  allow_dynamic_shared(distinct_kernel);
  distinct_kernel<<<count, kThreads, counters, s>>>(keys.Current(), cls.Current(), n, classes, dev.values.data(),
                                                    dev.prefix.data(), dev.n_distinct.data(), dev.n_valid.data());
  check_launch("distinct_kernel");
  clock.mark(phases.distinct);

  FeatureArgs args{};
  args.method = task.method;
  args.n = n;
  args.n_classes = classes;
  args.nbins = task.nbins;
  args.n_distinct = dev.n_distinct.data();
  args.n_valid = dev.n_valid.data();
  args.values = dev.values.data();
  args.prefix = dev.prefix.data();
  args.scratch = dev.scratch.data();
  args.sum_tree = dev.sum_tree.data();
  args.gain_tree = dev.gain_tree.data();
  args.first_of = dev.first_of.data();
  args.last_of = dev.last_of.data();
  args.cuts = dev.cuts.data();
  args.n_cuts = dev.n_cuts.data();
  args.present = dev.present.data();
  args.sum = dev.sum.data();
  args.information = dev.information.data();
  args.tables = TableView{dev.ln.data(), dev.log2.data(), dev.log2_3k.data(), dev.plogp.data()};
  const size_t totals = size_t(classes) * sizeof(double);
  switch (task.method) {
    case DiscretizeMethod::caim:
    case DiscretizeMethod::cacc:
    case DiscretizeMethod::ameva:
      topdown_kernel<<<count, kThreads, totals, s>>>(args);
      check_launch("topdown_kernel");
      break;
    case DiscretizeMethod::mdlp:
      mdlp_kernel<<<count, kThreads, totals, s>>>(args);
      check_launch("mdlp_kernel");
      break;
    case DiscretizeMethod::equal_freq:
      equal_freq_kernel<<<(count + 127) / 128, 128, 0, s>>>(args, count);
      check_launch("equal_freq_kernel");
      break;
    case DiscretizeMethod::equal_width:  // only the range is needed
      FSGPU_CUDA_CHECK(cudaMemsetAsync(dev.n_cuts.data(), 0, count * sizeof(int32_t), s));
      break;
  }
  cut_values_kernel<<<count, 128, 0, s>>>(args, dev.lo.data(), dev.hi.data());
  check_launch("cut_values_kernel");
  clock.mark(phases.method);

  int32_t infinite = 0;
  res.n_cuts.resize(count);
  res.present.resize(count);
  res.n_valid.resize(count);
  res.sum.resize(count);
  res.lo.resize(count);
  res.hi.resize(count);
  res.information.resize(count);
  auto download = [&](auto& host, auto& device) {
    FSGPU_CUDA_CHECK(cudaMemcpyAsync(host.data(), device.data(), host.size() * sizeof(host[0]),
                                     cudaMemcpyDeviceToHost, s));
  };
  FSGPU_CUDA_CHECK(cudaMemcpyAsync(&infinite, dev.infinite.data(), sizeof infinite, cudaMemcpyDeviceToHost, s));
  download(res.n_cuts, dev.n_cuts);
  download(res.present, dev.present);
  download(res.n_valid, dev.n_valid);
  download(res.sum, dev.sum);
  download(res.lo, dev.lo);
  download(res.hi, dev.hi);
  download(res.information, dev.information);
  FSGPU_CUDA_CHECK(cudaStreamSynchronize(s));
  if (infinite != no_feature) throw std::runtime_error("feature " + std::to_string(infinite + 1) + " has infinite values");
  res.max_cuts = *std::max_element(res.n_cuts.begin(), res.n_cuts.end());
  res.cut_values.resize(size_t(count) * res.max_cuts);
  if (res.max_cuts > 0)
    FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(res.cut_values.data(), res.max_cuts * sizeof(double), dev.scratch.data(),
                                       n * sizeof(double), res.max_cuts * sizeof(double), count,
                                       cudaMemcpyDeviceToHost, s));
  clock.mark(phases.download);
}

bool is_topdown(DiscretizeMethod m) {
  return m == DiscretizeMethod::caim || m == DiscretizeMethod::cacc || m == DiscretizeMethod::ameva;
}

// Device bytes per feature of a chunk, n values of `classes` classes: keys and classes (twice,
// for the sort), distinct values, prefix counts, scratch, cut list, interval bounds, and the
// top-down trees.
int64_t bytes_per_feature(DiscretizeMethod m, int32_t n, int32_t classes) {
  return int64_t(n) * (2 * 8 + 2 * 4 + 8 + 4 * int64_t(classes) + 8 + 4 + 2 * 4 + (is_topdown(m) ? 2 * 4 * 8 : 0)) + 64;
}

}  // namespace

std::vector<FeatureCuts> gpu_discretize(const DiscretizeTask& task, const GpuOptions& options,
                                        const Checkpoint& between_chunks, GpuDiscretizePhases* phases) {
  if (options.devices.empty()) throw std::runtime_error("no GPU device given");
  const bool supervised = is_supervised(task.method);
  if (supervised && (!task.labels || task.n_classes < 2)) throw std::invalid_argument("supervised discretization needs classes");
  DiscretizeTask t = task;
  t.n_classes = supervised ? task.n_classes : 1;
  if (!supervised) t.labels = nullptr;
  if (t.n_classes > kMaxGpuDiscretizeClasses)
    throw std::runtime_error("the GPU discretization takes up to " + std::to_string(kMaxGpuDiscretizeClasses) +
                             " classes, not " + std::to_string(t.n_classes) + "; use backend = \"cpu\"");
  const int32_t n = t.n_samples;
  std::vector<FeatureCuts> out(t.n_features);
  if (t.n_features == 0 || n == 0) return out;
  const DiscretizeTables tables = DiscretizeTables::make(n, t.n_classes);

  // Chunks: as many features as fit the memory budget, and at most 2^31 values (CUB's offsets).
  const size_t n_devices = options.devices.size();
  int64_t budget = options.memory_limit;
  if (budget <= 0) {
    ScopedDevice on(options.devices[0]);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    budget = static_cast<int64_t>(free_bytes / 2);
  }
  int64_t chunk = std::max<int64_t>(1, budget / bytes_per_feature(t.method, n, t.n_classes));
  chunk = std::min<int64_t>({chunk, (int64_t(INT_MAX) - 1) / n, (t.n_features + int64_t(n_devices) - 1) / int64_t(n_devices)});
  const int64_t n_chunks = (t.n_features + chunk - 1) / chunk;

  std::atomic<bool> cancel(false);
  std::atomic<int64_t> chunks_done(0);
  std::vector<GpuDiscretizePhases> device_phases(n_devices);
  auto work = [&](size_t d) {
    DiscretizeDevice dev;
    dev.id = options.devices[d];
    ScopedDevice on(dev.id);
    dev.stream = std::make_unique<Stream>();
    cudaStream_t s = dev.stream->get();
    PhaseClock clock(s);
    const size_t values = size_t(chunk) * n;
    dev.keys.resize(values);
    dev.keys_alt.resize(values);
    dev.classes.resize(values);
    dev.classes_alt.resize(values);
    dev.values.resize(values);
    dev.prefix.resize(values * t.n_classes);
    dev.scratch.resize(values);
    dev.first_of.resize(values);
    dev.last_of.resize(values);
    dev.cuts.resize(values);
    if (is_topdown(t.method)) {
      dev.sum_tree.resize(4 * values);
      dev.gain_tree.resize(4 * values);
    }
    for (auto* b : {&dev.n_distinct, &dev.n_valid, &dev.n_cuts, &dev.present}) b->resize(chunk);
    for (auto* b : {&dev.sum, &dev.lo, &dev.hi}) b->resize(chunk);
    dev.information.resize(chunk);
    dev.offsets.resize(chunk + 1);
    dev.infinite.resize(1);
    if (t.labels) dev.labels.upload(t.labels, n, s);
    dev.ln.upload(tables.ln.data(), tables.ln.size(), s);
    dev.log2.upload(tables.log2.data(), tables.log2.size(), s);
    dev.log2_3k.upload(tables.log2_3k.data(), tables.log2_3k.size(), s);
    dev.plogp.upload(tables.plogp.data(), tables.plogp.size(), s);
    std::vector<double> staging(t.dense ? 0 : values);
    clock.mark(device_phases[d].setup);
    ChunkResult res;
    for (int64_t c = d; c < n_chunks && !cancel; c += n_devices) {
      const int64_t first = c * chunk;
      const int32_t count = static_cast<int32_t>(std::min<int64_t>(chunk, t.n_features - first));
      run_chunk(t, dev, first, count, staging, res, device_phases[d]);
      for (int32_t f = 0; f < count; ++f) {
        FeatureCuts& fc = out[first + f];
        fc.missing = n - res.n_valid[f];
        fc.lo = res.lo[f];
        fc.hi = res.hi[f];
        fc.criterion = std::numeric_limits<double>::quiet_NaN();
        const double* cut = res.cut_values.data() + size_t(f) * res.max_cuts;
        fc.cuts.assign(cut, cut + res.n_cuts[f]);
        if (t.method == DiscretizeMethod::equal_width) fc.cuts = equal_width_cuts(fc.lo, fc.hi, t.nbins);
        if (!supervised || res.present[f] < 2) continue;
        if (t.method == DiscretizeMethod::mdlp)
          fc.criterion = fixed_to_bits(res.information[f], res.n_valid[f]);
        else
          fc.criterion = reported_criterion(t.method, res.sum[f], res.n_cuts[f] + 1, res.n_valid[f], res.present[f],
                                            tables.ln.data());
      }
      ++chunks_done;
    }
  };
  run_on_devices(std::min<size_t>(n_devices, static_cast<size_t>(n_chunks)), work,
                 [&] { if (between_chunks) between_chunks(static_cast<double>(chunks_done) / n_chunks); }, cancel);
  if (phases)
    for (const GpuDiscretizePhases& p : device_phases) *phases += p;
  return out;
}

}  // namespace fsgpu
