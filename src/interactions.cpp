// Glue for find_interactions() and read_plink(): values, genotype codes or .bed bytes in; the
// best gain of every variable (and its tuple) out.
#include <Rcpp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/gpu_backend.h"
#include "core/interaction_codes.h"
#include "core/interaction_pvalues.h"
#include "core/interactions.h"
#include "core/parallel.h"
#include "core/plink.h"
#include "core/target_clones.h"
#include "core/text_formats.h"
#include "input_codes.h"
#include "job_progress.h"

using namespace fsgpu;

namespace {

// x's storage as the search reads it, resolved on the main thread (R's accessors are not for
// worker threads): a dense numeric or logical matrix (objects in rows, or with `transposed` in
// columns, as a SummarizedExperiment's assay), a list of columns (a data frame) or a dgCMatrix.
// Values are read where they lie: no copy of x is made in R or here.
struct InputColumns {
  int64_t n_rows = 0, n_cols = 0;  // objects, variables
  // Dense: element (object r, variable j) at r * row_step + j * col_step.
  const int* dense_int = nullptr;
  const double* dense_real = nullptr;
  int64_t row_step = 1, col_step = 0;
  // A list: per column, one of the two.
  std::vector<const int*> list_int;
  std::vector<const double*> list_real;
  // A dgCMatrix.
  const int* sparse_i = nullptr;
  const int* sparse_p = nullptr;
  const double* sparse_x = nullptr;

  InputColumns(SEXP x, bool transposed) {
    if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
      SEXP dim = R_do_slot(x, Rf_install("Dim"));
      n_rows = INTEGER(dim)[0];
      n_cols = INTEGER(dim)[1];
      sparse_i = INTEGER(R_do_slot(x, Rf_install("i")));
      sparse_p = INTEGER(R_do_slot(x, Rf_install("p")));
      sparse_x = REAL(R_do_slot(x, Rf_install("x")));
      return;
    }
    if (TYPEOF(x) == VECSXP) {
      n_cols = Rf_xlength(x);
      n_rows = n_cols ? Rf_xlength(VECTOR_ELT(x, 0)) : 0;
      for (int64_t j = 0; j < n_cols; ++j) {
        SEXP column = VECTOR_ELT(x, j);
        if (Rf_xlength(column) != n_rows) throw std::invalid_argument("the columns of x differ in length");
        switch (TYPEOF(column)) {
          case REALSXP: list_real.push_back(REAL(column)); list_int.push_back(nullptr); break;
          case INTSXP: list_int.push_back(INTEGER(column)); list_real.push_back(nullptr); break;
          case LGLSXP: list_int.push_back(LOGICAL(column)); list_real.push_back(nullptr); break;
          default: throw std::invalid_argument("x has a column that is not numeric");
        }
      }
      return;
    }
    if (!Rf_isMatrix(x)) throw std::invalid_argument("x must be a matrix, a list of columns or a dgCMatrix");
    const int64_t rows = Rf_nrows(x), cols = Rf_ncols(x);
    n_rows = transposed ? cols : rows;
    n_cols = transposed ? rows : cols;
    row_step = transposed ? rows : 1;
    col_step = transposed ? 1 : rows;
    switch (TYPEOF(x)) {
      case REALSXP: dense_real = REAL(x); break;
      case INTSXP: dense_int = INTEGER(x); break;
      case LGLSXP: dense_int = LOGICAL(x); break;
      default: throw std::invalid_argument("x must hold numbers");
    }
  }

  // Column j's values when x stores them as integers (NA_INTEGER: missing): x's own storage where
  // they lie in order, else a copy in buf; nullptr when x stores doubles.
  const int* int_column(int64_t j, std::vector<int>& buf) const {
    if (dense_int && row_step == 1) return dense_int + j * col_step;
    if (!list_int.empty()) return list_int[j];
    if (!dense_int) return nullptr;
    buf.resize(size_t(n_rows));
    for (int64_t r = 0; r < n_rows; ++r) buf[r] = dense_int[r * row_step + j * col_step];
    return buf.data();
  }

  // Column j's values as doubles (NaN: missing): x's own storage where it holds them so, else buf.
  const double* real_column(int64_t j, std::vector<double>& buf) const {
    if (dense_real && row_step == 1) return dense_real + j * col_step;
    if (!list_real.empty() && list_real[j]) return list_real[j];
    buf.resize(size_t(n_rows));
    if (sparse_x) {
      std::fill(buf.begin(), buf.end(), 0.0);
      for (int e = sparse_p[j]; e < sparse_p[j + 1]; ++e) buf[sparse_i[e]] = sparse_x[e];
    } else if (dense_real) {
      for (int64_t r = 0; r < n_rows; ++r) buf[r] = dense_real[r * row_step + j * col_step];
    } else {
      const int* ints = dense_int ? nullptr : list_int[j];
      for (int64_t r = 0; r < n_rows; ++r) {
        const int v = ints ? ints[r] : dense_int[r * row_step + j * col_step];
        buf[r] = v == NA_INTEGER ? NAN : double(v);
      }
    }
    return buf.data();
  }
};

// A value's code as the search takes it: NA (NaN) as `missing`, a whole number of 0..top_code as
// itself, anything else as -1 (a value the column's check reports).
inline int8_t int_code(int value, int top_code, int8_t missing) {
  if (value == NA_INTEGER) return missing;
  return static_cast<unsigned>(value) <= static_cast<unsigned>(top_code) ? static_cast<int8_t>(value) : int8_t(-1);
}
inline int8_t real_code(double value, int top_code, int8_t missing) {
  if (std::isnan(value)) return missing;
  return value >= 0 && value <= top_code && value == std::floor(value) ? static_cast<int8_t>(value) : int8_t(-1);
}

// An integer column's largest and smallest value, NA aside (top NA_INTEGER, the smallest int, when
// every value is missing; low INT_MAX), whether any is missing, and its codes (int_code()) into
// out, in one pass: the check and the codes read x once. Eight values at a time where the compiler
// has vector extensions (R's -O2 leaves the plain loop scalar, and it ran slower than the bit
// planes' build).
struct IntRange {
  int top = NA_INTEGER, low = INT_MAX;
  bool missing = false;
};
FSGPU_TARGET_CLONES("avx2", "default")
IntRange int_column_codes(const int* values, int64_t n, int top_code, int8_t missing, int8_t* out) {
  IntRange range;
  int64_t r = 0;
#if defined(__GNUC__) && !defined(__clang__)
  typedef int32_t Lanes __attribute__((vector_size(32)));
  typedef int8_t Bytes __attribute__((vector_size(8)));
  Lanes lane_top = Lanes{} + NA_INTEGER, lane_low = Lanes{} + INT_MAX, lane_missing = Lanes{};
  for (; r + 8 <= n; r += 8) {
    Lanes v;
    std::memcpy(&v, values + r, sizeof v);
    const Lanes na = v == NA_INTEGER;
    lane_missing |= na;
    lane_top = v > lane_top ? v : lane_top;
    const Lanes present = na ? INT_MAX : v;
    lane_low = present < lane_low ? present : lane_low;
    const Lanes code = na ? Lanes{} + missing : ((v >= 0) & (v <= top_code)) ? v : Lanes{} - 1;
    const Bytes codes = __builtin_convertvector(code, Bytes);
    std::memcpy(out + r, &codes, sizeof codes);
  }
  for (int i = 0; i < 8; ++i) {
    range.top = std::max(range.top, int(lane_top[i]));
    range.low = std::min(range.low, int(lane_low[i]));
    range.missing |= lane_missing[i] != 0;
  }
#endif
  for (; r < n; ++r) {
    const int v = values[r];
    range.missing |= v == NA_INTEGER;
    range.top = std::max(range.top, v);
    range.low = std::min(range.low, v == NA_INTEGER ? INT_MAX : v);
    out[r] = int_code(v, top_code, missing);
  }
  return range;
}

// One column of x checked over all its objects: its largest value (-inf when every value is
// missing), whether one is missing, and its first problem in object order: an infinite value, or
// for codes a fraction or a negative number.
enum class Problem : int8_t { none, infinite, fraction, negative };
struct ColumnScan {
  double top = -INFINITY;
  bool missing = false;
  Problem problem = Problem::none;
  int64_t row = 0;
  double value = 0;

  void flag(Problem p, int64_t r, double v) {
    if (problem != Problem::none) return;
    problem = p;
    row = r;
    value = v;
  }
};

// The error for a column's problem, naming the variable and the object.
std::string problem_message(const ColumnScan& c, const std::string& name) {
  std::ostringstream where;
  where << " (variable '" << name << "', object " << c.row + 1;
  if (c.problem == Problem::infinite) return "x has infinite values" + where.str() + ")";
  where << ": " << c.value << ")";
  if (c.problem == Problem::fraction) return "levels is for whole-number codes; x has fractions" + where.str();
  return "codes must be 0 or more" + where.str();
}

// Where a column's codes go (kind "codes"): out[s] is the code of row rows[s] (rows null: row s)
// for the n_objects objects searched.
struct CodesTarget {
  int8_t* out;
  const int32_t* rows;
  int32_t n_objects;
  int top_code;
  int8_t missing;
};

// Column j of x checked (ColumnScan; codes: whole numbers of 0 or more expected) and, with a
// target, coded in the same visit: integer storage in one pass that checks and codes, doubles
// coded from the values just checked. The one check of x's values: the search's build, its
// scans and fsgpu_interaction_scan() all go through here. Runs on worker threads.
ColumnScan check_column(const InputColumns& columns, int64_t j, bool codes, const CodesTarget* to) {
  thread_local std::vector<int> int_buf;
  thread_local std::vector<double> real_buf;
  thread_local std::vector<int8_t> discarded;
  const int64_t n = columns.n_rows;
  ColumnScan scan;
  if (const int* ints = columns.int_column(j, int_buf)) {
    // Straight into the target when it takes every row in order; else the codes are gathered.
    int8_t* direct = to && !to->rows ? to->out : nullptr;
    if (!direct) discarded.resize(size_t(n));
    const IntRange range =
        int_column_codes(ints, n, to ? to->top_code : 0, to ? to->missing : 0, direct ? direct : discarded.data());
    scan.missing = range.missing;
    if (range.top != NA_INTEGER) scan.top = range.top;
    if (codes && range.low < 0)
      for (int64_t r = 0; r < n && scan.problem == Problem::none; ++r)
        if (ints[r] != NA_INTEGER && ints[r] < 0) scan.flag(Problem::negative, r, ints[r]);
    if (to && to->rows)
      for (int32_t s = 0; s < to->n_objects; ++s) to->out[s] = int_code(ints[to->rows[s]], to->top_code, to->missing);
    return scan;
  }
  auto check = [&](double v, int64_t r) {
    if (std::isnan(v)) scan.missing = true;
    else if (std::isinf(v)) scan.flag(Problem::infinite, r, v);
    else if (codes && v != std::floor(v)) scan.flag(Problem::fraction, r, v);
    else if (codes && v < 0) scan.flag(Problem::negative, r, v);
    else scan.top = std::max(scan.top, v);
  };
  const double* values = nullptr;
  if (columns.sparse_x) {  // the values stored; the others are zeros
    const int from = columns.sparse_p[j], to_entry = columns.sparse_p[j + 1];
    if (to_entry - from < n) scan.top = 0;
    for (int e = from; e < to_entry; ++e) check(columns.sparse_x[e], columns.sparse_i[e]);
  } else {
    values = columns.real_column(j, real_buf);
    for (int64_t r = 0; r < n; ++r) check(values[r], r);
  }
  if (to) {
    if (!values) values = columns.real_column(j, real_buf);
    for (int32_t s = 0; s < to->n_objects; ++s)
      to->out[s] = real_code(values[to->rows ? to->rows[s] : s], to->top_code, to->missing);
  }
  return scan;
}

// What a pass over x's columns found: the largest value, whether one is missing, and the first
// column (in x's order) with a problem. Workers record their columns in any order, and skip the
// columns past a problem already found: those before it are all checked, so the error names the
// first problem whatever the threads did.
struct ValueChecks {
  bool codes = false;
  std::atomic<double> top{-INFINITY};
  std::atomic<bool> missing{false};
  std::atomic<int64_t> first_bad{INT64_MAX};

  bool skips(int64_t column) const { return column > first_bad.load(std::memory_order_relaxed); }

  void record(int64_t column, const ColumnScan& scan) {
    if (scan.problem != Problem::none) {
      int64_t seen = first_bad.load();
      while (column < seen && !first_bad.compare_exchange_weak(seen, column)) {
      }
    }
    double seen_top = top.load(std::memory_order_relaxed);
    while (scan.top > seen_top && !top.compare_exchange_weak(seen_top, scan.top)) {
    }
    if (scan.missing && !missing.load(std::memory_order_relaxed)) missing.store(true, std::memory_order_relaxed);
  }

  // After the pass, on the main thread: the first problem as an error, with its variable's name.
  void throw_first_problem(const InputColumns& columns, const Rcpp::CharacterVector& names) const {
    const int64_t j = first_bad.load();
    if (j == INT64_MAX) return;
    throw std::invalid_argument(problem_message(check_column(columns, j, codes, nullptr),
                                                Rcpp::as<std::string>(names[j])));
  }

  // The largest value, 0 when every value is missing.
  double largest() const { return top.load() == -INFINITY ? 0.0 : top.load(); }
};

// Where the variables' codes come from (InteractionCoding: real variables are x's columns,
// contrast variables permuted copies), by x's kind: "numeric" values discretized here,
// integer "codes", "bed" bytes, or "interaction_codes" computed before (x: int8 codes
// [discretization][variable][object], contrast variables already permuted).
struct VariableSource {
  std::string kind;
  const InputColumns* columns = nullptr;  // kinds numeric and codes
  const uint8_t* bed = nullptr;
  const int8_t* stored = nullptr;
  int32_t n_rows;  // x's rows
  InteractionCoding coding;
  int32_t n_levels;
  bool missing_level;  // a missing value is the last level instead of excluded
  bool rows_in_order = false;  // the objects are x's rows 0, 1, ... (coding.rows)
  // With checks, the first discretization's codes of the real variables (kinds numeric and
  // codes) record each column's check there instead of failing, and a code outside the levels
  // becomes -1: the pass that builds the bit planes is the check of x.
  ValueChecks* checks = nullptr;

  VariableCodes codes_of(int32_t d) const {
    if (kind == "interaction_codes")
      return stored_interaction_codes(stored, coding.n_objects(), coding.n_vars(), d);
    return [this, d](int64_t v, int8_t* out) { codes(v, d, out); };
  }

  // Codes of variable v in discretization d into out (kinds numeric, codes and bed). Runs on
  // worker threads: scratch is per thread.
  void codes(int64_t v, int32_t d, int8_t* out) const {
    thread_local std::vector<double> real_scratch, sorted;
    thread_local std::vector<int32_t> order;
    thread_local std::vector<int8_t> decoded;
    const int64_t column = coding.column_of(v);
    const int32_t n_samples = coding.n_objects();
    const bool checked = checks && d == 0 && v < coding.n_real;
    if (checked && checks->skips(column)) {  // the pass ends in an error: codes no longer matter
      std::fill(out, out + n_samples, int8_t(-1));
      return;
    }
    if (kind == "numeric") {
      if (checked) checks->record(column, check_column(*columns, column, false, nullptr));
      coding.numeric_codes(v, d, columns->real_column(column, real_scratch), sorted, out);
      return;
    }
    // The rows of x that give the objects' values: a contrast variable's permuted.
    const int32_t* rows = coding.rows.data();
    if (v >= coding.n_real) {
      coding.contrast_order(v - coding.n_real, order);
      for (int32_t s = 0; s < n_samples; ++s) order[s] = rows[order[s]];
      rows = order.data();
    }
    const int8_t missing = missing_level ? static_cast<int8_t>(n_levels - 1) : kMissingGenotype;
    if (kind == "codes") {
      const int top_code = n_levels - 1 - (missing_level ? 1 : 0);
      const CodesTarget to{out, rows_in_order && v < coding.n_real ? nullptr : rows, n_samples, top_code, missing};
      const ColumnScan scan = check_column(*columns, column, true, &to);
      if (checked) checks->record(column, scan);
      else if (!checks && (scan.problem != Problem::none || scan.top > top_code))  // x was checked before: never
        throw std::invalid_argument("variable " + std::to_string(column + 1) +
                                    " has a value that is not a code of 0.." + std::to_string(top_code));
      return;
    }
    if (rows_in_order && v < coding.n_real && missing == kMissingGenotype) {  // straight into out
      decode_bed_snp(bed + column * bed_snp_bytes(n_rows), n_rows, out);
      return;
    }
    decoded.resize(size_t(n_rows));
    decode_bed_snp(bed + column * bed_snp_bytes(n_rows), n_rows, decoded.data());
    for (int32_t s = 0; s < n_samples; ++s) {
      const int8_t code = decoded[rows[s]];
      out[s] = code < 0 ? missing : code;
    }
  }
};

// The bit planes of a search's first discretization, built by fsgpu_interaction_prepare() while it
// checked x, for fsgpu_find_interactions() to take (an external pointer's target).
struct PreparedBits {
  InteractionBits bits;
  bool missing_level = false;
};

// The coding of a search from its R arguments (rows and contrast_source 1-based).
InteractionCoding coding_from_r(Rcpp::IntegerVector rows, double n_real, Rcpp::IntegerVector contrast_source,
                                double contrast_seed, int divisions, double range, double seed) {
  InteractionCoding coding;
  for (int r : rows) coding.rows.push_back(r - 1);
  coding.n_real = static_cast<int64_t>(n_real);
  for (int j : contrast_source) coding.contrast_source.push_back(j - 1);
  coding.contrast_seed = static_cast<uint32_t>(contrast_seed);
  coding.divisions = divisions;
  coding.range = range;
  coding.seed = static_cast<uint32_t>(seed);
  return coding;
}

// The variables of a search from x and its kind (fsgpu_find_interactions()'s arguments); columns
// receives x's columns for the kinds numeric and codes. The levels are the caller's to set.
VariableSource variable_source(SEXP x, const std::string& kind, int n_rows, InteractionCoding coding,
                               int discretizations, bool transposed, std::unique_ptr<InputColumns>& columns) {
  VariableSource source;
  source.kind = kind;
  source.n_rows = n_rows;
  source.coding = std::move(coding);
  source.rows_in_order = source.coding.n_objects() == n_rows;
  for (int32_t s = 0; s < source.coding.n_objects() && source.rows_in_order; ++s)
    source.rows_in_order = source.coding.rows[s] == s;
  if (kind == "numeric" || kind == "codes") {
    columns.reset(new InputColumns(x, transposed));
    if (columns->n_rows != n_rows) throw std::invalid_argument("x does not have n_rows objects");
    source.columns = columns.get();
  } else if (kind == "bed") {
    source.bed = RAW(x);
  } else if (kind == "interaction_codes") {
    if (Rf_xlength(x) != R_xlen_t(source.coding.n_objects()) * source.coding.n_vars() * discretizations)
      throw std::invalid_argument("the interaction codes do not match the objects, variables and discretizations");
    source.stored = reinterpret_cast<const int8_t*>(RAW(x));
  } else {
    throw std::invalid_argument("unknown kind of input: " + kind);
  }
  return source;
}

// The bit planes fsgpu_interaction_prepare() built (prepared: its handle, or NULL), moved into
// `into` when they are this search's first discretization's (the same levels and variables);
// the handle then holds none. Returns whether it did.
bool take_prepared(SEXP prepared, const VariableSource& source, InteractionBits& into) {
  if (Rf_isNull(prepared)) return false;
  Rcpp::XPtr<PreparedBits> held(prepared);
  InteractionBits& bits = held->bits;
  if (bits.n_levels != source.n_levels || held->missing_level != source.missing_level ||
      bits.n_vars != source.coding.n_vars() || bits.n_objects != source.coding.n_objects())
    return false;
  into = std::move(bits);
  bits = InteractionBits();
  return true;
}

}  // namespace

// backend: "cpu", "gpu", or "auto-gpu" (the GPU unless it cannot take the search: then the CPU,
// and why_cpu says why). For every variable (the real ones, then the contrast ones) its best gain over the tuples and
// discretizations, the tuple (1-based, when asked) and the discretization (1-based) reaching it.
// Only tuples whose first variable (0-based) is in [first_begin, first_end) are searched
// (InteractionTask; first_end < 0: to the last): a tile, whose bests merge with the other
// tiles' by gain, then discretization, then tuple.
// collect: also every (tuple, variable) gain above `threshold` over the tuples of real variables,
// filtered by `interesting` (1-based real variables; empty: every tuple) and require_all
// (InteractionTask), at most max_hits of them: `hits`, with per (tuple, variable) the largest gain
// over the discretizations and the first discretization reaching it, in MDFS's order (tuple, then
// variable; 1-based).
// prepared: fsgpu_interaction_prepare()'s `bits` (or NULL), the first discretization's bit
// planes when they have this search's levels; else (and for the other discretizations) they are
// built here.
// [[Rcpp::export]]
Rcpp::List fsgpu_find_interactions(SEXP x, std::string kind, int n_rows, Rcpp::IntegerVector rows, double n_real_d,
                                   Rcpp::IntegerVector y, int n_classes, Rcpp::IntegerVector contrast_source,
                                   double contrast_seed, int dimensions, int divisions, int discretizations,
                                   double range, double seed, double pseudo_count, int n_levels, bool missing_level,
                                   bool with_tuples, std::string backend, int threads, Rcpp::IntegerVector devices,
                                   double memory_limit, SEXP progress = R_NilValue, double first_begin = 0,
                                   double first_end = -1, bool collect = false, double threshold = 0,
                                   SEXP interesting = R_NilValue, bool require_all = false,
                                   double max_hits = 1e7, bool transposed = false, SEXP prepared = R_NilValue) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  std::unique_ptr<InputColumns> columns;
  VariableSource source = variable_source(
      x, kind, n_rows, coding_from_r(rows, n_real_d, contrast_source, contrast_seed, divisions, range, seed),
      discretizations, transposed, columns);
  source.n_levels = n_levels;
  source.missing_level = missing_level;
  const int64_t n_vars = source.coding.n_vars();
  const ClassLayout layout = layout_from_r(y, n_classes);
  InteractionTask task;
  task.dimensions = dimensions;
  task.n_real = source.coding.n_real;
  task.with_tuples = with_tuples;
  task.first_begin = static_cast<int64_t>(first_begin);
  task.first_end = first_end < 0 ? -1 : static_cast<int64_t>(first_end);
  task.collect = collect;
  task.threshold = threshold;
  if (interesting != R_NilValue && Rf_xlength(interesting) > 0) {
    task.interesting.assign(size_t(task.n_real), 0);
    for (int v : Rcpp::IntegerVector(interesting)) {
      if (v < 1 || v > task.n_real) throw std::invalid_argument("interesting variable out of range");
      task.interesting[v - 1] = 1;
    }
  }
  task.require_all = require_all;
  task.max_hits = static_cast<int64_t>(max_hits);
  std::vector<InteractionHit> hits;
  GpuOptions options;
  options.devices.assign(devices.begin(), devices.end());
  options.memory_limit = static_cast<int64_t>(memory_limit);
  options.host_threads = threads;
  JobProgress job(progress);  // each discretization is an equal part of the job
  std::vector<double> gain(size_t(n_vars), -INFINITY);
  std::vector<int32_t> tuple(with_tuples ? size_t(n_vars) * dimensions : 0, 0), found_in(size_t(n_vars), 0);
  std::string why_cpu, ran_backend;
  double prepare_seconds = 0, search_seconds = 0;
  for (int32_t d = 0; d < discretizations; ++d) {
    job.report(static_cast<double>(d) / discretizations);
    Clock::time_point t0 = Clock::now();
    InteractionBits bits;
    if (d > 0 || !take_prepared(prepared, source, bits))
      bits = build_interaction_bits(layout, n_vars, n_levels, source.codes_of(d), threads);
    const GainTables tables(bits, pseudo_count);
    prepare_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    std::string ran = "cpu";
    if (backend != "cpu") {
      const std::string problem = gpu_interactions_problem(bits, task, options);
      if (problem.empty()) ran = "gpu";
      else if (backend == "gpu") throw std::runtime_error("the GPU cannot run this search: " + problem);
      else why_cpu = problem;
    }
    const Checkpoint checkpoint = job.part(static_cast<double>(d) / discretizations, 1.0 / discretizations);
    const InteractionBest best = ran == "gpu" ? gpu_interactions(bits, tables, task, options, checkpoint)
                                              : cpu_interactions(bits, tables, task, threads, checkpoint);
    search_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    ran_backend = ran;
    // The first discretization reaching a variable's best gain keeps it (MDFS's strict >).
    for (int64_t v = 0; v < n_vars; ++v) {
      if (!(best.gain[v] > gain[v])) continue;
      gain[v] = best.gain[v];
      found_in[v] = d + 1;
      if (with_tuples)
        for (int32_t i = 0; i < dimensions; ++i) tuple[v * dimensions + i] = best.tuple[v * dimensions + i] + 1;
    }
    if (collect) {
      std::vector<InteractionHit> found = best.hits;
      for (InteractionHit& h : found) h.discretization = d;
      merge_discretization_hits(hits, found);
      check_hit_count(static_cast<int64_t>(hits.size()), task);
    }
  }
  Rcpp::IntegerMatrix tuples(with_tuples ? dimensions : 0, with_tuples ? n_vars : 0);
  std::copy(tuple.begin(), tuple.end(), tuples.begin());
  SEXP collected = R_NilValue;
  if (collect) {
    const R_xlen_t n = static_cast<R_xlen_t>(hits.size());
    Rcpp::IntegerVector hit_var(n), hit_discretization(n);
    Rcpp::IntegerMatrix hit_tuple(n, dimensions);
    Rcpp::NumericVector hit_gain(n);
    for (R_xlen_t h = 0; h < n; ++h) {
      hit_var[h] = hits[h].var + 1;
      for (int32_t i = 0; i < dimensions; ++i) hit_tuple(h, i) = hits[h].tuple[i] + 1;
      hit_gain[h] = hits[h].gain;
      hit_discretization[h] = hits[h].discretization + 1;
    }
    collected = Rcpp::List::create(Rcpp::Named("variable") = hit_var, Rcpp::Named("tuple") = hit_tuple,
                                   Rcpp::Named("gain") = hit_gain, Rcpp::Named("discretization") = hit_discretization);
  }
  return Rcpp::List::create(Rcpp::Named("gain") = Rcpp::wrap(gain), Rcpp::Named("tuples") = tuples,
                            Rcpp::Named("discretization") = Rcpp::wrap(found_in), Rcpp::Named("backend") = ran_backend,
                            Rcpp::Named("why_cpu") = why_cpu,
                            Rcpp::Named("timings") = Rcpp::NumericVector::create(
                                Rcpp::Named("prepare") = prepare_seconds, Rcpp::Named("search") = search_seconds),
                            Rcpp::Named("hits") = collected);
  FSGPU_GLUE_END
}

namespace {

// Every column of x checked (check_column()) into `checks`, on `threads` threads.
void check_every_column(const InputColumns& columns, ValueChecks& checks, int threads) {
  parallel_for(columns.n_cols, threads, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t j = begin; j < end; ++j)
      if (!checks.skips(j)) checks.record(j, check_column(columns, j, checks.codes, nullptr));
  });
}

// The largest value and whether one is missing in up to 64 columns spread evenly over x: the
// levels fsgpu_interaction_prepare() builds the bit planes with before it has seen every column.
ColumnScan probe_columns(const InputColumns& columns) {
  ColumnScan probe;
  const int64_t n = std::min<int64_t>(64, columns.n_cols);
  for (int64_t i = 0; i < n; ++i) {
    const ColumnScan c = check_column(columns, i * columns.n_cols / n, true, nullptr);
    probe.top = std::max(probe.top, c.top);
    probe.missing |= c.missing;
  }
  return probe;
}

}  // namespace

// find_interactions()'s check of x (kinds numeric and codes, read where they lie: InputColumns),
// fused with the build of the bit planes of its first discretization: one multithreaded pass over
// x instead of a check and then a build. Returns x's largest value (0 when every value is
// missing), whether any is missing, `bits` (a handle for fsgpu_find_interactions(), or NULL) and
// `seconds`. A problem (an infinite value; for codes a fraction or a negative number) is an error
// naming the first variable, in column order, that has one, and its first object; every object
// of x is checked, whether it has a class or not. The other arguments are
// fsgpu_find_interactions()'s, but: integer codes need their levels before their planes are
// built, and R decides them from what the check finds. So the planes are built with `levels` (NA:
// the largest code, plus one) and with `missing_level` (missing = "level") a last level for
// missing values when there are some, as far as up to 64 columns spread over x tell (genotypes:
// any column tells); when the whole of x says otherwise, `bits` is NULL and the search builds its
// own. build = FALSE (tiles searched on workers, which build their own) only checks.
// [[Rcpp::export]]
Rcpp::List fsgpu_interaction_prepare(SEXP x, std::string kind, int n_rows, Rcpp::IntegerVector rows, double n_real_d,
                                     Rcpp::IntegerVector y, int n_classes, Rcpp::IntegerVector contrast_source,
                                     double contrast_seed, int divisions, double range, double seed, int levels,
                                     bool missing_level, bool transposed, Rcpp::CharacterVector names, bool build,
                                     int threads) {
  FSGPU_GLUE_BEGIN
  const auto started = std::chrono::steady_clock::now();
  if (kind != "numeric" && kind != "codes") throw std::invalid_argument("only numbers and codes are checked");
  std::unique_ptr<InputColumns> columns;
  VariableSource source = variable_source(
      x, kind, n_rows, coding_from_r(rows, n_real_d, contrast_source, contrast_seed, divisions, range, seed), 1,
      transposed, columns);
  if (names.size() != columns->n_cols || source.coding.n_real != columns->n_cols)
    throw std::invalid_argument("the names do not match x's variables");
  ValueChecks checks;
  checks.codes = kind == "codes";
  int top_code = divisions;
  source.missing_level = false;
  if (checks.codes) {
    const ColumnScan probe = levels == NA_INTEGER || missing_level ? probe_columns(*columns) : ColumnScan();
    top_code = levels == NA_INTEGER ? static_cast<int>(std::clamp(probe.top, 1.0, double(kMaxInteractionLevels)))
                                    : levels - 1;
    source.missing_level = missing_level && probe.missing;
  }
  source.n_levels = top_code + 1 + source.missing_level;
  std::unique_ptr<PreparedBits> prepared;
  if (build && source.n_levels >= 2 && source.n_levels <= kMaxInteractionLevels) {
    source.checks = &checks;
    prepared.reset(new PreparedBits);
    prepared->bits = build_interaction_bits(layout_from_r(y, n_classes), source.coding.n_vars(), source.n_levels,
                                            source.codes_of(0), threads);
    prepared->missing_level = source.missing_level;
  } else {
    check_every_column(*columns, checks, threads);
  }
  checks.throw_first_problem(*columns, names);
  const double top = checks.largest();
  const bool any_missing = checks.missing.load();
  // Planes with other levels than x's are of no use (a code above top_code was built as missing).
  if (checks.codes && (top > top_code || source.missing_level != (missing_level && any_missing))) prepared.reset();
  SEXP bits = prepared ? Rcpp::XPtr<PreparedBits>(prepared.release(), true) : R_NilValue;
  return Rcpp::List::create(
      Rcpp::Named("top") = top, Rcpp::Named("any_missing") = any_missing, Rcpp::Named("bits") = bits,
      Rcpp::Named("seconds") = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  FSGPU_GLUE_END
}

// fsgpu_interaction_prepare()'s check alone for x, a block of a DelayedArray's variables as an
// ordinary matrix (objects in rows), on `threads` threads: its largest value (0 when every value
// is missing) and whether any is missing.
// [[Rcpp::export]]
Rcpp::List fsgpu_interaction_scan(SEXP x, bool codes, Rcpp::CharacterVector names, int threads) {
  FSGPU_GLUE_BEGIN
  const InputColumns columns(x, false);
  if (names.size() != columns.n_cols) throw std::invalid_argument("the names do not match x's variables");
  ValueChecks checks;
  checks.codes = codes;
  check_every_column(columns, checks, threads);
  checks.throw_first_problem(columns, names);
  return Rcpp::List::create(Rcpp::Named("top") = checks.largest(),
                            Rcpp::Named("any_missing") = checks.missing.load());
  FSGPU_GLUE_END
}

// The codes of a block of a search's columns, in every discretization (InteractionCoding): values
// holds x's rows for the columns first, first + 1, ... (1-based). Returns `vars`, the variables
// drawn from these columns (1-based: the block's real variables, then the contrast variables whose
// source is in it), and `codes`, objects x vars x discretizations (raw: int8, -1 = missing).
// [[Rcpp::export]]
Rcpp::List fsgpu_interaction_block_codes(Rcpp::NumericMatrix values, double first, Rcpp::IntegerVector rows,
                                         double n_real, Rcpp::IntegerVector contrast_source, double contrast_seed,
                                         int divisions, int discretizations, double range, double seed, int threads) {
  FSGPU_GLUE_BEGIN
  const InteractionCoding coding =
      coding_from_r(rows, n_real, contrast_source, contrast_seed, divisions, range, seed);
  const int64_t first_column = static_cast<int64_t>(first) - 1;
  const std::vector<int64_t> vars = variables_of_columns(coding, first_column, values.ncol());
  Rcpp::RawVector codes(R_xlen_t(coding.n_objects()) * R_xlen_t(vars.size()) * discretizations);
  codes.attr("dim") = Rcpp::IntegerVector::create(coding.n_objects(), static_cast<int>(vars.size()), discretizations);
  interaction_block_codes(coding, REAL(values), values.nrow(), first_column, vars, discretizations,
                          reinterpret_cast<int8_t*>(RAW(codes)), threads);
  Rcpp::NumericVector var_numbers(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) var_numbers[i] = static_cast<double>(vars[i] + 1);
  return Rcpp::List::create(Rcpp::Named("vars") = var_numbers, Rcpp::Named("codes") = codes);
  FSGPU_GLUE_END
}

namespace {

// A field of an optional sign and at most 15 decimal digits, as an integer (exact in a double,
// so the value R's parser reads too); false for anything else. R's parser took 110 ns a field.
bool plain_integer(std::string_view v, int64_t& value) {
  const size_t sign = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
  bool too_large = false;
  if (v.size() - sign > 15 || !parse_count(v.data() + sign, v.data() + v.size(), value, too_large)) return false;
  if (v[0] == '-') value = -value;
  return true;
}

// A whole file's bytes in one read (not a character at a time through a stream iterator). False
// when the file cannot be read.
bool read_whole_file(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  text.resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  return static_cast<bool>(in.read(text.data(), static_cast<std::streamsize>(text.size())));
}

}  // namespace

// A .bed file's genotypes after its header, checked against the samples and SNPs: read straight
// into the raw vector that carries them (readBin() took a second pass through a connection's
// buffer, and an Rcpp vector is zero-filled unless asked not to be), in slices of chunk_bytes on
// up to `threads` threads: the read costs mostly the first touch of the vector's pages, which
// threads share (256 MB, fresh R sessions on a 2-core VM: 0.30-0.35 s on one thread, 0.25 s on two).
// [[Rcpp::export]]
Rcpp::RawVector fsgpu_read_bed(std::string path, double n_samples, double n_snps, int threads, double chunk_bytes) {
  FSGPU_GLUE_BEGIN
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot open " + path);
  const int64_t size = static_cast<int64_t>(in.tellg());
  uint8_t head[3] = {};
  in.seekg(0);
  in.read(reinterpret_cast<char*>(head), std::min<int64_t>(3, size));
  check_bed(head, size, static_cast<int64_t>(n_samples), static_cast<int64_t>(n_snps));
  Rcpp::RawVector bytes(Rcpp::no_init(static_cast<R_xlen_t>(size - 3)));  // untouched until the read
  char* out = reinterpret_cast<char*>(RAW(bytes));
  parallel_for(size - 3, threads, static_cast<int64_t>(chunk_bytes), [&](int64_t begin, int64_t end, int) {
    std::ifstream slice(path, std::ios::binary);
    slice.seekg(3 + begin);
    if (!slice.read(out + begin, static_cast<std::streamsize>(end - begin)))
      throw std::runtime_error("cannot read " + path);
  });
  return bytes;
  FSGPU_GLUE_END
}

// read_plink()'s .bim or .fam table (utils::read.table(path, colClasses = classes, col.names =
// columns, comment.char = "", quote = "") without its passes over the text in R): a data frame,
// or NULL when the file is not a plain table of length(columns) fields to a line (then R reads it
// and reports the problem). classes: "character", "numeric" or "integer"; "NA" is missing.
// [[Rcpp::export]]
SEXP fsgpu_read_plink_table(std::string path, Rcpp::CharacterVector columns, Rcpp::CharacterVector classes) {
  FSGPU_GLUE_BEGIN
  std::string text;
  if (!read_whole_file(path, text)) return R_NilValue;
  const int n_fields = columns.size();
  std::vector<std::string_view> fields;
  if (!split_plink_table(text.data(), text.size(), n_fields, fields) || fields.empty()) return R_NilValue;
  const R_xlen_t n = static_cast<R_xlen_t>(fields.size() / n_fields);
  Rcpp::List out(n_fields);
  std::string field;
  for (int f = 0; f < n_fields; ++f) {
    const std::string kind = Rcpp::as<std::string>(classes[f]);
    auto value = [&](R_xlen_t row) { return fields[size_t(row) * n_fields + f]; };
    if (kind == "character") {
      Rcpp::CharacterVector column(n);
      // Chromosomes and alleles repeat from line to line: the last line's string is reused.
      std::string_view last;
      SEXP last_string = NA_STRING;
      for (R_xlen_t r = 0; r < n; ++r) {
        const std::string_view v = value(r);
        if (r == 0 || v != last) {
          last = v;
          last_string = v == "NA" ? NA_STRING : Rf_mkCharLen(v.data(), static_cast<int>(v.size()));
        }
        SET_STRING_ELT(column, r, last_string);
      }
      out[f] = column;
    } else if (kind == "numeric" || kind == "integer") {
      // As scan() reads them (R's own number parser); anything else goes back to R.
      const bool whole = kind == "integer";
      Rcpp::NumericVector reals(whole ? 0 : n);
      Rcpp::IntegerVector ints(whole ? n : 0);
      for (R_xlen_t r = 0; r < n; ++r) {
        int64_t plain = 0;
        if (plain_integer(value(r), plain)) {  // positions and counts: most fields of a .bim
          if (whole && (plain <= INT_MIN || plain > INT_MAX)) return R_NilValue;
          if (whole) ints[r] = static_cast<int>(plain);
          else reals[r] = plain == 0 && value(r)[0] == '-' ? -0.0 : static_cast<double>(plain);
          continue;
        }
        field.assign(value(r));
        char* end = nullptr;
        if (field == "NA") {
          if (whole) ints[r] = NA_INTEGER;
          else reals[r] = NA_REAL;
        } else if (whole) {
          errno = 0;
          const long v = std::strtol(field.c_str(), &end, 10);
          if (*end != '\0' || errno == ERANGE || v <= INT_MIN || v > INT_MAX) return R_NilValue;
          ints[r] = static_cast<int>(v);
        } else {
          reals[r] = R_strtod(field.c_str(), &end);
          if (*end != '\0') return R_NilValue;
        }
      }
      if (whole) out[f] = ints;
      else out[f] = reals;
    } else {
      return R_NilValue;
    }
  }
  out.names() = columns;
  out.attr("row.names") = Rcpp::IntegerVector::create(NA_INTEGER, -static_cast<int>(n));
  out.attr("class") = "data.frame";
  return out;
  FSGPU_GLUE_END
}

// Allele-1 counts (NA for missing) of the SNPs `snps` (1-based) from .bed bytes without the
// header: a samples x SNPs integer matrix.
// [[Rcpp::export]]
Rcpp::IntegerMatrix fsgpu_decode_bed(Rcpp::RawVector bytes, int n_samples, Rcpp::IntegerVector snps) {
  FSGPU_GLUE_BEGIN
  Rcpp::IntegerMatrix out(n_samples, snps.size());
  std::vector<int8_t> codes(n_samples);
  const int64_t per_snp = bed_snp_bytes(n_samples);
  for (R_xlen_t j = 0; j < snps.size(); ++j) {
    if ((int64_t(snps[j]) * per_snp) > static_cast<int64_t>(bytes.size()) || snps[j] < 1)
      throw std::invalid_argument("SNP index out of range");
    decode_bed_snp(RAW(bytes) + int64_t(snps[j] - 1) * per_snp, n_samples, codes.data());
    int* col = INTEGER(out) + j * int64_t(n_samples);
    for (int s = 0; s < n_samples; ++s) col[s] = codes[s] < 0 ? NA_INTEGER : codes[s];
  }
  return out;
  FSGPU_GLUE_END
}

// alpha of MDFS's p-value fit (core/interaction_pvalues.h) for tails sorted by statistic.
// [[Rcpp::export]]
double fsgpu_mdfs_alpha(Rcpp::NumericVector tail, std::string mode, bool last_only, int search_points,
                        int threads = 1) {
  if (tail.size() < 4) Rcpp::stop("the p-value fit needs at least 4 values");
  return mdfs_fit_alpha(tail.begin(), tail.size(), mode == "exp" ? PValueFit::exp : PValueFit::lin, last_only,
                        search_points, threads);
}

// stats::p.adjust(p, "holm") for p without NA, bit for bit (core/interaction_pvalues.h).
// [[Rcpp::export]]
Rcpp::NumericVector fsgpu_holm(Rcpp::NumericVector p) {
  Rcpp::NumericVector out(p.size());
  holm_adjust(p.begin(), p.size(), out.begin());
  return out;
}

namespace {

// name_a + " x " + name_b ...: paste()'s result for the names of a tuple (NA as "NA").
SEXP joined_names(Rcpp::CharacterVector names, const int* tuple, int k) {
  std::string out;
  for (int i = 0; i < k; ++i) {
    if (i) out += " x ";
    const SEXP name = names[tuple[i] - 1];
    out += name == NA_STRING ? "NA" : Rf_translateCharUTF8(name);
  }
  return Rf_mkCharLenCE(out.data(), static_cast<int>(out.size()), CE_UTF8);
}

}  // namespace

// find_interactions()'s `scores` from the engine's result in one pass, each column built once
// (R's arithmetic took several vectors of every variable's length and the garbage collections
// they set off): the p-values as MDFS 1.5's ComputePValue (mode "raw": the chi-squared tail of
// scale * gain, with scale = 2 log 2 from R; "exp" or "lin": the fit of core/interaction_pvalues.h
// on the contrast variables' tails, or on every variable's without them), adjusted here for
// p_adjust "holm", "bonferroni" and "none" when no p-value is NaN (`adjusted` says so; else R's
// p.adjust() fills the column), and with `tuples` (k x variables, 1-based) the tuple columns.
// `ranked`: the rows by decreasing gain, then index (R's order(-gain, index)), 1-based, or NULL
// without tuples. The p-values and the fit run on `threads` threads.
// [[Rcpp::export]]
Rcpp::List fsgpu_interaction_scores(Rcpp::NumericVector gain, int n_real, double scale, double df, std::string mode,
                                    bool fit_contrast, int search_points, std::string p_adjust, double level,
                                    Rcpp::CharacterVector names, Rcpp::IntegerMatrix tuples,
                                    Rcpp::IntegerVector discretization, int threads) {
  FSGPU_GLUE_BEGIN
  const R_xlen_t n_vars = gain.size(), n = n_real;
  if (n > n_vars || names.size() != n) throw std::invalid_argument("the gains do not match the variables");
  const double* g = gain.begin();
  // pmax(scale * gain, 1e-8), NaN kept.
  auto stat = [&](R_xlen_t i) {
    const double s = scale * g[i];
    return std::isnan(s) ? s : std::max(s, 1e-8);
  };
  const R_xlen_t fit_begin = fit_contrast ? n : 0, fit_n = n_vars - fit_begin;
  double alpha = 1;
  const bool raw = mode == "raw" || fit_n < 4, exp_fit = mode == "exp";
  // R's pchisq() runs on the threads: its chi-squared and gamma code (nmath) calls nothing of R's
  // for df > 0 and any statistic (only a continued fraction that fails to converge would warn,
  // which R's comment there says should not happen), and each value goes to its own index, so
  // the values are R's whatever the threads.
  constexpr int64_t kGrain = 4096;
  if (!raw) {
    std::vector<double> stats(static_cast<size_t>(fit_n));
    for (R_xlen_t i = 0; i < fit_n; ++i) stats[i] = stat(fit_begin + i);
    const std::vector<int32_t> order = ascending_order(stats.data(), fit_n);
    std::vector<double> tail(static_cast<size_t>(fit_n));
    parallel_for(fit_n, threads, kGrain, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) tail[i] = R::pchisq(stats[order[i]], df, 0, 0);
    });
    alpha = mdfs_fit_alpha(tail.data(), fit_n, exp_fit ? PValueFit::exp : PValueFit::lin, fit_contrast,
                           search_points, threads);
  }
  Rcpp::NumericVector p(n);
  double* const p_of = p.begin();
  parallel_for(n, threads, kGrain, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      const double s = stat(i);
      double v;
      if (raw) {
        v = R::pchisq(s, df, 0, 0);
      } else {
        v = exp_fit ? -std::expm1(R::pchisq(s, df, 1, 1) / alpha) : R::pchisq(s, df, 0, 0) / alpha;
        if (v > 1) v = 1;  // pmin(1, p), NaN kept
      }
      p_of[i] = v;
    }
  });
  const bool any_nan = std::any_of(p_of, p_of + n, [](double v) { return std::isnan(v); });
  const bool adjusted = !any_nan && (p_adjust == "holm" || p_adjust == "bonferroni" || p_adjust == "none");
  Rcpp::NumericVector adjusted_p = adjusted && p_adjust == "none" ? p : Rcpp::NumericVector(n, NA_REAL);
  Rcpp::LogicalVector relevant(n, NA_LOGICAL);
  if (adjusted) {
    if (p_adjust == "holm") holm_adjust(p.begin(), n, adjusted_p.begin());
    else if (p_adjust == "bonferroni")
      for (R_xlen_t i = 0; i < n; ++i) adjusted_p[i] = std::min(1.0, static_cast<double>(n) * p[i]);
    for (R_xlen_t i = 0; i < n; ++i) relevant[i] = adjusted_p[i] < level;
  }
  Rcpp::IntegerVector index(n);
  for (R_xlen_t i = 0; i < n; ++i) index[i] = static_cast<int>(i + 1);
  Rcpp::NumericVector real_gain = n == n_vars ? gain : Rcpp::NumericVector(g, g + n);
  std::vector<std::string> column_names = {"variable", "index", "gain", "p_value", "p_adjusted", "relevant"};
  Rcpp::List scores = Rcpp::List::create(names, index, real_gain, p, adjusted_p, relevant);
  SEXP ranked = R_NilValue;
  if (tuples.ncol() > 0) {
    const int k = tuples.nrow();
    if (tuples.ncol() != n_vars || discretization.size() != n_vars)
      throw std::invalid_argument("the tuples do not match the variables");
    Rcpp::CharacterVector joined(n);
    for (R_xlen_t i = 0; i < n; ++i) SET_STRING_ELT(joined, i, joined_names(names, &tuples(0, i), k));
    scores.push_back(joined);
    column_names.push_back("tuple");
    for (int t = 0; t < k; ++t) {
      Rcpp::IntegerVector member(n);
      for (R_xlen_t i = 0; i < n; ++i) member[i] = tuples(t, i);
      scores.push_back(member);
      column_names.push_back("tuple_" + std::to_string(t + 1));
    }
    scores.push_back(n == n_vars ? discretization
                                 : Rcpp::IntegerVector(discretization.begin(), discretization.begin() + n));
    column_names.push_back("discretization");
    std::vector<double> minus(static_cast<size_t>(n));
    for (R_xlen_t i = 0; i < n; ++i) minus[i] = -g[i];
    const std::vector<int32_t> order = ascending_order(minus.data(), n);
    Rcpp::IntegerVector rows(n);
    for (R_xlen_t i = 0; i < n; ++i) rows[i] = order[i] + 1;
    ranked = rows;
  }
  scores.names() = Rcpp::wrap(column_names);
  scores.attr("row.names") = Rcpp::IntegerVector::create(NA_INTEGER, -static_cast<int>(n));
  scores.attr("class") = "data.frame";
  return Rcpp::List::create(Rcpp::Named("scores") = scores, Rcpp::Named("alpha") = alpha,
                            Rcpp::Named("adjusted") = adjusted, Rcpp::Named("ranked") = ranked);
  FSGPU_GLUE_END
}
