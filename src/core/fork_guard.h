// Whether this process was forked (parallel::mcfork: BiocParallel's MulticoreParam, mclapply,
// batchtools' multicore) after fsgpu was loaded. GNU libgomp's thread pool does not survive a
// fork: a child that starts a parallel region waits forever for threads it does not have. So a
// forked process runs its CPU work on its one thread (parallel_for checks this), and its R side
// says so (fsgpu_threads()).
#pragma once

namespace fsgpu {

bool in_forked_process();

}  // namespace fsgpu
