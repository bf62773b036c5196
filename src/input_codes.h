// Glue shared by every job: the R objects prepared by R/inputs.R, turned into codes.
#pragma once

#include <Rcpp.h>

#include <functional>

#include "core/code_matrix.h"

namespace fsgpu {

// y: 0-based class codes. x: a double/integer/logical matrix, a list of double (binned) and
// integer (categorical) columns, or a dgCMatrix; samples are rows.
ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes);
CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads);

// The raw values of x's columns as doubles (NA as NaN), for jobs that read values rather than
// codes (discretization). read(f, out) writes feature f's n_samples values and may run on worker
// threads (it holds only plain pointers into x, which the caller keeps alive); dense points at
// x's own storage when x is a double matrix, and is null otherwise.
struct NumericColumns {
  std::function<void(int64_t f, double* out)> read;
  const double* dense = nullptr;
  int64_t n_features = 0;
};
NumericColumns numeric_columns_from_r(SEXP x, int32_t n_samples);

// Runs a core call, turning its exceptions into R errors with the message unchanged.
#define FSGPU_GLUE_BEGIN try {
#define FSGPU_GLUE_END                                              \
  }                                                                 \
  catch (Rcpp::internal::InterruptedException&) { throw; }          \
  catch (std::exception& e) { Rcpp::stop(e.what()); }

}  // namespace fsgpu
