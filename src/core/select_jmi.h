// Joint mutual information selection (FEAST's JMI, without its repeat-feature-0 bug).
//
// First feature: argmax I(X;Y). Then each step adds, for every remaining candidate X, the term
// I(X,S;Y) with the newest selected S and takes the argmax of the sum; equal scores go to the
// lowest index. The selection stops early when no candidate scores above 0.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine.h"

namespace fsgpu {

struct Selection {
  std::vector<int64_t> features;  // 0-based, in selection order
  std::vector<double> scores;     // bits
};

// on_step(i) runs before step i (0-based) on the calling thread: the place for progress and
// user interrupts; it may throw to abandon the selection.
Selection select_jmi(JointMiEngine& engine, int64_t k, int64_t n_samples,
                     const std::function<void(int64_t)>& on_step);

// I(X;Y) in bits for every feature, in column order: one relevance pass.
std::vector<double> mi_scores(JointMiEngine& engine, int64_t n_samples);

}  // namespace fsgpu
