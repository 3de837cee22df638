// An HPE-style queue (MPIX_Queue), the queue front end's scheduler (QueueScheduler): enqueued
// ops (core/op_create.hpp) wait in FIFO order on the queue's trigger counter. The queue runs on a
// private mpix Stream over the user's native stream, so it has a trigger word of its own:
// MPIX_Enqueue_start number N writes base + N to it in stream order, and every op enqueued before
// start N carries threshold base + N. The agent fires ops once their stream's trigger word reaches
// their threshold (core/agent.cpp), exactly as for the stream API, so each start fires exactly the
// ops enqueued before it. Several queues on one native stream are several private Streams, each
// with its own word.
//
// Device buffers are staged as on the stream API (core/stager.hpp), in the queue's stream
// order: a send's copy out of device memory goes right before the trigger of the start that
// fires it (so kernels enqueued between MPIX_Enqueue_send and the start are seen), a receive's
// copy into device memory right after its completion wait in MPIX_Enqueue_wait.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.hpp"
#include "core/op_create.hpp"

namespace mpix {

class Stream;
struct CommCtx;
class Stager;

class Queue {
 public:
  static Status create(MPI_Comm comm, void *native, std::shared_ptr<Queue> *out);
  ~Queue();

  // Enqueues @p a (kind, buffers, peer, tag, comm set) behind the next start.
  Status enqueue(const EnqueueArgs &a, MPI_Request *request);
  Status start();
  Status wait();
  // MPI_ERR_PENDING while ops are enqueued and not complete (started or not).
  Status check_idle() const;
  // Waits for the queue's work on the native stream before the queue goes away.
  Status drain();
  MPI_Comm comm() const { return comm_; }

 private:
  Queue() = default;

  // An op's completion word, for MPIX_Enqueue_wait, and its staged device buffers, if any.
  struct Pending {
    uint64_t *word;
    uint64_t value;
    uint64_t threshold;
    std::shared_ptr<Stager> stager;
  };

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<Stream> stream_;
  // Context of ops on communicators that are not stream communicators (queue_comm.hpp).
  std::shared_ptr<CommCtx> plain_ctx_;
  std::mutex mu_;  // orders enqueues and starts: threshold order is FIFO order
  uint64_t base_ = 0;
  uint64_t starts_ = 0;
  std::vector<Pending> unwaited_;  // enqueue order = threshold order
};

// Handles: ids never reused, so a stale MPIX_Queue is refused rather than dereferenced.
uint64_t queue_register(std::shared_ptr<Queue> q);
std::shared_ptr<Queue> queue_lookup(uint64_t id);
// Removes the handle if the queue is idle (check_idle), after draining its stream work.
Status queue_unregister(uint64_t id);

}  // namespace mpix
