// mpix_soak: many enqueued ops per rank, data checked (issue 15's soak; outside the CI run).
// Each rank sends to the next rank and receives from the previous one on a host stream:
//   in flight     N receives, then N sends, all enqueued before one MPIX_Waitall_enqueue of the
//                 2N requests; the stream is synchronized at the end
//   back to back  N rounds of one receive + one send + MPIX_Waitall_enqueue, the host never
//                 waiting; one synchronize at the end
// Message k carries (rank, k); every receive is checked. Prints the wall time of each phase.
// --host-wait: the in-flight phase completes its 2N requests with one host MPI_Waitall
// instead of MPIX_Waitall_enqueue (what once never returned under provider mpi at N = 70,000).
// Usage: mpix_soak [-n OPS] [--provider mpi|ofi:<prov>] [--host-wait]   (default 100000)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

long value(int rank, long k) { return static_cast<long>(rank) * 1000000007L + k; }

void check_all(const std::vector<long> &rbuf, int from, const char *phase) {
  for (std::size_t k = 0; k < rbuf.size(); ++k)
    if (rbuf[k] != value(from, static_cast<long>(k))) {
      std::fprintf(stderr, "mpix_soak: %s: message %zu from rank %d holds %ld, want %ld\n", phase,
                   k, from, rbuf[k], value(from, static_cast<long>(k)));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

}  // namespace

int main(int argc, char **argv) {
  long n = 100000;
  bool host_wait = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-n") && i + 1 < argc) n = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--host-wait")) host_wait = true;
    else if (!std::strcmp(argv[i], "--provider") && i + 1 < argc) {
      std::string p = argv[++i];
      auto c = p.find(':');
      setenv("MPIX_PROVIDER", p.substr(0, c).c_str(), 1);
      if (c != std::string::npos) setenv("MPIX_OFI_PROVIDER", p.substr(c + 1).c_str(), 1);
    } else {
      std::fprintf(stderr, "usage: mpix_soak [-n OPS] [--provider mpi|ofi:<prov>] [--host-wait]\n");
      return 2;
    }
  }
  if (n < 1) return 2;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  {
    bench::HostStreamComm hc;
    const std::size_t un = static_cast<std::size_t>(n);
    std::vector<long> sbuf(un), rbuf(un, -1);
    for (std::size_t k = 0; k < un; ++k) sbuf[k] = value(rank, static_cast<long>(k));
    std::vector<MPI_Request> reqs(2 * un);

    MPI_Barrier(MPI_COMM_WORLD);
    auto a = Clock::now();
    for (std::size_t k = 0; k < un; ++k)
      bench::check(MPIX_Irecv_enqueue(&rbuf[k], 1, MPI_LONG, from, 7, hc.comm, &reqs[k]),
                   "MPIX_Irecv_enqueue");
    for (std::size_t k = 0; k < un; ++k)
      bench::check(MPIX_Isend_enqueue(&sbuf[k], 1, MPI_LONG, to, 7, hc.comm, &reqs[un + k]),
                   "MPIX_Isend_enqueue");
    if (host_wait)
      bench::check(MPI_Waitall(static_cast<int>(2 * un), reqs.data(), MPI_STATUSES_IGNORE),
                   "MPI_Waitall");
    else
      bench::check(MPIX_Waitall_enqueue(static_cast<int>(2 * un), reqs.data(), MPI_STATUSES_IGNORE),
                   "MPIX_Waitall_enqueue");
    auto b = Clock::now();
    hc.synchronize();
    auto c = Clock::now();
    check_all(rbuf, from, "in flight");
    if (rank == 0)
      std::printf(
          "mpix_soak: %d ranks, %ld receives + %ld sends in flight: enqueue%s %.3f s, "
          "drain %.3f s, data checked\n",
          size, n, n, host_wait ? " and host MPI_Waitall" : "", secs(a, b), secs(b, c));
    std::fflush(stdout);

    std::fill(rbuf.begin(), rbuf.end(), -1);
    MPI_Barrier(MPI_COMM_WORLD);
    a = Clock::now();
    for (std::size_t k = 0; k < un; ++k) {
      MPI_Request r[2];
      bench::check(MPIX_Irecv_enqueue(&rbuf[k], 1, MPI_LONG, from, 8, hc.comm, &r[0]),
                   "MPIX_Irecv_enqueue");
      bench::check(MPIX_Isend_enqueue(&sbuf[k], 1, MPI_LONG, to, 8, hc.comm, &r[1]),
                   "MPIX_Isend_enqueue");
      bench::check(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE), "MPIX_Waitall_enqueue");
    }
    b = Clock::now();
    hc.synchronize();
    c = Clock::now();
    check_all(rbuf, from, "back to back");
    if (rank == 0)
      std::printf(
          "mpix_soak: %d ranks, %ld rounds back to back: enqueue %.3f s, drain %.3f s, "
          "data checked\n",
          size, n, secs(a, b), secs(b, c));
  }
  MPI_Finalize();
  return 0;
}
