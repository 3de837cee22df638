// Process-wide start-up and shutdown. Started lazily by the first mpix call that needs MPI;
// shut down at MPI_Finalize through a delete callback on an MPI_COMM_SELF attribute (MPI runs
// those first thing in MPI_Finalize), which stops the agent and reports ops never completed.
#pragma once

#include "core/status.hpp"

namespace mpix {

// Checks the MPI library gave MPI_THREAD_MULTIPLE and sets up the finalize hook.
Status runtime_init();
// Runs @p fn at MPI_Finalize, after the agent has stopped (e.g. to free an MPI attribute key
// a subsystem made on first use). Each function runs once, in registration order.
void runtime_at_finalize(void (*fn)());

}  // namespace mpix
