// MPI_Init, MPI_Init_thread and MPI_Query_thread through the MPI profiling interface, so that
// codes that call MPI_Init or ask for MPI_THREAD_FUNNELED work unchanged: mpix's agent thread
// calls MPI, so the library is always asked for MPI_THREAD_MULTIPLE; the caller is told the
// level it asked for (capped by what the library gave), and MPI_Query_thread says the same.
// These win over libmpi's own definitions only when libmpix comes before libmpi in the
// dynamic linker's search order (the link line: mpix::mpix and mpix.pc put it there).
#include <mpi.h>

#include "base/log.hpp"
#include "core/thread_level.hpp"

namespace mpix {
namespace {

bool is_level(int level) {
  return level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED ||
         level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE;
}

int init(int *argc, char ***argv, int required, int *provided) {
  // Not a thread level at all: the library reports that error as it would without mpix.
  if (!is_level(required)) return PMPI_Init_thread(argc, argv, required, provided);
  int got = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (rc != MPI_SUCCESS) return rc;
  thread_level_record(required, got);
  if (provided) *provided = thread_level_reported();
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log_set_rank(rank);
  if (got != MPI_THREAD_MULTIPLE) {
    // Said once, at start-up; every mpix call then fails with MPI_ERR_OTHER saying the same.
    if (rank == 0)
      MPIX_LOG(warn, "api",
               "MPI_Init: the MPI library gives %s at most, mpix needs MPI_THREAD_MULTIPLE "
               "(its agent thread calls MPI): mpix calls will fail with MPI_ERR_OTHER",
               thread_level_name(got));
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace mpix

extern "C" {

int MPI_Init(int *argc, char ***argv) {
  // MPI_Init is MPI_Init_thread(MPI_THREAD_SINGLE) (MPI-4.0 §11.2.1).
  return mpix::init(argc, argv, MPI_THREAD_SINGLE, nullptr);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  return mpix::init(argc, argv, required, provided);
}

int MPI_Query_thread(int *provided) {
  // Before MPI_Init the library answers (an error, or its default), as without mpix.
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized || !mpix::thread_level_wrapped() || !provided)
    return PMPI_Query_thread(provided);
  *provided = mpix::thread_level_reported();
  return MPI_SUCCESS;
}

}  // extern "C"
