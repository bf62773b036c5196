// Parsers of the field's text formats: LibSVM/SVMlight and Weka ARFF. They work on a byte
// buffer: the R glue reads (and transparently decompresses) the file, the fuzzers in tests/fuzz
// feed arbitrary bytes. Every malformed input throws ParseError, whose message starts with the
// line and column (1-based, in bytes) of the problem; nothing else is thrown but std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fsgpu {

class ParseError : public std::runtime_error {
 public:
  // The message is "line L, column C: what".
  ParseError(int64_t line, int64_t column, const std::string& what);
  int64_t line, column;
};

// The whole of [b, e) as a non-negative integer of digits only; false if it is not one.
// too_large is set when it is one but does not fit an int64.
bool parse_count(const char* b, const char* e, int64_t& out, bool& too_large);

// ---------------------------------------------------------------------------------------------
// LibSVM / SVMlight: one sample per line,
//   <label> [qid:<integer>] <index>:<value> <index>:<value> ... [# comment]
// Blank and comment-only lines are no samples. Fields are separated by spaces or tabs; a CR
// (CRLF line ends) counts as a space. Indices may come in any order within a line, but an index
// repeated on a line is an error. Values of 0 are not stored. Labels are kept as text (the
// caller decides whether they are numbers or class names); a label holding a comma (multi-label
// data, "1,3") is an error.

struct LibsvmOptions {
  int index_base = -1;      // 0 or 1; -1: 0 when some index is 0, else 1 (as scikit-learn's "auto")
  int64_t n_features = -1;  // the width (train and test files alike); -1: the largest index seen
};

constexpr int64_t kNoQid = INT64_MIN;  // qid of a line without one

// Samples in rows, compressed: row r's entries are column[row_start[r] .. row_start[r + 1]),
// columns 0-based and ascending, values non-zero.
struct LibsvmData {
  int64_t n_rows = 0;
  int64_t n_features = 0;
  int index_base = 1;               // the base the indices were read with
  std::vector<int64_t> row_start;   // n_rows + 1
  std::vector<int32_t> column;
  std::vector<double> value;
  std::vector<std::string> labels;  // n_rows, as written
  std::vector<int64_t> line;        // n_rows: the line each sample came from
  std::vector<int64_t> qid;         // n_rows (kNoQid where absent), or empty when no line has one
};

LibsvmData parse_libsvm(const char* text, size_t size, const LibsvmOptions& options);

// The samples as a compressed-column matrix (R's dgCMatrix p, i and x) in caller-owned buffers:
// col_start holds n_features + 1 entries, row and value one per stored value. Rows ascend within
// each column. Needs O(n_features) memory, which parse_libsvm does not: a huge index in a tiny
// file is the caller's allocation to refuse.
void libsvm_to_columns(const LibsvmData& data, int32_t* col_start, int32_t* row, double* value);

// ---------------------------------------------------------------------------------------------
// Weka ARFF: a header of @relation, @attribute <name> <type> and @data, then one instance per
// line, dense ("1.5, red, 'a b', ?") or sparse ("{0 1.5, 3 red}", 0-based attribute indices;
// attributes left out are 0, a nominal's first level, or an empty string). Keywords and type
// names are case-insensitive; names and values may be quoted with ' or " (backslash escapes);
// % starts a comment outside quotes; ? is a missing value. Types: numeric and real (doubles),
// integer (whole numbers within int32, INT32_MIN excluded), nominal {a, b, ...} (codes into the
// declared levels), string, and date [format] (kept as text). Relational attributes and
// instance weights are errors.

enum class ArffType { numeric, integer, nominal, string, date };

struct ArffColumn {
  std::string name;
  ArffType type = ArffType::numeric;
  std::vector<std::string> levels;   // nominal: as declared, in order
  std::string date_format;           // date: as declared, possibly empty
  std::vector<uint8_t> missing;      // n_rows: 1 where the value is ?; the value below is then 0 or ""
  std::vector<double> numbers;       // numeric
  std::vector<int32_t> codes;        // integer: the values; nominal: 0-based level
  std::vector<std::string> strings;  // string and date
};

struct ArffData {
  std::string relation;
  int64_t n_rows = 0;
  std::vector<ArffColumn> columns;
};

ArffData parse_arff(const char* text, size_t size);

const char* arff_type_name(ArffType type);

}  // namespace fsgpu
