// The waits a stream has queued on host signal words, in stream order, for as long as they are
// not yet released: whether a given wait is the stream's next one to be released tells the
// agent that nothing else mpix queued before it holds the stream back (a GPU-direct receive is
// then copied by the receiving stream itself, which reaches the copy with no other dependency;
// see providers/mpi/ipc_path.hpp). Waits on device words (no host-visible release) and
// anything the program queues itself (cudaStreamWaitEvent, ...) are not seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/futex_lock.hpp"
#include "base/signal_pool.hpp"

namespace mpix {

class WaitOrder {
 public:
  // A wait until *@p word reaches @p value, queued after every one noted before.
  void note(const uint64_t *word, uint64_t value) {
    std::lock_guard<FutexLock> lk(mu_);
    drop_released();
    push(word, value);
  }
  // note() for each of @p n waits in order (anything with `word` and `value`), under one lock:
  // a stream wait of many requests notes them all at once.
  template <class W>
  void note_all(const W *waits, std::size_t n) {
    if (!n) return;
    std::lock_guard<FutexLock> lk(mu_);
    drop_released();
    for (std::size_t i = 0; i < n; ++i) push(waits[i].word, waits[i].value);
  }
  // Whether the wait on (@p word, @p value) is queued, and every wait queued before it is
  // released.
  bool is_next(const uint64_t *word, uint64_t value) {
    std::lock_guard<FutexLock> lk(mu_);
    drop_released();
    return count_ && ring_[head_].word == word && ring_[head_].value == value;
  }
  std::size_t pending() {
    std::lock_guard<FutexLock> lk(mu_);
    drop_released();
    return count_;
  }
  // The wait on (@p word, @p value), if queued, is as good as released: its op is over, and the
  // agent writes the word in this loop whatever other ranks do (a GPU-direct send whose answer
  // came in this agent loop, ahead of a header matched in the same loop: the receive queued
  // behind it is still its stream's next).
  void mark_released(const uint64_t *word, uint64_t value) {
    std::lock_guard<FutexLock> lk(mu_);
    for (std::size_t i = 0; i < count_; ++i) {
      Wait &w = ring_[(head_ + i) & mask_];
      if (w.word == word && w.value == value) {
        w.over = true;
        break;
      }
    }
  }

 private:
  struct Wait {
    const uint64_t *word;
    uint64_t value;
    bool over = false;  // mark_released
  };
  void drop_released() {
    while (count_ &&
           (ring_[head_].over || reached(load_signal(ring_[head_].word), ring_[head_].value))) {
      head_ = (head_ + 1) & mask_;
      --count_;
    }
  }
  // Appends at the ring's end (grow() first when it is full).
  void push(const uint64_t *word, uint64_t value) {
    if (count_ > mask_ || ring_.empty()) grow();
    Wait &w = ring_[(head_ + count_++) & mask_];
    w.word = word;
    w.value = value;
    w.over = false;
  }
  // Doubles the ring (64 waits at first), its waits in order from head_.
  __attribute__((noinline)) void grow() {
    std::vector<Wait> grown(ring_.empty() ? 64 : 2 * ring_.size());
    for (std::size_t i = 0; i < count_; ++i) grown[i] = ring_[(head_ + i) & mask_];
    ring_.swap(grown);
    mask_ = ring_.size() - 1;
    head_ = 0;
  }
  // A ring, not a std::deque (whose push_back took ~33 instructions a wait in a Waitall); a
  // FutexLock, not a std::mutex: noted once per wait on the enqueue path (docs/results-scale.md).
  FutexLock mu_;
  std::vector<Wait> ring_;  // a power of two long (or empty)
  std::size_t head_ = 0, count_ = 0, mask_ = 0;
};

}  // namespace mpix
