#include "core/staging/bounce_pool.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/runtime.hpp"
#include "gpu/backend.hpp"

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
  Status acquire(Backend *be, std::size_t bytes, Bounce *out) {
    std::size_t cap = size_class(bytes);
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = free_.find({be, cap});
      if (it != free_.end()) {
        auto &v = it->second;
        // Newest first: a buffer released a moment ago is likely still in the CPU caches.
        for (std::size_t i = v.size(); i-- > 0;) {
          // A buffer whose stream may still copy out of it is skipped, not waited for.
          if (v[i].word && !reached(load_signal(v[i].word), v[i].value)) continue;
          *out = v[i].b;
          v[i] = v.back();
          v.pop_back();
          --cached_;
          ++in_use_;
          return {};
        }
      }
    }
    void *p = nullptr;
    MPIX_TRY(be->alloc_pinned(cap, &p));
    MPIX_LOG(debug, "stream", "staging: new %zu-byte bounce buffer", cap);
    std::lock_guard<std::mutex> lk(mu_);
    *out = Bounce{be, static_cast<char *>(p), cap};
    ++in_use_;
    bytes_ += cap;
    return {};
  }

  void release(const Bounce &b, const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    free_[{b.be, b.cap}].push_back(Entry{b, word, value});
    --in_use_;
    ++cached_;
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
  std::mutex mu_;
  std::map<std::pair<Backend *, std::size_t>, std::vector<Entry>> free_;
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

Status bounce_acquire(Backend *be, std::size_t bytes, Bounce *out) {
  return pool().acquire(be, bytes, out);
}

void bounce_release(const Bounce &b, const uint64_t *word, uint64_t value) {
  pool().release(b, word, value);
}

StagingPoolStats staging_pool_stats() {
  Runtime *rt = runtime_current();
  return rt ? rt->staging_pool().stats() : StagingPoolStats{};
}

}  // namespace mpix
