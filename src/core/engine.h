// The interface a selection engine implements, on the CPU (cpu_engine.h) or a GPU
// (src/cuda/gpu_engine.cu). The selection loops (select_jmi.h) drive it and never see where
// the counting happens; GPU engines keep scores on the device and return one candidate a step.
#pragma once

#include <cstdint>
#include <vector>

#include "plogp_table.h"

namespace fsgpu {

struct Candidate {
  int64_t feature = -1;  // -1 when every feature is retired
  Wide score = 0;        // fixed point: N * information * 2^32
};

class JointMiEngine {
 public:
  virtual ~JointMiEngine() = default;
  // For every feature X that is not retired: score(X) = (reset ? 0 : score(X)) + N*I(X,S;Y),
  // where S is feature `conditioning`, or nothing when conditioning < 0 (then I(X;Y)).
  virtual void accumulate_joint_mi(int64_t conditioning, bool reset) = 0;
  // Removes a feature from the candidates.
  virtual void retire(int64_t feature) = 0;
  // The candidate with the highest score, the lowest index among equal scores.
  virtual Candidate best_candidate() = 0;
  // Every feature's score (retired features keep the score they had when retired).
  virtual std::vector<Wide> scores() = 0;
};

}  // namespace fsgpu
