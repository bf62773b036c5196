// Built without CUDA: every GPU request reports why.
#include "core/gpu_backend.h"

#include <stdexcept>

#include "build_config.h"

namespace fsgpu {

GpuStatus gpu_status() {
  GpuStatus status;
  status.problem = std::string("fsgpu was built without CUDA (") + FSGPU_NO_CUDA_REASON + ")";
  return status;
}

std::unique_ptr<CodeUpload> start_code_upload(int, int32_t, int64_t, int) { return nullptr; }

std::unique_ptr<SelectionEngine> make_gpu_engine(const CodeMatrix&, const ClassLayout&, const GpuOptions&, Estimator) {
  throw std::runtime_error(gpu_status().problem);
}

std::string gpu_pair_search_problem(const PairData&, const PairTask&, const GpuOptions&) {
  return gpu_status().problem;
}

void gpu_pair_search(const PairData&, const PairTask&, const PlogpTable&, PairCollector&, const GpuOptions&,
                     const Checkpoint&) {
  throw std::runtime_error(gpu_status().problem);
}

std::vector<FeatureCuts> gpu_discretize(const DiscretizeTask&, const GpuOptions&, const Checkpoint&,
                                        GpuDiscretizePhases*) {
  throw std::runtime_error(gpu_status().problem);
}

void gpu_lock_host_blocks() {}  // no device copies from them

std::shared_ptr<GpuKnnKept> gpu_knn_keep(const KnnPoints&, const GpuOptions&) {
  throw std::runtime_error(gpu_status().problem);
}

KnnResult gpu_knn(const KnnPoints&, const KnnPoints*, int32_t, const GpuOptions&, const Checkpoint&,
                  GpuKnnPhases*, const GpuKnnKept*) {
  throw std::runtime_error(gpu_status().problem);
}

KnnRangeResult gpu_knn_range(const KnnPoints&, const KnnPoints*, const double*, const GpuOptions&, const Checkpoint&,
                             const GpuKnnKept*) {
  throw std::runtime_error(gpu_status().problem);
}

std::string gpu_interactions_problem(const InteractionBits&, const InteractionTask&, const GpuOptions&) {
  return gpu_status().problem;
}

InteractionBest gpu_interactions(const InteractionBits&, const GainTables&, const InteractionTask&, const GpuOptions&,
                                 const Checkpoint&) {
  throw std::runtime_error(gpu_status().problem);
}

std::string gpu_subsamples_problem(const CodeMatrix&, const ClassLayout&, const SelectionOptions&, const GpuOptions&) {
  return gpu_status().problem;
}

std::vector<Selection> gpu_select_subsamples(const CodeMatrix&, const ClassLayout&,
                                             const std::vector<std::vector<int32_t>>&, const SelectionOptions&,
                                             const GpuOptions&, const Checkpoint&) {
  throw std::runtime_error(gpu_status().problem);
}

}  // namespace fsgpu
