// GPU-direct (same-node CUDA IPC, providers/mpi/ipc_path.hpp) between ranks of one node:
// buffers freed and re-made at the same address between sends, offsets into allocations,
// truncation, zero bytes, managed memory (staged), ANY_SOURCE over a GPU-direct and a staged
// peer (3 ranks; rank 2 turns GPU-direct off), 10,000 rounds without host synchronisation,
// announced sends (written late; never overtaking an earlier send; many waiting at once), and
// sends completed on the GPU (the send buffer rewritten right after the wait).
// The other GPU suites (p2p, semantics, pipeline, datatype) run on this path too by default.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "gpu_util.hpp"
#include "mpix/mpix.h"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {

// The message of a round, filled into and checked in device memory by kernels.
void fill(void *p, std::size_t n, uint32_t seed, cudaStream_t s) {
  CUDA_REQUIRE(fill_pattern(p, n, seed, s));
}

unsigned long long check(const void *p, std::size_t n, uint32_t seed, cudaStream_t s) {
  GpuBuf counts(Place::device, 2 * sizeof(unsigned long long));
  CUDA_REQUIRE(cudaMemsetAsync(counts.get(), 0, 2 * sizeof(unsigned long long), s));
  auto *c = counts.as<unsigned long long>();
  CUDA_REQUIRE(check_pattern(p, n, seed, c, c + 1, s));
  CUDA_REQUIRE(cudaStreamSynchronize(s));
  auto v = counts.read<unsigned long long>(2);
  REQUIRE(v[1] == 1);  // the check kernel ran
  return v[0];
}

// How many of the @p n ints at @p p (device memory) differ from @p value, after @p s's work.
unsigned long long differ(const void *p, std::size_t n, int value, cudaStream_t s) {
  GpuBuf counts(Place::device, 2 * sizeof(unsigned long long));
  CUDA_REQUIRE(cudaMemsetAsync(counts.get(), 0, 2 * sizeof(unsigned long long), s));
  auto *c = counts.as<unsigned long long>();
  CUDA_REQUIRE(check_ints(static_cast<const int *>(p), n, value, 0, c, c + 1, s));
  CUDA_REQUIRE(cudaStreamSynchronize(s));
  auto v = counts.read<unsigned long long>(2);
  REQUIRE(v[1] == 1);
  return v[0];
}

}  // namespace

// A GPU-direct send is announced to its receiver when it is enqueued (MPIX_GPU_DIRECT_ANNOUNCE,
// providers/mpi/ipc_path.hpp): here its stream writes the data 20 ms later, long after the
// receiver matched the header. Every way the receiver copies must wait for the data: the
// receiving stream's copy (a device receive whose wait is queued), the receiver's agent (a
// pinned host receive), and the agent again where the host completes the request (MPI_Wait).
TEST_CASE("GPU-direct: a send announced before its data is written is copied once it is") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  const std::size_t n = 64 * 1024;  // ints: 256 KiB, past the eager limit
  const uint64_t delay_ns = 20 * 1000 * 1000;
  GpuBuf dbuf(Place::device, n * sizeof(int));
  GpuBuf hbuf(Place::pinned, n * sizeof(int));
  const char *forms[] = {"the receiving stream copies", "the agent copies (host buffer)",
                         "the agent copies (host MPI_Wait)"};
  for (int form = 0; form < 3; ++form) {
    INFO(forms[form]);
    const int value = 1000 + form;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    if (world_rank() == 0) {
      CUDA_REQUIRE(slow_write(dbuf.as<int>(), n, value, delay_ns, sc.cs));
      REQUIRE(MPIX_Isend_enqueue(dbuf.get(), static_cast<int>(n), MPI_INT, peer, 7, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    } else if (form == 1) {
      std::memset(hbuf.get(), 0, n * sizeof(int));
      REQUIRE(MPIX_Irecv_enqueue(hbuf.get(), static_cast<int>(n), MPI_INT, peer, 7, sc.comm, &r) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) bad += hbuf.as<int>()[i] != value;
      CHECK(bad == 0);
    } else {
      CUDA_REQUIRE(cudaMemsetAsync(dbuf.get(), 0, n * sizeof(int), sc.cs));
      REQUIRE(MPIX_Irecv_enqueue(dbuf.get(), static_cast<int>(n), MPI_INT, peer, 7, sc.comm, &r) ==
              MPI_SUCCESS);
      if (form == 0) REQUIRE(MPIX_Wait_enqueue(&r, &st) == MPI_SUCCESS);
      else REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
      CHECK(differ(dbuf.get(), n, value, sc.cs) == 0);
    }
    if (world_rank() == 1) {
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK(count == static_cast<int>(n));
      CHECK(st.MPI_SOURCE == peer);
      CHECK(st.MPI_TAG == 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// A receive of an announced send is copied by its stream once the sender's data is in place;
// until then it may hold only a few threads of the GPU. Here twelve streams each receive 16 MiB
// announced before the kernels that write them have started (the sender's streams wait for a
// sleeping host function first). Were each receive's copy grid (256 blocks) to wait on the GPU,
// the twelve would fill it, and the sender's kernels — under MPS on this very GPU — would never
// find room to run.
TEST_CASE(
    "GPU-direct: receives waiting for announced data leave the GPU to the kernels that "
    "write it") {
  if (world_size() < 2 || world_rank() > 1) return;
  constexpr int kStreams = 12;
  const std::size_t n = std::size_t{16} << 20;
  const int peer = 1 - world_rank();
  std::vector<std::unique_ptr<CudaStreamComm>> sc;
  std::vector<std::unique_ptr<GpuBuf>> bufs;
  for (int k = 0; k < kStreams; ++k) {
    sc.push_back(std::make_unique<CudaStreamComm>());
    bufs.push_back(std::make_unique<GpuBuf>(Place::device, n));
  }
  // The sender's fills wait for one host function that sleeps 100 ms (host functions of a
  // process run one at a time: one sleep for all streams).
  cudaStream_t hold = nullptr;
  cudaEvent_t held = nullptr;
  CUDA_REQUIRE(cudaStreamCreateWithFlags(&hold, cudaStreamNonBlocking));
  CUDA_REQUIRE(cudaEventCreateWithFlags(&held, cudaEventDisableTiming));
  if (world_rank() == 0) {
    CUDA_REQUIRE(cudaLaunchHostFunc(
        hold, [](void *) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); },
        nullptr));
    CUDA_REQUIRE(cudaEventRecord(held, hold));
  }
  for (int k = 0; k < kStreams; ++k) {
    CudaStreamComm &c = *sc[static_cast<std::size_t>(k)];
    void *b = bufs[static_cast<std::size_t>(k)]->get();
    MPI_Request r = MPI_REQUEST_NULL;
    if (world_rank() == 0) {
      CUDA_REQUIRE(cudaStreamWaitEvent(c.cs, held, 0));
      fill(b, n, static_cast<uint32_t>(500 + k), c.cs);
      REQUIRE(MPIX_Isend_enqueue(b, static_cast<int>(n), MPI_BYTE, peer, 11, c.comm, &r) ==
              MPI_SUCCESS);
    } else {
      CUDA_REQUIRE(cudaMemsetAsync(b, 0, n, c.cs));
      REQUIRE(MPIX_Irecv_enqueue(b, static_cast<int>(n), MPI_BYTE, peer, 11, c.comm, &r) ==
              MPI_SUCCESS);
    }
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  for (auto &c : sc) c->sync();
  if (world_rank() == 1)
    for (int k = 0; k < kStreams; ++k)
      CHECK(check(bufs[static_cast<std::size_t>(k)]->get(), n, static_cast<uint32_t>(500 + k),
                  sc[static_cast<std::size_t>(k)]->cs) == 0);
  CUDA_REQUIRE(cudaStreamSynchronize(hold));
  CUDA_REQUIRE(cudaEventDestroy(held));
  CUDA_REQUIRE(cudaStreamDestroy(hold));
  MPI_Barrier(MPI_COMM_WORLD);
}

// A send is announced only where no earlier send to that peer on that communicator still waits
// for its stream: a small (eager, staged) send held back by a slow kernel, then a GPU-direct
// one with the same tag, arrive in that order.
TEST_CASE("GPU-direct: an announced send never overtakes an earlier send to the same peer") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  const std::size_t n = 64 * 1024, small = 16;
  GpuBuf a(Place::device, n * sizeof(int)), b(Place::device, n * sizeof(int));
  if (world_rank() == 0) {
    CUDA_REQUIRE(slow_write(a.as<int>(), small, 5, 20 * 1000 * 1000, sc.cs));
    CUDA_REQUIRE(slow_write(b.as<int>(), n, 6, 0, sc.cs));
    MPI_Request r[2];
    REQUIRE(MPIX_Isend_enqueue(a.get(), static_cast<int>(small), MPI_INT, peer, 3, sc.comm,
                               &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(b.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  } else {
    MPI_Request r[2];
    MPI_Status st[2];
    REQUIRE(MPIX_Irecv_enqueue(a.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(b.get(), static_cast<int>(n), MPI_INT, peer, 3, sc.comm, &r[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    int count = -1;
    MPI_Get_count(&st[0], MPI_INT, &count);
    CHECK(count == static_cast<int>(small));
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == static_cast<int>(n));
    CHECK(differ(a.get(), small, 5, sc.cs) == 0);
    CHECK(differ(b.get(), n, 6, sc.cs) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("GPU-direct: a buffer freed and re-made at the same address is not sent stale") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  const std::size_t n = 1 << 20;
  void *first = nullptr;
  int same_address = 0;
  for (uint32_t round = 0; round < 6; ++round) {
    GpuBuf buf(Place::device, n);
    if (round == 0) first = buf.get();
    else if (buf.get() == first) ++same_address;
    if (world_rank() == 0) {
      fill(buf.get(), n, 100 + round, sc.cs);
      REQUIRE(MPIX_Send_enqueue(buf.get(), static_cast<int>(n), MPI_BYTE, peer, 5, sc.comm) ==
              MPI_SUCCESS);
    } else {
      CUDA_REQUIRE(cudaMemsetAsync(buf.get(), 0, n, sc.cs));
      REQUIRE(MPIX_Recv_enqueue(buf.get(), static_cast<int>(n), MPI_BYTE, peer, 5, sc.comm,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(check(buf.get(), n, 100 + round, sc.cs) == 0);
    }
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // both freed before the next round allocates
  }
  // The CUDA allocator hands the same address back as a rule: say so if it did not, since the
  // test then checked less than it means to.
  if (same_address == 0) WARN("the allocator never reused the address");
}

TEST_CASE("GPU-direct: offsets into allocations, both sides") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  GpuBuf buf(Place::device, 3 << 20);
  char *base = buf.as<char>();
  const std::size_t offs[] = {0, 1, 7, 4096, 65537, 1 << 20};
  const std::size_t lens[] = {1, 8, 1000, 65536, 1 << 20};
  uint32_t seed = 1;
  for (std::size_t so : offs)
    for (std::size_t len : lens) {
      const std::size_t ro = (so * 3 + 5) % (1 << 20);
      if (world_rank() == 0) {
        fill(base + so, len, seed, sc.cs);
        REQUIRE(MPIX_Send_enqueue(base + so, static_cast<int>(len), MPI_BYTE, peer, 6, sc.comm) ==
                MPI_SUCCESS);
        REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
      } else {
        CUDA_REQUIRE(cudaMemsetAsync(base, 0, 3 << 20, sc.cs));
        MPI_Status st;
        REQUIRE(MPIX_Recv_enqueue(base + ro, static_cast<int>(len), MPI_BYTE, peer, 6, sc.comm,
                                  &st) == MPI_SUCCESS);
        INFO("send offset " << so << ", receive offset " << ro << ", " << len << " bytes");
        CHECK(check(base + ro, len, seed, sc.cs) == 0);
        // Nothing around the message was written.
        std::vector<unsigned char> around(64, 1);
        if (ro >= 64) {
          CUDA_REQUIRE(cudaMemcpy(around.data(), base + ro - 64, 64, cudaMemcpyDeviceToHost));
          CHECK(std::vector<unsigned char>(64, 0) == around);
        }
        CUDA_REQUIRE(cudaMemcpy(around.data(), base + ro + len, 64, cudaMemcpyDeviceToHost));
        CHECK(std::vector<unsigned char>(64, 0) == around);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == static_cast<int>(len));
        CHECK(st.MPI_SOURCE == peer);
        CHECK(st.MPI_TAG == 6);
      }
      ++seed;
    }
}

TEST_CASE("GPU-direct: truncation, zero bytes, a receive longer than the message") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  GpuBuf buf(Place::device, 4096);
  MPI_Comm_set_errhandler(sc.comm, MPI_ERRORS_RETURN);
  if (world_rank() == 0) {
    fill(buf.get(), 4096, 9, sc.cs);
    CHECK(MPIX_Send_enqueue(buf.get(), 1000, MPI_INT, peer, 1, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Send_enqueue(buf.get(), 0, MPI_INT, peer, 2, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Send_enqueue(buf.get(), 100, MPI_INT, peer, 3, sc.comm) == MPI_SUCCESS);
    CHECK(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  } else {
    MPI_Request r[3];
    MPI_Status st[3];
    CUDA_REQUIRE(cudaMemsetAsync(buf.get(), 0, 4096, sc.cs));
    REQUIRE(MPIX_Irecv_enqueue(buf.get(), 500, MPI_INT, peer, 1, sc.comm, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(buf.get(), 10, MPI_INT, peer, 2, sc.comm, &r[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(buf.get(), 1000, MPI_INT, peer, 3, sc.comm, &r[2]) == MPI_SUCCESS);
    MPIX_Waitall_enqueue(3, r, st);
    CHECK(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE);
    int count = -1;
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == 0);
    MPI_Get_count(&st[2], MPI_INT, &count);
    CHECK(count == 100);
    CHECK(check(buf.get(), 400, 9, sc.cs) == 0);
    // Past the 100 ints of the last message the buffer is as it was.
    std::vector<int> rest(100, -1);
    CUDA_REQUIRE(cudaMemcpy(rest.data(), buf.as<int>() + 100, 400, cudaMemcpyDeviceToHost));
    CHECK(std::vector<int>(100, 0) == rest);
  }
}

TEST_CASE("GPU-direct: managed memory and pinned host memory (staged), mixed with device") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  const std::size_t n = 256 << 10;
  for (Place sp : all_places()) {
    Place rp = sp == Place::device ? Place::managed : Place::device;
    GpuBuf s(sp, n), r(rp, n);
    std::vector<unsigned char> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = pattern_byte(static_cast<uint32_t>(sp), i);
    if (world_rank() == 0) {
      s.write(want);
      REQUIRE(MPIX_Send_enqueue(s.get(), static_cast<int>(n), MPI_BYTE, peer, 8, sc.comm) ==
              MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(r.get(), static_cast<int>(n), MPI_BYTE, peer, 8, sc.comm,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    if (world_rank() == 1) {
      INFO(place_name(sp) << " -> " << place_name(rp));
      CHECK(r.read<unsigned char>(n) == want);
    }
  }
}

TEST_CASE("GPU-direct: ANY_SOURCE over a GPU-direct and a staged peer") {
  if (world_size() < 3) return;
  CudaStreamComm sc;  // rank 2 has MPIX_GPU_DIRECT=off (main below): its pair is staged
  const std::size_t n = 64 << 10;
  const int rounds = 20;
  if (world_rank() == 0) {
    std::vector<int> from(3, 0);
    for (int i = 0; i < 2 * rounds; ++i) {
      GpuBuf r(Place::device, n);
      MPI_Status st;
      REQUIRE(MPIX_Recv_enqueue(r.get(), static_cast<int>(n), MPI_BYTE, MPI_ANY_SOURCE, 4, sc.comm,
                                &st) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
      REQUIRE((st.MPI_SOURCE == 1 || st.MPI_SOURCE == 2));
      // Messages of one sender arrive in order: the k-th from a sender carries seed (src, k).
      const uint32_t seed = static_cast<uint32_t>(st.MPI_SOURCE * 1000 + from[st.MPI_SOURCE]++);
      INFO("message from " << st.MPI_SOURCE);
      CHECK(check(r.get(), n, seed, sc.cs) == 0);
    }
    CHECK(from[1] == rounds);
    CHECK(from[2] == rounds);
  } else if (world_rank() <= 2) {
    std::vector<GpuBuf *> bufs;
    for (int k = 0; k < rounds; ++k) {
      bufs.push_back(new GpuBuf(Place::device, n));
      fill(bufs.back()->get(), n, static_cast<uint32_t>(world_rank() * 1000 + k), sc.cs);
      MPI_Request req;
      REQUIRE(MPIX_Isend_enqueue(bufs.back()->get(), static_cast<int>(n), MPI_BYTE, 0, 4, sc.comm,
                                 &req) == MPI_SUCCESS);
      REQUIRE(MPIX_Wait_enqueue(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    for (GpuBuf *b : bufs) delete b;
  }
}

TEST_CASE("GPU-direct: 10,000 rounds without host synchronisation") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int peer = 1 - world_rank();
  const int rounds = 10000;
  const std::size_t n = 4096;
  GpuBuf a(Place::device, n), b(Place::device, n);
  // Rank 0 sends round k's pattern from a and receives rank 1's echo into b; rank 1 receives
  // into a and sends a back from it: the echo proves each round's data, the last is checked.
  for (int k = 0; k < rounds; ++k) {
    if (world_rank() == 0) {
      fill(a.get(), n, static_cast<uint32_t>(k), sc.cs);
      REQUIRE(MPIX_Send_enqueue(a.get(), static_cast<int>(n), MPI_BYTE, peer, 9, sc.comm) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Recv_enqueue(b.get(), static_cast<int>(n), MPI_BYTE, peer, 9, sc.comm,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
    } else {
      REQUIRE(MPIX_Recv_enqueue(a.get(), static_cast<int>(n), MPI_BYTE, peer, 9, sc.comm,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
      REQUIRE(MPIX_Send_enqueue(a.get(), static_cast<int>(n), MPI_BYTE, peer, 9, sc.comm) ==
              MPI_SUCCESS);
    }
  }
  REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
  if (world_rank() == 0) CHECK(check(b.get(), n, rounds - 1, sc.cs) == 0);
}

// Completion on the GPU (MPIX_GPU_DIRECT_COMPLETION=gpu, the gpucompletion variant; ipc_path.hpp):
// a GPU-direct send's wait in MPIX_Waitall_enqueue's kernel goes on once the receiver's copy
// kernel has read the message, before the answer through both agents. Each stream rewrites its
// send buffer right after each Waitall, and every few rounds one rank holds its own copy back
// (a slow kernel before its Waitall): had the peer's wait gone on before that copy, the copy
// would find the peer's next bytes. 16 KiB (unannounced under auto) and 256 KiB (announced).
TEST_CASE("GPU-direct: a send's stream goes on only once the receiver has copied") {
  if (world_size() < 2 || world_rank() > 1) return;
  CudaStreamComm sc;
  const int me = world_rank();
  const int peer = 1 - me;
  auto seed = [](int round, int rank) { return static_cast<uint32_t>(round * 2 + rank); };
  for (std::size_t n : {std::size_t{16384}, std::size_t{262144}}) {
    INFO("bytes " << n);
    const int rounds = 300;
    GpuBuf sbuf(Place::device, n), rbuf(Place::device, n);
    GpuBuf counts(Place::device, 2 * sizeof(unsigned long long)), slow(Place::device, sizeof(int));
    CUDA_REQUIRE(cudaMemsetAsync(counts.get(), 0, 2 * sizeof(unsigned long long), sc.cs));
    auto *c = counts.as<unsigned long long>();
    for (int k = 0; k < rounds; ++k) {
      MPI_Request r[2];
      fill(sbuf.get(), n, seed(k, me), sc.cs);
      REQUIRE(MPIX_Irecv_enqueue(rbuf.get(), static_cast<int>(n), MPI_BYTE, peer, 5, sc.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(sbuf.get(), static_cast<int>(n), MPI_BYTE, peer, 5, sc.comm,
                                 &r[1]) == MPI_SUCCESS);
      if (k % 10 == 5 * me)  // 0.2 ms before this side copies the peer's message
        CUDA_REQUIRE(slow_write(slow.as<int>(), 1, k, 200000, sc.cs));
      REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      fill(sbuf.get(), n, 0x5eed0000u + static_cast<uint32_t>(k), sc.cs);  // the buffer reused
      CUDA_REQUIRE(check_pattern(rbuf.get(), n, seed(k, peer), c, c + 1, sc.cs));
    }
    REQUIRE(MPIX_Stream_synchronize(sc.stream) == MPI_SUCCESS);
    auto v = counts.read<unsigned long long>(2);
    CHECK(v[0] == 0);  // bytes that differed, over every round
    CHECK(v[1] == static_cast<unsigned long long>(rounds));
  }
}
