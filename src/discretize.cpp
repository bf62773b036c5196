// Glue for discretize() and predict(): R objects in, cut points and interval codes out.
#include <Rcpp.h>

#include <chrono>

#include "core/discretize.h"
#include "core/gpu_backend.h"
#include "input_codes.h"
#include "job_progress.h"

using namespace fsgpu;

namespace {

DiscretizeMethod method_of(const std::string& name) {
  if (name == "caim") return DiscretizeMethod::caim;
  if (name == "cacc") return DiscretizeMethod::cacc;
  if (name == "ameva") return DiscretizeMethod::ameva;
  if (name == "mdlp") return DiscretizeMethod::mdlp;
  if (name == "equal_width") return DiscretizeMethod::equal_width;
  if (name == "equal_freq") return DiscretizeMethod::equal_freq;
  throw std::invalid_argument("unknown discretization method '" + name + "'");
}

// The task over x's columns (classes are set by the caller).
DiscretizeTask task_of(const NumericColumns& columns, int32_t n_samples, const std::string& method, int nbins) {
  DiscretizeTask task;
  task.method = method_of(method);
  task.n_samples = n_samples;
  task.n_features = columns.n_features;
  task.nbins = nbins;
  task.dense = columns.dense;
  task.read = columns.read;
  return task;
}

}  // namespace

// Cut points of every column of x: a list with cuts (a list of numeric vectors), lo, hi,
// criterion, missing, the backend that ran ("auto-gpu": the GPU unless there are more classes
// than it takes, which why_cpu then says) and timings (seconds: the engine's, and on a GPU its
// phases). progress: see JobProgress.
// [[Rcpp::export]]
Rcpp::List fsgpu_discretize(SEXP x, int n_samples, Rcpp::IntegerVector y, int n_classes, std::string method,
                            int nbins, std::string backend, int threads, Rcpp::IntegerVector devices,
                            double memory_limit, SEXP progress) {
  FSGPU_GLUE_BEGIN
  const auto start = std::chrono::steady_clock::now();
  const NumericColumns columns = numeric_columns_from_r(x, n_samples);
  DiscretizeTask task = task_of(columns, n_samples, method, nbins);
  if (is_supervised(task.method)) {
    if (y.size() != n_samples) throw std::invalid_argument("y must have one class per sample");
    task.labels = y.begin();
    task.n_classes = n_classes;
  }
  JobProgress job(progress);
  std::string why_cpu;
  if (backend == "auto-gpu") {
    if (task.n_classes > kMaxGpuDiscretizeClasses)
      why_cpu = "the GPU discretization takes up to " + std::to_string(kMaxGpuDiscretizeClasses) + " classes, not " +
                std::to_string(task.n_classes);
    backend = why_cpu.empty() ? "gpu" : "cpu";
  }
  std::vector<FeatureCuts> result;
  GpuDiscretizePhases phases;
  if (backend == "gpu") {
    GpuOptions options;
    options.devices.assign(devices.begin(), devices.end());
    options.memory_limit = static_cast<int64_t>(memory_limit);
    result = gpu_discretize(task, options, job.whole(), &phases);
  } else {
    result = cpu_discretize(task, threads, job.whole());
  }
  const int64_t p = task.n_features;
  Rcpp::List cuts(p);
  Rcpp::NumericVector lo(p), hi(p), criterion(p);
  Rcpp::IntegerVector missing(p);
  for (int64_t f = 0; f < p; ++f) {
    const FeatureCuts& fc = result[f];
    cuts[f] = Rcpp::NumericVector(fc.cuts.begin(), fc.cuts.end());
    lo[f] = fc.lo;
    hi[f] = fc.hi;
    criterion[f] = fc.criterion;
    missing[f] = fc.missing;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Rcpp::NumericVector timings = Rcpp::NumericVector::create(Rcpp::Named("engine") = seconds);
  if (backend == "gpu")
    timings = Rcpp::NumericVector::create(
        Rcpp::Named("engine") = seconds, Rcpp::Named("gpu_setup") = phases.setup,
        Rcpp::Named("gpu_upload") = phases.upload, Rcpp::Named("gpu_sort") = phases.sort,
        Rcpp::Named("gpu_distinct") = phases.distinct, Rcpp::Named("gpu_method") = phases.method,
        Rcpp::Named("gpu_download") = phases.download);
  return Rcpp::List::create(Rcpp::Named("cuts") = cuts, Rcpp::Named("lo") = lo, Rcpp::Named("hi") = hi,
                            Rcpp::Named("criterion") = criterion, Rcpp::Named("missing") = missing,
                            Rcpp::Named("backend") = backend, Rcpp::Named("why_cpu") = why_cpu,
                            Rcpp::Named("timings") = timings);
  FSGPU_GLUE_END
}

// Interval codes (1-based; NA for missing values) of x's columns under the cut points of a
// discretization: n_samples x features.
// [[Rcpp::export]]
Rcpp::IntegerMatrix fsgpu_discretize_codes(SEXP x, int n_samples, Rcpp::List cuts, Rcpp::NumericVector lo,
                                           Rcpp::NumericVector hi, std::string method, int nbins, int threads) {
  FSGPU_GLUE_BEGIN
  const NumericColumns columns = numeric_columns_from_r(x, n_samples);
  if (columns.n_features != cuts.size() || lo.size() != cuts.size() || hi.size() != cuts.size())
    throw std::invalid_argument("x and the cut points have different numbers of features");
  const DiscretizeTask task = task_of(columns, n_samples, method, nbins);
  std::vector<FeatureCuts> fc(cuts.size());
  for (R_xlen_t f = 0; f < cuts.size(); ++f) {
    Rcpp::NumericVector c = cuts[f];
    fc[f].cuts.assign(c.begin(), c.end());
    fc[f].lo = lo[f];
    fc[f].hi = hi[f];
  }
  Rcpp::IntegerMatrix codes(n_samples, static_cast<int>(cuts.size()));
  discretize_codes(task, fc, NA_INTEGER, codes.begin(), threads);
  return codes;
  FSGPU_GLUE_END
}

