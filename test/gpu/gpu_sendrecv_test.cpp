// MPIX_Sendrecv_enqueue on CUDA streams, run once per trigger mode: a ring in every buffer
// placement with a kernel that writes the send buffer before the call and a kernel that checks
// the receive buffer after it, both on the stream (no host synchronisation in between), at
// sizes from 8 bytes to past the rendezvous limit; and a non-periodic shift (MPI_PROC_NULL).
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

TEST_CASE("Sendrecv ring on CUDA streams: kernel, Sendrecv, kernel in stream order",
          "[gpu][sendrecv]") {
  const int rank = world_rank(), size = world_size();
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  CudaStreamComm s;
  CUDA_REQUIRE(load_test_kernels());
  unsigned long long *counters = nullptr;  // [errors, checks]
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void **>(&counters), 2 * sizeof *counters));
  for (std::size_t bytes : {std::size_t{8}, std::size_t{64} << 10, std::size_t{4} << 20}) {
    for (Place place : all_places()) {
      INFO(bytes << " bytes, buffers: " << place_name(place) << ", trigger "
                 << trigger_under_test());
      GpuBuf out(place, bytes), in(place, bytes);
      CUDA_REQUIRE(cudaMemset(counters, 0, 2 * sizeof *counters));
      const int rounds = 3;
      for (int round = 0; round < rounds; ++round) {
        const uint32_t mine = static_cast<uint32_t>(1000 * round + rank);
        const uint32_t theirs = static_cast<uint32_t>(1000 * round + left);
        // Pageable host memory cannot be written by a kernel: filled from the host instead.
        if (place == Place::pageable) {
          s.sync();
          std::vector<unsigned char> v(bytes);
          for (std::size_t i = 0; i < bytes; ++i) v[i] = pattern_byte(mine, i);
          out.write(v);
        } else {
          CUDA_REQUIRE(fill_pattern(out.get(), bytes, mine, s.cs));
        }
        MPI_Status st;
        REQUIRE(MPIX_Sendrecv_enqueue(out.get(), static_cast<int>(bytes), MPI_BYTE, right, round,
                                      in.get(), static_cast<int>(bytes), MPI_BYTE, left, round,
                                      s.comm, &st) == MPI_SUCCESS);
        if (place == Place::pageable) {
          s.sync();
          auto got = in.read<unsigned char>(bytes);
          std::size_t bad = 0;
          for (std::size_t i = 0; i < bytes; ++i) bad += got[i] != pattern_byte(theirs, i);
          CHECK(bad == 0);
        } else {
          CUDA_REQUIRE(check_pattern(in.get(), bytes, theirs, &counters[0], &counters[1], s.cs));
        }
        s.sync();
        CHECK(st.MPI_SOURCE == left);
        CHECK(st.MPI_TAG == round);
      }
      if (place != Place::pageable) {
        unsigned long long host[2] = {1, 0};
        CUDA_REQUIRE(cudaMemcpy(host, counters, sizeof host, cudaMemcpyDeviceToHost));
        CHECK(host[0] == 0);
        CHECK(host[1] == static_cast<unsigned long long>(rounds));
      }
    }
  }
  cudaFree(counters);
}

TEST_CASE("Sendrecv shift with MPI_PROC_NULL ends on a CUDA stream", "[gpu][sendrecv]") {
  const int rank = world_rank(), size = world_size();
  const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  CudaStreamComm s;
  const int n = 256;
  GpuBuf out(Place::device, n * sizeof(int)), in(Place::device, n * sizeof(int));
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = rank * 1000 + i;
  out.write(v);
  in.write(std::vector<int>(n, -7));
  MPI_Status st;
  REQUIRE(MPIX_Sendrecv_enqueue(out.get(), n, MPI_INT, right, 5, in.get(), n, MPI_INT, left, 5,
                                s.comm, &st) == MPI_SUCCESS);
  s.sync();
  auto got = in.read<int>(n);
  if (left == MPI_PROC_NULL) {
    CHECK(got[0] == -7);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  } else {
    CHECK(got[0] == left * 1000);
    CHECK(got[n - 1] == left * 1000 + n - 1);
    CHECK(st.MPI_SOURCE == left);
  }
}
