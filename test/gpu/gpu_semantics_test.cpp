// Stream-order semantics on CUDA streams: a receive never lands before the stream reaches it,
// a send never reads before earlier kernels have written, and freeing a stream or a stream
// communicator with ops pending fails at once instead of hanging.
#include <chrono>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {
constexpr int kOld = -7, kNew = 4242;
constexpr uint64_t kSlowNs = 200 * 1000 * 1000;  // 200 ms: far longer than the message takes
}  // namespace

TEST_CASE("a receive never lands while an earlier kernel still reads the buffer", "[gpu][order]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t n = 1024;
  for (Place place : {Place::device, Place::pinned, Place::managed}) {
    INFO(place_name(place) << " buffers, trigger " << trigger_under_test());
    GpuBuf buf(place, n * sizeof(int)), seen(Place::device, 2 * sizeof(int));
    buf.write(std::vector<int>(n, kOld));
    if (rank % 2) {
      CUDA_REQUIRE(slow_read(buf.as<int>(), n, kSlowNs, seen.as<int>(), s.cs));
      REQUIRE(MPIX_Recv_enqueue(buf.get(), (int)n, MPI_INT, peer, 1, s.comm, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      MPI_Barrier(MPI_COMM_WORLD);  // the peer sends now, while the kernel still reads
      s.sync();
      auto sn = seen.read<int>(2);
      CHECK(sn[0] == kOld);
      CHECK(sn[1] == kOld);
      auto got = buf.read<int>(n);
      CHECK(got[0] == kNew);
      CHECK(got[n - 1] == kNew);
    } else {
      buf.write(std::vector<int>(n, kNew));
      MPI_Barrier(MPI_COMM_WORLD);
      REQUIRE(MPIX_Send_enqueue(buf.get(), (int)n, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
      s.sync();
    }
  }
}

TEST_CASE("a send never reads the buffer before earlier kernels have written it", "[gpu][order]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t n = 1 << 16;
  for (Place place : {Place::device, Place::pinned, Place::managed}) {
    INFO(place_name(place) << " buffers, trigger " << trigger_under_test());
    GpuBuf buf(place, n * sizeof(int));
    buf.write(std::vector<int>(n, kOld));
    if (rank % 2 == 0) {
      CUDA_REQUIRE(slow_write(buf.as<int>(), n, kNew, kSlowNs / 2, s.cs));
      MPI_Request r;
      REQUIRE(MPIX_Isend_enqueue(buf.get(), (int)n, MPI_INT, peer, 2, s.comm, &r) == MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      s.sync();
    } else {
      REQUIRE(MPIX_Recv_enqueue(buf.get(), (int)n, MPI_INT, peer, 2, s.comm, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      s.sync();
      auto got = buf.read<int>(n);
      int old = 0;
      for (int v : got) old += v != kNew;
      CHECK(old == 0);
    }
  }
}

TEST_CASE("freeing a CUDA stream or its communicator with ops pending is an error, not a hang",
          "[gpu][free]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  GpuBuf buf(Place::device, sizeof(int));
  buf.write(std::vector<int>{rank});
  if (rank % 2) {
    MPI_Request r;
    REQUIRE(MPIX_Irecv_enqueue(buf.get(), 1, MPI_INT, peer, 77, s.comm, &r) == MPI_SUCCESS);
    auto t0 = std::chrono::steady_clock::now();
    MPIX_Stream keep = s.stream;
    int rc = MPIX_Stream_free(&keep);
    CHECK(error_class(rc) == MPI_ERR_PENDING);
    CHECK(keep == s.stream);  // still live
    MPI_Comm c = s.comm;
    CHECK(error_class(MPI_Comm_free(&c)) == MPI_ERR_PENDING);
    CHECK(c == s.comm);  // not freed
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(secs < 5.0);
    MPI_Barrier(MPI_COMM_WORLD);  // now the peer sends
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    CHECK(buf.read<int>(1)[0] == peer);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    REQUIRE(MPIX_Send_enqueue(buf.get(), 1, MPI_INT, peer, 77, s.comm) == MPI_SUCCESS);
    s.sync();
  }
  // Everything completed: the fixture's frees must succeed now.
}
