// Glue for knn_graph(): R matrices in, neighbour indices, distances and SNN edges out.
#include <Rcpp.h>

#include <chrono>

#include "core/gpu_backend.h"
#include "core/knn.h"
#include "input_codes.h"
#include "job_progress.h"
#include "knn_glue.h"

using namespace fsgpu;

namespace {

KnnMetric metric_of(const std::string& name) {
  if (name == "pearson") return KnnMetric::pearson;
  if (name == "spearman") return KnnMetric::spearman;
  if (name == "cosine") return KnnMetric::cosine;
  if (name == "euclidean") return KnnMetric::euclidean;
  if (name == "manhattan") return KnnMetric::manhattan;
  throw std::invalid_argument("unknown metric '" + name + "'");
}

}  // namespace

// The k nearest rows of x (a double matrix, points in rows) of every row of x (query NULL: each
// row excluding itself) or of query: index (1-based) and distance matrices, queries x k, the
// backend that ran, the number of rows a correlation metric found constant (of both, and of x
// alone), and timings: prepare (the points), search (the engine), results (R's matrices, whose
// rows are named row_names: NULL or the queries' names) and the GPU's phases.
// [[Rcpp::export]]
Rcpp::List fsgpu_knn(Rcpp::NumericMatrix x, Rcpp::Nullable<Rcpp::NumericMatrix> query, int k, std::string metric,
                     std::string backend, int threads, Rcpp::IntegerVector devices, double memory_limit,
                     SEXP progress = R_NilValue, SEXP row_names = R_NilValue) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point start = Clock::now();
  const KnnMetric m = metric_of(metric);
  if (backend == "gpu") gpu_lock_host_blocks();  // the points' rows and the results, copied directly
  const KnnPoints reference = prepare_points(x.begin(), x.nrow(), x.ncol(), m, threads);
  KnnPoints queries;
  const bool self = query.isNull();
  if (!self) {
    Rcpp::NumericMatrix qx(query.get());
    queries = prepare_points(qx.begin(), qx.nrow(), qx.ncol(), m, threads);
  }
  const double prepare_seconds = seconds_since(start);
  start = Clock::now();
  JobProgress job(progress);
  KnnResult r;
  GpuKnnPhases phases;
  if (backend == "gpu") {
    GpuOptions options;
    options.devices.assign(devices.begin(), devices.end());
    options.memory_limit = static_cast<int64_t>(memory_limit);
    options.host_threads = threads;
    r = gpu_knn(reference, self ? nullptr : &queries, k, options, job.whole(), &phases);
  } else {
    r = cpu_knn(reference, self ? nullptr : &queries, k, threads, job.whole());
  }
  const double search_seconds = seconds_since(start);
  start = Clock::now();
  const Rcpp::List matrices = knn_result_matrices(r, threads, row_names);
  Rcpp::NumericVector timings = Rcpp::NumericVector::create(Rcpp::Named("prepare") = prepare_seconds,
                                                            Rcpp::Named("search") = search_seconds,
                                                            Rcpp::Named("results") = seconds_since(start));
  if (backend == "gpu") {
    timings.push_back(phases.upload, "gpu_upload");
    timings.push_back(phases.candidates, "gpu_candidates");
    timings.push_back(phases.rerank, "gpu_rerank");
    timings.push_back(phases.download, "gpu_download");
    timings.push_back(static_cast<double>(phases.candidates_per_query), "candidates_per_query");
    timings.push_back(static_cast<double>(phases.retried_rows), "single_precision_rows");
    timings.push_back(static_cast<double>(phases.exact_rows), "exact_rows");
  }
  return Rcpp::List::create(Rcpp::Named("index") = matrices["index"], Rcpp::Named("distance") = matrices["distance"],
                            Rcpp::Named("backend") = backend,
                            Rcpp::Named("constant_rows") = static_cast<double>(reference.constant_rows +
                                                                               queries.constant_rows),
                            Rcpp::Named("reference_constant_rows") = static_cast<double>(reference.constant_rows),
                            Rcpp::Named("timings") = timings);
  FSGPU_GLUE_END
}

// Shared-nearest-neighbour edges (1-based from < to) and weights of a neighbour index matrix
// (1-based, points x k), as bluster's makeSNNGraph with the given type.
// [[Rcpp::export]]
Rcpp::List fsgpu_snn_edges(Rcpp::IntegerMatrix index, std::string type, int threads) {
  FSGPU_GLUE_BEGIN
  KnnResult knn;
  knn.n_queries = index.nrow();
  knn.k = index.ncol();
  knn.index.resize(static_cast<size_t>(knn.n_queries) * knn.k);
  for (int64_t i = 0; i < knn.n_queries; ++i)
    for (int32_t c = 0; c < knn.k; ++c) {
      const int j = index(i, c);
      if (j < 1 || j > index.nrow()) throw std::invalid_argument("neighbour indices must be between 1 and the number of points");
      knn.index[i * knn.k + c] = j - 1;
    }
  const SnnType t = type == "rank" ? SnnType::rank : type == "number" ? SnnType::number : SnnType::jaccard;
  const WeightedEdges e = snn_edges(knn, t, threads);
  Rcpp::IntegerVector from(e.from.begin(), e.from.end()), to(e.to.begin(), e.to.end());
  for (auto& v : from) ++v;
  for (auto& v : to) ++v;
  return Rcpp::List::create(Rcpp::Named("from") = from, Rcpp::Named("to") = to,
                            Rcpp::Named("weight") = Rcpp::NumericVector(e.weight.begin(), e.weight.end()));
  FSGPU_GLUE_END
}
