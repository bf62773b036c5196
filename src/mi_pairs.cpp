// Glue for mi_pairs(), mi_matrix() and mi_network(): R objects in, pairs, matrices and edge weights out.
#include <Rcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/gpu_backend.h"
#include "core/networks.h"
#include "core/pairs.h"
#include "input_codes.h"
#include "job_progress.h"

using namespace fsgpu;

namespace {

// Runs the pair search on the backend the R layer chose ("gpu", "cpu", or "auto-gpu": the GPU
// unless it cannot take the search, having too many levels or too little memory), reaching
// `checkpoint` between slices of the work. `backend` becomes the one that ran; `why_cpu` says why
// an automatic choice of the GPU fell back to the CPU.
std::vector<PairRecord> search_pairs(const PairData& data, const PairTask& task, const PlogpTable& plogp,
                                     PairCollector& collector, std::string& backend, std::string& why_cpu,
                                     int threads, const Rcpp::IntegerVector& devices, double memory_limit,
                                     const Checkpoint& checkpoint) {
  GpuOptions options;
  options.devices.assign(devices.begin(), devices.end());
  options.memory_limit = static_cast<int64_t>(memory_limit);
  if (backend == "auto-gpu") {
    why_cpu = gpu_pair_search_problem(data, task, options);
    backend = why_cpu.empty() ? "gpu" : "cpu";
  }
  if (backend == "gpu") {
    gpu_pair_search(data, task, plogp, collector, options, checkpoint);
  } else {
    cpu_pair_search(data, task, plogp, collector, threads, checkpoint);
  }
  return collector.finish();
}

double bits_of(int64_t fixed, int64_t n) { return fixed_to_bits(Wide(fixed), n); }

}  // namespace

// The best `top` pairs (top < 0: all) by `measure` ("joint" or "interaction"), among those at
// or above threshold (in bits times scale) when has_threshold; pairs of every feature, or of those in `with`
// (1-based) with every feature. Values in bits. memory_limit: the bytes a GPU search may use per
// device (0: what is free). Only the pairs of row positions [row_begin, row_end) of the search
// (PairTask; row_end < 0: all rows) are searched: a tile, whose best pairs merge with the other
// tiles' by the exact measure, key_high * 2^32 + key_low, then i, then j. Only with_keys
// returns key_high and key_low: a tile needs them for the merge, a whole search (16 bytes a
// pair, for every pair above a threshold) does not. bin_above: as for fsgpu_select().
// [[Rcpp::export]]
Rcpp::List fsgpu_mi_pairs(SEXP x, Rcpp::IntegerVector y, int n_classes, Rcpp::IntegerVector with, std::string measure,
                          double top, bool has_threshold, double threshold, double scale, int nbins,
                          std::string backend, int threads, Rcpp::IntegerVector devices, double memory_limit,
                          SEXP progress = R_NilValue, double row_begin = 0, double row_end = -1,
                          bool with_keys = false, SEXP bin_above = R_NilValue) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point t0 = Clock::now();
  const ClassLayout layout = layout_from_r(y, n_classes);
  // With bin_above (R's deferred input checks), bad values come back to R to be named.
  EncodeReport report;
  EncodeReport* checks = Rf_isNull(bin_above) ? nullptr : &report;
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads, bin_above, checks);
  if (checks && report.any_bad()) return Rcpp::List::create(Rcpp::Named("input") = report_to_r(report));
  const double encode_seconds = seconds_since(t0);
  t0 = Clock::now();
  const PlogpTable plogp(layout.n_samples);
  const PairMeasure m = measure == "interaction" ? PairMeasure::interaction : PairMeasure::joint;
  const PairData data = PairData::of(codes, layout, plogp, m, threads);
  const double prepare_seconds = seconds_since(t0);
  std::vector<int32_t> rows;
  for (int f : with) rows.push_back(f - 1);
  const PairTask whole = with.size() ? PairTask::with(rows, codes.n_features) : PairTask::all(codes.n_features);
  const PairTask task = whole.tile(static_cast<int64_t>(row_begin),
                                   row_end < 0 ? whole.row_end : static_cast<int64_t>(row_end));
  const int64_t n = layout.n_samples;
  // The smallest key whose value, as R reports it (bits, times `scale` for other units), is at
  // least the threshold: a threshold equal to a reported value keeps that pair.
  int64_t min_key = 0;
  if (has_threshold) {
    auto reported = [&](int64_t key) { return bits_of(key, n) * scale; };
    const double limit = 9.0e18;
    min_key = static_cast<int64_t>(std::clamp(std::ceil(threshold / scale * kPlogpScale * static_cast<double>(n)),
                                              -limit, limit));
    while (min_key > -limit && reported(min_key - 1) >= threshold) --min_key;
    while (min_key < limit && reported(min_key) < threshold) ++min_key;
  }
  PairCollector collector(top < 0 ? -1 : static_cast<int64_t>(top), has_threshold, min_key);
  t0 = Clock::now();
  JobProgress job(progress);
  std::string why_cpu;
  const std::vector<PairRecord> pairs =
      search_pairs(data, task, plogp, collector, backend, why_cpu, threads, devices, memory_limit, job.whole());
  const double search_seconds = seconds_since(t0);

  const size_t k = pairs.size();
  Rcpp::IntegerVector i(k), j(k), cells(k);
  Rcpp::NumericVector joint(k), mi1(k), mi2(k), interaction(k);
  Rcpp::NumericVector key_high(with_keys ? k : 0), key_low(with_keys ? k : 0);
  for (size_t p = 0; p < k; ++p) {
    const PairRecord& r = pairs[p];
    const int64_t information = r.joint_class - r.joint - data.constants.class_terms + data.constants.plogp_n;
    i[p] = r.i + 1;
    j[p] = r.j + 1;
    cells[p] = r.cells;
    joint[p] = bits_of(information, n);
    mi1[p] = bits_of(data.sums.relevance[r.i], n);
    mi2[p] = bits_of(data.sums.relevance[r.j], n);
    interaction[p] = bits_of(information - data.sums.relevance[r.i] - data.sums.relevance[r.j], n);
    if (with_keys) {
      // Both halves are exact doubles (the values above may round distinct keys alike).
      key_high[p] = static_cast<double>(r.key >> 32);
      key_low[p] = static_cast<double>(r.key & 0xffffffffLL);
    }
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("i") = i, Rcpp::Named("j") = j, Rcpp::Named("mi_joint") = joint, Rcpp::Named("mi1") = mi1,
      Rcpp::Named("mi2") = mi2, Rcpp::Named("interaction") = interaction, Rcpp::Named("cells") = cells,
      Rcpp::Named("n_pairs") = static_cast<double>(task.n_pairs()), Rcpp::Named("backend") = backend,
      Rcpp::Named("why_cpu") = why_cpu,
      Rcpp::Named("timings") = Rcpp::NumericVector::create(Rcpp::Named("encode") = encode_seconds,
                                                           Rcpp::Named("prepare") = prepare_seconds,
                                                           Rcpp::Named("search") = search_seconds));
  if (checks) out.push_back(report_to_r(report), "input");
  if (with_keys) {
    out.push_back(key_high, "key_high");
    out.push_back(key_low, "key_low");
  }
  return out;
  FSGPU_GLUE_END
}

// I(Xi;Xj) for every pair of columns of x, in bits, as a symmetric matrix with the entropies
// H(Xi) on the diagonal, all by `estimator` ("emp", "mm", "sg" or "shrink": estimators.h; shrink
// on the CPU only, an automatic choice of the GPU falls back); attributes "backend": the backend
// that ran, and "why_cpu". memory_limit as for fsgpu_mi_pairs. With a tile of rows [row_begin, row_end) (row_end < 0: all), only those
// rows of the matrix, and of each row i only the entries j >= i (the tile's pairs and the
// diagonal; the rest 0): the tiles' rows put together give the upper triangle. bin_above: as for
// fsgpu_select(), the report as the attribute "input".
// [[Rcpp::export]]
Rcpp::NumericMatrix fsgpu_mi_matrix(SEXP x, int n_samples, int nbins, std::string backend, int threads,
                                    Rcpp::IntegerVector devices, double memory_limit, SEXP progress = R_NilValue,
                                    double row_begin = 0, double row_end = -1, std::string estimator = "emp",
                                    SEXP bin_above = R_NilValue) {
  FSGPU_GLUE_BEGIN
  const ClassLayout layout = ClassLayout::one_class(n_samples);
  EncodeReport report;
  EncodeReport* checks = Rf_isNull(bin_above) ? nullptr : &report;
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads, bin_above, checks);
  if (checks && report.any_bad()) {
    Rcpp::NumericMatrix none(0, 0);
    none.attr("input") = report_to_r(report);
    return none;
  }
  const PlogpTable plogp(layout.n_samples, estimator_of(estimator));
  const PairData data = PairData::of(codes, layout, plogp, PairMeasure::mutual, threads);
  const int64_t f = codes.n_features;
  const PairTask task = PairTask::all(f).tile(static_cast<int64_t>(row_begin),
                                              row_end < 0 ? f : static_cast<int64_t>(row_end));
  const int64_t first = task.row_begin, n_rows = task.row_end - task.row_begin;
  const bool whole = n_rows == f;
  Rcpp::NumericMatrix out(static_cast<int>(n_rows), static_cast<int>(f));
  // Records go straight into the matrix (through a raw pointer: the sink may run on a worker
  // thread), so no list of the f^2/2 pairs is ever held.
  double* m = out.begin();
  PairCollector collector([m, f, n_rows, first, whole, n_samples](const PairRecord& r) {
    const double v = bits_of(r.key, n_samples);
    m[(r.i - first) + n_rows * r.j] = v;
    if (whole) m[r.j + f * r.i] = v;
  });
  JobProgress job(progress);
  std::string why_cpu;
  search_pairs(data, task, plogp, collector, backend, why_cpu, threads, devices, memory_limit, job.whole());
  for (int64_t a = first; a < first + n_rows; ++a)
    m[(a - first) + n_rows * a] = bits_of(data.constants.plogp_n - data.sums.x_terms[a], n_samples);
  out.attr("backend") = backend;
  out.attr("why_cpu") = why_cpu;
  if (checks) out.attr("input") = report_to_r(report);
  return out;
  FSGPU_GLUE_END
}

// Edge weights of an ARACNE, CLR, MRNET or MRNETB network from a symmetric MI matrix.
// [[Rcpp::export]]
Rcpp::NumericMatrix fsgpu_mi_network(Rcpp::NumericMatrix mim, std::string method, double eps, int threads) {
  FSGPU_GLUE_BEGIN
  const int64_t n = mim.nrow();
  JobProgress job(R_NilValue);  // interrupts only
  std::vector<double> w;
  if (method == "aracne") w = aracne_network(mim.begin(), n, eps, threads, job.whole());
  else if (method == "clr") w = clr_network(mim.begin(), n);
  else if (method == "mrnet") w = mrnet_network(mim.begin(), n, threads, job.whole());
  else if (method == "mrnetb") w = mrnetb_network(mim.begin(), n, threads, job.whole());
  else throw std::invalid_argument("unknown network method '" + method + "'");
  Rcpp::NumericMatrix out(static_cast<int>(n), static_cast<int>(n));
  std::copy(w.begin(), w.end(), out.begin());
  return out;
  FSGPU_GLUE_END
}
