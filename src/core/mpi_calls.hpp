// The MPI calls an op makes once it exists: its generalized request, and the statuses and error
// texts of its completion (core/op.cpp, core/request.cpp). A process uses MPI's own (mpi_calls());
// the one-process unit test gives the Runtime its own, since it runs without MPI_Init.
#pragma once

#include <mpi.h>

#include <memory>

namespace mpix {

class MpiCalls {
 public:
  virtual ~MpiCalls() = default;
  virtual int grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free,
                             MPI_Grequest_cancel_function *cancel, void *extra,
                             MPI_Request *out) = 0;
  virtual int grequest_complete(MPI_Request r) = 0;
  virtual int request_free(MPI_Request *r) = 0;
  // A status with no data: 0 bytes, not cancelled (MPI_Status_set_elements_x / _set_cancelled).
  virtual void status_set_empty(MPI_Status &st) = 0;
  // The class of @p code, and its text (MPI_Error_class / MPI_Error_string; MPI_ERR_OTHER and ""
  // when MPI does not know it).
  virtual int error_class(int code) = 0;
  virtual void error_string(int code, char text[MPI_MAX_ERROR_STRING]) = 0;
};

// MPI's own calls.
std::unique_ptr<MpiCalls> mpi_calls();

}  // namespace mpix
