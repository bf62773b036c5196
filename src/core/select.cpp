#include "select.h"

#include <cmath>
#include <stdexcept>

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
  return r;
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
  const CodeMatrix& x = engine.codes();
  const ClassLayout& layout = engine.layout();
  if (static_cast<int64_t>(options.fixed.size()) > options.k) throw std::invalid_argument("more fixed features than k");
  const ClassTerms classes = ClassTerms::of(layout, engine.plogp());
  Selection out;
  Conditioning s = Conditioning::none(layout, engine.plogp());
  for (int64_t step = 0; step < options.k; ++step) {
    if (on_step) on_step(step);
    if (step > 0 && options.method != Method::mim) {  // condition on the newest feature (CMI: on all, joined)
      const int64_t newest = out.features.back();
      if (options.method == Method::cmi) {  // CMI's score uses only H(Y|X,S): see with_pure_states_merged()
        s = step > 1 ? Conditioning::joined(s, x, newest, layout, engine.plogp())
                     : Conditioning::on_feature(x, layout, newest, engine.plogp());
        s = s.with_pure_states_merged(layout, engine.plogp());
      } else {
        s = Conditioning::on_feature(x, layout, newest, engine.plogp());
      }
    }
    const StepRule rule = make_rule(engine, classes, options, static_cast<int32_t>(step), step, s);
    if (step == 0 || options.method != Method::mim) engine.score_pass(s, rule);  // MIM ranks by relevance alone

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

std::vector<double> mi_scores(SelectionEngine& engine) {
  SelectionOptions options;
  const Conditioning none = Conditioning::none(engine.layout(), engine.plogp());
  const StepRule rule = make_rule(engine, ClassTerms::of(engine.layout(), engine.plogp()), options, 0, 0, none);
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
