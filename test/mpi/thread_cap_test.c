/* MPI without MPI_THREAD_MULTIPLE, which mpix's agent thread needs: every mpix call that needs
 * the runtime returns MPI_ERR_OTHER, none hangs or crashes, and plain MPI and host streams keep
 * working. Two builds of this file:
 *  - MPIX_TEST_CAP_THREAD_LEVEL: a library that cannot give MPI_THREAD_MULTIPLE, simulated by
 *    interposing PMPI_Init_thread / PMPI_Query_thread in the executable (it comes first in the
 *    dynamic linker's search order, so mpix's MPI_Init wrapper calls these), which call the real
 *    ones and answer MPI_THREAD_SERIALIZED. mpix's MPI_Init_thread then reports SERIALIZED.
 *  - otherwise: libmpi linked before libmpix, so libmpi's MPI_Init wins over mpix's wrapper and
 *    MPI runs at the level the application asked for (MPI_THREAD_SINGLE).
 * Written in C, so it also checks that mpix.h is a plain C header. Prints "N passed, N failed". */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

#ifdef MPIX_TEST_CAP_THREAD_LEVEL
#define CAPPED_LEVEL MPI_THREAD_SERIALIZED

static void *real(const char *name) {
  void *fn = dlsym(RTLD_NEXT, name);
  if (!fn) {
    fprintf(stderr, "thread_cap_test: %s not found after the executable\n", name);
    abort();
  }
  return fn;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int (*fn)(int *, char ***, int, int *) =
      (int (*)(int *, char ***, int, int *))real("PMPI_Init_thread");
  int rc = fn(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && *provided > CAPPED_LEVEL) *provided = CAPPED_LEVEL;
  return rc;
}

int PMPI_Query_thread(int *provided) {
  int (*fn)(int *) = (int (*)(int *))real("PMPI_Query_thread");
  int rc = fn(provided);
  if (rc == MPI_SUCCESS && *provided > CAPPED_LEVEL) *provided = CAPPED_LEVEL;
  return rc;
}
#endif

static int passed, failed;

static void expect_class(int rc, int want, const char *what, int rank) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (cls == want) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "rank %d: %s returned class %d, expected %d\n", rank, what, cls, want);
  }
}

#define EXPECT(call, want) expect_class((call), (want), #call, rank)

int main(int argc, char **argv) {
  int rank = 0, size = 0, provided = -1;
#ifdef MPIX_TEST_CAP_THREAD_LEVEL
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#else
  MPI_Init(&argc, &argv);
#endif
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Errors must come back, not abort: mpix invokes the communicator's error handler. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#ifdef MPIX_TEST_CAP_THREAD_LEVEL
  /* What the library gave, and MPI_Query_thread agrees. */
  if (provided == CAPPED_LEVEL) ++passed;
  else ++failed;
  provided = -1;
  MPI_Query_thread(&provided);
  if (provided == CAPPED_LEVEL) ++passed;
  else ++failed;
#else
  MPI_Query_thread(&provided);
  if (provided == MPI_THREAD_MULTIPLE) {
    /* Some MPI builds always give MULTIPLE; then there is nothing to test. */
    if (rank == 0) printf("MPI_Init gave MPI_THREAD_MULTIPLE: nothing to test (skipped)\n");
    MPI_Finalize();
    return 0;
  }
#endif

  int buf[4] = {1, 2, 3, 4}, sum[4];
  MPI_Request req = MPI_REQUEST_NULL;
  MPIX_Stream stream = MPIX_STREAM_NULL, got = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  const int peer = (rank + 1) % size;

  EXPECT(MPIX_Stream_create(MPI_INFO_NULL, &stream), MPI_ERR_OTHER);

  MPI_Info info;
  MPI_Info_create(&info);
  mpix_host_stream_t hs = NULL;
  /* Host streams need no MPI at all and still work. */
  EXPECT(mpix_host_stream_create(&hs), MPI_SUCCESS);
  MPI_Info_set(info, "type", "mpix_host_stream");
  /* Setting an info value is local and needs no mpix runtime. */
  EXPECT(MPIX_Info_set_hex(info, "value", &hs, (int)sizeof hs), MPI_SUCCESS);
  EXPECT(MPIX_Stream_create(info, &stream), MPI_ERR_OTHER);
  MPI_Info_free(&info);
  if (stream != MPIX_STREAM_NULL) ++failed;

  EXPECT(MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &comm), MPI_ERR_OTHER);
  if (comm != MPI_COMM_NULL) ++failed;
  EXPECT(MPIX_Comm_get_stream(MPI_COMM_WORLD, 0, &got), MPI_ERR_OTHER);
  EXPECT(MPIX_Send_enqueue(buf, 4, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_OTHER);
  EXPECT(MPIX_Recv_enqueue(buf, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
         MPI_ERR_OTHER);
  EXPECT(MPIX_Isend_enqueue(buf, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_OTHER);
  EXPECT(MPIX_Irecv_enqueue(buf, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_OTHER);
  EXPECT(MPIX_Allreduce_enqueue(buf, sum, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OTHER);
  if (req != MPI_REQUEST_NULL) ++failed;

  /* The host stream runs work; plain MPI works. */
  EXPECT(mpix_host_stream_synchronize(hs), MPI_SUCCESS);
  EXPECT(mpix_host_stream_destroy(&hs), MPI_SUCCESS);
  int one = 1, total = 0;
  EXPECT(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  if (total != size) ++failed;

  /* A failure on any rank fails the program on every rank. */
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return worst ? 1 : 0;
}
