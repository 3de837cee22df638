// main() for multi-rank Catch2 tests: MPI with MPI_THREAD_MULTIPLE, errors returned (not
// fatal) so tests can check error classes, then the Catch2 session on every rank. Ranks other
// than 0 report only failures.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <cstdio>

#include "catch.hpp"

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Catch::Session session;
  int rc = session.applyCommandLine(argc, argv);
  // Stop at the first failure and take every rank down with it: the peers of a failed rank
  // would otherwise wait forever in the test's next collective or message.
  session.configData().abortAfter = 1;
  if (rc == 0) rc = session.run();
  if (rc != 0) {
    std::fprintf(stderr, "rank %d: test failed; aborting all ranks\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // A failure on any rank fails the program on every rank.
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst ? 1 : 0;
}
