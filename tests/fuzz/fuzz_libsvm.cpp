// libFuzzer harness of parse_libsvm() and libsvm_to_columns(): any input must give either a
// well-formed result or a ParseError. The first byte picks the options (index base, and
// whether n_features is fixed); the rest is the file.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/text_formats.h"

using namespace fsgpu;

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

void check(const LibsvmData& d, int64_t fixed_width) {
  require(d.n_rows >= 0 && d.n_features >= 0 && (d.index_base == 0 || d.index_base == 1));
  require(fixed_width < 0 || d.n_features == fixed_width);
  require(d.row_start.size() == size_t(d.n_rows) + 1 && d.row_start[0] == 0);
  require(d.row_start.back() == int64_t(d.column.size()) && d.column.size() == d.value.size());
  require(d.labels.size() == size_t(d.n_rows) && d.line.size() == size_t(d.n_rows));
  require(d.qid.empty() || d.qid.size() == size_t(d.n_rows));
  for (int64_t r = 0; r < d.n_rows; ++r) {
    require(d.row_start[r] <= d.row_start[r + 1] && !d.labels[r].empty());
    require(r == 0 || d.line[r] > d.line[r - 1]);
    for (int64_t k = d.row_start[r]; k < d.row_start[r + 1]; ++k) {
      require(d.column[k] >= 0 && d.column[k] < d.n_features && d.value[k] != 0 && std::isfinite(d.value[k]));
      require(k == d.row_start[r] || d.column[k] > d.column[k - 1]);
    }
  }
  if (d.n_features > (1 << 20)) return;  // the column starts would be the fuzzer's memory limit, not a bug
  std::vector<int32_t> p(d.n_features + 1), i(d.column.size());
  std::vector<double> x(d.column.size());
  libsvm_to_columns(d, p.data(), i.data(), x.data());
  require(p[0] == 0 && p[d.n_features] == int32_t(d.column.size()));
  for (int64_t j = 0; j < d.n_features; ++j)
    for (int32_t k = p[j]; k < p[j + 1]; ++k) require(i[k] >= 0 && i[k] < d.n_rows && (k == p[j] || i[k] > i[k - 1]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  LibsvmOptions options;
  options.index_base = data[0] % 3 - 1;
  options.n_features = (data[0] / 3) % 2 ? (data[0] >> 3) * 7 : -1;
  try {
    check(parse_libsvm(reinterpret_cast<const char*>(data + 1), size - 1, options), options.n_features);
  } catch (const ParseError&) {
  }
  return 0;
}
