#include "networks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parallel.h"

namespace fsgpu {

namespace {
// Rows of work per interrupt check.
int64_t slices_for(int64_t n) { return std::clamp<int64_t>(n / 64, 1, 64); }

// A running sum that terms enter and leave, kept as an unevaluated pair hi + lo (Knuth's
// TwoSum), so that value() is the correctly rounded sum of the terms present whatever their
// history (in all but pathological cancellations): a set whose terms are 0 sums to 0, not to
// the residue of earlier terms gone.
struct RunningSum {
  double hi = 0, lo = 0;
  void add(double x) {
    const double s = hi + x, back = s - hi;
    lo += (hi - (s - back)) + (x - back);
    hi = s;
  }
  double value() const { return hi + lo; }
};
}  // namespace

std::vector<double> aracne_network(const double* mim, int64_t n, double eps, int threads,
                                   const Checkpoint& between_slices) {
  std::vector<double> weights(static_cast<size_t>(n * n), 0.0);
  // Row i decides its edges to every j > i (and writes both halves of them): no two rows
  // write the same entry.
  sliced_parallel_for(n, slices_for(n), threads, 1, between_slices, [&](int64_t i, int) {
    const double* row_i = mim + i * n;
    for (int64_t j = i + 1; j < n; ++j) {
      const double m = row_i[j];
      const double* row_j = mim + j * n;
      bool removed = false;
      for (int64_t k = 0; k < n && !removed; ++k)
        removed = k != i && k != j && row_i[k] - eps > m && row_j[k] - eps > m;
      if (!removed) weights[i * n + j] = weights[j * n + i] = m;
    }
  });
  return weights;
}

std::vector<double> clr_network(const double* mim, int64_t n) {
  std::vector<double> mean(n, 0.0), sd(n, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const double* row = mim + i * n;
    double sum = 0;
    for (int64_t j = 0; j < n; ++j)
      if (j != i) sum += row[j];
    mean[i] = sum / static_cast<double>(n - 1);
    double squares = 0;
    for (int64_t j = 0; j < n; ++j)
      if (j != i) squares += (row[j] - mean[i]) * (row[j] - mean[i]);
    sd[i] = n > 2 ? std::sqrt(squares / static_cast<double>(n - 2)) : 0.0;
  }
  auto z = [&](int64_t i, double m) { return sd[i] > 0 && m > mean[i] ? (m - mean[i]) / sd[i] : 0.0; };
  std::vector<double> weights(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      const double m = mim[i * n + j], zi = z(i, m), zj = z(j, m);
      weights[i * n + j] = weights[j * n + i] = std::sqrt(zi * zi + zj * zj);
    }
  return weights;
}

std::vector<double> mrnet_network(const double* mim, int64_t n, int threads,
                                  const Checkpoint& between_slices) {
  // picked[i * n + j]: the score with which target i picked j (0 when it did not).
  std::vector<double> picked(static_cast<size_t>(n * n), 0.0);
  sliced_parallel_for(n, slices_for(n), threads, 1, between_slices, [&](int64_t target, int) {
    std::vector<double> redundancy(n, 0.0);
    std::vector<char> taken(n, 0);
    taken[target] = 1;
    for (int64_t step = 0; step < n - 1; ++step) {
      int64_t best = -1;
      double best_score = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        if (taken[j]) continue;
        const double score = mim[target * n + j] - (step > 0 ? redundancy[j] / static_cast<double>(step) : 0.0);
        if (score > best_score) {
          best_score = score;
          best = j;
        }
      }
      if (best_score < 0) break;
      picked[target * n + best] = best_score;
      taken[best] = 1;
      for (int64_t j = 0; j < n; ++j) redundancy[j] += mim[j * n + best];
    }
  });
  std::vector<double> weights(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      weights[i * n + j] = weights[j * n + i] = std::max(picked[i * n + j], picked[j * n + i]);
  return weights;
}

std::vector<double> mrnetb_network(const double* mim, int64_t n, int threads,
                                   const Checkpoint& between_slices) {
  // kept[i * n + j]: the final score of j in target i's set (0 when j is not in it).
  std::vector<double> kept(static_cast<size_t>(n * n), 0.0);
  sliced_parallel_for(n, slices_for(n), threads, 1, between_slices, [&](int64_t target, int) {
    const double* relevance = mim + target * n;
    std::vector<char> in(n, 1);
    in[target] = 0;
    int64_t size = n - 1;
    // redundancy[k]: the sum of mim(k, l) over l in S, l != k.
    std::vector<RunningSum> redundancy(n);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t l = 0; l < n; ++l)
        if (l != k && in[l]) redundancy[k].add(mim[k * n + l]);
    auto score = [&](int64_t k) { return relevance[k] - redundancy[k].value() / static_cast<double>(size); };
    auto worst_in = [&] {
      int64_t worst = -1;
      for (int64_t k = 0; k < n; ++k)
        if (in[k] && (worst < 0 || score(k) < score(worst))) worst = k;
      return worst;
    };
    auto leave = [&](int64_t w) {
      in[w] = 0;
      for (int64_t k = 0; k < n; ++k)
        if (k != w) redundancy[k].add(-mim[k * n + w]);
    };
    auto enter = [&](int64_t b) {
      in[b] = 1;
      for (int64_t k = 0; k < n; ++k)
        if (k != b) redundancy[k].add(mim[k * n + b]);
    };
    for (int64_t w = worst_in(); size > 1 && score(w) < 0; w = worst_in()) {
      leave(w);
      --size;
    }
    for (int64_t swaps = 0; swaps < n - 1; ++swaps) {
      int64_t best = -1;
      for (int64_t k = 0; k < n; ++k)
        if (!in[k] && k != target && (best < 0 || score(k) > score(best))) best = k;
      const int64_t worst = worst_in();
      if (best < 0 || !(score(best) > score(worst))) break;
      leave(worst);
      enter(best);
    }
    for (int64_t k = 0; k < n; ++k)
      if (in[k]) kept[target * n + k] = score(k);
  });
  std::vector<double> weights(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      weights[i * n + j] = weights[j * n + i] = std::max({0.0, kept[i * n + j], kept[j * n + i]});
  return weights;
}

}  // namespace fsgpu
