// What the core asks of the GPU side. Implemented in src/cuda/ when the package is built with
// CUDA, and in src/nocuda/ (every call reports why there is no GPU support) otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "code_matrix.h"
#include "discretize.h"
#include "knn.h"
#include "engine.h"
#include "interactions.h"
#include "pairs.h"
#include "select.h"

namespace fsgpu {

struct GpuDevice {
  int id = 0;
  std::string name;
  int64_t total_memory = 0, free_memory = 0;
  int major = 0, minor = 0, multiprocessors = 0;
};

struct GpuStatus {
  bool compiled = false;       // built with CUDA
  int runtime_version = 0;     // CUDA runtime linked in, e.g. 13000
  int driver_version = 0;      // 0 when no driver was found
  std::vector<GpuDevice> devices;
  std::string problem;         // why no device is usable, when none is
};

// Probes the driver and devices (callers cache the answer).
GpuStatus gpu_status();

// Dense byte codes copied to a device while the encoder writes them (encode_dense's on_coded),
// for the selection engine on that device to adopt (GpuOptions::preloaded) rather than upload
// them once encoding is done: the upload hides behind the encoding.
class CodeUpload {
 public:
  virtual ~CodeUpload() = default;
  // Features [first, last) of `codes` (n_samples bytes each, feature after feature) are final as
  // bytes: copied to the device. Called by the encoder's workers (worker < the threads given).
  virtual void send(const uint8_t* codes, int64_t first, int64_t last, int worker) = 0;
};

// An upload of n_features x n_samples byte codes to `device` by up to `threads` workers, or null
// when the device has not that much memory to spare (or there is no GPU support).
std::unique_ptr<CodeUpload> start_code_upload(int device, int32_t n_samples, int64_t n_features, int threads);

struct GpuOptions {
  std::vector<int> devices;    // CUDA device ids; features are split across them
  // Selection: bytes of codes per device before streaming. Pair search, discretization, kNN:
  // the most bytes they may use per device. 0 = from free memory.
  int64_t memory_limit = 0;
  int host_threads = 1;        // CPU threads for host-side steps
  CodeUpload* preloaded = nullptr;  // selection: codes sent while encoding, used when they are the engine's
  // kNN and interaction search: the most shared memory a block may take, when below the device's
  // own limit (0: the device's). Tests set it to smaller GPUs' limits (99 KB on sm_86/89, 163 KB
  // on sm_80) to run their kernel choices on a larger one.
  int32_t shared_memory_cap = 0;
};

// A selection engine whose codes and feature states live on the devices (streamed in feature blocks when they do not fit).
// Its scores are the estimator's (estimators.h), with the same table terms as CpuEngine's.
std::unique_ptr<SelectionEngine> make_gpu_engine(const CodeMatrix& x, const ClassLayout& layout,
                                                 const GpuOptions& options,
                                                 Estimator estimator = Estimator::empirical);

// Why gpu_pair_search cannot run `task` with `options`, or "" when it can: features with more
// than kMaxGpuPairLevels levels, no device, or more memory than a device has free (less some
// room for the runtime) or than options.memory_limit. The memory is the search's exact peak:
// bitmaps, codes while the bitmaps are built, sums and the output list of the largest batch.
// The glue asks before an automatic choice of the GPU, so that it can take the CPU instead.
std::string gpu_pair_search_problem(const PairData& data, const PairTask& task, const GpuOptions& options);

// The pair search of pairs.h on the devices (they split the batches of rows): each batch's
// passing pairs go to the collector; between_batches runs on the calling thread. Throws
// gpu_pair_search_problem()'s reason, when there is one, before allocating anything.
void gpu_pair_search(const PairData& data, const PairTask& task, const PlogpTable& plogp, PairCollector& collector,
                     const GpuOptions& options, const Checkpoint& between_batches);

// Seconds a GPU discretization spent in each phase, summed over chunks and devices (each phase
// ends with a stream synchronisation, so they add up to the wall time of one device).
struct GpuDiscretizePhases {
  double setup = 0;     // buffers and tables on the devices
  double upload = 0;    // reading the values and copying them to the device
  double sort = 0;      // sort keys and the segmented sort
  double distinct = 0;  // distinct values and prefix counts
  double method = 0;    // the method's kernel and the cut points
  double download = 0;  // results back to the host

  GpuDiscretizePhases& operator+=(const GpuDiscretizePhases& o) {
    setup += o.setup, upload += o.upload, sort += o.sort, distinct += o.distinct, method += o.method;
    download += o.download;
    return *this;
  }
};

// The discretization of discretize.h on the devices (they take chunks of features in turn), with
// the CPU engine's results; between_chunks runs on the calling thread while they work; phases
// (when not null) receives where the time went.
std::vector<FeatureCuts> gpu_discretize(const DiscretizeTask& task, const GpuOptions& options,
                                        const Checkpoint& between_chunks,
                                        GpuDiscretizePhases* phases = nullptr);

// Where a GPU kNN search spent its time (seconds, summed over devices), how many candidates its
// passes kept per query, and how many queries a half-precision pass left unsure (searched again
// in single precision: retried_rows) or any pass did (searched exactly: exact_rows).
struct GpuKnnPhases {
  double upload = 0, candidates = 0, rerank = 0, download = 0;
  double candidates_per_query = 0;
  int64_t retried_rows = 0, exact_rows = 0;

  GpuKnnPhases& operator+=(const GpuKnnPhases& o) {
    upload += o.upload, candidates += o.candidates, rerank += o.rerank, download += o.download;
    candidates_per_query += o.candidates_per_query, retried_rows += o.retried_rows, exact_rows += o.exact_rows;
    return *this;
  }
};

// Lets the host blocks that searches keep from call to call (host_blocks.h: the kNN search's
// prepared rows and neighbour lists) be page-locked from now on, so that devices copy them
// directly, without a staging copy. Called before a GPU search (nothing here runs at load).
void gpu_lock_host_blocks();

// Reference points kept on the devices between searches (an index's device copy, freed with
// it): gpu_knn() and gpu_knn_range() given it for the same points upload none of them to those
// devices. gpu_knn_keep() copies `reference` to every device of options (the pointer must not
// outlive the devices' use; it holds no pointer to `reference`).
struct GpuKnnKept;
std::shared_ptr<GpuKnnKept> gpu_knn_keep(const KnnPoints& reference, const GpuOptions& options);

// The exact kNN of knn.h on the devices, with the CPU engine's results: the query rows are split
// across devices; reference points that do not fit a device's memory are streamed in blocks.
// kept (or null): the reference points' copies from gpu_knn_keep().
KnnResult gpu_knn(const KnnPoints& reference, const KnnPoints* queries, int32_t k, const GpuOptions& options,
                  const Checkpoint& between_blocks, GpuKnnPhases* phases = nullptr, const GpuKnnKept* kept = nullptr);

// The range search of knn.h (cpu_knn_range) on the devices, with its result: the queries are
// split across devices; reference points that do not fit a device's memory go through in blocks.
KnnRangeResult gpu_knn_range(const KnnPoints& reference, const KnnPoints* queries, const double* thresholds,
                             const GpuOptions& options, const Checkpoint& between_batches,
                             const GpuKnnKept* kept = nullptr);

// Why gpu_interactions cannot run `task`, or "" when it can: the GPU counts 1- to 5-tuples of
// variables with 2 to 4 levels and no missing values, for any number of classes the CPU takes
// (the CPU takes the rest), on devices with room for the bitmaps; 4- and 5-tuples of fewer than
// 2^16 and 2^12 variables (their packed keys).
std::string gpu_interactions_problem(const InteractionBits& bits, const InteractionTask& task,
                                     const GpuOptions& options);

// The interaction search of interactions.h on the devices (they split the first variables), with
// the CPU engine's results bit for bit; between_batches runs on the calling thread.
InteractionBest gpu_interactions(const InteractionBits& bits, const GainTables& tables, const InteractionTask& task,
                                 const GpuOptions& options, const Checkpoint& between_batches);

// Many selections at once (stability selection, issue 20): the selection by `selection` on each
// subsample (sample indices, 0-based, each at most once), all subsamples together on the first
// device of `options`. The codes go to the device once; a subsample is a vector of 0/1 sample
// weights there, and each step of every subsample's selection is one counting launch over the
// data, with the score updates (criteria.h, as the engines make them) and the argmax on the
// device: each selection is select_features()' on subsample_of()'s codes, bitwise.
// gpu_subsamples_problem() says why it cannot run `selection` on x ("" when it can): criteria
// whose pass conditions on more than the newest feature (CMI, JMI3) or counts impurity (JIM),
// fixed features, count tables too large for shared memory, codes that do not fit the device.
std::string gpu_subsamples_problem(const CodeMatrix& x, const ClassLayout& layout, const SelectionOptions& selection,
                                   const GpuOptions& options);
// Subsamples run in groups when the feature states of all of them do not fit the device (or
// options.memory_limit, when set); between_steps runs on the calling thread between steps.
std::vector<Selection> gpu_select_subsamples(const CodeMatrix& x, const ClassLayout& layout,
                                             const std::vector<std::vector<int32_t>>& samples,
                                             const SelectionOptions& selection, const GpuOptions& options,
                                             const Checkpoint& between_steps);

}  // namespace fsgpu
