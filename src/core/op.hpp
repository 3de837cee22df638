// A deferred communication op and its life cycle. core/op.cpp's op_advance is the only writer of
// Op::state while an op lives; op_reuse (below) makes a RETIRED op from the pool ARMED again.
//
//   ARMED ─► STAGING_OUT ─► TRIGGERED ─► POSTED ─► STAGING_IN ─► COMPLETE ─► RETIRED
//
// ARMED: enqueued; the stream has not reached it. STAGING_OUT: the stream reached it and the
// agent copies its staged buffer out of device memory. TRIGGERED: the stream reached it (and its
// data is in place); the provider is asked to post it. POSTED: the network has it. STAGING_IN:
// the message arrived; the agent copies it into device memory. COMPLETE: status final,
// completion word written, request completed. RETIRED: the last reference is gone; the op goes
// back to the Runtime's op pool (core/op_pool.hpp) or is deleted.
// Shortcuts: ARMED > TRIGGERED and POSTED > COMPLETE (nothing to copy); every state before
// COMPLETE > COMPLETE (the op failed: op_failed / op_fail); ARMED > RETIRED (an op that never
// reached the agent). Providers with native triggers (ofi + FI_TRIGGER) hand the op to the
// network while ARMED and still pass through TRIGGERED when the agent fires the counter.
// kOpNext (below) is the table op_advance checks every transition against.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/signal_pool.hpp"
#include "base/status.hpp"

namespace mpix {

enum class OpState : uint8_t {
  armed,
  staging_out,
  triggered,
  posted,
  staging_in,
  complete,
  retired
};
constexpr int kOpStates = 7;
inline const char *op_state_name(OpState s) {
  static const char *const kNames[kOpStates] = {"ARMED",      "STAGING_OUT", "TRIGGERED", "POSTED",
                                                "STAGING_IN", "COMPLETE",    "RETIRED"};
  return kNames[static_cast<int>(s)];
}
constexpr unsigned op_state_bit(OpState s) { return 1u << static_cast<int>(s); }
// kOpNext[from]: the states an op may move to from `from`.
constexpr unsigned kOpNext[kOpStates] = {
    /* ARMED */ op_state_bit(OpState::staging_out) | op_state_bit(OpState::triggered) |
        op_state_bit(OpState::complete) | op_state_bit(OpState::retired),
    /* STAGING_OUT */ op_state_bit(OpState::triggered) | op_state_bit(OpState::complete),
    /* TRIGGERED */ op_state_bit(OpState::posted) | op_state_bit(OpState::complete),
    /* POSTED */ op_state_bit(OpState::staging_in) | op_state_bit(OpState::complete),
    /* STAGING_IN */ op_state_bit(OpState::complete),
    /* COMPLETE */ op_state_bit(OpState::retired),
    /* RETIRED */ 0u,
};
constexpr bool op_transition_legal(OpState from, OpState to) {
  return (kOpNext[static_cast<int>(from)] & op_state_bit(to)) != 0;
}

enum class OpKind : uint8_t { send, recv, allreduce };
inline const char *op_kind_name(OpKind k) {
  static const char *const kNames[] = {"send", "recv", "allreduce"};
  return kNames[static_cast<int>(k)];
}

class Stream;
struct CommCtx;
class Stager;

// Flags exchanged between the enqueuing thread and the agent (see op_complete, op_wait_enqueued).
enum OpFlag : unsigned {
  kOpCompleted = 1u,     // the agent has finished the op (status final)
  kOpWaitEnqueued = 2u,  // a stream waits on it; whoever sets the second flag frees the request
  kOpAborted = 4u,       // op_fail: the enqueue failed after the agent took the op
  kOpNoStatus = 8u,      // the call reported failure: its MPI_Status is not written later
  // A stream wait on it may go on before it completes (Op::peer_done): counted in its stream's
  // early_waits until it completes (op_note_early_wait, op_complete).
  kOpEarlyWait = 16u,
};

struct Op {
  OpKind kind = OpKind::send;
  std::atomic<OpState> state{OpState::armed};  // op_advance only (op_reuse: a pool op)
  std::atomic<unsigned> flags{0};
  std::atomic<int> refs{1};  // the agent's; +1 while a user-visible MPI_Request exists
  const char *call = "";     // the C call that made it, for error messages

  // What the provider sends or receives into (a bounce buffer for staged device memory).
  const void *sbuf = nullptr;  // send / allreduce send (MPI_IN_PLACE allowed)
  void *rbuf = nullptr;        // recv / allreduce result
  int count = 0;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  bool dt_owned = false;  // dt is our MPI_Type_dup of a derived type
  MPI_Op reduce_op = MPI_OP_NULL;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  std::shared_ptr<CommCtx> ctx;
  std::shared_ptr<Stream> stream;  // null for a gated op (below)

  uint64_t threshold = 0;  // fire once the stream's trigger word (or *gate) reaches this
  // A word of its own that fires the op instead of its stream's trigger word (a partition's
  // word, src/partitioned: partitions become ready in any order). Such an op has no stream.
  const uint64_t *gate = nullptr;
  SignalWord done;          // completion word
  uint64_t done_value = 0;  // written to `done` at completion
  // A second word a stream wait in a kernel may be released by, in the stream's device memory
  // (null: none): a GPU-direct send's, which its receiver's copy kernel sets to peer_done_value
  // once it has read the send buffer (providers/mpi/ipc_path.hpp, "Completion on the GPU"),
  // before the answer that completes the op through both agents. Set by Provider::arm.
  const uint64_t *peer_done = nullptr;
  uint64_t peer_done_value = 0;

  MPI_Request grequest = MPI_REQUEST_NULL;  // generalized request handed to the user, if any
  // A generalized request started ahead for this op's next request (request_start takes it),
  // while the op waits in a pool: the agent starts them when it has nothing else to do
  // (request_make_spare), so that an enqueue need not. Kept across reuse (op_reuse).
  MPI_Request spare_request = MPI_REQUEST_NULL;
  MPI_Status *user_status = nullptr;  // where to copy the status in stream order
  MPI_Status status{};                // the result (MPI_ERROR: an error code, see error)
  // Why it failed: op_fail's reason (set before kOpAborted, while the op is ARMED), else the
  // agent's (op_failed / op_completed, before COMPLETE).
  Status error;

  std::shared_ptr<Stager> stager;  // device buffers staged (core/stager.hpp)
  // Its device buffer goes to the provider as it is (Provider::reads_device said as_is).
  bool device_as_is = false;
  void *prov = nullptr;  // provider-private state
  uint64_t seq = 0;      // creation order, for reports (of the Op object: a reused op keeps it)
  uint64_t t_seen = 0, t_posted = 0;            // MPIX_PROFILE stamps (base/profile.hpp)
  uint64_t t_copy = 0;                          // MPIX_PROFILE: agent staging copy issued
  Op *reg_prev = nullptr, *reg_next = nullptr;  // live-op registry links (op_registry.cpp)
  Op *submit_next = nullptr;  // the agent's incoming stack (agent.cpp); retired: the op pool's
  Op *abort_next = nullptr;   // the agent's aborted stack (agent.cpp)
};

// Moves @p op to @p to. An illegal transition (not in kOpNext) is an internal error: logged,
// and the state is left as it was; returns false then.
bool op_advance(Op &op, OpState to);

// Providers (agent thread) report an op's outcome through these; the agent then completes it.
// POSTED: the network has it.
void op_posted(Op &op);
// The network finished it with @p st (source, tag, count; MPI_ERROR an MPI error code or class).
void op_completed(Op &op, const MPI_Status &st);
// It failed (or can no longer finish) for @p why: the status gets the error, with its message.
void op_failed(Op &op, Status why);

// What a provider hears of an op's staging (core/stager.hpp), agent thread.
// Whether its device buffers go through bounce buffers (op.sbuf / op.rbuf point there).
inline bool op_staged(const Op &op) { return op.stager != nullptr; }
// Whether its bounce buffers are device memory (a GPU-direct send's device copy).
bool op_staged_on_device(const Op &op);
// Pieces a send goes in (a chunked staged send; 1: whole, or not staged); piece i may go once
// op_piece_may_go(op, i) (the stream has copied it out).
uint64_t op_pieces(const Op &op);
bool op_piece_may_go(const Op &op, uint64_t piece);
// A chunked receive: the message is @p len bytes and its first @p n pieces are in the buffer the
// provider receives into (a staged receive may copy them in now).
void op_pieces_arrived(Op &op, uint64_t len, uint64_t n);
// A GPU-direct receive: the device buffer to deliver the message straight into, or null (then
// into op.rbuf as usual).
void *op_direct_target(Op &op);
// Where to receive a message of @p bytes of a receive (*@p at; op.rbuf as a rule): a staged
// receive that may get a GPU-direct message holds a short bounce buffer, and takes a whole one
// only for a longer message that comes the staged way (Stager::receive_space).
Status op_receive_space(Op &op, uint64_t bytes, void **at);
// Whether a stream waits on the op already (its wait, and any copy in after it, are on the
// stream): a host MPI_Wait / MPI_Test can no longer complete it.
inline bool op_stream_waits(const Op &op) {
  return (op.flags.load(std::memory_order_acquire) & kOpWaitEnqueued) != 0;
}
// A GPU-direct receive its stream copies (Stager::deliver_from): whether the stream's copy in
// takes the message's @p bytes from @p from; then *@p copied turns nonzero once it has, and
// *@p keep holds the word until then (the op may be gone by that time).
// @p gate / @p gate_value: as Stager::deliver_from's (null: the message is in place);
// @p done / @p done_value: as Stager::deliver_from's (null: no word of the sender's to write).
bool op_deliver_from(Op &op, const void *from, uint64_t bytes, const uint64_t **copied,
                     std::shared_ptr<const void> *keep, const uint64_t *gate, uint64_t gate_value,
                     const uint64_t *done, uint64_t done_value);

// The enqueuing thread, after the agent took the op (agent_submit), when a later step of the
// enqueue failed: the agent completes the op with @p why without posting it (if the stream has
// not reached it yet), writes its completion word, and never writes the caller's MPI_Status.
// The caller holds a reference to @p op. Only before the op's trigger is on the stream.
void op_fail(Op &op, Status why);
// A blocking enqueue failed after its trigger went on the stream: the op runs, but the caller's
// MPI_Status is not written (the call reported failure). The caller holds a reference.
void op_forget_status(Op &op);

// Agent thread: COMPLETE. The status is final: copies it where a stream wait asked for it,
// drops the pending counts, writes the completion word, completes the request, drops the agent's
// reference. True when its request became a spare instead (request_recycle).
bool op_complete(Op &op);
// The enqueuing thread: a stream now waits on @p op in place of its request handle; the status
// goes to @p st (may be null). Frees the request at once if the op already completed
// (op_wait_completed). The other half of op_complete's handshake (op.cpp).
void op_wait_completed(Op &op, MPI_Status *st);
// The enqueuing thread: a stream wait on @p op that may go on before the op completes (a wait
// with Op::peer_done as its alt_word) is queued: the op counts in its stream's early_waits until
// it completes (Stream::settle).
void op_note_early_wait(Op &op);
inline void op_wait_enqueued(Op &op, MPI_Status *st) {
  op.user_status = st;
  if (op.flags.fetch_or(kOpWaitEnqueued) & kOpCompleted) op_wait_completed(op, st);
}
// Drops one reference to @p op; the last one retires it (RETIRED: its datatype and references
// go, and the op goes back to the Runtime's pool, core/op_pool.hpp, or is deleted: op_delete).
void op_unref(Op *op);
// A retired op taken from the pool made new for another use: every field as a new Op has it,
// but the completion word (its value is where the last use left it), the registry entry and
// the spare request.
// Inline: op_create sets most fields again right after, and the compiler drops those stores.
inline void op_reuse(Op &op) {
  op.kind = OpKind::send;
  op.state.store(OpState::armed, std::memory_order_relaxed);
  op.flags.store(0, std::memory_order_relaxed);
  op.refs.store(1, std::memory_order_relaxed);
  op.call = "";
  op.sbuf = nullptr;
  op.rbuf = nullptr;
  op.count = 0;
  op.dt = MPI_DATATYPE_NULL;
  op.reduce_op = MPI_OP_NULL;
  op.peer = MPI_PROC_NULL;
  op.tag = 0;
  op.comm = MPI_COMM_NULL;
  op.threshold = 0;
  op.gate = nullptr;
  op.done_value = 0;
  op.peer_done = nullptr;
  op.peer_done_value = 0;
  op.grequest = MPI_REQUEST_NULL;
  op.user_status = nullptr;
  op.status = MPI_Status{};
  op.prov = nullptr;
  op.device_as_is = false;
  op.t_seen = op.t_posted = op.t_copy = 0;
  op.submit_next = nullptr;
  op.abort_next = nullptr;
}

// Frees a retired op: its spare request, its completion word, its registry entry, the op.
void op_delete(Op *op);

// Live-op registry: every op from creation to retirement, for the finalize-time report.
void op_registry_add(Op *op);
void op_registry_remove(Op *op);
// Logs every op in @p r (the Runtime's, at MPI_Finalize) never retired; returns how many.
class OpRegistry;
std::size_t op_registry_report(OpRegistry &r);
std::size_t op_registry_size(OpRegistry &r);
std::size_t op_registry_size();

}  // namespace mpix
