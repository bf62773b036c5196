#include "host_blocks.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "fork_guard.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace fsgpu {

namespace {

constexpr size_t kPage = size_t(2) << 20;  // block sizes are multiples of it, aligned to it

struct Block {
  void* p = nullptr;
  size_t bytes = 0;
  void (*unlock)(void*) = nullptr;  // set while the block is page-locked
  bool in_use = false;
  uint64_t given_back = 0;          // when it was last given back (a count): the oldest go first
};

// Never destroyed: a static destructor could run after the CUDA runtime that locked a block has
// shut down.
struct Registry {
  std::mutex mutex;
  std::vector<Block> blocks;  // a few: the blocks in use and those kept
  const PageLocking* locking = nullptr;
  uint64_t clock = 0;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// A child may hold no pages where its parent had locked ones: it leaves those blocks alone.
bool usable(const Block& b) { return !(b.unlock && in_forked_process()); }

void lock_if_asked(Registry& r, Block& b) {
  if (r.locking && !b.unlock && b.bytes <= kKeptHostBytes && !in_forked_process() && r.locking->lock(b.p, b.bytes))
    b.unlock = r.locking->unlock;
}

void release(Block& b) noexcept {
  if (b.unlock) b.unlock(b.p);
  ::operator delete(b.p, std::align_val_t(kPage));
}

// Frees idle blocks, the longest idle first, until those kept take at most `keep` bytes.
void trim(Registry& r, size_t keep) noexcept {
  for (;;) {
    size_t idle = 0;
    auto oldest = r.blocks.end();
    for (auto b = r.blocks.begin(); b != r.blocks.end(); ++b) {
      if (b->in_use || !usable(*b)) continue;
      idle += b->bytes;
      if (oldest == r.blocks.end() || b->given_back < oldest->given_back) oldest = b;
    }
    if (idle <= keep) return;
    release(*oldest);
    r.blocks.erase(oldest);
  }
}

}  // namespace

void set_page_locking(const PageLocking* locking) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.locking = locking;
}

void* take_host_block(size_t bytes) {
  const size_t size = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Block* best = nullptr;
  for (Block& b : r.blocks)
    if (!b.in_use && usable(b) && b.bytes >= size && b.bytes <= 2 * size && (!best || b.bytes < best->bytes)) best = &b;
  if (!best) {
    Block b;
    b.p = ::operator new(size, std::align_val_t(kPage));
    b.bytes = size;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(b.p, size, MADV_HUGEPAGE);  // a refusal leaves 4 KB pages: only slower
#endif
    r.blocks.push_back(b);
    best = &r.blocks.back();
  }
  best->in_use = true;
  lock_if_asked(r, *best);
  return best->p;
}

void give_back_host_block(void* p) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto b = std::find_if(r.blocks.begin(), r.blocks.end(), [&](const Block& x) { return x.p == p; });
  if (b == r.blocks.end()) return;  // not a block: cannot happen through HostBlockAllocator
  if (b->bytes > kKeptHostBytes) {
    release(*b);
    r.blocks.erase(b);
    return;
  }
  b->in_use = false;
  b->given_back = ++r.clock;
  trim(r, kKeptHostBytes);
}

void free_kept_host_blocks() noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  trim(r, 0);
}

KeptHostBlocks kept_host_blocks() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  KeptHostBlocks k;
  for (const Block& b : r.blocks)
    if (!b.in_use) {
      k.bytes += b.bytes;
      ++k.blocks;
      k.locked += b.unlock != nullptr;
    }
  return k;
}

}  // namespace fsgpu
