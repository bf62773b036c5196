// The selection loop of every criterion (criteria.h), over any engine.
//
// First feature: argmax I(X;Y) (JIM: of the Gini impurity gain G(X;Y)). Each later step makes
// one pass against the newest selected feature S (CMI: against the joint variable of all of
// them; JMI3: one pass per earlier feature U, against U and S joined), updates every
// candidate's score and takes the argmax; equal scores go to the lowest index. Features in
// `fixed` are taken first, in their order, whatever they score.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine.h"

namespace fsgpu {

struct SelectionOptions {
  Method method = Method::jmi;
  int64_t k = 10;
  double beta = 1, gamma = 0;   // MIFS, CIFE, CondRed, BetaGamma: I(X;Y) - beta sum I(X;S) + gamma sum I(X;S|Y)
  std::vector<int64_t> fixed;   // selected first, in this order
  double min_score = 0;         // stop when the best score is at or below it (bits; a ratio for DISR, NJMIM)
};

struct Selection {
  std::vector<int64_t> features;  // 0-based, in selection order
  std::vector<double> scores;     // bits, or ratios (criteria.h: key_to_score)
};

// on_step(i) runs before step i (0-based) on the calling thread: the place for progress and
// user interrupts; it may throw to abandon the selection.
Selection select_features(SelectionEngine& engine, const SelectionOptions& options,
                          const std::function<void(int64_t)>& on_step);

// I(X;Y) in bits for every feature, in column order: one relevance pass. With `normalize`, the
// ratio of I(X;Y) to an entropy (criteria.h: Normalization), without unit.
std::vector<double> mi_scores(SelectionEngine& engine, Normalization normalize = Normalization::none);

// One pass against z for every feature: I(X;Y|Z) (Method::cmi) or I(X,Z;Y) (Method::jmi), bits.
std::vector<double> conditional_scores(SelectionEngine& engine, const Conditioning& z, Method method);

}  // namespace fsgpu
