#include "fork_guard.h"

#include <atomic>

#ifndef _WIN32
#include <pthread.h>
#endif

namespace fsgpu {
namespace {

std::atomic<bool> forked{false};

// Registered when the library loads, so every later fork marks its child.
struct ForkWatch {
  ForkWatch() {
#ifndef _WIN32
    pthread_atfork(nullptr, nullptr, [] { forked = true; });
#endif
  }
} const watch;

}  // namespace

bool in_forked_process() { return forked; }

}  // namespace fsgpu
