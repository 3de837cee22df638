// MPIX_Sendrecv_enqueue (an mpix addition): MPI_Sendrecv in stream order, for halo codes
// written with MPI_Sendrecv. Made of a nonblocking receive and send posted at the same point
// of the stream, then stream waits on both.
#include "api/checks.hpp"
#include "api/errors.hpp"
#include "core/enqueue.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"

namespace mpix {
namespace {

// Prefixes the argument's name to a check's message ("sendcount: count -1 is negative").
Status named(const char *arg, Status st) {
  if (st.is_ok()) return st;
  return make_status(st.code(), "%s: %s", arg, st.what().c_str());
}

Status check_half(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                  bool is_recv) {
  const char *const n_buf = is_recv ? "recvbuf" : "sendbuf";
  const char *const n_count = is_recv ? "recvcount" : "sendcount";
  const char *const n_type = is_recv ? "recvtype" : "sendtype";
  const char *const n_peer = is_recv ? "source" : "dest";
  const char *const n_tag = is_recv ? "recvtag" : "sendtag";
  MPIX_TRY(named(n_count, check_count(count)));
  MPIX_TRY(named(n_type, check_datatype(dt)));
  MPIX_TRY(check_buffer(buf, count, dt, n_buf));
  MPIX_TRY(named(n_peer, check_rank(comm, peer, is_recv)));
  MPIX_TRY(named(n_tag, check_tag(tag, is_recv)));
  return {};
}

Status sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                MPI_Comm comm, MPI_Status *status) {
  MPIX_TRY(runtime_init());
  MPIX_TRY(check_comm(comm));
  MPIX_TRY(check_half(sendbuf, sendcount, sendtype, dest, sendtag, comm, false));
  MPIX_TRY(check_half(recvbuf, recvcount, recvtype, source, recvtag, comm, true));
  // MPI_Sendrecv forbids overlapping buffers; the same address with data both ways is the
  // mistake that can be seen without walking the datatypes.
  if (sendbuf == recvbuf && sendbuf && sendbuf != MPI_BOTTOM && sendcount > 0 && recvcount > 0)
    return make_status(MPI_ERR_BUFFER,
                       "sendbuf and recvbuf are the same buffer (%p); they must "
                       "not overlap",
                       recvbuf);
  // Both halves fire at this point of the stream, the receive first; the agent posts them
  // without waiting in between, so a ring of Sendrecvs cannot deadlock.
  MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
  MPIX_TRY(enqueue_op(p2p_args(OpKind::recv, recvbuf, recvcount, recvtype, source, recvtag, comm),
                      &rreq, nullptr));
  Status st = enqueue_op(p2p_args(OpKind::send, sendbuf, sendcount, sendtype, dest, sendtag, comm),
                         &sreq, nullptr);
  if (!st.is_ok()) {
    // The receive is already enqueued and cannot be withdrawn: it still completes if a message
    // matches it; its request is let go so that nothing waits on it or leaks.
    MPI_Request_free(&rreq);
    return st;
  }
  st = enqueue_wait(&sreq, MPI_STATUS_IGNORE);
  if (!st.is_ok()) {
    MPI_Request_free(&rreq);
    return st;
  }
  return enqueue_wait(&rreq, status);
}

}  // namespace
}  // namespace mpix

extern "C" int MPIX_Sendrecv_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     int dest, int sendtag, void *recvbuf, int recvcount,
                                     MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                                     MPI_Status *status) {
  return mpix::finish(comm, "MPIX_Sendrecv_enqueue",
                      mpix::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                     recvcount, recvtype, source, recvtag, comm, status));
}
