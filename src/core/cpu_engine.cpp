#include "cpu_engine.h"

#include <algorithm>

#include "parallel.h"

namespace fsgpu {

CpuEngine::CpuEngine(const CodeMatrix& x, const ClassLayout& layout, int threads,
                     std::function<void()> between_slices, int64_t slice_entries)
    : between_slices_(std::move(between_slices)),
      slice_entries_(std::max<int64_t>(slice_entries, 1)),
      x_(x),
      layout_(layout),
      threads_(threads < 1 ? 1 : threads),
      plogp_(layout.n_samples),
      state_(x.n_features),
      retired_(x.n_features, 0),
      scratch_(threads_) {}

void CpuEngine::score_pass(const Conditioning& s, const StepRule& rule) {
  check_table_size(x_, s);
  StateGroups groups;
  if (s.levels >= kGroupedStates) groups = StateGroups::of(s);
  const StateGroups* grouped = s.levels >= kGroupedStates ? &groups : nullptr;
  const int64_t slices = std::clamp<int64_t>(x_.n_entries() / slice_entries_, 1, 64);
  for (int64_t slice = 0; slice < slices; ++slice) {
    if (slice > 0 && between_slices_) between_slices_();
    const int64_t first = x_.n_features * slice / slices, last = x_.n_features * (slice + 1) / slices;
    parallel_for(last - first, threads_, 64, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t f = first + begin; f < first + end; ++f) {
        if (retired_[f]) continue;
        const JointSums sums = joint_sums(x_, f, s, layout_, plogp_, scratch_[worker], grouped);
        update_feature(rule, sums.xsy, sums.xs, state_[f]);
      }
    });
  }
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
