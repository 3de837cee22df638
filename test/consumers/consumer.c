/* An out-of-tree program built against an installed mpix (scripts/consumers.sh), as a user's
 * code is: plain MPI_Init, a host stream, a ring of MPIX_Sendrecv_enqueue. Exits non-zero if
 * any rank received wrong data. */
#include <mpi.h>
#include <stdio.h>

#include "mpix/mpix.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, level = -1, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bad |= size < 2; /* run on 2 ranks: 1 would mean a launcher of another MPI library */
  /* mpix's MPI_Init won the symbol lookup: the library runs at MPI_THREAD_MULTIPLE. */
  PMPI_Query_thread(&level);
  bad |= level != MPI_THREAD_MULTIPLE;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Stream stream;
  bad |= MPIX_Stream_create(info, &stream) != MPI_SUCCESS;
  MPI_Info_free(&info);
  MPI_Comm comm;
  bad |= MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) != MPI_SUCCESS;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[64], in[64];
  for (int it = 0; it < 10 && !bad; ++it) {
    for (int i = 0; i < 64; ++i) out[i] = rank * 100000 + it * 64 + i;
    bad |= MPIX_Sendrecv_enqueue(out, 64, MPI_INT, right, it, in, 64, MPI_INT, left, it, comm,
                                 MPI_STATUS_IGNORE) != MPI_SUCCESS;
    bad |= MPIX_Stream_synchronize(stream) != MPI_SUCCESS;
    for (int i = 0; i < 64; ++i) bad |= in[i] != left * 100000 + it * 64 + i;
  }
  MPI_Comm_free(&comm);
  MPIX_Stream_free(&stream);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("consumer (C): %s\n", any ? "FAILED" : "ok");
  MPI_Finalize();
  return any;
}
