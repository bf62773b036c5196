// paste0(prefix, seq_len(n)), made lazily: the names of a million unnamed variables cost R a
// second with paste0() and a tenth of a second made one by one in C++, which is a fifth of a
// GPU interaction search of that size. This vector makes a name when one is read (STRING_ELT)
// and all of them only when something needs them in memory (DATAPTR: sort, match, saveRDS, a
// change); the search and its results only pass the vector on, so printing the top rows costs
// a few names. An ALTREP string class (R >= 3.6).
#include <Rcpp.h>
#include <R_ext/Altrep.h>

#include <string>

namespace {

R_altrep_class_t default_names_class;

// data1: list(prefix, n); data2: the names in memory once made, else NULL.
SEXP name_prefix(SEXP x) { return VECTOR_ELT(R_altrep_data1(x), 0); }
R_xlen_t name_count(SEXP x) { return static_cast<R_xlen_t>(REAL(VECTOR_ELT(R_altrep_data1(x), 1))[0]); }

SEXP make_name(SEXP x, R_xlen_t i) {
  const SEXP prefix = STRING_ELT(name_prefix(x), 0);
  std::string name(CHAR(prefix));
  name += std::to_string(i + 1);
  return Rf_mkCharLenCE(name.data(), static_cast<int>(name.size()), CE_UTF8);
}

SEXP materialized(SEXP x) {
  SEXP all = R_altrep_data2(x);
  if (all != R_NilValue) return all;
  const R_xlen_t n = name_count(x);
  all = PROTECT(Rf_allocVector(STRSXP, n));
  const SEXP prefix = STRING_ELT(name_prefix(x), 0);
  std::string name(CHAR(prefix));
  const size_t prefix_size = name.size();
  for (R_xlen_t i = 0; i < n; ++i) {
    name.resize(prefix_size);
    name += std::to_string(i + 1);
    SET_STRING_ELT(all, i, Rf_mkCharLenCE(name.data(), static_cast<int>(name.size()), CE_UTF8));
  }
  R_set_altrep_data2(x, all);
  UNPROTECT(1);
  return all;
}

R_xlen_t names_length(SEXP x) { return name_count(x); }

Rboolean names_inspect(SEXP x, int, int, int, void (*)(SEXP, int, int, int)) {
  Rprintf(" fsgpu default names (%s)\n", R_altrep_data2(x) == R_NilValue ? "not made" : "made");
  return TRUE;
}

void* names_dataptr(SEXP x, Rboolean) { return DATAPTR(materialized(x)); }

const void* names_dataptr_or_null(SEXP x) {
  const SEXP all = R_altrep_data2(x);
  return all == R_NilValue ? nullptr : DATAPTR_RO(all);
}

SEXP names_elt(SEXP x, R_xlen_t i) {
  const SEXP all = R_altrep_data2(x);
  return all == R_NilValue ? make_name(x, i) : STRING_ELT(all, i);
}

void names_set_elt(SEXP x, R_xlen_t i, SEXP value) { SET_STRING_ELT(materialized(x), i, value); }

int names_no_na(SEXP) { return 1; }

}  // namespace

// [[Rcpp::init]]
void fsgpu_register_default_names(DllInfo* dll) {
  default_names_class = R_make_altstring_class("default_names", "fsgpu", dll);
  R_set_altrep_Length_method(default_names_class, names_length);
  R_set_altrep_Inspect_method(default_names_class, names_inspect);
  R_set_altvec_Dataptr_method(default_names_class, names_dataptr);
  R_set_altvec_Dataptr_or_null_method(default_names_class, names_dataptr_or_null);
  R_set_altstring_Elt_method(default_names_class, names_elt);
  R_set_altstring_Set_elt_method(default_names_class, names_set_elt);
  R_set_altstring_No_NA_method(default_names_class, names_no_na);
}

// paste0(prefix, seq_len(n)), made as they are read (see above).
// [[Rcpp::export]]
SEXP fsgpu_default_names(std::string prefix, double n) {
  if (!(n >= 0) || n > static_cast<double>(R_XLEN_T_MAX)) Rcpp::stop("n must be a count");
  const SEXP state = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(state, 0, Rf_mkString(prefix.c_str()));
  SET_VECTOR_ELT(state, 1, Rf_ScalarReal(n));
  const SEXP out = R_new_altrep(default_names_class, state, R_NilValue);
  UNPROTECT(1);
  return out;
}
