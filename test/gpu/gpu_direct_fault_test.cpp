// GPU-direct (same-node CUDA IPC, providers/mpi/ipc_path.hpp): a receive that fails after its
// agent matched the sender's header still answers the sender, whose send completes then (it
// completes on that answer, not on anything its own side does). The failure is injected
// (core/fault.hpp, an internal test hook: this program links mpix's objects, not libmpix) as
// the receiving agent starts the copy: the receive reports it, the send succeeds, and the next
// message on the same path arrives whole. Plain and announced sends
// (MPIX_GPU_DIRECT_ANNOUNCE, set by the CTest entry).
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstring>

#include "catch.hpp"
#include "core/fault.hpp"
#include "gpu_util.hpp"
#include "mpix/mpix.h"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

TEST_CASE("GPU-direct: a receive that fails after matching its header still releases the send") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  const int peer = 1 - world_rank();
  const std::size_t n = 64 * 1024;  // ints: 256 KiB, past the eager limit (GPU-direct)
  GpuBuf dbuf(Place::device, n * sizeof(int));
  GpuBuf hbuf(Place::pinned, n * sizeof(int));  // the agent copies into pinned memory
  bool fired = false;
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round << (round == 0 ? " (the receive fails)" : " (the path again)"));
    const int value = 500 + round;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    st.MPI_ERROR = -1;
    if (world_rank() == 0) {
      CUDA_REQUIRE(slow_write(dbuf.as<int>(), n, value, 0, sc.cs));
      REQUIRE(MPIX_Isend_enqueue(dbuf.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      // Without the answer this synchronize never returns (the watchdog names it).
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
      CHECK(st.MPI_ERROR == MPI_SUCCESS);
    } else {
      if (round == 0) mpix::fault_arm_direct_recv(1);
      std::memset(hbuf.get(), 0, n * sizeof(int));
      REQUIRE(MPIX_Irecv_enqueue(hbuf.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
      if (round == 0) {
        fired = mpix::fault_direct_recv_fired();
        mpix::fault_arm_direct_recv(0);
        if (fired) {
          CHECK(error_class(st.MPI_ERROR) == MPI_ERR_OTHER);
        } else {
          WARN("this pair did not go GPU-direct (mpix_info says why); nothing was injected");
        }
      } else {
        CHECK(st.MPI_ERROR == MPI_SUCCESS);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) bad += hbuf.as<int>()[i] != value;
        CHECK(bad == 0);
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == static_cast<int>(n));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
