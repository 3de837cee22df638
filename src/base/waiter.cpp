#include "base/waiter.hpp"

#include <sched.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <climits>

#include "base/settings.hpp"

namespace mpix {

#ifdef __linux__

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the futex word is the atomic's own storage");

void Notifier::wake_all() {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&epoch_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

void Notifier::wait(uint64_t seen, std::chrono::microseconds timeout) {
  const auto word = static_cast<uint32_t>(seen);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  // FUTEX_WAIT sleeps only while the word still holds @p seen (checked by the kernel after it
  // queued us): a notify after our check either changed the word first or finds us queued.
  if (epoch_.load(std::memory_order_seq_cst) == word) {
    // An absolute deadline on CLOCK_MONOTONIC, as the condition variable's was: a deadline
    // already past by the time the kernel sees it (a nap of a microsecond or two) returns at
    // once, where a relative timeout would sleep it plus the timer slack (50 us by default).
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const long long ns = static_cast<long long>(ts.tv_nsec) +
                         std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    ts.tv_sec += static_cast<time_t>(ns / 1000000000);
    ts.tv_nsec = static_cast<long>(ns % 1000000000);
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&epoch_), FUTEX_WAIT_BITSET_PRIVATE, word, &ts,
            nullptr, FUTEX_BITSET_MATCH_ANY);
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

#else  // a condition variable: the epoch is checked under the mutex notify takes to wake

void Notifier::wake_all() {
  std::lock_guard<std::mutex> lk(mu_);
  cv_.notify_all();
}

void Notifier::wait(uint64_t seen, std::chrono::microseconds timeout) {
  const auto word = static_cast<uint32_t>(seen);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, timeout, [&] { return epoch_.load(std::memory_order_seq_cst) != word; });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

#endif

Notifier &notifier() {
  // Process-wide, below the Runtime: host-stream threads wait on it without MPI, and may during
  // exit; never destroyed.
  static Notifier *n = new Notifier;
  return *n;
}

Backoff::Backoff()
    : spin_(setting_long(Setting::spin_us)),
      yield_(setting_long(Setting::yield_us)),
      busy_yield_(
          std::max(yield_, std::chrono::microseconds(setting_long(Setting::busy_yield_us)))),
      sleep_max_(setting_long(Setting::sleep_us)),
      sleep_(1) {
  reset();
}

void Backoff::reset() {
  phase_ = 0;
  count_ = 0;
  sleep_ = std::chrono::microseconds(1);
  start_ = std::chrono::steady_clock::now();
}

void Backoff::pause(uint64_t seen_epoch, bool busy) {
  if (phase_ < 2 && (++count_ & 63) == 0) {
    auto waited = std::chrono::steady_clock::now() - start_;
    if (waited > spin_ + (busy ? busy_yield_ : yield_)) phase_ = 2;
    else if (waited > spin_) phase_ = 1;
  }
  switch (phase_) {
    case 0:
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      break;
    case 1:
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
