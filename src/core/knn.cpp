// The CPU kNN engine: every pair scored in single precision by a vectorised micro-kernel (4
// queries x 8 reference rows, the reference rows in panels of 8 so that one load feeds four
// queries), a heap of candidates per query, and the exact rerank that the GPU's streaming path
// uses too (rerank_candidates). Blocked so that a block of panels stays in cache while a block
// of queries runs over it.
#include "exact_rounding.h"  // first: the pragma covers the inline criteria of the headers below
#include "knn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "knn_metric.h"
#include "parallel.h"
#include "target_clones.h"

namespace fsgpu {

namespace {

// A prepared row's values four at a time, over its stride (a multiple of 4, zeros past dim):
// GCC/Clang vector extensions, whose lanes are each rounded on their own as the scalar operation
// (kept inside the functions below: a 32-byte vector passed by value changes the ABI).
typedef double Four __attribute__((vector_size(32)));

// Applies f to each group of four values of the row, in place.
template <class F>
void each_four(double* row, int32_t stride, F f) {
  for (int32_t t = 0; t < stride; t += 4) {
    Four v;
    std::memcpy(&v, row + t, sizeof v);
    f(v);
    std::memcpy(row + t, &v, sizeof v);
  }
}

// Sums, over the row, of each group of four values changed by f, in four running sums: the terms of
// dimensions t = j (mod 4) in lane j one after another, added as (s0 + s1) + (s2 + s3), as
// knn_key() adds for the correlation metrics (the preparation needs only to be the same on every
// run: it happens on the host). The padding's zeros add zeros, which change no lane (a running
// sum from +0 is never -0).
template <class F>
double sum4(const double* row, int32_t stride, F f) {
  Four s = {0, 0, 0, 0};
  for (int32_t t = 0; t < stride; t += 4) {
    Four v;
    std::memcpy(&v, row + t, sizeof v);
    f(v);
    s += v;
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

double sum4(const double* row, int32_t stride) {
  return sum4(row, stride, [](Four&) {});
}

// Whether every value is finite: v * 0 is 0 for a finite v, NaN for an infinite or missing one.
bool all_finite(const double* row, int32_t stride) {
  return sum4(row, stride, [](Four& v) { v *= 0.0; }) == 0;
}

// Ranks 1..n of v, ties averaged (as R's rank()).
void average_ranks(const double* v, int32_t n, std::vector<int32_t>& order, double* ranks) {
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] < v[b] || (v[a] == v[b] && a < b); });
  for (int32_t i = 0; i < n;) {
    int32_t j = i;
    while (j + 1 < n && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (i + j) / 2.0 + 1;  // positions i..j hold ranks i+1..j+1
    for (int32_t p = i; p <= j; ++p) ranks[order[p]] = rank;
    i = j + 1;
  }
}

// Scales a prepared row to unit length; false (and zeros) when it has none.
bool unit_length(double* row, int32_t stride) {
  // each square rounded, then added (no fused multiply-add here)
  const double norm = std::sqrt(sum4(row, stride, [](Four& v) { v *= v; }));
  if (!(norm > 0)) {
    std::fill(row, row + stride, 0.0);
    return false;
  }
  each_four(row, stride, [norm](Four& v) { v /= norm; });  // the padding stays 0
  return true;
}

// Single-precision lanes of the micro-kernel (GCC/Clang vector extensions: two SSE registers
// by default, one AVX register in the avx2 clone).
typedef float Lanes __attribute__((vector_size(32)));
typedef int32_t LaneBits __attribute__((vector_size(32)));
constexpr int kLanes = 8;
constexpr int kGroup = 4;             // queries per micro-kernel call
constexpr int64_t kQueryBlock = 64;   // queries per work item
constexpr int64_t kPanelBlock = 32;   // panels of 8 reference rows that stay in cache together
constexpr int32_t kExtra = 32;        // candidates kept beyond k

// The scores of kGroup queries (rows of `stride` floats) against a panel of 8 reference rows
// stored dimension by dimension (panel[t * 8 + j] is row j's value t).
FSGPU_TARGET_CLONES("avx2", "default")
void score_panel(KnnMetric m, const float* const* q, const float* panel, int32_t stride, Lanes* out) {
  Lanes acc[kGroup] = {};
  for (int32_t t = 0; t < stride; ++t) {
    Lanes b;
    std::memcpy(&b, panel + t * kLanes, sizeof b);
    for (int g = 0; g < kGroup; ++g) {
      if (m == KnnMetric::euclidean) {
        const Lanes d = q[g][t] - b;
        acc[g] += d * d;
      } else if (m == KnnMetric::manhattan) {
        LaneBits bits;
        const Lanes d = q[g][t] - b;
        std::memcpy(&bits, &d, sizeof bits);
        bits &= 0x7fffffff;  // |d|
        Lanes magnitude;
        std::memcpy(&magnitude, &bits, sizeof magnitude);
        acc[g] += magnitude;
      } else {
        acc[g] += q[g][t] * b;
      }
    }
  }
  for (int g = 0; g < kGroup; ++g) out[g] = is_correlation(m) ? 1.0f - acc[g] : acc[g];
}

// Max-heap of the best candidates by (score, index), worst on top.
void offer(KnnCandidate* heap, int32_t& size, int32_t capacity, KnnCandidate c) {
  auto worse = [](const KnnCandidate& a, const KnnCandidate& b) {
    return a.score < b.score || (a.score == b.score && a.index < b.index);
  };
  if (size < capacity) {
    heap[size++] = c;
    std::push_heap(heap, heap + size, worse);
  } else if (worse(c, heap[0])) {
    std::pop_heap(heap, heap + size, worse);
    heap[size - 1] = c;
    std::push_heap(heap, heap + size, worse);
  }
}

// The single-precision pass of both searches: float rows (knn_float_rows), the reference rows in
// panels of 8, dimension by dimension (rows past the end are zeros, skipped), and each query's
// error bound (knn_score_bounds).
struct FloatPass {
  int32_t stride32 = 0;
  int64_t n_panels = 0;
  KnnFloatRows refs32, own32;  // own32: the queries' rows, when they are not the reference points
  bool self = true;
  std::vector<float> panels;
  std::vector<double> bound;

  FloatPass(const KnnPoints& reference, const KnnPoints* queries, int threads) : self(queries == nullptr) {
    stride32 = (reference.dim + kLanes - 1) / kLanes * kLanes;
    const std::vector<double> centre = knn_centre(reference);
    const double* centre_data = centre.empty() ? nullptr : centre.data();
    refs32 = knn_float_rows(reference, centre_data, stride32, threads);
    if (!self) own32 = knn_float_rows(*queries, centre_data, stride32, threads);
    bound = knn_score_bounds(reference.metric, KnnPrecision::single, stride32, queries32(), refs32);
    n_panels = (reference.n + kLanes - 1) / kLanes;
    panels.assign(static_cast<size_t>(n_panels) * stride32 * kLanes, 0.0f);
    parallel_for(n_panels, threads, 64, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p)
        for (int j = 0; j < kLanes && p * kLanes + j < reference.n; ++j)
          for (int32_t t = 0; t < stride32; ++t)
            panels[(p * stride32 + t) * kLanes + j] = refs32.rows[(p * kLanes + j) * stride32 + t];
    });
  }
  const KnnFloatRows& queries32() const { return self ? refs32 : own32; }
};

}  // namespace

KnnPoints prepare_points(const double* x, int64_t n, int32_t dim, KnnMetric metric, int threads) {
  if (n < 1 || dim < 1) throw std::invalid_argument("no points or no dimensions");
  KnnPoints p;
  p.metric = metric;
  p.n = n;
  p.dim = dim;
  p.stride = (dim + 3) / 4 * 4;
  p.rows.resize(static_cast<size_t>(n) * p.stride);  // uninitialised: each worker writes its rows
  if (metric == KnnMetric::spearman) {
    if (dim > (1 << 16)) throw std::invalid_argument("spearman takes at most 65,536 dimensions");  // exact sums
    p.norms.assign(n, 0.0);
  }
  const int32_t stride = p.stride;
  double* const rows = p.rows.data();
  std::vector<int64_t> constant(std::max(threads, 1), 0);
  // Row i, copied and zero-padded, prepared in place.
  auto prepare_row = [&](double* row, int64_t i, int worker, std::vector<int32_t>& order, std::vector<double>& ranks) {
    if (!all_finite(row, stride))
      throw std::runtime_error("point " + std::to_string(i + 1) + " has a missing or infinite value");
    if (metric == KnnMetric::spearman) {
      // 2 rank - (dim + 1): integers (average ranks are halves) summing to 0.
      average_ranks(row, dim, order, ranks.data());
      double length = 0;
      for (int32_t t = 0; t < dim; ++t) {
        row[t] = 2 * ranks[t] - (dim + 1);
        length += row[t] * row[t];  // exact: integers below 2^53
      }
      p.norms[i] = std::sqrt(length);
      if (length == 0) ++constant[worker];
      return;
    }
    if (metric == KnnMetric::pearson) {
      const double mean = sum4(row, stride) / dim;
      each_four(row, stride, [mean](Four& v) { v -= mean; });
      std::fill(row + dim, row + stride, 0.0);  // the padding back to zeros
    }
    if (is_correlation(metric) && !unit_length(row, stride)) ++constant[worker];
  };
  // Blocks of 512 rows, each column's piece of a block 4 KB of the input, copied and prepared in
  // tiles of 32 rows (75 KB at 295 dimensions) that stay in the core's cache from the copy to the
  // preparation; a whole block's rows (1.2 MB) need not.
  constexpr int64_t kTileRows = 32;
  parallel_for(n, threads, 512, [&](int64_t begin, int64_t end, int worker) {
    std::vector<double> ranks(dim);
    std::vector<int32_t> order;
    for (int64_t i0 = begin; i0 < end; i0 += kTileRows) {
      const int64_t i1 = std::min(end, i0 + kTileRows);
      for (int32_t t = 0; t < dim; ++t)  // rows from the column-major input
        for (int64_t i = i0; i < i1; ++i) rows[i * stride + t] = x[t * n + i];
      for (int64_t i = i0; i < i1; ++i) {
        std::fill(rows + i * stride + dim, rows + (i + 1) * stride, 0.0);
        prepare_row(rows + i * stride, i, worker, order, ranks);
      }
    }
  });
  for (int64_t c : constant) p.constant_rows += c;
  return p;
}

void check_knn_arguments(const KnnPoints& reference, const KnnPoints* queries, int32_t k) {
  const bool self = queries == nullptr;
  const KnnPoints& q = self ? reference : *queries;
  if (q.metric != reference.metric || q.stride != reference.stride)
    throw std::invalid_argument("queries and reference points differ in metric or dimension");
  if (k < 1 || k > reference.n - (self ? 1 : 0))
    throw std::invalid_argument("k must be between 1 and the number of other points");
}

KnnResult cpu_knn(const KnnPoints& reference, const KnnPoints* queries, int32_t k, int threads,
                  const Checkpoint& between_blocks) {
  check_knn_arguments(reference, queries, k);
  const bool self = queries == nullptr;
  const KnnPoints& q = self ? reference : *queries;
  const KnnMetric m = reference.metric;
  const FloatPass pass(reference, queries, threads);
  const int32_t stride32 = pass.stride32;
  const int64_t n_panels = pass.n_panels;
  const std::vector<float>& panels = pass.panels;
  const KnnFloatRows& q32 = pass.queries32();
  const std::vector<double>& bound = pass.bound;

  KnnResult out;
  out.n_queries = q.n;
  out.k = k;
  out.index.resize(static_cast<size_t>(q.n) * k);
  out.distance.resize(out.index.size());
  const int32_t capacity = static_cast<int32_t>(std::min<int64_t>(k + kExtra, reference.n));
  const int64_t n_blocks = (q.n + kQueryBlock - 1) / kQueryBlock;
  // About 2^32 multiply-adds a slice (a fraction of a second), however large the search.
  const int64_t slices = std::max<int64_t>(q.n * reference.n * stride32 / (int64_t(1) << 32), 1);
  std::vector<std::vector<KnnCandidate>> heaps(std::max(threads, 1));
  std::vector<std::vector<int32_t>> sizes(std::max(threads, 1));
  std::vector<int64_t> exact_rows(std::max(threads, 1), 0);
  sliced_parallel_for(n_blocks, slices, threads, 1, between_blocks, [&](int64_t block, int worker) {
    const int64_t first = block * kQueryBlock, count = std::min(q.n, first + kQueryBlock) - first;
    std::vector<KnnCandidate>& heap = heaps[worker];
    std::vector<int32_t>& size = sizes[worker];
    heap.resize(static_cast<size_t>(kQueryBlock) * capacity);
    size.assign(kQueryBlock, 0);
    std::vector<float> zero_row(stride32, 0.0f);  // a stand-in for queries past the block's end
    for (int64_t p0 = 0; p0 < n_panels; p0 += kPanelBlock) {
      const int64_t p1 = std::min(n_panels, p0 + kPanelBlock);
      for (int64_t g0 = 0; g0 < count; g0 += kGroup) {
        const float* rows[kGroup];
        for (int g = 0; g < kGroup; ++g)
          rows[g] = g0 + g < count ? q32.rows.data() + (first + g0 + g) * stride32 : zero_row.data();
        for (int64_t p = p0; p < p1; ++p) {
          Lanes score[kGroup];
          score_panel(m, rows, panels.data() + p * stride32 * kLanes, stride32, score);
          for (int g = 0; g < kGroup && g0 + g < count; ++g) {
            const int64_t local = g0 + g, i = first + local;
            KnnCandidate* h = heap.data() + local * capacity;
            for (int j = 0; j < kLanes; ++j) {
              const int64_t r = p * kLanes + j;
              if (r >= reference.n || (self && r == i)) continue;
              const float s = score[g][j];
              if (size[local] == capacity && !(s < h[0].score || (s == h[0].score && r < h[0].index))) continue;
              offer(h, size[local], capacity, KnnCandidate{s, static_cast<int32_t>(r)});
            }
          }
        }
      }
    }
    rerank_candidates(reference, q, self, first, count, heap.data(), size.data(), capacity, bound.data() + first, out,
                      1, &exact_rows[worker]);
  });
  return out;
}

void check_range_arguments(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds) {
  const KnnPoints& q = queries ? *queries : reference;
  if (q.metric != reference.metric || q.stride != reference.stride)
    throw std::invalid_argument("queries and reference points differ in metric or dimension");
  for (int64_t i = 0; i < q.n; ++i)
    if (!(thresholds[i] >= 0) || !std::isfinite(thresholds[i]))
      throw std::invalid_argument("thresholds must be finite and not negative");
}

void KnnRangeResult::assemble(std::vector<std::vector<std::pair<int32_t, double>>>& per_query) {
  n_queries = static_cast<int64_t>(per_query.size());
  offsets.assign(n_queries + 1, 0);
  for (int64_t i = 0; i < n_queries; ++i) offsets[i + 1] = offsets[i] + static_cast<int64_t>(per_query[i].size());
  index.resize(offsets[n_queries]);
  distance.resize(offsets[n_queries]);
  for (int64_t i = 0; i < n_queries; ++i) {
    for (size_t e = 0; e < per_query[i].size(); ++e) {
      index[offsets[i] + e] = per_query[i][e].first;
      distance[offsets[i] + e] = per_query[i][e].second;
    }
    std::vector<std::pair<int32_t, double>>().swap(per_query[i]);
  }
}

KnnRangeResult cpu_knn_range(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds,
                             int threads, const Checkpoint& between_blocks) {
  check_range_arguments(reference, queries, thresholds);
  const KnnPoints& q = queries ? *queries : reference;
  const KnnMetric m = reference.metric;
  const FloatPass pass(reference, queries, threads);
  const int32_t stride32 = pass.stride32;
  const KnnFloatRows& q32 = pass.queries32();
  std::vector<std::vector<std::pair<int32_t, double>>> found(q.n);
  const int64_t n_blocks = (q.n + kQueryBlock - 1) / kQueryBlock;
  const int64_t slices = std::max<int64_t>(q.n * reference.n * stride32 / (int64_t(1) << 32), 1);
  sliced_parallel_for(n_blocks, slices, threads, 1, between_blocks, [&](int64_t block, int) {
    const int64_t first = block * kQueryBlock, count = std::min(q.n, first + kQueryBlock) - first;
    std::vector<float> zero_row(stride32, 0.0f);
    double key_limit[kGroup], screen[kGroup];
    for (int64_t g0 = 0; g0 < count; g0 += kGroup) {
      const float* rows[kGroup];
      for (int g = 0; g < kGroup; ++g) {
        const int64_t i = first + g0 + g;
        rows[g] = g0 + g < count ? q32.rows.data() + i * stride32 : zero_row.data();
        if (g0 + g < count) {
          // A score more than the pass's error (half the bound) above the key limit is out.
          key_limit[g] = knn_threshold_key(m, thresholds[i]);
          screen[g] = key_limit[g] + pass.bound[i] / 2;
        }
      }
      // Panels in order, so that each query's neighbours come in index order.
      for (int64_t p = 0; p < pass.n_panels; ++p) {
        Lanes score[kGroup];
        score_panel(m, rows, pass.panels.data() + p * stride32 * kLanes, stride32, score);
        for (int g = 0; g < kGroup && g0 + g < count; ++g) {
          const int64_t i = first + g0 + g;
          const double* qrow = q.rows.data() + i * q.stride;
          for (int j = 0; j < kLanes; ++j) {
            const int64_t r = p * kLanes + j;
            if (r >= reference.n || static_cast<double>(score[g][j]) > screen[g]) continue;
            const double key = knn_key(m, qrow, reference.rows.data() + r * reference.stride, reference.stride,
                                       q.norm(i), reference.norm(r));
            if (key <= key_limit[g]) found[i].emplace_back(static_cast<int32_t>(r), knn_key_distance(m, key));
          }
        }
      }
    }
  });
  KnnRangeResult out;
  out.assemble(found);
  return out;
}

std::vector<double> knn_centre(const KnnPoints& reference) {
  std::vector<double> centre;
  if (is_correlation(reference.metric)) return centre;
  centre.assign(reference.dim, 0.0);
  for (int64_t i = 0; i < reference.n; ++i)
    for (int32_t t = 0; t < reference.dim; ++t) centre[t] += reference.rows[i * reference.stride + t];
  for (double& c : centre) c /= static_cast<double>(reference.n);
  return centre;
}

KnnFloatRows knn_float_rows(const KnnPoints& p, const double* centre, int32_t stride32, int threads,
                            bool with_rows) {
  KnnFloatRows out;
  out.size32.assign(p.n, 1.0);
  out.size64.assign(p.n, 1.0);
  const bool magnitudes = !is_correlation(p.metric);
  if (!with_rows && !magnitudes) return out;  // unit rows: every magnitude is 1
  out.rows.resize(static_cast<size_t>(p.n) * stride32);  // uninitialised: every value is written below
  const bool squares = p.metric == KnnMetric::euclidean;
  parallel_for(p.n, threads, 1024, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      const double* row = p.rows.data() + i * p.stride;
      float* out_row = out.rows.data() + i * stride32;
      const double scale = p.norm(i) > 0 ? 1 / p.norm(i) : 0.0;
      double s32 = 0, s64 = 0;
      for (int32_t t = 0; t < p.dim; ++t) {
        out_row[t] = static_cast<float>((row[t] - (centre ? centre[t] : 0.0)) * scale);
        const double f = out_row[t];
        s32 += squares ? f * f : std::fabs(f);
        s64 += squares ? row[t] * row[t] : std::fabs(row[t]);
      }
      std::fill(out_row + p.dim, out_row + stride32, 0.0f);
      if (magnitudes) {  // with room for the rounding of these sums
        out.size32[i] = s32 * (1 + 1e-12);
        out.size64[i] = s64 * (1 + 1e-12);
      }
    }
  });
  return out;
}

std::vector<double> knn_score_bounds(KnnMetric m, KnnPrecision p, int32_t terms, const KnnFloatRows& queries,
                                     const KnnFloatRows& reference) {
  const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  const double per_term = m == KnnMetric::euclidean ? 2 : 1;
  const double max32 = *std::max_element(reference.size32.begin(), reference.size32.end());
  const double max64 = *std::max_element(reference.size64.begin(), reference.size64.end());
  std::vector<double> bound(queries.size32.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    double pass;
    if (p == KnnPrecision::single) {
      pass = per_term * (terms + 10) * u32 * (queries.size32[i] + max32);
    } else {  // unit rows: double -> float -> half rounding, subnormal halves, tensor-core sums
      const double u16 = std::ldexp(1.0, -11) + u32;
      pass = 2 * u16 + u16 * u16 + 2 * std::sqrt(double(terms)) * std::ldexp(1.0, -25) + (2 * terms + 8) * u32;
    }
    const double exact = per_term * (terms + 4) * u64 * (queries.size64[i] + max64);
    bound[i] = 2 * (pass + exact) * (1 + 1e-6);
  }
  return bound;
}

void rerank_candidates(const KnnPoints& reference, const KnnPoints& queries, bool self, int64_t first, int64_t n,
                       const KnnCandidate* candidates, const int32_t* size, int32_t capacity, const double* bound,
                       KnnResult& out, int threads, int64_t* exact_rows) {
  const int32_t k = out.k, stride = reference.stride;
  const KnnMetric m = reference.metric;
  std::vector<int64_t> exact(std::max(threads, 1), 0);
  parallel_for(n, threads, 16, [&](int64_t begin, int64_t end, int worker) {
    std::vector<KnnCandidate> c;
    std::vector<std::pair<double, int32_t>> best;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row = first + r;
      const double* q = queries.rows.data() + row * stride;
      c.assign(candidates + r * capacity, candidates + r * capacity + size[r]);
      std::sort(c.begin(), c.end(), [](const KnnCandidate& a, const KnnCandidate& b) {
        return a.score < b.score || (a.score == b.score && a.index < b.index);
      });
      const double limit = static_cast<double>(c[std::min<size_t>(k, c.size()) - 1].score) + bound[r];
      size_t close = 0;
      while (close < c.size() && static_cast<double>(c[close].score) <= limit) ++close;
      best.clear();
      if (size[r] == capacity && close == c.size()) {
        ++exact[worker];
        for (int64_t j = 0; j < reference.n; ++j)
          if (!(self && j == row))
            best.emplace_back(knn_key(m, q, reference.rows.data() + j * stride, stride, queries.norm(row),
                                      reference.norm(j)), j);
      } else {
        for (size_t i = 0; i < close; ++i)
          best.emplace_back(knn_key(m, q, reference.rows.data() + int64_t(c[i].index) * stride, stride,
                                    queries.norm(row), reference.norm(c[i].index)), c[i].index);
      }
      std::partial_sort(best.begin(), best.begin() + k, best.end(), [](const auto& a, const auto& b) {
        return knn_before(a.first, a.second, b.first, b.second);
      });
      for (int32_t i = 0; i < k; ++i) {
        out.index[row * k + i] = best[i].second;
        out.distance[row * k + i] = knn_key_distance(m, best[i].first);
      }
    }
  });
  for (int64_t e : exact) *exact_rows += e;
}

WeightedEdges snn_edges(const KnnResult& knn, SnnType type, int threads) {
  const int64_t n = knn.n_queries;
  const int32_t k = knn.k;
  // members[node]: the (point, rank) whose neighbour sets hold node, the node itself first.
  std::vector<int64_t> start(n + 1, 0);
  for (int32_t j : knn.index) ++start[j + 1];
  for (int64_t i = 0; i < n; ++i) start[i + 1] += start[i] + 1;
  std::vector<std::pair<int32_t, int32_t>> members(start[n]);
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i) members[fill[i]++] = {static_cast<int32_t>(i), 0};
  for (int64_t i = 0; i < n; ++i)
    for (int32_t r = 0; r < k; ++r) members[fill[knn.index[i * k + r]]++] = {static_cast<int32_t>(i), r + 1};
  // Per point, its edges to higher-numbered points, in order.
  std::vector<WeightedEdges> per_point(n);
  std::vector<std::vector<int32_t>> scores(std::max(threads, 1));
  parallel_for(n, threads, 256, [&](int64_t begin, int64_t end, int worker) {
    std::vector<int32_t>& score = scores[worker];  // -1 where no shared node was seen
    if (score.empty()) score.assign(n, -1);
    std::vector<int32_t> touched;
    for (int64_t i = begin; i < end; ++i) {
      touched.clear();
      for (int32_t r = 0; r <= k; ++r) {
        const int32_t node = r == 0 ? static_cast<int32_t>(i) : knn.index[i * k + r - 1];
        for (int64_t e = start[node]; e < start[node + 1]; ++e) {
          const auto [other, other_rank] = members[e];
          if (other <= i) continue;
          if (score[other] < 0) {
            touched.push_back(other);
            score[other] = type == SnnType::rank ? r + other_rank : 1;
          } else {
            score[other] = type == SnnType::rank ? std::min(score[other], r + other_rank) : score[other] + 1;
          }
        }
      }
      std::sort(touched.begin(), touched.end());
      WeightedEdges& w = per_point[i];
      for (int32_t other : touched) {
        const double s = score[other];
        w.from.push_back(static_cast<int32_t>(i));
        w.to.push_back(other);
        w.weight.push_back(type == SnnType::rank     ? std::max(k - 0.5 * s, 1e-6)
                           : type == SnnType::number ? s
                                                     : s / (2.0 * (k + 1) - s));
        score[other] = -1;
      }
    }
  });
  WeightedEdges out;
  for (WeightedEdges& w : per_point) {
    out.from.insert(out.from.end(), w.from.begin(), w.from.end());
    out.to.insert(out.to.end(), w.to.begin(), w.to.end());
    out.weight.insert(out.weight.end(), w.weight.begin(), w.weight.end());
  }
  return out;
}

}  // namespace fsgpu
