// Provider state for queue ops on a plain communicator (not a stream communicator). Provider
// mpi needs none: it posts on the communicator itself (ProviderCaps::plain_comms). Any other
// provider (ofi) keeps per-communicator state: the first MPIX_Create_queue on a plain
// communicator opens it, collectively over the communicator, and caches it there as an
// attribute (as partitioned requests cache their private communicators); later queues reuse it.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"

namespace mpix {

struct CommCtx;

// The context queue ops on plain communicator @p comm run with; collective over @p comm the
// first time a provider without ProviderCaps::plain_comms needs it.
Status queue_plain_ctx(MPI_Comm comm, std::shared_ptr<CommCtx> *out);

}  // namespace mpix
