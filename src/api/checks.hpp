// Argument checks of the C entry points. Each returns a Status with the MPI error class the
// standard names for that argument and a message naming it.
#pragma once

#include <mpi.h>

#include "base/status.hpp"

namespace mpix {

Status check_comm(MPI_Comm comm);
Status check_count(int count);
// MPI_DATATYPE_NULL, or a derived datatype not committed (MPI_ERR_TYPE): as far as the MPI
// library's argument checks tell (there is no MPI query; see checks.cpp). Needs runtime_init.
Status check_datatype(MPI_Datatype dt);
// A null buffer is an error for count > 0 with a predefined datatype (derived datatypes may
// address absolute memory from MPI_BOTTOM).
Status check_buffer(const void *buf, int count, MPI_Datatype dt, const char *name);
// @p any: MPI_ANY_SOURCE allowed (receives).
Status check_rank(MPI_Comm comm, int rank, bool any);
// @p any: MPI_ANY_TAG allowed (receives).
Status check_tag(int tag, bool any);
// comm, count, datatype, buffer, peer and tag of a point-to-point call.
Status check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                 bool is_recv);

}  // namespace mpix
