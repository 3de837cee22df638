// Chunked staging (MPIX_STAGING_CHUNK; CTest sets it) with device buffers: a kernel fills the
// send buffer, MPIX_Isend_enqueue sends it in pieces, the peer's receive (longer than the
// message) gets exactly the message, for 1 B .. 64 MiB; wildcard receives keep MPI's order
// across chunked and plain messages; a too-short receive reports MPI_ERR_TRUNCATE.
#include <cstdlib>
#include <memory>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {

constexpr unsigned char kSentinel = 0xA5;

std::size_t chunk_setting() {
  const char *c = std::getenv("MPIX_STAGING_CHUNK");
  return c && *c ? static_cast<std::size_t>(std::atol(c)) : 0;
}

}  // namespace

TEST_CASE("chunked device messages 1 B .. 64 MiB arrive intact and nothing past them changes",
          "[gpu][chunk]") {
  const int rank = world_rank(), size = world_size();
  const std::size_t C = chunk_setting();
  REQUIRE(C > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t extra = 4097;
  std::vector<std::size_t> sizes = {1, 4096, C - 1, C, C + 1, 2 * C + 32, 5 * C + 3};
  for (std::size_t m = 64 * 1024; m <= (64u << 20); m *= 4) sizes.push_back(m);
  GpuBuf out(Place::device, (64u << 20)), in(Place::device, (64u << 20) + extra);
  for (std::size_t m : sizes) {
    INFO(m << "-byte message, chunk " << C << ", trigger " << trigger_under_test());
    const uint32_t seed = static_cast<uint32_t>(m + rank);
    CUDA_REQUIRE(cudaMemsetAsync(in.get(), kSentinel, m + extra, s.cs));
    CUDA_REQUIRE(fill_pattern(out.get(), m, seed, s.cs));
    MPI_Request r[2];
    MPI_Status st[2];
    REQUIRE(MPIX_Irecv_enqueue(in.get(), static_cast<int>(m + extra), MPI_BYTE, peer, 2, s.comm,
                               &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.get(), static_cast<int>(m), MPI_BYTE, peer, 2, s.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
    s.sync();
    int count = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    CHECK(count == static_cast<int>(m));
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
    auto got = in.read<unsigned char>(m + extra);
    std::size_t bad = 0, clobbered = 0;
    const uint32_t peer_seed = static_cast<uint32_t>(m + peer);
    for (std::size_t i = 0; i < m; ++i) bad += got[i] != pattern_byte(peer_seed, i);
    for (std::size_t i = m; i < m + extra; ++i) clobbered += got[i] != kSentinel;
    CHECK(bad == 0);
    CHECK(clobbered == 0);
  }
}

TEST_CASE("ANY_TAG device receives take chunked and plain messages in send order",
          "[gpu][chunk][matching]") {
  const int rank = world_rank(), size = world_size();
  const std::size_t C = chunk_setting();
  REQUIRE(C > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::vector<std::size_t> sizes = {3 * C + 5, 10, 2 * C, C, 1};
  const std::size_t cap = 4 * C;
  std::vector<std::unique_ptr<GpuBuf>> bufs;
  for (std::size_t k = 0; k < sizes.size(); ++k) bufs.emplace_back(new GpuBuf(Place::device, cap));
  std::vector<MPI_Request> r(sizes.size());
  std::vector<MPI_Status> st(sizes.size());
  if (rank % 2 == 0) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      CUDA_REQUIRE(fill_pattern(bufs[k]->get(), sizes[k], static_cast<uint32_t>(70 + k), s.cs));
      REQUIRE(MPIX_Isend_enqueue(bufs[k]->get(), static_cast<int>(sizes[k]), MPI_BYTE, peer,
                                 static_cast<int>(k), s.comm, &r[k]) == MPI_SUCCESS);
    }
  } else {
    for (std::size_t k = 0; k < sizes.size(); ++k)
      REQUIRE(MPIX_Irecv_enqueue(bufs[k]->get(), static_cast<int>(cap), MPI_BYTE, peer, MPI_ANY_TAG,
                                 s.comm, &r[k]) == MPI_SUCCESS);
  }
  REQUIRE(MPIX_Waitall_enqueue(static_cast<int>(r.size()), r.data(), st.data()) == MPI_SUCCESS);
  s.sync();
  if (rank % 2 == 0) return;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    INFO("receive " << k);
    CHECK(st[k].MPI_TAG == static_cast<int>(k));
    auto got = bufs[k]->read<unsigned char>(sizes[k]);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < sizes[k]; ++i) bad += got[i] != pattern_byte(70 + k, i);
    CHECK(bad == 0);
  }
}

TEST_CASE("a device receive too short for a chunked message reports MPI_ERR_TRUNCATE",
          "[gpu][chunk][truncate]") {
  const int rank = world_rank(), size = world_size();
  const std::size_t C = chunk_setting();
  REQUIRE(C > 0);
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  CudaStreamComm s;
  const std::size_t m = 3 * C + 1;
  GpuBuf buf(Place::device, m);
  MPI_Status st;
  if (rank % 2 == 0) {
    CUDA_REQUIRE(fill_pattern(buf.get(), m, 3, s.cs));
    REQUIRE(MPIX_Send_enqueue(buf.get(), static_cast<int>(m), MPI_BYTE, peer, 4, s.comm) ==
            MPI_SUCCESS);
  } else {
    REQUIRE(MPIX_Recv_enqueue(buf.get(), static_cast<int>(2 * C), MPI_BYTE, peer, 4, s.comm, &st) ==
            MPI_SUCCESS);
  }
  s.sync();
  if (rank % 2) CHECK(error_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE);
}
