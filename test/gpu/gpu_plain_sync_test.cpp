// Plain MPI calls on a CUDA-stream communicator, and MPIX_Stream_send on a multiplex
// communicator of a CUDA stream, run after the stream's earlier work (MPICH's order; the
// stream is synchronised first): a slow kernel writes the send buffer, the host then calls
// MPI_Send / MPI_Allreduce / MPIX_Stream_send at once, and the peer must see what the kernel
// wrote. Pinned host buffers (the MPI library here is not CUDA-aware).
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {
constexpr int kOld = -7, kNew = 4242;
constexpr uint64_t kSlowNs = 100 * 1000 * 1000;  // 100 ms: far longer than a message takes
}  // namespace

TEST_CASE("MPI_Send and MPI_Allreduce on a CUDA-stream communicator wait for the stream",
          "[gpu][plain]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  const std::size_t n = 4096;
  GpuBuf buf(Place::pinned, n * sizeof(int)), in(Place::pinned, n * sizeof(int));
  buf.write(std::vector<int>(n, kOld));
  if (rank < size - size % 2) {
    const int peer = rank ^ 1;
    if (rank % 2 == 0) {
      CUDA_REQUIRE(slow_write(buf.as<int>(), n, kNew, kSlowNs, s.cs));
      REQUIRE(MPI_Send(buf.get(), (int)n, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
    } else {
      REQUIRE(MPI_Recv(in.get(), (int)n, MPI_INT, peer, 1, s.comm, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      auto got = in.read<int>(n);
      CHECK(got[0] == kNew);
      CHECK(got[n - 1] == kNew);
    }
  }
  // Every rank's kernel writes rank + 1; the allreduce reads only after it.
  CUDA_REQUIRE(slow_write(buf.as<int>(), n, rank + 1, kSlowNs, s.cs));
  REQUIRE(MPI_Allreduce(MPI_IN_PLACE, buf.get(), (int)n, MPI_INT, MPI_SUM, s.comm) == MPI_SUCCESS);
  auto sum = buf.read<int>(n);
  CHECK(sum[0] == size * (size + 1) / 2);
  CHECK(sum[n - 1] == size * (size + 1) / 2);
}

TEST_CASE("MPIX_Stream_send from a CUDA stream of a multiplex communicator waits for it",
          "[gpu][multiplex]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;  // its stream, also on a multiplex communicator
  MPI_Comm mc = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, 1, &s.stream, &mc) == MPI_SUCCESS);
  const std::size_t n = 4096;
  GpuBuf buf(Place::pinned, n * sizeof(int));
  buf.write(std::vector<int>(n, kOld));
  if (rank < size - size % 2) {
    const int peer = rank ^ 1;
    if (rank % 2 == 0) {
      CUDA_REQUIRE(slow_write(buf.as<int>(), n, kNew, kSlowNs, s.cs));
      REQUIRE(MPIX_Stream_send(buf.get(), (int)n, MPI_INT, peer, 1, mc, 0, 0) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Stream_recv(buf.get(), (int)n, MPI_INT, peer, 1, mc, 0, 0, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      auto got = buf.read<int>(n);
      CHECK(got[0] == kNew);
      CHECK(got[n - 1] == kNew);
    }
  }
  REQUIRE(MPI_Comm_free(&mc) == MPI_SUCCESS);
}
