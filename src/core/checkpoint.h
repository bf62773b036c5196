// How a long job hands control back to its caller between pieces of work.
#pragma once

#include <functional>

namespace fsgpu {

// Runs on the calling thread between pieces of a long job (never while workers run), with the
// fraction of the job done so far, from 0 to 1: where the caller reports progress and checks for
// a user interrupt. It may throw to abandon the job. Engines call it often enough that a
// piece of work stays well under a second.
using Checkpoint = std::function<void(double done)>;

}  // namespace fsgpu
