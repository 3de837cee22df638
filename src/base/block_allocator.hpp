// An allocator that keeps freed blocks for reuse, for objects one thread makes and another
// frees at a high rate (a staged op's stager: made by the enqueuing thread, freed by the agent
// when the op retires). glibc's malloc then finds its thread cache empty on the making thread
// every time (the frees filled the other thread's) and takes its slow path, ~130 instructions
// a staged op (session 30).
//
// Each thread keeps blocks of its own: it allocates from them, and what it frees goes there
// first; past kBatch, its frees go to a shared list in batches of kBatch, and a thread out of
// blocks takes a batch from there: one lock (and one cache line crossing cores) per kBatch
// blocks, not per block, which a shared list took (session 30: no faster than malloc). One
// shared list per block type (std::allocate_shared rebinds the allocator to its control block:
// that type's size is the block's), holding at most kKeep blocks (the rest go back to the heap);
// never destroyed (a block may be freed by a thread that outlives static destruction). A
// thread's own blocks go to the shared list when it ends.
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include "base/futex_lock.hpp"
#include "base/tls_fast.hpp"

namespace mpix {

template <typename T>
class BlockAllocator {
 public:
  using value_type = T;
  static constexpr std::size_t kBatch = 32;
  static constexpr std::size_t kKeep = 4096;

  BlockAllocator() noexcept = default;
  template <typename U>
  BlockAllocator(const BlockAllocator<U> &) noexcept {}

  T *allocate(std::size_t n) {
    if (n == 1) {
      if (Local *l = local()) {
        if (l->blocks.empty()) shared().take(&l->blocks);
        if (!l->blocks.empty()) {
          void *p = l->blocks.back();
          l->blocks.pop_back();
          return static_cast<T *>(p);
        }
      }
    }
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }
  void deallocate(T *p, std::size_t n) noexcept {
    Local *l = n == 1 ? local() : nullptr;
    if (!l) {
      ::operator delete(p);
      return;
    }
    // reserve()d to 2 * kBatch: a push_back below that never allocates, so never throws.
    l->blocks.push_back(p);
    if (l->blocks.size() == 2 * kBatch) shared().give(&l->blocks, kBatch);
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

  struct Shared {
    Shared() { blocks.reserve(kKeep); }
    // Up to kBatch blocks into @p to (empty).
    void take(std::vector<void *> *to) {
      std::lock_guard<FutexLock> lk(mu);
      const std::size_t n = blocks.size() < kBatch ? blocks.size() : kBatch;
      to->insert(to->end(), blocks.end() - static_cast<std::ptrdiff_t>(n), blocks.end());
      blocks.resize(blocks.size() - n);
    }
    // The last @p n of @p from, kept while fewer than kKeep are, else back to the heap.
    void give(std::vector<void *> *from, std::size_t n) {
      std::lock_guard<FutexLock> lk(mu);
      for (std::size_t i = 0; i < n; ++i) {
        void *p = from->back();
        from->pop_back();
        if (blocks.size() < kKeep) blocks.push_back(p);
        else ::operator delete(p);
      }
    }
    FutexLock mu;
    std::vector<void *> blocks;
  };
  static Shared &shared() {
    static Shared *const s = new Shared;  // never destroyed (above)
    return *s;
  }

  // A thread's own blocks, made on its first use; at its end an Owner gives them to the shared
  // list and leaves the pointer null for good (t_gone): a block freed later on that thread (a
  // thread-local destructor that runs after, say) goes to the heap.
  struct Local {
    Local() { blocks.reserve(2 * kBatch); }
    std::vector<void *> blocks;
  };
  struct Owner {
    ~Owner() {
      if (!t_local) return;
      shared().give(&t_local->blocks, t_local->blocks.size());
      delete t_local;
      t_local = nullptr;
      t_gone = true;
    }
  };
  static Local *local() noexcept {
    if (t_local || t_gone) return t_local;
    try {
      thread_local Owner owner;
      t_local = new Local;
    } catch (...) {
      return nullptr;  // no memory for the list: the heap serves this call
    }
    return t_local;
  }
  // A plain pointer and flag (no constructor, no destructor; MPIX_TLS_FAST): one load each.
  static thread_local Local *t_local;
  static thread_local bool t_gone;
};

template <typename T>
thread_local typename BlockAllocator<T>::Local *BlockAllocator<T>::t_local MPIX_TLS_FAST = nullptr;
template <typename T>
thread_local bool BlockAllocator<T>::t_gone MPIX_TLS_FAST = false;

}  // namespace mpix
