// The C++ consumer (scripts/consumers.sh): mpix.h from C++, MPI_Init_thread(FUNNELED), one
// enqueued allreduce on a host stream.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "mpix/mpix.h"

int main(int argc, char **argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool bad = provided != MPI_THREAD_FUNNELED;
  bad |= size < 2;  // run on 2 ranks: 1 would mean a launcher of another MPI library
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  bad |= MPIX_Stream_create(info, &stream) != MPI_SUCCESS;
  MPI_Info_free(&info);
  MPI_Comm comm = MPI_COMM_NULL;
  bad |= MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) != MPI_SUCCESS;
  std::vector<int> v(100, rank + 1), sum(100, 0);
  bad |= MPIX_Allreduce_enqueue(v.data(), sum.data(), 100, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
  bad |= MPIX_Stream_synchronize(stream) != MPI_SUCCESS;
  for (int s : sum) bad |= s != size * (size + 1) / 2;
  MPI_Comm_free(&comm);
  MPIX_Stream_free(&stream);
  int mine = bad, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("consumer (C++): %s\n", any ? "FAILED" : "ok");
  MPI_Finalize();
  return any;
}
