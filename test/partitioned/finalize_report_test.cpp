// A partitioned request still active at MPI_Finalize is reported (as enqueued ops never
// retired are): MPI_Finalize's log, captured here, names it. Own main: the check runs around
// MPI_Finalize itself.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpix/mpix.h"

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int buf[8] = {0};
  MPIX_Request done = MPIX_REQUEST_NULL, left = MPIX_REQUEST_NULL;
  // One request completed properly (not reported), one started and never completed: a receive
  // from this rank itself that no send will ever meet.
  int sbuf[4] = {1, 2, 3, 4}, rbuf[4] = {0};
  MPIX_Request s = MPIX_REQUEST_NULL;
  if (MPIX_Psend_init(sbuf, 2, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s) ||
      MPIX_Precv_init(rbuf, 2, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &done) ||
      MPIX_Start(&s) || MPIX_Start(&done) || MPIX_Pready_range(0, 1, s) ||
      MPIX_Wait(&s, MPI_STATUS_IGNORE) || MPIX_Wait(&done, MPI_STATUS_IGNORE) ||
      MPIX_Request_free(&s) || rbuf[3] != 4) {
    std::fprintf(stderr, "finalize_report_test: FAILED: the completed exchange\n");
    return 1;
  }
  if (MPIX_Precv_init(buf, 2, 4, MPI_INT, rank, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &left) ||
      MPIX_Start(&left)) {
    std::fprintf(stderr, "finalize_report_test: FAILED: setting up the active request\n");
    return 1;
  }
  char path[] = "/tmp/mpix_finalize_report_XXXXXX";
  const int fd = mkstemp(path);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  MPI_Finalize();
  std::fflush(stderr);
  dup2(saved, 2);
  std::string log;
  char chunk[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) > 0;)
    log.append(chunk, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  std::fputs(log.c_str(), stderr);
  const bool named =
      log.find("partitioned receive request (peer " + std::to_string(rank) +
               ", tag 4, 2 partitions) still active at MPI_Finalize") != std::string::npos;
  const bool counted =
      log.find("MPI_Finalize: 1 partitioned request(s) still active") != std::string::npos;
  const bool other = log.find("tag 3") != std::string::npos;  // the completed one
  if (!named || !counted || other) {
    std::fprintf(stderr,
                 "finalize_report_test: FAILED (named %d, counted %d, completed one "
                 "reported %d)\n",
                 named, counted, other);
    return 1;
  }
  std::fprintf(stderr, "finalize_report_test: rank %d ok\n", rank);
  return 0;
}
