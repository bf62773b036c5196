// The LibSVM and ARFF parsers: what well-formed files give, and that every malformed one is a
// ParseError at the right line and column (among them inputs the fuzzers in tests/fuzz found).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "core/text_formats.h"

using namespace fsgpu;

namespace {

LibsvmData libsvm(const std::string& text, int base = -1, int64_t n_features = -1) {
  LibsvmOptions options;
  options.index_base = base;
  options.n_features = n_features;
  return parse_libsvm(text.data(), text.size(), options);
}

ArffData arff(const std::string& text) { return parse_arff(text.data(), text.size()); }

// Runs parse and checks that it throws a ParseError at (line, column) whose message holds `words`.
template <class Parse>
void expect_error(const char* what, Parse parse, int64_t line, int64_t column, const char* words) {
  try {
    parse();
    EXPECT(false, "%s: no error", what);
  } catch (const ParseError& e) {
    EXPECT(e.line == line && e.column == column && std::strstr(e.what(), words) != nullptr,
           "%s: got '%s', expected line %lld, column %lld, '%s'", what, e.what(), (long long)line,
           (long long)column, words);
  } catch (const std::exception& e) {
    EXPECT(false, "%s: not a ParseError: %s", what, e.what());
  }
}

void libsvm_error(const char* what, const std::string& text, int64_t line, int64_t column, const char* words,
                  int base = -1, int64_t n_features = -1) {
  expect_error(what, [&] { libsvm(text, base, n_features); }, line, column, words);
}

void arff_error(const char* what, const std::string& text, int64_t line, int64_t column, const char* words) {
  expect_error(what, [&] { arff(text); }, line, column, words);
}

void libsvm_tests() {
  // Comments, blank lines, CRLF, tabs, trailing spaces, unsorted indices, an explicit zero.
  const LibsvmData d = libsvm(
      "# header comment\n"
      "+1 3:2.5 1:-1e-3   \r\n"
      "\n"
      "   \t\n"
      "-1\t2:4 5:0 # the zero counts for the width\r\n"
      "spam 4:+7\n"
      "-1");
  EXPECT(d.n_rows == 4 && d.n_features == 5 && d.index_base == 1, "libsvm shape %lld x %lld, base %d",
         (long long)d.n_rows, (long long)d.n_features, d.index_base);
  EXPECT((d.labels == std::vector<std::string>{"+1", "-1", "spam", "-1"}), "libsvm labels");
  EXPECT((d.line == std::vector<int64_t>{2, 5, 6, 7}), "libsvm lines");
  EXPECT((d.row_start == std::vector<int64_t>{0, 2, 3, 4, 4}), "libsvm row starts");
  EXPECT((d.column == std::vector<int32_t>{0, 2, 1, 3}), "libsvm columns (sorted, 0-based)");
  EXPECT((d.value == std::vector<double>{-1e-3, 2.5, 4, 7}), "libsvm values");
  EXPECT(d.qid.empty(), "libsvm: no qid");

  // The same as columns (dgCMatrix's p, i, x).
  std::vector<int32_t> p(d.n_features + 1), i(d.column.size());
  std::vector<double> x(d.column.size());
  libsvm_to_columns(d, p.data(), i.data(), x.data());
  EXPECT((p == std::vector<int32_t>{0, 1, 2, 3, 4, 4}), "libsvm column starts");
  EXPECT((i == std::vector<int32_t>{0, 1, 0, 2}), "libsvm column rows");
  EXPECT((x == std::vector<double>{-1e-3, 4, 2.5, 7}), "libsvm column values");

  // Index base: detected, or given; n_features widens.
  EXPECT(libsvm("1 0:1 3:2\n").index_base == 0 && libsvm("1 0:1 3:2\n").n_features == 4, "libsvm 0-based detected");
  EXPECT(libsvm("1 1:1 3:2\n", 0).n_features == 4 && libsvm("1 1:1 3:2\n", 0).column[0] == 1, "libsvm 0-based given");
  EXPECT(libsvm("1 1:1 3:2\n", 1, 10).n_features == 10, "libsvm n_features widens");
  EXPECT(libsvm("1 1:1\n", -1, 1).n_features == 1, "libsvm n_features exact");
  EXPECT(libsvm("").n_rows == 0 && libsvm("# only\n\n").n_rows == 0, "libsvm: no samples");
  EXPECT(libsvm("1\n2\n").n_features == 0 && libsvm("1\n2\n").n_rows == 2, "libsvm: labels only");

  // qid on some lines.
  const LibsvmData q = libsvm("3 qid:7 1:1\n1 2:1\n2 qid:-2 1:2\n");
  EXPECT((q.qid == std::vector<int64_t>{7, kNoQid, -2}), "libsvm qid");

  libsvm_error("index 0 read as 1-based", "1 1:1\n2 2:1 0:3\n", 2, 7, "index 0", 1);
  libsvm_error("duplicate index", "1 1:1\n1 4:1 2:1 4:2\n", 2, 11, "feature 4 appears twice");
  libsvm_error("multi-label", "1,3 1:1\n", 1, 1, "multi-label");
  libsvm_error("no label", "1:1 2:2\n", 1, 1, "where the label should be");
  libsvm_error("not index:value", "1 1:1 abc\n", 1, 7, "expected <index>:<value>");
  libsvm_error("index not a number", "1 x:1\n", 1, 3, "not a non-negative whole number");
  libsvm_error("negative index", "1 -2:1\n", 1, 3, "not a non-negative whole number");
  libsvm_error("signed index", "1 +2:1\n", 1, 3, "not a non-negative whole number");
  libsvm_error("value not a number", "1 2:abc\n", 1, 5, "not a finite number");
  libsvm_error("empty value", "1 2:\n", 1, 5, "not a finite number");
  libsvm_error("inf value", "1 2:inf\n", 1, 5, "not a finite number");
  libsvm_error("nan value", "1 2:nan\n", 1, 5, "not a finite number");
  libsvm_error("hex value", "1 2:0x10\n", 1, 5, "not a finite number");
  libsvm_error("overflowing value", "1 2:1e999\n", 1, 5, "not a finite number");
  libsvm_error("two signs", "1 2:+-1\n", 1, 5, "not a finite number");
  libsvm_error("huge index", "1 2147483648:1\n", 1, 3, "too large");
  libsvm_error("huge 0-based width", "1 0:1 2147483647:1\n", 1, 7, "more than 2^31 - 1 features");
  libsvm_error("beyond n_features", "1 1:1\n1 3:1 9:1\n", 2, 7, "beyond n_features = 5", -1, 5);
  libsvm_error("second qid", "1 qid:1 qid:2 1:1\n", 1, 9, "a second qid");
  libsvm_error("bad qid", "1 qid:x 1:1\n", 1, 7, "not a whole number");
  libsvm_error("NUL byte", std::string("1 1:1\n1 2", 9) + std::string(1, '\0') + ":1\n", 2, 4, "NUL byte");
}

void arff_tests() {
  const ArffData d = arff(
      "% Weather data, with every type\n"
      "@RELATION 'the weather'\n"
      "\n"
      "@attribute outlook {sunny, 'over cast', rainy}  % nominal\n"
      "@Attribute \"temp (F)\" REAL\n"
      "@attribute humidity numeric\n"
      "@attribute count integer\n"
      "@attribute note string\n"
      "@attribute when date \"yyyy-MM-dd\"\n"
      "@attribute play {yes,no}\n"
      "@DATA\r\n"
      "sunny, 85, 85.5, 3, 'it\\'s hot', 2024-06-01, no\r\n"
      "'over cast',?,  -1e2 ,?, plain words, ?, yes   % a comment\n"
      "% a comment line\n"
      "{0 rainy, 3 -7, 6 yes}\n"
      "{}\n");
  EXPECT(d.relation == "the weather" && d.n_rows == 4 && d.columns.size() == 7, "arff shape %lld x %zu",
         (long long)d.n_rows, d.columns.size());
  const ArffColumn &outlook = d.columns[0], &temp = d.columns[1], &humidity = d.columns[2], &count = d.columns[3],
                   &note = d.columns[4], &when = d.columns[5], &play = d.columns[6];
  EXPECT(temp.name == "temp (F)" && temp.type == ArffType::numeric, "arff quoted name, REAL");
  EXPECT((outlook.levels == std::vector<std::string>{"sunny", "over cast", "rainy"}), "arff levels");
  EXPECT((outlook.codes == std::vector<int32_t>{0, 1, 2, 0}), "arff nominal codes (sparse default: level 0)");
  EXPECT((temp.numbers[0] == 85 && temp.missing == std::vector<uint8_t>{0, 1, 0, 0} && temp.numbers[2] == 0),
         "arff numeric with ? and sparse 0");
  EXPECT(humidity.numbers[1] == -100, "arff spaces around a number");
  EXPECT(count.type == ArffType::integer && (count.codes == std::vector<int32_t>{3, 0, -7, 0}) && count.missing[1],
         "arff integer");
  EXPECT((note.strings == std::vector<std::string>{"it's hot", "plain words", "", ""}), "arff strings");
  EXPECT(when.type == ArffType::date && when.date_format == "yyyy-MM-dd" && when.strings[0] == "2024-06-01" &&
             when.missing[1],
         "arff date");
  EXPECT((play.codes == std::vector<int32_t>{1, 0, 0, 0}), "arff class");
  // A quoted ? is a value, not a missing one.
  EXPECT(arff("@attribute s string\n@data\n'?'\n").columns[0].strings[0] == "?", "arff quoted ?");

  const std::string head = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n";
  arff_error("not a number", head + "1,x\nabc,y\n", 6, 1, "'abc' is not a number");
  arff_error("not a level", head + "1,z\n", 5, 3, "'z' is not a level of attribute 'b' {x, y}");
  arff_error("too few values", head + "1\n", 5, 2, "1 values for 2 attributes");
  arff_error("too many values", head + "1,x,2\n", 5, 4, "more values than the 2 attributes");
  arff_error("instance weight", head + "1,x,{2}\n", 5, 5, "instance weights");
  arff_error("empty value", head + "1,\n", 5, 3, "an empty value");
  arff_error("unclosed quote", head + "1,'x\n", 5, 3, "not closed");
  arff_error("sparse index out of range", head + "{2 1}\n", 5, 2, "out of range (0 to 1)");
  arff_error("sparse index twice", head + "{0 1, 0 2}\n", 5, 7, "appears twice");
  arff_error("sparse without value", head + "{0}\n", 5, 3, "has no value");
  arff_error("sparse not closed", head + "{0 1\n", 5, 1, "not closed");
  arff_error("sparse index not a number", head + "{a 1}\n", 5, 2, "expected an attribute index");
  arff_error("no @data", "@relation r\n@attribute a numeric\n", 2, 1, "no @data");
  arff_error("empty input", "", 1, 1, "no @data");
  arff_error("@data first", "@data\n", 1, 1, "@data before any @attribute");
  arff_error("unknown type", "@attribute a numbers\n", 1, 14, "unknown type 'numbers'");
  arff_error("relational", "@attribute a relational\n", 1, 14, "relational attributes");
  arff_error("@end", "@attribute a numeric\n@end a\n", 2, 1, "relational attributes");
  arff_error("second attribute of a name", "@attribute a numeric\n@attribute 'a' string\n", 2, 12, "a second attribute");
  arff_error("no levels", "@attribute a {}\n", 1, 14, "has no levels");
  arff_error("level twice", "@attribute a {x, y, x}\n", 1, 21, "appears twice");
  arff_error("empty level", "@attribute a {x,,y}\n", 1, 17, "an empty level");
  arff_error("levels not closed", "@attribute a {x, y\n", 1, 14, "not closed");
  arff_error("no type", "@attribute a\n", 1, 13, "has no type");
  arff_error("junk in header", "@relation r\nhello\n", 2, 1, "expected @relation");
  arff_error("unknown keyword", "@relations r\n", 1, 1, "unknown keyword");
  arff_error("junk after type", "@attribute a numeric x\n", 1, 22, "unexpected 'x'");
  arff_error("@ after @data", head + "@attribute c numeric\n", 5, 1, "after @data");
  arff_error("integer not whole", "@attribute a integer\n@data\n1.5\n", 3, 1, "not an integer");
  arff_error("integer INT32_MIN", "@attribute a integer\n@data\n-2147483648\n", 3, 1, "not an integer");
  arff_error("NUL byte", std::string("@attribute a numeric\n@data\n1") + std::string(1, '\0') + "\n", 3, 2, "NUL byte");
}

}  // namespace

void text_format_tests() {
  libsvm_tests();
  arff_tests();
}
