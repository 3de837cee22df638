#include "core/enqueue.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "base/waiter.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/mpi_status.hpp"
#include "core/named_types.hpp"
#include "core/request.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "gpu/gpu_aware_mpi.hpp"

namespace mpix {
namespace {

// Keeps a derived datatype alive while the op needs it: MPI lets the user free a datatype
// right after a nonblocking call that uses it.
Status hold_datatype(Op &op, MPI_Datatype dt) {
  bool named = false;
  MPIX_TRY(datatype_is_named(dt, &named));
  if (named) {
    op.dt = dt;
    return {};
  }
  MPIX_MPI_CHECK(MPI_Type_dup(dt, &op.dt));
  op.dt_owned = true;
  return {};
}

// Frees an op that never reached the agent.
void discard(Op *op) {
  if (op->grequest != MPI_REQUEST_NULL) {
    // free_fn drops the request's reference; the map entry goes with it.
    MPI_Grequest_complete(op->grequest);
    MPI_Request r = op->grequest;
    MPI_Request_free(&r);
  }
  op_unref(op);
}

const char *call_name(OpKind kind, bool nonblocking, bool queued) {
  switch (kind) {
    case OpKind::send:
      if (queued) return "MPIX_Enqueue_send";
      return nonblocking ? "MPIX_Isend_enqueue" : "MPIX_Send_enqueue";
    case OpKind::recv:
      if (queued) return "MPIX_Enqueue_recv";
      return nonblocking ? "MPIX_Irecv_enqueue" : "MPIX_Recv_enqueue";
    case OpKind::allreduce:
      break;
  }
  return "MPIX_Allreduce_enqueue";
}

// Everything of an enqueue that can fail, before the agent sees the op: on failure nothing is
// left behind. *ex: the stream that runs it; *prov_out: the provider.
// The callers (the API layer, the queue) have run runtime_init.
Status op_create(const EnqueueArgs &a, bool want_request, Op **out, ExecStream **ex,
                 Provider **prov_out) {
  const bool queued = a.queue_stream != nullptr;
  std::shared_ptr<CommCtx> ctx = a.queue_ctx;
  if (!queued) {
    MPIX_TRY(comm_ctx_get(a.comm, &ctx));
    if (!ctx || !ctx->stream)
      return make_status(MPI_ERR_COMM,
                         "communicator has no stream (make one with "
                         "MPIX_Stream_comm_create)");
  }
  if (queued && !want_request) return make_status(MPI_ERR_ARG, "queue ops need a request");
  const std::shared_ptr<Stream> &stream = queued ? a.queue_stream : ctx->stream;
  Provider *prov = nullptr;
  MPIX_TRY(provider_get(&prov));
  MPIX_TRY(stream->exec(ex));
  MPIX_TRY(agent_start());            // so that agent_submit cannot fail
  const bool faults = fault_armed();  // test hook (core/fault.hpp)
  if (faults) MPIX_TRY(fault_hit("op_create"));

  auto *op = new Op;
  op_registry_add(op);
  op->kind = a.kind;
  op->call = call_name(a.kind, want_request, queued);
  op->sbuf = a.sbuf;
  op->rbuf = a.rbuf;
  op->count = a.count;
  op->reduce_op = a.reduce_op;
  op->peer = a.peer;
  op->tag = a.tag;
  op->comm = a.comm;
  op->ctx = ctx;
  op->stream = stream;
  op->done = signal_pool().acquire();
  // The word's last value was written by its previous op's completion: wait for the next one.
  op->done_value = load_signal(op->done.word) + 1;
  Status st = hold_datatype(*op, a.dt);
  if (faults && st.is_ok()) st = fault_hit("datatype");
  if (st.is_ok()) st = prov->validate(*op);
  if (faults && st.is_ok()) st = fault_hit("validate");
  // Device buffers the provider cannot reach go through pinned bounce buffers.
  // A CUDA-aware MPI under provider mpi takes device buffers as they are (MPIX_CUDA_AWARE).
  const ProviderCaps caps = prov->caps();
  // Same-node GPU-direct sends (provider mpi, MPIX_GPU_DIRECT) are not staged either.
  const bool unstaged = caps.device_memory ||
                        (caps.mpi_buffers && aware_choice(stream->backend()->kind()).direct) ||
                        prov->reads_device(*op);
  if (st.is_ok() && !unstaged) {
    StagingPlan plan;
    plan.backend = stream->backend();
    plan.exec = *ex;
    plan.provider = prov;
    // A chunk-enabled communicator (MPIX_STAGING_CHUNK) sends large staged messages in pieces.
    plan.chunk = !queued && ctx->prov ? ctx->prov->staging_chunk() : 0;
    // A queue op copies out at its start, on the stream; provider ofi keeps the stream's copies
    // (ProviderCaps::agent_copies).
    plan.agent_copies = !queued && caps.agent_copies;
    st = staging_setup(*op, plan);
  }
  if (faults && st.is_ok()) st = fault_hit("staging_setup");
  if (st.is_ok() && want_request) st = request_start(op);
  if (faults && st.is_ok()) st = fault_hit("request_start");
  if (!st.is_ok()) {
    discard(op);
    return st;
  }
  *out = op;
  *prov_out = prov;
  return {};
}

// Runs @p fire (Provider::arm's answer) for a nonblocking op: a trigger write waits for the
// stream's next batch where the stream defers them.
Status run_fire(Stream &s, ExecStream &ex, const FireRecipe &fire) {
  if (fire.word == s.trigger_word() && s.defers_triggers()) {
    s.defer_trigger(fire.value);
    return {};
  }
  if (fault_armed()) MPIX_TRY(fault_hit("trigger"));
  return ex.write_value(fire.word, fire.value);
}

// The stream part of a blocking enqueue: the op's fire recipe and its completion wait in one
// call (one cuStreamBatchMemOp on a GPU stream). A deferred trigger is below the op's own
// threshold: a recipe writing the trigger word covers it, else it goes first.
// *triggered: the op is fired on the stream (it will run).
Status enqueue_blocking_waits(Stream &s, ExecStream &ex, Stager *stg, const FireRecipe &fire,
                              uint64_t *done_word, uint64_t done_value, bool *triggered) {
  if (fire.word == s.trigger_word()) s.take_deferred();
  else MPIX_TRY(flush_deferred_trigger(s, ex));
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
  MPIX_TRY(fault_point("trigger_and_wait"));
  const StreamMemOp ops[2] = {{StreamMemOp::write, fire.word, fire.value},
                              {StreamMemOp::wait, done_word, done_value}};
  MPIX_TRY(ex.batch(ops, 2));
  *triggered = true;
  return {};
}

}  // namespace

Status enqueue_op(const EnqueueArgs &a, MPI_Request *request, MPI_Status *status) {
  Op *op = nullptr;
  ExecStream *ex = nullptr;
  Provider *prov = nullptr;
  MPIX_TRY(op_create(a, request != nullptr, &op, &ex, &prov));
  const bool queued = a.queue_stream != nullptr;
  if (!request) {
    op->user_status = status == MPI_STATUS_IGNORE ? nullptr : status;
    op->flags.store(kOpWaitEnqueued);
    // The enqueue's own reference: without a request, the agent may retire the op as soon as
    // the stream writes its trigger, and a failure after that must still reach it (op_fail).
    op->refs.fetch_add(1, std::memory_order_relaxed);
  }

  Stream &s = *op->stream;
  std::lock_guard<std::mutex> lk(s.enqueue_mutex());
  op->threshold = queued ? a.queue_threshold : s.next_threshold();
  // A chunked send has one threshold per piece; the op's fire recipe writes the last.
  const std::shared_ptr<Stager> stg = op->stager;
  FireRecipe fire{s.trigger_word(), op->threshold};
  if (stg)
    for (uint64_t i = 1; i < stg->pieces(); ++i) fire.value = s.next_threshold();
  const bool faults = fault_armed();
  Status st = prov->arm(*op, *ex, &fire);
  if (faults && st.is_ok()) st = fault_hit("arm");
  if (!st.is_ok()) {
    if (!request) op->refs.fetch_sub(1, std::memory_order_relaxed);
    discard(op);
    return st;
  }
  s.pending_ops.fetch_add(1);
  op->ctx->pending_ops.fetch_add(1);
  // The point of no return: the agent owns the op and fires it once the stream writes the
  // threshold. A failure from here on fails the op (op_fail); the error reaches the caller at
  // the wait (nonblocking) or from this call (blocking), and nothing is left behind.
  agent_submit(op);
  // A queue op reads its buffer at its start: Queue::start copies out then.
  if (stg && !queued) {
    if (faults) st = fault_hit("copy_out");
    if (st.is_ok()) st = stg->before_trigger(*ex, s.trigger_word(), op->threshold);
  }
  if (request) {
    // A queue op is fired by MPIX_Start (Queue::start).
    if (st.is_ok() && !queued) st = run_fire(s, *ex, fire);
    if (!st.is_ok()) op_fail(*op, std::move(st));
    *request = op->grequest;
    return {};
  }
  bool triggered = false;
  if (st.is_ok())
    st = enqueue_blocking_waits(s, *ex, stg.get(), fire, op->done.word, op->done_value, &triggered);
  if (st.is_ok() && stg) {
    if (faults) st = fault_hit("copy_in");
    if (st.is_ok()) st = stg->after_wait(*ex, s.trigger_word(), s.peek_next_threshold());
  }
  if (!st.is_ok() && triggered) op_forget_status(*op);
  else if (!st.is_ok()) op_fail(*op, Status(st));
  op_unref(op);
  return st;
}

Status flush_deferred_trigger(Stream &s, ExecStream &ex) {
  const uint64_t t = s.take_deferred();
  return t ? ex.write_value(s.trigger_word(), t) : Status{};
}

Status enqueue_wait(MPI_Request *request, MPI_Status *status) {
  return enqueue_waitall(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

Status enqueue_waitall(int count, MPI_Request *requests, MPI_Status *statuses) {
  auto status_of = [&](int i) {
    return statuses == MPI_STATUSES_IGNORE ? static_cast<MPI_Status *>(nullptr) : &statuses[i];
  };
  std::vector<Op *> ops(static_cast<std::size_t>(count), nullptr);
  // One lock for the whole array; on failure nothing is consumed.
  const int bad = request_find_all(count, requests, ops.data(), /*take=*/true);
  if (bad >= 0)
    return make_status(MPI_ERR_REQUEST,
                       "request %d is not an mpix enqueue request (or was "
                       "already completed, or is listed twice)",
                       bad);
  for (int i = 0; i < count; ++i)
    if (requests[i] == MPI_REQUEST_NULL)
      status_set_empty(status_of(i) ? status_of(i) : MPI_STATUS_IGNORE);
  // Consecutive requests of one stream share one batch of waits (one cuStreamBatchMemOp on a
  // GPU stream instead of one stream operation per request).
  std::vector<StreamMemOp> waits;
  waits.reserve(static_cast<std::size_t>(count) + 1);  // + a deferred trigger: one allocation
  for (int i = 0; i < count;) {
    if (!ops[i]) {
      ++i;
      continue;
    }
    Stream &s = *ops[i]->stream;
    int end = i;
    waits.clear();
    for (; end < count && (!ops[end] || ops[end]->stream.get() == &s); ++end)
      if (ops[end]) waits.push_back({StreamMemOp::wait, ops[end]->done.word, ops[end]->done_value});
    ExecStream *ex = nullptr;
    MPIX_TRY(s.exec(&ex));
    {
      std::lock_guard<std::mutex> lk(s.enqueue_mutex());
      // Chunked receives copy in piece by piece before their completion waits, after any
      // deferred trigger (which may be their own).
      bool copies = false;
      for (int k = i; k < end && !copies; ++k)
        copies = ops[k] && ops[k]->stager && ops[k]->stager->copies_before_wait();
      if (copies) {
        MPIX_TRY(flush_deferred_trigger(s, *ex));
        for (int k = i; k < end; ++k)
          if (ops[k] && ops[k]->stager) MPIX_TRY(ops[k]->stager->before_wait(*ex));
      }
      // Deferred triggers of these (or earlier) ops go first, in the same call.
      if (const uint64_t t = s.take_deferred())
        waits.insert(waits.begin(), StreamMemOp{StreamMemOp::write, s.trigger_word(), t});
      MPIX_TRY(ex->batch(waits.data(), waits.size()));
      for (int k = i; k < end; ++k)
        if (ops[k] && ops[k]->stager)
          MPIX_TRY(ops[k]->stager->after_wait(*ex, s.trigger_word(), s.peek_next_threshold()));
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
