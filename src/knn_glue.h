// Glue shared by knn_graph.cpp and fsgpu_param.cpp: a kNN result as R's two matrices.
#pragma once

#include <Rcpp.h>

#include "core/knn.h"
#include "core/parallel.h"

namespace fsgpu {

// index (1-based) and distance, queries x k column-major matrices, from the result's row-major
// lists, with `row_names` (NULL or a character vector) as their row names; filled by `threads`
// threads through the matrices' raw storage (no R call inside), unfilled before. Named here
// rather than by R's rownames<-, which copied both matrices (3-6 ms at 24,158 x 20).
inline Rcpp::List knn_result_matrices(const KnnResult& r, int threads, SEXP row_names = R_NilValue) {
  const int64_t n = r.n_queries;
  const int32_t k = r.k;
  Rcpp::IntegerMatrix index = Rcpp::no_init(static_cast<int>(n), k);
  Rcpp::NumericMatrix distance = Rcpp::no_init(static_cast<int>(n), k);
  int* index_out = index.begin();
  double* distance_out = distance.begin();
  parallel_for(n, threads, 4096, [&](int64_t begin, int64_t end, int) {
    for (int32_t c = 0; c < k; ++c)
      for (int64_t i = begin; i < end; ++i) {
        index_out[c * n + i] = r.index[i * k + c] + 1;
        distance_out[c * n + i] = r.distance[i * k + c];
      }
  });
  if (!Rf_isNull(row_names)) {
    index.attr("dimnames") = Rcpp::List::create(row_names, R_NilValue);
    distance.attr("dimnames") = Rcpp::List::create(row_names, R_NilValue);
  }
  return Rcpp::List::create(Rcpp::Named("index") = index, Rcpp::Named("distance") = distance);
}

}  // namespace fsgpu
