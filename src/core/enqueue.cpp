#include "core/enqueue.hpp"

#include <memory>

#include "base/log.hpp"
#include "base/profile.hpp"
#include "base/small_vector.hpp"
#include "base/waiter.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/mpi_status.hpp"
#include "core/provider.hpp"
#include "core/request.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"

namespace mpix {
namespace {

// A table, not a switch: this runs in every enqueue call (issue 14: <= 800 instructions per
// MPIX_Isend_enqueue on a host stream; docs/results-scale.md).
const char *call_name(OpKind kind, bool nonblocking) {
  static const char *const kNames[3][2] = {{"MPIX_Send_enqueue", "MPIX_Isend_enqueue"},
                                           {"MPIX_Recv_enqueue", "MPIX_Irecv_enqueue"},
                                           {"MPIX_Allreduce_enqueue", "MPIX_Allreduce_enqueue"}};
  return kNames[static_cast<int>(kind)][nonblocking ? 1 : 0];
}

// The write of a recipe's ready word (device memory).
StreamMemOp ready_write(const FireRecipe &fire) {
  return StreamMemOp{StreamMemOp::write, fire.ready, fire.ready_value, true};
}

// Runs @p fire (Provider::arm's answer) for a nonblocking op: a trigger write waits for the
// stream's next batch where the stream defers them. A ready word goes with the trigger (one
// batch), or alone where the trigger waits.
Status run_fire(Stream &s, ExecStream &ex, const FireRecipe &fire) {
  if (fire.word == s.trigger_word() && s.defers_triggers()) {
    if (fire.ready) {
      const StreamMemOp r = ready_write(fire);
      MPIX_TRY(ex.batch(&r, 1));
    }
    s.defer_trigger(fire.value);
    return {};
  }
  if (fault_armed()) MPIX_TRY(fault_hit("trigger"));
  if (!fire.ready) return ex.write_value(fire.word, fire.value);
  const StreamMemOp ops[2] = {ready_write(fire), {StreamMemOp::write, fire.word, fire.value}};
  return ex.batch(ops, 2);
}

// The stream part of a blocking enqueue: the op's fire recipe and its completion wait in one
// call (one cuStreamBatchMemOp on a GPU stream). A deferred trigger is below the op's own
// threshold: a recipe writing the trigger word covers it, else it goes first. @p fired: the
// stager already wrote the recipe's trigger with its copy out (Stager::copy_out_and_trigger).
// A stager that fuses its copy in with the wait (Stager::wait_and_copy_in) does both here:
// *@p copied_in says so. *triggered: the op is fired on the stream (it will run). @p fold_out:
// the op's own copy out is among the stream's deferred copies, for that fused kernel to make
// (enqueue_op checked that the stager fuses its copy in).
Status enqueue_blocking_waits(Stream &s, ExecStream &ex, Stager *stg, const FireRecipe &fire,
                              bool fired, bool fold_out, uint64_t *done_word, uint64_t done_value,
                              bool *triggered, bool *copied_in) {
  if (fire.ready) {
    const StreamMemOp r = ready_write(fire);
    MPIX_TRY(ex.batch(&r, 1));
  }
  // Deferred copies out go before this op's trigger (and the deferred trigger with them): in
  // the fused kernel below where the op's own copy out is among them, else first.
  if (fire.word == s.trigger_word() && (!s.deferred_copies() || fold_out)) s.take_deferred();
  else MPIX_TRY(flush_deferred_trigger(s, ex));
  // Taken now (the array stays as it is while this thread holds the enqueue mutex): a failure
  // before the kernel loses them with the deferred trigger, as a failed flush does.
  const std::size_t folded = fold_out ? s.deferred_copies() : 0;
  if (fold_out) s.clear_deferred_copies();
  *triggered = fired;
  if (stg && stg->copies_before_wait()) {
    // A chunked receive's pieces are copied in as they arrive, before the completion wait.
    MPIX_TRY(fault_point("trigger"));
    MPIX_TRY(ex.write_value(fire.word, fire.value));
    *triggered = true;
    MPIX_TRY(fault_point("copy_in_pieces"));
    MPIX_TRY(stg->before_wait(ex));
    MPIX_TRY(fault_point("wait"));
    return ex.wait_value(done_word, done_value);
  }
  const bool fuse_in = stg && stg->fuses_copy_in(ex);
  if (!fired && fuse_in && stg->triggers_first()) {
    MPIX_TRY(fault_point("trigger"));
    MPIX_TRY(ex.write_value(fire.word, fire.value));
    fired = *triggered = true;
  }
  if (fired || fuse_in) {
    // Not fired yet: the fused kernel writes the trigger before it waits (one stream operation
    // for the trigger, the wait and the copy in: a failure there leaves the op unfired).
    MPIX_TRY(fault_point(fired ? "wait" : "trigger_and_wait"));
    if (!fuse_in) return ex.wait_value(done_word, done_value);
    const PreWork pre{{StreamMemOp::write, fire.word, fire.value}, s.deferred_copy_list(), folded};
    MPIX_TRY(stg->wait_and_copy_in(ex, done_word, done_value, s.trigger_word(),
                                   s.peek_next_threshold(), nullptr, 0, fired ? nullptr : &pre));
    *triggered = true;
    *copied_in = true;
    return {};
  }
  MPIX_TRY(fault_point("trigger_and_wait"));
  const StreamMemOp ops[2] = {{StreamMemOp::write, fire.word, fire.value},
                              {StreamMemOp::wait, done_word, done_value}};
  MPIX_TRY(ex.batch(ops, 2));
  *triggered = true;
  return {};
}

}  // namespace

Status enqueue_op(const EnqueueArgs &a, MPI_Request *request, MPI_Status *status,
                  const std::shared_ptr<CommCtx> *ctx) {
  // MPIX_PROFILE: the call counted and its parts timed (off: one load of the setting, a test
  // per part).
  const bool prof = profile_enabled();
  EnqueueClock clock;
  if (prof) {
    profile_detail::count_enqueue_call();
    clock.start(a.kind == OpKind::send   ? EnqueueKind::send
                : a.kind == OpKind::recv ? EnqueueKind::recv
                                         : EnqueueKind::other);
  }
  if (!ctx) MPIX_TRY(comm_ctx_peek(a.comm, &ctx));
  if (!ctx || !(*ctx)->stream)
    return make_status(MPI_ERR_COMM,
                       "communicator has no stream (make one with "
                       "MPIX_Stream_comm_create)");
  const CommCtx &c = **ctx;
  OpPlan plan;
  plan.call = call_name(a.kind, request != nullptr);
  plan.ctx = ctx;
  plan.stream = &c.stream;
  plan.request = request != nullptr;
  plan.chunk = c.prov ? c.prov->staging_chunk() : 0;
  plan.agent_may_copy = true;
  ExecStream *ex = nullptr;
  MPIX_TRY(c.stream->exec(&ex));
  plan.exec = ex;
  plan.clock = prof ? &clock : nullptr;
  Op *op = nullptr;
  Provider *prov = nullptr;
  MPIX_TRY(op_create(a, plan, &op, &prov));
  if (!request) {
    op->user_status = status == MPI_STATUS_IGNORE ? nullptr : status;
    op->flags.store(kOpWaitEnqueued);
    // The enqueue's own reference: without a request, the agent may retire the op as soon as
    // the stream writes its trigger, and a failure after that must still reach it (op_fail).
    op->refs.fetch_add(1, std::memory_order_relaxed);
  }

  Stream &s = *c.stream;
  std::lock_guard<FutexLock> lk(s.enqueue_mutex());
  op->threshold = s.next_threshold();
  // A chunked send has one threshold per piece; the op's fire recipe writes the last.
  const std::shared_ptr<Stager> stg = op->stager;
  FireRecipe fire{s.trigger_word(), op->threshold};
  if (stg)
    for (uint64_t i = 1; i < stg->pieces(); ++i) fire.value = s.next_threshold();
  // The point of no return: once submitted, the agent owns the op and fires it once the stream
  // writes the threshold. A failure from here on fails the op (op_fail); the error reaches the
  // caller at the wait (nonblocking) or from this call (blocking), and nothing is left behind.
  Status st = op_submit(op, prov, ex, &fire);
  if (!st.is_ok()) {
    if (!request) op->refs.fetch_sub(1, std::memory_order_relaxed);
    op_discard(op);
    return st;
  }
  if (prof) clock.mark(EnqueuePart::submit);
  const bool faults = fault_armed();
  // A small dense copy out and the trigger it precedes run as one stream operation where the
  // stream can (a GPU kernel that copies, then stores the trigger): unless the trigger is
  // deferred, or the provider fires the op another way.
  // Where the stream defers a nonblocking op's trigger, such a copy out is deferred with it
  // (Stream::defer_copy): the stream's next flush copies every deferred piece and writes the
  // trigger in one kernel, the fused receive of an MPIX_Waitall_enqueue among them.
  // A blocking op whose copy in is one kernel (a small allreduce) has that kernel copy out and
  // write the trigger before it waits: its piece joins the stream's deferred copies, which
  // enqueue_blocking_waits hands to the kernel with the trigger.
  bool fired = false, fold_out = false;
  if (stg) {
    if (faults) st = fault_hit("copy_out");
    CopyPiece piece;
    if (st.is_ok() && fire.word == s.trigger_word() && stg->fuses_copy_out(*ex)) {
      if (!request && stg->fuses_copy_in(*ex) && stg->copy_out_piece(&piece) &&
          s.defer_copy(piece)) {
        fold_out = true;
      } else if (!s.defers_triggers()) {
        st = stg->copy_out_and_trigger(*ex, fire.word, fire.value);
        fired = st.is_ok();
      } else if (request && stg->copy_out_piece(&piece)) {
        if (!s.defer_copy(piece)) {
          st = flush_deferred_trigger(s, *ex);
          if (st.is_ok()) s.defer_copy(piece);
        }
      } else {
        st = stg->before_trigger(*ex, s.trigger_word(), op->threshold);
      }
    } else if (st.is_ok()) {
      st = stg->before_trigger(*ex, s.trigger_word(), op->threshold);
    }
  }
  if (request) {
    if (!st.is_ok()) {
      prov->abandon(*op);
      op_fail(*op, std::move(st));
    } else if (!fired) {
      Status f = run_fire(s, *ex, fire);  // its own Status: no assignment over st
      if (!f.is_ok()) {
        prov->abandon(*op);
        op_fail(*op, std::move(f));
      }
    }
    *request = op->grequest;
    if (prof) clock.mark(EnqueuePart::trigger);
    return {};
  }
  bool triggered = false, copied_in = false;
  if (st.is_ok())
    st = enqueue_blocking_waits(s, *ex, stg.get(), fire, fired, fold_out, op->done.word,
                                op->done_value, &triggered, &copied_in);
  if (st.is_ok()) s.wait_order().note(op->done.word, op->done_value);
  if (st.is_ok() && stg && !copied_in) {
    if (faults) st = fault_hit("copy_in");
    if (st.is_ok()) st = stg->after_wait(*ex, s.trigger_word(), s.peek_next_threshold());
  }
  if (!st.is_ok() && triggered) {
    op_forget_status(*op);
  } else if (!st.is_ok()) {
    prov->abandon(*op);
    op_fail(*op, Status(st));
  }
  op_unref(op);
  if (prof) clock.mark(EnqueuePart::trigger);
  return st;
}

Status flush_deferred_trigger(Stream &s, ExecStream &ex) {
  const uint64_t t = s.take_deferred();
  if (const std::size_t n = s.deferred_copies()) {
    s.clear_deferred_copies();
    // Every deferred copy's op deferred its trigger too (enqueue_op).
    if (!t) return make_status(MPI_ERR_INTERN, "deferred copies out without a deferred trigger");
    return ex.copies_then_write(s.deferred_copy_list(), n, s.trigger_word(), t);
  }
  return t ? ex.write_value(s.trigger_word(), t) : Status{};
}

Status flush_deferred_for_host_wait(int n, const MPI_Request *reqs) {
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    // The handle's op stays while the handle is the caller's (its generalized request holds
    // it): found without taking it, the host wait still completes it.
    const Op *op = request_find(reqs[i], false);
    if (!op || !op->stream || !op->stream->defers_triggers()) continue;
    Stream &s = *op->stream;
    ExecStream *ex = nullptr;
    MPIX_TRY(s.exec(&ex));
    std::lock_guard<FutexLock> lk(s.enqueue_mutex());
    MPIX_TRY(flush_deferred_trigger(s, *ex));
  }
  return {};
}

namespace {

// enqueue_waitall_ops, one stream's group of requests (ops[i..end) under the stream's enqueue
// mutex, the waits that are not fused receives in waits[1..]): each fused receive its own
// stream operation.
Status wait_and_copy_in_each(Stream &s, ExecStream *ex, Op *const *ops,
                             const SmallVector<int, 16> &waits_first,
                             const SmallVector<int, 16> &fused, SmallVector<StreamMemOp, 17> &waits,
                             int i, int end, bool staged) {
  // Receives that may complete a peer's send (Stager::waits_first) wait and copy in
  // before the others wait. A deferred trigger of these (or earlier) ops goes before every
  // wait: the first fused kernel of the group writes it before it waits (pre_at), where the
  // group's first wait is one; else a stream write before a waits_first receive that does
  // not fuse, or the first entry of the batch of the other waits.
  // Deferred copies out (Stream::defer_copy) go with the trigger: into the kernel that
  // writes it, or a kernel of their own just before (flush_deferred_trigger).
  int pre_at = -1;
  if (s.deferred_copies() && waits_first.empty() && fused.empty())
    MPIX_TRY(flush_deferred_trigger(s, *ex));
  uint64_t t = s.take_deferred();
  if (t && !waits_first.empty()) {
    if (ops[waits_first.front()]->stager->fuses_copy_in(*ex)) {
      pre_at = waits_first.front();
    } else {
      s.defer_trigger(t);
      MPIX_TRY(flush_deferred_trigger(s, *ex));
      t = 0;
    }
  } else if (t && !fused.empty()) {
    pre_at = fused.front();
  }
  const PreWork pre{{StreamMemOp::write, s.trigger_word(), t},
                    s.deferred_copy_list(),
                    pre_at >= 0 ? s.deferred_copies() : 0};
  // Taken: the kernel does them (pre points into the stream's array, which no enqueue
  // changes while this thread holds the enqueue mutex). If its launch fails, they are lost
  // with the trigger, as a failed flush loses them.
  if (pre_at >= 0) {
    t = 0;
    s.clear_deferred_copies();
  }
  if (t) waits[0] = StreamMemOp{StreamMemOp::write, s.trigger_word(), t};
  const StreamMemOp *first = waits.data() + (t ? 0 : 1);
  const std::size_t n = waits.size() - (t ? 0 : 1);
  // Without a trigger to write in the batch, the other waits ride in the last fused kernel
  // of the group (after its copy: a waits_first receive's copy must not wait for them),
  // instead of a stream operation of their own: a halo exchange's Waitall of {receive,
  // send} is then one kernel launch. The kernel takes few waits; the backend batches the
  // rest after it.
  int carrier = -1;
  if (!t && n > 0) {
    if (!fused.empty()) carrier = fused.back();
    else if (!waits_first.empty() && ops[waits_first.back()]->stager->fuses_copy_in(*ex))
      carrier = waits_first.back();
  }
  auto fused_copy = [&](int k) -> Status {
    const bool carries = k == carrier;
    MPIX_TRY(ops[k]->stager->wait_and_copy_in(
        *ex, ops[k]->done.word, ops[k]->done_value, s.trigger_word(), s.peek_next_threshold(),
        carries ? first : nullptr, carries ? n : 0, k == pre_at ? &pre : nullptr));
    s.wait_order().note(ops[k]->done.word, ops[k]->done_value);
    return {};
  };
  for (int k : waits_first) {
    Stager &g = *ops[k]->stager;
    if (g.fuses_copy_in(*ex)) {
      MPIX_TRY(fused_copy(k));
    } else {
      MPIX_TRY(ex->wait_value(ops[k]->done.word, ops[k]->done_value));
      s.wait_order().note(ops[k]->done.word, ops[k]->done_value);
      MPIX_TRY(g.after_wait(*ex, s.trigger_word(), s.peek_next_threshold()));
    }
  }
  if (n && carrier < 0) MPIX_TRY(ex->batch(first, n));
  // Noted in the order the stream waits: after the carrier's own wait where it carries them.
  const bool late = carrier >= 0 && !fused.empty();
  if (!late) s.wait_order().note_all(waits.data() + 1, waits.size() - 1);
  std::size_t next_fused = 0;
  std::size_t next_first = 0;
  for (int k = i; staged && k < end; ++k) {
    if (!ops[k] || !ops[k]->stager) continue;
    if (next_first < waits_first.size() && waits_first[next_first] == k) {
      ++next_first;  // done above
      continue;
    }
    if (next_fused < fused.size() && fused[next_fused] == k) {
      ++next_fused;
      MPIX_TRY(fused_copy(k));
    } else {
      MPIX_TRY(ops[k]->stager->after_wait(*ex, s.trigger_word(), s.peek_next_threshold()));
    }
  }
  if (late) s.wait_order().note_all(waits.data() + 1, waits.size() - 1);
  return {};
}

// Whether the group's fused receives (two or more; the waits_first ones among them too, every
// one fusing) go to the stream as one operation (Stager::fuses_many).
bool fuses_as_one(ExecStream &ex, Op *const *ops, const SmallVector<int, 16> &waits_first,
                  const SmallVector<int, 16> &fused) {
  if (waits_first.size() + fused.size() < 2) return false;
  for (const auto *list : {&waits_first, &fused})
    for (int k : *list)
      if (!ops[k]->stager->fuses_many(ex)) return false;
  return true;
}

// The group's fused receives as one stream operation (fuses_as_one said yes): the deferred
// trigger and copies out first, the waits_first receives, the others, then the other waits
// (waits[1..]).
Status wait_and_copy_in_many(Stream &s, ExecStream &ex, Op *const *ops,
                             const SmallVector<int, 16> &waits_first,
                             const SmallVector<int, 16> &fused,
                             const SmallVector<StreamMemOp, 17> &waits) {
  const uint64_t t = s.take_deferred();
  // The kernel makes the deferred copies out (pre points into the stream's array, which no
  // enqueue changes while this thread holds the enqueue mutex); every one of them deferred the
  // trigger too (enqueue_op).
  const PreWork pre{{StreamMemOp::write, s.trigger_word(), t},
                    s.deferred_copy_list(),
                    t ? s.deferred_copies() : 0};
  if (!t && s.deferred_copies())
    return make_status(MPI_ERR_INTERN, "deferred copies out without a deferred trigger");
  if (t) s.clear_deferred_copies();
  SmallVector<FusedReceive, 16> parts;
  parts.reserve(waits_first.size() + fused.size());
  for (const auto *list : {&waits_first, &fused})
    for (int k : *list) {
      FusedReceive part{ops[k]->done.word, ops[k]->done_value, nullptr, nullptr, 0, nullptr, 0};
      ops[k]->stager->claim_fused_receive(&part);
      parts.push_back(part);
    }
  MPIX_LOG(trace, "stream", "Waitall: %zu fused receives in one stream operation, %zu waits after",
           parts.size(), waits.size() - 1);
  MPIX_TRY(ex.wait_then_copy_prefix_many(parts.data(), parts.size(), waits.data() + 1,
                                         waits.size() - 1, t ? &pre : nullptr));
  std::size_t p = 0;
  for (const auto *list : {&waits_first, &fused})
    for (int k : *list) {
      if (parts[p++].dst)
        ops[k]->stager->copy_in_enqueued(s.trigger_word(), s.peek_next_threshold());
      s.wait_order().note(ops[k]->done.word, ops[k]->done_value);
    }
  s.wait_order().note_all(waits.data() + 1, waits.size() - 1);
  return {};
}

}  // namespace

Status enqueue_wait(MPI_Request *request, MPI_Status *status) {
  return enqueue_waitall(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

Status enqueue_waitall(int count, MPI_Request *requests, MPI_Status *statuses) {
  profile_note_enqueue_call();
  // Inline up to 16 requests (a halo exchange's): no heap allocation per call.
  SmallVector<Op *, 16> ops(static_cast<std::size_t>(count));
  // One lock for the whole array; on failure nothing is consumed.
  const int bad = request_find_all(count, requests, ops.data(), /*take=*/true);
  if (bad >= 0)
    return make_status(MPI_ERR_REQUEST,
                       "request %d is not an mpix enqueue request (or was "
                       "already completed, or is listed twice)",
                       bad);
  return enqueue_waitall_ops(count, requests, ops.data(), statuses);
}

Status enqueue_waitall_ops(int count, MPI_Request *requests, Op *const *ops, MPI_Status *statuses) {
  auto status_of = [&](int i) {
    return statuses == MPI_STATUSES_IGNORE ? static_cast<MPI_Status *>(nullptr) : &statuses[i];
  };
  for (int i = 0; i < count; ++i)
    if (!ops[i] && requests[i] == MPI_REQUEST_NULL)
      status_set_empty(status_of(i) ? status_of(i) : MPI_STATUS_IGNORE);
  // Consecutive requests of one stream share one batch of waits (one cuStreamBatchMemOp on a
  // GPU stream instead of one stream operation per request).
  // waits[0] is kept for a deferred trigger, so that it goes first without moving the rest.
  SmallVector<StreamMemOp, 17> waits;
  waits.reserve(static_cast<std::size_t>(count) + 1);  // none up to 16 requests, else one
  SmallVector<int, 16> fused, waits_first;
  for (int i = 0; i < count;) {
    if (!ops[i]) {
      ++i;
      continue;
    }
    Stream &s = *ops[i]->stream;
    ExecStream *ex = nullptr;
    MPIX_TRY(s.exec(&ex));
    int end = i;
    waits.resize(1);
    // A staged receive whose stager fuses its wait with its copy in (one kernel) waits after
    // the batch; the others' waits go in it.
    fused.clear();
    waits_first.clear();
    bool staged = false;
    for (; end < count && (!ops[end] || ops[end]->stream.get() == &s); ++end) {
      const Op *op = ops[end];
      if (!op) continue;
      staged |= op->stager != nullptr;
      if (op->stager && op->stager->waits_first()) waits_first.push_back(end);
      else if (op->stager && op->stager->fuses_copy_in(*ex)) fused.push_back(end);
      else if (op->peer_done && !status_of(end) && ex->waits_either()) {
        // A GPU-direct send: a kernel that waits for it goes on once its receiver has copied
        // (Op::peer_done); its status (asked for: MPI_Status is written by the agent before the
        // completion word) would not be there yet then.
        waits.push_back({StreamMemOp::wait, op->done.word, op->done_value, false, op->peer_done,
                         op->peer_done_value});
        op_note_early_wait(*ops[end]);
      } else waits.push_back({StreamMemOp::wait, op->done.word, op->done_value});
    }
    {
      std::lock_guard<FutexLock> lk(s.enqueue_mutex());
      // Chunked receives copy in piece by piece before their completion waits, after any
      // deferred trigger (which may be their own).
      bool copies = false;
      for (int k = i; staged && k < end && !copies; ++k)
        copies = ops[k] && ops[k]->stager && ops[k]->stager->copies_before_wait();
      if (copies) {
        MPIX_TRY(flush_deferred_trigger(s, *ex));
        for (int k = i; k < end; ++k)
          if (ops[k] && ops[k]->stager) MPIX_TRY(ops[k]->stager->before_wait(*ex));
      }
      // Two or more fused receives that the stream takes in one operation (a kernel, a block
      // per receive: ExecStream::wait_then_copy_prefix_many) instead of a kernel launch each;
      // the deferred trigger and copies out go first in it, the other waits after the copies.
      if (fuses_as_one(*ex, ops, waits_first, fused)) {
        MPIX_TRY(wait_and_copy_in_many(s, *ex, ops, waits_first, fused, waits));
        // The other staged ops' copies in, after their waits (both lists ascend, as k does).
        std::size_t next_first = 0, next_fused = 0;
        for (int k = i; staged && k < end; ++k) {
          if (!ops[k] || !ops[k]->stager) continue;
          if (next_first < waits_first.size() && waits_first[next_first] == k) {
            ++next_first;
          } else if (next_fused < fused.size() && fused[next_fused] == k) {
            ++next_fused;
          } else {
            MPIX_TRY(ops[k]->stager->after_wait(*ex, s.trigger_word(), s.peek_next_threshold()));
          }
        }
      } else {
        MPIX_TRY(wait_and_copy_in_each(s, ex, ops, waits_first, fused, waits, i, end, staged));
      }
    }
    for (int k = i; k < end; ++k) {
      if (!ops[k]) continue;
      requests[k] = MPI_REQUEST_NULL;
      op_wait_enqueued(*ops[k], status_of(k));
    }
    i = end;
  }
  return {};
}

}  // namespace mpix
