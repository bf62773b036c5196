// CPU engine for per-sample weights, as FEAST's weighted criteria (MIToolbox's weighted
// information): each cell's term is weighted by the summed weight of its samples,
//   I_w(X,S;Y) = (1/N) sum W(x,s,y) log2(N n(x,s,y) / (n(x,s) n(y))),
//   I_w(X;Y|S) = (1/N) sum W(x,s,y) log2(n(x,s,y) n(s) / (n(s,y) n(x,s))),
//   H_w(X,S,Y) = -(1/N) sum W(x,s,y) log2(n(x,s,y) / N).
// Exact as the unweighted engine is: weights are rounded once to 37-bit fixed point, log2(n) is
// read from a fixed-point table, and each term W * (sum of logs) is a 128-bit integer, so sums
// do not depend on their order and mathematically equal scores tie exactly.
// Criteria: MIM, JMI, DISR, CMIM and CMI (FEAST's weighted set).
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "checkpoint.h"
#include "engine.h"

namespace fsgpu {

bool supports_weights(Method method);

class WeightedCpuEngine : public SelectionEngine {
 public:
  // weights: one per sample, in the caller's sample order, finite and not negative.
  WeightedCpuEngine(const CodeMatrix& x, const ClassLayout& layout, const std::vector<double>& weights, int threads,
                    Checkpoint between_slices = nullptr);
  void score_pass(const Conditioning& s, const StepRule& rule) override;
  void retire(int64_t feature) override { retired_[feature] = 1; }
  Candidate best_candidate() override;
  std::vector<Wide> keys() override;
  const CodeMatrix& codes() const override { return x_; }
  const ClassLayout& layout() const override { return layout_; }
  const PlogpTable& plogp() const override { return plogp_; }
  // The keys' extra fraction bits of the logs and the weights' scale.
  double key_scale() const override { return std::ldexp(weight_scale_, kLogBits - 32); }

  struct Scratch {
    std::vector<uint32_t> codes;                     // X by class-sorted position
    std::vector<uint32_t> pair_counts, cell_counts;  // n(x,s); n(x,s,y) of one class
    std::vector<int64_t> cell_weights;               // W(x,s,y) of one class, fixed point
    std::vector<int64_t> touched;
  };

 private:
  struct Terms {  // N * bits * 2^32 * key_scale()
    Wide joint_mi = 0, cond_mi = 0, joint_entropy = 0;
  };
  Terms terms_of(int64_t feature, const Conditioning& s, Scratch& scratch) const;

  Checkpoint between_slices_;
  const CodeMatrix& x_;
  const ClassLayout& layout_;
  int threads_;
  PlogpTable plogp_;
  // log2(n) with 48 fraction bits: with weights a cell's log counts as often as its weight, so
  // it needs more bits than plogp's terms.
  static constexpr int kLogBits = 48;
  std::vector<int64_t> log2_;     // round(log2(n) * 2^kLogBits), n = 0..N
  double weight_scale_ = 1;       // weights are round(w * weight_scale_)
  std::vector<int64_t> weight_;   // by class-sorted position
  std::vector<FeatureState> state_;  // key, sum1 (JMI) and real (DISR) are used
  std::vector<uint8_t> retired_;
  std::vector<Scratch> scratch_;
};

}  // namespace fsgpu
