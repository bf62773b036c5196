#include "weighted_engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "parallel.h"

namespace fsgpu {

bool supports_weights(Method m) {
  return m == Method::mim || m == Method::jmi || m == Method::disr || m == Method::cmim || m == Method::cmi;
}

WeightedCpuEngine::WeightedCpuEngine(const CodeMatrix& x, const ClassLayout& layout, const std::vector<double>& weights,
                                     int threads, std::function<void()> between_slices)
    : between_slices_(std::move(between_slices)),
      x_(x),
      layout_(layout),
      threads_(threads < 1 ? 1 : threads),
      plogp_(layout.n_samples),
      weight_(layout.n_samples),
      score_(x.n_features, 0),
      retired_(x.n_features, 0),
      scratch_(threads_) {
  if (static_cast<int64_t>(weights.size()) != layout.n_samples) throw std::invalid_argument("one weight per sample");
  for (int32_t i = 0; i < layout.n_samples; ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) throw std::invalid_argument("weights must be finite and >= 0");
    weight_[layout.position[i]] = weights[i];
  }
}

WeightedCpuEngine::Terms WeightedCpuEngine::terms_of(int64_t feature, const Conditioning& s, Scratch& scratch) const {
  const int32_t n = layout_.n_samples, ls = s.levels;
  const size_t cells = static_cast<size_t>(x_.levels[feature]) * ls;
  scratch.codes.assign(n, x_.sparse ? x_.base[feature] : 0);
  for (int64_t e = x_.entries_begin(feature); e < x_.entries_end(feature); ++e) scratch.codes[x_.row(feature, e)] = x_.code(e);
  // The tables are all-zero between calls: only touched cells are cleared, so a feature costs
  // its samples, not the cells of CMI's many joint states.
  if (scratch.pair_counts.size() < cells) {
    scratch.pair_counts.resize(cells, 0);
    scratch.cell_counts.resize(cells, 0);
    scratch.cell_weights.resize(cells, 0.0);
  }
  auto cell = [&](int32_t i) { return static_cast<int64_t>(scratch.codes[i]) * ls + s.codes[i]; };
  for (int32_t i = 0; i < n; ++i) ++scratch.pair_counts[cell(i)];

  Terms t;
  const double big_n = n;
  for (int32_t c = 0; c < layout_.n_classes; ++c) {
    const double n_y = layout_.class_start[c + 1] - layout_.class_start[c];
    scratch.touched.clear();
    for (int32_t i = layout_.class_start[c]; i < layout_.class_start[c + 1]; ++i) {
      const int64_t k = cell(i);
      if (scratch.cell_counts[k]++ == 0) scratch.touched.push_back(k);
      scratch.cell_weights[k] += weight_[i];
    }
    for (int64_t k : scratch.touched) {
      const double n_xsy = scratch.cell_counts[k], w = scratch.cell_weights[k];
      const double n_xs = scratch.pair_counts[k];
      const int32_t v = static_cast<int32_t>(k % ls);
      const double n_s = s.counts[v], n_sy = s.class_counts[static_cast<size_t>(c) * ls + v];
      t.joint_mi += w * std::log2(big_n * n_xsy / (n_xs * n_y));
      t.cond_mi += w * std::log2(n_xsy * n_s / (n_sy * n_xs));
      t.joint_entropy -= w * std::log2(n_xsy / big_n);
      scratch.cell_counts[k] = 0;
      scratch.cell_weights[k] = 0;
    }
  }
  for (int32_t i = 0; i < n; ++i) scratch.pair_counts[cell(i)] = 0;
  t.joint_mi /= big_n;
  t.cond_mi /= big_n;
  t.joint_entropy /= big_n;
  return t;
}

void WeightedCpuEngine::score_pass(const Conditioning& s, const StepRule& rule) {
  check_table_size(x_, s);
  if (!supports_weights(rule.method)) throw std::invalid_argument("this criterion takes no weights");
  // Every feature costs N here, sparse or not; slices as in CpuEngine, for interrupts.
  const int64_t slices = std::clamp<int64_t>(x_.n_features * layout_.n_samples >> 26, 1, 64);
  for (int64_t slice = 0; slice < slices; ++slice) {
    if (slice > 0 && between_slices_) between_slices_();
    const int64_t first = x_.n_features * slice / slices, last = x_.n_features * (slice + 1) / slices;
    parallel_for(last - first, threads_, 16, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t f = first + begin; f < first + end; ++f) {
        if (retired_[f]) continue;
        const Terms t = terms_of(f, s, scratch_[worker]);
        const bool first_step = rule.step == 1;
        double& score = score_[f];
        switch (rule.step == 0 ? Method::mim : rule.method) {
          case Method::mim:
            if (rule.step == 0) score = t.joint_mi;  // S is nothing: I(X;Y)
            break;
          case Method::jmi:
            score = (first_step ? 0.0 : score) + t.joint_mi;
            break;
          case Method::disr:
            score = (first_step ? 0.0 : score) + (t.joint_entropy > 0 ? t.joint_mi / t.joint_entropy : 0.0);
            break;
          case Method::cmim:
            score = std::min(score, t.cond_mi);  // from the relevance down
            break;
          default:  // cmi
            score = t.cond_mi;
            break;
        }
      }
    });
  }
}

Candidate WeightedCpuEngine::best_candidate() {
  Candidate best;
  for (int64_t f = 0; f < x_.n_features; ++f) {
    if (retired_[f]) continue;
    const Wide key = ordered_key(score_[f]);
    if (best.feature < 0 || key > best.key) best = Candidate{f, key};
  }
  return best;
}

std::vector<Wide> WeightedCpuEngine::keys() {
  std::vector<Wide> out(score_.size());
  for (size_t f = 0; f < score_.size(); ++f) out[f] = ordered_key(score_[f]);
  return out;
}

}  // namespace fsgpu
