// The CPU discretization engine: features in parallel, each sorted once into distinct values
// and prefix counts, then cut by its method (criteria in discretize_criteria.h).
#include "exact_rounding.h"  // first: the pragma covers the inline criteria of the headers below
#include "discretize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "code_matrix.h"
#include "discretize_criteria.h"
#include "parallel.h"
#include "plogp_table.h"

namespace fsgpu {

DiscretizeTables DiscretizeTables::make(int32_t n_samples, int32_t n_classes) {
  DiscretizeTables t;
  const size_t n = static_cast<size_t>(n_samples) + 1;
  t.ln.assign(n, 0);
  t.log2.assign(n, 0);
  for (size_t m = 1; m < n; ++m) {
    t.ln[m] = static_cast<double>(std::log(static_cast<long double>(m)));
    t.log2[m] = static_cast<double>(std::log2(static_cast<long double>(m)));
  }
  // log2(3^k - 2) = k log2(3) + log2(1 - 2 / 3^k), which stays finite for any k.
  t.log2_3k.assign(static_cast<size_t>(n_classes) + 1, 0);
  for (int32_t k = 1; k <= n_classes; ++k)
    t.log2_3k[k] = static_cast<double>(k * std::log2(3.0L) + std::log2(1.0L - 2.0L / std::pow(3.0L, k)));
  const PlogpTable plogp(n_samples);
  t.plogp.assign(plogp.data(), plogp.data() + plogp.size());
  return t;
}

namespace {

// A feature as its methods see it: distinct non-missing values and prefix class counts.
struct FeatureSummary {
  std::vector<double> values;    // distinct, ascending
  std::vector<int32_t> prefix;   // values.size() x n_classes: counts of each class among values <= values[t]
  int32_t n = 0, missing = 0;    // non-missing and missing values
};

struct Scratch {
  std::vector<double> column;
  std::vector<std::pair<double, int32_t>> sorted;
  std::vector<double> sum_tree, gain_tree;   // see discretize_criteria.h
  std::vector<int32_t> first_of, last_of;    // per candidate: the interval it splits
};

void summarize(const DiscretizeTask& task, int64_t f, Scratch& w, FeatureSummary& s) {
  const int32_t n = task.n_samples, classes = task.n_classes;
  w.column.resize(n);
  task.read(f, w.column.data());
  w.sorted.clear();
  for (int32_t i = 0; i < n; ++i) {
    const double v = w.column[i];
    if (std::isnan(v)) continue;
    if (std::isinf(v)) throw std::runtime_error("feature " + std::to_string(f + 1) + " has infinite values");
    w.sorted.emplace_back(v + 0.0, task.labels ? task.labels[i] : 0);  // + 0.0: -0 is 0
  }
  std::sort(w.sorted.begin(), w.sorted.end());
  s.n = static_cast<int32_t>(w.sorted.size());
  s.missing = n - s.n;
  s.values.clear();
  s.prefix.clear();
  std::vector<int32_t> running(classes, 0);
  for (size_t i = 0; i < w.sorted.size(); ++i) {
    ++running[w.sorted[i].second];
    if (i + 1 == w.sorted.size() || w.sorted[i + 1].first != w.sorted[i].first) {
      s.values.push_back(w.sorted[i].first);
      s.prefix.insert(s.prefix.end(), running.begin(), running.end());
    }
  }
}

// Kurgan & Cios's top-down loop for CAIM, CACC and Ameva; returns the chosen candidates, ascending,
// and the final sum of terms in *sum. The GPU kernel (cuda/discretize.cu) takes the same steps.
std::vector<int32_t> topdown_cuts(DiscretizeMethod m, const FeatureSummary& s, int32_t n_classes,
                                  const double* class_totals, int32_t present, const TableView& t, Scratch& w,
                                  double* sum) {
  const int32_t n_distinct = static_cast<int32_t>(s.values.size());
  const PrefixCounts p{s.prefix.data(), n_classes};
  const int32_t sum_size = tree_size(n_distinct), gain_size = tree_size(n_distinct - 1);
  w.sum_tree.assign(2 * static_cast<size_t>(sum_size), 0.0);
  w.gain_tree.assign(2 * static_cast<size_t>(gain_size), -std::numeric_limits<double>::infinity());
  w.first_of.resize(n_distinct - 1);
  w.last_of.resize(n_distinct - 1);
  double* gains = w.gain_tree.data() + gain_size;
  // Candidates first..last-1 now split the interval first..last, whose term is parent.
  auto score_candidates = [&](int32_t first, int32_t last, double parent) {
    for (int32_t c = first; c < last; ++c) {
      gains[c] = split_gain(m, p, first, c, last, parent, class_totals);
      w.first_of[c] = first;
      w.last_of[c] = last;
    }
  };
  auto pull_range = [&](int32_t lo, int32_t hi) {  // the gain tree above candidates lo..hi
    for (int32_t a = (gain_size + lo) / 2, b = (gain_size + hi) / 2; a >= 1; a /= 2, b /= 2)
      for (int32_t node = a; node <= b; ++node) gain_tree_pull(w.gain_tree.data(), node);
  };
  const double whole = interval_term(m, p, 0, n_distinct - 1, class_totals);
  *sum = sum_tree_set(w.sum_tree.data(), sum_size, 0, whole);
  score_candidates(0, n_distinct - 1, whole);
  pull_range(0, n_distinct - 2);
  std::vector<int32_t> cuts;
  for (int32_t k = 1;; ++k) {
    const double best_gain = w.gain_tree[1];
    if (best_gain == -std::numeric_limits<double>::infinity()) break;  // every candidate is a cut
    const int32_t best = gain_tree_first_at_least(w.gain_tree.data(), gain_size, tied_gain_floor(best_gain, *sum));
    const int32_t first = w.first_of[best], last = w.last_of[best];
    const double left = interval_term(m, p, first, best, class_totals);
    const double right = interval_term(m, p, best + 1, last, class_totals);
    sum_tree_set(w.sum_tree.data(), sum_size, first, left);
    const double new_sum = sum_tree_set(w.sum_tree.data(), sum_size, best + 1, right);
    if (!topdown_accepts(m, new_sum, *sum, k, s.n, present, t.ln)) break;
    *sum = new_sum;
    cuts.push_back(best);
    gains[best] = -std::numeric_limits<double>::infinity();
    score_candidates(first, best, left);
    score_candidates(best + 1, last, right);
    pull_range(first, last - 1);
  }
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// Fayyad & Irani's recursive MDLP; returns the cuts, ascending, and the class information of the
// final intervals (fixed point, N * bits * 2^32) in *information.
std::vector<int32_t> mdlp_cuts(const FeatureSummary& s, int32_t n_classes, const TableView& t,
                               int64_t* information) {
  const int32_t n_distinct = static_cast<int32_t>(s.values.size());
  const PrefixCounts p{s.prefix.data(), n_classes};
  std::vector<int32_t> cuts;
  std::vector<std::pair<int32_t, int32_t>> open = {{0, n_distinct - 1}};
  int32_t present = 0;
  const int64_t whole = interval_entropy(p, 0, n_distinct - 1, t.plogp, &present);
  int64_t remaining = 0;  // sum of the final intervals' entropy numerators
  auto size = [&](int32_t first, int32_t last) {
    int32_t m = 0;
    for (int32_t c = 0; c < n_classes; ++c) m += p.count(first, last, c);
    return m;
  };
  while (!open.empty()) {
    const auto [first, last] = open.back();
    open.pop_back();
    int32_t k = 0, k1 = 0, k2 = 0;
    const int64_t h = interval_entropy(p, first, last, t.plogp, &k);
    int64_t best = std::numeric_limits<int64_t>::max();
    int32_t at = -1;
    for (int32_t c = first; c < last; ++c) {
      const int64_t e = interval_entropy(p, first, c, t.plogp, &k1) + interval_entropy(p, c + 1, last, t.plogp, &k2);
      if (e < best) {
        best = e;
        at = c;
      }
    }
    if (at >= 0) {
      const int64_t h1 = interval_entropy(p, first, at, t.plogp, &k1), h2 = interval_entropy(p, at + 1, last, t.plogp, &k2);
      if (mdlp_accepts(size(first, last), h, k, size(first, at), h1, k1, size(at + 1, last), h2, k2, t)) {
        cuts.push_back(at);
        open.push_back({at + 1, last});
        open.push_back({first, at});
        continue;
      }
    }
    remaining += h;
  }
  std::sort(cuts.begin(), cuts.end());
  *information = whole - remaining;
  return cuts;
}

std::vector<int32_t> equal_freq_cuts(const FeatureSummary& s, int32_t nbins) {
  const int32_t n_distinct = static_cast<int32_t>(s.values.size());
  std::vector<int32_t> cuts;
  for (int32_t j = 1; j < nbins; ++j) {
    const int32_t t = equal_freq_index(s.prefix.data(), n_distinct, j, nbins, s.n);
    if (t < n_distinct - 1 && (cuts.empty() || t > cuts.back())) cuts.push_back(t);
  }
  return cuts;
}

}  // namespace

std::vector<double> equal_width_cuts(double lo, double hi, int32_t nbins) {
  std::vector<double> cuts;
  if (!(hi > lo)) return cuts;
  for (int32_t j = 1; j < nbins; ++j) cuts.push_back(lo + (hi - lo) * j / nbins);
  return cuts;
}

double reported_criterion(DiscretizeMethod m, double sum, int32_t k, int32_t n, int32_t s, const double* ln) {
  if (k < 2) return 0;
  const double v = scheme_value(m, sum, k, n, s, ln).value;
  if (m != DiscretizeMethod::cacc) return v;
  return v > 0 ? std::sqrt(v / (v + n)) : 0.0;
}

std::vector<FeatureCuts> cpu_discretize(const DiscretizeTask& task, int threads,
                                        const Checkpoint& between_slices) {
  const bool supervised = is_supervised(task.method);
  if (supervised && (!task.labels || task.n_classes < 2)) throw std::invalid_argument("supervised discretization needs classes");
  const int32_t classes = supervised ? task.n_classes : 1;
  DiscretizeTask t = task;
  t.n_classes = classes;
  if (!supervised) t.labels = nullptr;
  const DiscretizeTables tables = DiscretizeTables::make(task.n_samples, classes);
  const TableView view{tables.ln.data(), tables.log2.data(), tables.log2_3k.data(), tables.plogp.data()};
  std::vector<FeatureCuts> out(task.n_features);
  std::vector<Scratch> scratch(std::max(threads, 1));
  std::vector<FeatureSummary> summaries(std::max(threads, 1));
  const int64_t slices = std::max<int64_t>(1, static_cast<int64_t>(task.n_features) * task.n_samples / (1 << 22));
  sliced_parallel_for(task.n_features, slices, threads, 1, between_slices, [&](int64_t f, int worker) {
    FeatureSummary& s = summaries[worker];
    summarize(t, f, scratch[worker], s);
    FeatureCuts& fc = out[f];
    fc.missing = s.missing;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    fc.lo = s.values.empty() ? nan : s.values.front();
    fc.hi = s.values.empty() ? nan : s.values.back();
    fc.criterion = nan;
    fc.cuts.clear();
    if (s.values.empty()) return;
    const int32_t n_distinct = static_cast<int32_t>(s.values.size());
    if (task.method == DiscretizeMethod::equal_width) {
      fc.cuts = equal_width_cuts(fc.lo, fc.hi, task.nbins);
      return;
    }
    std::vector<int32_t> chosen;
    if (task.method == DiscretizeMethod::equal_freq) {
      chosen = equal_freq_cuts(s, task.nbins);
    } else {
      const int32_t* totals = s.prefix.data() + static_cast<size_t>(n_distinct - 1) * classes;
      std::vector<double> class_totals(totals, totals + classes);
      int32_t present = 0;
      for (int32_t c = 0; c < classes; ++c) present += totals[c] > 0;
      if (present < 2) return;  // one class: no cut tells anything
      if (task.method == DiscretizeMethod::mdlp) {
        int64_t information = 0;
        chosen = mdlp_cuts(s, classes, view, &information);
        fc.criterion = fixed_to_bits(information, s.n);
      } else {
        double sum = 0;
        chosen = topdown_cuts(task.method, s, classes, class_totals.data(), present, view, scratch[worker], &sum);
        fc.criterion = reported_criterion(task.method, sum, static_cast<int32_t>(chosen.size()) + 1, s.n, present,
                                          view.ln);
      }
    }
    for (int32_t c : chosen) fc.cuts.push_back(cut_between(s.values[c], s.values[c + 1]));
  });
  return out;
}

void discretize_codes(const DiscretizeTask& task, const std::vector<FeatureCuts>& cuts, int32_t na_code,
                      int32_t* codes, int threads) {
  const int32_t n = task.n_samples;
  parallel_for(task.n_features, threads, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<double> column(n);
    for (int64_t f = begin; f < end; ++f) {
      task.read(f, column.data());
      const FeatureCuts& fc = cuts[f];
      int32_t* out = codes + f * n;
      const EqualWidthBins bins{fc.lo, fc.hi, task.nbins};
      for (int32_t i = 0; i < n; ++i) {
        const double v = column[i];
        if (std::isnan(v)) out[i] = na_code;
        else if (task.method == DiscretizeMethod::equal_width) out[i] = bins(v) + 1;
        else out[i] = static_cast<int32_t>(std::lower_bound(fc.cuts.begin(), fc.cuts.end(), v) - fc.cuts.begin()) + 1;
      }
    }
  });
}

}  // namespace fsgpu
