// Frees datatypes mpix duplicated (an op's derived datatype) outside MPI's callbacks: an op's
// last reference often goes inside a generalized request's free_fn, and MPICH 4.0 at
// MPI_THREAD_MULTIPLE aborts on MPI_Type_free there (its global lock is already held).
#pragma once

#include <mpi.h>

namespace mpix {

// Queues @p dt for MPI_Type_free by type_release_run.
void type_release_later(MPI_Datatype dt);
// Frees every queued datatype. Called where no MPI callback is running: the agent between
// rounds, and at finalize. Cheap when nothing is queued.
void type_release_run();

}  // namespace mpix
