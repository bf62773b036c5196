// A std::vector whose new elements are left uninitialised, for big arrays that several threads
// then fill in full (kNN's point rows, the code matrix): value-initialising them first would
// touch every page on one thread (a second of 1.5 million points' 3.6 GB; 0.75 s here of the
// SVHN shape's 1.6 GB of codes) before the threads write them again.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace fsgpu {

template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using RowVector = std::vector<T, UninitialisedAllocator<T>>;

}  // namespace fsgpu
