#include "exact_rounding.h"  // first: the threshold draws must round as written (no fma)

#include "interactions.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "interaction_gain.h"
#include "parallel.h"
#include "target_clones.h"

namespace fsgpu {

namespace {

// The level masks of one word of objects: bit i of level[l] is set when ordered[i] == l, of
// `negative` when ordered[i] < 0 (missing); returns whether a code is below -1 or above m - 1.
// ordered: 64 codes in class order, -1 past the class's end.
bool word_masks(const int8_t* ordered, int32_t m, uint64_t* level, uint64_t& negative) {
#if defined(__SSE2__)
  // 16 objects a compare: the byte masks' sign bits are the objects' bits.
  __m128i chunk[4];
  for (int q = 0; q < 4; ++q) chunk[q] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ordered + 16 * q));
  auto bits_of = [&](auto&& mask) {
    uint64_t out = 0;
    for (int q = 0; q < 4; ++q) out |= uint64_t(uint16_t(_mm_movemask_epi8(mask(chunk[q])))) << (16 * q);
    return out;
  };
  negative = bits_of([](__m128i v) { return v; });
  const __m128i below = _mm_set1_epi8(-1), above = _mm_set1_epi8(static_cast<char>(m - 1));
  const uint64_t bad =
      bits_of([&](__m128i v) { return _mm_or_si128(_mm_cmplt_epi8(v, below), _mm_cmpgt_epi8(v, above)); });
  for (int32_t l = 0; l < m; ++l) {
    const __m128i code = _mm_set1_epi8(static_cast<char>(l));
    level[l] = bits_of([&](__m128i v) { return _mm_cmpeq_epi8(v, code); });
  }
  return bad != 0;
#else
  bool bad = false;
  negative = 0;
  for (int32_t l = 0; l < m; ++l) level[l] = 0;
  for (int32_t i = 0; i < 64; ++i) {
    const int code = ordered[i];
    bad |= code < -1 || code >= m;
    negative |= uint64_t(code < 0) << i;
    if (code >= 0 && code < m) level[code] |= uint64_t(1) << i;
  }
  return bad;
#endif
}

// The bitmap words of one variable from its codes (sample order), a 64-object word at a time.
// sample_at[pos] is the sample at class-sorted position pos. valid gets the objects with a value;
// returns whether any value is missing. Throws on a code out of range.
bool variable_words(const InteractionBits& b, const ClassLayout& layout, const int32_t* sample_at, int64_t var,
                    const int8_t* codes, uint64_t* bits, int32_t* count, uint64_t* valid) {
  const int32_t m = b.n_levels, counted = m - 1;
  bool missing = false;
  alignas(16) int8_t ordered[64];
  for (int32_t c = 0; c < b.n_classes; ++c) {
    const int32_t end = layout.class_start[c + 1];
    int32_t pos = layout.class_start[c];
    for (int32_t w = b.class_word[c]; w < b.class_word[c + 1]; ++w, pos += 64) {
      const int32_t n = std::min(64, end - pos);
      for (int32_t i = 0; i < n; ++i) ordered[i] = codes[sample_at[pos + i]];
      for (int32_t i = n; i < 64; ++i) ordered[i] = -1;
      uint64_t level[kMaxInteractionLevels], negative;
      if (word_masks(ordered, m, level, negative))
        throw std::invalid_argument("variable " + std::to_string(var + 1) + " has a code outside 0.." +
                                    std::to_string(m - 1));
      const uint64_t objects = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
      for (int32_t l = 0; l < counted; ++l) bits[size_t(l) * b.words + w] = level[l];
      for (int32_t l = 0; l < m; ++l) count[l * b.n_classes + c] += __builtin_popcountll(level[l]);
      valid[w] = ~negative & objects;
      missing |= valid[w] != objects;
    }
  }
  return missing;
}

// The same from 64 objects of sample order at a time, without gathering codes into class order:
// each class's objects of a 64-object chunk are pulled out of the chunk's level masks with PEXT
// (member: the chunk's class masks, [chunk][class]) and appended to the class's words. A few
// instructions per 64 objects and level instead of a gather per object; bits, count and valid
// must hold zeros on entry. Returns whether any value is missing; throws on a code out of range.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FSGPU_HAVE_PEXT_WORDS 1
__attribute__((target("bmi2,popcnt"))) bool variable_words_pext(const InteractionBits& b, const uint64_t* member,
                                                                  int64_t var, const int8_t* codes, uint64_t* bits,
                                                                  int32_t* count, uint64_t* valid) {
  const int32_t m = b.n_levels, counted = m - 1, n_classes = b.n_classes, n = b.n_objects;
  thread_local std::vector<int64_t> at;  // per class: the next bit of its words
  at.resize(size_t(n_classes));
  for (int32_t c = 0; c < n_classes; ++c) at[c] = int64_t(b.class_word[c]) * 64;
  auto append = [](uint64_t* words, int64_t bit, uint64_t value, int32_t k) {
    const int64_t w = bit >> 6;
    const int shift = int(bit & 63);
    words[w] |= value << shift;
    if (shift + k > 64) words[w + 1] |= value >> (64 - shift);
  };
  uint64_t any_negative = 0;
  alignas(16) int8_t tail[64];
  for (int32_t s0 = 0, chunk = 0; s0 < n; s0 += 64, ++chunk) {
    const int32_t here = std::min(64, n - s0);
    const int8_t* chunk_codes = codes + s0;
    if (here < 64) {
      std::copy_n(codes + s0, here, tail);
      std::fill(tail + here, tail + 64, int8_t(-1));
      chunk_codes = tail;
    }
    uint64_t level[kMaxInteractionLevels], negative;
    if (word_masks(chunk_codes, m, level, negative))
      throw std::invalid_argument("variable " + std::to_string(var + 1) + " has a code outside 0.." +
                                  std::to_string(m - 1));
    const uint64_t objects = here == 64 ? ~uint64_t(0) : (uint64_t(1) << here) - 1;
    any_negative |= negative & objects;
    for (int32_t c = 0; c < n_classes; ++c) {
      const uint64_t in_class = member[int64_t(chunk) * n_classes + c];
      if (!in_class) continue;
      const int32_t k = int32_t(_mm_popcnt_u64(in_class));
      for (int32_t l = 0; l < counted; ++l)
        append(bits + size_t(l) * b.words, at[c], _pext_u64(level[l], in_class), k);
      for (int32_t l = 0; l < m; ++l) count[l * n_classes + c] += int32_t(_mm_popcnt_u64(level[l] & in_class));
      append(valid, at[c], _pext_u64(~negative, in_class), k);
      at[c] += k;
    }
  }
  return any_negative != 0;
}

// PEXT is one instruction on Intel since Haswell and AMD since Zen 3; AMD's Zen 1 and 2 run it
// in microcode, slower than the gather.
bool fast_pext() {
  static const bool fast = __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
                           !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
  return fast;
}
#endif

}  // namespace

InteractionBits build_interaction_bits(const ClassLayout& layout, int64_t n_vars, int32_t n_levels,
                                       const VariableCodes& codes_of, int threads) {
  if (n_levels < 2 || n_levels > kMaxInteractionLevels)
    throw std::invalid_argument("variables must have between 2 and " + std::to_string(kMaxInteractionLevels) +
                                " levels");
  InteractionBits b;
  b.n_objects = layout.n_samples;
  b.n_classes = layout.n_classes;
  b.n_levels = n_levels;
  b.n_vars = n_vars;
  b.class_word.assign(1, 0);
  for (int32_t c = 0; c < layout.n_classes; ++c) {
    const int32_t size = layout.class_start[c + 1] - layout.class_start[c];
    b.class_size.push_back(size);
    b.class_word.push_back(b.class_word.back() + (size + 63) / 64);
  }
  b.words = b.class_word.back();
  const int32_t counted = n_levels - 1;
  // Zeroed variable by variable on the threads below, not all on this one first (256 MB for a
  // million variables of 1,024 objects).
  b.bits.resize(size_t(n_vars) * counted * b.words);
  b.has_missing.assign(size_t(n_vars), 0);
  b.level_count.assign(size_t(n_vars) * n_levels * b.n_classes, 0);
  std::vector<int32_t> sample_at(layout.n_samples);
  for (int32_t s = 0; s < layout.n_samples; ++s) sample_at[layout.position[s]] = s;
  std::vector<std::vector<uint64_t>> valid_of(static_cast<size_t>(n_vars));  // only for variables with missing values
#ifdef FSGPU_HAVE_PEXT_WORDS
  // Per 64 objects of sample order, each class's members (variable_words_pext).
  const bool pext = fast_pext();
  std::vector<uint64_t> member;
  if (pext) {
    member.assign(size_t((layout.n_samples + 63) / 64) * b.n_classes, 0);
    for (int32_t s = 0; s < layout.n_samples; ++s)
      member[size_t(s / 64) * b.n_classes + layout.class_of[layout.position[s]]] |= uint64_t(1) << (s % 64);
  }
#endif
  parallel_for(n_vars, threads, 64, [&](int64_t begin, int64_t end, int) {
    std::vector<int8_t> codes(layout.n_samples);
    std::vector<uint64_t> valid(b.words);
    for (int64_t v = begin; v < end; ++v) {
      codes_of(v, codes.data());
      uint64_t* bits = b.bits.data() + size_t(v) * counted * b.words;
      std::fill(bits, bits + size_t(counted) * b.words, 0);
      int32_t* count = b.level_count.data() + size_t(v) * n_levels * b.n_classes;
      bool missing;
#ifdef FSGPU_HAVE_PEXT_WORDS
      if (pext) {
        std::fill(valid.begin(), valid.end(), 0);
        missing = variable_words_pext(b, member.data(), v, codes.data(), bits, count, valid.data());
      } else
#endif
        missing = variable_words(b, layout, sample_at.data(), v, codes.data(), bits, count, valid.data());
      if (missing) {
        b.has_missing[v] = 1;
        valid_of[v] = valid;
      }
    }
  });
  if (std::any_of(b.has_missing.begin(), b.has_missing.end(), [](uint8_t m) { return m != 0; })) {
    // Variables without missing values are valid on every object of their class.
    std::vector<uint64_t> all(b.words, 0);
    for (int32_t c = 0; c < b.n_classes; ++c)
      for (int32_t w = b.class_word[c], left = b.class_size[c]; w < b.class_word[c + 1]; ++w, left -= 64)
        all[w] = left >= 64 ? ~uint64_t(0) : (uint64_t(1) << left) - 1;
    b.valid.resize(size_t(n_vars) * b.words);
    for (int64_t v = 0; v < n_vars; ++v)
      std::copy_n(b.has_missing[v] ? valid_of[v].begin() : all.begin(), b.words, b.valid.begin() + v * b.words);
  }
  return b;
}

InteractionBest::InteractionBest(int64_t n_vars, int32_t dimensions_, bool with_tuples)
    : dimensions(dimensions_), gain(size_t(n_vars), -std::numeric_limits<double>::infinity()) {
  if (with_tuples) tuple.assign(size_t(n_vars) * dimensions, -1);
}

namespace {

// Whether (gain, tuple a) comes before (gain2, tuple b): the larger gain, then the smaller tuple.
bool tuple_before(double gain, const int32_t* a, double gain2, const int32_t* b, int32_t k) {
  if (gain != gain2) return gain > gain2;
  if (!a || !b) return false;
  return std::lexicographical_compare(a, a + k, b, b + k);
}

}  // namespace

void InteractionBest::offer(int64_t var, double g, const int32_t* t) {
  int32_t* mine = tuple.empty() ? nullptr : tuple.data() + var * dimensions;
  if (gain[var] == -std::numeric_limits<double>::infinity() || tuple_before(g, t, gain[var], mine, dimensions)) {
    gain[var] = g;
    if (mine) std::copy_n(t, dimensions, mine);
  }
}

void InteractionBest::merge(const InteractionBest& other) {
  for (size_t v = 0; v < gain.size(); ++v)
    if (other.gain[v] != -std::numeric_limits<double>::infinity())
      offer(static_cast<int64_t>(v), other.gain[v], other.tuple.empty() ? nullptr : other.tuple.data() + v * dimensions);
}

bool hit_before(const InteractionHit& a, const InteractionHit& b) {
  for (int32_t i = 0; i < kMaxInteractionDimensions; ++i)
    if (a.tuple[i] != b.tuple[i]) return a.tuple[i] < b.tuple[i];
  return a.var < b.var;
}

void check_hit_count(int64_t n_hits, const InteractionTask& task) {
  if (n_hits > task.max_hits)
    throw std::runtime_error("more than " + std::to_string(task.max_hits) +
                             " (tuple, variable) gains exceed the threshold: raise the threshold or the limit");
}

void merge_discretization_hits(std::vector<InteractionHit>& into, const std::vector<InteractionHit>& later) {
  std::vector<InteractionHit> merged;
  merged.reserve(into.size() + later.size());
  size_t a = 0, b = 0;
  while (a < into.size() || b < later.size()) {
    if (b == later.size() || (a < into.size() && hit_before(into[a], later[b]))) {
      merged.push_back(into[a++]);
    } else if (a == into.size() || hit_before(later[b], into[a])) {
      merged.push_back(later[b++]);
    } else {  // the same (tuple, variable): MDFS keeps the first discretization unless one beats it
      merged.push_back(later[b].gain > into[a].gain ? later[b] : into[a]);
      ++a, ++b;
    }
  }
  into.swap(merged);
}

}  // namespace fsgpu

namespace fsgpu {

namespace {

// The combinations of a tuple's levels that are counted by AND + popcount: digit d of a
// combination is a level of the tuple's d-th variable below m - 1, or m - 1 for "any level".
// Without missing values, combinations with at most one counted level are known already (class
// sizes and level counts); with them, every combination is counted over the tuple's valid objects.
struct CountedCombinations {
  std::vector<int32_t> combination;  // cell indices
  std::vector<int8_t> digits;        // [combination][k]
  CountedCombinations(int32_t k, int32_t m, bool all) {
    const int32_t cells = tuple_cells(k, m);
    for (int32_t cell = 0; cell < cells; ++cell) {
      int32_t counted = 0;
      for (int32_t d = 0, rest = cell; d < k; ++d, rest /= m) counted += rest % m != m - 1;
      if (!all && counted < 2) continue;
      combination.push_back(cell);
      for (int32_t d = 0, rest = cell; d < k; ++d, rest /= m) digits.push_back(static_cast<int8_t>(rest % m));
    }
  }
};

// A worker's scratch for one tuple at a time.
struct TupleScratch {
  std::vector<int32_t> counts;  // [class][cell]
  std::vector<double> gains;    // [k]
};

// The counted cells of a pair of variables with L + 1 levels, the counters in registers.
template <int L>
FSGPU_TARGET_CLONES("popcnt", "default")
void count_pair(const InteractionBits& b, const int32_t* tuple, int32_t* counts) {
  constexpr int M = L + 1;
  for (int32_t c = 0; c < b.n_classes; ++c) {
    int32_t n[L][L] = {};
    const uint64_t* x[L];
    const uint64_t* y[L];
    for (int l = 0; l < L; ++l) {
      x[l] = b.level_bits(tuple[0], l);
      y[l] = b.level_bits(tuple[1], l);
    }
    for (int32_t w = b.class_word[c]; w < b.class_word[c + 1]; ++w)
      for (int la = 0; la < L; ++la)
        for (int lb = 0; lb < L; ++lb) n[la][lb] += __builtin_popcountll(x[la][w] & y[lb][w]);
    for (int la = 0; la < L; ++la)
      for (int lb = 0; lb < L; ++lb) counts[size_t(c) * M * M + la + M * lb] = n[la][lb];
  }
}

// The full table of a pair (known and counted cells in place) and its condH; the usual level
// counts as constants, so that the loops unroll.
template <int M>
int64_t pair_entropy(int32_t* counts, int32_t n_classes, const GainTableView& view) {
  complete_counts(counts, 2, M, n_classes);
  return tuple_cond_entropy(counts, 2, M, n_classes, view, -1);
}

int64_t pair_entropy(int32_t* counts, int32_t m, int32_t n_classes, const GainTableView& view) {
  switch (m) {
    case 2: return pair_entropy<2>(counts, n_classes, view);
    case 3: return pair_entropy<3>(counts, n_classes, view);
    case 4: return pair_entropy<4>(counts, n_classes, view);
    default:
      complete_counts(counts, 2, m, n_classes);
      return tuple_cond_entropy(counts, 2, m, n_classes, view, -1);
  }
}

// Counts every cell of `tuple`'s table ([class][cell], cell digits as in interaction_gain.h).
FSGPU_TARGET_CLONES("popcnt", "default")
void count_tuple(const InteractionBits& b, const CountedCombinations& counted, const int32_t* tuple, int32_t k,
                 bool missing, int32_t* counts) {
  const int32_t m = b.n_levels, cells = tuple_cells(k, m);
  if (!missing) {
    // The known cells: class sizes (no counted level) and level counts (one).
    for (int32_t c = 0; c < b.n_classes; ++c) {
      int32_t* table = counts + size_t(c) * cells;
      table[cells - 1] = b.class_size[c];
      for (int32_t d = 0, weight = 1; d < k; ++d, weight *= m)
        for (int32_t level = 0; level < m - 1; ++level)
          table[cells - 1 - (m - 1 - level) * weight] =
              b.level_count[(size_t(tuple[d]) * m + level) * b.n_classes + c];
    }
  }
  if (k == 2 && !missing) {
    switch (m) {
      case 2: return count_pair<1>(b, tuple, counts);
      case 3: return count_pair<2>(b, tuple, counts);
      case 4: return count_pair<3>(b, tuple, counts);
      default: break;
    }
  }
  const uint64_t* rows[kMaxInteractionDimensions];
  const size_t n_combinations = counted.combination.size();
  for (size_t i = 0; i < n_combinations; ++i) {
    const int8_t* digits = counted.digits.data() + i * k;
    int32_t n_rows = 0;
    for (int32_t d = 0; d < k; ++d) {
      if (digits[d] != m - 1)
        rows[n_rows++] = b.level_bits(tuple[d], digits[d]);
      else if (missing && b.has_missing[tuple[d]])
        rows[n_rows++] = b.valid_bits(tuple[d]);
    }
    for (int32_t c = 0; c < b.n_classes; ++c) {
      int32_t n = 0;
      for (int32_t w = b.class_word[c]; w < b.class_word[c + 1]; ++w) {
        uint64_t x = ~uint64_t(0);
        for (int32_t r = 0; r < n_rows; ++r) x &= rows[r][w];
        n += __builtin_popcountll(x);
      }
      counts[size_t(c) * cells + counted.combination[i]] = n;
    }
  }
}

// The counted cells of one class of a pair: n[la][lb] = popcount of x[la] & y[lb] over the
// class's words [w0, w1).
template <int L>
struct ScalarCount {
  static void count(const uint64_t* const* x, const uint64_t* const* y, int32_t w0, int32_t w1, int32_t (&n)[L][L]) {
    for (int32_t w = w0; w < w1; ++w)
      for (int la = 0; la < L; ++la)
        for (int lb = 0; lb < L; ++lb) n[la][lb] += __builtin_popcountll(x[la][w] & y[lb][w]);
  }
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FSGPU_WIDE_POPCOUNT 1
// The same with AVX-512 VPOPCNTQ, 8 words at a time (the last ones masked). Inlined only into
// pair_row_wide(), which the CPUs that have it run.
template <int L>
struct WideCount {
  __attribute__((target("avx512f,avx512vpopcntdq")))
  static void count(const uint64_t* const* x, const uint64_t* const* y, int32_t w0, int32_t w1, int32_t (&n)[L][L]) {
    __m512i sum[L][L];
    for (int la = 0; la < L; ++la)
      for (int lb = 0; lb < L; ++lb) sum[la][lb] = _mm512_setzero_si512();
    for (int32_t w = w0; w < w1; w += 8) {
      const __mmask8 mask = w1 - w >= 8 ? __mmask8(0xFF) : __mmask8((1u << (w1 - w)) - 1);
      __m512i yv[L];
      for (int lb = 0; lb < L; ++lb) yv[lb] = _mm512_maskz_loadu_epi64(mask, y[lb] + w);
      for (int la = 0; la < L; ++la) {
        const __m512i xv = _mm512_maskz_loadu_epi64(mask, x[la] + w);
        for (int lb = 0; lb < L; ++lb)
          sum[la][lb] = _mm512_add_epi64(sum[la][lb], _mm512_popcnt_epi64(_mm512_and_si512(xv, yv[lb])));
      }
    }
    // The lanes' sum, once a pair of levels, through memory: GCC 12's shuffle and cast
    // intrinsics start from an "undefined" register that -Wmaybe-uninitialized reports.
    alignas(64) uint64_t lanes[8];
    for (int la = 0; la < L; ++la)
      for (int lb = 0; lb < L; ++lb) {
        _mm512_store_si512(lanes, sum[la][lb]);
        uint64_t total = 0;
        for (uint64_t lane : lanes) total += lane;
        n[la][lb] += static_cast<int32_t>(total);
      }
  }
};
#endif

// condH (fixed point) of the pairs (f, p), p in [lo, hi), of variables without missing values
// with M levels and C classes, every count in registers: the (M-1)^2 counted cells per class by
// AND + popcount, the rest from f's and p's level counts and the class sizes, and the n log2 n
// terms summed straight from the tables. The sums are exact integers, so the value is
// pair_entropy()'s bit for bit (pair_row() runs it). visit(p, condH) runs for every pair; skip(p) tells the partners
// to leave out (those with missing values: the general path counts them).
template <int M, int C, class Count, class Skip, class Visit>
__attribute__((always_inline)) inline void pair_row_body(const InteractionBits& b, const GainTableView& view, int64_t f,
                                                        int64_t lo, int64_t hi, Skip& skip, Visit& visit) {
  constexpr int L = M - 1;
  const uint64_t* x[L];
  int32_t row[C][L], size[C], word[C + 1];
  for (int la = 0; la < L; ++la) x[la] = b.level_bits(f, la);
  for (int c = 0; c < C; ++c) {
    size[c] = b.class_size[c];
    for (int la = 0; la < L; ++la) row[c][la] = b.level_count[(size_t(f) * M + la) * C + c];
  }
  for (int c = 0; c <= C; ++c) word[c] = b.class_word[c];
  const int64_t stride = view.stride;
  for (int64_t p = lo; p < hi; ++p) {
    if (skip(p)) continue;
    const uint64_t* y[L];
    for (int lb = 0; lb < L; ++lb) y[lb] = b.level_bits(p, lb);
    const int32_t* column = b.level_count.data() + size_t(p) * M * C;  // [level][class]
    int32_t t[C][M][M];  // [class][f's level][p's level]
    for (int c = 0; c < C; ++c) {
      int32_t n[L][L] = {};
      Count::count(x, y, word[c], word[c + 1], n);
      int32_t last = size[c];
      for (int la = 0; la < L; ++la) {
        int32_t rest = row[c][la];
        for (int lb = 0; lb < L; ++lb) {
          t[c][la][lb] = n[la][lb];
          rest -= n[la][lb];
        }
        t[c][la][L] = rest;
        last -= row[c][la];
      }
      for (int lb = 0; lb < L; ++lb) {
        int32_t rest = column[lb * C + c];
        for (int la = 0; la < L; ++la) rest -= n[la][lb];
        t[c][L][lb] = rest;
        last -= rest;
      }
      t[c][L][L] = last;
    }
    int64_t h = 0;
    for (int la = 0; la < M; ++la)
      for (int lb = 0; lb < M; ++lb) {
        int32_t total = 0;
        int64_t classes = 0;
        for (int c = 0; c < C; ++c) {
          total += t[c][la][lb];
          classes += view.cell[c * stride + t[c][la][lb]];
        }
        h += view.cell_total[total] - classes;
      }
    visit(p, h);
  }
}

template <int M, int C, class Skip, class Visit>
FSGPU_TARGET_CLONES("popcnt", "default")
void pair_row_narrow(const InteractionBits& b, const GainTableView& view, int64_t f, int64_t lo, int64_t hi,
                     Skip& skip, Visit& visit) {
  pair_row_body<M, C, ScalarCount<M - 1>>(b, view, f, lo, hi, skip, visit);
}

#ifdef FSGPU_WIDE_POPCOUNT
template <int M, int C, class Skip, class Visit>
__attribute__((target("avx512f,avx512vpopcntdq,popcnt")))
void pair_row_wide(const InteractionBits& b, const GainTableView& view, int64_t f, int64_t lo, int64_t hi, Skip& skip,
                   Visit& visit) {
  pair_row_body<M, C, WideCount<M - 1>>(b, view, f, lo, hi, skip, visit);
}
#endif

// Level and class counts as template arguments of pair_row().
template <int N>
using Int = std::integral_constant<int, N>;

// pair_row_body() with the widest popcount this CPU has, where it pays: the vector sums cost
// more than they save below 16 words (1,024 objects) per class.
template <int M, int C, class Skip, class Visit>
void pair_row(const InteractionBits& b, const GainTableView& view, int64_t f, int64_t lo, int64_t hi, Skip&& skip,
              Visit&& visit) {
#ifdef FSGPU_WIDE_POPCOUNT
  static const bool wide = __builtin_cpu_supports("avx512vpopcntdq");
  int32_t fewest_words = b.words;
  for (int c = 0; c < C; ++c) fewest_words = std::min(fewest_words, b.class_word[c + 1] - b.class_word[c]);
  if (wide && fewest_words >= 16) return pair_row_wide<M, C>(b, view, f, lo, hi, skip, visit);
#endif
  pair_row_narrow<M, C>(b, view, f, lo, hi, skip, visit);
}

// Calls visit() for every way of filling positions [from, to) of `tuple` with ascending indices
// above tuple[from - 1] (or from 0) and below `limit`, in lexicographic order.
template <class Visit>
void for_each_ascending(int32_t* tuple, int32_t from, int32_t to, int64_t limit, Visit&& visit) {
  if (from >= to) {
    visit();
    return;
  }
  tuple[from] = from > 0 ? tuple[from - 1] + 1 : 0;
  for (int32_t d = from + 1; d < to; ++d) tuple[d] = tuple[d - 1] + 1;
  if (tuple[to - 1] >= limit) return;
  while (true) {
    visit();
    int32_t d = to - 1;
    while (d >= from && tuple[d] == limit - (to - d)) --d;
    if (d < from) return;
    ++tuple[d];
    for (int32_t e = d + 1; e < to; ++e) tuple[e] = tuple[e - 1] + 1;
  }
}

}  // namespace

void check_interaction_task(const InteractionBits& b, const InteractionTask& task) {
  const int32_t k = task.dimensions;
  if (k < 1 || k > kMaxInteractionDimensions)
    throw std::invalid_argument("dimensions must be between 1 and " + std::to_string(kMaxInteractionDimensions));
  if (std::pow(double(b.n_levels), k) * b.n_classes > kMaxInteractionCells)
    throw std::invalid_argument(std::to_string(b.n_levels) + " levels in " + std::to_string(k) +
                                " dimensions make more than " + std::to_string(kMaxInteractionCells) +
                                " cells per tuple; use fewer divisions or dimensions");
  if (task.n_real < k) throw std::invalid_argument("fewer variables than dimensions");
  if (task.n_real > b.n_vars) throw std::invalid_argument("more real variables than variables");
  if (!task.interesting.empty() && static_cast<int64_t>(task.interesting.size()) != task.n_real)
    throw std::invalid_argument("the interesting variables must be flagged for every real variable");
}

GainTables::GainTables(const InteractionBits& b, double xi)
    : n_classes(b.n_classes), n_levels(b.n_levels), n_objects(b.n_objects) {
  if (!(xi > 0) || !std::isfinite(xi)) throw std::invalid_argument("the pseudo-count must be positive");
  const int32_t smallest = *std::min_element(b.class_size.begin(), b.class_size.end());
  double total = 0;
  for (int32_t size : b.class_size) {
    pseudo.push_back(double(size) / double(smallest) * xi);
    total += pseudo.back();
  }
  auto plog2 = [](double x) { return std::llround(x * std::log2(x) * kGainScale); };
  const int32_t stride = n_objects + 1;
  cell.resize(size_t(n_classes) * stride);
  merged.resize(cell.size());
  cell_total.resize(stride);
  merged_total.resize(stride);
  const double m = n_levels;
  for (int32_t n = 0; n < stride; ++n) {
    for (int32_t c = 0; c < n_classes; ++c) {
      cell[size_t(c) * stride + n] = plog2(n + pseudo[c]);
      merged[size_t(c) * stride + n] = plog2(n + m * pseudo[c]);
    }
    cell_total[n] = plog2(n + total);
    merged_total[n] = plog2(n + m * total);
  }
}

GainTableView GainTables::view() const {
  GainTableView v;
  v.n_classes = n_classes;
  v.n_levels = n_levels;
  v.stride = n_objects + 1;
  v.cell = cell.data();
  v.cell_total = cell_total.data();
  v.merged = merged.data();
  v.merged_total = merged_total.data();
  return v;
}

RowVector<uint64_t> word_major_bits(const InteractionBits& b, int64_t stride, int32_t level_room, int threads) {
  // Every entry is written once by the threads, the padding variables' and the levels past the
  // last plane 0, with no zero fill on one thread first (79 MB for 204,800 variables of 1,024
  // objects).
  RowVector<uint64_t> out(size_t(stride) * b.words * level_room);
  // Blocks of 64 variables, so that both sides of the transposition stay in cache.
  parallel_for((stride + 63) / 64, threads, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t v_end = std::min<int64_t>(stride, block * 64 + 64);
      for (int32_t level = 0; level < level_room; ++level)
        for (int32_t w = 0; w < b.words; ++w) {
          uint64_t* row = out.data() + (size_t(w) * level_room + level) * stride;
          for (int64_t v = block * 64; v < v_end; ++v)
            row[v] = v < b.n_vars && level < b.n_levels - 1 ? b.level_bits(v, level)[w] : 0;
        }
    }
  });
  return out;
}

std::vector<int64_t> single_entropies(const InteractionBits& b, const GainTableView& view, int threads) {
  const int32_t m = b.n_levels;
  std::vector<int64_t> alone(size_t(b.n_vars));
  parallel_for(b.n_vars, threads, 1024, [&](int64_t begin, int64_t end, int) {
    std::vector<int32_t> table(size_t(m) * m * b.n_classes);
    for (int64_t v = begin; v < end; ++v) {
      // v on axis 1 of a pair whose other variable has every object at level 0.
      std::fill(table.begin(), table.end(), 0);
      for (int32_t c = 0; c < b.n_classes; ++c)
        for (int32_t level = 0; level < m; ++level)
          table[size_t(c) * m * m + m * level] = b.level_count[(size_t(v) * m + level) * b.n_classes + c];
      alone[v] = tuple_cond_entropy(table.data(), 2, m, b.n_classes, view, 0);
    }
  });
  return alone;
}

InteractionBest cpu_interactions(const InteractionBits& b, const GainTables& tables, const InteractionTask& task,
                                 int threads, const Checkpoint& between_slices) {
  check_interaction_task(b, task);
  const int32_t k = task.dimensions, m = b.n_levels;
  const int32_t cells = tuple_cells(k, m);
  const CountedCombinations known_marginals(k, m, false), everything(k, m, true);
  const GainTableView view = tables.view();
  const int n_workers = std::max(1, threads);
  std::vector<InteractionBest> best(n_workers, InteractionBest(b.n_vars, k, task.with_tuples));
  std::atomic<int64_t> n_hits{0};  // over the workers, for the limit
  std::vector<TupleScratch> scratch(n_workers);
  for (TupleScratch& s : scratch) {
    s.counts.resize(size_t(cells) * b.n_classes);
    s.gains.resize(k);
  }
  const std::vector<int64_t> alone = k == 2 ? single_entropies(b, view, n_workers) : std::vector<int64_t>();
  const int64_t n_real = task.n_real, n_contrast = b.n_vars - task.n_real;
  // Jobs: real tuples by their first variable, then contrast tuples by their contrast variable
  // (work falls with the index; dynamic scheduling evens it out). From k = 3 on, a first
  // variable's tuples take seconds (k = 3 over 10,000 variables), too long between interrupt
  // checks: real tuples go by their first two variables and contrast ones by (contrast
  // variable, first real variable). Results do not depend on the order of the tuples.
  const bool by_two = k >= 3;
  const int64_t real_jobs = by_two ? n_real * n_real : n_real;
  const int64_t jobs = real_jobs + (by_two ? n_contrast * n_real : n_contrast);
  // Slices of about 5e8 word-cell-class counts (0.2 s of 2 threads); a slice holds whole jobs.
  const double tuples = (std::pow(double(n_real), k) / std::tgamma(k + 1.0) +
                         double(n_contrast) * std::pow(double(n_real), k - 1) / std::tgamma(double(k))) *
                        b.words * cells * b.n_classes;
  const int64_t slices = std::max<int64_t>(1, static_cast<int64_t>(tuples / 5e8));
  // Pairs of 2 to 4 levels and 2 to 4 classes: a job is a row of pairs (a first real variable and
  // the real ones after it, or a contrast variable and the real ones), counted by pair_row();
  // pairs with missing values go through the general path (evaluate). A row's first variable
  // keeps its best pair in registers: the pairs come in ascending order, so the first best is
  // the smallest tuple, as offer() would choose.
  const bool fast_pairs = k == 2 && m <= 4 && b.n_classes <= 4;
  auto pair_job = [&](auto levels, auto classes, int64_t job, InteractionBest& mine, auto& evaluate, int32_t* tuple,
                      auto& collect) {
    constexpr int M = decltype(levels)::value, C = decltype(classes)::value;
    const bool contrast = job >= real_jobs;
    const int64_t f = contrast ? n_real + (job - real_jobs) : job;
    int64_t lo = f + 1, hi = n_real;
    if (contrast) {
      lo = std::max<int64_t>(0, task.first_begin);
      hi = task.first_end < 0 ? n_real : std::min(n_real, task.first_end);
    } else if (!task.first_in_range(f)) {
      return;
    }
    double best_gain = -std::numeric_limits<double>::infinity();
    int64_t best_partner = -1;
    // Pairs with missing values: the general path, tuple ascending.
    auto general = [&](int64_t p) {
      tuple[0] = static_cast<int32_t>(std::min(f, p));
      tuple[1] = static_cast<int32_t>(std::max(f, p));
      evaluate();
    };
    if (b.any_missing() && b.has_missing[f]) {
      for (int64_t p = lo; p < hi; ++p) general(p);
      return;
    }
    auto skip = [&](int64_t p) {
      if (!b.any_missing() || !b.has_missing[p]) return false;
      general(p);
      return true;
    };
    pair_row<M, C>(b, view, f, lo, hi, skip, [&](int64_t p, int64_t full) {
      const double gain_f = gain_bits(alone[p] - full);
      if (gain_f > best_gain) {
        best_gain = gain_f;
        best_partner = p;
      }
      if (contrast) return;
      const double gains[2] = {gain_f, gain_bits(alone[f] - full)};
      tuple[0] = static_cast<int32_t>(f);
      tuple[1] = static_cast<int32_t>(p);
      if (!(gains[1] < mine.gain[p])) mine.offer(p, gains[1], tuple);
      collect(gains);
    });
    if (best_partner < 0) return;
    tuple[0] = static_cast<int32_t>(std::min(f, best_partner));
    tuple[1] = static_cast<int32_t>(std::max(f, best_partner));
    mine.offer(f, best_gain, tuple);
  };
  // Pair jobs go to workers 64 at a time (most of a first variable's are empty: second <= first).
  sliced_parallel_for(jobs, slices, n_workers, by_two ? 64 : 1, between_slices, [&](int64_t job, int worker) {
    TupleScratch& s = scratch[worker];
    InteractionBest& mine = best[worker];
    int32_t tuple[kMaxInteractionDimensions];
    const bool contrast = job >= real_jobs;
    // Collects the gains of a real tuple above the threshold (into the worker's own list).
    auto collect = [&](const double* gains) {
      if (contrast || !task.collects(tuple)) return;
      for (int32_t i = 0; i < k; ++i) {
        if (!(gains[i] > task.threshold)) continue;
        InteractionHit hit;
        std::copy_n(tuple, k, hit.tuple);
        hit.var = tuple[i];
        hit.gain = gains[i];
        mine.hits.push_back(hit);
        check_hit_count(++n_hits, task);
      }
    };
    auto evaluate = [&] {
      bool missing = false;
      for (int32_t i = 0; i < k; ++i) missing |= b.any_missing() && b.has_missing[tuple[i]];
      count_tuple(b, missing ? everything : known_marginals, tuple, k, missing, s.counts.data());
      if (k == 2 && !missing) {
        // A pair without one variable is the other alone: its entropy is known.
        int32_t* t = s.counts.data();
        const int64_t full = pair_entropy(t, m, b.n_classes, view);
        const double gains[2] = {gain_bits(alone[tuple[1]] - full), gain_bits(alone[tuple[0]] - full)};
        if (!contrast) mine.offer(tuple[0], gains[0], tuple);
        mine.offer(tuple[1], gains[1], tuple);
        collect(gains);
        return;
      }
      complete_counts(s.counts.data(), k, m, b.n_classes);
      if (contrast) {
        const int64_t full = tuple_cond_entropy(s.counts.data(), k, m, b.n_classes, view, -1);
        mine.offer(tuple[k - 1], gain_bits(tuple_cond_entropy(s.counts.data(), k, m, b.n_classes, view, k - 1) - full),
                   tuple);
        return;
      }
      tuple_gains(s.counts.data(), k, m, b.n_classes, view, s.gains.data());
      for (int32_t i = 0; i < k; ++i) mine.offer(tuple[i], s.gains[i], tuple);
      collect(s.gains.data());
    };
    if (fast_pairs) {
      switch (m * 8 + b.n_classes) {
        case 2 * 8 + 2: return pair_job(Int<2>(), Int<2>(), job, mine, evaluate, tuple, collect);
        case 2 * 8 + 3: return pair_job(Int<2>(), Int<3>(), job, mine, evaluate, tuple, collect);
        case 2 * 8 + 4: return pair_job(Int<2>(), Int<4>(), job, mine, evaluate, tuple, collect);
        case 3 * 8 + 2: return pair_job(Int<3>(), Int<2>(), job, mine, evaluate, tuple, collect);
        case 3 * 8 + 3: return pair_job(Int<3>(), Int<3>(), job, mine, evaluate, tuple, collect);
        case 3 * 8 + 4: return pair_job(Int<3>(), Int<4>(), job, mine, evaluate, tuple, collect);
        case 4 * 8 + 2: return pair_job(Int<4>(), Int<2>(), job, mine, evaluate, tuple, collect);
        case 4 * 8 + 3: return pair_job(Int<4>(), Int<3>(), job, mine, evaluate, tuple, collect);
        case 4 * 8 + 4: return pair_job(Int<4>(), Int<4>(), job, mine, evaluate, tuple, collect);
      }
    }
    if (contrast) {
      const int64_t c = by_two ? (job - real_jobs) / n_real : job - real_jobs;
      tuple[k - 1] = static_cast<int32_t>(n_real + c);
      if (k == 1) {
        if (task.first_in_range(n_real + c)) evaluate();
        return;
      }
      // The real variables before the contrast one, their first in the task's range.
      if (by_two) {
        const int64_t first = (job - real_jobs) % n_real;
        if (!task.first_in_range(first)) return;
        tuple[0] = static_cast<int32_t>(first);
        for_each_ascending(tuple, 1, k - 1, n_real, evaluate);
        return;
      }
      for (int64_t first = std::max<int64_t>(0, task.first_begin); first < n_real && task.first_in_range(first);
           ++first) {
        tuple[0] = static_cast<int32_t>(first);
        for_each_ascending(tuple, 1, k - 1, n_real, evaluate);
      }
    } else if (by_two) {
      const int64_t first = job / n_real, second = job % n_real;
      if (second <= first || first > n_real - k || !task.first_in_range(first)) return;
      tuple[0] = static_cast<int32_t>(first);
      tuple[1] = static_cast<int32_t>(second);
      for_each_ascending(tuple, 2, k, n_real, evaluate);
    } else {
      if (job > n_real - k || !task.first_in_range(job)) return;
      tuple[0] = static_cast<int32_t>(job);
      for_each_ascending(tuple, 1, k, n_real, evaluate);
    }
  });
  for (int w = 1; w < n_workers; ++w) {
    best[0].merge(best[w]);
    best[0].hits.insert(best[0].hits.end(), best[w].hits.begin(), best[w].hits.end());
  }
  // Which worker found a gain depends on scheduling; the order of the list does not.
  std::sort(best[0].hits.begin(), best[0].hits.end(), hit_before);
  return std::move(best[0]);
}

}  // namespace fsgpu

namespace fsgpu {

namespace {

// libstdc++'s uniform_real_distribution<double> on an mt19937 (what MDFS draws with), written
// out so that the draws do not depend on the standard library: two 32-bit outputs make a
// canonical number in [0, 1), scaled to [a, b).
double uniform_draw(std::mt19937& g, double a, double b) {
  const double low = g(), high = g();
  double u = (low + high * 4294967296.0) / 18446744073709551616.0;
  if (u >= 1.0) u = std::nextafter(1.0, 0.0);
  return u * (b - a) + a;
}

}  // namespace

void mdfs_discretize(const double* values, int32_t n, int32_t divisions, double range, uint32_t seed,
                     uint32_t discretization, uint32_t variable, std::vector<double>& sorted, int8_t* codes) {
  // The generator of this (seed, discretization, variable): a chain of three, as MDFS seeds it.
  std::mt19937 by_seed(seed);
  std::mt19937 by_discretization(by_seed() ^ discretization);
  std::mt19937 g(by_discretization() ^ variable);
  double weight[kMaxInteractionLevels];
  double sum = 0;
  for (int32_t d = 0; d < divisions; ++d) {
    weight[d] = uniform_draw(g, 1.0 - range, 1.0 + range);
    sum += weight[d];
  }
  sum += uniform_draw(g, 1.0 - range, 1.0 + range);  // the top level's weight: only in the sum
  sorted.clear();
  for (int32_t i = 0; i < n; ++i)
    if (!std::isnan(values[i])) sorted.push_back(values[i]);
  std::sort(sorted.begin(), sorted.end());
  const int64_t present = static_cast<int64_t>(sorted.size());
  double threshold[kMaxInteractionLevels];
  if (present > 0) {
    // Each level's share of the objects, rounded on its own and accumulated; the running count
    // indexes the sorted values (so the lower level also takes the object at the threshold).
    const double step = double(present) / sum;
    int64_t done = 0;
    for (int32_t d = 0; d < divisions; ++d) {
      done += std::lround(weight[d] * step);
      if (done >= present) done = present - 1;
      threshold[d] = sorted[done];
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    if (std::isnan(values[i])) {
      codes[i] = -1;
      continue;
    }
    int8_t level = 0;
    for (int32_t d = 0; d < divisions; ++d) level += values[i] > threshold[d];
    codes[i] = level;
  }
}

}  // namespace fsgpu
