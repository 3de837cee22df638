// MPI_Comm_free through the MPI profiling interface: a stream communicator with enqueued ops
// not yet completed is not freed (MPI_ERR_PENDING). Where the stream syncs plain calls (GPU
// streams), the free is ordered after the stream's work first, as MPICH orders plain calls on a
// GPU-stream communicator: an MPIX_Wait_enqueue followed by MPI_Comm_free then frees the
// communicator once the stream has passed the wait. The attribute delete callback refuses such
// a free too (core/comm_ctx.cpp), but what a failed delete callback leaves differs between MPI
// libraries: Open MPI keeps the attribute, MPICH 4.0 drops it (the communicator then loses its
// stream). Checking before PMPI_Comm_free keeps the communicator whole under every MPI.
#include <mpi.h>

#include <chrono>

#include "api/plain_sync.hpp"
#include "base/log.hpp"
#include "core/comm_ctx.hpp"

extern "C" int MPI_Comm_free(MPI_Comm *comm) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!comm || !initialized || finalized) return PMPI_Comm_free(comm);
  int64_t pending = mpix::comm_ctx_pending(*comm);
  if (pending <= 0) return PMPI_Comm_free(comm);
  const int rc = mpix::sync_first(*comm, "MPI_Comm_free");
  if (rc != MPI_SUCCESS) return rc;
  // GPU-direct sends whose stream went on at their receiver's copy complete on the answer, a
  // moment later (Stream::settle): the user may have synchronised the stream just now.
  mpix::comm_ctx_settle(*comm, std::chrono::milliseconds(100));
  pending = mpix::comm_ctx_pending(*comm);
  if (pending <= 0) return PMPI_Comm_free(comm);
  MPIX_LOG(warn, "api",
           "MPI_Comm_free: %lld enqueued ops on this stream communicator have "
           "not completed; the communicator is not freed",
           static_cast<long long>(pending));
  PMPI_Comm_call_errhandler(*comm, MPI_ERR_PENDING);
  return MPI_ERR_PENDING;
}
