// The data model every engine reads: samples grouped by class, features as compact codes.
//
// Samples are reordered once so that each class occupies a contiguous range ("class-sorted
// positions"); counting then runs class by class over small (x, s) tables instead of one
// (x, s, y) table. Counts do not depend on sample order, so results are unaffected.
//
// Each feature f has codes in [0, levels[f]) and may have a base code base[f] whose entries are
// never counted but derived: n(base, s, y) = n(s, y) - sum over the other codes. For sparse
// features the base is the code of zero, so only stored entries are visited; a dense feature
// has its most frequent code as base when that code is common enough to be worth skipping,
// and kNoBase otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "row_vector.h"

namespace fsgpu {

struct ClassLayout {
  int32_t n_samples = 0;
  int32_t n_classes = 0;
  std::vector<int32_t> class_start;  // n_classes + 1 offsets into class-sorted positions
  std::vector<int32_t> position;     // position[sample] = its class-sorted position
  std::vector<int32_t> class_of;     // class_of[position] = class label

  // Labels are 0..n_classes-1; every class must occur (the R layer drops empty levels).
  static ClassLayout from_labels(const int32_t* labels, int32_t n_samples, int32_t n_classes);
  // No class: every sample in one (unsupervised jobs such as I(Xi;Xj)).
  static ClassLayout one_class(int32_t n_samples);
};

struct CodeMatrix {
  int32_t n_samples = 0;
  int64_t n_features = 0;
  bool sparse = false;
  bool wide = false;               // codes are uint16_t rather than uint8_t
  std::vector<uint16_t> levels;    // per feature
  std::vector<uint16_t> base;      // per feature: the derived code (see above)
  // Dense: codes of feature f at [f * n_samples, (f + 1) * n_samples), by class-sorted position.
  // Sparse: entries entry_start[f] .. entry_start[f + 1], rows ascending (class-sorted positions).
  std::vector<int64_t> entry_start;
  std::vector<int32_t> entry_row;
  // Left uninitialised when sized: the encoders' threads write every code.
  RowVector<uint8_t> codes8;
  RowVector<uint16_t> codes16;

  int64_t n_entries() const { return sparse ? entry_start.back() : int64_t(n_samples) * n_features; }
  int64_t entries_begin(int64_t f) const { return sparse ? entry_start[f] : f * n_samples; }
  int64_t entries_end(int64_t f) const { return sparse ? entry_start[f + 1] : (f + 1) * n_samples; }
  uint16_t code(int64_t entry) const { return wide ? codes16[entry] : codes8[entry]; }
  int32_t row(int64_t f, int64_t entry) const {
    return sparse ? entry_row[entry] : static_cast<int32_t>(entry - f * n_samples);
  }
  uint16_t max_levels() const;
  size_t code_bytes() const { return wide ? 2 : 1; }
};

// One column of a dense input as the R layer hands it over: numeric columns are binned into
// equal-width bins; whole-number columns (integer, logical, factor codes) are categories, each
// distinct value a level, or binned exactly as the same values stored as doubles would be.
struct ColumnSource {
  const double* numeric = nullptr;
  const int32_t* categorical = nullptr;  // INT32_MIN (R's NA_integer_) is missing
  // categorical only: binned when the column has more distinct values than this; -1 never
  // (a category), 0 always. Issue 21's rule for integer columns passes its level limit. The R
  // glue also uses -2 for double columns taken as categories (input_codes.cpp, kDoubleCategory).
  int64_t bin_above = -1;
};

// What encode_dense() and encode_sparse() found, for a caller that reports bad values itself
// (naming features and samples) rather than take the first as an exception.
struct EncodeReport {
  std::vector<int32_t> bad_row;  // per feature: the first sample holding NA, NaN or +-Inf; -1 for none
  std::vector<uint8_t> binned;   // per feature: a categorical column that was binned
  bool any_bad() const;
};

// Equal-width binning (CUDA-JMI): [lo, hi] cut into nbins equal segments; hi to the last one.
struct EqualWidthBins {
  double lo = 0, hi = 0;
  int nbins = 1;
  uint16_t operator()(double v) const {
    if (!(hi > lo) || v <= lo) return 0;
    double b = (v - lo) / (hi - lo) * nbins;
    return b >= nbins - 1 ? static_cast<uint16_t>(nbins - 1) : static_cast<uint16_t>(b);
  }
};

constexpr int kMaxLevels = 65535;
constexpr uint16_t kNoBase = 0xFFFF;  // no code reaches it: levels are at most 65535
// A dense feature's most frequent code becomes its base when it holds this share of samples.
constexpr int kBaseShareDenominator = 8;

// One pass over each column (read in place, columns on `threads` threads), codes written at
// class-sorted positions. A missing or infinite value throws, naming the feature; with a
// report, every feature's first one is recorded instead and, if there is any, the matrix
// returned has no features.
// on_coded, when set, is called by the worker (worker < threads) that has just written features
// [first, last) of `codes` as bytes (n_samples a feature): final unless the matrix returned is
// wide or sparse. The GPU selection uploads them then (CodeUpload in gpu_backend.h).
using CodedHook = std::function<void(const uint8_t* codes, int64_t first, int64_t last, int worker)>;
CodeMatrix encode_dense(const std::vector<ColumnSource>& columns, const ClassLayout& layout,
                        int nbins, int threads, EncodeReport* report = nullptr, const CodedHook& on_coded = nullptr);

// encode_dense()'s two choices, for code that joins encoded pieces into what encoding them at
// once gives (Pieces::join() in src/input_codes.cpp): a dense feature's base, its mode when
// that holds at least 1/kBaseShareDenominator of the samples (else kNoBase), and whether a
// matrix whose features' non-mode codes number `entries` in all is kept sparse (it then takes
// less than half the dense codes' bytes).
uint16_t dense_base(uint16_t mode, int64_t mode_count, int32_t n_samples);
bool sparse_is_smaller(int64_t entries, int64_t n_samples, int64_t n_features, int code_bytes);

// Compressed sparse columns as in Matrix::dgCMatrix: 0-based rows i, column pointers p.
CodeMatrix encode_sparse(const int32_t* i, const int32_t* p, const double* x, int64_t n_features,
                         const ClassLayout& layout, int nbins, int threads, EncodeReport* report = nullptr);

}  // namespace fsgpu
