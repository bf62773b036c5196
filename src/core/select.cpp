#include "select.h"

#include <cmath>
#include <stdexcept>

#include "impurity_counts.h"

namespace fsgpu {

namespace {

// The rule of a pass of `options.method` against s; `classes` are the engine's.
StepRule make_rule(const SelectionEngine& engine, const ClassTerms& classes, const SelectionOptions& options,
                   int32_t step, int64_t n_selected, const Conditioning& s) {
  StepRule r;
  r.method = options.method;
  r.step = step;
  r.n_selected = n_selected;
  r.class_entropy = classes.entropy();
  r.plogp_n = classes.plogp_n;
  r.class_terms = classes.class_terms;
  r.s_terms = s.total_term;
  r.s_class_terms = s.all_class_terms();
  r.beta = options.beta;
  r.gamma = options.gamma;
  auto small_integer = [](double v) { return v == std::round(v) && std::fabs(v) <= 1048576; };
  r.integral = small_integer(options.beta) && small_integer(options.gamma);
  r.key_scale = engine.key_scale();
  if (impurity_pass(options.method)) r.gini_offset = impurity_offset(engine.layout());
  return r;
}

// How many passes step `step` makes: one, except for JMI3 from its third feature on, which
// makes one per selected feature before the newest (see step_condition).
int64_t step_passes(Method method, int64_t step, int64_t n_selected) {
  return method == Method::jmi3 && step > 1 ? n_selected - 1 : 1;
}

// The conditioning variable of pass `pass` of step `step`, given the features selected so far
// and the previous condition (CMI's joint condition grows from it): none for the relevance
// step; the newest feature S; for CMI the joint variable of all; for JMI3, from the third
// feature on, the pass-th selected feature U joined with S, so that a step adds I(X,U,S;Y) for
// every earlier U: the criterion's sum over pairs of selected features, one pair at a time.
// Joint states that hold one class only are merged: exact for CMI's and JMI3's scores, which
// use only H(Y|X,S) (see with_pure_states_merged()), and fewer states to count.
Conditioning step_condition(SelectionEngine& engine, Method method, int64_t step, int64_t pass,
                            const std::vector<int64_t>& selected, const Conditioning& previous) {
  const CodeMatrix& x = engine.codes();
  const ClassLayout& layout = engine.layout();
  const PlogpTable& plogp = engine.plogp();
  if (step == 0) return Conditioning::none(layout, plogp);
  const int64_t newest = selected.back();
  if (method == Method::cmi) {
    const Conditioning s = step > 1 ? Conditioning::joined(previous, x, newest, layout, plogp)
                                    : Conditioning::on_feature(x, layout, newest, plogp);
    return s.with_pure_states_merged(layout, plogp);
  }
  if (method == Method::jmi3 && step > 1)
    return Conditioning::joined(Conditioning::on_feature(x, layout, selected[pass], plogp), x, newest, layout, plogp)
        .with_pure_states_merged(layout, plogp);
  return engine.condition_on(newest);
}

std::vector<double> scores_of(SelectionEngine& engine, const StepRule& rule) {
  const std::vector<Wide> keys = engine.keys();
  std::vector<double> out(keys.size());
  for (size_t f = 0; f < keys.size(); ++f) out[f] = key_to_score(rule, keys[f], engine.layout().n_samples);
  return out;
}

}  // namespace

Selection select_features(SelectionEngine& engine, const SelectionOptions& options,
                          const std::function<void(int64_t)>& on_step) {
  const ClassLayout& layout = engine.layout();
  if (static_cast<int64_t>(options.fixed.size()) > options.k) throw std::invalid_argument("more fixed features than k");
  const ClassTerms classes = ClassTerms::of(layout, engine.plogp());
  Selection out;
  Conditioning s;
  StepRule rule;
  for (int64_t step = 0; step < options.k; ++step) {
    if (on_step) on_step(step);
    if (step == 0 || options.method != Method::mim) {  // MIM ranks by relevance alone
      const int64_t passes = step_passes(options.method, step, static_cast<int64_t>(out.features.size()));
      for (int64_t pass = 0; pass < passes; ++pass) {
        s = step_condition(engine, options.method, step, pass, out.features, s);
        rule = make_rule(engine, classes, options, static_cast<int32_t>(step), step, s);
        rule.restart = step == 1 || (step == 2 && pass == 0);  // JMI3: the sum over pairs starts at step 2
        engine.score_pass(s, rule);
      }
    } else {
      rule.step = static_cast<int32_t>(step);
      rule.n_selected = step;
    }

    const bool forced = step < static_cast<int64_t>(options.fixed.size());
    Candidate best;
    if (forced) {
      best.feature = options.fixed[step];
      best.key = engine.keys()[best.feature];
    } else {
      best = engine.best_candidate();
    }
    if (best.feature < 0) break;
    const double score = key_to_score(rule, best.key, layout.n_samples);
    if (!forced && score <= options.min_score) break;
    out.features.push_back(best.feature);
    out.scores.push_back(score);
    engine.retire(best.feature);
  }
  return out;
}

std::vector<double> mi_scores(SelectionEngine& engine, Normalization normalize) {
  SelectionOptions options;
  const Conditioning none = Conditioning::none(engine.layout(), engine.plogp());
  StepRule rule = make_rule(engine, ClassTerms::of(engine.layout(), engine.plogp()), options, 0, 0, none);
  rule.normalize = normalize;
  engine.score_pass(none, rule);
  return scores_of(engine, rule);
}

std::vector<double> conditional_scores(SelectionEngine& engine, const Conditioning& z, Method method) {
  if (method != Method::cmi && method != Method::jmi) throw std::invalid_argument("conditional scores are cmi or jmi");
  SelectionOptions options;
  options.method = method;
  const StepRule rule = make_rule(engine, ClassTerms::of(engine.layout(), engine.plogp()), options, 1, 1, z);
  engine.score_pass(z, rule);
  return scores_of(engine, rule);
}

}  // namespace fsgpu
