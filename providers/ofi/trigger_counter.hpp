// Per-stream libfabric counters for native triggered operations.
//
// Each stream has its own counter, so streams never wait on each other. The agent fires a
// stream's native ops in stream order and adds 1 per op, so the counter counts fired native ops:
// the k-th native op armed on a counter gets threshold start + k. (The stream's 64-bit trigger
// sequence, op.threshold, stays the agent's business: ops that are not native, e.g. an
// allreduce, which provider mpi carries in the collective slot, do not move the counter.)
//
// libfabric thresholds are size_t, but sockets (1.17) keeps counter values in a 32-bit atomic
// and compares `value < (int)threshold`: thresholds above INT32_MAX would fire at once, and a
// counter pushed past it would never fire anything again. So a counter carries thresholds up
// to kMaxThreshold only; the next op gets a fresh counter (the old one is closed when its last
// op completes). MPIX_OFI_CNTR_START starts every counter near that limit, so tests cross it
// every few ops.
//
// sockets also keeps a counter's triggered ops in one list that it walks from the start on
// every increment, so firing costs O(ops armed on that counter): a host thread that enqueues
// 10,000 iterations ahead would make the run quadratic. A counter therefore carries at most
// MPIX_OFI_CNTR_OPS ops before the stream moves on to a fresh one.
//
// Order across counters. sockets posts a fired op inside the increment; a post refused with
// -FI_EAGAIN stays in the counter's list and stops the walk there (later ops of that counter
// wait behind it, in order), but another counter's ops go ahead. So consecutive counters are
// chained: the new counter's thresholds start above anything the agent's fires alone can
// reach (start + n + 1 for n ops per counter), and the missing n + 1 comes from a deferred add
// (FI_QUEUE_WORK, FI_OP_CNTR_ADD) queued at the end of the previous counter's list, where it
// runs only after every op before it has been posted. Its threshold is one past the previous
// counter's last op, and the agent bumps the previous counter that one extra step when it
// fires the new counter's first op. (With MPIX_OFI_CNTR_START near the limit, n shrinks so
// that every threshold stays at most kMaxThreshold.)
//
// Sends and receives use separate counters (separate chains): a refused receive must not hold
// up sends (the peer's receives may wait for them), and MPI's order rules are per direction.
#pragma once

#include <rdma/fi_domain.h>
#include <rdma/fi_trigger.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "base/status.hpp"
#include "providers/ofi/fabric.hpp"

namespace mpix {

class Stream;

struct TriggerCounter {
  static constexpr uint64_t kMaxThreshold = 0x7fffffff;
  FidPtr<fid_cntr> fid;
  uint64_t next = 0;   // threshold of the next op armed here (under the stream's enqueue mutex)
  uint64_t first = 0;  // threshold of the first op armed here
  uint64_t ops = 0;    // ops armed here
  uint64_t generation = 0;  // how many counters this stream used before this one
  // The counter before this one in its chain, until the link has run (the agent drops it at
  // this counter's first completion); `link` (in the previous counter's list) adds n + 1 here.
  std::shared_ptr<TriggerCounter> prev;
  fi_deferred_work link{};
  fi_op_cntr link_add{};
  ~TriggerCounter() { fid.reset(); }  // before `prev`: nothing of ours is left in its list
};

class StreamCounters {
 public:
  explicit StreamCounters(Fabric &fabric);
  // The counter and threshold for the next native send (@p send) or receive of @p stream (call
  // with the stream's enqueue mutex held, so thresholds follow stream order). *bump_prev: the
  // op is its chained counter's first, whose fire adds 1 to cntr->prev as well.
  Status next(const std::shared_ptr<Stream> &stream, bool send,
              std::shared_ptr<TriggerCounter> *cntr, uint64_t *threshold, bool *bump_prev);
  // Gives back the threshold next() just handed out for an op that could not be posted (call
  // under the same enqueue mutex): the agent adds 1 per op it fires, so a gap would stall
  // every later op of the stream.
  void unget(TriggerCounter &cntr, uint64_t threshold);
  // @p stream's native sends (@p send) or receives hold an op that will never be fired
  // (OfiProvider::abandon): from now on next() refuses that direction, so that no fire reaches
  // that op's threshold. Call with the stream's enqueue mutex held.
  void poison(const Stream *stream, bool send);
  // Counters opened so far (rotations included), for describe() and tests.
  uint64_t opened() const;
  void clear();

 private:
  struct Entry {
    std::weak_ptr<Stream> stream;
    std::shared_ptr<TriggerCounter> current[2];  // [1]: sends
    bool poisoned[2] = {false, false};           // [1]: sends (poison())
  };
  void sweep();  // drops entries of freed streams (their counters close with their last op)

  Fabric &fabric_;
  uint64_t start_;
  uint64_t ops_per_cntr_;
  mutable std::mutex mu_;
  std::unordered_map<const Stream *, Entry> streams_;
  uint64_t opened_ = 0;
  uint64_t arms_since_sweep_ = 0;
};

}  // namespace mpix
