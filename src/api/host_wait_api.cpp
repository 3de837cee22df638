// Host waits and tests (MPI_Wait & co.) through the MPI profiling interface: an mpix enqueue
// request whose stream defers its triggers (mpix_defer_trigger, docs/guide.md "Deferred
// triggers") has its op posted only once the stream writes the deferred trigger, which a
// program that completes the request on the host alone never asks for. These write it first
// (flush_deferred_for_host_wait), so the host wait completes once the stream gets there, as it
// does without deferral. While no stream defers, that costs one relaxed load; mpix's own calls
// (the agent's tests, calls inside MPIX_* entry points) skip it (base/internal_thread.hpp).
// These win over libmpi's definitions only when libmpix comes before libmpi in the link order,
// as for MPI_Init.
#include <mpi.h>

#include "api/errors.hpp"
#include "base/internal_thread.hpp"
#include "core/enqueue.hpp"
#include "core/stream.hpp"

namespace mpix {
namespace {

int flush_first(int n, const MPI_Request *reqs, const char *call) {
  if (in_internal() || !Stream::any_defers() || n <= 0 || !reqs) return MPI_SUCCESS;
  return api_guard(call, [&]() -> int {
    Status st = flush_deferred_for_host_wait(n, reqs);
    if (st.is_ok()) return MPI_SUCCESS;
    return finish(MPI_COMM_NULL, call,
                  make_status(st.code(), "writing the deferred trigger of a request's stream: %s",
                              st.what().c_str()));
  });
}

}  // namespace
}  // namespace mpix

#define MPIX_FLUSH_FIRST(n, reqs, name)                            \
  do {                                                             \
    const int mpix_rc_ = ::mpix::flush_first((n), (reqs), (name)); \
    if (mpix_rc_ != MPI_SUCCESS) return mpix_rc_;                  \
  } while (0)

extern "C" {

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  MPIX_FLUSH_FIRST(1, request, "MPI_Wait");
  return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  MPIX_FLUSH_FIRST(count, requests, "MPI_Waitall");
  return PMPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  MPIX_FLUSH_FIRST(count, requests, "MPI_Waitany");
  return PMPI_Waitany(count, requests, index, status);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  MPIX_FLUSH_FIRST(incount, requests, "MPI_Waitsome");
  return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  MPIX_FLUSH_FIRST(1, request, "MPI_Test");
  return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
  MPIX_FLUSH_FIRST(count, requests, "MPI_Testall");
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
  MPIX_FLUSH_FIRST(count, requests, "MPI_Testany");
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  MPIX_FLUSH_FIRST(incount, requests, "MPI_Testsome");
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
  MPIX_FLUSH_FIRST(1, &request, "MPI_Request_get_status");
  return PMPI_Request_get_status(request, flag, status);
}

}  // extern "C"
