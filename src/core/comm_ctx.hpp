// What mpix attaches to a stream communicator (an MPI attribute): its stream and the provider's
// per-communicator state. MPI_Comm_dup / idup copy it; MPI_Comm_free deletes it (and fails with
// MPI_ERR_PENDING while ops on the communicator are pending).
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>

#include "core/stream.hpp"
#include "providers/provider.hpp"

namespace mpix {

struct CommCtx {
  std::shared_ptr<Stream> stream;  // null for a plain duplicate (MPIX_STREAM_NULL)
  std::unique_ptr<ProviderComm> prov;
  std::atomic<int64_t> pending_ops{0};
  // Stops counting this communicator in stream->attached_comms (once). Called at MPI_Comm_free:
  // ops that just completed may keep the context alive a moment longer, and MPIX_Stream_free
  // right after MPI_Comm_free must still succeed.
  void detach_stream();
  ~CommCtx();

 private:
  std::atomic<bool> detached_{false};
};

// Attaches a new context to @p comm.
Status comm_ctx_attach(MPI_Comm comm, std::shared_ptr<CommCtx> ctx);
// The context of @p comm, or null if it is not a stream communicator.
Status comm_ctx_get(MPI_Comm comm, std::shared_ptr<CommCtx> *out);
// Ops enqueued on @p comm and not completed (0 if it is not a stream communicator). Makes no
// attribute key (MPI_Comm_free of any communicator asks).
int64_t comm_ctx_pending(MPI_Comm comm);
// At MPI_Finalize: frees the attribute key (MPI keeps it while communicators still use it).
void comm_ctx_release_keyval();

}  // namespace mpix
