// Progress and interrupts of a long job, for the glue: what the core's checkpoints call.
#pragma once

#include <Rcpp.h>

#include <chrono>

#include "core/checkpoint.h"

namespace fsgpu {

// A job's progress as the R side asked for it (R/progress.R): `spec` is NULL (interrupts only)
// or list(update = function(done), interval = seconds). Every checkpoint checks for a user
// interrupt, which throws: that is what stops a job within one piece of the core's work of
// Ctrl-C. The fraction done goes to update() only when it has grown and at most every `interval`
// seconds, since the core may reach checkpoints thousands of times a second. All of this runs on
// the main R thread: the core calls checkpoints there, never from its workers.
class JobProgress {
 public:
  explicit JobProgress(SEXP spec);
  // Reports `done` of the whole job.
  void report(double done);
  // The checkpoint of a part of the job that spans [first, first + width) of it: a selection
  // step, one discretization of several.
  Checkpoint part(double first, double width) {
    return [this, first, width](double done) { report(first + width * done); };
  }
  Checkpoint whole() { return part(0, 1); }

 private:
  using Clock = std::chrono::steady_clock;
  SEXP update_ = R_NilValue;  // kept alive by the caller's argument list
  Clock::duration interval_{};
  Clock::time_point next_;
  double reported_ = 0;
};

inline JobProgress::JobProgress(SEXP spec) {
  if (Rf_isNull(spec)) return;
  const Rcpp::List list(spec);
  update_ = list["update"];
  interval_ = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(Rcpp::as<double>(list["interval"])));
  next_ = Clock::now() + interval_;
}

inline void JobProgress::report(double done) {
  Rcpp::checkUserInterrupt();
  if (Rf_isNull(update_) || done <= reported_) return;
  const Clock::time_point now = Clock::now();
  if (now < next_) return;
  next_ = now + interval_;
  reported_ = done;
  const Rcpp::Function update(update_);
  update(done);
}

}  // namespace fsgpu
