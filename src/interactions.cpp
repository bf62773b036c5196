// Glue for find_interactions() and read_plink(): values, genotype codes or .bed bytes in; the
// best gain of every variable (and its tuple) out.
#include <Rcpp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/gpu_backend.h"
#include "core/interaction_codes.h"
#include "core/interaction_pvalues.h"
#include "core/interactions.h"
#include "core/parallel.h"
#include "core/plink.h"
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

  // Column j's values as integers (NA_INTEGER: missing; whole-number doubles converted, as the
  // scan allows for codes): x's own storage where it holds them so, else buf.
  const int* codes_column(int64_t j, std::vector<int>& buf) const {
    if (dense_int && row_step == 1) return dense_int + j * col_step;
    if (!list_int.empty() && list_int[j]) return list_int[j];
    buf.resize(size_t(n_rows));
    if (dense_int) {
      for (int64_t r = 0; r < n_rows; ++r) buf[r] = dense_int[r * row_step + j * col_step];
      return buf.data();
    }
    const double* values = real_column(j, real_buf());
    for (int64_t r = 0; r < n_rows; ++r) buf[r] = std::isnan(values[r]) ? NA_INTEGER : static_cast<int>(values[r]);
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

 private:
  static std::vector<double>& real_buf() {
    thread_local std::vector<double> buf;
    return buf;
  }
};

// An integer column's codes as int8 (NA_INTEGER: `missing`), eight values at a time where the
// compiler has vector extensions (R's -O2 leaves the plain loop scalar, and it ran slower than
// the bit planes' build); returns whether a value is outside 0..top.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
bool int_codes(const int* col, int32_t n, int top, int8_t missing, int8_t* out) {
  int32_t s = 0;
  bool bad = false;
#if defined(__GNUC__) && !defined(__clang__)
  typedef int32_t Lanes __attribute__((vector_size(32)));
  typedef int8_t Bytes __attribute__((vector_size(8)));
  Lanes lane_bad = Lanes{};
  for (; s + 8 <= n; s += 8) {
    Lanes v;
    std::memcpy(&v, col + s, sizeof v);
    const Lanes na = v == NA_INTEGER;
    lane_bad |= ~na & ((v < 0) | (v > top));
    const Bytes codes = __builtin_convertvector(na ? Lanes{} + missing : v, Bytes);
    std::memcpy(out + s, &codes, sizeof codes);
  }
  for (int i = 0; i < 8; ++i) bad |= lane_bad[i] != 0;
#endif
  for (; s < n; ++s) {
    const int value = col[s];
    const bool na = value == NA_INTEGER;
    bad |= !na && static_cast<unsigned>(value) > static_cast<unsigned>(top);
    out[s] = na ? missing : static_cast<int8_t>(value);
  }
  return bad;
}

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

  VariableCodes codes_of(int32_t d) const {
    if (kind == "interaction_codes")
      return stored_interaction_codes(stored, coding.n_objects(), coding.n_vars(), d);
    return [this, d](int64_t v, int8_t* out) { codes(v, d, out); };
  }

  // Codes of variable v in discretization d into out (kinds numeric, codes and bed). Runs on
  // worker threads: scratch is per thread.
  void codes(int64_t v, int32_t d, int8_t* out) const {
    thread_local std::vector<double> real_scratch, sorted;
    thread_local std::vector<int> int_scratch;
    thread_local std::vector<int32_t> order;
    thread_local std::vector<int8_t> decoded;
    const int64_t column = coding.column_of(v);
    if (kind == "numeric") {
      coding.numeric_codes(v, d, columns->real_column(column, real_scratch), sorted, out);
      return;
    }
    const int32_t n_samples = coding.n_objects();
    // The rows of x that give the objects' values: a contrast variable's permuted.
    const int32_t* rows = coding.rows.data();
    if (v >= coding.n_real) {
      coding.contrast_order(v - coding.n_real, order);
      for (int32_t s = 0; s < n_samples; ++s) order[s] = rows[order[s]];
      rows = order.data();
    }
    const int8_t missing = missing_level ? static_cast<int8_t>(n_levels - 1) : kMissingGenotype;
    if (kind == "codes") {
      const int* col = columns->codes_column(column, int_scratch);
      const int top = n_levels - 1 - (missing_level ? 1 : 0);
      // Without branches in the loop; the error looks for the value afterwards. Every object in
      // x's order (no class missing, a real variable): a vectorized pass.
      bool bad = false;
      if (rows_in_order && v < coding.n_real) {
        bad = int_codes(col, n_samples, top, missing, out);
      } else {
        for (int32_t s = 0; s < n_samples; ++s) {
          const int value = col[rows[s]];
          const bool na = value == NA_INTEGER;
          bad |= !na && static_cast<unsigned>(value) > static_cast<unsigned>(top);
          out[s] = na ? missing : static_cast<int8_t>(value);
        }
      }
      if (bad)
        for (int32_t s = 0; s < n_samples; ++s) {
          const int value = col[rows[s]];
          if (value != NA_INTEGER && (value < 0 || value > top))
            throw std::invalid_argument("variable " + std::to_string(column + 1) + " has the code " +
                                        std::to_string(value) + ", outside 0.." + std::to_string(top));
        }
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
// [[Rcpp::export]]
Rcpp::List fsgpu_find_interactions(SEXP x, std::string kind, int n_rows, Rcpp::IntegerVector rows, double n_real_d,
                                   Rcpp::IntegerVector y, int n_classes, Rcpp::IntegerVector contrast_source,
                                   double contrast_seed, int dimensions, int divisions, int discretizations,
                                   double range, double seed, double pseudo_count, int n_levels, bool missing_level,
                                   bool with_tuples, std::string backend, int threads, Rcpp::IntegerVector devices,
                                   double memory_limit, SEXP progress = R_NilValue, double first_begin = 0,
                                   double first_end = -1, bool collect = false, double threshold = 0,
                                   SEXP interesting = R_NilValue, bool require_all = false,
                                   double max_hits = 1e7, bool transposed = false) {
  FSGPU_GLUE_BEGIN
  using Clock = std::chrono::steady_clock;
  VariableSource source;
  source.kind = kind;
  source.n_rows = n_rows;
  source.coding = coding_from_r(rows, n_real_d, contrast_source, contrast_seed, divisions, range, seed);
  source.n_levels = n_levels;
  source.missing_level = missing_level;
  source.rows_in_order = source.coding.n_objects() == n_rows;
  for (int32_t s = 0; s < source.coding.n_objects() && source.rows_in_order; ++s)
    source.rows_in_order = source.coding.rows[s] == s;
  const int64_t n_vars = source.coding.n_vars();
  std::unique_ptr<InputColumns> columns;
  if (kind == "numeric" || kind == "codes") {
    columns.reset(new InputColumns(x, transposed));
    if (columns->n_rows != n_rows) throw std::invalid_argument("x does not have n_rows objects");
    source.columns = columns.get();
  } else if (kind == "bed") {
    source.bed = RAW(x);
  }
  else if (kind == "interaction_codes") {
    if (Rf_xlength(x) != R_xlen_t(source.coding.n_objects()) * n_vars * discretizations)
      throw std::invalid_argument("the interaction codes do not match the objects, variables and discretizations");
    source.stored = reinterpret_cast<const int8_t*>(RAW(x));
  } else {
    throw std::invalid_argument("unknown kind of input: " + kind);
  }
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
    const InteractionBits bits = build_interaction_bits(
        layout, n_vars, n_levels, source.codes_of(d), threads);
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

// The largest and smallest value of an integer column, NA aside (NA_INTEGER, the smallest int,
// when every value is missing / INT_MAX), and whether any is missing. Eight values at a time
// where the compiler has vector extensions, so that the check runs at memory speed.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
bool int_column_range(const int* values, int64_t n, int& top, int& low) {
  top = NA_INTEGER;
  low = INT_MAX;
  int missing = 0;
  int64_t r = 0;
#if defined(__GNUC__) && !defined(__clang__)
  typedef int32_t Lanes __attribute__((vector_size(32)));
  Lanes lane_top = Lanes{} + NA_INTEGER, lane_low = Lanes{} + INT_MAX, lane_missing = Lanes{};
  for (; r + 8 <= n; r += 8) {
    Lanes v;
    std::memcpy(&v, values + r, sizeof v);
    const Lanes na = v == NA_INTEGER;
    lane_missing |= na;
    lane_top = v > lane_top ? v : lane_top;
    const Lanes present = na ? INT_MAX : v;
    lane_low = present < lane_low ? present : lane_low;
  }
  for (int i = 0; i < 8; ++i) {
    top = std::max(top, int(lane_top[i]));
    low = std::min(low, int(lane_low[i]));
    missing |= lane_missing[i] != 0;
  }
#endif
  for (; r < n; ++r) {
    const int v = values[r];
    missing |= v == NA_INTEGER;
    top = std::max(top, v);
    low = std::min(low, v == NA_INTEGER ? INT_MAX : v);
  }
  return missing != 0;
}

}  // namespace

// One pass over x (find_interactions()'s input, read where it lies: InputColumns) on `threads`
// threads: its largest value (0 when every value is missing) and whether any is missing, after
// checking that no value is infinite and, for codes, that every value is a whole number of 0 or
// more. A problem names the first variable (in column order) that has one, and its first object.
// [[Rcpp::export]]
Rcpp::List fsgpu_interaction_scan(SEXP x, bool codes, bool transposed, Rcpp::CharacterVector names, int threads) {
  FSGPU_GLUE_BEGIN
  const InputColumns columns(x, transposed);
  const int64_t n_cols = columns.n_cols, n_rows = columns.n_rows;
  if (names.size() != n_cols) throw std::invalid_argument("the names do not match x's variables");
  enum Problem : int8_t { none, infinite, fraction, negative };
  struct ColumnScan {
    double top = -INFINITY;
    bool missing = false;
    Problem problem = none;
    int64_t row = 0;
    double value = 0;
  };
  std::vector<ColumnScan> scans(static_cast<size_t>(n_cols));
  parallel_for(n_cols, threads, 16, [&](int64_t begin, int64_t end, int) {
    std::vector<double> buf;
    for (int64_t j = begin; j < end; ++j) {
      ColumnScan& out = scans[j];
      auto flag = [&](Problem p, int64_t row, double value) {
        if (out.problem == none) out = ColumnScan{out.top, out.missing, p, row, value};
      };
      const int* ints = nullptr;
      if (columns.dense_int && columns.row_step == 1) ints = columns.dense_int + j * columns.col_step;
      else if (!columns.list_int.empty()) ints = columns.list_int[j];
      if (ints) {
        int top, low;
        out.missing = int_column_range(ints, n_rows, top, low);
        if (top != NA_INTEGER) out.top = top;
        if (codes && low < 0)
          for (int64_t r = 0; r < n_rows && out.problem == none; ++r)
            if (ints[r] != NA_INTEGER && ints[r] < 0) flag(negative, r, ints[r]);
        continue;
      }
      if (columns.sparse_x) {
        // The values stored; the others are zeros.
        const int from = columns.sparse_p[j], to = columns.sparse_p[j + 1];
        if (to - from < n_rows) out.top = 0;
        for (int e = from; e < to; ++e) {
          const double v = columns.sparse_x[e];
          if (std::isnan(v)) out.missing = true;
          else if (std::isinf(v)) flag(infinite, columns.sparse_i[e], v);
          else if (codes && v != std::floor(v)) flag(fraction, columns.sparse_i[e], v);
          else if (codes && v < 0) flag(negative, columns.sparse_i[e], v);
          else out.top = std::max(out.top, v);
        }
        continue;
      }
      const double* values = columns.real_column(j, buf);
      for (int64_t r = 0; r < n_rows; ++r) {
        const double v = values[r];
        if (std::isnan(v)) out.missing = true;
        else if (std::isinf(v)) flag(infinite, r, v);
        else if (codes && v != std::floor(v)) flag(fraction, r, v);
        else if (codes && v < 0) flag(negative, r, v);
        else out.top = std::max(out.top, v);
      }
    }
  });
  double top = -INFINITY;
  bool any_missing = false;
  for (int64_t j = 0; j < n_cols; ++j) {
    const ColumnScan& c = scans[j];
    if (c.problem != none) {
      std::ostringstream where;
      where << " (variable '" << names[j] << "', object " << c.row + 1;
      if (c.problem == infinite) throw std::invalid_argument("x has infinite values" + where.str() + ")");
      where << ": " << c.value << ")";
      if (c.problem == fraction)
        throw std::invalid_argument("levels is for whole-number codes; x has fractions" + where.str());
      throw std::invalid_argument("codes must be 0 or more" + where.str());
    }
    top = std::max(top, c.top);
    any_missing = any_missing || c.missing;
  }
  return Rcpp::List::create(Rcpp::Named("top") = top == -INFINITY ? 0.0 : top,
                            Rcpp::Named("any_missing") = any_missing);
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

// Checks a .bed file's header and length (bytes: the whole file's first bytes; size: its length).
// [[Rcpp::export]]
void fsgpu_check_bed(Rcpp::RawVector head, double size, double n_samples, double n_snps) {
  FSGPU_GLUE_BEGIN
  check_bed(RAW(head), static_cast<int64_t>(size), static_cast<int64_t>(n_samples), static_cast<int64_t>(n_snps));
  FSGPU_GLUE_END
}

// read_plink()'s .bim or .fam table (utils::read.table(path, colClasses = classes, col.names =
// columns, comment.char = "", quote = "") without its passes over the text in R): a data frame,
// or NULL when the file is not a plain table of length(columns) fields to a line (then R reads it
// and reports the problem). classes: "character", "numeric" or "integer"; "NA" is missing.
// [[Rcpp::export]]
SEXP fsgpu_read_plink_table(std::string path, Rcpp::CharacterVector columns, Rcpp::CharacterVector classes) {
  FSGPU_GLUE_BEGIN
  std::ifstream in(path, std::ios::binary);
  if (!in) return R_NilValue;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
      for (R_xlen_t r = 0; r < n; ++r) {
        const std::string_view v = value(r);
        SET_STRING_ELT(column, r, v == "NA" ? NA_STRING : Rf_mkCharLen(v.data(), static_cast<int>(v.size())));
      }
      out[f] = column;
    } else if (kind == "numeric" || kind == "integer") {
      // As scan() reads them (R's own number parser); anything else goes back to R.
      const bool whole = kind == "integer";
      Rcpp::NumericVector reals(whole ? 0 : n);
      Rcpp::IntegerVector ints(whole ? n : 0);
      for (R_xlen_t r = 0; r < n; ++r) {
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

// paste0(prefix, seq_len(n)) without R's per-element conversion and concatenation: the names of
// a million unnamed variables cost R a second, this a tenth of that.
// [[Rcpp::export]]
Rcpp::CharacterVector fsgpu_default_names(std::string prefix, int n) {
  Rcpp::CharacterVector out(n);
  std::string name = prefix;
  for (int i = 0; i < n; ++i) {
    name.resize(prefix.size());
    name += std::to_string(i + 1);
    SET_STRING_ELT(out, i, Rf_mkCharLenCE(name.data(), static_cast<int>(name.size()), CE_UTF8));
  }
  return out;
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
