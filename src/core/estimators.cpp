#include "estimators.h"

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
  throw std::invalid_argument("unknown estimator '" + name + "' (emp, mm or sg)");
}

long double entropy_term_bits(Estimator estimator, int64_t n) {
  if (n <= 0) return 0;
  const long double v = static_cast<long double>(n);
  const long double ln2 = 0.693147180559945309417232121458176568L;
  switch (estimator) {
    case Estimator::empirical:
      return n == 1 ? 0 : v * std::log2(v);
    case Estimator::miller_madow:
      return (n == 1 ? 0 : v * std::log2(v)) - 0.5L / ln2;
    case Estimator::schurmann_grassberger:
      return v * digamma(v + 1) / ln2;
  }
  return 0;
}

}  // namespace fsgpu
