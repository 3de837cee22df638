/* A program written against MPICH's stream API as MPICH 4.2 documents it, in C, with plain
 * MPI_Init and <mpi.h> alone (built with mpix/compat first on the include path, as such
 * programs are built against mpix): two general streams (MPI_INFO_NULL) per rank on a multiplex
 * communicator, messages between crossed stream indices, a progress thread,
 * MPIX_Stream_progress and MPIX_Comm_get_stream, and a progress thread left running into
 * MPI_Finalize. Ranks 0 and 1 exchange; exit status 0 when every check holds. */
#include <mpi.h>
#include <stdio.h>

#ifndef MPIX_STREAM_ENQUEUE
#error "MPIX_STREAM_ENQUEUE is not defined"
#endif

static int failures = 0;

#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPIX_Stream streams[2];
  for (int i = 0; i < 2; ++i) EXPECT(MPIX_Stream_create(MPI_INFO_NULL, &streams[i]) == MPI_SUCCESS);
  MPI_Comm comm;
  EXPECT(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 2, streams, &comm) == MPI_SUCCESS);
  EXPECT(MPIX_Start_progress_thread(streams[0]) == MPI_SUCCESS);

  MPIX_Stream got = MPIX_STREAM_NULL;
  EXPECT(MPIX_Comm_get_stream(comm, 1, &got) == MPI_SUCCESS);
  EXPECT(got == streams[1]);

  if (rank < 2 && size >= 2) {
    const int peer = 1 - rank;
    double out[2][64], in[2][64];
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 64; ++i) out[k][i] = rank * 1000.0 + k * 100.0 + i, in[k][i] = -1.0;
    MPI_Request reqs[4];
    /* From my stream k to the peer's stream 1-k; receive from the peer's stream 1-k into k. */
    for (int k = 0; k < 2; ++k) {
      EXPECT(MPIX_Stream_irecv(in[k], 64, MPI_DOUBLE, peer, 0, comm, 1 - k, k, &reqs[k]) ==
             MPI_SUCCESS);
    }
    for (int k = 0; k < 2; ++k) {
      EXPECT(MPIX_Stream_isend(out[k], 64, MPI_DOUBLE, peer, 0, comm, k, 1 - k, &reqs[2 + k]) ==
             MPI_SUCCESS);
    }
    MPI_Status sts[4]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on MPICH's (Status *)1 */
    EXPECT(MPI_Waitall(4, reqs, sts) == MPI_SUCCESS);
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 64; ++i) EXPECT(in[k][i] == peer * 1000.0 + (1 - k) * 100.0 + i);
    /* Blocking calls. */
    int x = rank + 5, y = -1;
    MPI_Status st;
    if (rank == 0) {
      EXPECT(MPIX_Stream_send(&x, 1, MPI_INT, peer, 1, comm, 1, 0) == MPI_SUCCESS);
      EXPECT(MPIX_Stream_recv(&y, 1, MPI_INT, peer, MPI_ANY_TAG, comm, 0, 1, &st) == MPI_SUCCESS);
    } else {
      EXPECT(MPIX_Stream_recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 1, comm, 1, 0, &st) == MPI_SUCCESS);
      EXPECT(MPIX_Stream_send(&x, 1, MPI_INT, peer, 2, comm, 0, 1) == MPI_SUCCESS);
    }
    EXPECT(y == peer + 5);
    EXPECT(st.MPI_SOURCE == peer);
    /* Large-count names. */
    MPI_Count n = 1;
    y = -1;
    if (rank == 0) {
      EXPECT(MPIX_Stream_send_c(&x, n, MPI_INT, peer, 3, comm, 0, 0) == MPI_SUCCESS);
    } else {
      EXPECT(MPIX_Stream_recv_c(&y, n, MPI_INT, peer, 3, comm, 0, 0, MPI_STATUS_IGNORE) ==
             MPI_SUCCESS);
      EXPECT(y == peer + 5);
    }
  }
  EXPECT(MPIX_Stream_progress(streams[1]) == MPI_SUCCESS);
  EXPECT(MPIX_Stream_progress(MPIX_STREAM_NULL) == MPI_SUCCESS);
  EXPECT(MPIX_Stop_progress_thread(streams[0]) == MPI_SUCCESS);

  EXPECT(MPI_Comm_free(&comm) == MPI_SUCCESS);
  for (int i = 0; i < 2; ++i) EXPECT(MPIX_Stream_free(&streams[i]) == MPI_SUCCESS);

  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  /* Left running: MPI_Finalize stops it. */
  EXPECT(MPIX_Start_progress_thread(MPIX_STREAM_NULL) == MPI_SUCCESS);
  MPI_Finalize();
  return worst ? 1 : 0;
}
