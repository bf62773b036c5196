// Glue shared by every job: the R objects prepared by R/inputs.R, turned into codes.
#pragma once

#include <Rcpp.h>

#include <functional>

#include "core/code_matrix.h"

namespace fsgpu {

// y: 0-based class codes. x: a double/integer/logical matrix, a list of double (binned) and
// integer (categorical) columns, or a dgCMatrix; samples are rows. Or, from R's deferred input,
// features in rows: list(assay) of class "fsgpu_transposed" (transposed_input() in R/inputs.R), a
// dense double/integer/logical matrix; or list(read, n_blocks) of class "fsgpu_blocks"
// (delayed_blocks() in R/delayed.R), whose read(b) returns block b of a DelayedArray's rows as
// such a matrix. Both are read a block of features at a time, so no whole transposed copy is made.
// Or list(x, bin_above) of class "fsgpu_columns" (resolve_columns(convert = FALSE) in R/inputs.R):
// any of the above with its bin_above, for glue that passes none.
// x is read in place, once, on `threads` threads. bin_above (NULL, or one integer per column) is
// ColumnSource::bin_above for the integer and logical columns, and -2 for a double column taken
// as categories (the codes of its distinct values); NULL keeps all integer columns categories and
// bins all double ones. Without a report, a missing or infinite value is an error naming the
// feature's number; with one, it is recorded there (and the matrix returned is empty) for the R
// layer to name features and samples.
ClassLayout layout_from_r(const Rcpp::IntegerVector& y, int n_classes);
CodeMatrix codes_from_r(SEXP x, const ClassLayout& layout, int nbins, int threads, SEXP bin_above = R_NilValue,
                        EncodeReport* report = nullptr, const CodedHook& on_coded = nullptr);
// The number of columns of x when it is a plain matrix or list of columns, which codes_from_r()
// may code with encode_dense() (calling on_coded), else 0.
int64_t dense_columns(SEXP x);

// A report as R sees it: list(binned = per column, whether an integer column was binned;
// bad_rows, bad_columns = the 1-based sample and feature of each bad feature's first bad value).
Rcpp::List report_to_r(const EncodeReport& report);

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
