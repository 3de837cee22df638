// mpix_enqueue_cost: the host CPU time mpix itself spends per enqueue call, on host streams.
// Each rank sends to the next rank and receives from the previous one (itself, with one rank),
// in windows: W x MPIX_Irecv_enqueue, W x MPIX_Isend_enqueue, one MPIX_Waitall_enqueue of the
// 2W requests, then a stream synchronize (not timed). Prints, per rank 0, the mean wall time
// per call of each kind (the window's total over its calls, so clock reads stay off the path).
// One rank is what callgrind runs: `valgrind --tool=callgrind --toggle-collect=MPIX_Isend_enqueue
// ...` counts the instructions inside each call.
//
// Usage: mpix_enqueue_cost [-n CALLS] [-w WINDOW] [-x WARMUP_WINDOWS]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

}  // namespace

int main(int argc, char **argv) {
  long calls = 200000;
  int window = 64, warm_windows = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-n")) calls = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-w")) window = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-x")) warm_windows = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: mpix_enqueue_cost [-n CALLS] [-w WINDOW] [-x WARMUP_WINDOWS]\n");
      return 2;
    }
  }
  if (window < 1 || calls < window) {
    std::fprintf(stderr, "mpix_enqueue_cost: need -w >= 1 and -n >= -w\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    bench::HostStreamComm hc;
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(window));
    std::vector<char> sbuf(8, 's'), rbuf(8 * static_cast<std::size_t>(window), 0);
    const long windows = calls / window;
    double t_send = 0, t_recv = 0, t_wait = 0;
    for (long w = -warm_windows; w < windows; ++w) {
      auto a = Clock::now();
      for (int k = 0; k < window; ++k)
        bench::check(MPIX_Irecv_enqueue(&rbuf[8 * k], 8, MPI_BYTE, from, 3, hc.comm, &reqs[k]),
                     "MPIX_Irecv_enqueue");
      auto b = Clock::now();
      for (int k = 0; k < window; ++k)
        bench::check(
            MPIX_Isend_enqueue(sbuf.data(), 8, MPI_BYTE, to, 3, hc.comm, &reqs[window + k]),
            "MPIX_Isend_enqueue");
      auto c = Clock::now();
      bench::check(MPIX_Waitall_enqueue(2 * window, reqs.data(), MPI_STATUSES_IGNORE),
                   "MPIX_Waitall_enqueue");
      auto d = Clock::now();
      hc.synchronize();
      if (w >= 0) {
        t_recv += ns(a, b);
        t_send += ns(b, c);
        t_wait += ns(c, d);
      }
    }
    const double n = static_cast<double>(windows) * window;
    if (rank == 0)
      std::printf(
          "mpix_enqueue_cost: %d rank(s), %ld calls of each, window %d: "
          "MPIX_Isend_enqueue %.0f ns, MPIX_Irecv_enqueue %.0f ns, "
          "MPIX_Waitall_enqueue %.0f ns per request\n",
          size, static_cast<long>(n), window, t_send / n, t_recv / n, t_wait / (2 * n));
  }
  MPI_Finalize();
  return 0;
}
