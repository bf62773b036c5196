// Glue shared by every job: the R objects prepared by R/inputs.R, turned into codes.
#pragma once

#include <Rcpp.h>

#include "core/code_matrix.h"

namespace fsgpu {

// y: 0-based class codes. x: a double/integer/logical matrix, a list of double (binned) and
// integer (categorical) columns, or a dgCMatrix; samples are rows.
ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes);
CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads);

// Runs a core call, turning its exceptions into R errors with the message unchanged.
#define FSGPU_GLUE_BEGIN try {
#define FSGPU_GLUE_END                                              \
  }                                                                 \
  catch (Rcpp::internal::InterruptedException&) { throw; }          \
  catch (std::exception& e) { Rcpp::stop(e.what()); }

}  // namespace fsgpu
