// An allocator that keeps freed blocks for reuse, for objects one thread makes and another
// frees at a high rate (a staged op's stager: made by the enqueuing thread, freed by the agent
// when the op retires). glibc's malloc then finds its thread cache empty on the making thread
// every time (the frees filled the other thread's) and takes its slow path, ~130 instructions
// a staged op (session 30); a block from this free list costs an uncontended lock and a pop.
//
// One free list per block type (std::allocate_shared rebinds the allocator to its control
// block: that type's size is the block's), shared by all threads under a FutexLock, at most
// kKeep blocks kept (the rest go back to malloc). The lists live until the process ends (never
// destroyed: a block may be freed by a thread that outlives static destruction).
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "base/futex_lock.hpp"

namespace mpix {

template <typename T>
class BlockAllocator {
 public:
  using value_type = T;
  // Blocks kept per type; beyond them, frees go to the heap.
  static constexpr std::size_t kKeep = 4096;

  BlockAllocator() noexcept = default;
  template <typename U>
  BlockAllocator(const BlockAllocator<U> &) noexcept {}

  T *allocate(std::size_t n) {
    if (n == 1) {
      FreeList &f = list();
      std::lock_guard<FutexLock> lk(f.mu);
      if (!f.blocks.empty()) {
        void *p = f.blocks.back();
        f.blocks.pop_back();
        return static_cast<T *>(p);
      }
    }
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }
  void deallocate(T *p, std::size_t n) noexcept {
    if (n == 1) {
      FreeList &f = list();
      std::lock_guard<FutexLock> lk(f.mu);
      if (f.blocks.size() < kKeep) {
        // reserve()d to kKeep at creation: this push_back never allocates, so never throws.
        f.blocks.push_back(p);
        return;
      }
    }
    ::operator delete(p);
  }

  template <typename U>
  bool operator==(const BlockAllocator<U> &) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const BlockAllocator<U> &) const noexcept {
    return false;
  }

 private:
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "blocks come from plain operator new");
  struct FreeList {
    FreeList() { blocks.reserve(kKeep); }
    FutexLock mu;
    std::vector<void *> blocks;
  };
  static FreeList &list() {
    static FreeList *const f = new FreeList;  // never destroyed (above)
    return *f;
  }
};

}  // namespace mpix
