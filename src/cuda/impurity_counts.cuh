// The GPU twin of src/core/impurity_counts.h: JIM's impurity passes. One thread block per
// feature counts n(x,s) and then, class by class, n(x,s,y), in tables of levels(X) x levels(S)
// cells, and adds gini_term(n(x,s,y), n(x,s)) over the cells (core/criteria.h).
#pragma once

#include <cuda_runtime.h>

#include "joint_counts.cuh"

namespace fsgpu {

// Count tables per thread block: shared memory when they fit, otherwise `global_scratch`
// (all-zero between launches, as launch_score_pass's).
CountLayout plan_impurity(const FeatureBlockView& block, const StepView& step, int device);

// The states of the block's features that are not retired, updated by step.rule (a JIM rule).
void launch_impurity_pass(const FeatureBlockView& block, const StepView& step, const CountLayout& layout,
                          uint32_t* global_scratch, cudaStream_t stream);

}  // namespace fsgpu
