// A mutex for a section taken once per enqueue that may also call out for microseconds (a GPU
// stream operation): uncontended, one compare-and-swap to take and one exchange to release (a
// pthread mutex pair costs ~50 instructions); contended, the waiter sleeps in the kernel, as
// with a pthread mutex, instead of spinning as SpinLock (base/spin_lock.hpp) does. On Linux a
// futex word (0 free, 1 held, 2 held with sleepers: Drepper's "Futexes Are Tricky", mutex 2);
// elsewhere a std::mutex. BasicLockable, for std::lock_guard.
#pragma once

#include <atomic>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <mutex>
#endif

namespace mpix {

#if defined(__linux__)

class FutexLock {
 public:
  void lock() {
    int c = 0;
    if (word_.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;
    lock_contended(c);
  }
  void unlock() {
    if (word_.exchange(0, std::memory_order_release) == 2) wake_one();
  }

 private:
  // @p c: the value the fast path's compare-and-swap saw (1 or 2). Marks the lock contended (2)
  // and sleeps until it is free; whoever takes it from here leaves it at 2, so that its unlock
  // wakes the next sleeper (at worst one wake-up too many).
  void lock_contended(int c) {
    if (c != 2) c = word_.exchange(2, std::memory_order_acquire);
    while (c != 0) {
      syscall(SYS_futex, reinterpret_cast<int *>(&word_), FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr,
              0);
      c = word_.exchange(2, std::memory_order_acquire);
    }
  }
  void wake_one() {
    syscall(SYS_futex, reinterpret_cast<int *>(&word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }

  static_assert(sizeof(std::atomic<int>) == sizeof(int), "the futex word is a plain int");
  std::atomic<int> word_{0};
};

#else

class FutexLock {
 public:
  void lock() { mu_.lock(); }
  void unlock() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

#endif

}  // namespace mpix
