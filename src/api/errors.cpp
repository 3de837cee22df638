#include "api/errors.hpp"

#include "core/log.hpp"

namespace mpix {

int finish(MPI_Comm comm, const char *call, const Status &st) {
  if (st.is_ok()) return MPI_SUCCESS;
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

}  // namespace mpix
