// mpix_bw: OSU-style bandwidth: rank 0 sends a window of messages, rank 1 answers with a
// short ack; MB/s = bytes moved / time.
//   --mode mpi       MPI_Isend x window + MPI_Waitall from the host thread
//   --mode enqueue   MPIX_Isend_enqueue x window + MPIX_Waitall_enqueue on a host stream,
//                    every iteration enqueued up front
#include <mpi.h>

#include <cstdio>
#include <map>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::Options;

double mpi_bw(const Options &o, std::size_t size, int iters, int warmup) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char> buf(size ? size : 1, 'a');
  std::vector<MPI_Request> reqs(o.window);
  int n = static_cast<int>(size);
  char ack = 0;
  double t0 = 0;
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (rank == 0) {
      for (int w = 0; w < o.window; ++w)
        MPI_Isend(buf.data(), n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE);
      MPI_Recv(&ack, 1, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int w = 0; w < o.window; ++w)
        MPI_Irecv(buf.data(), n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE);
      MPI_Send(&ack, 1, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
    }
  }
  double t = MPI_Wtime() - t0;
  return static_cast<double>(size) * o.window * iters / t / 1e6;
}

double enqueue_bw(const Options &o, std::size_t size, int iters, int warmup) {
  static bench::HostStreamComm *hc = new bench::HostStreamComm;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char> buf(size ? size : 1, 'a');
  std::vector<MPI_Request> reqs(o.window);
  int n = static_cast<int>(size);
  char ack = 0;
  auto round = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (rank == 0) {
        for (int w = 0; w < o.window; ++w)
          bench::check(MPIX_Isend_enqueue(buf.data(), n, MPI_CHAR, 1, 100, hc->comm, &reqs[w]),
                       "Isend_enqueue");
        bench::check(MPIX_Waitall_enqueue(o.window, reqs.data(), MPI_STATUSES_IGNORE), "Waitall");
        bench::check(MPIX_Recv_enqueue(&ack, 1, MPI_CHAR, 1, 101, hc->comm, MPI_STATUS_IGNORE),
                     "Recv_enqueue");
      } else if (rank == 1) {
        for (int w = 0; w < o.window; ++w)
          bench::check(MPIX_Irecv_enqueue(buf.data(), n, MPI_CHAR, 0, 100, hc->comm, &reqs[w]),
                       "Irecv_enqueue");
        bench::check(MPIX_Waitall_enqueue(o.window, reqs.data(), MPI_STATUSES_IGNORE), "Waitall");
        bench::check(MPIX_Send_enqueue(&ack, 1, MPI_CHAR, 0, 101, hc->comm), "Send_enqueue");
      }
    }
    hc->synchronize();
  };
  round(warmup);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  round(iters);
  double t = MPI_Wtime() - t0;
  return static_cast<double>(size) * o.window * iters / t / 1e6;
}

}  // namespace

int main(int argc, char **argv) {
  std::map<std::string, bench::BwFn> modes = {{"mpi", mpi_bw}, {"enqueue", enqueue_bw}};
  bench::register_gpu_bw_modes(modes);
  std::string help;
  for (auto &m : modes) help += m.first + " ";
  Options o = bench::parse(argc, argv, "mpix_bw", "enqueue", help);
  if (o.iters == 10000) {  // OSU bw defaults: fewer iterations, each moves a whole window
    o.iters = 100;
    o.iters_large = 20;
    o.warmup = 10;
    o.warmup_large = 2;
  }
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto it = modes.find(o.mode);
  if (size != 2 || it == modes.end()) {
    std::fprintf(stderr, "mpix_bw: needs exactly 2 ranks and a mode among: %s\n", help.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  bench::print_header("OSU-style MPI Bandwidth Test", o, "Bandwidth (MB/s)");
  std::vector<bench::Row> rows;
  for (std::size_t s : bench::sizes(o)) {
    double mbs = it->second(o, s, bench::iters_for(o, s), bench::warmup_for(o, s));
    MPI_Bcast(&mbs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    rows.push_back({s, mbs});
    bench::print_row(rows.back());
  }
  bench::write_json(o, "mpix_bw", "bandwidth_MBps", rows);
  MPI_Finalize();
  return 0;
}
