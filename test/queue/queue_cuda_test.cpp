// MPIX_Queue on a CUDA stream with device (and managed) buffers, staged through bounce buffers in
// the queue's stream order: a send reads what kernels enqueued before its MPIX_Enqueue_start
// wrote (even ones enqueued after MPIX_Enqueue_send), a receive's data is in device memory for
// kernels enqueued after MPIX_Enqueue_wait, over several starts with no host synchronisation in
// between; a host MPI_Wait after the stream's copy does not copy again over later kernels'
// writes; a host MPI_Wait without MPIX_Enqueue_wait copies the data itself; a strided receive
// keeps its gaps.
#include <cstdint>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {

uint32_t seed_of(int rank, int start) { return static_cast<uint32_t>(1000 * rank + start + 1); }

// Error and check counters of check_pattern, in device memory.
struct Counters {
  GpuBuf buf{Place::device, 2 * sizeof(unsigned long long)};
  Counters() { buf.write(std::vector<unsigned long long>{0, 0}); }
  unsigned long long *errors() { return buf.as<unsigned long long>(); }
  unsigned long long *checks() { return buf.as<unsigned long long>() + 1; }
  std::vector<unsigned long long> read() { return buf.read<unsigned long long>(2); }
};

struct StreamQueue {
  cudaStream_t cs = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  MPIX_Queue q = MPIX_QUEUE_NULL;
  StreamQueue() {
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    // A plain communicator and a handle that is no host stream: the CUDA backend takes it.
    REQUIRE(MPIX_Create_queue(comm, cs, &q) == MPI_SUCCESS);
  }
  ~StreamQueue() {
    cudaStreamSynchronize(cs);
    if (q != MPIX_QUEUE_NULL) CHECK(MPIX_Free_queue(q) == MPI_SUCCESS);
    MPI_Comm_free(&comm);
    cudaStreamDestroy(cs);
  }
  void sync() { CUDA_REQUIRE(cudaStreamSynchronize(cs)); }
};

}  // namespace

TEST_CASE("queue sends and receives of device buffers over several starts, no host sync",
          "[gpu][queue]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  constexpr int kStarts = 8;
  // Small (eager) and large (rendezvous) messages.
  for (std::size_t n : {std::size_t{4096}, std::size_t{4} << 20}) {
    for (Place place : {Place::device, Place::managed}) {
      INFO(n << " bytes per message, buffers: " << place_name(place) << ", trigger "
             << trigger_under_test());
      StreamQueue sq;
      GpuBuf out(place, kStarts * n), in(place, kStarts * n);
      Counters ctr;
      std::vector<MPI_Request> reqs;
      int checked = 0;
      auto check_started = [&](int upto) {
        // Kernels after MPIX_Enqueue_wait: the data of every start so far is in device memory.
        for (; checked < upto; ++checked)
          CUDA_REQUIRE(check_pattern(in.as<char>() + checked * n, n, seed_of(peer, checked),
                                     ctr.errors(), ctr.checks(), sq.cs));
      };
      for (int s = 0; s < kStarts; ++s) {
        MPI_Request r[2];
        REQUIRE(MPIX_Enqueue_recv(in.as<char>() + s * n, (int)n, MPI_BYTE, peer, s, sq.comm, sq.q,
                                  &r[0]) == MPI_SUCCESS);
        REQUIRE(MPIX_Enqueue_send(out.as<char>() + s * n, (int)n, MPI_BYTE, peer, s, sq.comm, sq.q,
                                  &r[1]) == MPI_SUCCESS);
        // Written after the send was enqueued, before its start: the send must carry it.
        CUDA_REQUIRE(fill_pattern(out.as<char>() + s * n, n, seed_of(rank, s), sq.cs));
        REQUIRE(MPIX_Enqueue_start(sq.q) == MPI_SUCCESS);
        if (s % 3 == 1) {
          REQUIRE(MPIX_Enqueue_wait(sq.q) == MPI_SUCCESS);
          check_started(s + 1);
        }
        reqs.insert(reqs.end(), r, r + 2);
      }
      REQUIRE(MPIX_Enqueue_wait(sq.q) == MPI_SUCCESS);
      check_started(kStarts);
      sq.sync();
      auto c = ctr.read();
      CHECK(c[0] == 0);        // errors
      CHECK(c[1] == kStarts);  // every check kernel ran
      // A kernel overwrites the received data; host completion of the requests afterwards must
      // not copy the (old) bounce buffers in again.
      CUDA_REQUIRE(fill_pattern(in.get(), kStarts * n, 77, sq.cs));
      sq.sync();
      REQUIRE(MPI_Waitall((int)reqs.size(), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      auto got = in.read<unsigned char>(kStarts * n);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] != pattern_byte(77, i);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("host MPI_Wait completes a queue receive into device memory", "[gpu][queue]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  StreamQueue sq;
  const std::size_t n = 1 << 16;
  GpuBuf out(Place::device, n), in(Place::device, n);
  CUDA_REQUIRE(fill_pattern(out.get(), n, seed_of(rank, 50), sq.cs));
  sq.sync();
  in.write(std::vector<unsigned char>(n, 0));
  MPI_Request r[2];
  REQUIRE(MPIX_Enqueue_recv(in.get(), (int)n, MPI_BYTE, peer, 50, sq.comm, sq.q, &r[0]) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_send(out.get(), (int)n, MPI_BYTE, peer, 50, sq.comm, sq.q, &r[1]) ==
          MPI_SUCCESS);
  REQUIRE(MPIX_Enqueue_start(sq.q) == MPI_SUCCESS);
  MPI_Status st[2];
  REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
  CHECK(st[0].MPI_SOURCE == peer);
  auto got = in.read<unsigned char>(n);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += got[i] != pattern_byte(seed_of(peer, 50), i);
  CHECK(bad == 0);
  // Everything is complete: the wait adds no copy (and nothing to wait for).
  REQUIRE(MPIX_Enqueue_wait(sq.q) == MPI_SUCCESS);
  sq.sync();
}

TEST_CASE("a strided queue receive into device memory keeps its gaps", "[gpu][queue]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  StreamQueue sq;
  MPI_Datatype vec;
  MPI_Type_vector(1000, 2, 5, MPI_INT, &vec);  // 2 ints of every 5
  MPI_Type_commit(&vec);
  const int span = 999 * 5 + 2;
  GpuBuf out(Place::device, span * sizeof(int)), in(Place::device, span * sizeof(int));
  std::vector<int> v(span);
  for (int i = 0; i < span; ++i) v[i] = rank * 100000 + i;
  out.write(v);
  in.write(std::vector<int>(span, -7));
  MPI_Request r[2];
  for (int s = 0; s < 3; ++s) {
    REQUIRE(MPIX_Enqueue_recv(in.get(), 1, vec, peer, s, sq.comm, sq.q, &r[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_send(out.get(), 1, vec, peer, s, sq.comm, sq.q, &r[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_start(sq.q) == MPI_SUCCESS);
    REQUIRE(MPIX_Enqueue_wait(sq.q) == MPI_SUCCESS);
    sq.sync();
    REQUIRE(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    auto got = in.read<int>(span);
    int bad = 0;
    for (int i = 0; i < span; ++i) bad += got[i] != (i % 5 < 2 ? peer * 100000 + i : -7);
    CHECK(bad == 0);
  }
  MPI_Type_free(&vec);
}
