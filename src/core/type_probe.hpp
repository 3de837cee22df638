// The private communicator of mpix's datatype probe (api/checks.cpp: MPI has no query for a
// committed datatype, so a zero-element send to MPI_PROC_NULL asks the library's own checks).
// Made by runtime_init, before the agent thread exists: making a communicator while another
// thread drives MPI progress races inside Open MPI (seen under ThreadSanitizer).
#pragma once

#include <mpi.h>

#include "base/status.hpp"

namespace mpix {

class Runtime;

// A duplicate of MPI_COMM_SELF with MPI_ERRORS_RETURN, a part of @p rt (freed with it, at
// MPI_Finalize).
Status type_probe_open(Runtime &rt);
Status type_probe_comm(MPI_Comm *out);

}  // namespace mpix
