// The host stream (mpix/mpix_host_stream.h): an in-order queue run by one worker thread.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/exception_class.hpp"
#include "base/futex_lock.hpp"
#include "base/internal_thread.hpp"
#include "base/settings.hpp"
#include "base/spin_lock.hpp"
#include "base/waiter.hpp"
#include "gpu/backend.hpp"
#include "gpu/gpu_settings.hpp"
#include "gpu/host/host_backend.hpp"
#include "mpix/mpix_host_stream.h"

struct mpix_host_stream_s {
  enum class Kind { fn, write, wait };
  struct Item {
    Kind kind;
    mpix_host_fn_t fn;
    void *arg;
    uint64_t *addr;
    uint64_t value;
    // A wait's second way out (StreamMemOp::alt_word; null: none): *alt reaching alt_value.
    const uint64_t *alt = nullptr;
    uint64_t alt_value = 0;
  };

  // The queue: a ring under mu (several threads may enqueue on one stream), doubled when full.
  // A push signals the worker only while it waits; the worker takes one lock per item, which
  // also counts the item before it executed. mu is a FutexLock: every enqueue takes it once,
  // and a pthread mutex pair costs ~50 instructions of the ~800 an MPIX_Isend_enqueue takes;
  // the condition variables (taken only to sleep and to wake a sleeper) work with any lock.
  mpix::FutexLock mu;
  std::condition_variable_any work_cv;  // worker: items arrived or stop
  std::condition_variable_any done_cv;  // synchronize(): items executed
  std::vector<Item> ring = std::vector<Item>(64);
  std::size_t mask = 63;            // ring.size() - 1, kept: the size is a division by sizeof(Item)
  std::size_t head = 0, count = 0;  // the oldest item's index; items queued
  uint64_t enqueued = 0, executed = 0;
  // enqueued, readable without mu: the worker spins on it for a while before it sleeps, so
  // that a push while it spins needs no wake-up (a system call, ~1 us on a 16-core host).
  std::atomic<uint64_t> pushed{0};
  // The fewest items executed that wakes a synchronize() (the smallest target of those that
  // sleep; kNoWake while none does): the worker wakes them once, when the first target is
  // reached, not at every item (each wake-up a system call for the worker and a trip through
  // the mutex for the sleeper, which on a host with few cores took the worker's CPU).
  static constexpr uint64_t kNoWake = ~uint64_t{0};
  uint64_t sync_wake_at = kNoWake;
  bool worker_waits = false;  // the worker sleeps on work_cv and no push has woken it yet
  bool stop = false;
  std::thread worker;

  // Throws std::system_error if the worker thread cannot be started (the C API turns that
  // into an error class).
  mpix_host_stream_s() : worker([this] { run(); }) {}
  // Runs what was enqueued, then stops the worker.
  ~mpix_host_stream_s() {
    {
      std::lock_guard<mpix::FutexLock> lk(mu);
      stop = true;
    }
    work_cv.notify_one();
    if (worker.joinable()) worker.join();
  }

  // Under mu. Room for @p n more items, in order (the ring is unwrapped into the new array).
  void reserve(std::size_t n) {
    if (count + n <= mask + 1) return;
    std::size_t cap = ring.size();
    while (cap < count + n) cap *= 2;
    std::vector<Item> grown(cap);
    for (std::size_t i = 0; i < count; ++i) grown[i] = ring[(head + i) & mask];
    ring.swap(grown);
    mask = cap - 1;
    head = 0;
  }

  // Under mu; reserve() first. The next free slot, counted as pushed: the caller fills it.
  Item &put() {
    Item &slot = ring[(head + count) & mask];
    ++count;
    pushed.store(++enqueued, std::memory_order_relaxed);
    return slot;
  }

  // Under mu; reserve() first. A write or wait, its fields stored in the slot itself.
  void put_memop(Kind kind, uint64_t *word, uint64_t value, const uint64_t *alt,
                 uint64_t alt_value) {
    Item &it = put();
    it.kind = kind;
    it.fn = nullptr;
    it.arg = nullptr;
    it.addr = word;
    it.value = value;
    it.alt = alt;
    it.alt_value = alt_value;
  }

  // Without mu: spins up to MPIX_HOST_STREAM_SPIN_US until an item is pushed after @p seen.
  void spin_for_work(uint64_t seen) {
    static const auto spin =
        std::chrono::microseconds(mpix::setting_long(mpix::GpuSetting::host_stream_spin_us));
    if (spin.count() <= 0 || mpix::one_cpu_here())
      return;  // a spin on the only CPU delays
               // the pusher
    const auto until = std::chrono::steady_clock::now() + spin;
    for (unsigned i = 1; pushed.load(std::memory_order_relaxed) == seen; ++i) {
      mpix::cpu_relax();
      if ((i & 63) == 0 && std::chrono::steady_clock::now() >= until) return;
    }
  }

  // Under mu, after a put: whether this push wakes the worker. Only the first push after it
  // fell asleep does: clearing worker_waits here spares the pushes that follow before the
  // woken worker runs (on a loaded host, many) a notify of their own.
  bool take_wake() {
    const bool wake = worker_waits;
    worker_waits = false;
    return wake;
  }

  // Under mu: reserve(@p n), then @p fill puts the @p n items; wakes the worker if it sleeps.
  template <class Fill>
  void push_n(std::size_t n, Fill fill) {
    bool wake;
    {
      std::lock_guard<mpix::FutexLock> lk(mu);
      reserve(n);
      fill();
      wake = take_wake();
    }
    if (wake) work_cv.notify_one();
  }

  void push(const Item &it) {
    push_n(1, [&] { put() = it; });
  }

  // One write or wait (the enqueue path's trigger write): no StreamMemOp, no loop.
  void push_one(Kind kind, uint64_t *word, uint64_t value) {
    push_n(1, [&] { put_memop(kind, word, value, nullptr, 0); });
  }

  void push_memops(const mpix::StreamMemOp *ops, std::size_t n) {
    push_n(n, [&] {
      for (std::size_t i = 0; i < n; ++i)
        put_memop(ops[i].kind == mpix::StreamMemOp::write ? Kind::write : Kind::wait, ops[i].word,
                  ops[i].value, ops[i].alt_word, ops[i].alt_value);
    });
  }

  void run() {
    mpix::InternalScope internal;  // host functions' MPI calls skip the plain-MPI stream sync
    mpix::name_this_thread("mpix-hstream");
    mpix::Backoff backoff;
    bool ran = false;  // an item ran since the last lock: counted under the next one
    // A trigger was written and its reader (the agent) may wait for this core: yield once
    // before anything but another write (handoff_yield). Not after each write of a burst: a
    // yield can hand the core to a thread that keeps it for a whole poll period (a busy agent
    // of another rank), and a burst of N triggers then took N such periods.
    bool yield_owed = false;
    for (;;) {
      Item it;
      bool wake_sync = false;
      bool yield_now = false;
      {
        std::unique_lock<mpix::FutexLock> lk(mu);
        if (ran) {
          ++executed;
          if (executed >= sync_wake_at) {  // set under mu before its synchronize() sleeps
            wake_sync = true;
            sync_wake_at = kNoWake;  // a woken one not yet done sets it again
          }
        }
        // Woken outside mu, so that the synchronizing thread does not wake into a held mutex.
        if (wake_sync && count == 0) {
          lk.unlock();
          done_cv.notify_all();
          wake_sync = false;
          lk.lock();
        }
        bool spun = false;
        while (!stop && count == 0) {
          if (!spun) {
            spun = true;
            const uint64_t seen = enqueued;
            lk.unlock();
            if (yield_owed) {
              yield_owed = false;
              mpix::handoff_yield();
            }
            spin_for_work(seen);
            lk.lock();
            continue;  // look again under mu: a push may have come after the spin gave up
          }
          worker_waits = true;
          work_cv.wait(lk);
          worker_waits = false;
        }
        if (count == 0) return;  // stop requested and drained
        it = ring[head];
        head = (head + 1) & mask;
        --count;
        yield_now = yield_owed && it.kind != Kind::write;
        if (it.kind != Kind::write) yield_owed = false;
      }
      if (wake_sync) done_cv.notify_all();
      if (yield_now) mpix::handoff_yield();
      ran = true;
      switch (it.kind) {
        case Kind::fn:
          it.fn(it.arg);
          break;
        case Kind::write:
          mpix::store_signal(it.addr, it.value);
          mpix::notifier().notify();
          yield_owed = true;  // its reader (the agent) may wait for this core
          break;
        case Kind::wait:
          backoff.reset();
          for (;;) {
            uint64_t epoch = mpix::notifier().epoch();
            if (mpix::reached(mpix::load_signal(it.addr), it.value) ||
                (it.alt && mpix::reached(mpix::load_signal(it.alt), it.alt_value)))
              break;
            backoff.pause(epoch);
          }
          break;
      }
    }
  }

  void synchronize() {
    std::unique_lock<mpix::FutexLock> lk(mu);
    uint64_t target = enqueued;
    while (executed < target) {
      if (target < sync_wake_at) sync_wake_at = target;
      done_cv.wait(lk);
    }
  }
};

namespace {

// Live handles, so a destroyed or forged handle is refused instead of dereferenced.
// Process-wide, not the Runtime's (core/runtime.hpp): host streams are made and used without
// MPI, before MPI_Init and after MPI_Finalize; never destroyed, as a stream may be destroyed
// during exit.
std::mutex g_live_mu;
std::unordered_set<mpix_host_stream_t> &live() {
  static auto *s = new std::unordered_set<mpix_host_stream_t>;
  return *s;
}

// Bumped (under g_live_mu) whenever a host stream is destroyed: a stream found live at an epoch
// is still live while the epoch stays the same. Each thread remembers its last answer, so the
// enqueue path (several checks per call, on one stream as a rule) takes no lock.
std::atomic<uint64_t> g_destroyed{0};
thread_local mpix_host_stream_t t_last_live = nullptr;
thread_local uint64_t t_last_epoch = 0;

bool is_live(mpix_host_stream_t s) {
  if (!s) return false;
  const uint64_t epoch = g_destroyed.load(std::memory_order_acquire);
  if (s == t_last_live && epoch == t_last_epoch) return true;
  std::lock_guard<std::mutex> lk(g_live_mu);
  if (live().count(s) == 0) return false;
  t_last_live = s;
  t_last_epoch = g_destroyed.load(std::memory_order_relaxed);
  return true;
}

// The host-stream API's exception barrier: an error class (logged), no MPI error handler (the
// host-stream calls involve no communicator and work without MPI).
template <class Fn>
int host_guard(const char *call, Fn &&fn) noexcept {
  try {
    return fn();
  } catch (...) {
    return mpix::exception_class(call);
  }
}

}  // namespace

bool mpix::host_stream_is_live(mpix_host_stream_t s) { return is_live(s); }

uint64_t mpix::host_stream_destroyed_epoch() { return g_destroyed.load(std::memory_order_acquire); }

int mpix::host_stream_push_memops(mpix_host_stream_t s, const StreamMemOp *ops, std::size_t n) {
  if (!is_live(s)) return MPI_ERR_ARG;
  return host_stream_push_memops_live(s, ops, n);
}

int mpix::host_stream_push_one_live(mpix_host_stream_t s, bool wait, uint64_t *word,
                                    uint64_t value) {
  if (!word) return MPI_ERR_ARG;
  s->push_one(wait ? mpix_host_stream_s::Kind::wait : mpix_host_stream_s::Kind::write, word, value);
  return MPI_SUCCESS;
}

int mpix::host_stream_push_memops_live(mpix_host_stream_t s, const StreamMemOp *ops,
                                       std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!ops[i].word) return MPI_ERR_ARG;
  if (n) s->push_memops(ops, n);
  return MPI_SUCCESS;
}

extern "C" {

int mpix_host_stream_create(mpix_host_stream_t *stream) {
  return host_guard("mpix_host_stream_create", [&]() -> int {
    if (!stream) return MPI_ERR_ARG;
    // The worker reads MPIX_SPIN_US etc.: a bad value is refused here too (logged there).
    if (!mpix::settings_check().is_ok()) return MPI_ERR_ARG;
    auto s = std::make_unique<mpix_host_stream_s>();
    std::lock_guard<std::mutex> lk(g_live_mu);
    live().insert(s.get());
    *stream = s.release();
    return MPI_SUCCESS;
  });
}

int mpix_host_stream_destroy(mpix_host_stream_t *stream) {
  return host_guard("mpix_host_stream_destroy", [&]() -> int {
    if (!stream) return MPI_ERR_ARG;
    mpix_host_stream_t s = *stream;
    {
      std::lock_guard<std::mutex> lk(g_live_mu);
      if (!s || live().erase(s) == 0) return MPI_ERR_ARG;
      g_destroyed.fetch_add(1, std::memory_order_release);
    }
    delete s;  // drains what was enqueued first, then joins the worker
    *stream = nullptr;
    return MPI_SUCCESS;
  });
}

int mpix_host_stream_launch(mpix_host_stream_t stream, mpix_host_fn_t fn, void *arg) {
  return host_guard("mpix_host_stream_launch", [&]() -> int {
    if (!is_live(stream) || !fn) return MPI_ERR_ARG;
    stream->push({mpix_host_stream_s::Kind::fn, fn, arg, nullptr, 0});
    return MPI_SUCCESS;
  });
}

int mpix_host_stream_synchronize(mpix_host_stream_t stream) {
  return host_guard("mpix_host_stream_synchronize", [&]() -> int {
    if (!is_live(stream)) return MPI_ERR_ARG;
    stream->synchronize();
    return MPI_SUCCESS;
  });
}

int mpix_host_stream_write_value64(mpix_host_stream_t stream, uint64_t *addr, uint64_t value) {
  return host_guard("mpix_host_stream_write_value64", [&]() -> int {
    if (!is_live(stream) || !addr) return MPI_ERR_ARG;
    stream->push({mpix_host_stream_s::Kind::write, nullptr, nullptr, addr, value});
    return MPI_SUCCESS;
  });
}

int mpix_host_stream_wait_value64(mpix_host_stream_t stream, const uint64_t *addr, uint64_t value) {
  return host_guard("mpix_host_stream_wait_value64", [&]() -> int {
    if (!is_live(stream) || !addr) return MPI_ERR_ARG;
    stream->push(
        {mpix_host_stream_s::Kind::wait, nullptr, nullptr, const_cast<uint64_t *>(addr), value});
    return MPI_SUCCESS;
  });
}

}  // extern "C"
