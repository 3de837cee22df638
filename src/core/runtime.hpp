// Process-wide start-up and shutdown. Started lazily by the first mpix call that needs MPI;
// shut down at MPI_Finalize through a delete callback on an MPI_COMM_SELF attribute (MPI runs
// those first thing in MPI_Finalize), which stops the agent and reports ops never completed.
#pragma once

#include "core/status.hpp"

namespace mpix {

// Checks MPI is initialised with MPI_THREAD_MULTIPLE and sets up the finalize hook.
Status runtime_init();

}  // namespace mpix
