#include "base/waiter.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "base/base_settings.hpp"
#include "base/spin_lock.hpp"  // cpu_relax

namespace mpix {

// A condition variable, not a futex on the epoch word: measured, a futex was no faster at 10,000
// ops in flight and slower at 1000 (bench/mpix_scale drain per op, 2-core machine, same run).
void Notifier::wake_all() {
  std::lock_guard<std::mutex> lk(mu_);
  cv_.notify_all();
}

void Notifier::wait(uint64_t seen, std::chrono::microseconds timeout) {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, timeout, [&] { return epoch_.load(std::memory_order_seq_cst) != seen; });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

Notifier &notifier() {
  // Process-wide, below the Runtime: host-stream threads wait on it without MPI, and may during
  // exit; never destroyed.
  static Notifier *n = new Notifier;
  return *n;
}

namespace {

// MPIX_HANDOFF_YIELD: auto yields where the process's threads (the caller's, the agent, host
// stream workers) must share few CPUs; with free cores the reader runs on one of its own.
bool handoff_yield_on() {
  const char *v = setting_str(BaseSetting::handoff_yield);
  if (std::strcmp(v, "on") == 0) return true;
  if (std::strcmp(v, "off") == 0) return false;
  return few_cpus_here();
}

}  // namespace

int cpus_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
}

bool few_cpus_here() {
  const int n = cpus_here();
  return n > 0 && n < 4;
}

bool one_cpu_here() {
  static const bool one = cpus_here() == 1;
  return one;
}

void handoff_yield() {
  static const bool on = handoff_yield_on();
  if (on) sched_yield();
}

Backoff::Backoff()
    : spin_(setting_long(BaseSetting::spin_us)),
      yield_(setting_long(BaseSetting::yield_us)),
      busy_yield_(
          std::max(yield_, std::chrono::microseconds(setting_long(BaseSetting::busy_yield_us)))),
      busy_poll_(setting_long(BaseSetting::busy_poll_us)),
      sleep_max_(setting_long(BaseSetting::sleep_us)),
      sleep_(1) {
  reset();
}

void Backoff::reset() {
  phase_ = 0;
  count_ = 0;
  sleep_ = std::chrono::microseconds(1);
  start_ = std::chrono::steady_clock::now();
}

void Backoff::pause(uint64_t seen_epoch, bool busy, bool large) {
  static const bool few_cpus = few_cpus_here();
  static const bool one_cpu = one_cpu_here();
  if (phase_ < 2 && (++count_ & 63) == 0) {
    auto waited = std::chrono::steady_clock::now() - start_;
    if (waited > spin_ + (busy ? busy_yield_ : yield_)) phase_ = 2;
    else if (waited > spin_) phase_ = 1;
  }
  switch (phase_) {
    case 0:
      // On one CPU a spin only delays the thread this one waits for: yield instead. So on
      // few CPUs, unless a transfer is in flight that this thread's polls move (@p busy): the
      // word waited for is then written by a thread of this process (a host stream's worker,
      // the agent) that may share this CPU. The spin ends after 64 polls at the earliest, and
      // an agent polling ofi:tcp (system calls, ~2 us a poll) spun ~140 us before its first
      // yield while the worker that fires the next send waited on its CPU (2 cores, session
      // 25: whole sizes of mpix_latency at ~150 us one way instead of 15-20).
      if (one_cpu || (few_cpus && !busy)) sched_yield();
      else cpu_relax();
      break;
    case 1:
      // Busy: a large message moves only while both ranks call MPI (Open MPI's shared-memory
      // pipeline without single-copy), and a yield costs a system call (~1 us) per poll, more
      // when it hands the core to another waiter; yield once per MPIX_BUSY_POLL_US, so that a
      // thread sharing the core still gets it.
      // Only small messages in flight on few CPUs: yield at every poll (they need the threads
      // that share this core, not this one in MPI).
      // On one CPU the thread that shares it is this process's own (the user's, a host
      // stream's worker): yield at every poll.
      if (busy && busy_poll_.count() > 0 && (large || !few_cpus) && !one_cpu) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_yield_ < busy_poll_) {
          cpu_relax();
          break;
        }
        last_yield_ = now;
      }
      sched_yield();
      break;
    default:
      notifier().wait(seen_epoch, sleep_);
      if (sleep_ < sleep_max_) sleep_ *= 2;
      if (sleep_ > sleep_max_) sleep_ = sleep_max_;
      break;
  }
}

}  // namespace mpix
