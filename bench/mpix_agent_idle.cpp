// mpix_agent_idle: CPU cost of mpix's background threads when nothing is happening.
// Measures process CPU time (user+sys, all threads) over a wall-clock window while the main
// thread sleeps, in three states:
//   idle     : the agent has started (one op done) and nothing is armed or in flight;
//   pending  : a receive is posted and unmatched (the agent polls, backing off to sleeps);
//   armed    : an op waits for a stream that is blocked (the agent watches a trigger word).
// Prints % of one core per state; --json FILE writes them. Run with 1 rank.
#include <mpi.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_common.hpp"

namespace {

double cpu_seconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double percent_of_core(double seconds) {
  double c0 = cpu_seconds();
  auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  return 100.0 * (cpu_seconds() - c0) / wall;
}

std::atomic<int> g_gate{0};

}  // namespace

int main(int argc, char **argv) {
  double window = 5.0;
  const char *json = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-t" && i + 1 < argc) window = std::atof(argv[++i]);
    else if (std::string(argv[i]) == "--json" && i + 1 < argc) json = argv[++i];
  }
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  {
    bench::HostStreamComm hc;
    int x = 1, y = 0;
    // Start the agent with one completed op.
    bench::check(MPIX_Send_enqueue(&x, 1, MPI_INT, 0, 1, hc.comm), "Send_enqueue");
    bench::check(MPIX_Recv_enqueue(&y, 1, MPI_INT, 0, 1, hc.comm, MPI_STATUS_IGNORE), "Recv");
    hc.synchronize();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double idle = percent_of_core(window);

    MPI_Request r;
    bench::check(MPIX_Irecv_enqueue(&y, 1, MPI_INT, 0, 2, hc.comm, &r), "Irecv_enqueue");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double pending = percent_of_core(window);
    bench::check(MPIX_Send_enqueue(&x, 1, MPI_INT, 0, 2, hc.comm), "Send_enqueue");
    bench::check(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE), "Wait_enqueue");
    hc.synchronize();

    // Block the stream with a host function, then enqueue behind it: the agent holds an
    // armed op whose trigger word does not move.
    bench::check(mpix_host_stream_launch(
                     hc.host_stream,
                     [](void *) {
                       while (!g_gate.load())
                         std::this_thread::sleep_for(std::chrono::milliseconds(1));
                     },
                     nullptr) == 0
                     ? MPI_SUCCESS
                     : MPI_ERR_OTHER,
                 "launch");
    bench::check(MPIX_Irecv_enqueue(&y, 1, MPI_INT, 0, 3, hc.comm, &r), "Irecv_enqueue");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    double armed = percent_of_core(window);
    g_gate.store(1);
    bench::check(MPIX_Send_enqueue(&x, 1, MPI_INT, 0, 3, hc.comm), "Send_enqueue");
    bench::check(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE), "Wait_enqueue");
    hc.synchronize();

    std::printf(
        "# mpix agent CPU cost (%% of one core, %.1f s windows; the armed window "
        "includes a host fn polling every 1 ms)\n",
        window);
    std::printf("idle     %8.3f\npending  %8.3f\narmed    %8.3f\n", idle, pending, armed);
    if (json) {
      FILE *f = std::fopen(json, "w");
      if (f) {
        std::fprintf(f,
                     "{\"benchmark\":\"mpix_agent_idle\",\"window_s\":%.1f,\"idle_pct\":%.3f,"
                     "\"pending_pct\":%.3f,\"armed_pct\":%.3f}\n",
                     window, idle, pending, armed);
        std::fclose(f);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
