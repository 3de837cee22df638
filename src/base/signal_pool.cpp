#include "base/signal_pool.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace mpix {

SignalPool::~SignalPool() {
  for (void *c : chunks_) {
    for (auto &h : hooks_) h(c, kChunkBytes, false);
    std::free(c);
  }
}

SignalWord SignalPool::acquire() {
  std::lock_guard<std::mutex> lk(mu_);
  if (free_.empty()) {
    void *c = std::aligned_alloc(4096, kChunkBytes);
    if (!c) throw std::bad_alloc();
    std::memset(c, 0, kChunkBytes);
    chunks_.push_back(c);
    for (auto &h : hooks_) h(c, kChunkBytes, true);
    auto *w = static_cast<uint64_t *>(c);
    // Hand out one word per cache line first (0, 8, 16, ...), so a word a device polls and
    // one the host writes rarely share a line. free_ is a stack: push in reverse.
    constexpr std::size_t kLines = kWordsPerChunk / 8;
    for (std::size_t n = kWordsPerChunk; n-- > 0;)
      free_.push_back(w + n / kLines + 8 * (n % kLines));
  }
  uint64_t *p = free_.back();
  free_.pop_back();
  ++in_use_;
  return SignalWord{p};
}

void SignalPool::release(SignalWord w) {
  if (!w.word) return;
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(w.word);
  --in_use_;
}

void SignalPool::add_hook(SignalChunkHook hook) {
  std::lock_guard<std::mutex> lk(mu_);
  for (void *c : chunks_) hook(c, kChunkBytes, true);
  hooks_.push_back(std::move(hook));
}

std::size_t SignalPool::words_in_use() const {
  std::lock_guard<std::mutex> lk(mu_);
  return in_use_;
}

SignalPool &signal_pool() {
  static SignalPool *p = new SignalPool;
  return *p;
}

}  // namespace mpix
