// Making an op, for every front end: op_create does everything that can fail before the agent
// sees the op (datatype, the provider's checks, staging, the generalized request) and leaves
// nothing behind when it fails; op_submit has the provider arm it and hands it to the agent.
// When an op fires and what its stream does is its front end's scheduler's business:
//   stream   MPIX_*_enqueue: core/enqueue.cpp (thresholds, trigger write or deferral, waits)
//   queue    MPIX_Enqueue_*: queue/queue.cpp (queue thresholds, copies at start and wait)
//   gated    partitioned requests: partitioned/prequest_engine.cpp (one op per partition
//            message and round, fired by the partition's own word)
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "base/status.hpp"
#include "core/op.hpp"

namespace mpix {

class Backend;
class ExecStream;
class Provider;
struct FireRecipe;
class Stream;
struct CommCtx;

// What an op sends or receives.
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
  bool dt_named = false;  // the caller knows dt is a predefined (named) datatype
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

class EnqueueClock;

// Where and how a front end runs an op.
struct OpPlan {
  const char *call = "";  // the C call that made it, for messages
  // Borrowed for the call (the front end keeps them alive; the op takes its own references):
  // the communicator's context (provider state, pending count), and the stream whose trigger
  // word fires the op and which runs its stream work; `stream` null for a gated op (Op::gate),
  // which then needs `be` and `device` below.
  const std::shared_ptr<CommCtx> *ctx = nullptr;
  const std::shared_ptr<Stream> *stream = nullptr;
  Backend *be = nullptr;  // gated: classifies and stages its buffers
  int device = -1;        // gated: where the agent copies (-1: its current device)
  // gated: the word that fires it (Op::gate; the caller sets its threshold). Set before the
  // provider is asked how it reads the buffers, which may depend on it.
  const uint64_t *gate = nullptr;
  bool request = false;   // hand out a generalized request (Op::grequest)
  std::size_t chunk = 0;  // MPIX_STAGING_CHUNK of the communicator (0: not chunked)
  // Who copies staged buffers: the stream, unless the agent may (MPIX_AGENT_COPY_MAX, where the
  // provider allows it) or must (a gated op: no stream runs it).
  bool agent_may_copy = false;
  // The stream's ExecStream where the front end already has it (saves asking the stream again).
  ExecStream *exec = nullptr;
  // The enqueue call's clock (MPIX_PROFILE's parts of the call), or null.
  EnqueueClock *clock = nullptr;
};

// Call after runtime_init. *@p out: the new op, ARMED, not yet seen by the agent.
Status op_create(const EnqueueArgs &a, const OpPlan &plan, Op **out);
// The same; *@p prov: the provider that will carry the op.
Status op_create(const EnqueueArgs &a, const OpPlan &plan, Op **out, Provider **prov);
// Frees an op op_create made that never reached the agent (or whose op_submit failed).
void op_discard(Op *op);
// The agent, when it has nothing else to do: one retired op with a spare request
// (Op::spare_request) into the Runtime's spare pool, for a later enqueue that returns a
// request. False if none could be made (no Runtime, or MPI refused).
bool op_make_spare();
// Has the provider arm @p op (its threshold, or gate and threshold, set; for a stream op with
// the stream's enqueue mutex held, so that ops are armed in threshold order), counts it pending
// on its stream and communicator, and hands it to the agent. On failure the op is untouched
// and still the caller's (op_discard). After success the agent owns it: a later failure of the
// front end goes through op_fail. @p ex, @p fire: the stream that fires the op and how (the
// scheduler's default, which Provider::arm may replace); null where no stream fires it (a
// queue op, fired at MPIX_Enqueue_start; a gated op, fired by its own word).
Status op_submit(Op *op, ExecStream *ex, FireRecipe *fire);
// The same, with the provider op_create used (one lookup fewer on the enqueue path).
Status op_submit(Op *op, Provider *prov, ExecStream *ex, FireRecipe *fire);

}  // namespace mpix
