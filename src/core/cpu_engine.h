// Multithreaded CPU engine: one byte (or two) per cell of codes plus O(features) scores.
#pragma once

#include <functional>
#include <vector>

#include "engine.h"
#include "joint_counts.h"

namespace fsgpu {

class CpuJmiEngine : public JointMiEngine {
 public:
  // A step over more than slice_entries codes runs in slices (at most 64), calling
  // between_slices on the calling thread between them: where the R glue lets the user
  // interrupt a long step.
  static constexpr int64_t kSliceEntries = int64_t(1) << 26;
  CpuJmiEngine(const CodeMatrix& x, const ClassLayout& layout, int threads,
               std::function<void()> between_slices = nullptr, int64_t slice_entries = kSliceEntries);
  void accumulate_joint_mi(int64_t conditioning, bool reset) override;
  void retire(int64_t feature) override { retired_[feature] = 1; }
  Candidate best_candidate() override;
  std::vector<Wide> scores() override { return score_; }

 private:
  std::function<void()> between_slices_;
  int64_t slice_entries_;
  const CodeMatrix& x_;
  const ClassLayout& layout_;
  int threads_;
  PlogpTable plogp_;
  int64_t class_entropy_;
  std::vector<Wide> score_;
  std::vector<uint8_t> retired_;
  std::vector<CountScratch> scratch_;  // one per worker
};

}  // namespace fsgpu
