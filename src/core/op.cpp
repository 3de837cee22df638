// The op's life (core/op.hpp): every state change, the two ways an op fails, completion, the
// completion / stream-wait handshake, and retirement.
#include "core/op.hpp"

#include "base/log.hpp"
#include "base/waiter.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/op_pool.hpp"
#include "core/request.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"
#include "core/type_release.hpp"

namespace mpix {
namespace {

const char *peer_word(const Op &op) {
  return op.kind == OpKind::send ? "to" : op.kind == OpKind::recv ? "from" : "on";
}

}  // namespace

bool op_advance(Op &op, OpState to) {
  const OpState from = op.state.load(std::memory_order_relaxed);
  if (!op_transition_legal(from, to)) {
    MPIX_LOG(error, "agent",
             "internal error: op #%llu (%s, peer %d, tag %d) may not go from %s to %s",
             static_cast<unsigned long long>(op.seq), op_kind_name(op.kind), op.peer, op.tag,
             op_state_name(from), op_state_name(to));
    return false;
  }
  MPIX_LOG(trace, "agent", "op #%llu %s -> %s", static_cast<unsigned long long>(op.seq),
           op_state_name(from), op_state_name(to));
  op.state.store(to, std::memory_order_relaxed);
  return true;
}

void op_posted(Op &op) { op_advance(op, OpState::posted); }

void op_completed(Op &op, const MPI_Status &st) {
  op.status = st;
  if (st.MPI_ERROR == MPI_SUCCESS) return;
  MpiCalls &mpi = runtime().mpi();
  char text[MPI_MAX_ERROR_STRING] = {0};
  mpi.error_string(st.MPI_ERROR, text);
  op.error = make_status(mpi.error_class(st.MPI_ERROR), "%s %s rank %d (tag %d): %s", op.call,
                         peer_word(op), op.peer, op.tag, text);
  MPIX_LOG(error, "agent", "%s", op.error.what().c_str());
  op.status.MPI_ERROR = mpi_error_code(op.error);
}

void op_failed(Op &op, Status why) {
  op.status = MPI_Status{};
  op.status.MPI_SOURCE = op.peer;
  op.status.MPI_TAG = op.tag;
  runtime().mpi().status_set_empty(op.status);
  op.error = make_status(why.code(), "%s %s rank %d (tag %d) failed: %s", op.call, peer_word(op),
                         op.peer, op.tag, why.what().c_str());
  MPIX_LOG(error, "agent", "%s", op.error.what().c_str());
  op.status.MPI_ERROR = mpi_error_code(op.error);
}

bool op_staged_on_device(const Op &op) { return op.stager && op.stager->bounces_on_device(); }

uint64_t op_pieces(const Op &op) { return op.stager ? op.stager->pieces() : 1; }

bool op_piece_may_go(const Op &op, uint64_t piece) {
  // The stream writes threshold + i once it has copied piece i out (Stager::before_trigger).
  return reached(load_signal(op.stream->trigger_word()), op.threshold + piece);
}

void op_pieces_arrived(Op &op, uint64_t len, uint64_t n) {
  if (op.stager) op.stager->on_piece(len, n);
}

void *op_direct_target(Op &op) { return op.stager ? op.stager->direct_target() : nullptr; }

Status op_receive_space(Op &op, uint64_t bytes, void **at) {
  *at = op.rbuf;
  return op.stager ? op.stager->receive_space(bytes, at) : Status{};
}

bool op_deliver_from(Op &op, const void *from, uint64_t bytes, const uint64_t **copied,
                     std::shared_ptr<const void> *keep, const uint64_t *gate, uint64_t gate_value,
                     const uint64_t *done, uint64_t done_value) {
  if (!op.stager ||
      !op.stager->deliver_from(from, bytes, copied, gate, gate_value, done, done_value))
    return false;
  *keep = op.stager;
  return true;
}

void op_fail(Op &op, Status why) {
  op.error = std::move(why);  // the agent does not write it while the op is ARMED
  // acq_rel: the error is published with the flag; kOpCompleted, if set, was set by the agent's
  // op_complete, which then already finished the op (and wrote any MPI_Status before this call
  // reports its failure).
  const unsigned old = op.flags.fetch_or(kOpAborted | kOpNoStatus, std::memory_order_acq_rel);
  if (old & kOpCompleted) return;
  op.refs.fetch_add(1, std::memory_order_relaxed);  // the agent's abort list holds it
  agent_abort(&op);
}

void op_forget_status(Op &op) { op.flags.fetch_or(kOpNoStatus, std::memory_order_acq_rel); }

void op_note_early_wait(Op &op) {
  // Counted unless op_complete came first; if it comes after the flag, it uncounts it (the
  // count may dip below 0 for a moment).
  const unsigned old = op.flags.fetch_or(kOpEarlyWait, std::memory_order_acq_rel);
  if (!(old & kOpCompleted) && op.stream) op.stream->early_waits.fetch_add(1);
}

// The handshake between op_complete (agent) and op_wait_enqueued (user thread): each sets its
// flag with one fetch_or; the one that sees the other's flag already set owns the last steps
// (copy the status, free the request). A blocking op starts with kOpWaitEnqueued set and no
// request.
bool op_complete(Op &op) {
  op_advance(op, OpState::complete);
  const unsigned old = op.flags.fetch_or(kOpCompleted, std::memory_order_acq_rel);
  // An aborted op's call reported the failure: its MPI_Status is not written afterwards.
  // user_status is the enqueuing thread's until it sets kOpWaitEnqueued (op_wait_enqueued):
  // read only once that flag is seen.
  MPI_Status *const user_status = (old & kOpWaitEnqueued) ? op.user_status : nullptr;
  if (user_status && !(old & kOpNoStatus)) *user_status = op.status;
  // A failure with no MPI_Status to go to and no host wait to see it (a blocking op, or a
  // stream wait with MPI_STATUS_IGNORE): the stream keeps it (a failed MPIX_Send_enqueue was
  // once seen only in the log). Not if its call reported the failure itself.
  // A gated op (no stream) has its owner read the status after the completion word.
  if (op.stream) {
    if (op.status.MPI_ERROR != MPI_SUCCESS && !user_status && !(old & kOpNoStatus) &&
        (op.grequest == MPI_REQUEST_NULL || (old & kOpWaitEnqueued)))
      op.stream->record_error(op.status.MPI_ERROR);
    op.stream->pending_ops.fetch_sub(1);
  }
  op.ctx->pending_ops.fetch_sub(1);
  // Drop the op's hold on the communicator context before the stream can pass its wait: the
  // context's end is what tells MPIX_Stream_free that no communicator uses the stream any more,
  // and a user may free the communicator and then the stream as soon as the stream drained.
  op.ctx.reset();
  // A stream that may have passed its wait already (Stream::settle) sees it over from here on.
  if (op.stream && (old & kOpEarlyWait)) op.stream->early_waits.fetch_sub(1);
  // A staged receive's copy in, released by the word below, reads the message's length.
  if (op.stager) op.stager->on_done(op.status);
  // A request the user may still test (no stream wait took it, e.g. a queue's) completes before
  // the word: a thread that saw its stream pass a wait finds MPI_Test true at once (once it was
  // completed after the word, and a host that synchronised the stream could still see it
  // pending). One a stream wait took is completed and freed after the word, off the stream's path.
  const bool wait_took = (old & kOpWaitEnqueued) != 0;
  const bool has_request = op.grequest != MPI_REQUEST_NULL;
  if (has_request && !wait_took) request_complete(&op, false);
  if (op.stager) op.stager->on_release();
  store_signal(op.done.word, op.done_value);
  notifier().notify();
  complete_delay_point();  // test hook (core/fault.hpp): a preempted agent, here
  // A request no one can reach any more (the stream wait consumed its handle) and never
  // completed becomes the op's spare: no MPI_Grequest_complete and MPI_Request_free now, no
  // MPI_Grequest_start for a later enqueue. Its reference is dropped here, as free_fn would.
  bool recycled = false;
  if (has_request && wait_took) {
    recycled = request_recycle(&op);
    if (recycled) op_unref(&op);
    else request_complete(&op, true);
  }
  op_unref(&op);
  return recycled;
}

// op_wait_enqueued (op.hpp) found kOpCompleted set.
void op_wait_completed(Op &op, MPI_Status *st) {
  // Already complete: the agent will not touch the status or the request again.
  if (st) *st = op.status;
  // A failure a stream wait with MPI_STATUS_IGNORE would drop: the stream keeps it (op_complete).
  else if (op.status.MPI_ERROR != MPI_SUCCESS && !(op.flags.load() & kOpNoStatus))
    op.stream->record_error(op.status.MPI_ERROR);
  // The agent may not have called MPI_Grequest_complete yet; Open MPI then runs free_fn there,
  // and the agent drops the last reference and deletes the op. Open MPI's own locking orders that
  // after this thread's use of the op, invisibly to ThreadSanitizer; a release on refs orders it
  // in C++ terms too (op_unref's fetch_sub acquires). The handle is read before the release:
  // after it, the op may be gone.
  const MPI_Request r = op.grequest;
  op.refs.fetch_add(0, std::memory_order_release);
  request_free(r);
}

void op_unref(Op *op) {
  if (op->refs.fetch_sub(1) != 1) return;
  op_advance(*op, OpState::retired);
  if (op->dt_owned) type_release_later(op->dt);  // may be inside an MPI callback (MPICH)
  op->dt_owned = false;
  // Its references go now, not at its reuse: the stream and communicator context may end here
  // (a stream's end on the agent thread is put off, core/stream_release.hpp).
  op->ctx.reset();
  op->stream.reset();
  op->stager.reset();
  op->error = Status{};
  Runtime *rt = runtime_current();
  // One that holds a spare request (request_recycle, or an enqueue that failed before it took
  // it) goes where enqueues returning a request look first.
  OpPool *pool = nullptr;
  if (rt && op->spare_request != MPI_REQUEST_NULL) pool = rt->spare_pool();
  if (rt && !pool) pool = rt->op_pool();
  if (pool) pool->give(op);
  else op_delete(op);  // after MPI_Finalize (an op retired late)
}

void op_delete(Op *op) {
  if (op->spare_request != MPI_REQUEST_NULL) request_drop_spare(op);
  signal_pool().release(op->done);
  op_registry_remove(op);
  delete op;
}

}  // namespace mpix
