#include "cpu_engine.h"

#include <algorithm>

#include "parallel.h"

namespace fsgpu {

CpuJmiEngine::CpuJmiEngine(const CodeMatrix& x, const ClassLayout& layout, int threads,
                           std::function<void()> between_slices, int64_t slice_entries)
    : between_slices_(std::move(between_slices)),
      slice_entries_(std::max<int64_t>(slice_entries, 1)),
      x_(x),
      layout_(layout),
      threads_(threads < 1 ? 1 : threads),
      plogp_(layout.n_samples),
      class_entropy_(class_entropy(layout, plogp_)),
      score_(x.n_features, 0),
      retired_(x.n_features, 0),
      scratch_(threads_) {}

void CpuJmiEngine::accumulate_joint_mi(int64_t conditioning, bool reset) {
  const Conditioning s = conditioning < 0 ? Conditioning::none(layout_, plogp_)
                                          : Conditioning::on_feature(x_, layout_, conditioning, plogp_);
  check_table_size(x_, s);
  const int64_t slices = std::clamp<int64_t>(x_.n_entries() / slice_entries_, 1, 64);
  for (int64_t slice = 0; slice < slices; ++slice) {
    if (slice > 0 && between_slices_) between_slices_();
    const int64_t first = x_.n_features * slice / slices, last = x_.n_features * (slice + 1) / slices;
    parallel_for(last - first, threads_, 64, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t f = first + begin; f < first + end; ++f) {
        if (retired_[f]) continue;
        int64_t mi = class_entropy_ - cond_class_entropy(x_, f, s, layout_, plogp_, scratch_[worker]);
        score_[f] = (reset ? 0 : score_[f]) + mi;
      }
    });
  }
}

Candidate CpuJmiEngine::best_candidate() {
  Candidate best;
  for (int64_t f = 0; f < x_.n_features; ++f) {
    if (retired_[f]) continue;
    if (best.feature < 0 || score_[f] > best.score) {
      best.feature = f;
      best.score = score_[f];
    }
  }
  return best;
}

}  // namespace fsgpu
