// The synchronisation libmpix's plain MPI calls make first (api/plain_mpi_api.cpp): on a
// communicator whose stream syncs plain calls (GPU streams by default), everything enqueued on
// the stream so far has executed when it returns.
#pragma once

#include <mpi.h>

namespace mpix {

// MPI_SUCCESS (also where @p comm's stream does not sync plain calls, and inside mpix's own
// calls), or the error class of a failed synchronisation, after the communicator's error
// handler was called with it; @p call names the MPI call in the message.
int sync_first(MPI_Comm comm, const char *call);

}  // namespace mpix
