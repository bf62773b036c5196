// Many selections at once: one criterion (or several) on many subsamples of one data set, as
// stability selection and cross-validation run them.
//
// The data are encoded once. A subsample's codes are gathered from the shared code matrix
// (one byte or two per cell of the subsample: no binning, no R data touched again), and its
// selection runs on its own engine (a single-threaded CpuEngine, or a GPU engine), so that
// subsamples run side by side on the threads. On the GPU, criteria that condition on the newest
// feature alone run all subsamples together instead (gpu_select_subsamples(), gpu_backend.h). Each selection is exactly what select_features()
// returns for the same rows and the same codes: counts do not depend on the sample order, on the codes' numbering or on the
// base code, so the engine's keys, and with them every score and tie, are the same.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "checkpoint.h"
#include "code_matrix.h"
#include "engine.h"
#include "gpu_backend.h"
#include "select.h"

namespace fsgpu {

struct Subsample {
  ClassLayout layout;
  CodeMatrix codes;
};

// The rows `samples` (0-based, in the caller's sample order, each at most once) of x, whose
// classes are layout's; classes absent from the subsample are dropped (the others keep their
// order). Levels and base codes are x's.
Subsample subsample_of(const CodeMatrix& x, const ClassLayout& layout, const std::vector<int32_t>& samples);

// The engine a subsample's selection runs on, given the threads it may use. The default is a
// CpuEngine; gpu_select_on_subsamples() passes, for the criteria it cannot batch, one that puts
// the subsample's codes on a device, and calls with threads = 1 (engines side by side would only
// compete for the device).
using SubsampleEngine = std::function<std::unique_ptr<SelectionEngine>(const Subsample&, int threads)>;

// Dense subsamples run side by side while the gathered codes of one a thread take at most this
// much in all (select_on_subsamples()).
constexpr int64_t kSideBySideBytes = int64_t(256) << 20;

// The selection of every (option, subsample) pair, at index option * samples.size() + subsample.
// Pairs run side by side, one engine a thread, unless x is dense and `threads` gathered
// subsamples would take more than side_by_side_bytes, or there are fewer pairs than threads:
// then one after another, each engine on all `threads`. Between rounds of pairs
// `between_rounds` (when set) runs on the calling thread with the fraction done.
std::vector<Selection> select_on_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                            const std::vector<std::vector<int32_t>>& samples,
                                            const std::vector<SelectionOptions>& options, int threads,
                                            const Checkpoint& between_rounds,
                                            const SubsampleEngine& make_engine = nullptr,
                                            int64_t side_by_side_bytes = kSideBySideBytes);

// select_on_subsamples() on the GPU, in the same order. An option that gpu_subsamples_problem()
// accepts runs all subsamples together on the device (gpu_select_subsamples()); the others (CMI,
// JMI3, JIM, fixed features, tables or codes too large) one subsample after another, each on a
// GPU engine of its gathered codes.
std::vector<Selection> gpu_select_on_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                                const std::vector<std::vector<int32_t>>& samples,
                                                const std::vector<SelectionOptions>& options, const GpuOptions& gpu,
                                                const Checkpoint& between_steps);

}  // namespace fsgpu
