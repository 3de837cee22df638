// The enqueue path shared by every *_enqueue call: make an op, hand it to the agent, and put
// its trigger (and, for blocking calls, its completion wait) on the stream in stream order.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"
#include "core/op.hpp"

namespace mpix {

class Stream;
class ExecStream;

struct EnqueueArgs {
  OpKind kind = OpKind::send;
  const void *sbuf = nullptr;
  void *rbuf = nullptr;
  int count = 0;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  MPI_Op reduce_op = MPI_OP_NULL;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  // HPE queue ops (src/queue): the op runs on the queue's private stream with this context and
  // fires once that stream's trigger word reaches `queue_threshold`, which a later
  // MPIX_Enqueue_start writes; enqueue_op then writes nothing to the stream, and leaves the
  // staging copies of device buffers (op.stager) to the queue. Needs a request.
  std::shared_ptr<Stream> queue_stream;
  std::shared_ptr<CommCtx> queue_ctx;
  uint64_t queue_threshold = 0;
};

// The arguments of one point-to-point op (a send from, or a receive into, @p buf).
inline EnqueueArgs p2p_args(OpKind kind, const void *buf, int count, MPI_Datatype dt, int peer,
                            int tag, MPI_Comm comm) {
  EnqueueArgs a;
  a.kind = kind;
  if (kind == OpKind::send) a.sbuf = buf;
  else a.rbuf = const_cast<void *>(buf);
  a.count = count;
  a.dt = dt;
  a.peer = peer;
  a.tag = tag;
  a.comm = comm;
  return a;
}

// Call after runtime_init. Nonblocking when @p request is non-null (a generalized request is
// returned); otherwise the stream waits for completion and @p status (may be null) is filled in
// stream order.
Status enqueue_op(const EnqueueArgs &a, MPI_Request *request, MPI_Status *status);

// Writes the stream's deferred trigger, if it has one (Stream::defers_triggers), so that the
// ops armed so far fire once the stream gets here. Call with the stream's enqueue_mutex held.
Status flush_deferred_trigger(Stream &s, ExecStream &ex);
// The stream of the request's communicator waits for it; the handle is consumed.
Status enqueue_wait(MPI_Request *request, MPI_Status *status);
// The stream waits for every request of @p requests (MPI_REQUEST_NULL entries allowed);
// @p statuses may be MPI_STATUSES_IGNORE. Waits on one stream go in one batch.
Status enqueue_waitall(int count, MPI_Request *requests, MPI_Status *statuses);

}  // namespace mpix
