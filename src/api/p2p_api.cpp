// C entry points: enqueued point-to-point, waits and allreduce (MPICH-compatible).
#include "api/checks.hpp"
#include "api/errors.hpp"
#include "base/small_vector.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/enqueue.hpp"
#include "core/op.hpp"
#include "core/request.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"

namespace mpix {
namespace {

// Inlined into each entry point (four copies of a short body): a call with ten arguments and
// a Status returned through memory cost ~50 instructions per enqueue.
inline __attribute__((always_inline)) Status p2p(OpKind kind, const void *buf, int count,
                                                 MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                                                 MPI_Request *request, bool want_request,
                                                 MPI_Status *status) {
  if (want_request && !request) return make_status(MPI_ERR_ARG, "request is NULL");
  MPIX_TRY(runtime_init());
  // The stream communicator's context, looked up once for the call: it knows the
  // communicator's size, so the rank check asks MPI nothing. The lookup's own failure is
  // reported after the argument checks, in the order they always ran.
  const std::shared_ptr<CommCtx> *ctx = nullptr;
  Status found = comm == MPI_COMM_NULL ? Status{} : comm_ctx_peek(comm, &ctx);
  int peers = -1;
  if (found.is_ok() && ctx) MPIX_TRY((*ctx)->peer_count(comm, &peers));
  const bool quick = check_p2p_quick(buf, count, dt, peer, tag, comm, kind == OpKind::recv, peers);
  if (!quick)
    MPIX_TRY(check_p2p_each(buf, count, dt, peer, tag, comm, kind == OpKind::recv, peers));
  if (!found.is_ok()) return found;
  // A thread that cannot be started fails here, before an op exists.
  MPIX_TRY(agent_start());
  EnqueueArgs a = p2p_args(kind, buf, count, dt, peer, tag, comm);
  a.dt_named = quick;  // the quick check found dt predefined: op_create need not ask again
  return enqueue_op(a, want_request ? request : nullptr, status, ctx);
}

// The ops of @p reqs, their handles consumed (request_find_all with take: on failure nothing is
// consumed), and the communicator whose error handler a failure goes to (the first op's).
Status take_requests(int n, MPI_Request *reqs, Op **ops, MPI_Comm *comm, const char *what) {
  const int bad = request_find_all(n, reqs, ops, /*take=*/true);
  for (int i = 0; i < n && *comm == MPI_COMM_NULL && (bad < 0 || i < bad); ++i)
    if (ops[i]) *comm = ops[i]->comm;
  if (bad < 0) return {};
  if (n == 1)
    return make_status(MPI_ERR_REQUEST,
                       "%s is not an mpix enqueue request (or was already completed)", what);
  return make_status(MPI_ERR_REQUEST,
                     "%s[%d] is not an mpix enqueue request (or was already completed, or is "
                     "listed twice)",
                     what, bad);
}

// Whether the MPI library accepts @p op on @p dt, asked now with a zero-count MPI_Reduce_local
// (it touches no buffer): a refusal by the MPI_Iallreduce the agent posts later would reach no
// caller. Open MPI, for one, refuses predefined ops on derived datatypes. Only for predefined
// ops: a user-defined op is never called here.
Status check_reduce_op(MPI_Op op, MPI_Datatype dt) {
  static const MPI_Op kPredefined[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                       MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                       MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  bool predefined = false;
  for (MPI_Op p : kPredefined) predefined |= p == op;
  if (!predefined) return {};
  char in = 0, inout = 0;
  int rc = MPI_Reduce_local(&in, &inout, 0, dt, op);
  if (rc == MPI_SUCCESS) return {};
  int cls = MPI_ERR_OP;
  MPI_Error_class(rc, &cls);
  if (cls == MPI_ERR_TYPE) return make_status(MPI_ERR_TYPE, "datatype is invalid or not committed");
  return make_status(MPI_ERR_OP,
                     "op is not defined for this datatype (the MPI library refuses "
                     "the pair; use a user-defined op)");
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm) {
  return api_guard("MPIX_Send_enqueue", [&]() -> int {
    Status st = p2p(OpKind::send, buf, count, datatype, dest, tag, comm, nullptr, false, nullptr);
    return finish(comm, "MPIX_Send_enqueue", st);
  });
}

int MPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Status *status) {
  return api_guard("MPIX_Recv_enqueue", [&]() -> int {
    Status st = p2p(OpKind::recv, buf, count, datatype, source, tag, comm, nullptr, false, status);
    return finish(comm, "MPIX_Recv_enqueue", st);
  });
}

int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request) {
  return api_guard("MPIX_Isend_enqueue", [&]() -> int {
    Status st = p2p(OpKind::send, buf, count, datatype, dest, tag, comm, request, true, nullptr);
    return finish(comm, "MPIX_Isend_enqueue", st);
  });
}

int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Request *request) {
  return api_guard("MPIX_Irecv_enqueue", [&]() -> int {
    Status st = p2p(OpKind::recv, buf, count, datatype, source, tag, comm, request, true, nullptr);
    return finish(comm, "MPIX_Irecv_enqueue", st);
  });
}

int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status) {
  return api_guard("MPIX_Wait_enqueue", [&]() -> int {
    MPI_Comm comm = MPI_COMM_NULL;
    if (!request)
      return finish(comm, "MPIX_Wait_enqueue", make_status(MPI_ERR_ARG, "request is NULL"));
    Op *op = nullptr;
    Status st = take_requests(1, request, &op, &comm, "request");
    if (st.is_ok())
      st = enqueue_waitall_ops(1, request, &op,
                               status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
    return finish(comm, "MPIX_Wait_enqueue", st);
  });
}

int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                         MPI_Status *array_of_statuses) {
  return api_guard("MPIX_Waitall_enqueue", [&]() -> int {
    Status st = check_count(count);
    if (st.is_ok() && count > 0 && !array_of_requests)
      st = make_status(MPI_ERR_ARG, "array_of_requests is NULL");
    MPI_Comm comm = MPI_COMM_NULL;
    // Every handle is checked first, so a bad one leaves nothing half-enqueued.
    if (st.is_ok() && count > 0) {
      SmallVector<Op *, 16> ops(static_cast<std::size_t>(count));  // no allocation up to 16
      st = take_requests(count, array_of_requests, ops.data(), &comm, "array_of_requests");
      if (st.is_ok())
        st = enqueue_waitall_ops(count, array_of_requests, ops.data(), array_of_statuses);
    }
    return finish(comm, "MPIX_Waitall_enqueue", st);
  });
}

int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return api_guard("MPIX_Allreduce_enqueue", [&]() -> int {
    Status st = runtime_init();
    if (st.is_ok()) st = check_comm(comm);
    if (st.is_ok()) st = check_count(count);
    if (st.is_ok()) st = check_datatype(datatype);
    if (st.is_ok() && op == MPI_OP_NULL) st = make_status(MPI_ERR_OP, "op is MPI_OP_NULL");
    if (st.is_ok()) st = check_reduce_op(op, datatype);
    if (st.is_ok() && sendbuf != MPI_IN_PLACE)
      st = check_buffer(sendbuf, count, datatype, "sendbuf");
    if (st.is_ok()) st = check_buffer(recvbuf, count, datatype, "recvbuf");
    // Caught here, not by the MPI_Iallreduce the agent posts later: an error there would reach
    // no caller (this call has no request), only the log.
    if (st.is_ok() && recvbuf == MPI_IN_PLACE)
      st = make_status(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE (only sendbuf may be)");
    if (st.is_ok() && count > 0 && sendbuf == recvbuf && sendbuf != MPI_BOTTOM)
      st = make_status(MPI_ERR_BUFFER,
                       "sendbuf and recvbuf are the same buffer (%p); use "
                       "MPI_IN_PLACE as sendbuf",
                       recvbuf);
    if (st.is_ok() && sendbuf == MPI_IN_PLACE) {
      int inter = 0;
      MPI_Comm_test_inter(comm, &inter);
      if (inter)
        st = make_status(MPI_ERR_ARG, "MPI_IN_PLACE is not allowed on an intercommunicator");
    }
    if (st.is_ok()) st = agent_start();
    if (st.is_ok()) {
      EnqueueArgs a;
      a.kind = OpKind::allreduce;
      a.sbuf = sendbuf;
      a.rbuf = recvbuf;
      a.count = count;
      a.dt = datatype;
      a.reduce_op = op;
      a.comm = comm;
      st = enqueue_op(a, nullptr, nullptr);
    }
    return finish(comm, "MPIX_Allreduce_enqueue", st);
  });
}

}  // extern "C"
