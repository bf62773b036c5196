// The interface a selection engine implements, on the CPU (cpu_engine.h, weighted_engine.h) or
// GPUs (src/cuda/gpu_engine.cu). The selection loop (select.h) drives it and never sees where
// the counting happens; GPU engines keep the feature states on the device and return one
// candidate a step.
#pragma once

#include <cstdint>
#include <vector>

#include "criteria.h"
#include "joint_counts.h"

namespace fsgpu {

struct Candidate {
  int64_t feature = -1;  // -1 when every feature is retired
  Wide key = 0;          // see FeatureState
};

class SelectionEngine {
 public:
  virtual ~SelectionEngine() = default;
  // One pass over the data against S: every feature that is not retired gets its state updated
  // by `rule` (criteria.h). S is Conditioning::none() for the relevance pass (rule.step 0).
  virtual void score_pass(const Conditioning& s, const StepRule& rule) = 0;
  // S = one of the engine's features, with its count tables. The GPU engine builds them on the
  // device from the codes it holds (the result's codes then stay there: resident_feature).
  virtual Conditioning condition_on(int64_t feature) {
    return Conditioning::on_feature(codes(), layout(), feature, plogp());
  }
  // Whether the engine reads the code arrays (codes8, codes16, entry_row) on the host once it is
  // built. The GPU engine on one device that holds them all does not: the caller may free them
  // while it selects, unless passes condition on joint variables (CMI, JMI3: select.cpp builds
  // those on the host from the codes).
  virtual bool reads_host_codes() const { return true; }
  // Removes a feature from the candidates.
  virtual void retire(int64_t feature) = 0;
  // The candidate with the highest key, the lowest index among equal keys.
  virtual Candidate best_candidate() = 0;
  // Every feature's key (retired features keep the key they had when retired).
  virtual std::vector<Wide> keys() = 0;
  // The data the engine counts, and the table of plogp terms it counts with.
  virtual const CodeMatrix& codes() const = 0;
  virtual const ClassLayout& layout() const = 0;
  virtual const PlogpTable& plogp() const = 0;
  // Fixed-point keys are N * bits * 2^32 times this (weighted_engine.h scales them by its weights).
  virtual double key_scale() const { return 1; }
};

}  // namespace fsgpu
