#include "text_formats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace fsgpu {

ParseError::ParseError(int64_t line_, int64_t column_, const std::string& what)
    : std::runtime_error("line " + std::to_string(line_) + ", column " + std::to_string(column_) + ": " + what),
      line(line_),
      column(column_) {}

namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();  // R's dimensions and dgCMatrix's p are int

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// [b, e) for a message: at most `limit` bytes, unprintable bytes as '?' (a fuzzer's megabyte
// of binary should not become the message).
std::string clipped(const char* b, const char* e, ptrdiff_t limit) {
  std::string s;
  for (const char* p = b; p < e && p < b + limit; ++p) s += (*p >= 0x20 && *p < 0x7f) ? *p : '?';
  if (e - b > limit) s += "...";
  return s;
}
std::string shown(const char* b, const char* e) { return "'" + clipped(b, e, 40) + "'"; }
std::string shown(const std::string& s) { return shown(s.data(), s.data() + s.size()); }

// Throws the error at byte `at` of the line that starts at `begin`.
[[noreturn]] void fail_at(int64_t line, const char* begin, const char* at, const std::string& what) {
  throw ParseError(line, at - begin + 1, what);
}

// Lines of a buffer: [begin, end) without the '\n', numbered from 1. Rejects NUL bytes, which
// no text format has and an R string cannot hold.
class LineReader {
 public:
  LineReader(const char* text, size_t size) : p_(text), end_(text + size) {}
  bool next(const char*& begin, const char*& end) {
    if (p_ >= end_) return false;
    begin = p_;
    const char* newline = static_cast<const char*>(std::memchr(p_, '\n', size_t(end_ - p_)));
    end = newline ? newline : end_;
    p_ = newline ? newline + 1 : end_;
    ++number_;
    if (const void* nul = std::memchr(begin, '\0', size_t(end - begin)))
      throw ParseError(number_, static_cast<const char*>(nul) - begin + 1, "a NUL byte: is this a binary file?");
    return true;
  }
  int64_t number() const { return number_; }

 private:
  const char* p_;
  const char* end_;
  int64_t number_ = 0;
};

// The whole of [b, e) as a finite double (one leading '+' allowed, as C's strtod, but no hex,
// inf or nan), independent of the locale.
bool parse_double(const char* b, const char* e, double& out) {
  if (b < e && *b == '+') {
    ++b;
    if (b < e && *b == '-') return false;
  }
  if (b == e) return false;
  const auto result = std::from_chars(b, e, out, std::chars_format::general);
  return result.ec == std::errc() && result.ptr == e && std::isfinite(out);
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

}  // namespace

bool parse_count(const char* b, const char* e, int64_t& out, bool& too_large) {
  too_large = false;
  if (b == e || !std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; })) return false;
  const auto result = std::from_chars(b, e, out);
  too_large = result.ec == std::errc::result_out_of_range;
  return result.ec == std::errc() || too_large;
}

// --------------------------------------------------------------------------------------------
// LibSVM

LibsvmData parse_libsvm(const char* text, size_t size, const LibsvmOptions& options) {
  if (options.index_base < -1 || options.index_base > 1)
    throw std::invalid_argument("index_base must be 0, 1 or -1 (detect)");
  if (options.n_features > kMaxIndex)
    throw std::invalid_argument("n_features must be at most 2^31 - 1");
  LibsvmData d;
  d.row_start.push_back(0);
  struct Entry {
    int64_t index;
    double value;
    int64_t column;  // of the token, for messages
  };
  std::vector<Entry> row;
  // Where the smallest and largest indices were seen, for the messages about them.
  int64_t min_index = kMaxIndex + 1, max_index = -1;
  int64_t min_line = 0, min_column = 0, max_line = 0, max_column = 0;
  bool any_qid = false;
  LineReader lines(text, size);
  const char *begin, *end;
  while (lines.next(begin, end)) {
    const int64_t line = lines.number();
    const char* hash = static_cast<const char*>(std::memchr(begin, '#', size_t(end - begin)));
    const char* stop = hash ? hash : end;
    const char* p = begin;
    auto next_token = [&](const char*& tb, const char*& te) {
      while (p < stop && is_space(*p)) ++p;
      tb = p;
      while (p < stop && !is_space(*p)) ++p;
      te = p;
      return tb < te;
    };
    const char *tb, *te;
    if (!next_token(tb, te)) continue;  // blank or comment line
    if (std::memchr(tb, ':', size_t(te - tb)))
      fail_at(line, begin, tb, shown(tb, te) + " where the label should be: every line starts with its label");
    if (std::memchr(tb, ',', size_t(te - tb)))
      fail_at(line, begin, tb, "multi-label data (label " + shown(tb, te) + ") are not supported: one class per sample");
    d.labels.emplace_back(tb, te);
    d.line.push_back(line);
    int64_t qid = kNoQid;
    row.clear();
    while (next_token(tb, te)) {
      const char* colon = static_cast<const char*>(std::memchr(tb, ':', size_t(te - tb)));
      if (!colon) fail_at(line, begin, tb, "expected <index>:<value>, got " + shown(tb, te));
      if (colon - tb == 3 && std::memcmp(tb, "qid", 3) == 0) {
        if (qid != kNoQid) fail_at(line, begin, tb, "a second qid on one line");
        const auto result = std::from_chars(colon + 1, te, qid);
        if (result.ec != std::errc() || result.ptr != te || qid == kNoQid)
          fail_at(line, begin, colon + 1, "qid " + shown(colon + 1, te) + " is not a whole number");
        any_qid = true;
        continue;
      }
      int64_t index;
      bool too_large;
      if (!parse_count(tb, colon, index, too_large))
        fail_at(line, begin, tb, "feature index " + shown(tb, colon) + " is not a non-negative whole number");
      if (too_large || index > kMaxIndex) fail_at(line, begin, tb, "feature index " + shown(tb, colon) + " is too large (at most 2^31 - 1)");
      double value;
      if (!parse_double(colon + 1, te, value))
        fail_at(line, begin, colon + 1, "the value " + shown(colon + 1, te) + " of feature " + std::to_string(index) +
                            " is not a finite number");
      row.push_back({index, value, tb - begin + 1});
      if (index < min_index) min_index = index, min_line = line, min_column = tb - begin + 1;
      if (index > max_index) max_index = index, max_line = line, max_column = tb - begin + 1;
    }
    // Stable: of two equal indices the later one is reported.
    auto by_index = [](const Entry& a, const Entry& b) { return a.index < b.index; };
    if (!std::is_sorted(row.begin(), row.end(), by_index)) std::stable_sort(row.begin(), row.end(), by_index);
    for (size_t k = 1; k < row.size(); ++k)
      if (row[k].index == row[k - 1].index)
        throw ParseError(line, row[k].column, "feature " + std::to_string(row[k].index) + " appears twice on this line");
    for (const Entry& e : row) {
      if (e.value == 0) continue;
      if (d.column.size() >= size_t(kMaxIndex))
        throw ParseError(line, e.column, "more than 2^31 - 1 non-zero values: too many for a sparse matrix in R");
      d.column.push_back(static_cast<int32_t>(e.index));
      d.value.push_back(e.value);
    }
    d.qid.push_back(qid);
    d.row_start.push_back(static_cast<int64_t>(d.column.size()));
    if (++d.n_rows > kMaxIndex) throw ParseError(line, 1, "more than 2^31 - 1 samples");
  }
  if (!any_qid) d.qid.clear();

  d.index_base = options.index_base >= 0 ? options.index_base : (min_index == 0 ? 0 : 1);
  if (d.index_base == 1 && min_index == 0)
    throw ParseError(min_line, min_column, "feature index 0 in a file read with 1-based indices");
  d.n_features = max_index < 0 ? 0 : max_index - d.index_base + 1;
  if (d.n_features > kMaxIndex)
    throw ParseError(max_line, max_column, "feature index " + std::to_string(max_index) + " makes more than 2^31 - 1 features");
  if (options.n_features >= 0) {
    if (d.n_features > options.n_features)
      throw ParseError(max_line, max_column,
                       "feature index " + std::to_string(max_index) + " is beyond n_features = " +
                           std::to_string(options.n_features) + " (" + std::to_string(d.index_base) +
                           "-based indices)");
    d.n_features = options.n_features;
  }
  if (d.index_base == 1)
    for (int32_t& c : d.column) --c;
  return d;
}

void libsvm_to_columns(const LibsvmData& d, int32_t* col_start, int32_t* row, double* value) {
  std::fill(col_start, col_start + d.n_features + 1, 0);
  for (int32_t c : d.column) ++col_start[c + 1];
  for (int64_t j = 0; j < d.n_features; ++j) col_start[j + 1] += col_start[j];
  std::vector<int32_t> next(col_start, col_start + d.n_features);
  for (int64_t r = 0; r < d.n_rows; ++r)
    for (int64_t k = d.row_start[r]; k < d.row_start[r + 1]; ++k) {
      const int32_t at = next[d.column[k]]++;
      row[at] = static_cast<int32_t>(r);
      value[at] = d.value[k];
    }
}

// --------------------------------------------------------------------------------------------
// ARFF

const char* arff_type_name(ArffType type) {
  switch (type) {
    case ArffType::numeric: return "numeric";
    case ArffType::integer: return "integer";
    case ArffType::nominal: return "nominal";
    case ArffType::string: return "string";
    case ArffType::date: return "date";
  }
  return "unknown";
}

namespace {

// A position in one line of an ARFF file and the lexical rules of the format.
class ArffCursor {
 public:
  ArffCursor(const char* begin, const char* end, int64_t line) : begin_(begin), p_(begin), end_(end), line_(line) {}

  [[noreturn]] void fail(const char* at, const std::string& what) const {
    throw ParseError(line_, at - begin_ + 1, what);
  }
  // Fails at the word that starts here: "unexpected '<word>' <context>".
  [[noreturn]] void fail_unexpected(const std::string& context) {
    const char* at = p_;
    fail(at, "unexpected " + shown(word("")) + " " + context);
  }
  const char* position() const { return p_; }
  char peek() const { return *p_; }
  void advance() { ++p_; }

  // Skips spaces and a comment; true when nothing is left on the line.
  bool at_end() {
    while (p_ < end_ && is_space(*p_)) ++p_;
    if (p_ < end_ && *p_ == '%') p_ = end_;
    return p_ == end_;
  }

  // An unquoted run up to a space, a comment or one of `stops`.
  std::string word(const char* stops) {
    const char* b = p_;
    while (p_ < end_ && !is_space(*p_) && *p_ != '%' && !std::strchr(stops, *p_)) ++p_;
    return std::string(b, p_);
  }

  // A name or value: quoted with ' or " (backslash escapes \n \t \r, any other escaped byte
  // stands for itself), or unquoted up to one of `stops`, a comment or the line's end, without
  // surrounding spaces (when `spaces_end` is false, inner spaces belong to it).
  struct Token {
    std::string text;
    bool quoted;
    const char* at;
  };
  Token token(const char* stops, bool spaces_end) {
    at_end();
    Token t{std::string(), false, p_};
    if (p_ < end_ && (*p_ == '\'' || *p_ == '"')) {
      const char quote = *p_++;
      t.quoted = true;
      for (;;) {
        if (p_ == end_) fail(t.at, "a quote that is not closed on its line");
        const char c = *p_++;
        if (c == quote) break;
        if (c == '\\' && p_ < end_) {
          const char e = *p_++;
          t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        } else {
          t.text += c;
        }
      }
      return t;
    }
    if (spaces_end) {
      t.text = word(stops);
      return t;
    }
    const char* b = p_;
    while (p_ < end_ && *p_ != '%' && !std::strchr(stops, *p_)) ++p_;
    const char* e = p_;
    while (e > b && is_space(e[-1])) --e;
    t.text.assign(b, e);
    return t;
  }

 private:
  const char* begin_;
  const char* p_;
  const char* end_;
  int64_t line_;
};

class ArffParser {
 public:
  ArffData parse(const char* text, size_t size) {
    LineReader lines(text, size);
    const char *begin, *end;
    bool in_data = false;
    while (lines.next(begin, end)) {
      ArffCursor c(begin, end, lines.number());
      if (c.at_end()) continue;
      if (!in_data) {
        in_data = header_line(c);
      } else {
        if (c.peek() == '@') c.fail_unexpected("after @data");
        data_line(c);
      }
    }
    if (!in_data) throw ParseError(std::max<int64_t>(lines.number(), 1), 1, "no @data line: is this an ARFF file?");
    return std::move(data_);
  }

 private:
  ArffData data_;
  bool has_relation_ = false;
  std::unordered_set<std::string> names_;
  std::vector<std::unordered_map<std::string, int32_t>> level_index_;  // per column (nominal)
  std::vector<int64_t> seen_;  // sparse rows: the row in which each attribute was last given

  // Returns true at @data.
  bool header_line(ArffCursor& c) {
    const char* at = c.position();
    if (c.peek() != '@') {
      const std::string got = c.word("");
      c.fail(at, "expected @relation, @attribute or @data, got " + shown(got));
    }
    const std::string keyword = lower(c.word(""));
    if (keyword == "@relation") {
      if (has_relation_) c.fail(at, "a second @relation");
      has_relation_ = true;
      data_.relation = c.token("", true).text;
      if (!c.at_end()) c.fail_unexpected("after the relation's name");
    } else if (keyword == "@attribute") {
      attribute(c);
    } else if (keyword == "@data") {
      if (data_.columns.empty()) c.fail(at, "@data before any @attribute");
      if (!c.at_end()) c.fail_unexpected("after @data");
      seen_.assign(data_.columns.size(), -1);
      return true;
    } else if (keyword == "@end") {
      c.fail(at, "relational attributes (@end) are not supported");
    } else {
      c.fail(at, "unknown keyword " + shown(keyword) + " (expected @relation, @attribute or @data)");
    }
    return false;
  }

  void attribute(ArffCursor& c) {
    ArffColumn col;
    const ArffCursor::Token name = c.token("{},", true);
    if (name.text.empty() && !name.quoted) c.fail(name.at, "expected the attribute's name");
    if (!names_.insert(name.text).second) c.fail(name.at, "a second attribute named " + shown(name.text));
    col.name = name.text;
    std::unordered_map<std::string, int32_t> levels;
    if (c.at_end()) c.fail(c.position(), "attribute " + shown(col.name) + " has no type");
    if (c.peek() == '{') {
      col.type = ArffType::nominal;
      const char* open = c.position();
      c.advance();
      for (;;) {
        const ArffCursor::Token level = c.token(",}", false);
        if (level.text.empty() && !level.quoted) {
          if (col.levels.empty() && !c.at_end() && c.peek() == '}')
            c.fail(open, "nominal attribute " + shown(col.name) + " has no levels");
          c.fail(level.at, "an empty level (quote it: '')");
        }
        if (col.levels.size() >= size_t(kMaxIndex) - 1) c.fail(level.at, "too many levels");
        if (!levels.emplace(level.text, int32_t(col.levels.size())).second)
          c.fail(level.at, "the level " + shown(level.text) + " appears twice");
        col.levels.push_back(level.text);
        if (c.at_end()) c.fail(open, "a '{' that is not closed on its line");
        const char sep = c.peek();
        c.advance();
        if (sep == '}') break;
        if (sep != ',') c.fail(c.position() - 1, "expected ',' or '}' between levels");
      }
    } else {
      const char* at = c.position();
      const std::string type = lower(c.word("{},"));
      if (type == "numeric" || type == "real") {
        col.type = ArffType::numeric;
      } else if (type == "integer") {
        col.type = ArffType::integer;
      } else if (type == "string") {
        col.type = ArffType::string;
      } else if (type == "date") {
        col.type = ArffType::date;
        if (!c.at_end()) col.date_format = c.token("", true).text;
      } else if (type == "relational") {
        c.fail(at, "relational attributes are not supported");
      } else {
        c.fail(at, "unknown type " + shown(type) + " of attribute " + shown(col.name) +
                       " (numeric, real, integer, {levels}, string or date)");
      }
    }
    if (!c.at_end()) c.fail_unexpected("after the type of " + shown(col.name));
    data_.columns.push_back(std::move(col));
    level_index_.push_back(std::move(levels));
  }

  // Every column gets a row of its default (0, the first level, ""), then the values given.
  void data_line(ArffCursor& c) {
    if (data_.n_rows >= kMaxIndex) c.fail(c.position(), "more than 2^31 - 1 instances");
    for (ArffColumn& col : data_.columns) {
      col.missing.push_back(0);
      switch (col.type) {
        case ArffType::numeric: col.numbers.push_back(0); break;
        case ArffType::integer:
        case ArffType::nominal: col.codes.push_back(0); break;
        case ArffType::string:
        case ArffType::date: col.strings.emplace_back(); break;
      }
    }
    const int64_t n_columns = static_cast<int64_t>(data_.columns.size());
    if (c.peek() == '{') {
      const char* open = c.position();
      c.advance();
      if (c.at_end()) c.fail(open, "a '{' that is not closed on its line");
      if (c.peek() == '}') {
        c.advance();
      } else {
        for (;;) {
          c.at_end();
          const char* at = c.position();
          int64_t index;
          bool too_large;
          const std::string digits = c.word(",}");
          if (!parse_count(digits.data(), digits.data() + digits.size(), index, too_large))
            c.fail(at, "expected an attribute index (0-based), got " + shown(digits));
          if (too_large || index >= n_columns)
            c.fail(at, "attribute index " + digits + " is out of range (0 to " + std::to_string(n_columns - 1) + ")");
          if (seen_[index] == data_.n_rows) c.fail(at, "attribute index " + digits + " appears twice");
          seen_[index] = data_.n_rows;
          if (c.at_end() || c.peek() == ',' || c.peek() == '}')
            c.fail(c.position(), "attribute index " + digits + " has no value");
          store(c, index, c.token(",}", false));
          if (c.at_end()) c.fail(open, "a '{' that is not closed on its line");
          const char sep = c.peek();
          c.advance();
          if (sep == '}') break;
          if (sep != ',') c.fail(c.position() - 1, "expected ',' or '}' after a value");
        }
      }
    } else {
      for (int64_t j = 0; j < n_columns; ++j) {
        if (j > 0) {
          if (c.at_end())
            c.fail(c.position(), std::to_string(j) + " values for " + std::to_string(n_columns) + " attributes");
          if (c.peek() != ',') c.fail(c.position(), "expected ',' after a value");
          c.advance();
        }
        store(c, j, c.token(",", false));
      }
    }
    if (!c.at_end()) {
      const char* at = c.position();
      if (c.peek() == ',') {
        c.advance();
        if (!c.at_end() && c.peek() == '{') c.fail(c.position(), "instance weights ({w} after the values) are not supported");
      }
      c.fail(at, "more values than the " + std::to_string(n_columns) + " attributes");
    }
    ++data_.n_rows;
  }

  void store(ArffCursor& c, int64_t j, const ArffCursor::Token& value) {
    ArffColumn& col = data_.columns[j];
    const int64_t r = data_.n_rows;
    if (!value.quoted && value.text.empty()) c.fail(value.at, "an empty value (a missing value is ?)");
    if (!value.quoted && value.text == "?") {
      col.missing[r] = 1;
      return;
    }
    const char* b = value.text.data();
    const char* e = b + value.text.size();
    double number;
    switch (col.type) {
      case ArffType::numeric:
        if (!parse_double(b, e, number))
          c.fail(value.at, shown(value.text) + " is not a number (attribute " + shown(col.name) +
                               " is numeric; a missing value is ?)");
        col.numbers[r] = number;
        break;
      case ArffType::integer:
        if (!parse_double(b, e, number) || number != std::floor(number) ||
            number <= std::numeric_limits<int32_t>::min() || number > std::numeric_limits<int32_t>::max())
          c.fail(value.at, shown(value.text) + " is not an integer within +-(2^31 - 1) (attribute " +
                               shown(col.name) + ")");
        col.codes[r] = static_cast<int32_t>(number);
        break;
      case ArffType::nominal: {
        const auto found = level_index_[j].find(value.text);
        if (found == level_index_[j].end()) {
          std::string levels;
          for (size_t k = 0; k < col.levels.size() && k < 5; ++k) levels += (k ? ", " : "") + col.levels[k];
          if (col.levels.size() > 5) levels += ", ...";
          c.fail(value.at, shown(value.text) + " is not a level of attribute " + shown(col.name) + " {" +
                               clipped(levels.data(), levels.data() + levels.size(), 60) + "}");
        }
        col.codes[r] = found->second;
        break;
      }
      case ArffType::string:
      case ArffType::date: col.strings[r] = value.text; break;
    }
  }
};

}  // namespace

ArffData parse_arff(const char* text, size_t size) { return ArffParser().parse(text, size); }

}  // namespace fsgpu
