// Device buffers for providers that cannot reach device memory (DESIGN.md §3): the provider
// sends from and receives into pinned host bounce buffers (core/staging/bounce_pool.hpp), and
// the op's stager copies between the user's buffer and the bounce buffer.
//
// One op is one message on the wire whatever its size, so staged ops match plain MPI peers,
// ANY_SOURCE receives and receives larger than the message exactly as unstaged ones do.
//
// The bounce buffer mirrors the user's buffer from the datatype's true lower bound to its true
// upper bound. A datatype with gaps (a strided vector, a struct with padding) is copied block by
// block along its typemap (core/typemap.hpp), so a receive never writes the gap bytes of device
// memory and a send never reads them; a dense one is one copy.
//
// A receive's message may be shorter than its buffer, and MPI leaves the bytes past the message
// alone. The copy in therefore moves only the message's bytes: the agent stores the received
// length in a word of the bounce buffer before it releases the stream, and the stream copies
// that prefix (ExecStream::copy_prefix_async: a kernel or host function reading the length at
// run time). Where the stream cannot (a datatype with gaps, whose received bytes are a prefix in
// typemap order, not in address order; a HIP build without kernels; a buffer the kernel cannot
// reach), the copy out fills the bounce buffer from the receive buffer before the trigger
// instead, so that copying the whole span back writes the bytes past the message with the
// values they already had (nobody may write a buffer while a receive into it is pending).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "base/status.hpp"

namespace mpix {

struct Op;
class Backend;
class ExecStream;
class Provider;
struct StreamMemOp;
struct PreWork;
struct CopyPiece;
struct FusedReceive;

// How one op's staged buffers are copied, chosen once per op by staging_setup:
//   StreamStager    (staging/stream_stager.hpp): the stream copies, out before the op's trigger,
//                   in after its completion wait (the default).
//   PipelinedStager (staging/pipelined_stager.hpp): the stream copies piece by piece
//                   (MPIX_STAGING_CHUNK), overlapping the copy of one piece with the transfer of
//                   another: a chunked send, or a receive that may get a chunked message.
//   AgentStager     (staging/agent_stager.hpp): the agent thread copies on a side stream, out
//                   when the stream reaches the op, in when it has arrived
//                   (MPIX_AGENT_COPY_MAX).
// The engine calls every hook at its fixed point of the op's life (core/op.hpp) whatever the
// stager; nothing outside the stagers asks how an op is staged. A provider hears only what
// op.hpp's op_pieces / op_piece_may_go / op_pieces_arrived / op_direct_target tell.
class Stager {
 public:
  virtual ~Stager() = default;

  // --- The enqueuing thread, under the stream's enqueue mutex.
  // Consecutive trigger thresholds the op takes from op.threshold: one per piece of a chunked
  // send (piece i may go once the stream's trigger word reaches op.threshold + i), else 1.
  virtual uint64_t pieces() const { return 1; }
  // Whether the bounce buffers are device memory (StagingPlan::device_copy).
  virtual bool bounces_on_device() const { return false; }
  // In stream order before the op's fire recipe (Provider::arm): the copies out of device
  // memory. Each piece of a chunked send but the last is followed by the write of
  // @p first + i to @p trigger_word; the fire recipe writes the last one.
  virtual Status before_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t first) = 0;
  // The copies out and the trigger write as one stream operation (a GPU stream's kernel that
  // copies, then stores): whether this op can on @p ex, and doing it in place of before_trigger
  // followed by the write of @p value to @p trigger_word.
  virtual bool fuses_copy_out(ExecStream &ex) const {
    (void)ex;
    return false;
  }
  virtual Status copy_out_and_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t value) {
    (void)ex;
    (void)trigger_word;
    (void)value;
    return make_status(MPI_ERR_INTERN, "this stager cannot fuse its copy out");
  }
  // Where fuses_copy_out: the copy out as one piece (plain addresses), for a stream that defers
  // it with its trigger (Stream::defer_copy); false where it is not one dense piece.
  virtual bool copy_out_piece(CopyPiece *piece) const {
    (void)piece;
    return false;
  }
  // The completion wait and the copies in as one stream operation (a kernel that spins on the
  // completion word, then copies): whether this op can on @p ex, and doing it in place of the
  // wait for *@p done_word to reach @p done_value followed by after_wait. The stream then also
  // waits for the @p nthen waits of @p then (ExecStream::wait_then_copy_prefix); @p pre (or
  // null) goes first, before the wait (deferred copies out and trigger, the op's own maybe).
  virtual bool fuses_copy_in(ExecStream &ex) const {
    (void)ex;
    return false;
  }
  virtual Status wait_and_copy_in(ExecStream &ex, const uint64_t *done_word, uint64_t done_value,
                                  const uint64_t *trigger_word, uint64_t next_threshold,
                                  const StreamMemOp *then, std::size_t nthen,
                                  const PreWork *pre = nullptr) {
    (void)ex;
    (void)pre;
    (void)done_word;
    (void)done_value;
    (void)trigger_word;
    (void)next_threshold;
    (void)then;
    (void)nthen;
    return make_status(MPI_ERR_INTERN, "this stager cannot fuse its copy in");
  }
  // Whether this fused receive (fuses_copy_in) may share one stream operation with the other
  // fused receives of its MPIX_Waitall_enqueue (ExecStream::wait_then_copy_prefix_many).
  virtual bool fuses_many(ExecStream &ex) const {
    (void)ex;
    return false;
  }
  // Its part in that operation (*@p part comes with the completion wait, nothing to copy):
  // the copy, claimed as wait_and_copy_in claims it; false (the stream then only waits) where a
  // host wait copied it in already. Once the operation is enqueued, copy_in_enqueued for each
  // part claimed, as wait_and_copy_in does at its end.
  virtual bool claim_fused_receive(FusedReceive *part) {
    (void)part;
    return false;
  }
  virtual void copy_in_enqueued(const uint64_t *trigger_word, uint64_t next_threshold) {
    (void)trigger_word;
    (void)next_threshold;
  }
  // Whether before_wait puts copies on the stream (a deferred trigger must then go first).
  virtual bool copies_before_wait() const { return false; }
  // A receive whose copy in may complete a peer's send (deliver_from): among the requests of one
  // MPIX_Waitall_enqueue its wait and copy in go before the others' waits, which may wait for
  // that peer's send to complete.
  virtual bool waits_first() const { return false; }
  // A receive whose trigger a blocking enqueue writes on its own, before the fused wait and
  // copy in (not from inside that kernel, which runs only once the stream has started it: ~1
  // us later after a stream wait, on the critical path of a message that waits for this
  // receive; Provider::direct_waits_for_receive).
  virtual bool triggers_first() const { return false; }
  // After the op's trigger, before its completion wait.
  virtual Status before_wait(ExecStream &ex) {
    (void)ex;
    return {};
  }
  // After the completion wait: the copies into device memory. The bounce buffers may be reused
  // once @p trigger_word reaches @p next_threshold (the next value the stream writes to it, so
  // the stream has run the copy by then). The data is copied in once: by the first of this and
  // on_host_wait.
  virtual Status after_wait(ExecStream &ex, const uint64_t *trigger_word,
                            uint64_t next_threshold) = 0;

  // --- The agent thread.
  // The stream reached the op. *@p copying: a copy out was started that must have run
  // (copy_done) before the op is posted.
  virtual Status on_fire(bool *copying) {
    *copying = false;
    return {};
  }
  // Whether every copy started by on_fire, on_piece or on_complete has run.
  virtual bool copy_done() { return true; }
  // A chunked receive: the message is @p len bytes and its first @p n pieces are in the bounce
  // buffer.
  virtual void on_piece(uint64_t len, uint64_t n) {
    (void)len;
    (void)n;
  }
  // The network finished the op with @p st. *@p copying: a copy in was started that must have
  // run (copy_done) before the completion word is written.
  virtual Status on_complete(const MPI_Status &st, bool *copying) {
    (void)st;
    *copying = false;
    return {};
  }
  // The op's status @p st is final (also when it failed unposted): just before its completion
  // word releases the stream, which may then copy in.
  virtual void on_done(const MPI_Status &st) { (void)st; }
  // Last of all, after on_done and after its request completed, just before the completion
  // word: what may let the stream go on before that word (a tiny receive's flagged words,
  // gpu/backend.hpp TinyWords), so that whoever sees the stream pass finds the op complete.
  virtual void on_release() {}
  // A GPU-direct receive (providers/mpi/ipc_path.hpp): the user's device buffer, if the message
  // may be copied straight into it, or null. Once given, no copy in copies anything.
  virtual void *direct_target() { return nullptr; }
  // A receive's message of @p bytes comes the staged way (the provider receives it into its
  // bounce buffer): where the provider puts it, *@p at (left as it is where op.rbuf holds it).
  // A receive that may get a GPU-direct message keeps a short bounce buffer until then (a
  // 64 MiB receive that a peer fills from its device memory needs no 64 MiB of pinned memory).
  virtual Status receive_space(uint64_t bytes, void **at) {
    (void)bytes;
    (void)at;
    return {};
  }
  // A GPU-direct receive copied by the stream: its copy in takes the message's @p bytes from
  // @p from (the sender's device memory, mapped here) instead of the bounce buffer, and then
  // sets *@p copied to nonzero (the sender's buffer is free once it is). False where this
  // stager's copy in cannot (the provider then copies itself, into direct_target). Called
  // before the op completes; *@p copied lives as long as the stager. @p gate (non-null): the
  // message is in place only once that word (device memory, mapped here) reaches
  // @p gate_value (an announced send's ready word, providers/mpi/ipc_ready.hpp); the copy waits
  // for it. @p done (non-null): a word of the sender's (device memory, mapped here) that a copy
  // in by a kernel sets to @p done_value once it has copied, before *@p copied (Op::peer_done;
  // another copy in leaves it: the sender's answer then releases its stream).
  virtual bool deliver_from(const void *from, uint64_t bytes, const uint64_t **copied,
                            const uint64_t *gate, uint64_t gate_value, const uint64_t *done,
                            uint64_t done_value) {
    (void)from;
    (void)bytes;
    (void)copied;
    (void)gate;
    (void)gate_value;
    (void)done;
    (void)done_value;
    return false;
  }

  // --- A user thread.
  // The op completed on the host (MPI_Wait / MPI_Test on its request, not a stream wait):
  // copies the received data into device memory now, on the calling thread.
  virtual Status on_host_wait() { return {}; }
};

// What staging_setup decides with.
struct StagingPlan {
  Backend *backend = nullptr;    // the op's stream's
  ExecStream *exec = nullptr;    // the op's stream (what its copies can do, its device)
  Provider *provider = nullptr;  // asked whether a receive may be delivered into device memory
  std::size_t chunk = 0;         // MPIX_STAGING_CHUNK of the op's communicator (0: off)
  bool agent_copies = false;     // the agent may copy (provider allows, not a queue op)
  // An op no stream runs (a partition's message, src/partitioned): the agent copies whatever
  // the size, on @p device (-1: its current one); exec is null. A datatype with gaps is
  // MPI_ERR_TYPE (the agent copies dense ranges only).
  bool agent_always = false;
  int device = -1;
  // A send the provider reads from a device copy (DeviceRead::from_device_copy): the stream
  // copies it into a device bounce buffer of its device.
  bool device_copy = false;
};

// Stages @p op's device or managed buffers through bounce buffers, if it has any (the provider
// cannot read them): sets op.stager and points op.sbuf / op.rbuf at the bounce buffers. Call
// before the op is armed. With @p plan.chunk, a send of a predefined datatype longer than it
// goes in pieces of that many bytes (providers/mpi/mpi_chunk.hpp).
Status staging_setup(Op &op, const StagingPlan &plan);
// Whether staging_setup can stage anything on @p be: false for the host backend (it sees host
// memory only) unless MPIX_STAGING_HOST (tests) stages host buffers too. Lets the enqueue path
// skip the provider's and GPU-aware-MPI queries that only decide whether to stage.
bool staging_possible(const Backend &be);

}  // namespace mpix
