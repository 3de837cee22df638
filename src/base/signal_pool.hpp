// Signal memory: 64-bit words in host memory that host threads and GPU streams both read and
// write (trigger words, per-request completion words). Words are handed out one at a time and
// recycled; their values only ever grow, so a recycled word never satisfies a stale wait early
// (a wait for value v is satisfied by any later value too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace mpix {

// One signal word (host address; GPU backends map it into the device's address space).
struct SignalWord {
  uint64_t *word = nullptr;
};

// The cyclic comparison of CU_STREAM_WAIT_VALUE_GEQ: (int64_t)(a - b) >= 0.
inline bool reached(uint64_t value, uint64_t target) {
  return static_cast<int64_t>(value - target) >= 0;
}

// Load of a 64-bit signal word written by another thread or by a device.
inline uint64_t load_signal(const uint64_t *word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}
inline void store_signal(uint64_t *word, uint64_t v) {
  __atomic_store_n(word, v, __ATOMIC_RELEASE);
}

// Called when chunks of signal memory appear or go, so a GPU backend can register them
// (cuMemHostRegister and friends). Called for existing chunks when a hook is added.
using SignalChunkHook = std::function<void(void *base, std::size_t bytes, bool added)>;

class SignalPool {
 public:
  static constexpr std::size_t kChunkBytes = 64 * 1024;
  static constexpr std::size_t kWordsPerChunk = kChunkBytes / sizeof(uint64_t);

  SignalPool() = default;
  ~SignalPool();
  SignalPool(const SignalPool &) = delete;
  SignalPool &operator=(const SignalPool &) = delete;

  SignalWord acquire();
  void release(SignalWord w);
  void add_hook(SignalChunkHook hook);
  std::size_t words_in_use() const;

 private:
  mutable std::mutex mu_;
  std::vector<void *> chunks_;
  std::vector<uint64_t *> free_;
  std::vector<SignalChunkHook> hooks_;
  std::size_t in_use_ = 0;
};

// The process's pool. Below the Runtime (core/runtime.hpp), not in it: host streams and GPU
// backends use its words without MPI, and a device maps its memory until the process exits, so
// it is never destroyed.
SignalPool &signal_pool();

}  // namespace mpix
