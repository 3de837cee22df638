#include "core/mpi_calls.hpp"

namespace mpix {
namespace {

class RealMpiCalls final : public MpiCalls {
 public:
  int grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free,
                     MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *out) override {
    return MPI_Grequest_start(query, free, cancel, extra, out);
  }
  int grequest_complete(MPI_Request r) override { return MPI_Grequest_complete(r); }
  int request_free(MPI_Request *r) override { return MPI_Request_free(r); }
  void status_set_empty(MPI_Status &st) override {
    MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(&st, 0);
  }
  int error_class(int code) override {
    int cls = MPI_ERR_OTHER;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
    return cls;
  }
  void error_string(int code, char text[MPI_MAX_ERROR_STRING]) override {
    int len = 0;
    text[0] = '\0';
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) text[0] = '\0';
  }
};

}  // namespace

std::unique_ptr<MpiCalls> mpi_calls() { return std::make_unique<RealMpiCalls>(); }

}  // namespace mpix
