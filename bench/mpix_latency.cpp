// mpix_latency: OSU-style ping-pong latency (one-way = half the round trip), 2 ranks.
//   --mode mpi       plain MPI_Send/MPI_Recv from the host thread (the baseline)
//   --mode enqueue   MPIX_Send_enqueue/MPIX_Recv_enqueue on an mpix host stream: the host
//                    thread enqueues every iteration up front and never blocks; the stream
//                    enforces the ping-pong dependencies.
//   GPU modes (-d cuda) are registered by bench/cuda/ when built with CUDA.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::Options;

double mpi_pingpong(const Options &, std::size_t size, int iters, int warmup) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char> buf(size ? size : 1, 'a');
  int n = static_cast<int>(size);
  double t0 = 0;
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (rank % 2 == 0) {
      MPI_Send(buf.data(), n, MPI_CHAR, rank ^ 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), n, MPI_CHAR, rank ^ 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), n, MPI_CHAR, rank ^ 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), n, MPI_CHAR, rank ^ 1, 1, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

double enqueue_pingpong(const Options &, std::size_t size, int iters, int warmup) {
  static bench::HostStreamComm *hc = new bench::HostStreamComm;  // one for the whole sweep
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char> buf(size ? size : 1, 'a');
  int n = static_cast<int>(size);
  auto round = [&](int count) {
    for (int i = 0; i < count; ++i) {
      const int peer = rank ^ 1;
      if (rank % 2 == 0) {
        bench::check(MPIX_Send_enqueue(buf.data(), n, MPI_CHAR, peer, 1, hc->comm), "Send_enqueue");
        bench::check(
            MPIX_Recv_enqueue(buf.data(), n, MPI_CHAR, peer, 1, hc->comm, MPI_STATUS_IGNORE),
            "Recv_enqueue");
      } else {
        bench::check(
            MPIX_Recv_enqueue(buf.data(), n, MPI_CHAR, peer, 1, hc->comm, MPI_STATUS_IGNORE),
            "Recv_enqueue");
        bench::check(MPIX_Send_enqueue(buf.data(), n, MPI_CHAR, peer, 1, hc->comm), "Send_enqueue");
      }
    }
    hc->synchronize();
  };
  round(warmup);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  round(iters);
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

}  // namespace

int main(int argc, char **argv) {
  std::map<std::string, bench::LatencyFn> modes = {{"mpi", mpi_pingpong},
                                                   {"enqueue", enqueue_pingpong}};
  bench::register_gpu_latency_modes(modes);
  std::string help;
  for (auto &m : modes) help += m.first + " ";
  Options o = bench::parse(argc, argv, "mpix_latency", "enqueue", help);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto it = modes.find(o.mode);
  // More than two ranks: pairs (0, 1), (2, 3), ... ping-pong at once (how latency holds up with
  // several pairs sharing a GPU); the slowest pair's time is reported. The modes that time one
  // rank's host calls or use NCCL take exactly two.
  const bool pairs = o.mode == "mpi" || o.mode == "enqueue" || o.mode == "mpi-sync" ||
                     o.mode == "enqueue-hostfn" || o.mode == "enqueue-kernel";
  if (size < 2 || size % 2 != 0 || (size > 2 && !pairs) || it == modes.end()) {
    std::fprintf(stderr,
                 "mpix_latency: needs 2 ranks (an even number for mpi, enqueue*, mpi-sync) and "
                 "a mode among: %s\n",
                 help.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  bench::print_header("OSU-style MPI Latency Test", o, "Avg Latency(us)");
  std::vector<bench::Row> rows;
  for (std::size_t s : bench::sizes(o)) {
    double us = it->second(o, s, bench::iters_for(o, s), bench::warmup_for(o, s));
    MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    rows.push_back({s, us});
    bench::print_row(rows.back());
  }
  bench::write_json(o, "mpix_latency", "latency_us", rows);
  MPI_Finalize();
  return 0;
}
