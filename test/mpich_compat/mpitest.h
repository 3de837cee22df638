/* Our own minimal stand-in for MPICH's test harness header (MTest_*), written for running
 * MPICH's stream tests against mpix; not MPICH's code. */
#pragma once
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mtest_verbose_level(void) {
  const char *v = getenv("MPITEST_VERBOSE");
  return v ? atoi(v) : 0;
}
static inline void MTest_Init(int *argc, char ***argv) {
  int provided;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
}
static inline void MTestPrintError(int code) {
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, s, &n);
  printf("MPI error: %s\n", s);
}
static inline void MTestPrintfMsg(int level, const char *fmt, ...) {
  if (mtest_verbose_level() < level) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}
/* Checks that @comm is a working intracommunicator: a ring exchange and an allreduce. */
static inline int MTestTestIntracomm(MPI_Comm comm) {
  int errs = 0, rank, size, got = -1, sum = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size,
               7, comm, MPI_STATUS_IGNORE);
  if (got != (rank + size - 1) % size) errs++;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  if (sum != size * (size - 1) / 2) errs++;
  if (errs) printf("intracomm check failed on rank %d\n", rank);
  return errs;
}
static inline void MTest_Finalize(int errs) {
  int rank, total = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total) printf(" Found %d errors\n", total);
    else printf(" No Errors\n");
  }
  MPI_Finalize();
}
static inline int MTestReturnValue(int errs) { return errs ? 1 : 0; }
