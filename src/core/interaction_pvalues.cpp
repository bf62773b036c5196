#include "interaction_pvalues.h"

#include "parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace fsgpu {

namespace {

// Prefix sums (index 0 is the empty sum) of the weighted moments the fit needs.
struct FitSums {
  std::vector<double> w, v, wv, wv2, wl, wl2, wlv;
  std::vector<double> rest;  // rest[k] = sum_{m >= k} w v^2 (1-based, rest[n + 1] = 0)
  std::vector<double> l;     // l[k]: log k ("exp") or k ("lin"), 1-based
  std::vector<double> weight;

  FitSums(const double* tail, int64_t n, PValueFit mode)
      : w(n + 1), v(n + 1), wv(n + 1), wv2(n + 1), wl(n + 1), wl2(n + 1), wlv(n + 1), rest(n + 2), l(n + 1),
        weight(n + 1) {
    for (int64_t k = 1; k <= n; ++k) {
      const double kd = double(k), x = tail[k - 1];
      const double u = mode == PValueFit::exp ? kd / (double(n) - kd + 1) : 1 / kd / (double(n) - kd + 1);
      weight[k] = u;
      l[k] = mode == PValueFit::exp ? std::log(kd) : kd;
      w[k] = w[k - 1] + u;
      v[k] = v[k - 1] + x;
      wv[k] = wv[k - 1] + u * x;
      wv2[k] = wv2[k - 1] + u * x * x;
      wl[k] = wl[k - 1] + u * l[k];
      wl2[k] = wl2[k - 1] + u * l[k] * l[k];
      wlv[k] = wlv[k - 1] + u * l[k] * x;
    }
    for (int64_t k = n; k >= 1; --k) rest[k] = rest[k + 1] + weight[k] * tail[k - 1] * tail[k - 1];
  }
};

struct Fit {
  double alpha, dev;
};

// The fit of the values n0.. ending at window position `at` (1-based): alpha and the squared
// deviation over the window's first `at` values.
// Inlined: the fit calls it twice per end point, millions of times for a million variables.
[[gnu::always_inline]] inline Fit fit_window(const FitSums& s, int64_t n0, int64_t at, PValueFit mode) {
  const int64_t end = n0 - 1 + at, base = n0 - 1;
  const double sw = s.w[end] - s.w[base], sv = s.v[end] - s.v[base], swv = s.wv[end] - s.wv[base],
               swv2 = s.wv2[end] - s.wv2[base], swl = s.wl[end] - s.wl[base], swl2 = s.wl2[end] - s.wl2[base],
               swlv = s.wlv[end] - s.wlv[base];
  const double l = s.l[at];
  if (mode == PValueFit::exp) {
    const double alpha = sv / double(at);
    const double dev = swv2 + 2 * alpha * swlv - 2 * alpha * l * swv + alpha * alpha * swl2 -
                       2 * alpha * alpha * l * swl + (alpha * l) * (alpha * l) * sw;
    return {alpha, dev};
  }
  const double alpha = (swv - swlv / l) / (sw - 2 * swl / l + swl2 / (l * l));
  const double dev = swv2 - 2 * alpha * swv + 2 * alpha * swlv / l + alpha * alpha * sw -
                     2 * alpha * alpha * swl / l + alpha * alpha * swl2 / (l * l);
  return {alpha, dev};
}

// Among the end points [at_begin, at_end) of the fits ignoring the n0 - 1 smallest, the first with
// the smallest shifted deviation (the fit's deviation up to the end point plus the tail past it,
// per unit weight; NaN ones skipped): at = 0 when every one is NaN. The first of the smallest is
// what one scan in order keeps, so a scan cut into pieces, the pieces' winners taken in order
// with a strict <, keeps the same end point.
struct EndPoint {
  double dev = std::nan("");
  int64_t at = 0;
};
EndPoint best_end_point(const FitSums& s, int64_t n0, int64_t at_begin, int64_t at_end, PValueFit mode) {
  const double total_w = s.w.back() - s.w[n0 - 1];
  EndPoint best;
  for (int64_t at = at_begin; at < at_end; ++at) {
    const double previous = at > 1 ? fit_window(s, n0, at - 1, mode).dev : 0;
    const double shifted = (previous + s.rest[n0 + at - 1]) / total_w;
    if (!std::isnan(shifted) && (std::isnan(best.dev) || shifted < best.dev)) best = {shifted, at};
  }
  return best;
}

}  // namespace

double mdfs_fit_alpha(const double* tail, int64_t n, PValueFit mode, bool last_only, int search_points,
                      int threads) {
  const FitSums s(tail, n, mode);
  const int64_t min_irrelevant = std::min<int64_t>(n / 3, 30);
  const int64_t max_ignored = std::min(n - min_irrelevant, n / 3);
  double best_dev = std::numeric_limits<double>::infinity(), best_alpha = std::nan("");
  int64_t best_n0 = 0;
  // The fit of a grid point n0: with last_only, the one ending at the last value; else the best
  // end point past the min_irrelevant smallest, searched in pieces of end points spread over the
  // threads with the round's other grid points (a grid point costs O(n), a round has a handful).
  constexpr int64_t kEndPoints = 16384;  // per piece
  auto consider = [&](const std::vector<int64_t>& n0s) {
    struct Piece {
      size_t point;
      int64_t begin, end;
    };
    std::vector<Piece> pieces;
    for (size_t i = 0; i < n0s.size() && !last_only; ++i) {
      const int64_t npt = n - n0s[i] + 1;
      for (int64_t at = min_irrelevant; at <= npt; at += kEndPoints)
        pieces.push_back({i, at, std::min(at + kEndPoints, npt + 1)});
    }
    std::vector<EndPoint> found(pieces.size());
    parallel_for(static_cast<int64_t>(pieces.size()), threads, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p)
        found[p] = best_end_point(s, n0s[pieces[p].point], pieces[p].begin, pieces[p].end, mode);
    });
    std::vector<Fit> fits(n0s.size(), Fit{std::nan(""), std::nan("")});
    std::vector<EndPoint> best(n0s.size());
    for (size_t p = 0; p < pieces.size(); ++p) {
      EndPoint& b = best[pieces[p].point];
      if (!std::isnan(found[p].dev) && (std::isnan(b.dev) || found[p].dev < b.dev)) b = found[p];
    }
    for (size_t i = 0; i < n0s.size(); ++i) {
      const int64_t n0 = n0s[i], npt = n - n0 + 1;
      if (last_only) {
        const double total_w = s.w[n] - s.w[n0 - 1];
        fits[i] = {fit_window(s, n0, npt, mode).alpha,
                   ((npt > 1 ? fit_window(s, n0, npt - 1, mode).dev : 0) + s.rest[n]) / total_w};
      } else if (best[i].at > 0) {
        fits[i] = {fit_window(s, n0, best[i].at, mode).alpha, best[i].dev};
      }
    }
    // Taken in order, so the choice is the serial one.
    for (size_t i = 0; i < n0s.size(); ++i)
      if (fits[i].dev < best_dev) {
        best_dev = fits[i].dev;
        best_alpha = fits[i].alpha;
        best_n0 = n0s[i];
      }
  };
  if (max_ignored <= 1) {
    consider({1});
  } else {
    int64_t lo = 1, hi = max_ignored, step = 0;
    do {
      step = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(double(hi - lo) / search_points)));
      std::vector<int64_t> n0s;
      for (int64_t n0 = lo; n0 <= hi - 1; n0 += step) n0s.push_back(n0);
      consider(n0s);
      if (best_n0 == 0) break;  // no fit defined
      lo = std::max<int64_t>(1, best_n0 - step);
      hi = std::min(max_ignored, best_n0 + step);
    } while (step > 1);
  }
  return best_alpha;
}

std::vector<int32_t> ascending_order(const double* key, int64_t n) {
  // Keys whose unsigned order is the doubles' order: -0 as 0, negatives' bits flipped, NaN last.
  struct Entry {
    uint64_t key;
    int32_t index;
  };
  std::vector<Entry> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  constexpr uint64_t sign = uint64_t(1) << 63;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t u = ~uint64_t(0);
    if (!std::isnan(key[i])) {
      const double x = key[i] + 0.0;
      std::memcpy(&u, &x, sizeof u);
      u = (u & sign) ? ~u : u | sign;
    }
    a[i] = {u, static_cast<int32_t>(i)};
  }
  // LSD radix, 11 bits a pass (stable: ties keep the index order); a pass where every key has
  // the same digit is skipped.
  constexpr int kBits = 11, kPasses = 6;
  constexpr uint64_t kMask = (uint64_t(1) << kBits) - 1;
  std::vector<int64_t> count(size_t(kPasses) << kBits, 0);
  for (const Entry& e : a)
    for (int pass = 0; pass < kPasses; ++pass) ++count[(size_t(pass) << kBits) + ((e.key >> (pass * kBits)) & kMask)];
  for (int pass = 0; pass < kPasses; ++pass) {
    int64_t* c = count.data() + (size_t(pass) << kBits);
    if (n == 0 || c[(a[0].key >> (pass * kBits)) & kMask] == n) continue;
    int64_t at = 0;
    for (size_t d = 0; d <= kMask; ++d) {
      const int64_t here = c[d];
      c[d] = at;
      at += here;
    }
    for (const Entry& e : a) b[size_t(c[(e.key >> (pass * kBits)) & kMask]++)] = e;
    a.swap(b);
  }
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = a[i].index;
  return order;
}

void holm_adjust(const double* p, int64_t n, double* out) {
  // p.adjust: pmin(1, cummax((n - i + 1) * p[o[i]]))[order(o)], o = order(p). Once the running
  // maximum reaches 1 every later value is 1, whatever the order there. When at most half the
  // p-values are below 4 / n, the first p-value past them (rank m <= n / 2) gives (n - m) p >= 2:
  // only those below are sorted (a handful in a search's p-values, not a million), the rest are 1.
  std::vector<int32_t> small;
  for (int64_t i = 0; i < n; ++i)
    if (p[i] < 4.0 / static_cast<double>(n)) small.push_back(static_cast<int32_t>(i));
  std::vector<int32_t> o;
  if (static_cast<int64_t>(small.size()) <= n / 2) {
    std::vector<double> key(small.size());
    for (size_t j = 0; j < small.size(); ++j) key[j] = p[small[j]];
    o = ascending_order(key.data(), static_cast<int64_t>(key.size()));  // ties: small is in index order
    for (int32_t& j : o) j = small[j];
    std::fill(out, out + n, 1.0);
  } else {
    o = ascending_order(p, n);
  }
  double running = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < o.size(); ++i) {
    running = std::max(running, static_cast<double>(n - static_cast<int64_t>(i)) * p[o[i]]);
    out[o[i]] = std::min(1.0, running);
  }
}

}  // namespace fsgpu
