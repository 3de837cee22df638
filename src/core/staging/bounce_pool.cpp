#include "core/staging/bounce_pool.hpp"

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/runtime.hpp"
#include "gpu/backend.hpp"
#include "gpu/ipc_exports.hpp"

namespace mpix {
namespace {

// Smallest power of two >= bytes, at least one page; or a power of two and one page where that
// holds them: a staged receive of 2^k bytes needs its span and a few words after it (its length
// and source words), which would otherwise take a buffer of twice the size (a 64 MiB receive,
// 128 MiB of pinned memory).
std::size_t size_class(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  std::size_t c = kPage;
  while (c < bytes) c <<= 1;
  if (c > 2 * kPage && bytes <= c / 2 + kPage) return c / 2 + kPage;
  return c;
}

class Pool {
 public:
  Status acquire(Backend *be, std::size_t bytes, Bounce *out, int device) {
    std::size_t cap = size_class(bytes);
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = free_.find(Key{be, device, cap});
      if (it != free_.end() && take(it->second, out)) {
        --cached_;
        ++in_use_;
        return {};
      }
    }
    void *p = nullptr;
    if (device < 0) MPIX_TRY(be->alloc_pinned(cap, &p));
    else MPIX_TRY(alloc_unexported(be, device, cap, &p));
    MPIX_LOG(debug, "stream", "staging: new %zu-byte bounce buffer (%s)", cap,
             device < 0 ? "pinned" : "device");
    std::lock_guard<std::mutex> lk(mu_);
    *out = Bounce{be, static_cast<char *>(p), cap, device};
    ++in_use_;
    bytes_ += cap;
    return {};
  }

  void release(const Bounce &b, const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    Class &c = free_[Key{b.be, b.device, b.cap}];
    if (word) c.pending.push_back(Entry{b, word, value});
    else c.ready.push_back(b);
    --in_use_;
    ++cached_;
  }

  // Device memory for a GPU-direct send's copy that overlaps no allocation this process exported
  // before (gpu/ipc_exports.hpp: a receiver may still map that one, and could not map this).
  // An overlapping one is kept unused (freeing device memory waits for the device).
  Status alloc_unexported(Backend *be, int device, std::size_t cap, void **p) {
    // At least 2 MiB each: CUDA hands small allocations out of the space of freed small ones
    // (likely exported ones), larger ones from blocks of their own.
    constexpr std::size_t kMinDeviceAlloc = std::size_t{2} << 20;
    // Memory kept aside is never freed (that would wait for the device): past this many pieces,
    // no more device copies (the caller stages through host memory instead).
    constexpr std::size_t kMaxAside = 64;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (aside_.size() >= kMaxAside)
        return make_status(MPI_ERR_NO_MEM,
                           "%zu device buffers lie where freed GPU-direct send buffers were; "
                           "no more are tried",
                           aside_.size());
    }
    for (int tries = 0; tries < 16; ++tries) {
      MPIX_TRY(be->alloc_device(device, cap < kMinDeviceAlloc ? kMinDeviceAlloc : cap, p));
      uint64_t start = 0, size = 0, id = 0;
      MPIX_TRY(be->ipc_range(*p, &start, &size, &id));
      if (!ipc_exports().overlaps_other(start, size, id)) return {};
      MPIX_LOG(debug, "stream",
               "staging: a new device buffer lies where an exported one was; "
               "kept aside");
      std::lock_guard<std::mutex> lk(mu_);
      aside_.push_back(*p);
    }
    return make_status(MPI_ERR_NO_MEM,
                       "no device buffer of %zu bytes apart from freed GPU-direct send buffers",
                       cap);
  }

  StagingPoolStats stats() {
    std::lock_guard<std::mutex> lk(mu_);
    return StagingPoolStats{cached_, in_use_, bytes_};
  }

 private:
  struct Entry {
    Bounce b;
    const uint64_t *word;
    uint64_t value;
  };
  // The free buffers of one size class: those nothing touches any more, newest last (a buffer
  // released a moment ago is likely still in the CPU caches), and those whose stream may still
  // copy out of them, in release order (the oldest are the likeliest to be free by now).
  struct Class {
    std::vector<Bounce> ready;
    std::deque<Entry> pending;
  };

  // A free buffer of @p c into *@p out, if one is: the newest ready one (the buffer released
  // last, whose bytes may still be in the CPU caches: a 4 MiB ping-pong staged through buffers
  // taken oldest first ran 10-25 % slower). Only where none is ready (or many are pending) are
  // the pending ones checked, the oldest until one is not free (each moves once: O(1) a call on
  // average); where that leaves none ready, the next few, then all of them. A pending one is
  // skipped, never waited for. Checking reads its stream's word, which a GPU writes (a read that
  // misses the CPU caches), so it is not done while a ready buffer is at hand; the gain was not
  // measurable in a D D exchange's host time (docs/results-gpu.md, session 29, call 6). mu_ held.
  static bool take(Class &c, Bounce *out) {
    constexpr std::size_t kReapFirst = 8;
    constexpr std::size_t kPendingMax = 64;  // checked anyway past this many
    if (c.ready.empty() || c.pending.size() > kPendingMax) reap_front(c);
    if (c.ready.empty()) reap(c, kReapFirst);
    if (c.ready.empty() && c.pending.size() > kReapFirst) reap(c, c.pending.size());
    if (c.ready.empty()) return false;
    *out = c.ready.back();
    c.ready.pop_back();
    return true;
  }
  // Moves the oldest pending buffers to ready while their stream has passed them.
  static void reap_front(Class &c) {
    while (!c.pending.empty() &&
           reached(load_signal(c.pending.front().word), c.pending.front().value)) {
      c.ready.push_back(c.pending.front().b);
      c.pending.pop_front();
    }
  }
  // Moves the pending buffers among the first @p n whose stream passed them to ready, keeping
  // the order of the others.
  static void reap(Class &c, std::size_t n) {
    n = n < c.pending.size() ? n : c.pending.size();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Entry &e = c.pending[i];
      if (reached(load_signal(e.word), e.value)) c.ready.push_back(e.b);
      else c.pending[kept++] = e;
    }
    c.pending.erase(c.pending.begin() + static_cast<std::ptrdiff_t>(kept),
                    c.pending.begin() + static_cast<std::ptrdiff_t>(n));
  }

  using Key = std::tuple<Backend *, int, std::size_t>;
  std::mutex mu_;
  std::map<Key, Class> free_;
  std::vector<void *> aside_;  // device memory alloc_unexported did not use
  std::size_t cached_ = 0, in_use_ = 0, bytes_ = 0;
};

}  // namespace

// The Runtime's bounce buffers; ~Runtime leaks them on purpose (streams may still copy at exit).
class StagingPool : public Pool {};
PartPtr<StagingPool> staging_pool_make() { return PartPtr<StagingPool>(new StagingPool); }
void part_delete(StagingPool *p) { delete p; }

namespace {

Pool &pool() { return runtime().staging_pool(); }

}  // namespace

Status bounce_acquire(Backend *be, std::size_t bytes, Bounce *out, int device) {
  return pool().acquire(be, bytes, out, device);
}

void bounce_release(const Bounce &b, const uint64_t *word, uint64_t value) {
  pool().release(b, word, value);
}

StagingPoolStats staging_pool_stats() {
  Runtime *rt = runtime_current();
  return rt ? rt->staging_pool().stats() : StagingPoolStats{};
}

}  // namespace mpix
