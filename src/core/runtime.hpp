// Process-wide start-up and shutdown. Started lazily by the first mpix call that needs MPI;
// shut down at MPI_Finalize through a delete callback on an MPI_COMM_SELF attribute (MPI runs
// those first thing in MPI_Finalize), which stops the agent and reports ops never completed.
#pragma once

#include "base/status.hpp"

namespace mpix {

// Checks the MPI library gave MPI_THREAD_MULTIPLE and every MPIX_* setting's value
// (settings_check), and sets up the finalize hook. @p bad_setting (may be null): set to whether
// the failure is a bad setting (MPI itself is usable then).
Status runtime_init(bool *bad_setting = nullptr);
// Runs @p fn at MPI_Finalize, after the agent has stopped (e.g. to free an MPI attribute key
// a subsystem made on first use). Each function runs once, in registration order.
void runtime_at_finalize(void (*fn)());

}  // namespace mpix
