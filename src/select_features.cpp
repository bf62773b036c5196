// Glue for select_features() and the scorers: R objects in, selections and scores out.
#include <Rcpp.h>

#include <chrono>
#include <map>
#include <thread>

#include "core/cpu_engine.h"
#include "core/gpu_backend.h"
#include "core/pairs.h"
#include "core/select.h"
#include "core/weighted_engine.h"
#include "input_codes.h"
#include "job_progress.h"

using namespace fsgpu;

namespace {

// The engine the R layer chose: "gpu" on the given devices, otherwise the CPU; with weights,
// the weighted CPU engine (R refuses weights on the GPU before this). The CPU engines reach
// `checkpoint` between slices of a pass.
std::unique_ptr<SelectionEngine> make_engine(const CodeMatrix& codes, const ClassLayout& layout,
                                             const std::string& backend, int threads,
                                             const Rcpp::IntegerVector& devices, double memory_limit,
                                             const Checkpoint& checkpoint, SEXP weights = R_NilValue,
                                             Estimator estimator = Estimator::empirical,
                                             CodeUpload* preloaded = nullptr) {
  if (!Rf_isNull(weights)) {
    const Rcpp::NumericVector w(weights);
    return std::make_unique<WeightedCpuEngine>(codes, layout, std::vector<double>(w.begin(), w.end()), threads,
                                               checkpoint);
  }
  if (backend == "gpu") {
    GpuOptions options;
    options.devices.assign(devices.begin(), devices.end());
    options.memory_limit = static_cast<int64_t>(memory_limit);
    options.host_threads = threads;  // the table of terms and the staged upload of the codes
    options.preloaded = preloaded;
    return make_gpu_engine(codes, layout, options, estimator);
  }
  return std::make_unique<CpuEngine>(codes, layout, threads, checkpoint, CpuEngine::kSliceEntries, estimator);
}

// Frees a code matrix's arrays on a thread of its own, joined when this goes out of scope.
class ReleaseCodes {
 public:
  void start(CodeMatrix& codes) {
    thread_ = std::thread([&codes] {
      RowVector<uint8_t>().swap(codes.codes8);
      RowVector<uint16_t>().swap(codes.codes16);
      std::vector<int32_t>().swap(codes.entry_row);
    });
  }
  ~ReleaseCodes() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

Normalization normalization_of(const std::string& name) {
  static const std::map<std::string, Normalization> normalizations = {
      {"none", Normalization::none}, {"su", Normalization::su}, {"nmi", Normalization::nmi},
      {"gain_ratio", Normalization::gain_ratio}};
  auto it = normalizations.find(name);
  if (it == normalizations.end()) throw std::invalid_argument("unknown normalization '" + name + "'");
  return it->second;
}

// Scores with, for R's deferred input checks (checks not null), the encoder's report as the
// attribute "input" (report_to_r(); no scores when it found bad values).
Rcpp::NumericVector with_report(Rcpp::NumericVector scores, const EncodeReport* checks) {
  if (checks) scores.attr("input") = report_to_r(*checks);
  return scores;
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List fsgpu_select(SEXP x, Rcpp::IntegerVector y, int n_classes, int k, std::string method, double beta,
                        double gamma, Rcpp::IntegerVector fixed, double min_score, SEXP weights, int nbins,
                        std::string backend, int threads, Rcpp::IntegerVector devices, double memory_limit,
                        SEXP progress, SEXP bin_above = R_NilValue) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point t0 = Clock::now();
  const ClassLayout layout = layout_from_r(y, n_classes);
  // With bin_above (R's deferred input checks), bad values come back to R to be named.
  EncodeReport report;
  EncodeReport* checks = Rf_isNull(bin_above) ? nullptr : &report;
  // Big dense data for one GPU go up while they are encoded (the engine adopts them if they end
  // up the byte codes it needs); below this size the upload after encoding is short anyway.
  constexpr double kOverlapBytes = 256.0 * (1 << 20);
  const double dense_bytes = double(layout.n_samples) * double(dense_columns(x));
  std::unique_ptr<CodeUpload> upload;
  if (backend == "gpu" && Rf_isNull(weights) && devices.size() == 1 && dense_bytes >= kOverlapBytes &&
      (memory_limit <= 0 || dense_bytes <= memory_limit))
    upload = start_code_upload(devices[0], layout.n_samples, dense_columns(x), threads);
  CodedHook on_coded;
  if (upload)
    on_coded = [&upload](const uint8_t* c, int64_t first, int64_t last, int worker) {
      upload->send(c, first, last, worker);
    };
  CodeMatrix codes = codes_from_r(x, layout, nbins, threads, bin_above, checks, on_coded);
  if (checks && report.any_bad()) return Rcpp::List::create(Rcpp::Named("input") = report_to_r(report));
  const double encode_seconds = seconds_since(t0);
  t0 = Clock::now();
  if (k < 1 || k > codes.n_features) Rcpp::stop("k must be between 1 and the number of features");

  SelectionOptions options;
  options.method = method_of(method);
  options.k = k;
  options.beta = beta;
  options.gamma = gamma;
  for (int f : fixed) options.fixed.push_back(f - 1);
  options.min_score = min_score;
  // Progress counts steps (k of them; a selection that stops early jumps to the end), and
  // slices within a CPU step.
  JobProgress job(progress);
  int64_t step = 0;
  std::unique_ptr<SelectionEngine> engine =
      make_engine(codes, layout, backend, threads, devices, memory_limit,
                  [&](double done) { job.report((static_cast<double>(step) + done) / k); }, weights,
                  Estimator::empirical, upload.get());
  upload.reset();  // adopted by the engine, or not needed
  const double prepare_seconds = seconds_since(t0);
  // Freeing gigabytes of codes takes the OS a noticeable time: done while the GPU selects when
  // the engine no longer reads them (joined before this returns, whatever happens).
  ReleaseCodes release;
  if (!engine->reads_host_codes() && options.method != Method::cmi && options.method != Method::jmi3)
    release.start(codes);
  t0 = Clock::now();
  double relevance_seconds = -1;  // the I(X;Y) pass and the first argmax
  // Between steps, on the main thread: the user may interrupt, and long runs show progress.
  auto on_step = [&](int64_t next) {
    if (next == 1) {
      relevance_seconds = seconds_since(t0);
      t0 = Clock::now();
    }
    step = next;
    job.report(static_cast<double>(step) / k);
  };
  Selection sel = select_features(*engine, options, on_step);
  double steps_seconds = seconds_since(t0);  // every step after the first
  if (relevance_seconds < 0) {  // only the first step ran
    relevance_seconds = steps_seconds;
    steps_seconds = 0;
  }

  Rcpp::IntegerVector features(sel.features.size());
  for (size_t i = 0; i < sel.features.size(); ++i) features[i] = static_cast<int>(sel.features[i] + 1);
  return Rcpp::List::create(Rcpp::Named("features") = features,
                            Rcpp::Named("scores") = Rcpp::wrap(sel.scores),
                            Rcpp::Named("backend") = backend,
                            Rcpp::Named("input") = checks ? SEXP(report_to_r(report)) : R_NilValue,
                            Rcpp::Named("timings") = Rcpp::NumericVector::create(
                                Rcpp::Named("encode") = encode_seconds, Rcpp::Named("prepare") = prepare_seconds,
                                Rcpp::Named("relevance") = relevance_seconds, Rcpp::Named("steps") = steps_seconds));
  FSGPU_GLUE_END
}

// I(X;Y) for every feature, in bits, by `estimator` ("emp", "mm", "sg" or "shrink":
// estimators.h), or its ratio to an entropy (normalize: see Normalization; plug-in only).
// Shrink is estimated table by table from each feature's counts (PairData), on the CPU only.
// [[Rcpp::export]]
Rcpp::NumericVector fsgpu_mi_scores(SEXP x, Rcpp::IntegerVector y, int n_classes, int nbins, std::string backend,
                                    int threads, Rcpp::IntegerVector devices, double memory_limit,
                                    std::string normalize = "none", std::string estimator = "emp",
                                    SEXP bin_above = R_NilValue) {
  FSGPU_GLUE_BEGIN
  const ClassLayout layout = layout_from_r(y, n_classes);
  EncodeReport report;
  EncodeReport* checks = Rf_isNull(bin_above) ? nullptr : &report;
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads, bin_above, checks);
  if (checks && report.any_bad()) return with_report(Rcpp::NumericVector(), checks);
  const Estimator e = estimator_of(estimator);
  if (normalize != "none" && e != Estimator::empirical) {
    throw std::runtime_error("normalized scores are ratios of plug-in entropies: use estimator \"emp\"");
  }
  if (!per_count_terms(e)) {
    if (backend == "gpu") throw std::runtime_error(kShrinkCpuOnly);
    const PlogpTable plogp(layout.n_samples, e);
    const PairData data = PairData::of(codes, layout, plogp, PairMeasure::joint, threads);
    Rcpp::NumericVector out(codes.n_features);
    for (int64_t f = 0; f < codes.n_features; ++f) out[f] = fixed_to_bits(data.sums.relevance[f], layout.n_samples);
    return with_report(out, checks);
  }
  JobProgress job(R_NilValue);  // one pass: interrupts only
  std::unique_ptr<SelectionEngine> engine = make_engine(codes, layout, backend, threads, devices, memory_limit,
                                                        job.whole(), R_NilValue, e);
  return with_report(Rcpp::wrap(mi_scores(*engine, normalization_of(normalize))), checks);
  FSGPU_GLUE_END
}

// I(X;Y|Z) (kind "cmi") or I(X,Z;Y) (kind "jmi") for every feature. Z is feature z_feature
// (1-based) of x, or, when that is 0, the one column of z_column (as x's columns are given).
// [[Rcpp::export]]
Rcpp::NumericVector fsgpu_conditional_scores(SEXP x, Rcpp::IntegerVector y, int n_classes, int z_feature,
                                             SEXP z_column, std::string kind, int nbins, std::string backend,
                                             int threads, Rcpp::IntegerVector devices, double memory_limit,
                                             SEXP bin_above = R_NilValue) {
  FSGPU_GLUE_BEGIN
  const ClassLayout layout = layout_from_r(y, n_classes);
  EncodeReport report;
  EncodeReport* checks = Rf_isNull(bin_above) ? nullptr : &report;
  const CodeMatrix codes = codes_from_r(x, layout, nbins, threads, bin_above, checks);
  if (checks && report.any_bad()) return with_report(Rcpp::NumericVector(), checks);
  JobProgress job(R_NilValue);  // one pass: interrupts only
  std::unique_ptr<SelectionEngine> engine =
      make_engine(codes, layout, backend, threads, devices, memory_limit, job.whole());
  Conditioning z;
  if (z_feature > 0) {
    z = Conditioning::on_feature(codes, layout, z_feature - 1, engine->plogp());
  } else {
    const CodeMatrix z_codes = codes_from_r(z_column, layout, nbins, 1);
    z = Conditioning::on_feature(z_codes, layout, 0, engine->plogp());
  }
  return with_report(Rcpp::wrap(conditional_scores(*engine, z, method_of(kind))), checks);
  FSGPU_GLUE_END
}
