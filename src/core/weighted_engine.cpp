#include "weighted_engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cpu_engine.h"
#include "parallel.h"

namespace fsgpu {

bool supports_weights(Method m) {
  return m == Method::mim || m == Method::jmi || m == Method::disr || m == Method::cmim || m == Method::cmi;
}

WeightedCpuEngine::WeightedCpuEngine(const CodeMatrix& x, const ClassLayout& layout, const std::vector<double>& weights,
                                     int threads, Checkpoint between_slices)
    : between_slices_(std::move(between_slices)),
      x_(x),
      layout_(layout),
      threads_(threads < 1 ? 1 : threads),
      plogp_(layout.n_samples),
      log2_(static_cast<size_t>(layout.n_samples) + 1, 0),
      weight_(layout.n_samples),
      state_(x.n_features),
      retired_(x.n_features, 0),
      scratch_(threads_) {
  if (static_cast<int64_t>(weights.size()) != layout.n_samples) throw std::invalid_argument("one weight per sample");
  double largest = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w)) throw std::invalid_argument("weights must be finite and >= 0");
    largest = std::max(largest, w);
  }
  // A power of two puts the largest weight in [2^36, 2^37): a cell's summed weight stays below
  // 2^63 for up to kMaxSamples samples, and W * (sum of logs) below 2^127.
  if (largest > 0) weight_scale_ = std::ldexp(1.0, 36 - std::ilogb(largest));
  for (int32_t i = 0; i < layout.n_samples; ++i) weight_[layout.position[i]] = std::llround(weights[i] * weight_scale_);
  for (int64_t n = 1; n <= layout.n_samples; ++n) log2_[n] = std::llround(std::ldexp(std::log2(double(n)), kLogBits));
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
    scratch.cell_weights.resize(cells, 0);
  }
  auto cell = [&](int32_t i) { return static_cast<int64_t>(scratch.codes[i]) * ls + s.codes[i]; };
  for (int32_t i = 0; i < n; ++i) ++scratch.pair_counts[cell(i)];

  Terms t;
  for (int32_t c = 0; c < layout_.n_classes; ++c) {
    const int64_t log_y = log2_[layout_.class_start[c + 1] - layout_.class_start[c]];
    scratch.touched.clear();
    for (int32_t i = layout_.class_start[c]; i < layout_.class_start[c + 1]; ++i) {
      const int64_t k = cell(i);
      if (scratch.cell_counts[k]++ == 0) scratch.touched.push_back(k);
      scratch.cell_weights[k] += weight_[i];
    }
    for (int64_t k : scratch.touched) {
      const int32_t v = static_cast<int32_t>(k % ls);
      const int64_t log_xsy = log2_[scratch.cell_counts[k]], log_xs = log2_[scratch.pair_counts[k]];
      const int64_t log_s = log2_[s.counts[v]], log_sy = log2_[s.class_counts[static_cast<size_t>(c) * ls + v]];
      const Wide w = scratch.cell_weights[k];
      t.joint_mi += w * (log2_[n] + log_xsy - log_xs - log_y);
      t.cond_mi += w * (log_xsy + log_s - log_sy - log_xs);
      t.joint_entropy += w * (log2_[n] - log_xsy);
      scratch.cell_counts[k] = 0;
      scratch.cell_weights[k] = 0;
    }
  }
  for (int32_t i = 0; i < n; ++i) scratch.pair_counts[cell(i)] = 0;
  return t;
}

void WeightedCpuEngine::score_pass(const Conditioning& s, const StepRule& rule) {
  check_table_size(x_, s);
  if (!supports_weights(rule.method)) throw std::invalid_argument("this criterion takes no weights");
  // Every feature costs N here, sparse or not: slices by features x samples, as CpuEngine's by entries.
  sliced_parallel_for(x_.n_features, x_.n_features * layout_.n_samples / CpuEngine::kSliceEntries, threads_, 16,
                      between_slices_, [&](int64_t f, int worker) {
    if (retired_[f]) return;
    const Terms t = terms_of(f, s, scratch_[worker]);
    FeatureState& st = state_[f];
    const bool first_step = rule.step == 1;
    switch (rule.step == 0 ? Method::mim : rule.method) {
      case Method::mim:  // S is nothing: I(X;Y)
        if (rule.step == 0) st.key = t.joint_mi;
        break;
      case Method::jmi:
        st.sum1 = (first_step ? Wide(0) : st.sum1) + t.joint_mi;
        st.key = st.sum1;
        break;
      case Method::disr: {
        const double entropy = wide_to_double(t.joint_entropy);
        st.real = (first_step ? 0.0 : st.real) + (entropy > 0 ? wide_to_double(t.joint_mi) / entropy : 0.0);
        st.key = ordered_key(st.real);
        break;
      }
      case Method::cmim:  // from the relevance down
        st.key = smaller(st.key, t.cond_mi);
        break;
      default:  // cmi
        st.key = t.cond_mi;
        break;
    }
  });
}

Candidate WeightedCpuEngine::best_candidate() { return best_of(state_, retired_); }

std::vector<Wide> WeightedCpuEngine::keys() { return keys_of(state_); }

}  // namespace fsgpu
