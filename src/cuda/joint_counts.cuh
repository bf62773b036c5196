// The GPU twin of src/core/joint_counts.h: one thread block per feature counts n(x, s, y)
// class by class in shared memory and updates the feature's state (src/core/criteria.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/criteria.h"

namespace fsgpu {

// Bit planes of class-sorted codes, for the binary tensor cores: every class padded to whole
// tiles of 256 samples (8 words of 32 bits, padding bits 0), and word w of a row holding, for
// each of `levels` levels, which of its 32 samples have that code: row r's word w, level a is
// at (r * words + w) * levels + a.
struct PlaneLayout {
  const int32_t* class_start = nullptr;  // n_classes + 1 class-sorted positions (device)
  const int32_t* class_words = nullptr;  // n_classes + 1: the first word of each class (device)
  int32_t n_classes = 0;
  int32_t words = 0;   // per row
  int32_t levels = 0;  // planes a word: 16 for X, 8 or 16 for S
};

// A block of features resident on one device (block-relative arrays).
struct FeatureBlockView {
  const void* codes = nullptr;          // uint8_t or uint16_t
  bool wide = false;
  const int64_t* entry_start = nullptr; // sparse: n_features + 1 block-relative offsets; null when dense
  const int32_t* entry_row = nullptr;   // sparse: class-sorted rows
  int64_t row_stride = 0;               // dense: codes between features, a multiple of 16 bytes
  int64_t first = 0;                    // index of the block's first feature in the device's arrays
  int64_t n_features = 0;
  int32_t max_levels = 1;               // of the block's features
  const uint32_t* planes = nullptr;     // dense features of at most kPlaneLevels levels: bit planes, block-relative
};

// Everything one accumulation step reads, resident on the device.
struct StepView {
  const uint16_t* levels = nullptr;     // per device feature
  const uint16_t* base = nullptr;       // per device feature
  const uint8_t* retired = nullptr;     // per device feature
  FeatureState* state = nullptr;        // per device feature
  StepRule rule;
  const uint32_t* s_codes = nullptr;    // conditioning codes by class-sorted position
  const uint8_t* s_codes8 = nullptr;    // the same as bytes, padded to 16 with 0xFF; null when levels(S) > 256
  PlaneLayout planes;                   // of the blocks' planes (levels: X's)
  const uint32_t* s_planes = nullptr;   // S's bit planes when the blocks have planes and levels(S) <= kPlaneLevels
  int32_t s_plane_levels = 0;
  const uint32_t* s_class_counts = nullptr;  // n(s, y) at [y * Ls + s]
  const uint32_t* s_counts = nullptr;   // n(s)
  const int64_t* s_class_terms = nullptr;  // per class: sum_s plogp(n(s, y))
  const int32_t* class_of = nullptr;    // class of each class-sorted position
  int32_t s_levels = 1;
  const int32_t* class_start = nullptr; // n_classes + 1
  int32_t n_classes = 0;
  int32_t n_samples = 0;
  const int64_t* plogp = nullptr;
};

// Count tables per thread block: shared memory when they fit, otherwise `global_scratch`.
// Dense features with bit planes (at most kPlaneLevels levels, and S too) are counted on the
// binary tensor cores instead, a warp a feature, when there are enough features for that
// (plane_grid > 0), with no tables: see plane_counts_kernel.
struct CountLayout {
  size_t words = 0;       // 32-bit words of tables per thread block
  size_t shared_bytes = 0;  // dynamic shared memory per block; 0 when tables are in global memory
  int grid = 0;
  int plane_grid = 0;     // blocks of the bit-plane kernel; 0 when it does not apply
};

// The bit-plane path as run against the CPU on an H100 (16 rows of X, up to 2 column tiles of S).
constexpr int kPlaneLevels = 16;
// It takes a warp a feature: worth it with this many features a multiprocessor or more; fewer
// features (of many samples) count faster with a block each.
constexpr int kPlaneFeaturesPerSM = 16;

// Planes per word for codes of `levels` levels: 8 or 16 (0: too many for planes).
inline int32_t plane_levels(int32_t levels) { return levels <= 8 ? 8 : levels <= kPlaneLevels ? 16 : 0; }

// S's codes as bytes (out: n_samples rounded up to 16, the padding 0xFF) for the atomic count loop.
void launch_narrow_codes(const uint32_t* s_codes, int32_t n_samples, uint8_t* out, cudaStream_t stream);

// S = feature lf of a resident block, built on the device: its codes by class-sorted position
// into s_codes (a sparse feature's base code where it stores nothing), as bytes into s_codes8
// unless null (see StepView), and n(s, y) into class_counts ([y * levels + s], zeroed here).
// entry_begin and n_entries: the feature's block-relative entry range (sparse features).
void launch_condition(const FeatureBlockView& block, int64_t lf, int64_t entry_begin, int64_t n_entries, uint16_t base,
                      int32_t levels, const int32_t* class_of, int32_t n_classes, int32_t n_samples, uint32_t* s_codes,
                      uint8_t* s_codes8, uint32_t* class_counts, cudaStream_t stream);

// Bit planes (`planes`, levels included) of n_rows rows of byte codes row_stride apart, and of
// S's codes (one row).
void launch_planes(const uint8_t* codes, int64_t row_stride, int64_t n_rows, const PlaneLayout& planes, uint32_t* out,
                   cudaStream_t stream);
void launch_planes(const uint32_t* codes, const PlaneLayout& planes, uint32_t* out, cudaStream_t stream);

CountLayout plan_counts(const FeatureBlockView& block, const StepView& step, int device);

// A second stream on which a sparse pass counts its small features (a warp each) beside the
// block-per-feature kernel of the large ones, which leaves most of the device idle while its
// few blocks with work wait on barriers; with the events that fork it from the pass's stream
// and join it back.
struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};

// The states of the block's features that are not retired, updated by step.rule.
void launch_score_pass(const FeatureBlockView& block, const StepView& step, const CountLayout& layout,
                                uint32_t* global_scratch, cudaStream_t stream, const SideStream& side = SideStream());

struct DeviceCandidate {
  Wide key;
  int64_t feature;  // device-relative; -1 when none
};

// The best candidate among n device features (highest key, lowest index), into *out.
void launch_best_candidate(const FeatureState* state, const uint8_t* retired, int64_t n, DeviceCandidate* partial,
                           int n_partial, DeviceCandidate* out, cudaStream_t stream);

constexpr int kBestPartials = 256;

}  // namespace fsgpu
