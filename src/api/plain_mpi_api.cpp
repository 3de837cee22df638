// Plain (non-enqueue) MPI calls on a stream communicator, through the MPI profiling interface:
// as MPICH orders them on a GPU-stream communicator, the communicator's stream is synchronised
// first (everything enqueued on it so far has executed), then the call goes to the MPI library.
// Streams that sync plain calls: GPU streams by default, host streams with the info key
// mpix_sync_plain_calls = true (Stream::syncs_plain_calls). For every other communicator
// nothing is done: while no such stream communicator exists that costs one relaxed atomic
// load, otherwise one attribute lookup (core/comm_ctx.cpp, comm_ctx_sync_stream). mpix's own MPI
// calls (the agent, calls inside MPIX_* entry points) skip the sync (base/internal_thread.hpp).
// These win over libmpi's definitions only when libmpix comes before libmpi in the link order, as
// for MPI_Init.
#include <mpi.h>

#include "api/errors.hpp"
#include "api/plain_sync.hpp"
#include "api/stream_handle.hpp"
#include "base/internal_thread.hpp"
#include "core/comm_ctx.hpp"

namespace mpix {

int sync_first(MPI_Comm comm, const char *call) {
  if (in_internal()) return MPI_SUCCESS;
  std::shared_ptr<Stream> s = comm_ctx_sync_stream(comm);
  if (!s) return MPI_SUCCESS;
  return api_guard(call, [&]() -> int {
    Status st = stream_drain_for_host_call(*s);
    if (st.is_ok()) return MPI_SUCCESS;
    return finish(
        comm, call,
        make_status(st.code(), "synchronising the stream of comm first: %s", st.what().c_str()));
  });
}

}  // namespace mpix

#define MPIX_SYNC_FIRST(comm, name)                      \
  do {                                                   \
    const int mpix_rc_ = ::mpix::sync_first(comm, name); \
    if (mpix_rc_ != MPI_SUCCESS) return mpix_rc_;        \
  } while (0)

extern "C" {

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Send");
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Ssend");
  return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Rsend");
  return PMPI_Rsend(buf, count, datatype, dest, tag, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Bsend");
  return PMPI_Bsend(buf, count, datatype, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
  MPIX_SYNC_FIRST(comm, "MPI_Isend");
  return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
  MPIX_SYNC_FIRST(comm, "MPI_Issend");
  return PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  MPIX_SYNC_FIRST(comm, "MPI_Recv");
  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
  MPIX_SYNC_FIRST(comm, "MPI_Irecv");
  return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
  MPIX_SYNC_FIRST(comm, "MPI_Sendrecv");
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
  MPIX_SYNC_FIRST(comm, "MPI_Sendrecv_replace");
  return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

int MPI_Barrier(MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Barrier");
  return PMPI_Barrier(comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Bcast");
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Reduce");
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Allreduce");
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Gather");
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Scatter");
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Allgather");
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  MPIX_SYNC_FIRST(comm, "MPI_Alltoall");
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

}  // extern "C"
