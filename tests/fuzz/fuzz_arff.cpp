// libFuzzer harness of parse_arff(): any input must give either a well-formed result or a
// ParseError.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "core/text_formats.h"

using namespace fsgpu;

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

void check(const ArffData& d) {
  require(!d.columns.empty() && d.n_rows >= 0);
  const size_t n = size_t(d.n_rows);
  for (const ArffColumn& col : d.columns) {
    require(col.missing.size() == n);
    switch (col.type) {
      case ArffType::numeric:
        require(col.numbers.size() == n && col.codes.empty() && col.strings.empty());
        for (double v : col.numbers) require(std::isfinite(v));
        break;
      case ArffType::integer:
        require(col.codes.size() == n && col.numbers.empty() && col.strings.empty());
        for (int32_t v : col.codes) require(v != INT32_MIN);
        break;
      case ArffType::nominal:
        require(col.codes.size() == n && !col.levels.empty());
        for (int32_t v : col.codes) require(v >= 0 && size_t(v) < col.levels.size());
        break;
      case ArffType::string:
      case ArffType::date:
        require(col.strings.size() == n && col.numbers.empty() && col.codes.empty());
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    check(parse_arff(reinterpret_cast<const char*>(data), size));
  } catch (const ParseError&) {
  }
  return 0;
}
