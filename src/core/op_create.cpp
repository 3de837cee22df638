#include "core/op_create.hpp"

#include <memory>

#include "base/profile.hpp"
#include "base/waiter.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/fault.hpp"
#include "core/named_types.hpp"
#include "core/op_pool.hpp"
#include "core/provider.hpp"
#include "core/request.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "gpu/gpu_aware_mpi.hpp"

namespace mpix {
namespace {

// Keeps a derived datatype alive while the op needs it: MPI lets the user free a datatype
// right after a nonblocking call that uses it.
Status hold_datatype(Op &op, MPI_Datatype dt, bool known_named) {
  bool named = known_named;
  if (!named) MPIX_TRY(datatype_is_named(dt, &named));
  if (named) {
    op.dt = dt;
    return {};
  }
  MPIX_MPI_CHECK(MPI_Type_dup(dt, &op.dt));
  op.dt_owned = true;
  return {};
}

// A new op for @p a, registered, with its completion word; not yet seen by the agent.
Op *op_new(const EnqueueArgs &a, const OpPlan &plan) {
  Runtime &rt = runtime();
  Op *op = nullptr;
  // One with a spare request where the op will have a request (request_start takes it).
  if (plan.request)
    if (OpPool *spares = rt.spare_pool()) op = spares->take();
  OpPool *pool = rt.op_pool();
  if (!op && pool) op = pool->take();
  if (op) {
    op_reuse(*op);
  } else {
    op = new Op;
    op_registry_add(op);
    op->done = signal_pool().acquire();
  }
  op->kind = a.kind;
  op->call = plan.call;
  op->sbuf = a.sbuf;
  op->rbuf = a.rbuf;
  op->count = a.count;
  op->reduce_op = a.reduce_op;
  op->peer = a.peer;
  op->tag = a.tag;
  op->comm = a.comm;
  op->ctx = *plan.ctx;
  if (plan.stream) op->stream = *plan.stream;
  else op->gate = plan.gate;
  // The word's last value was written by its previous op's completion: wait for the next one.
  op->done_value = load_signal(op->done.word) + 1;
  return op;
}

// Stages @p op's device buffers the provider cannot reach (core/stager.hpp), if it has any.
Status stage(Op &op, Provider &prov, const OpPlan &plan, Backend &be, ExecStream *ex) {
  // A CUDA-aware MPI under provider mpi takes device buffers as they are (MPIX_CUDA_AWARE);
  // same-node GPU-direct sends (provider mpi, MPIX_GPU_DIRECT) are not staged either.
  const ProviderCaps caps = prov.caps();
  if (caps.device_memory || (caps.mpi_buffers && aware_choice(be.kind()).direct)) return {};
  const DeviceRead read = prov.reads_device(op);
  if (read == DeviceRead::as_is) {
    op.device_as_is = true;
    return {};
  }
  StagingPlan sp;
  sp.device_copy = read == DeviceRead::from_device_copy;
  sp.backend = &be;
  sp.exec = ex;
  sp.provider = &prov;
  // A chunk-enabled communicator (MPIX_STAGING_CHUNK) sends large staged messages in pieces.
  sp.chunk = plan.chunk;
  // Provider ofi keeps the stream's copies (ProviderCaps::agent_copies); an op no stream
  // runs (a gated op) has the agent copy, whatever its size.
  sp.agent_copies = plan.agent_may_copy && caps.agent_copies;
  sp.agent_always = !plan.stream;
  sp.device = plan.device;
  return staging_setup(op, sp);
}

// The fallible part every op shares: its datatype, the provider's checks, the staging of
// device buffers the provider cannot reach (through pinned bounce buffers, core/stager.hpp) and
// its generalized request; the first failure is returned. Written with early returns: a Status
// assigned over another costs a release check each time, on every enqueue.
Status op_prepare(Op &op, MPI_Datatype dt, bool dt_named, Provider &prov, const OpPlan &plan,
                  ExecStream *ex, bool faults) {
  EnqueueClock *const clock = plan.clock;  // read once: the calls below may not change it
  MPIX_TRY(hold_datatype(op, dt, dt_named));
  if (faults) MPIX_TRY(fault_hit("datatype"));
  MPIX_TRY(prov.validate(op));
  if (faults) MPIX_TRY(fault_hit("validate"));
  if (clock) clock->mark(EnqueuePart::make);
  // Nothing to decide where nothing can be staged (a host stream's host buffers):
  // staging_possible, asked once per stream (Stream::may_stage).
  if (plan.stream ? (*plan.stream)->may_stage() : staging_possible(*plan.be)) {
    Backend &be = plan.stream ? *(*plan.stream)->backend() : *plan.be;
    MPIX_TRY(stage(op, prov, plan, be, ex));
  }
  if (faults) MPIX_TRY(fault_hit("staging_setup"));
  if (clock) clock->mark(EnqueuePart::staging);
  if (plan.request) MPIX_TRY(request_start(&op));
  if (clock) clock->mark(EnqueuePart::request);
  if (faults) MPIX_TRY(fault_hit("request_start"));
  return {};
}

}  // namespace

bool op_make_spare() {
  Runtime *rt = runtime_current();
  OpPool *pool = rt ? rt->op_pool() : nullptr;
  OpPool *spares = rt ? rt->spare_pool() : nullptr;
  if (!pool || !spares) return false;
  Op *op = pool->take();
  if (!op) {
    op = new Op;
    op->state.store(OpState::retired, std::memory_order_relaxed);  // as a pool's ops are
    op_registry_add(op);
    op->done = signal_pool().acquire();
  }
  if (op->spare_request == MPI_REQUEST_NULL && !request_make_spare(op)) {
    pool->give(op);
    return false;
  }
  spares->give(op);
  return true;
}

void op_discard(Op *op) {
  if (op->grequest != MPI_REQUEST_NULL) {
    // free_fn drops the request's reference; the map entry goes with it.
    MPI_Grequest_complete(op->grequest);
    MPI_Request r = op->grequest;
    MPI_Request_free(&r);
  }
  op_unref(op);
}

Status op_create(const EnqueueArgs &a, const OpPlan &plan, Op **out) {
  Provider *prov = nullptr;
  return op_create(a, plan, out, &prov);
}

Status op_create(const EnqueueArgs &a, const OpPlan &plan, Op **out, Provider **prov_out) {
  Provider *prov = nullptr;
  // provider_for, with its common case inline (one load, no call, on the enqueue path).
  Runtime *rt = runtime_current();
  if (rt && a.kind != OpKind::allreduce) MPIX_TRY(rt->provider(&prov));
  else MPIX_TRY(provider_for(a.kind, &prov));
  ExecStream *ex = plan.exec;
  if (plan.stream && !ex) MPIX_TRY((*plan.stream)->exec(&ex));
  MPIX_TRY(agent_start());            // so that agent_submit cannot fail
  const bool faults = fault_armed();  // test hook (core/fault.hpp)
  if (faults) MPIX_TRY(fault_hit("op_create"));

  Op *op = op_new(a, plan);
  Status st = op_prepare(*op, a.dt, a.dt_named, *prov, plan, ex, faults);
  if (!st.is_ok()) {
    op_discard(op);
    return st;
  }
  *out = op;
  *prov_out = prov;
  return {};
}

Status op_submit(Op *op, ExecStream *ex, FireRecipe *fire) {
  Provider *prov = nullptr;
  MPIX_TRY(provider_for(op->kind, &prov));
  return op_submit(op, prov, ex, fire);
}

Status op_submit(Op *op, Provider *prov, ExecStream *ex, FireRecipe *fire) {
  // The injected fault stands in for a failing arm(), so it comes first: a failing arm() leaves
  // nothing behind, where one that succeeded has made provider state (Op::prov) that only the
  // agent drops (Provider::disarm).
  Status st = fault_armed() ? fault_hit("arm") : Status{};
  if (st.is_ok() && prov->arms_ops()) st = prov->arm(*op, ex, fire);
  if (!st.is_ok()) return st;  // (MPIX_TRY would copy it)
  if (op->stream) op->stream->pending_ops.fetch_add(1);
  op->ctx->pending_ops.fetch_add(1);
  agent_submit(op);
  return {};
}

}  // namespace mpix
