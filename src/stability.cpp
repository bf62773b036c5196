// Glue for stability_selection() and select_features_cv(): many selections on subsamples of
// one data set, encoded once.
#include <Rcpp.h>

#include "core/batched_select.h"
#include "core/gpu_backend.h"
#include "input_codes.h"
#include "job_progress.h"

using namespace fsgpu;

// The selection of k features by each method (with its beta, gamma and min_score in bits) on
// each subsample (1-based sample indices), as a list indexed method-major: element
// m * length(samples) + r is list(features = 1-based, scores). The CPU runs subsamples side by
// side on the threads; the GPU all of a criterion's subsamples together in one batched job
// (core/batched_select.h), the codes uploaded once.
// [[Rcpp::export]]
Rcpp::List fsgpu_select_subsamples(SEXP x, Rcpp::IntegerVector y, int n_classes, Rcpp::List samples,
                                   Rcpp::CharacterVector methods, Rcpp::NumericVector beta,
                                   Rcpp::NumericVector gamma, Rcpp::NumericVector min_score, int k, int nbins,
                                   std::string backend, int threads, Rcpp::IntegerVector devices,
                                   double memory_limit, SEXP progress) {
  FSGPU_GLUE_BEGIN
  const ClassLayout layout = layout_from_r(y, n_classes);
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads);
  if (k < 1 || k > codes.n_features) Rcpp::stop("k must be between 1 and the number of features");
  std::vector<std::vector<int32_t>> rows(samples.size());
  for (R_xlen_t r = 0; r < samples.size(); ++r) {
    const Rcpp::IntegerVector s(samples[r]);
    rows[r].reserve(s.size());
    for (int i : s) rows[r].push_back(i - 1);
  }
  std::vector<SelectionOptions> options(methods.size());
  for (R_xlen_t m = 0; m < methods.size(); ++m) {
    options[m].method = method_of(Rcpp::as<std::string>(methods[m]));
    options[m].k = k;
    options[m].beta = beta[m];
    options[m].gamma = gamma[m];
    options[m].min_score = min_score[m];
  }
  JobProgress job(progress);
  const Checkpoint between_rounds = [&](double done) { job.report(done); };
  std::vector<Selection> sel;
  if (backend == "gpu") {
    GpuOptions gpu;
    gpu.devices.assign(devices.begin(), devices.end());
    gpu.memory_limit = static_cast<int64_t>(memory_limit);
    sel = gpu_select_on_subsamples(codes, layout, rows, options, gpu, between_rounds);
  } else {
    sel = select_on_subsamples(codes, layout, rows, options, threads, between_rounds);
  }
  Rcpp::List out(sel.size());
  for (size_t t = 0; t < sel.size(); ++t) {
    Rcpp::IntegerVector features(sel[t].features.size());
    for (size_t i = 0; i < sel[t].features.size(); ++i) features[i] = static_cast<int>(sel[t].features[i] + 1);
    out[t] = Rcpp::List::create(Rcpp::Named("features") = features, Rcpp::Named("scores") = Rcpp::wrap(sel[t].scores));
  }
  return out;
  FSGPU_GLUE_END
}
