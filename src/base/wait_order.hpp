// The waits a stream has queued on host signal words, in stream order, for as long as they are
// not yet released: whether a given wait is the stream's next one to be released tells the
// agent that nothing else mpix queued before it holds the stream back (a GPU-direct receive is
// then copied by the receiving stream itself, which reaches the copy with no other dependency;
// see providers/mpi/ipc_path.hpp). Waits on device words (no host-visible release) and
// anything the program queues itself (cudaStreamWaitEvent, ...) are not seen.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

#include "base/signal_pool.hpp"

namespace mpix {

class WaitOrder {
 public:
  // A wait until *@p word reaches @p value, queued after every one noted before.
  void note(const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    drop_released();
    waits_.push_back(Wait{word, value, false});
  }
  // note() for each of @p n waits in order (anything with `word` and `value`), under one lock:
  // a stream wait of many requests notes them all at once.
  template <class W>
  void note_all(const W *waits, std::size_t n) {
    if (!n) return;
    std::lock_guard<std::mutex> lk(mu_);
    drop_released();
    for (std::size_t i = 0; i < n; ++i)
      waits_.push_back(Wait{waits[i].word, waits[i].value, false});
  }
  // Whether the wait on (@p word, @p value) is queued, and every wait queued before it is
  // released.
  bool is_next(const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    drop_released();
    return !waits_.empty() && waits_.front().word == word && waits_.front().value == value;
  }
  std::size_t pending() {
    std::lock_guard<std::mutex> lk(mu_);
    drop_released();
    return waits_.size();
  }
  // The wait on (@p word, @p value), if queued, is as good as released: its op is over, and the
  // agent writes the word in this loop whatever other ranks do (a GPU-direct send whose answer
  // came in this agent loop, ahead of a header matched in the same loop: the receive queued
  // behind it is still its stream's next).
  void mark_released(const uint64_t *word, uint64_t value) {
    std::lock_guard<std::mutex> lk(mu_);
    for (Wait &w : waits_)
      if (w.word == word && w.value == value) {
        w.over = true;
        break;
      }
  }

 private:
  struct Wait {
    const uint64_t *word;
    uint64_t value;
    bool over = false;  // mark_released
  };
  void drop_released() {
    while (!waits_.empty() &&
           (waits_.front().over || reached(load_signal(waits_.front().word), waits_.front().value)))
      waits_.pop_front();
  }
  std::mutex mu_;
  std::deque<Wait> waits_;
};

}  // namespace mpix
