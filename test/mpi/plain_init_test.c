/* A code that initialises MPI as most codes do, unchanged: plain MPI_Init (no argument), or
 * MPI_Init_thread asking for the level named by argv[1] ("funneled", "serialized", "single",
 * "multiple"). mpix's MPI_Init wrappers ask the library for MPI_THREAD_MULTIPLE and report the
 * level asked for; the enqueue ping-pong on a host stream then works. Written in C, so it also
 * checks that mpix.h is a plain C header. Prints "N passed, N failed". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpix/mpix.h"

static int passed, failed, rank;

static void expect(int ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "rank %d: failed: %s\n", rank, what);
  }
}

#define EXPECT(cond) expect((cond), #cond)
#define EXPECT_OK(call) expect((call) == MPI_SUCCESS, #call)

static int level_named(const char *name) {
  if (strcmp(name, "single") == 0) return MPI_THREAD_SINGLE;
  if (strcmp(name, "funneled") == 0) return MPI_THREAD_FUNNELED;
  if (strcmp(name, "serialized") == 0) return MPI_THREAD_SERIALIZED;
  return MPI_THREAD_MULTIPLE;
}

/* Pairs (0,1), (2,3), ...: even ranks send i*it+1.., odd ranks add 1 and send back. */
static void pingpong(MPI_Comm comm, MPIX_Stream stream, int peer) {
  enum { N = 257, ITERS = 50 };
  int buf[N];
  for (int it = 0; it < ITERS; ++it) {
    if (rank % 2 == 0) {
      for (int i = 0; i < N; ++i) buf[i] = it * N + i;
      EXPECT_OK(MPIX_Send_enqueue(buf, N, MPI_INT, peer, 1, comm));
      EXPECT_OK(MPIX_Recv_enqueue(buf, N, MPI_INT, peer, 2, comm, MPI_STATUS_IGNORE));
      EXPECT_OK(MPIX_Stream_synchronize(stream));
      int ok = 1;
      for (int i = 0; i < N; ++i) ok &= buf[i] == it * N + i + 1;
      EXPECT(ok);
    } else {
      MPI_Request r[2];
      EXPECT_OK(MPIX_Irecv_enqueue(buf, N, MPI_INT, peer, 1, comm, &r[0]));
      EXPECT_OK(MPIX_Waitall_enqueue(1, r, MPI_STATUSES_IGNORE));
      EXPECT_OK(MPIX_Stream_synchronize(stream));
      for (int i = 0; i < N; ++i) buf[i] += 1;
      EXPECT_OK(MPIX_Isend_enqueue(buf, N, MPI_INT, peer, 2, comm, &r[1]));
      EXPECT_OK(MPIX_Wait_enqueue(&r[1], MPI_STATUS_IGNORE));
      EXPECT_OK(MPIX_Stream_synchronize(stream));
    }
  }
}

int main(int argc, char **argv) {
  int size = 0, provided = -1, want = MPI_THREAD_SINGLE;
  if (argc > 1) {
    want = level_named(argv[1]);
    EXPECT_OK(MPI_Init_thread(&argc, &argv, want, &provided));
    /* The level asked for: the library was asked for MULTIPLE, which covers every level. */
    EXPECT(provided == want);
  } else {
    EXPECT_OK(MPI_Init(&argc, &argv));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int level = -1, main_thread = 0;
  EXPECT_OK(MPI_Query_thread(&level));
  EXPECT(level == want);
  EXPECT_OK(MPI_Is_thread_main(&main_thread));
  EXPECT(main_thread);
  /* ... while the library itself runs at MPI_THREAD_MULTIPLE, which mpix's agent needs. */
  EXPECT_OK(PMPI_Query_thread(&level));
  EXPECT(level == MPI_THREAD_MULTIPLE);

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream"); /* no "value": mpix makes the host stream */
  MPIX_Stream stream = MPIX_STREAM_NULL;
  EXPECT_OK(MPIX_Stream_create(info, &stream));
  MPI_Info_free(&info);
  MPI_Comm comm = MPI_COMM_NULL;
  EXPECT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm));
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if ((rank ^ 1) < size) pingpong(comm, stream, rank ^ 1);
    int one = 1, total = 0;
    EXPECT_OK(MPIX_Allreduce_enqueue(&one, &total, 1, MPI_INT, MPI_SUM, comm));
    EXPECT_OK(MPIX_Stream_synchronize(stream));
    EXPECT(total == size);
    EXPECT_OK(MPI_Comm_free(&comm));
  }
  EXPECT_OK(MPIX_Stream_free(&stream));

  /* A failure on any rank fails the program on every rank. */
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return worst ? 1 : 0;
}
