// The FEAST family's scores, as one update per feature and step that the CPU and the GPU
// engines both call (this header compiles for the device too), so the two give bitwise-equal
// scores.
//
// A counting pass against the conditioning variable S yields two sums per feature X:
//   xsy = sum plogp(n(x,s,y)),   xs = sum plogp(n(x,s))
// and with the relevance pass's sum plogp(n(x,y)) and sum plogp(n(x)), plus S's own sums,
// every term a criterion needs is an integer combination of them (fixed point, N * bits * 2^32):
//   I(X,S;Y), I(X;S), I(X;S|Y), I(X;Y|S) and H(X,S,Y).
// Criteria built from sums and minima of these stay exact integers; ratios (DISR, NJMIM) and
// non-integer beta/gamma are doubles computed with the same operations on both sides.
//
// JIM (praznik) is built on Gini impurity instead of entropy, whose terms do not split into
// sums over single counts: its passes are impurity passes (impurity_counts.h) that hand over
//   xsy = gini_fixed(sum gini_term(n(x,s,y), n(x,s)))   (and no second sum)
// from which N * G(X,S;Y) * 2^32 = xsy - gini_offset, G(A;Y) = sum p(a,y)^2 / p(a) - sum p(y)^2.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "plogp_table.h"

#ifdef __CUDACC__
#define FSGPU_HD __host__ __device__
#else
#define FSGPU_HD
#endif

namespace fsgpu {

enum class Method : int32_t {
  mim, mrmr, mifs, cife, condred, betagamma, icap, cmim, jmi, disr, cmi, jmim, njmim, jmi3, jim
};

// A criterion by the name R uses (select_features.R's selection_methods).
inline Method method_of(const std::string& name) {
  static const std::map<std::string, Method> methods = {
      {"mim", Method::mim},   {"mrmr", Method::mrmr},       {"mifs", Method::mifs}, {"cife", Method::cife},
      {"condred", Method::condred}, {"betagamma", Method::betagamma}, {"icap", Method::icap},
      {"cmim", Method::cmim}, {"jmi", Method::jmi},         {"disr", Method::disr}, {"cmi", Method::cmi},
      {"jmim", Method::jmim}, {"njmim", Method::njmim}, {"jmi3", Method::jmi3}, {"jim", Method::jim}};
  auto it = methods.find(name);
  if (it == methods.end()) throw std::invalid_argument("unknown method '" + name + "'");
  return it->second;
}

// What the relevance pass (step 0) reports: I(X;Y), or I(X;Y) over an entropy (no unit):
// symmetric uncertainty 2 I / (H(X) + H(Y)), normalised MI I / H(X,Y), gain ratio I / H(X).
enum class Normalization : int32_t { none, su, nmi, gain_ratio };

// Whether a criterion's score can go negative: those that cannot stop when nothing scores above 0.
inline bool never_negative(Method m) {
  return m == Method::mim || m == Method::jmi || m == Method::disr || m == Method::cmim || m == Method::cmi ||
         m == Method::jmim || m == Method::njmim || m == Method::jmi3 || m == Method::jim;
}

// Whether a pass counts Gini impurity (impurity_counts.h) rather than plogp sums.
FSGPU_HD inline bool impurity_pass(Method m) { return m == Method::jim; }

// Whether later steps' scores are ratios of information to entropy (no unit).
inline bool ratio_scores(Method m) { return m == Method::disr || m == Method::njmim; }

// What one pass does with each feature's sums; built on the host for every step.
struct StepRule {
  Method method = Method::jmi;
  int32_t step = 0;               // 0: the relevance pass (S is nothing); 1: the first conditioned pass
  int64_t n_selected = 0;         // features selected so far, S included (mRMR's mean)
  int64_t class_entropy = 0;      // N * H(Y)
  int64_t plogp_n = 0;            // plogp(N)
  int64_t class_terms = 0;        // sum_y plogp(n(y))
  int64_t s_terms = 0;            // sum_s plogp(n(s))
  int64_t s_class_terms = 0;      // sum_{s,y} plogp(n(s,y))
  double beta = 1, gamma = 0;     // MIFS, BetaGamma
  bool integral = true;           // beta and gamma are small integers: the score stays exact
  double key_scale = 1;           // fixed-point keys are N * bits * 2^32 * key_scale (weights: weighted_engine.h)
  bool restart = false;           // JMI3: the running sum starts over with this pass
  Normalization normalize = Normalization::none;  // step 0's score
  int64_t gini_offset = 0;        // JIM: gini_fixed(sum_y gini_term(n(y), N)): xsy - gini_offset is N * G * 2^32
};

// Per-feature state. `key` is what the argmax compares: a fixed-point score, or, for scores
// that are doubles, the double's bits mapped to an integer of the same order.
struct FeatureState {
  Wide key = 0;
  Wide sum1 = 0, sum2 = 0;  // running sums of integer terms
  double real = 0;          // running sum or minimum of double terms
  int64_t relevance = 0;    // N * I(X;Y)
  int64_t xy_terms = 0;     // sum plogp(n(x,y))
  int64_t x_terms = 0;      // sum plogp(n(x))
};

// A double as an integer with the same order (-0 taken as +0).
FSGPU_HD inline Wide ordered_key(double v) {
  v += 0.0;
  int64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? Wide(bits ^ INT64_MAX) : Wide(bits);
}

inline double key_to_double(Wide key) {
  int64_t bits = static_cast<int64_t>(key);
  if (bits < 0) bits ^= INT64_MAX;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// A 128-bit integer as a double, by the same two correctly rounded conversions everywhere.
FSGPU_HD inline double wide_to_double(Wide w) {
  const int64_t hi = static_cast<int64_t>(w >> 64);
  const uint64_t lo = static_cast<uint64_t>(w);
  return static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
}

FSGPU_HD inline double fused_multiply_add(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// floor(a^2 * 2^64 / b) for 0 < a <= b <= kMaxSamples: the share of a cell (x,s,y) with
// a = n(x,s,y) in sum n(x,s,y)^2 / n(x,s), in fixed point with 64 fraction bits, by 64-bit
// long division (the same steps on every device).
FSGPU_HD inline Wide gini_term(uint32_t a, uint32_t b) {
  const uint64_t square = static_cast<uint64_t>(a) * a;
  const uint64_t whole = square / b, rest = square % b;  // rest < b < 2^26: rest * 2^32 fits
  const uint64_t high = (rest << 32) / b, rest2 = (rest << 32) % b;
  const uint64_t low = (rest2 << 32) / b;
  return (static_cast<Wide>(whole) << 64) + (static_cast<Wide>(high) << 32) + static_cast<Wide>(low);
}

// A sum of gini_terms rounded to the nearest multiple of 2^-32: plogp's scale, N * G * 2^32.
// The terms are rounded down, each by less than 2^-64, and the sum by less than the number of
// cells times that, while an exact sum of fractions n(x,s,y)^2 / n(x,s) is never a half
// multiple of 2^-32 (its denominator has at most 2^25 for factor): so mathematically equal
// sums, of different tables too (1/3 + 1/3 + 1/3 and 1), become equal integers unless the
// exact sum falls within cells * 2^-64 of a rounding boundary.
FSGPU_HD inline int64_t gini_fixed(Wide sum) {
  return static_cast<int64_t>((sum + (static_cast<Wide>(1) << 31)) >> 32);
}

// I / H, 0 when H is 0 (then every variable is constant and I is 0 too).
FSGPU_HD inline double info_ratio(int64_t info, int64_t entropy) {
  return entropy > 0 ? static_cast<double>(info) / static_cast<double>(entropy) : 0.0;
}

template <class T>
FSGPU_HD inline T smaller(T a, T b) { return b < a ? b : a; }

// Updates one feature's state with its sums from a pass against S (see the top of the file).
FSGPU_HD inline void update_feature(const StepRule& r, int64_t xsy, int64_t xs, FeatureState& f) {
  const int64_t cond_entropy = xs - xsy;  // N * H(Y | X, S)
  if (r.step == 0) {  // S is nothing: xsy, xs are X's own sums
    f.xy_terms = xsy;
    f.x_terms = xs;
    f.relevance = impurity_pass(r.method) ? xsy - r.gini_offset : r.class_entropy - cond_entropy;
    f.sum1 = f.sum2 = 0;
    f.real = 0;
    f.key = f.relevance;
    if (r.normalize == Normalization::none) return;
    const int64_t x_entropy = r.plogp_n - xs, joint_entropy = r.plogp_n - xsy;  // N * H(X), N * H(X,Y)
    switch (r.normalize) {
      case Normalization::su:  // at most 2 N log2(N) 2^32 < 2^63
        f.real = info_ratio(2 * f.relevance, x_entropy + r.class_entropy);
        break;
      case Normalization::nmi:
        f.real = info_ratio(f.relevance, joint_entropy);
        break;
      default:  // gain ratio
        f.real = info_ratio(f.relevance, x_entropy);
        break;
    }
    f.key = ordered_key(f.real);
    return;
  }
  const bool first = r.step == 1;
  const int64_t joint_mi = r.class_entropy - cond_entropy;                       // I(X,S;Y)
  const int64_t redundancy = r.plogp_n - f.x_terms - r.s_terms + xs;             // I(X;S)
  const int64_t class_redundancy = r.class_terms - f.xy_terms - r.s_class_terms + xsy;  // I(X;S|Y)
  const int64_t cond_mi = (r.s_terms - r.s_class_terms) - cond_entropy;          // I(X;Y|S)
  const int64_t joint_entropy = r.plogp_n - xsy;                                 // H(X,S,Y)
  switch (r.method) {
    case Method::mim:
      break;
    case Method::jmi:
      f.sum1 = (first ? Wide(0) : f.sum1) + joint_mi;
      f.key = f.sum1;
      break;
    case Method::jmi3:  // S is a pair of selected features (the first only, at step 1): see select.cpp
      f.sum1 = (r.restart ? Wide(0) : f.sum1) + joint_mi;
      f.key = f.sum1;
      break;
    case Method::jim:  // an impurity pass: xsy is the rounded sum of gini_term over the cells of (X,S) and Y
      f.sum1 = (first ? Wide(0) : f.sum1) + (xsy - r.gini_offset);
      f.key = f.sum1;
      break;
    case Method::disr:
      f.real = (first ? 0.0 : f.real) + info_ratio(joint_mi, joint_entropy);
      f.key = ordered_key(f.real);
      break;
    case Method::jmim:
      f.key = first ? Wide(joint_mi) : smaller(f.key, Wide(joint_mi));
      break;
    case Method::njmim:
      f.real = first ? info_ratio(joint_mi, joint_entropy) : smaller(f.real, info_ratio(joint_mi, joint_entropy));
      f.key = ordered_key(f.real);
      break;
    case Method::cmim:  // the minimum starts from the relevance
      f.key = smaller(f.key, Wide(cond_mi));
      break;
    case Method::cmi:  // S is the joint variable of every selected feature
      f.key = cond_mi;
      break;
    case Method::mrmr:  // argmax of I(X;Y) - sum/m is argmax of m * I(X;Y) - sum: exact
      f.sum1 += redundancy;
      f.key = Wide(r.n_selected) * f.relevance - f.sum1;
      break;
    case Method::icap:
      f.sum1 += smaller<int64_t>(0, class_redundancy - redundancy);
      f.key = f.relevance + f.sum1;
      break;
    case Method::mifs:
    case Method::cife:
    case Method::condred:
    case Method::betagamma:
      f.sum1 += redundancy;
      f.sum2 += class_redundancy;
      if (r.integral) {
        f.key = f.relevance - Wide(static_cast<int64_t>(r.beta)) * f.sum1 + Wide(static_cast<int64_t>(r.gamma)) * f.sum2;
      } else {
        f.real = fused_multiply_add(r.gamma, wide_to_double(f.sum2),
                                    fused_multiply_add(-r.beta, wide_to_double(f.sum1), static_cast<double>(f.relevance)));
        f.key = ordered_key(f.real);
      }
      break;
  }
}

// Whether a step's keys are doubles (ordered_key) rather than fixed-point information.
inline bool real_keys(const StepRule& r) {
  if (r.step == 0) return r.normalize != Normalization::none;
  return ratio_scores(r.method) || (!r.integral && (r.method == Method::mifs || r.method == Method::betagamma));
}

// A key of a step as a score: bits, a ratio for DISR and NJMIM and normalised relevance, or
// (JIM) a Gini impurity gain.
inline double key_to_score(const StepRule& r, Wide key, int64_t n_samples) {
  if (!real_keys(r)) {
    const double bits = fixed_to_bits(key, n_samples) / r.key_scale;
    return r.step > 0 && r.method == Method::mrmr ? bits / static_cast<double>(r.n_selected) : bits;
  }
  const double v = key_to_double(key);
  return r.step == 0 || ratio_scores(r.method) ? v : v / (kPlogpScale * static_cast<double>(n_samples));
}

}  // namespace fsgpu
