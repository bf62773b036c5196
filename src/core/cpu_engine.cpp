#include "cpu_engine.h"

#include <algorithm>
#include <stdexcept>

#include "parallel.h"

namespace fsgpu {

CpuEngine::CpuEngine(const CodeMatrix& x, const ClassLayout& layout, int threads,
                     Checkpoint between_slices, int64_t slice_entries, Estimator estimator)
    : between_slices_(std::move(between_slices)),
      slice_entries_(std::max<int64_t>(slice_entries, 1)),
      x_(x),
      layout_(layout),
      threads_(threads < 1 ? 1 : threads),
      plogp_(layout.n_samples, estimator),
      packed_(PackedClasses::of(layout, plogp_)),
      state_(x.n_features),
      retired_(x.n_features, 0),
      scratch_(threads_),
      impurity_scratch_(threads_) {
  if (!per_count_terms(estimator)) throw std::invalid_argument("the selection engines take per-count estimators only");
}

void CpuEngine::score_pass(const Conditioning& s, const StepRule& rule) {
  check_table_size(x_, s);
  if (impurity_pass(rule.method)) {  // JIM: Gini impurity sums, every feature costing its N samples
    sliced_parallel_for(x_.n_features, x_.n_features * layout_.n_samples / slice_entries_, threads_, 16,
                        between_slices_, [&](int64_t f, int worker) {
                          if (retired_[f]) return;
                          update_feature(rule, impurity_sum(x_, f, s, layout_, impurity_scratch_[worker]), 0,
                                         state_[f]);
                        });
    return;
  }
  const bool by_state = s.levels >= kGroupedStates;
  const StateGroups groups = by_state ? StateGroups::of(s) : StateGroups();
  sliced_parallel_for(x_.n_features, x_.n_entries() / slice_entries_, threads_, 64, between_slices_,
                      [&](int64_t f, int worker) {
                        if (retired_[f]) return;
                        const JointSums sums =
                            joint_sums(x_, f, s, layout_, plogp_, scratch_[worker], by_state ? &groups : nullptr, &packed_);
                        update_feature(rule, sums.xsy, sums.xs, state_[f]);
                      });
}

Candidate best_of(const std::vector<FeatureState>& state, const std::vector<uint8_t>& retired) {
  Candidate best;
  for (size_t f = 0; f < state.size(); ++f) {
    if (retired[f]) continue;
    if (best.feature < 0 || state[f].key > best.key) best = Candidate{static_cast<int64_t>(f), state[f].key};
  }
  return best;
}

Candidate CpuEngine::best_candidate() { return best_of(state_, retired_); }

std::vector<Wide> keys_of(const std::vector<FeatureState>& state) {
  std::vector<Wide> out(state.size());
  for (size_t f = 0; f < state.size(); ++f) out[f] = state[f].key;
  return out;
}

std::vector<Wide> CpuEngine::keys() { return keys_of(state_); }

}  // namespace fsgpu
