// How C entry points report failure: log one line naming the call and the problem, invoke the
// error handler of the communicator involved (MPI_COMM_WORLD's when there is none), and return
// the MPI error class.
#pragma once

#include <mpi.h>

#include "core/status.hpp"

namespace mpix {

int finish(MPI_Comm comm, const char *call, const Status &st);
// The same for an MPI error code made earlier (an asynchronous failure's, with its message).
int report_code(MPI_Comm comm, const char *call, int code);

}  // namespace mpix
