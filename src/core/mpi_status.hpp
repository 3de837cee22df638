// Small helpers on MPI_Status shared by the engine and the partitioned requests.
#pragma once

#include <mpi.h>

namespace mpix {

// MPI's empty status (what a wait on MPI_REQUEST_NULL or an inactive request reports);
// MPI_STATUS_IGNORE is left alone.
inline void status_set_empty(MPI_Status *st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements_x(st, MPI_BYTE, 0);
  MPI_Status_set_cancelled(st, 0);
}

}  // namespace mpix
