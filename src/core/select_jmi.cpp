#include "select_jmi.h"

namespace fsgpu {

Selection select_jmi(JointMiEngine& engine, int64_t k, int64_t n_samples,
                     const std::function<void(int64_t)>& on_step) {
  Selection out;
  for (int64_t step = 0; step < k; ++step) {
    if (on_step) on_step(step);
    if (step == 0) {
      engine.accumulate_joint_mi(-1, true);  // relevance I(X;Y)
    } else {
      engine.accumulate_joint_mi(out.features.back(), step == 1);  // JMI restarts its sum
    }
    Candidate best = engine.best_candidate();
    if (best.feature < 0 || best.score <= 0) break;
    out.features.push_back(best.feature);
    out.scores.push_back(fixed_to_bits(best.score, n_samples));
    engine.retire(best.feature);
  }
  return out;
}

std::vector<double> mi_scores(JointMiEngine& engine, int64_t n_samples) {
  engine.accumulate_joint_mi(-1, true);
  const std::vector<Wide> fixed = engine.scores();
  std::vector<double> bits(fixed.size());
  for (size_t f = 0; f < fixed.size(); ++f) bits[f] = fixed_to_bits(fixed[f], n_samples);
  return bits;
}

}  // namespace fsgpu
