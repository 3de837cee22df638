// mpix_scale: how mpix's costs grow with the number of ops in flight and of streams in one
// process (each rank sends to the next rank and receives from the previous one), on host streams
// or (-d cuda) on CUDA streams of the rank's GPU.
//
//   --sweep inflight   N = 1, 10, 100, 1000, 10000 ops of each kind in flight on one stream:
//                      N x MPIX_Irecv_enqueue, N x MPIX_Isend_enqueue, one MPIX_Waitall_enqueue
//                      of the 2N requests, then MPIX_Stream_synchronize.
//   --sweep streams    S = 1, 2, 4, ..., 64 stream communicators (one host stream each); per
//                      round, on every stream, W receives + W sends + one Waitall_enqueue; then
//                      every stream is synchronized.
//
// Columns (rank 0, means over the timed rounds):
//   send_ns / recv_ns  host wall time per MPIX_Isend_enqueue / MPIX_Irecv_enqueue call
//   wait_ns            host wall time per request of MPIX_Waitall_enqueue
//   drain_ns           wall time from the last enqueue call's return to the end of the
//                      synchronize, per op: with the host out of the way, what the agent and
//                      the network take per op (the agent's time per op when it is the
//                      bottleneck, which it is on host streams)
// -d cuda runs the same on CUDA streams (bench/cuda/gpu_scale.cpp), with pinned host buffers or,
// with --buffers device, device buffers (staged or GPU-direct as mpix chooses).
// Usage: mpix_scale [--sweep inflight|streams] [-r ROUNDS] [-W PER_STREAM] [--json FILE]
//                   [-d host|cuda] [--buffers host|device]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ns(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

struct Point {
  long x = 0;  // ops in flight per kind, or streams
  double send_ns = 0, recv_ns = 0, wait_ns = 0, drain_ns = 0;
};

struct Sums {
  double send = 0, recv = 0, wait = 0, drain = 0;
  long calls = 0;  // of each kind
};

// One round on @p comms: per stream, @p per receives and sends, one Waitall; then synchronize
// every stream. Receive buffers are checked: message k of a round on stream s carries
// (round, s, k).
// The buffers of a measure(): the backend's (sbuf, rbuf) and their host images (hs, hr).
struct Bufs {
  bench::ScaleBackend &be;
  std::size_t n;
  long *sbuf, *rbuf;
  std::vector<long> hs, hr;
  Bufs(bench::ScaleBackend &b, std::size_t count)
      : be(b), n(count), sbuf(b.alloc(count)), rbuf(b.alloc(count)), hs(count), hr(count) {}
  ~Bufs() {
    be.release(sbuf);
    be.release(rbuf);
  }
  Bufs(const Bufs &) = delete;
  Bufs &operator=(const Bufs &) = delete;
};

void round(std::vector<std::unique_ptr<bench::ScaleComm>> &comms, int per, long r,
           std::vector<MPI_Request> &reqs, Bufs &b, Sums *sum, bool timed) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  const std::size_t ns_ = comms.size(), n = static_cast<std::size_t>(per);
  for (std::size_t s = 0; s < ns_; ++s)
    for (std::size_t k = 0; k < n; ++k)
      b.hs[s * n + k] = (r * 131 + static_cast<long>(s)) * 100003 + static_cast<long>(k);
  b.be.put(b.sbuf, b.hs.data(), b.n);
  long *const sbuf = b.sbuf, *const rbuf = b.rbuf;
  double t_recv = 0, t_send = 0, t_wait = 0;
  Clock::time_point last{};
  for (std::size_t s = 0; s < ns_; ++s) {
    MPI_Request *q = &reqs[s * 2 * n];
    auto a = Clock::now();
    for (std::size_t k = 0; k < n; ++k)
      bench::check(MPIX_Irecv_enqueue(&rbuf[s * n + k], 1, MPI_LONG, from,
                                      static_cast<int>(k % 32000), comms[s]->comm(), &q[k]),
                   "MPIX_Irecv_enqueue");
    auto b = Clock::now();
    for (std::size_t k = 0; k < n; ++k)
      bench::check(MPIX_Isend_enqueue(&sbuf[s * n + k], 1, MPI_LONG, to,
                                      static_cast<int>(k % 32000), comms[s]->comm(), &q[n + k]),
                   "MPIX_Isend_enqueue");
    auto c = Clock::now();
    bench::check(MPIX_Waitall_enqueue(static_cast<int>(2 * n), q, MPI_STATUSES_IGNORE),
                 "MPIX_Waitall_enqueue");
    last = Clock::now();
    t_recv += ns(a, b);
    t_send += ns(b, c);
    t_wait += ns(c, last);
  }
  for (auto &c : comms) c->synchronize();
  auto e = Clock::now();
  b.be.get(b.hr.data(), rbuf, b.n);
  for (std::size_t s = 0; s < ns_; ++s)
    for (std::size_t k = 0; k < n; ++k) {
      const long want = (r * 131 + static_cast<long>(s)) * 100003 + static_cast<long>(k);
      if (b.hr[s * n + k] != want) {
        std::fprintf(stderr,
                     "mpix_scale: rank %d round %ld stream %zu message %zu: got %ld, "
                     "want %ld\n",
                     rank, r, s, k, b.hr[s * n + k], want);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  if (!timed) return;
  sum->recv += t_recv;
  sum->send += t_send;
  sum->wait += t_wait;
  sum->drain += ns(last, e);
  sum->calls += static_cast<long>(ns_ * n);
}

Point measure(bench::ScaleBackend &be, int streams, int per, int rounds) {
  std::vector<std::unique_ptr<bench::ScaleComm>> comms;
  for (int s = 0; s < streams; ++s) comms.push_back(be.make_comm());
  const std::size_t total = static_cast<std::size_t>(streams) * static_cast<std::size_t>(per);
  std::vector<MPI_Request> reqs(2 * total);
  Bufs bufs(be, total);
  Sums sum;
  const int warm = rounds > 4 ? 2 : 1;
  for (long r = -warm; r < rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    round(comms, per, r + warm, reqs, bufs, &sum, r >= 0);
  }
  Point p;
  const double c = static_cast<double>(sum.calls);
  p.send_ns = sum.send / c;
  p.recv_ns = sum.recv / c;
  p.wait_ns = sum.wait / (2 * c);
  p.drain_ns = sum.drain / (2 * c);
  return p;
}

void write_json(const std::string &file, const std::string &sweep, const char *xname, int per,
                const char *streams, const std::vector<Point> &pts) {
  FILE *f = std::fopen(file.c_str(), "w");
  if (!f) {
    std::perror(file.c_str());
    return;
  }
  const bench::RunInfo ri = bench::run_info();
  std::fprintf(f,
               "{\"benchmark\":\"mpix_scale\",\"sweep\":\"%s\",\"per_stream\":%d,"
               "\"streams\":\"%s\",\"ranks\":%d,\"host\":\"%s\",\"date\":\"%s\","
               "\"results\":[",
               sweep.c_str(), per, streams, ri.ranks, ri.host, ri.date);
  for (std::size_t i = 0; i < pts.size(); ++i)
    std::fprintf(f,
                 "%s{\"%s\":%ld,\"send_ns\":%.1f,\"recv_ns\":%.1f,\"wait_ns\":%.1f,"
                 "\"drain_ns\":%.1f}",
                 i ? "," : "", xname, pts[i].x, pts[i].send_ns, pts[i].recv_ns, pts[i].wait_ns,
                 pts[i].drain_ns);
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: mpix_scale [--sweep inflight|streams] [-r ROUNDS] [-W PER_STREAM] "
               "[--max N] [--json FILE] [-d host|cuda] [--buffers host|device]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
  std::string sweep = "inflight", json, device = "host", buffers = "host";
  int rounds = 20, per = 16;
  long max = -1;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--sweep")) sweep = next();
    else if (!std::strcmp(argv[i], "-r")) rounds = std::atoi(next());
    else if (!std::strcmp(argv[i], "-W")) per = std::atoi(next());
    else if (!std::strcmp(argv[i], "--max")) max = std::atol(next());
    else if (!std::strcmp(argv[i], "--json")) json = next();
    else if (!std::strcmp(argv[i], "-d")) device = next();
    else if (!std::strcmp(argv[i], "--buffers")) buffers = next();
    else usage();
  }
  if ((sweep != "inflight" && sweep != "streams") || rounds < 1 || per < 1 ||
      (device != "host" && device != "cuda") || (buffers != "host" && buffers != "device") ||
      (device == "host" && buffers == "device"))
    usage();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::unique_ptr<bench::ScaleBackend> be = device == "cuda"
                                                ? bench::cuda_scale_backend(buffers == "device")
                                                : bench::host_scale_backend();
  if (!be) {
    if (rank == 0) std::fprintf(stderr, "mpix_scale: -d cuda: built without CUDA\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<Point> pts;
  const bool inflight = sweep == "inflight";
  const char *xname = inflight ? "in_flight" : "streams";
  if (rank == 0) {
    std::printf(
        "# mpix_scale v0.1 (mpix): %s, %d rank(s), %s%s\n",
        inflight ? "ops in flight on one stream" : "stream communicators in one process", nranks,
        be->name(),
        inflight ? ""
                 : (", " + std::to_string(per) + " sends + receives per stream per round").c_str());
    std::printf("# %-10s %12s %12s %12s %12s\n", xname, "send(ns)", "recv(ns)", "wait/req(ns)",
                "drain/op(ns)");
    std::fflush(stdout);
  }
  const std::vector<long> xs = inflight ? std::vector<long>{1, 10, 100, 1000, 10000}
                                        : std::vector<long>{1, 2, 4, 8, 16, 32, 64};
  for (long x : xs) {
    if (max > 0 && x > max) break;
    // Fewer rounds for large points: each round already holds many ops.
    const int r =
        inflight ? std::max(2, static_cast<int>(rounds * 100 / std::max(100L, x))) : rounds;
    Point p = inflight ? measure(*be, 1, static_cast<int>(x), r)
                       : measure(*be, static_cast<int>(x), per, r);
    p.x = x;
    pts.push_back(p);
    if (rank == 0) {
      std::printf("  %-10ld %12.1f %12.1f %12.1f %12.1f\n", x, p.send_ns, p.recv_ns, p.wait_ns,
                  p.drain_ns);
      std::fflush(stdout);
    }
  }
  if (rank == 0 && !json.empty()) write_json(json, sweep, xname, per, be->name(), pts);
  be.reset();
  MPI_Finalize();
  return 0;
}
