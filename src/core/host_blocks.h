// Big host arrays kept from one call to the next: the prepared rows of a kNN search and its
// neighbour lists. A search of 24,158 x 295 points spent about as long on memory it had never
// used as its GPU spent scoring: the first touch of 57 MB of fresh prepared rows took 5.6-6.3 ms
// of 16 threads (a page fault every 4 KB), and their upload from pageable memory needed a copy
// through page-locked staging buffers. So a block given back is kept (the most recently given
// back, up to kKeptHostBytes in all), already touched, and page-locked once a GPU search has
// asked for it (set_page_locking()): the next search of a similar size writes it without faults
// and a device reads it directly.
#pragma once

#include <cstddef>
#include <memory>

#include "row_vector.h"

namespace fsgpu {

// Arrays from this size on come in blocks (in 2 MB pages where the kernel gives them); smaller
// ones from the heap, whose first touch costs little.
constexpr size_t kHostBlockMinBytes = size_t(1) << 20;
// Blocks up to this size are kept when given back (at most this much in all); bigger ones are
// freed: their searches take long enough that a first touch is a small part of them.
constexpr size_t kKeptHostBytes = size_t(256) << 20;

// How blocks are page-locked and unlocked (the GPU backend's cudaHostRegister and
// cudaHostUnregister). lock() returns false where it could not: the block stays pageable, which
// only makes its uploads slower.
struct PageLocking {
  bool (*lock)(void* p, size_t bytes);
  void (*unlock)(void* p);
};

// From now on every block that can be kept is page-locked when taken (a block taken before is
// locked when next taken). Null stops new locking; locked blocks stay locked until freed. The
// GPU backend installs its locking before a search, never when the package loads.
void set_page_locking(const PageLocking* locking);

// A block of at least `bytes`, uninitialised: a kept block when one fits (at most twice the
// size asked for), else a new one. A forked process (fork_guard.h) never takes a block its parent
// locked: the pages of page-locked memory need not exist in a child.
void* take_host_block(size_t bytes);

// Gives back a block from take_host_block(): kept when it is small enough, else freed; the
// blocks given back longest ago are freed while those kept exceed kKeptHostBytes.
void give_back_host_block(void* p) noexcept;

// Frees every kept block that is not in use (unlocking the locked ones).
void free_kept_host_blocks() noexcept;

// The bytes of the kept blocks not in use, and how many of them are page-locked.
struct KeptHostBlocks {
  size_t bytes = 0;
  int blocks = 0, locked = 0;
};
KeptHostBlocks kept_host_blocks();

// The allocator of host arrays: uninitialised (as RowVector), in blocks from kHostBlockMinBytes on.
template <class T>
struct HostBlockAllocator : UninitialisedAllocator<T> {
  template <class U>
  struct rebind {
    using other = HostBlockAllocator<U>;
  };
  HostBlockAllocator() = default;
  template <class U>
  HostBlockAllocator(const HostBlockAllocator<U>&) noexcept {}
  static bool in_block(size_t n) { return n * sizeof(T) >= kHostBlockMinBytes; }
  T* allocate(size_t n) {
    return in_block(n) ? static_cast<T*>(take_host_block(n * sizeof(T))) : std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (in_block(n)) give_back_host_block(p);
    else std::allocator<T>::deallocate(p, n);
  }
};
template <class T>
using HostArray = std::vector<T, HostBlockAllocator<T>>;

}  // namespace fsgpu
