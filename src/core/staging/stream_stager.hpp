// The stream copies (core/stager.hpp): a send's copy out of device memory before its trigger,
// a receive's copy in after its completion wait, in stream order. The agent then makes no GPU
// call for the op (docs/guide.md, "Who copies") but one: a dense receive copied in whole (not
// by its length) that gets a shorter message has the rest of its bounce buffer filled from the
// receive buffer by the agent, before the completion word, so that the copy in writes those
// bytes back unchanged (keep_tail).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/stager.hpp"
#include "core/staging/staged_buffers.hpp"

namespace mpix {

class StreamStager : public Stager {
 public:
  // Largest receive whose completion wait and copy in are fused (one kernel that spins, then
  // copies; ExecStream::wait_then_copy_prefix): MPIX_STAGING_FUSE_IN_MAX.
  static std::size_t fused_copy_in_max();
  // @p clip: a receive copied in by its received length (the stream reads it at run time);
  // without, the bytes past the message are copied into the bounce buffer first: the whole
  // receive buffer by the stream before the trigger where the datatype has gaps, only the
  // bytes past a shorter message by the agent once it has come where it is dense. @p direct: a
  // clipped receive that may get a GPU-direct message (Provider::may_deliver_device), which
  // its copy in then takes from the sender's memory (deliver_from) and announces in
  // copied_word (ExecStream::copy_prefix_async).
  // @p trigger_first: a direct receive a message may wait for (Stager::triggers_first).
  StreamStager(StagedBuffers &&b, bool clip, bool direct = false, bool trigger_first = false)
      : b_(std::move(b)),
        clip_(clip),
        direct_(clip && direct),
        trigger_first_(direct_ && trigger_first) {}
  Status before_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t first) override;
  Status after_wait(ExecStream &ex, const uint64_t *trigger_word, uint64_t next_threshold) override;
  // One dense copy out (a send, or an allreduce's input without an in-place receive to fill),
  // small enough for one kernel (ExecStream::can_fuse_staged).
  bool fuses_copy_out(ExecStream &ex) const override;
  Status copy_out_and_trigger(ExecStream &ex, uint64_t *trigger_word, uint64_t value) override;
  // A receive copied in by its length, small enough for one kernel (no driver query: what
  // staging learnt of the buffers, ExecStream::can_fuse_staged).
  bool fuses_copy_in(ExecStream &ex) const override;
  bool fuses_many(ExecStream &ex) const override;
  bool claim_fused_receive(FusedReceive *part) override;
  void copy_in_enqueued(const uint64_t *trigger_word, uint64_t next_threshold) override;
  Status wait_and_copy_in(ExecStream &ex, const uint64_t *done_word, uint64_t done_value,
                          const uint64_t *trigger_word, uint64_t next_threshold,
                          const StreamMemOp *then, std::size_t nthen,
                          const PreWork *pre = nullptr) override;
  bool copy_out_piece(CopyPiece *piece) const override;
  Status on_complete(const MPI_Status &st, bool *copying) override;
  void on_done(const MPI_Status &st) override;
  // A receive of at most TinyWords::kBytes copied in by its length: its message in flagged words.
  void on_release() override;
  // Whether this receive's copy in may take its message from flagged words (TinyWords).
  bool tiny_copy_in() const;
  void *direct_target() override;
  bool deliver_from(const void *from, uint64_t bytes, const uint64_t **copied, const uint64_t *gate,
                    uint64_t gate_value, const uint64_t *done, uint64_t done_value) override;
  Status receive_space(uint64_t bytes, void **at) override;
  bool bounces_on_device() const override { return b_.bounce_device >= 0; }
  bool waits_first() const override { return direct_; }
  bool triggers_first() const override { return trigger_first_; }
  Status on_host_wait() override;

 protected:
  // Claims the one copy in (a queue request stays user-visible: a host MPI_Wait after the
  // stream's copy must not copy again, over what later stream work wrote to the buffer).
  bool claim_copy_in() { return b_.has_in && !copied_in_.exchange(true); }
  // A dense receive copied in whole: the bytes past the message of @p st (all, where it
  // failed) copied from the receive buffer into the bounce buffer, once (agent thread).
  bool keeps_tail() const { return b_.has_in && b_.short_ok && !clip_ && !b_.in.runs; }
  Status keep_tail(const MPI_Status &st);

  StagedBuffers b_;
  const bool clip_;
  const bool direct_;
  const bool trigger_first_;
  bool delivered_ = false;  // agent thread: the message went straight into the user's buffer
  // A host wait's copy of a delivered message: until the sender's ready word is reached.
  Status wait_gate() const;
  bool from_peer_ = false;  // agent thread: the copy in takes it from the sender (deliver_from)
  bool tail_kept_ = false;  // agent thread: keep_tail ran
  std::atomic<bool> copied_in_{false};
};

}  // namespace mpix
