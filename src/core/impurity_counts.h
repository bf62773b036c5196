// Counting for JIM's Gini impurity (criteria.h): for one feature X against a conditioning
// variable S and the class Y, the sum over the cells of (X,S) and Y of
//   gini_term(n(x,s,y), n(x,s)),
// a fixed-point sum n(x,s,y)^2 / n(x,s) with every term rounded alike, so that the sum is an
// exact integer whatever the order, rounded by gini_fixed() to plogp's scale. The CUDA kernel (src/cuda/impurity_counts.cu) computes it
// another way (the stored entries only, the base code's cells derived from S's counts); this
// is its CPU twin and the reference it is tested against.
#pragma once

#include <cstdint>
#include <vector>

#include "joint_counts.h"

namespace fsgpu {

// Reusable per-thread tables for impurity_sum, all-zero between calls.
struct alignas(64) ImpurityScratch {  // aligned: workers must not share cache lines
  std::vector<uint32_t> codes;             // X by class-sorted position
  std::vector<uint32_t> pair_counts;       // n(x,s)
  std::vector<uint32_t> cell_counts;       // n(x,s,y) of the current class
  std::vector<int64_t> touched;            // cells counted in the current class
};

// gini_fixed() of the sum for feature X against S. Every feature costs its N samples, sparse or not.
int64_t impurity_sum(const CodeMatrix& x, int64_t feature, const Conditioning& s, const ClassLayout& layout,
                     ImpurityScratch& scratch);

// gini_fixed(sum_y gini_term(n(y), N)): the sum of a feature that tells nothing (StepRule::gini_offset).
int64_t impurity_offset(const ClassLayout& layout);

}  // namespace fsgpu
