// Exact k-nearest-neighbour search over the rows of a matrix, on the CPU (knn.cpp) and on GPUs
// (cuda/knn.cu), with identical neighbours and distances.
//
// Exactness: every distance is defined by one computation in double precision,
// knn_distance() in knn_metric.h, which both backends evaluate operation for operation; the
// neighbours of a point are the k smallest (distance, index) pairs, so equal distances are
// ordered by index and a point is never its own neighbour (by index: duplicates are fine).
// The CPU evaluates it for every pair. The GPU first scores every pair in single precision,
// keeps every candidate that this pass's proven error bound cannot rule out, and evaluates
// knn_key() on those: the result is the same.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "checkpoint.h"
#include "host_blocks.h"
#include "row_vector.h"

namespace fsgpu {

enum class KnnMetric : int32_t { pearson, spearman, cosine, euclidean, manhattan };

// Points prepared for a metric: rows of `dim` values (padded with zeros to `stride`, a multiple
// of 4, which changes no distance). pearson: centred and scaled to unit length (a constant row
// becomes all zeros: correlation 0 with everything); cosine: scaled to unit length; spearman:
// twice the row's ranks (ties get their average rank) minus their mean, dim + 1: integers, so
// that sums of products are exact and mathematically equal correlations are equal doubles, with
// the rows' lengths in `norms`; euclidean, manhattan: as given.
struct KnnPoints {
  KnnMetric metric = KnnMetric::euclidean;
  int64_t n = 0;
  int32_t dim = 0, stride = 0;
  HostArray<double> rows;       // n x stride, row-major (host_blocks.h: kept from call to call)
  std::vector<double> norms;    // spearman: each row's length (0 for a constant row); empty otherwise
  int64_t constant_rows = 0;    // pearson, spearman, cosine: rows without variation (or length)

  double norm(int64_t i) const { return norms.empty() ? 1.0 : norms[i]; }
};

// Prepares n points whose values are column-major in x (point i's value t at x[t * n + i], as an
// R matrix with points in rows holds them). Throws on non-finite values.
KnnPoints prepare_points(const double* x, int64_t n, int32_t dim, KnnMetric metric, int threads);

// Neighbours of every query: index (0-based into the reference points) and distance, row-major
// n_queries x k, nearest first.
struct KnnResult {
  int64_t n_queries = 0;
  int32_t k = 0;
  HostArray<int32_t> index;   // uninitialised when sized: the searches write every entry
  HostArray<double> distance;
};

// Throws when queries (null: the reference points themselves) and reference points do not fit
// together or k is not between 1 and the number of other points.
void check_knn_arguments(const KnnPoints& reference, const KnnPoints* queries, int32_t k);

// The k nearest reference points of each query point. queries == nullptr: the reference points
// themselves, each excluding itself (then k < n). Like the GPU, it scores every pair in single
// precision (vectorised), keeps the k + 32 best candidates per query and reranks them exactly
// (rerank_candidates). between_blocks runs on the calling thread between blocks of queries
// (where the caller may check for an interrupt).
KnnResult cpu_knn(const KnnPoints& reference, const KnnPoints* queries, int32_t k, int threads,
                  const Checkpoint& between_blocks);

// Every reference point within a distance threshold of each query, in index order: query i's
// are index[offsets[i] .. offsets[i + 1]) (0-based), with their distances. A point is within t
// when its knn_key() is at most knn_threshold_key(t) (for euclidean: the squared distance at
// most t * t, BiocNeighbors' rule); a query that is a reference point is its own neighbour.
struct KnnRangeResult {
  int64_t n_queries = 0;
  std::vector<int64_t> offsets;
  std::vector<int32_t> index;
  std::vector<double> distance;

  // Fills the result from each query's (index, distance) list, in order (emptying them).
  void assemble(std::vector<std::vector<std::pair<int32_t, double>>>& per_query);
};

// Throws when queries and reference points do not fit together or a threshold is negative or
// not finite.
void check_range_arguments(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds);

// The range search on the CPU: queries == nullptr searches the reference points themselves;
// thresholds[i] is query i's. Every pair is scored by the kNN search's single-precision pass;
// a pair whose score is more than the pass's error bound above the threshold's key is out, and
// every other pair is decided, and reported, by knn_key() in double precision.
KnnRangeResult cpu_knn_range(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds,
                             int threads, const Checkpoint& between_blocks);

// Single-precision copies of prepared rows for the GPU's candidate pass, `stride32` floats each:
// spearman's rows scaled to unit length, euclidean and manhattan rows minus `centre` (dim values,
// or null), which changes no distance and shrinks the rounding error; and per row the magnitude
// the pass's error bound grows with (1 for the correlation metrics' unit rows; the squared or L1
// norm for euclidean and manhattan), of the float rows (size32) and of the double rows (size64).
// The euclidean and manhattan candidate passes' centre: the reference points' mean (empty for
// the correlation metrics).
std::vector<double> knn_centre(const KnnPoints& reference);

struct KnnFloatRows {
  RowVector<float> rows;
  std::vector<double> size32, size64;
};
// with_rows false: for the correlation metrics, the magnitudes only (rows empty).
KnnFloatRows knn_float_rows(const KnnPoints& p, const double* centre, int32_t stride32, int threads,
                            bool with_rows = true);

// The precision of a candidate pass: half (tensor cores; correlation metrics only) or single.
enum class KnnPrecision : int32_t { half, single };

// Twice the bound on |candidate score - knn_key()| (in score units) for each query against
// any reference row, for a pass over `terms` values per row in the given precision (the
// analysis is in cuda/knn.cu's header): a candidate whose score is more than this above the
// k-th best score cannot be among the k nearest.
std::vector<double> knn_score_bounds(KnnMetric m, KnnPrecision p, int32_t terms, const KnnFloatRows& queries,
                                     const KnnFloatRows& reference);

// A candidate of a single- or half-precision pass: its score (correlation metrics: 1 - dot;
// euclidean: the squared distance; manhattan: the distance) and reference index.
struct KnnCandidate {
  float score;
  int32_t index;
};

// The exact neighbours of queries first .. first + n - 1 from their candidates (`size[i]` of
// them from candidates + i * capacity, in any order), as the GPU's rerank does: knn_key()
// for every candidate whose score is within bound[i] of the k-th best score; when that is every
// one of `capacity` candidates (a point left out could have belonged), knn_key() for every
// reference point instead, counted in *exact_rows. Writes rows first.. of out.
void rerank_candidates(const KnnPoints& reference, const KnnPoints& queries, bool self, int64_t first, int64_t n,
                       const KnnCandidate* candidates, const int32_t* size, int32_t capacity, const double* bound,
                       KnnResult& out, int threads, int64_t* exact_rows);

// Shared-nearest-neighbour edges as bluster's makeSNNGraph: every node is its own neighbour of
// rank 0 and its j-th nearest has rank j; two nodes are linked when their neighbour sets share a
// node. type rank: max(k - r/2, 1e-6) with r the smallest sum of the ranks of a shared node (Xu
// and Su 2015); number: the count of shared nodes; jaccard: that count c as c / (2 (k + 1) - c).
// Edges from < to (0-based), ordered by from, then to.
enum class SnnType : int32_t { rank, number, jaccard };
struct WeightedEdges {
  std::vector<int32_t> from, to;
  std::vector<double> weight;
};
WeightedEdges snn_edges(const KnnResult& knn, SnnType type, int threads);

}  // namespace fsgpu
