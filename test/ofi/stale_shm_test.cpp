// A shared-memory file left behind by a killed process must not stop mpix's shm endpoint.
// libfabric's shm names an endpoint "<pid>:0:0" unless told otherwise, and its file
// (/dev/shm/<pid>:0:0) outlives a process killed without cleanup; a later process with the same
// pid then failed fi_enable with EBUSY. Each rank here plays that later process: it creates
// /dev/shm/<its pid>:0:0 before MPI_Init, then exchanges messages over provider ofi (shm).
// Exit status 0 when both ranks received what was sent.
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

int g_failures = 0;

void check(bool ok, const char *what) {
  if (ok) return;
  std::fprintf(stderr, "stale_shm_test: FAILED: %s\n", what);
  ++g_failures;
}

}  // namespace

int main(int argc, char **argv) {
  char stale[64];
  std::snprintf(stale, sizeof stale, "/%ld:0:0", static_cast<long>(getpid()));
  const int fd = shm_open(stale, O_RDWR | O_CREAT | O_EXCL, 0600);
  const bool made = fd >= 0;  // may exist already (left by a real killed process): fine too
  if (made) {
    if (ftruncate(fd, 4096) != 0) std::perror("ftruncate");
    close(fd);
  }

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(size == 2, "needs 2 ranks");
  mpix_host_stream_t hs = nullptr;
  check(mpix_host_stream_create(&hs) == 0, "mpix_host_stream_create");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Info_set_hex(info, "value", &hs, sizeof hs);
  MPIX_Stream stream = MPIX_STREAM_NULL;
  check(MPIX_Stream_create(info, &stream) == MPI_SUCCESS, "MPIX_Stream_create");
  MPI_Info_free(&info);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm);
  check(rc == MPI_SUCCESS, "MPIX_Stream_comm_create (the shm endpoint opens here)");
  if (rc == MPI_SUCCESS && size == 2) {
    const int peer = 1 - rank;
    std::vector<int> out(1000), in(1000, -1);
    for (int i = 0; i < 1000; ++i) out[i] = rank * 100000 + i;
    for (int round = 0; round < 3; ++round) {
      MPI_Request r;
      check(MPIX_Irecv_enqueue(in.data(), 1000, MPI_INT, peer, round, comm, &r) == MPI_SUCCESS,
            "MPIX_Irecv_enqueue");
      check(MPIX_Send_enqueue(out.data(), 1000, MPI_INT, peer, round, comm) == MPI_SUCCESS,
            "MPIX_Send_enqueue");
      check(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPIX_Wait_enqueue");
      check(MPIX_Stream_synchronize(stream) == MPI_SUCCESS, "MPIX_Stream_synchronize");
      bool same = true;
      for (int i = 0; i < 1000; ++i) same = same && in[i] == peer * 100000 + i;
      check(same, "received data equals sent data");
    }
    MPI_Comm_free(&comm);
  }
  MPIX_Stream_free(&stream);
  mpix_host_stream_destroy(&hs);
  int failures = g_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (made) shm_unlink(stale);
  if (rank == 0) std::printf("stale_shm_test: %s\n", total ? "FAILED" : "passed");
  return total ? 1 : 0;
}
