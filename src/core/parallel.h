// The one place that decides how CPU work is split across threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "checkpoint.h"
#include "fork_guard.h"

namespace fsgpu {

// Calls body(begin, end, worker) over [0, n) in chunks of `grain`, on up to `threads` workers
// (worker < threads). Chunks go to workers in no fixed order, so callers must write only
// per-index results: that is what makes every result independent of the thread count.
// The first exception thrown by a body is rethrown on the calling thread. One thread, or a
// forked process (fork_guard.h), runs the chunks in order without starting OpenMP.
template <class Body>
void parallel_for(int64_t n, int threads, int64_t grain, Body&& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n_chunks = (n + grain - 1) / grain;
  threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n_chunks)));
  if (threads == 1 || in_forked_process()) {
    for (int64_t chunk = 0; chunk < n_chunks; ++chunk) body(chunk * grain, std::min(n, (chunk + 1) * grain), 0);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
  for (int64_t chunk = 0; chunk < n_chunks; ++chunk) {
    try {
      int worker = 0;
#ifdef _OPENMP
      worker = omp_get_thread_num();
#endif
      body(chunk * grain, std::min(n, (chunk + 1) * grain), worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// parallel_for over [0, n) in `slices` consecutive slices (at least 1, at most n and
// kMaxSlices), calling between_slices (when set) on the calling thread between them with the
// fraction of slices done: where a long pass reports progress and lets the user interrupt.
// body(i, worker) runs once per index.
constexpr int64_t kMaxSlices = int64_t(1) << 16;  // slices of a fraction of a second even in passes of hours
template <class Body>
void sliced_parallel_for(int64_t n, int64_t slices, int threads, int64_t grain,
                         const Checkpoint& between_slices, Body&& body) {
  slices = std::clamp<int64_t>(slices, 1, std::clamp<int64_t>(n, 1, kMaxSlices));
  for (int64_t slice = 0; slice < slices; ++slice) {
    if (slice > 0 && between_slices) between_slices(static_cast<double>(slice) / static_cast<double>(slices));
    const int64_t first = n * slice / slices, last = n * (slice + 1) / slices;
    parallel_for(last - first, threads, grain, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t i = first + begin; i < first + end; ++i) body(i, worker);
    });
  }
}

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace fsgpu
