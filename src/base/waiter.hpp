// How mpix threads wait for a signal word or for work: spin briefly, then yield, then sleep on
// the process-wide notifier. Host-side writers (host-stream writes, the agent's completion
// writes, new ops) call notify(), which wakes sleepers at once; GPU writes and network events
// are seen at the next poll, so the sleep is bounded by MPIX_SLEEP_US.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "base/signal_pool.hpp"  // reached, load_signal, store_signal

namespace mpix {

// Sleepers wait for the epoch to move, on a mutex and condition variable (the epoch is checked
// under the mutex notify takes to wake them). notify() costs one atomic add and one load while
// nobody sleeps.
class Notifier {
 public:
  // Bumps the epoch and wakes every sleeper.
  void notify() {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    // Pairs with the sleepers_ increment in wait(): either the sleeper sees the new epoch (its
    // check under the mutex), or we see it registered and wake it.
    if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_all();
  }
  uint64_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }
  // Sleeps until the epoch differs from @p seen or @p timeout passes.
  void wait(uint64_t seen, std::chrono::microseconds timeout);

 private:
  void wake_all();

  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

// The one notifier of the process.
Notifier &notifier();

// After a thread wrote a word that another mpix thread waits for: one sched_yield, so that a
// reader sharing this core runs now instead of after this thread's next spin
// (MPIX_HANDOFF_YIELD).
void handoff_yield();
// How many CPUs this process may run on (its affinity mask; 0 if unknown).
int cpus_here();
// Whether this process may run on fewer than 4 CPUs (its affinity mask): its threads and the
// other ranks' then share cores, and a thread that keeps polling delays the others.
bool few_cpus_here();
// Whether it may run on one CPU only (e.g. `mpirun --bind-to core`, Open MPI's default for two
// ranks): every mpix thread then waits by yielding, never by spinning (a spin holds the only
// CPU from the thread it waits for until the scheduler preempts it).
bool one_cpu_here();

// Spin -> yield -> sleep escalation for one waiting episode; reset() when progress is made.
class Backoff {
 public:
  Backoff();
  void reset();
  // Waits a little; @p seen_epoch is notifier().epoch() read before the condition was checked.
  // @p busy: work is in flight that only polling advances (the agent with posted transfers):
  // stay in the yield phase for MPIX_BUSY_YIELD_US instead of MPIX_YIELD_US, and yield there
  // at most once per MPIX_BUSY_POLL_US (a system call per poll slowed large transfers).
  // @p large: a transfer in flight needs this thread in MPI (keep the core between polls,
  // yielding once per MPIX_BUSY_POLL_US); busy without it, on few CPUs, yields at every poll.
  // On few CPUs a waiter that is not busy yields from its first pause (no spin).
  void pause(uint64_t seen_epoch, bool busy = false, bool large = true);
  // True once the waiter has reached the sleeping phase.
  bool sleeping() const { return phase_ == 2; }

 private:
  std::chrono::steady_clock::time_point start_;
  std::chrono::microseconds spin_, yield_, busy_yield_, busy_poll_, sleep_max_, sleep_;
  std::chrono::steady_clock::time_point last_yield_;  // busy polls: when it last yielded
  int phase_ = 0;
  unsigned count_ = 0;
};

}  // namespace mpix
