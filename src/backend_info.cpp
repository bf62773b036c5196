// Glue for backend_info(): what was compiled in and what the driver reports.
#include <Rcpp.h>

#include "build_config.h"
#include "core/gpu_backend.h"
#include "core/parallel.h"

// [[Rcpp::export]]
Rcpp::List fsgpu_backend_info_raw() {
  const fsgpu::GpuStatus status = fsgpu::gpu_status();
  const size_t n = status.devices.size();
  Rcpp::IntegerVector id(n), sms(n);
  Rcpp::CharacterVector name(n), cc(n);
  Rcpp::NumericVector total(n), free(n);
  for (size_t i = 0; i < n; ++i) {
    const fsgpu::GpuDevice& d = status.devices[i];
    id[i] = d.id;
    name[i] = d.name;
    cc[i] = std::to_string(d.major) + "." + std::to_string(d.minor);
    total[i] = static_cast<double>(d.total_memory);
    free[i] = static_cast<double>(d.free_memory);
    sms[i] = d.multiprocessors;
  }
  return Rcpp::List::create(
      Rcpp::Named("cuda") = static_cast<bool>(FSGPU_WITH_CUDA),
      Rcpp::Named("no_cuda_reason") = std::string(FSGPU_NO_CUDA_REASON),
      Rcpp::Named("cuda_archs") = std::string(FSGPU_CUDA_ARCHS),
      Rcpp::Named("nvcc_version") = std::string(FSGPU_NVCC_VERSION),
      Rcpp::Named("runtime_version") = status.runtime_version,
      Rcpp::Named("driver_version") = status.driver_version,
      Rcpp::Named("problem") = status.problem,
      Rcpp::Named("devices") = Rcpp::List::create(
          Rcpp::Named("id") = id, Rcpp::Named("name") = name, Rcpp::Named("compute_capability") = cc,
          Rcpp::Named("memory_total") = total, Rcpp::Named("memory_free") = free,
          Rcpp::Named("multiprocessors") = sms),
      Rcpp::Named("max_threads") = fsgpu::max_threads());
}

// Whether this R process is a fork of the one that loaded fsgpu (core/fork_guard.h).
// [[Rcpp::export]]
bool fsgpu_forked_process() { return fsgpu::in_forked_process(); }
