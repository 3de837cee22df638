#include "api/errors.hpp"

#include "base/log.hpp"

namespace mpix {

int finish_failed(MPI_Comm comm, const char *call, const Status &st) {
  MPIX_LOG(warn, "api", "%s: %s", call, st.what().c_str());
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    MPI_Comm target = (comm == MPI_COMM_NULL || st.code() == MPI_ERR_COMM) ? MPI_COMM_WORLD : comm;
    MPI_Comm_call_errhandler(target, st.code());
  }
  return st.code();
}

int exception_finish(const char *call) noexcept {
  const int cls = exception_class(call);
  try {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_call_errhandler(MPI_COMM_WORLD, cls);
  } catch (...) {
    // A C++ error handler that throws: MPI's own behaviour is undefined; ours is to return.
  }
  return cls;
}

int report_code(MPI_Comm comm, const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) text[0] = '\0';
  MPIX_LOG(warn, "api", "%s: %s", call, text);
  MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  return code;
}

}  // namespace mpix
