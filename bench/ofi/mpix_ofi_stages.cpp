// mpix_ofi_stages: where a native-triggered op's time goes, next to an emulated one (run it
// with MPIX_OFI_NATIVE_TRIGGER=1 and =0; add MPIX_PROFILE=1 for the agent's per-op stages).
// 2 ranks. Rank 0 holds its host stream closed, enqueues N sends of SIZE bytes (rank 1 posts
// N receives the same way), then opens the stream and waits for all of them:
//   enqueue  host-thread time per MPIX_Isend_enqueue / MPIX_Irecv_enqueue (native: the
//            triggered op is handed to libfabric here)
//   drain    time per op from opening the stream until every op is complete (native: one
//            fi_cntr_add per op, libfabric posts inside it; emulated: one fi_tsendmsg per op)
// usage: mpix_ofi_stages [N] [SIZE] [ROUNDS] [JSON]   (JSON: also write the medians there)
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

using Clock = std::chrono::steady_clock;

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "mpix_ofi_stages: %s failed (%d)\n", what, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Holds the stream until opened.
struct Gate {
  std::atomic<bool> open{false};
  static void block(void *p) {
    auto *g = static_cast<Gate *>(p);
    while (!g->open.load()) std::this_thread::yield();
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int size = argc > 2 ? std::atoi(argv[2]) : 8;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpix_host_stream_t hs = nullptr;
  mpix_host_stream_create(&hs);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Info_set_hex(info, "value", &hs, sizeof hs);
  MPIX_Stream stream;
  check(MPIX_Stream_create(info, &stream), "MPIX_Stream_create");
  MPI_Info_free(&info);
  MPI_Comm comm;
  check(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm), "MPIX_Stream_comm_create");
  std::vector<char> buf(static_cast<std::size_t>(n) * size, 1);
  std::vector<MPI_Request> reqs(n);
  std::vector<double> enq, drain;
  for (int r = 0; r < rounds + 1; ++r) {
    Gate gate;
    mpix_host_stream_launch(hs, &Gate::block, &gate);
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      char *p = buf.data() + static_cast<std::size_t>(i) * size;
      if (rank == 0) check(MPIX_Isend_enqueue(p, size, MPI_CHAR, 1, i, comm, &reqs[i]), "Isend");
      else check(MPIX_Irecv_enqueue(p, size, MPI_CHAR, 0, i, comm, &reqs[i]), "Irecv");
    }
    auto t1 = Clock::now();
    MPI_Barrier(MPI_COMM_WORLD);  // both sides armed
    auto t2 = Clock::now();
    gate.open.store(true);
    check(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    auto t3 = Clock::now();
    check(MPIX_Stream_synchronize(stream), "MPIX_Stream_synchronize");
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) continue;  // warm-up: connections, first counters
    enq.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    drain.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count() / n);
  }
  double e = median(enq), d = median(drain), e1 = 0, d1 = 0;
  MPI_Reduce(&e, &e1, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&d, &d1, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const char *nt = std::getenv("MPIX_OFI_NATIVE_TRIGGER");
    std::printf("# mpix_ofi_stages: %d ops of %d B per round, %d rounds, medians (slower rank)\n",
                n, size, rounds);
    std::printf("# MPIX_PROVIDER=%s MPIX_OFI_PROVIDER=%s MPIX_OFI_NATIVE_TRIGGER=%s\n",
                std::getenv("MPIX_PROVIDER") ? std::getenv("MPIX_PROVIDER") : "(unset)",
                std::getenv("MPIX_OFI_PROVIDER") ? std::getenv("MPIX_OFI_PROVIDER") : "(unset)",
                nt ? nt : "(unset)");
    std::printf("enqueue_us_per_op %.2f\ndrain_us_per_op %.2f\n", e1, d1);
    if (argc > 4) {
      FILE *f = std::fopen(argv[4], "w");
      if (!f) {
        std::perror(argv[4]);
      } else {
        auto env = [](const char *n) { return std::getenv(n) ? std::getenv(n) : ""; };
        std::fprintf(f,
                     "{\"benchmark\":\"mpix_ofi_stages\",\"provider\":\"%s\",\"ofi_provider\":"
                     "\"%s\",\"native_trigger\":\"%s\",\"ops_per_round\":%d,\"size\":%d,"
                     "\"rounds\":%d,\"enqueue_us_per_op\":%.3f,\"drain_us_per_op\":%.3f}\n",
                     env("MPIX_PROVIDER"), env("MPIX_OFI_PROVIDER"), env("MPIX_OFI_NATIVE_TRIGGER"),
                     n, size, rounds, e1, d1);
        std::fclose(f);
      }
    }
  }
  check(MPIX_Stream_synchronize(stream), "sync");
  MPI_Comm_free(&comm);
  MPIX_Stream_free(&stream);
  mpix_host_stream_destroy(&hs);
  MPI_Finalize();
  return 0;
}
