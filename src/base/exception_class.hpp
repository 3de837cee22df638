// The MPI error class of a C++ exception, for the exception barriers of C entry points
// (api/errors.hpp's api_guard; the host stream's, which needs no MPI).
#pragma once

#include <mpi.h>

namespace mpix {

// Call only inside a catch block: the MPI error class of the exception being handled
// (std::bad_alloc: MPI_ERR_NO_MEM; std::system_error, e.g. a thread that could not be
// started: MPI_ERR_OTHER; anything else: MPI_ERR_INTERN), logged once with @p call.
int exception_class(const char *call) noexcept;

}  // namespace mpix
