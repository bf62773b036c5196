// Work spread over several GPUs, a host thread per device.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <vector>

namespace fsgpu {

// Runs work(d) for d = 0 .. n_devices - 1, each on a thread of its own, and waits for them,
// calling between() on this thread about ten times a second (where the caller checks for an
// interrupt). On an error, from between() or from a device, `cancel` is set so that the others
// stop after their current piece of work, and the first error is rethrown once all are done.
inline void run_on_devices(size_t n_devices, const std::function<void(size_t)>& work,
                           const std::function<void()>& between, std::atomic<bool>& cancel) {
  std::vector<std::future<void>> running;
  for (size_t d = 0; d < n_devices; ++d) running.push_back(std::async(std::launch::async, work, d));
  std::exception_ptr error;
  for (auto& r : running) {
    while (!error && r.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      try {
        if (between) between();
      } catch (...) {
        error = std::current_exception();
        cancel = true;
      }
    }
    try {
      r.get();
    } catch (...) {
      if (!error) error = std::current_exception();
      cancel = true;
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace fsgpu
