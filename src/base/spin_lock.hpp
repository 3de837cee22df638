// A lock for critical sections of a few dozen instructions taken on the enqueue path: one
// atomic exchange to take and one store to release (a pthread mutex costs ~50 instructions for
// the pair, uncontended). A waiter spins briefly, then yields its core: the holder may have
// been preempted (more threads than cores). BasicLockable, for std::lock_guard. Not for
// sections that block or call out.
#pragma once

#include <atomic>
#include <thread>

namespace mpix {

// One pause of a spin-wait loop: tells the core this thread is spinning (x86 PAUSE, Arm YIELD).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) wait_free();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  // Reads until the lock looks free (no write traffic on the holder's line while it works).
  void wait_free() const {
    for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
      if (spins < 64) cpu_relax();
      else std::this_thread::yield();
    }
  }

  std::atomic<bool> held_{false};
};

}  // namespace mpix
