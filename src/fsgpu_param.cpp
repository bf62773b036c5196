// Glue for FsgpuParam's index (R/FsgpuParam_index.R): the prepared points behind an external
// pointer, with their copy on the GPUs once a search has run there, and the kNN and range
// searches over them.
#include <Rcpp.h>

#include "core/gpu_backend.h"
#include "core/knn.h"
#include "input_codes.h"
#include "job_progress.h"
#include "knn_glue.h"

using namespace fsgpu;

namespace {

// What an index's external pointer holds (freed by its finalizer, the device copy with it).
struct BnIndex {
  KnnPoints points;
  std::shared_ptr<GpuKnnKept> kept;  // the points on the devices `kept_on`, after a GPU search
  std::vector<int> kept_on;
};
using IndexPointer = Rcpp::XPtr<BnIndex>;

BnIndex& index_of(SEXP handle) {
  if (TYPEOF(handle) != EXTPTRSXP || !R_ExternalPtrAddr(handle)) throw std::invalid_argument("the index has no points");
  return *IndexPointer(handle);
}

// The index's copy on the devices of `options`, made on its first search there and kept for
// the next ones; none (null) for an index that is searched once (keep false): R frees an
// external pointer only when it collects garbage, which knows nothing of device memory.
const GpuKnnKept* kept_copy(BnIndex& index, const GpuOptions& options, bool keep) {
  if (!keep) return nullptr;
  if (!index.kept || index.kept_on != options.devices) {
    index.kept.reset();  // the old copy first: the devices may not hold two
    index.kept = gpu_knn_keep(index.points, options);
    index.kept_on = options.devices;
  }
  return index.kept.get();
}

// Query points (rows of a double matrix) prepared for the index's metric, or none.
bool prepare_queries(const KnnPoints& reference, Rcpp::Nullable<Rcpp::NumericMatrix> query, int threads,
                     KnnPoints& out) {
  if (query.isNull()) return false;
  Rcpp::NumericMatrix q(query.get());
  if (q.ncol() != reference.dim) throw std::invalid_argument("query dimensionality differs from the index's");
  out = prepare_points(q.begin(), q.nrow(), q.ncol(), reference.metric, threads);
  return true;
}

GpuOptions gpu_options(Rcpp::IntegerVector devices, double memory_limit, int threads) {
  GpuOptions options;
  options.devices.assign(devices.begin(), devices.end());
  options.memory_limit = static_cast<int64_t>(memory_limit);
  options.host_threads = threads;
  return options;
}

}  // namespace

// The points (rows of a double matrix, at least one row and one column) prepared for "euclidean"
// or "manhattan", behind an external pointer whose finalizer frees them (and their device copy).
// [[Rcpp::export]]
SEXP fsgpu_bn_index(Rcpp::NumericMatrix points, std::string metric, int threads) {
  FSGPU_GLUE_BEGIN
  if (metric != "euclidean" && metric != "manhattan") throw std::invalid_argument("unknown metric '" + metric + "'");
  const KnnMetric m = metric == "euclidean" ? KnnMetric::euclidean : KnnMetric::manhattan;
  return IndexPointer(new BnIndex{prepare_points(points.begin(), points.nrow(), points.ncol(), m, threads), nullptr, {}},
                      true);
  FSGPU_GLUE_END
}

// Whether an index's external pointer still holds its points (not after saveRDS(), or in
// another process).
// [[Rcpp::export]]
bool fsgpu_bn_index_live(SEXP handle) { return TYPEOF(handle) == EXTPTRSXP && R_ExternalPtrAddr(handle) != nullptr; }

// The k nearest indexed points (1-based) and distances of every indexed point (query NULL:
// each excluding itself) or of every query row: matrices, points x k, nearest first. keep: keep
// the points on the GPUs for the next search.
// [[Rcpp::export]]
Rcpp::List fsgpu_bn_knn(SEXP handle, Rcpp::Nullable<Rcpp::NumericMatrix> query, int k, std::string backend,
                        int threads, Rcpp::IntegerVector devices, double memory_limit, bool keep,
                        SEXP progress = R_NilValue) {
  FSGPU_GLUE_BEGIN
  BnIndex& bn = index_of(handle);
  const KnnPoints& reference = bn.points;
  KnnPoints queries;
  const bool has_queries = prepare_queries(reference, query, threads, queries);
  JobProgress job(progress);
  KnnResult r;
  if (backend == "gpu") {
    const GpuOptions options = gpu_options(devices, memory_limit, threads);
    r = gpu_knn(reference, has_queries ? &queries : nullptr, k, options, job.whole(), nullptr, kept_copy(bn, options, keep));
  } else {
    r = cpu_knn(reference, has_queries ? &queries : nullptr, k, threads, job.whole());
  }
  return knn_result_matrices(r, threads);
  FSGPU_GLUE_END
}

// Every indexed point within thresholds[i] of point i (query NULL: the indexed points, each its
// own neighbour) or of query row i, in index order: list(index, distance) of per-point vectors
// (1-based indices), as asked for, or with neither the per-point counts. keep: as for fsgpu_bn_knn.
// [[Rcpp::export]]
SEXP fsgpu_bn_range(SEXP handle, Rcpp::Nullable<Rcpp::NumericMatrix> query, Rcpp::NumericVector thresholds,
                    bool get_index, bool get_distance, std::string backend, int threads, Rcpp::IntegerVector devices,
                    double memory_limit, bool keep, SEXP progress = R_NilValue) {
  FSGPU_GLUE_BEGIN
  BnIndex& bn = index_of(handle);
  const KnnPoints& reference = bn.points;
  KnnPoints queries;
  const bool has_queries = prepare_queries(reference, query, threads, queries);
  const int64_t n = has_queries ? queries.n : reference.n;
  if (thresholds.size() != n) throw std::invalid_argument("one threshold per point is needed");
  JobProgress job(progress);
  KnnRangeResult r;
  if (backend == "gpu") {
    const GpuOptions options = gpu_options(devices, memory_limit, threads);
    r = gpu_knn_range(reference, has_queries ? &queries : nullptr, thresholds.begin(), options, job.whole(),
                      kept_copy(bn, options, keep));
  } else {
    r = cpu_knn_range(reference, has_queries ? &queries : nullptr, thresholds.begin(), threads, job.whole());
  }
  if (!get_index && !get_distance) {
    Rcpp::IntegerVector counts(n);
    for (int64_t i = 0; i < n; ++i) counts[i] = static_cast<int>(r.offsets[i + 1] - r.offsets[i]);
    return counts;
  }
  Rcpp::List index(get_index ? n : 0), distance(get_distance ? n : 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t from = r.offsets[i], to = r.offsets[i + 1];
    if (get_index) {
      Rcpp::IntegerVector v(to - from);
      for (int64_t e = from; e < to; ++e) v[e - from] = r.index[e] + 1;
      index[i] = v;
    }
    if (get_distance) distance[i] = Rcpp::NumericVector(r.distance.begin() + from, r.distance.begin() + to);
  }
  Rcpp::List out;
  if (get_index) out["index"] = index;
  if (get_distance) out["distance"] = distance;
  return out;
  FSGPU_GLUE_END
}
