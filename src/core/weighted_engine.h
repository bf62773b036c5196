// CPU engine for per-sample weights, as FEAST's weighted criteria (MIToolbox's weighted
// information): each cell's term is weighted by the summed weight of its samples,
//   I_w(X,S;Y) = (1/N) sum W(x,s,y) log2(N n(x,s,y) / (n(x,s) n(y))),
//   I_w(X;Y|S) = (1/N) sum W(x,s,y) log2(n(x,s,y) n(s) / (n(s,y) n(x,s))),
//   H_w(X,S,Y) = -(1/N) sum W(x,s,y) log2(n(x,s,y) / N).
// Weights make the terms real numbers, so scores are doubles; each feature's sum runs in one
// fixed order (classes, then cells as first met), so results still do not depend on threads.
// Criteria: MIM, JMI, DISR, CMIM and CMI (FEAST's weighted set).
#pragma once

#include <functional>
#include <vector>

#include "engine.h"

namespace fsgpu {

bool supports_weights(Method method);

class WeightedCpuEngine : public SelectionEngine {
 public:
  // weights: one per sample, in the caller's sample order, finite and not negative.
  WeightedCpuEngine(const CodeMatrix& x, const ClassLayout& layout, const std::vector<double>& weights, int threads,
                    std::function<void()> between_slices = nullptr);
  void score_pass(const Conditioning& s, const StepRule& rule) override;
  void retire(int64_t feature) override { retired_[feature] = 1; }
  Candidate best_candidate() override;
  std::vector<Wide> keys() override;
  const CodeMatrix& codes() const override { return x_; }
  const ClassLayout& layout() const override { return layout_; }
  const PlogpTable& plogp() const override { return plogp_; }

  struct Scratch {
    std::vector<uint32_t> codes;                  // X by class-sorted position
    std::vector<uint32_t> pair_counts, cell_counts;  // n(x,s); n(x,s,y) of one class
    std::vector<double> cell_weights;             // W(x,s,y) of one class
    std::vector<int64_t> touched;
  };

 private:
  struct Terms {
    double joint_mi = 0, cond_mi = 0, joint_entropy = 0;  // bits
  };
  Terms terms_of(int64_t feature, const Conditioning& s, Scratch& scratch) const;

  std::function<void()> between_slices_;
  const CodeMatrix& x_;
  const ClassLayout& layout_;
  int threads_;
  PlogpTable plogp_;
  std::vector<double> weight_;  // by class-sorted position
  std::vector<double> score_;  // bits (a ratio for DISR)
  std::vector<uint8_t> retired_;
  std::vector<Scratch> scratch_;
};

}  // namespace fsgpu
