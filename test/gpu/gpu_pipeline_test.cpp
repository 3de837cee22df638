// A kernel fills a buffer, MPIX_Isend_enqueue sends it, the peer's MPIX_Recv_enqueue receives
// it and a checking kernel verifies it — many iterations queued with no host synchronisation
// between them, checked once at the end (errors and number of checks counted on the device).
// Sizes 1 B .. 64 MiB; 1,000 iterations up to 1 MiB, fewer above (MPIX_TEST_BIG_ITERS).
#include <cstdlib>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {

int iterations_for(std::size_t bytes) {
  if (bytes <= (1u << 20)) return 1000;
  const char *e = std::getenv("MPIX_TEST_BIG_ITERS");
  int big = e ? std::atoi(e) : 0;
  if (big > 0) return big;
  return bytes <= (4u << 20) ? 200 : 20;
}

void run(Place place) {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  const bool sender = rank % 2 == 0;
  CudaStreamComm s;
  GpuBuf counters(Place::device, 2 * sizeof(unsigned long long));
  auto *c = counters.as<unsigned long long>();
  for (std::size_t bytes : {std::size_t{1}, std::size_t{8}, std::size_t{1000}, std::size_t{65536},
                            std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{64} << 20}) {
    const int iters = iterations_for(bytes);
    INFO(place_name(place) << " buffers, " << bytes << " bytes x " << iters
                           << " iterations, trigger " << trigger_under_test());
    GpuBuf buf(place, bytes);
    CUDA_REQUIRE(cudaMemsetAsync(c, 0, 2 * sizeof(unsigned long long), s.cs));
    for (int it = 0; it < iters; ++it) {
      const uint32_t seed = static_cast<uint32_t>(it * 31 + bytes);
      if (sender) {
        CUDA_REQUIRE(fill_pattern(buf.get(), bytes, seed, s.cs));
        MPI_Request r;
        REQUIRE(MPIX_Isend_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, it % 32768, s.comm, &r) ==
                MPI_SUCCESS);
        // The next fill may only overwrite the buffer once the send is done with it.
        REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      } else {
        REQUIRE(MPIX_Recv_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, it % 32768, s.comm,
                                  MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CUDA_REQUIRE(check_pattern(buf.get(), bytes, seed, c, c + 1, s.cs));
      }
    }
    s.sync();
    if (!sender) {
      auto res = counters.read<unsigned long long>(2);
      CHECK(res[0] == 0);                                       // bytes wrong
      CHECK(res[1] == static_cast<unsigned long long>(iters));  // checks that ran
    }
  }
}

}  // namespace

TEST_CASE("kernel -> Isend_enqueue -> Recv_enqueue -> check kernel, device buffers",
          "[gpu][pipeline]") {
  run(Place::device);
}

TEST_CASE("kernel -> Isend_enqueue -> Recv_enqueue -> check kernel, pinned host buffers",
          "[gpu][pipeline]") {
  run(Place::pinned);
}
