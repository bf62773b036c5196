// Multithreaded CPU engine: one byte (or two) per cell of codes plus O(features) scores.
#pragma once

#include <vector>

#include "engine.h"
#include "joint_counts.h"

namespace fsgpu {

class CpuJmiEngine : public JointMiEngine {
 public:
  CpuJmiEngine(const CodeMatrix& x, const ClassLayout& layout, int threads);
  void accumulate_joint_mi(int64_t conditioning, bool reset) override;
  void retire(int64_t feature) override { retired_[feature] = 1; }
  Candidate best_candidate() override;

 private:
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
