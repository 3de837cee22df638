// CUDA events after enqueued receives, waits and allreduces (issue 13 item 5): an event recorded
// on the stream right after the op completes only once the data is in place, and work on
// another stream ordered after the event with cudaStreamWaitEvent (as PyTorch's process groups
// order their streams) sees the data. The peer sends only after the receiver has queued
// everything (a barrier), so an event that completed early would let the checking kernel read
// the old contents, which it counts as errors. Run for every trigger mode, with the agent's
// copies (MPIX_AGENT_COPY_MAX=-1) and the stream's copies (default), device and pinned buffers.
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"
#include "watchdog.hpp"

using namespace mpix_gpu_test;

namespace {

enum class How { irecv_wait, recv, waitall };
const char *how_name(How h) {
  static const char *const kNames[] = {"Irecv_enqueue + Wait_enqueue", "Recv_enqueue",
                                       "Irecv_enqueue + Waitall_enqueue"};
  return kNames[static_cast<int>(h)];
}

// The other stream, the event, and device counters {errors, checks} its kernel adds to.
struct Observer {
  Observer() {
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    CUDA_REQUIRE(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CUDA_REQUIRE(
        cudaMemsetAsync(counters.as<unsigned long long>(), 0, 2 * sizeof(unsigned long long), t));
    CUDA_REQUIRE(cudaStreamSynchronize(t));
  }
  ~Observer() {
    cudaStreamSynchronize(t);
    cudaEventDestroy(ev);
    cudaStreamDestroy(t);
  }
  // Records the event on @p s and orders the other stream after it.
  void follow(cudaStream_t s) {
    CUDA_REQUIRE(cudaEventRecord(ev, s));
    CUDA_REQUIRE(cudaStreamWaitEvent(t, ev, 0));
  }
  unsigned long long *errors() const { return counters.as<unsigned long long>(); }
  unsigned long long *checks() const { return counters.as<unsigned long long>() + 1; }
  std::vector<unsigned long long> result() {
    CUDA_REQUIRE(cudaStreamSynchronize(t));
    return counters.read<unsigned long long>(2);
  }

  cudaStream_t t = nullptr;
  cudaEvent_t ev = nullptr;
  GpuBuf counters{Place::device, 2 * sizeof(unsigned long long)};
};

}  // namespace

TEST_CASE("an event after an enqueued receive completes only with the data in place",
          "[gpu][event]") {
  const int rank = world_rank(), size = world_size();
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  const bool receiver = rank % 2 == 1;
  CudaStreamComm s;
  // 64 B: the agent's copy is waited for in the agent; 256 KiB: copied asynchronously (above
  // MPIX_AGENT_COPY_SYNC_MAX); 4 MiB: rendezvous in MPI.
  for (std::size_t bytes : {std::size_t{64}, std::size_t{256} << 10, std::size_t{4} << 20})
    for (Place place : {Place::device, Place::pinned})
      for (How how : {How::irecv_wait, How::recv, How::waitall}) {
        INFO(how_name(how) << ", " << bytes << " bytes of " << place_name(place) << ", trigger "
                           << trigger_under_test() << ", stream " << stream_kind_name(s.kind));
        const uint32_t seed = static_cast<uint32_t>(bytes + 3 * static_cast<int>(how));
        GpuBuf buf(place, bytes);
        if (receiver) {
          buf.write(std::vector<unsigned char>(bytes, 0));  // never the pattern
          Observer obs;
          watchdog_stage("event test: receiver enqueues the receive, event and check");
          MPI_Request r = MPI_REQUEST_NULL;
          switch (how) {
            case How::irecv_wait:
              REQUIRE(MPIX_Irecv_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, 9, s.comm, &r) ==
                      MPI_SUCCESS);
              REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
              break;
            case How::recv:
              REQUIRE(MPIX_Recv_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, 9, s.comm,
                                        MPI_STATUS_IGNORE) == MPI_SUCCESS);
              break;
            case How::waitall:
              REQUIRE(MPIX_Irecv_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, 9, s.comm, &r) ==
                      MPI_SUCCESS);
              REQUIRE(MPIX_Waitall_enqueue(1, &r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
              break;
          }
          obs.follow(s.cs);
          CUDA_REQUIRE(check_pattern(buf.get(), bytes, seed, obs.errors(), obs.checks(), obs.t));
          watchdog_stage("event test: receiver in the barrier (peer sends after it)");
          MPI_Barrier(MPI_COMM_WORLD);
          watchdog_stage("event test: receiver waits for the other stream");
          auto res = obs.result();
          CHECK(res[0] == 0);  // bytes the other stream saw wrong
          CHECK(res[1] == 1);  // the check ran
          s.sync();
        } else {
          std::vector<unsigned char> v(bytes);
          for (std::size_t i = 0; i < bytes; ++i) v[i] = pattern_byte(seed, i);
          buf.write(v);
          watchdog_stage("event test: sender in the barrier");
          MPI_Barrier(MPI_COMM_WORLD);
          watchdog_stage("event test: sender sends");
          REQUIRE(MPIX_Send_enqueue(buf.get(), (int)bytes, MPI_BYTE, peer, 9, s.comm) ==
                  MPI_SUCCESS);
          s.sync();
        }
      }
}

TEST_CASE("an event after an enqueued allreduce completes only with the result in place",
          "[gpu][event][allreduce]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  for (int n : {16, 1 << 16, 1 << 20})
    for (Place place : {Place::device, Place::pinned})
      for (bool in_place : {false, true}) {
        INFO(n << " ints of " << place_name(place) << (in_place ? ", in place" : "") << ", trigger "
               << trigger_under_test() << ", stream " << stream_kind_name(s.kind));
        GpuBuf in(place, n * sizeof(int)), out(place, n * sizeof(int));
        std::vector<int> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[i] = rank + i;
        (in_place ? out : in).write(v);
        if (!in_place) out.write(std::vector<int>(static_cast<std::size_t>(n), -1));
        Observer obs;
        // Rank 0 queues everything first; the others join after the barrier, so the allreduce
        // cannot have finished when rank 0 records its event.
        if (rank != 0) {
          watchdog_stage("allreduce event test: waiting for rank 0 to queue");
          MPI_Barrier(MPI_COMM_WORLD);
        }
        watchdog_stage("allreduce event test: enqueue, event, check on the other stream");
        REQUIRE(MPIX_Allreduce_enqueue(in_place ? MPI_IN_PLACE : in.get(), out.get(), n, MPI_INT,
                                       MPI_SUM, s.comm) == MPI_SUCCESS);
        obs.follow(s.cs);
        CUDA_REQUIRE(check_ints(out.as<int>(), static_cast<std::size_t>(n), size * (size - 1) / 2,
                                size, obs.errors(), obs.checks(), obs.t));
        if (rank == 0) {
          watchdog_stage("allreduce event test: rank 0 in the barrier");
          MPI_Barrier(MPI_COMM_WORLD);
        }
        watchdog_stage("allreduce event test: waiting for the other stream");
        auto res = obs.result();
        CHECK(res[0] == 0);
        CHECK(res[1] == 1);
        s.sync();
      }
}
