#include "interaction_codes.h"

#include <algorithm>
#include <memory>
#include <random>

#include "parallel.h"

namespace fsgpu {

namespace {

// Draws uniform integers in [0, n) by rejection, so that every platform draws the same: the
// acceptance limits and the remainders of every n up to a shuffle's length come from tables
// (Lemire's exact multiply-shift remainder), as two divisions per draw cost more than the draw.
class BoundedDraws {
 public:
  explicit BoundedDraws(uint32_t largest) : limit_(size_t(largest) + 1), magic_(size_t(largest) + 1) {
    for (uint32_t n = 1; n <= largest; ++n) {
      limit_[n] = UINT32_MAX - UINT32_MAX % n;
      magic_[n] = UINT64_MAX / n + 1;
    }
  }
  uint32_t largest() const { return static_cast<uint32_t>(limit_.size() - 1); }
  uint32_t below(std::mt19937& g, uint32_t n) const {
    uint32_t r;
    do r = g(); while (r >= limit_[n]);
    // r % n: the high 64 bits of (magic * r mod 2^64) * n, from 32-bit halves (no overflow).
    const uint64_t low = magic_[n] * r;
    return static_cast<uint32_t>(((low >> 32) * n + (((low & 0xFFFFFFFFu) * n) >> 32)) >> 32);
  }

 private:
  std::vector<uint32_t> limit_;
  std::vector<uint64_t> magic_;
};

}  // namespace

void InteractionCoding::contrast_order(int64_t j, std::vector<int32_t>& order) const {
  const int32_t n = n_objects();
  order.resize(n);
  for (int32_t s = 0; s < n; ++s) order[s] = s;
  thread_local std::unique_ptr<BoundedDraws> draws;
  if (!draws || draws->largest() < uint32_t(n)) draws.reset(new BoundedDraws(uint32_t(n)));
  std::mt19937 g(contrast_seed ^ static_cast<uint32_t>(0x9E3779B9u * uint32_t(j + 1)));
  for (int32_t s = n - 1; s > 0; --s) std::swap(order[s], order[draws->below(g, uint32_t(s) + 1)]);
}

void InteractionCoding::numeric_codes(int64_t var, int32_t d, const double* column, std::vector<double>& scratch,
                                      int8_t* out) const {
  const int32_t n = n_objects();
  std::vector<double> values(n);
  for (int32_t s = 0; s < n; ++s) values[s] = column[rows[s]];
  if (var < n_real) {
    mdfs_discretize(values.data(), n, divisions, range, seed, uint32_t(d), uint32_t(var), scratch, out);
    return;
  }
  // The unpermuted column with the contrast's draws, then permuted (see the header).
  std::vector<int8_t> unpermuted(n);
  mdfs_discretize(values.data(), n, divisions, range, seed, uint32_t(d), uint32_t(var), scratch, unpermuted.data());
  std::vector<int32_t> order;
  contrast_order(var - n_real, order);
  for (int32_t s = 0; s < n; ++s) out[s] = unpermuted[order[s]];
}

std::vector<int64_t> variables_of_columns(const InteractionCoding& coding, int64_t first, int64_t n_columns) {
  std::vector<int64_t> vars;
  for (int64_t v = first; v < first + n_columns; ++v) vars.push_back(v);
  for (int64_t v = coding.n_real; v < coding.n_vars(); ++v) {
    const int64_t column = coding.column_of(v);
    if (column >= first && column < first + n_columns) vars.push_back(v);
  }
  return vars;
}

void interaction_block_codes(const InteractionCoding& coding, const double* values, int64_t n_rows, int64_t first,
                             const std::vector<int64_t>& vars, int32_t discretizations, int8_t* codes, int threads) {
  const int64_t n_vars = static_cast<int64_t>(vars.size()), n = coding.n_objects();
  parallel_for(n_vars * discretizations, threads, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> scratch;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t var = vars[i % n_vars];
      const int32_t d = static_cast<int32_t>(i / n_vars);
      coding.numeric_codes(var, d, values + (coding.column_of(var) - first) * n_rows, scratch, codes + i * n);
    }
  });
}

VariableCodes stored_interaction_codes(const int8_t* codes, int32_t n_objects, int64_t n_vars, int32_t d) {
  return [=](int64_t var, int8_t* out) { std::copy_n(codes + (d * n_vars + var) * n_objects, n_objects, out); };
}

}  // namespace fsgpu
