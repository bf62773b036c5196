// Multithreaded CPU engine: one byte (or two) per cell of codes plus O(features) states.
#pragma once

#include <functional>
#include <vector>

#include "checkpoint.h"
#include "engine.h"
#include "impurity_counts.h"

namespace fsgpu {

class CpuEngine : public SelectionEngine {
 public:
  // A pass over more than slice_entries codes runs in slices (at most 64), calling
  // between_slices on the calling thread between them: where the R glue lets the user
  // interrupt a long step. The estimator's terms (estimators.h) make every score its estimate.
  static constexpr int64_t kSliceEntries = int64_t(1) << 26;
  CpuEngine(const CodeMatrix& x, const ClassLayout& layout, int threads, Checkpoint between_slices = nullptr,
            int64_t slice_entries = kSliceEntries, Estimator estimator = Estimator::empirical);
  void score_pass(const Conditioning& s, const StepRule& rule) override;
  void retire(int64_t feature) override { retired_[feature] = 1; }
  Candidate best_candidate() override;
  std::vector<Wide> keys() override;
  const CodeMatrix& codes() const override { return x_; }
  const ClassLayout& layout() const override { return layout_; }
  const PlogpTable& plogp() const override { return plogp_; }

 private:
  Checkpoint between_slices_;
  int64_t slice_entries_;
  const CodeMatrix& x_;
  const ClassLayout& layout_;
  int threads_;
  PlogpTable plogp_;
  PackedClasses packed_;  // layout's, for dense byte codes with few cells
  std::vector<FeatureState> state_;
  std::vector<uint8_t> retired_;
  std::vector<CountScratch> scratch_;  // one per worker
  std::vector<ImpurityScratch> impurity_scratch_;  // one per worker, for JIM's passes
};

// The CPU engines' shared argmax (highest key, lowest index) and key listing.
Candidate best_of(const std::vector<FeatureState>& state, const std::vector<uint8_t>& retired);
std::vector<Wide> keys_of(const std::vector<FeatureState>& state);

}  // namespace fsgpu
