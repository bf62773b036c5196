// Networks from a mutual information matrix, with minet's definitions (Meyer et al. 2008).
//
// Each takes a symmetric n x n matrix (only the off-diagonal entries are read) and returns
// the n x n symmetric matrix of edge weights, zero where there is no edge.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkpoint.h"

namespace fsgpu {

// ARACNE: the edge (i, j) goes when some k has mim(i,k) - eps > mim(i,j) and
// mim(j,k) - eps > mim(i,j): the data processing inequality, with tolerance eps, removes the
// weakest edge of a triangle. Edges keep their mutual information as weight.
std::vector<double> aracne_network(const double* mim, int64_t n, double eps, int threads,
                                   const Checkpoint& between_slices);

// CLR: weight sqrt(z_i^2 + z_j^2), z_i = max(0, (mim(i,j) - mean_i) / sd_i) with the mean and
// the sample standard deviation of row i off the diagonal (z_i = 0 when sd_i = 0).
std::vector<double> clr_network(const double* mim, int64_t n);

// MRNET: for every target i, a forward mRMR selection among the other variables, scoring
// mim(i,j) - mean_{s selected} mim(j,s) (the first pick: mim(i,j)), ties to the lower index,
// until the best score is negative. Weight: the larger score with which i picked j or j
// picked i, and no edge when neither scored above 0.
std::vector<double> mrnet_network(const double* mim, int64_t n, int threads,
                                  const Checkpoint& between_slices);

// MRNETB (Meyer, Marbach, Roy and Kellis 2010): for every target i, mRMR by backward
// elimination, then sequential replacement. S starts as all the other variables; a variable
// k's score is mim(i,k) - (sum of mim(k,l) over l in S, l != k) / |S|, for k in S and outside
// it alike. Backward: while |S| > 1 and the lowest score in S is negative, that variable
// leaves. Replacement: while the best variable outside S (target excluded) scores strictly
// above the worst in S, they swap, at most n - 1 times. Ties go to the lower index. Weight:
// the larger of the final scores with which i kept j and j kept i, 0 when neither is positive.
std::vector<double> mrnetb_network(const double* mim, int64_t n, int threads,
                                   const Checkpoint& between_slices);

}  // namespace fsgpu
