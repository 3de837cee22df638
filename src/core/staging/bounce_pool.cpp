#include "core/staging/bounce_pool.hpp"

#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

#include "base/futex_lock.hpp"
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
// 128 MiB of pinned memory). *@p index: the class's slot in a Shelf (2 log2 of the power of
// two, plus one for "and a page").
constexpr std::size_t kPage = 4096;
std::size_t size_class(std::size_t bytes, std::size_t *index) {
  std::size_t c = kPage;
  unsigned log2 = 12;
  while (c < bytes) {
    c <<= 1;
    ++log2;
  }
  if (c > 2 * kPage && bytes <= c / 2 + kPage) {
    *index = 2 * (log2 - 1) + 1;
    return c / 2 + kPage;
  }
  *index = 2 * log2;
  return c;
}

class Pool {
 public:
  Status acquire(Backend *be, std::size_t bytes, Bounce *out, int device) {
    std::size_t index = 0;
    const std::size_t cap = size_class(bytes, &index);
    {
      std::lock_guard<FutexLock> lk(mu_);
      Shelf *sh = find(be, device);
      if (sh && take(sh->classes[index], out)) {
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
    std::lock_guard<FutexLock> lk(mu_);
    *out = Bounce{be, static_cast<char *>(p), cap, device};
    ++in_use_;
    bytes_ += cap;
    return {};
  }

  void release(const Bounce &b, const uint64_t *word, uint64_t value) {
    std::size_t index = 0;
    size_class(b.cap, &index);
    std::lock_guard<FutexLock> lk(mu_);
    Class &c = shelf(b.be, b.device).classes[index];
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
      std::lock_guard<FutexLock> lk(mu_);
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
      std::lock_guard<FutexLock> lk(mu_);
      aside_.push_back(*p);
    }
    return make_status(MPI_ERR_NO_MEM,
                       "no device buffer of %zu bytes apart from freed GPU-direct send buffers",
                       cap);
  }

  StagingPoolStats stats() {
    std::lock_guard<FutexLock> lk(mu_);
    return StagingPoolStats{cached_, in_use_, bytes_};
  }

 private:
  struct Entry {
    Bounce b;
    const uint64_t *word;
    uint64_t value;
  };
  // Pending buffers, oldest first: a vector whose front is at head (a deque allocates on
  // construction, and a shelf holds kClasses of these).
  struct PendingList {
    std::vector<Entry> v;
    std::size_t head = 0;
    bool empty() const { return head == v.size(); }
    std::size_t size() const { return v.size() - head; }
    const Entry &operator[](std::size_t i) const { return v[head + i]; }
    void push_back(const Entry &e) { v.push_back(e); }
    void pop_front() {
      if (++head == v.size()) clear();
      else if (head >= 64 && 2 * head >= v.size()) {
        v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
    // Drops entries [from, to) (counted from the front).
    void erase(std::size_t from, std::size_t to) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(head + from),
              v.begin() + static_cast<std::ptrdiff_t>(head + to));
      if (empty()) clear();
    }
    void clear() {
      v.clear();
      head = 0;
    }
  };
  // The free buffers of one size class: those nothing touches any more, newest last (a buffer
  // released a moment ago is likely still in the CPU caches), and those whose stream may still
  // copy out of them, in release order (the oldest are the likeliest to be free by now).
  struct Class {
    std::vector<Bounce> ready;
    PendingList pending;
  };

  // A free buffer of @p c into *@p out, if one is: the newest ready one (the buffer released
  // last, whose bytes may still be in the CPU caches: a 4 MiB ping-pong staged through buffers
  // taken oldest first ran 10-25 % slower). Only where none is ready (or many are pending) are
  // the pending ones checked, the oldest until one is not free (each moves once: O(1) a call on
  // average); where that leaves none ready, the next few, then all of them. A pending one is
  // skipped, never waited for. Checking reads its stream's word, which a GPU writes (a read that
  // misses the CPU caches), so it is not done while a ready buffer is at hand; the gain was not
  // measurable in a D D exchange's host time (docs/results-gpu.md, session 29, call 6). Handing
  // out the newest buffer, pending or not, from 128 KiB up (so that a ping-pong's receive
  // reuses one buffer rather than alternating between two) made staged 1-8 MiB messages 5-10 %
  // slower (session 30, call 2): not done. mu_ held.
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
    while (!c.pending.empty() && reached(load_signal(c.pending[0].word), c.pending[0].value)) {
      c.ready.push_back(c.pending[0].b);
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
      else c.pending.v[c.pending.head + kept++] = e;
    }
    c.pending.erase(kept, n);
  }

  // The classes of one backend's pinned memory (device -1) or of one device's memory, indexed
  // by size_class's index: found in a few compares and one index, not a map lookup (~100
  // instructions a staged op, session 30). A process has one or two shelves.
  static constexpr std::size_t kClasses = 128;  // 2 per power of two up to 2^63
  struct Shelf {
    Backend *be = nullptr;
    int device = -1;
    std::vector<Class> classes;  // kClasses
  };
  Shelf *find(Backend *be, int device) {
    for (Shelf &sh : shelves_)
      if (sh.be == be && sh.device == device) return &sh;
    return nullptr;
  }
  Shelf &shelf(Backend *be, int device) {
    if (Shelf *sh = find(be, device)) return *sh;
    shelves_.emplace_back();
    Shelf &sh = shelves_.back();
    sh.be = be;
    sh.device = device;
    sh.classes.resize(kClasses);
    return sh;
  }

  // Taken by the enqueuing threads and by the agent (which releases the buffers of completed
  // ops): held for a few dozen instructions, never across a driver call.
  FutexLock mu_;
  std::deque<Shelf> shelves_;  // stable addresses
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
