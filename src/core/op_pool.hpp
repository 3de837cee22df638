// Retired ops kept for reuse: an enqueue takes one with its completion word and its
// live-op registry entry already in place, instead of a heap allocation, a signal-pool lock and
// a registry lock; the last reference gives it back from whichever thread drops it (the agent,
// as a rule) without a lock. The Runtime owns the pool (core/runtime.hpp).
#pragma once

#include <atomic>
#include <cstddef>

namespace mpix {

struct Op;

class OpPool {
 public:
  OpPool() = default;
  // Deletes the ops it holds (their words go back to the signal pool, their registry entries
  // go). Call with no thread taking or giving.
  ~OpPool();
  OpPool(const OpPool &) = delete;
  OpPool &operator=(const OpPool &) = delete;

  // A retired op to reuse (state RETIRED, fields as its last use left them; op_reuse makes it
  // new), or null when none is free. Any thread.
  Op *take();
  // Keeps @p op (retired: no reference left, nothing else points at it) for a later take. Any
  // thread, lock-free.
  void give(Op *op);
  // Ops held now (tests: each holds its completion word). Any thread.
  std::size_t size();

 private:
  // Given ops, newest first (linked by Op::submit_next, free once an op is retired): pushed by
  // give with a CAS, emptied whole by take, so a pop never races a pop (no ABA).
  std::atomic<Op *> given_{nullptr};
  // Taken from given_ and not yet handed out: a list only the holder of taking_ touches. A
  // take that finds taking_ held returns null (its caller makes a new op) rather than wait.
  std::atomic<bool> taking_{false};
  Op *free_ = nullptr;
};

}  // namespace mpix
