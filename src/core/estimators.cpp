#include "estimators.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fsgpu {

namespace {

// digamma(x) for x >= 1: up by the recurrence digamma(x) = digamma(x + 1) - 1/x to x >= 16,
// then the asymptotic series, whose first omitted term is below 1e-20 there.
long double digamma(long double x) {
  long double shift = 0;
  for (; x < 16; x += 1) shift -= 1 / x;
  const long double r = 1 / (x * x);
  const long double series =
      r * (-1.0L / 12 + r * (1.0L / 120 + r * (-1.0L / 252 + r * (1.0L / 240 + r * (-1.0L / 132 + r * (691.0L / 32760))))));
  return shift + std::log(x) - 1 / (2 * x) + series;
}

}  // namespace

Estimator estimator_of(const std::string& name) {
  if (name == "emp") return Estimator::empirical;
  if (name == "mm") return Estimator::miller_madow;
  if (name == "sg") return Estimator::schurmann_grassberger;
  if (name == "shrink") return Estimator::shrink;
  throw std::invalid_argument("unknown estimator '" + name + "' (emp, mm, sg or shrink)");
}

long double entropy_term_bits(Estimator estimator, int64_t n) {
  if (n <= 0) return 0;
  const long double v = static_cast<long double>(n);
  const long double ln2 = 0.693147180559945309417232121458176568L;
  switch (estimator) {
    case Estimator::empirical:
    case Estimator::shrink:
      return n == 1 ? 0 : v * std::log2(v);
    case Estimator::miller_madow:
      return (n == 1 ? 0 : v * std::log2(v)) - 0.5L / ln2;
    case Estimator::schurmann_grassberger:
      return v * digamma(v + 1) / ln2;
  }
  return 0;
}

int64_t shrink_cell_terms(std::vector<uint32_t> counts, int64_t plogp_n) {
  counts.erase(std::remove(counts.begin(), counts.end(), 0u), counts.end());
  std::sort(counts.begin(), counts.end());
  const int64_t m = static_cast<int64_t>(counts.size());
  __extension__ typedef __int128 Exact;
  Exact n = 0, w = 0;
  for (uint32_t c : counts) {
    n += c;
    w += Exact(c) * c;
  }
  const long double total = static_cast<long double>(n);
  long double bits = 0;  // H in bits
  // lambda = numerator / denominator, both exact; denominator 0 means a uniform table.
  const Exact numerator = m * (n * n - w), denominator = (n - 1) * (w * m - n * n);
  if (m <= 1) {
    bits = 0;
  } else if (denominator <= 0 || numerator >= denominator) {
    bits = std::log2(static_cast<long double>(m));
  } else {
    const long double lambda = static_cast<long double>(numerator) / static_cast<long double>(denominator);
    const long double a = lambda / (1 - lambda) * total / static_cast<long double>(m);
    const long double mass = total + static_cast<long double>(m) * a;
    const long double whole = digamma(mass + 1);
    long double nats = 0;
    for (uint32_t c : counts) nats += (c + a) * (whole - digamma(c + a + 1));
    bits = nats / mass / 0.693147180559945309417232121458176568L;
  }
  return plogp_n - static_cast<int64_t>(std::llround(total * bits * 4294967296.0L));
}

}  // namespace fsgpu
