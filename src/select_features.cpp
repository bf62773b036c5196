// Glue for select_features() and mi_scores(): R objects in, selections and scores out.
#include <Rcpp.h>

#include <chrono>

#include "core/cpu_engine.h"
#include "core/gpu_backend.h"
#include "core/select_jmi.h"
#include "input_codes.h"

using namespace fsgpu;

namespace {

// The engine the R layer chose: "gpu" on the given devices, otherwise the CPU.
std::unique_ptr<JointMiEngine> make_engine(const CodeMatrix& codes, const ClassLayout& layout,
                                           const std::string& backend, int threads,
                                           const Rcpp::IntegerVector& devices, double memory_limit) {
  if (backend == "gpu") {
    GpuOptions options;
    options.devices.assign(devices.begin(), devices.end());
    options.memory_limit = static_cast<int64_t>(memory_limit);
    return make_gpu_jmi_engine(codes, layout, options);
  }
  return std::make_unique<CpuJmiEngine>(codes, layout, threads, [] { Rcpp::checkUserInterrupt(); });
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List fsgpu_select_jmi(SEXP x, Rcpp::IntegerVector y, int n_classes, int k, int nbins,
                            std::string backend, int threads, Rcpp::IntegerVector devices,
                            double memory_limit, bool progress) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point t0 = Clock::now();
  const ClassLayout layout = layout_from_r(y, n_classes);
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads);
  const double encode_seconds = seconds_since(t0);
  t0 = Clock::now();
  if (k < 1 || k > codes.n_features) Rcpp::stop("k must be between 1 and the number of features");

  std::unique_ptr<JointMiEngine> engine = make_engine(codes, layout, backend, threads, devices, memory_limit);
  const double prepare_seconds = seconds_since(t0);
  t0 = Clock::now();
  double relevance_seconds = -1;  // the I(X;Y) pass and the first argmax
  // Between steps, on the main thread: the user may interrupt, and long runs show progress.
  auto on_step = [&](int64_t step) {
    if (step == 1) {
      relevance_seconds = seconds_since(t0);
      t0 = Clock::now();
    }
    Rcpp::checkUserInterrupt();
    if (progress) REprintf("\rfsgpu: selecting feature %d of %d", static_cast<int>(step + 1), k);
  };
  Selection sel = select_jmi(*engine, k, layout.n_samples, on_step);
  double steps_seconds = seconds_since(t0);  // every step after the first
  if (relevance_seconds < 0) {  // only the first step ran
    relevance_seconds = steps_seconds;
    steps_seconds = 0;
  }
  if (progress) REprintf("\n");

  Rcpp::IntegerVector features(sel.features.size());
  for (size_t i = 0; i < sel.features.size(); ++i) features[i] = static_cast<int>(sel.features[i] + 1);
  return Rcpp::List::create(Rcpp::Named("features") = features,
                            Rcpp::Named("scores") = Rcpp::wrap(sel.scores),
                            Rcpp::Named("backend") = backend,
                            Rcpp::Named("timings") = Rcpp::NumericVector::create(
                                Rcpp::Named("encode") = encode_seconds, Rcpp::Named("prepare") = prepare_seconds,
                                Rcpp::Named("relevance") = relevance_seconds, Rcpp::Named("steps") = steps_seconds));
  FSGPU_GLUE_END
}

// [[Rcpp::export]]
Rcpp::NumericVector fsgpu_mi_scores(SEXP x, Rcpp::IntegerVector y, int n_classes, int nbins, std::string backend,
                                    int threads, Rcpp::IntegerVector devices, double memory_limit) {
  FSGPU_GLUE_BEGIN
  const ClassLayout layout = layout_from_r(y, n_classes);
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads);
  std::unique_ptr<JointMiEngine> engine = make_engine(codes, layout, backend, threads, devices, memory_limit);
  return Rcpp::wrap(mi_scores(*engine, layout.n_samples));
  FSGPU_GLUE_END
}
