// bench/mpix_partitioned: kernel-triggered partitioned communication against the non-
// partitioned enqueue path and host-synchronised MPI, two ranks with one GPU each (like OSU's
// osu_partitioned_latency, but the partitions are marked ready by the producing kernel).
//
// Each iteration is a ping-pong. On each side a kernel with one block per partition writes the
// message (optionally after a staggered "compute": block b finishes at (b+1)/P of
// --compute-us), and the message goes to the peer:
//   partitioned  each block calls the device MPIX_Pready as soon as its partition is written;
//                rounds start and complete in stream order (MPIX_Start_enqueue /
//                MPIX_Pwait_enqueue). The send of early partitions overlaps the kernel.
//   pready-enqueue  partitioned, but the kernel only writes (no mpix call in it) and the stream
//                marks every partition ready after it (MPIX_Pready_range_enqueue): a persistent
//                send driven by the stream, the MPI_Send_init / MPI_Start pattern.
//   enqueue      after the kernel, MPIX_Isend_enqueue of the whole message (stream order).
//   mpi-sync     cudaStreamSynchronize, then MPI_Send (what codes do today).
//   in-kernel    partitioned, but the ping-pong runs inside one kernel per round on each side:
//                the initiator's block b marks partition b ready and spins on MPIX_Parrived
//                until the reply's partition b arrived; the responder's block b spins until
//                partition b arrived, checks it, writes and marks the reply. Reported: half
//                the initiator's in-kernel round trip (kernel MPIX_Pready -> peer kernel sees
//                MPIX_Parrived, and back), and on a second line the wall-clock one-way time of
//                the whole loop (rounds started and completed in stream order).
//   in-kernel-all  in-kernel, with each side's receive and send started by one
//                MPIX_Startall_enqueue and completed by one MPIX_Pwaitall_enqueue.
// Reported: one-way time = round trip / 2, from the start of the producing kernel to the whole
// message having arrived on the other side (and, for partitioned, the mean cost of a device
// MPIX_Pready). Buffers are pinned host memory the kernels write directly (mpix posts
// partitions to MPI from the host; this Open MPI is not CUDA-aware), or with --buffers device
// cudaMalloc memory: mpix stages it, and mpi-sync copies through pinned buffers by hand.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "partitioned_kernels.hpp"

namespace {

void die(const char *what, const char *why) {
  std::fprintf(stderr, "mpix_partitioned: %s: %s\n", what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
void mpi_ok(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, s, &n);
  die(what, s);
}
void cuda_ok(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) die(what, cudaGetErrorString(rc));
}

struct Options {
  std::vector<std::size_t> sizes;
  std::vector<int> parts;
  std::vector<std::string> modes;
  double compute_us = 0;
  int iters = 200, warmup = 10;
  bool device_buffers = false;  // --buffers device: cudaMalloc buffers (mpix stages them)
  std::string json, label;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char **argv) {
  Options o;
  std::string sizes = "4096:16777216", parts = "1,2,4,8,16,32,64",
              modes = "partitioned,enqueue,mpi-sync";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a.c_str(), "needs a value");
      return argv[++i];
    };
    if (a == "--sizes") sizes = next();
    else if (a == "--parts") parts = next();
    else if (a == "--modes") modes = next();
    else if (a == "--compute-us") o.compute_us = std::atof(next().c_str());
    else if (a == "--iters") o.iters = std::atoi(next().c_str());
    else if (a == "--warmup") o.warmup = std::atoi(next().c_str());
    else if (a == "--json") o.json = next();
    else if (a == "--label") o.label = next();
    else if (a == "--buffers") {
      const std::string b = next();
      if (b != "host" && b != "device") die("--buffers", "host or device");
      o.device_buffers = b == "device";
    } else {
      std::fprintf(
          stderr,
          "usage: mpix_partitioned [--sizes MIN:MAX bytes, powers of 2] [--parts "
          "1,2,...] [--modes partitioned,pready-enqueue,enqueue,mpi-sync,in-kernel,in-kernel-all] "
          "[--compute-us T] "
          "[--iters N] [--warmup N] [--buffers host|device] [--json FILE] "
          "[--label TEXT]\n");
      std::exit(2);
    }
  }
  auto mm = split(sizes, ':');
  std::size_t lo = std::strtoull(mm[0].c_str(), nullptr, 0);
  std::size_t hi = mm.size() > 1 ? std::strtoull(mm[1].c_str(), nullptr, 0) : lo;
  for (std::size_t s = lo; s <= hi; s *= 4) o.sizes.push_back(s);
  for (auto &p : split(parts, ',')) o.parts.push_back(std::atoi(p.c_str()));
  o.modes = split(modes, ',');
  return o;
}

struct Ctx {
  int rank = 0, peer = 1;
  // With device buffers: pinned copies mpi-sync stages through, by hand, as codes do today.
  void *hs = nullptr, *hr = nullptr;
  cudaStream_t cs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;         // stream communicator on cs
  unsigned long long *pready = nullptr;  // device: [sum ns, count]
};

struct Result {
  std::string mode;
  int parts;
  std::size_t bytes;
  double oneway_us, pready_ns;
  int iters;
  double wall_us;  // in-kernel: the wall-clock one-way time (others: oneway_us)
};

int iters_for(const Options &o, std::size_t bytes) {
  if (bytes <= (64u << 10)) return o.iters;
  long n = static_cast<long>(o.iters) * (64 << 10) / static_cast<long>(bytes);
  return n < 10 ? 10 : static_cast<int>(n);
}

// The partitioned send and receive of one configuration (tag 0, to and from the peer).
void init_pair(const Ctx &c, void *sbuf, void *rbuf, int parts, std::size_t per, MPIX_Request *s,
               MPIX_Request *r) {
  mpi_ok(MPIX_Psend_init(sbuf, parts, static_cast<MPI_Count>(per), MPI_BYTE, c.peer, 0, c.comm,
                         MPI_INFO_NULL, s),
         "MPIX_Psend_init");
  mpi_ok(MPIX_Precv_init(rbuf, parts, static_cast<MPI_Count>(per), MPI_BYTE, c.peer, 0, c.comm,
                         MPI_INFO_NULL, r),
         "MPIX_Precv_init");
}

// One configuration; returns the one-way time in microseconds (on rank 0). With
// @p stream_marks (mode pready-enqueue) the kernel only writes, and the stream marks every
// partition ready after it (MPIX_Pready_range_enqueue): a persistent send driven by the stream.
double run_partitioned(Ctx &c, const Options &o, bool stream_marks, std::size_t bytes, int parts,
                       int iters, double *pready_ns, void *sbuf, void *rbuf) {
  const uint64_t cns = static_cast<uint64_t>(o.compute_us * 1000);
  const std::size_t per = bytes / parts;
  MPIX_Request s, r;
  init_pair(c, sbuf, rbuf, parts, per, &s, &r);
  MPIX_Prequest ps = MPIX_PREQUEST_NULL;
  if (!stream_marks) mpi_ok(MPIX_Prequest_create(s, &ps), "MPIX_Prequest_create");
  // The send's round: its kernel, then (stream_marks) the stream's marks, then its wait.
  auto send_round = [&](int it) {
    mpi_ok(MPIX_Start_enqueue(&s), "MPIX_Start_enqueue(s)");
    cuda_ok(pbench::compute(sbuf, per, parts, cns, it, ps, stream_marks ? nullptr : c.pready, c.cs),
            "compute");
    if (stream_marks)
      mpi_ok(MPIX_Pready_range_enqueue(0, parts - 1, s), "MPIX_Pready_range_enqueue");
    mpi_ok(MPIX_Pwait_enqueue(&s, MPI_STATUS_IGNORE), "MPIX_Pwait_enqueue(s)");
  };
  cuda_ok(cudaMemset(c.pready, 0, 2 * sizeof(unsigned long long)), "cudaMemset");
  double t0 = 0;
  for (int it = -o.warmup; it < iters; ++it) {
    if (it == 0) {
      cuda_ok(cudaStreamSynchronize(c.cs), "sync");
      MPI_Barrier(c.comm);
      cuda_ok(cudaMemset(c.pready, 0, 2 * sizeof(unsigned long long)), "cudaMemset");
      t0 = MPI_Wtime();
    }
    if (c.rank == 0) {
      mpi_ok(MPIX_Start_enqueue(&r), "MPIX_Start_enqueue(r)");
      send_round(it);
      mpi_ok(MPIX_Pwait_enqueue(&r, MPI_STATUS_IGNORE), "MPIX_Pwait_enqueue(r)");
    } else {
      mpi_ok(MPIX_Start_enqueue(&r), "MPIX_Start_enqueue(r)");
      mpi_ok(MPIX_Pwait_enqueue(&r, MPI_STATUS_IGNORE), "MPIX_Pwait_enqueue(r)");
      send_round(it);
    }
  }
  cuda_ok(cudaStreamSynchronize(c.cs), "sync");
  const double t = MPI_Wtime() - t0;
  unsigned long long pr[2] = {0, 0};
  cuda_ok(cudaMemcpy(pr, c.pready, sizeof pr, cudaMemcpyDeviceToHost), "cudaMemcpy");
  *pready_ns = pr[1] ? static_cast<double>(pr[0]) / pr[1] : 0;
  if (ps != MPIX_PREQUEST_NULL) mpi_ok(MPIX_Prequest_free(&ps), "MPIX_Prequest_free");
  mpi_ok(MPIX_Request_free(&s), "MPIX_Request_free");
  mpi_ok(MPIX_Request_free(&r), "MPIX_Request_free");
  return t / iters / 2 * 1e6;
}

// Mode in-kernel (@p all: in-kernel-all); returns the in-kernel one-way time, *wall_us the
// wall-clock one.
double run_in_kernel(Ctx &c, const Options &o, bool all, std::size_t bytes, int parts, int iters,
                     double *pready_ns, double *wall_us, void *sbuf, void *rbuf) {
  const std::size_t per = bytes / parts;
  MPIX_Request s, r;
  init_pair(c, sbuf, rbuf, parts, per, &s, &r);
  MPIX_Prequest ps, pr;
  mpi_ok(MPIX_Prequest_create(s, &ps), "MPIX_Prequest_create");
  mpi_ok(MPIX_Prequest_create(r, &pr), "MPIX_Prequest_create");
  unsigned long long *stats = nullptr;
  cuda_ok(cudaMalloc(reinterpret_cast<void **>(&stats), 4 * sizeof(unsigned long long)),
          "cudaMalloc");
  cuda_ok(cudaMemset(stats, 0, 4 * sizeof(unsigned long long)), "cudaMemset");
  double t0 = 0, host[5] = {0, 0, 0, 0, 0};  // seconds in each host call, summed
  for (int it = -o.warmup; it < iters; ++it) {
    if (it == 0) {
      cuda_ok(cudaStreamSynchronize(c.cs), "sync");
      MPI_Barrier(c.comm);
      cuda_ok(cudaMemset(stats, 0, 4 * sizeof(unsigned long long)), "cudaMemset");
      t0 = MPI_Wtime();
    }
    double t[6];
    t[0] = MPI_Wtime();
    MPIX_Request rs[2] = {r, s}, sr[2] = {s, r};
    if (all) mpi_ok(MPIX_Startall_enqueue(2, rs), "MPIX_Startall_enqueue");
    else mpi_ok(MPIX_Start_enqueue(&r), "MPIX_Start_enqueue(r)");
    t[1] = MPI_Wtime();
    if (!all) mpi_ok(MPIX_Start_enqueue(&s), "MPIX_Start_enqueue(s)");
    t[2] = MPI_Wtime();
    cuda_ok(pbench::pingpong(sbuf, rbuf, per, parts, it, c.rank == 0, ps, pr, stats, c.cs),
            "pingpong");
    t[3] = MPI_Wtime();
    if (all) mpi_ok(MPIX_Pwaitall_enqueue(2, sr, MPI_STATUSES_IGNORE), "MPIX_Pwaitall_enqueue");
    else mpi_ok(MPIX_Pwait_enqueue(&s, MPI_STATUS_IGNORE), "MPIX_Pwait_enqueue(s)");
    t[4] = MPI_Wtime();
    if (!all) mpi_ok(MPIX_Pwait_enqueue(&r, MPI_STATUS_IGNORE), "MPIX_Pwait_enqueue(r)");
    t[5] = MPI_Wtime();
    if (it >= 0)
      for (int k = 0; k < 5; ++k) host[k] += t[k + 1] - t[k];
  }
  cuda_ok(cudaStreamSynchronize(c.cs), "sync");
  *wall_us = (MPI_Wtime() - t0) / iters / 2 * 1e6;
  if (c.rank == 0 && all)
    std::printf(
        "  # host us per call: Startall_enqueue(r,s) %.2f, kernel launch %.2f, "
        "Pwaitall_enqueue(s,r) %.2f\n",
        host[0] / iters * 1e6, host[2] / iters * 1e6, host[3] / iters * 1e6);
  else if (c.rank == 0)
    std::printf(
        "  # host us per call: Start_enqueue(r) %.2f, Start_enqueue(s) %.2f, kernel "
        "launch %.2f, Pwait_enqueue(s) %.2f, Pwait_enqueue(r) %.2f\n",
        host[0] / iters * 1e6, host[1] / iters * 1e6, host[2] / iters * 1e6, host[3] / iters * 1e6,
        host[4] / iters * 1e6);
  unsigned long long st[4] = {0, 0, 0, 0};
  cuda_ok(cudaMemcpy(st, stats, sizeof st, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (st[2]) die("in-kernel", "a kernel saw a partition with wrong data");
  *pready_ns = static_cast<double>(st[3]) / (static_cast<double>(iters) * parts);
  cudaFree(stats);
  mpi_ok(MPIX_Prequest_free(&ps), "MPIX_Prequest_free");
  mpi_ok(MPIX_Prequest_free(&pr), "MPIX_Prequest_free");
  mpi_ok(MPIX_Request_free(&s), "MPIX_Request_free");
  mpi_ok(MPIX_Request_free(&r), "MPIX_Request_free");
  // Rank 0 timed the round trips; the others report 0.
  return st[1] ? static_cast<double>(st[0]) / st[1] / 2 / 1000 : 0;
}

double run_enqueue(Ctx &c, const Options &o, std::size_t bytes, int parts, int iters, void *sbuf,
                   void *rbuf) {
  const uint64_t cns = static_cast<uint64_t>(o.compute_us * 1000);
  const int n = static_cast<int>(bytes);
  double t0 = 0;
  for (int it = -o.warmup; it < iters; ++it) {
    if (it == 0) {
      cuda_ok(cudaStreamSynchronize(c.cs), "sync");
      MPI_Barrier(c.comm);
      t0 = MPI_Wtime();
    }
    MPI_Request rq, sq;
    if (c.rank == 0) {
      mpi_ok(MPIX_Irecv_enqueue(rbuf, n, MPI_BYTE, c.peer, 1, c.comm, &rq), "Irecv_enqueue");
      cuda_ok(pbench::compute(sbuf, bytes / parts, parts, cns, it, nullptr, nullptr, c.cs),
              "compute");
      mpi_ok(MPIX_Isend_enqueue(sbuf, n, MPI_BYTE, c.peer, 1, c.comm, &sq), "Isend_enqueue");
      mpi_ok(MPIX_Wait_enqueue(&sq, MPI_STATUS_IGNORE), "Wait_enqueue");
      mpi_ok(MPIX_Wait_enqueue(&rq, MPI_STATUS_IGNORE), "Wait_enqueue");
    } else {
      mpi_ok(MPIX_Irecv_enqueue(rbuf, n, MPI_BYTE, c.peer, 1, c.comm, &rq), "Irecv_enqueue");
      mpi_ok(MPIX_Wait_enqueue(&rq, MPI_STATUS_IGNORE), "Wait_enqueue");
      cuda_ok(pbench::compute(sbuf, bytes / parts, parts, cns, it, nullptr, nullptr, c.cs),
              "compute");
      mpi_ok(MPIX_Isend_enqueue(sbuf, n, MPI_BYTE, c.peer, 1, c.comm, &sq), "Isend_enqueue");
      mpi_ok(MPIX_Wait_enqueue(&sq, MPI_STATUS_IGNORE), "Wait_enqueue");
    }
  }
  cuda_ok(cudaStreamSynchronize(c.cs), "sync");
  return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

double run_mpi_sync(Ctx &c, const Options &o, std::size_t bytes, int parts, int iters, void *sbuf,
                    void *rbuf) {
  const uint64_t cns = static_cast<uint64_t>(o.compute_us * 1000);
  const int n = static_cast<int>(bytes);
  double t0 = 0;
  for (int it = -o.warmup; it < iters; ++it) {
    if (it == 0) {
      MPI_Barrier(c.comm);
      t0 = MPI_Wtime();
    }
    void *ms = c.hs ? c.hs : sbuf, *mr = c.hr ? c.hr : rbuf;  // what MPI reads and writes
    auto send = [&] {
      cuda_ok(pbench::compute(sbuf, bytes / parts, parts, cns, it, nullptr, nullptr, c.cs),
              "compute");
      if (c.hs) cuda_ok(cudaMemcpyAsync(ms, sbuf, bytes, cudaMemcpyDeviceToHost, c.cs), "copy out");
      cuda_ok(cudaStreamSynchronize(c.cs), "sync");
      MPI_Send(ms, n, MPI_BYTE, c.peer, 2, c.comm);
    };
    auto copy_in = [&] {
      if (c.hr) cuda_ok(cudaMemcpyAsync(rbuf, mr, bytes, cudaMemcpyHostToDevice, c.cs), "copy in");
    };
    if (c.rank == 0) {
      MPI_Request rq;
      MPI_Irecv(mr, n, MPI_BYTE, c.peer, 2, c.comm, &rq);
      send();
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      copy_in();
    } else {
      MPI_Recv(mr, n, MPI_BYTE, c.peer, 2, c.comm, MPI_STATUS_IGNORE);
      copy_in();
      send();
    }
  }
  cuda_ok(cudaStreamSynchronize(c.cs), "sync");
  return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

// The last round's message on the receiving side: every 16-byte word holds (round, block).
bool check_last(const void *rbuf, std::size_t bytes, int parts, int round) {
  const int *w = static_cast<const int *>(rbuf);
  const std::size_t per = bytes / parts / sizeof(int);
  for (int b = 0; b < parts; ++b)
    for (std::size_t i : {std::size_t(0), per - 2})  // words {round, b} (8 or 16 bytes)
      if (w[b * per + i] != round || w[b * per + i + 1] != b) return false;
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) die("MPI_Init_thread", "no MPI_THREAD_MULTIPLE");
  Options o = parse(argc, argv);
  Ctx c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  c.peer = c.rank ^ 1;
  int ndev = 0;
  cuda_ok(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  cuda_ok(cudaSetDevice(c.rank % ndev), "cudaSetDevice");
  cuda_ok(pbench::load_kernels(), "loading the kernels");
  cuda_ok(cudaStreamCreateWithFlags(&c.cs, cudaStreamNonBlocking), "cudaStreamCreate");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "cudaStream_t");
  mpi_ok(MPIX_Info_set_hex(info, "value", &c.cs, sizeof c.cs), "MPIX_Info_set_hex");
  mpi_ok(MPIX_Stream_create(info, &c.stream), "MPIX_Stream_create");
  MPI_Info_free(&info);
  mpi_ok(MPIX_Stream_comm_create(MPI_COMM_WORLD, c.stream, &c.comm), "MPIX_Stream_comm_create");
  cuda_ok(cudaMalloc(reinterpret_cast<void **>(&c.pready), 2 * sizeof(unsigned long long)),
          "cudaMalloc");
  const std::size_t maxb = o.sizes.back();
  void *sbuf = nullptr, *rbuf = nullptr;
  auto pinned = [&](void **p) {
    cuda_ok(cudaHostAlloc(p, maxb, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
  };
  if (o.device_buffers) {
    cuda_ok(cudaMalloc(&sbuf, maxb), "cudaMalloc");
    cuda_ok(cudaMalloc(&rbuf, maxb), "cudaMalloc");
    pinned(&c.hs);
    pinned(&c.hr);
  } else {
    pinned(&sbuf);
    pinned(&rbuf);
  }
  std::vector<char> seen(maxb);  // the receive buffer as the host reads it

  std::vector<Result> results;
  if (c.rank == 0)
    std::printf(
        "# mpix_partitioned%s%s: compute %.0f us (staggered over the partitions), %s buffers\n"
        "# %-12s %6s %10s %12s %10s\n",
        o.label.empty() ? "" : " ", o.label.c_str(), o.compute_us,
        o.device_buffers ? "device (cudaMalloc)" : "pinned host", "mode", "parts", "bytes",
        "one-way(us)", "Pready(ns)");
  for (std::size_t bytes : o.sizes) {
    const int iters = iters_for(o, bytes);
    for (const std::string &mode : o.modes) {
      for (int parts : o.parts) {
        // Partitions of whole words: 8 bytes in-kernel, 16 bytes elsewhere.
        const std::size_t word = mode.compare(0, 9, "in-kernel") == 0 ? 8 : 16;
        if (bytes % (static_cast<std::size_t>(parts) * word)) continue;
        double us = 0, pns = 0, wall = -1;
        cuda_ok(cudaMemset(rbuf, 0xff, bytes), "cudaMemset");
        cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        if (mode == "partitioned" || mode == "pready-enqueue")
          us = run_partitioned(c, o, mode == "pready-enqueue", bytes, parts, iters, &pns, sbuf,
                               rbuf);
        else if (mode == "enqueue") us = run_enqueue(c, o, bytes, parts, iters, sbuf, rbuf);
        else if (mode == "mpi-sync") us = run_mpi_sync(c, o, bytes, parts, iters, sbuf, rbuf);
        else if (mode == "in-kernel" || mode == "in-kernel-all")
          us = run_in_kernel(c, o, mode == "in-kernel-all", bytes, parts, iters, &pns, &wall, sbuf,
                             rbuf);
        else die(mode.c_str(), "unknown mode");
        cuda_ok(cudaMemcpy(seen.data(), rbuf, bytes, cudaMemcpyDefault), "cudaMemcpy");
        int ok = check_last(seen.data(), bytes, parts, iters - 1), all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all) die(mode.c_str(), "received data is wrong");
        if (c.rank == 0) {
          std::printf("  %-12s %6d %10zu %12.2f %10.0f\n", mode.c_str(), parts, bytes, us, pns);
          if (wall >= 0) std::printf("  %-12s %6d %10zu %12.2f\n", "  (wall)", parts, bytes, wall);
          std::fflush(stdout);
        }
        results.push_back({mode, parts, bytes, us, pns, iters, wall >= 0 ? wall : us});
      }
    }
  }
  if (c.rank == 0 && !o.json.empty()) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (!f) die(o.json.c_str(), "cannot write");
    char date[64];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    std::fprintf(f,
                 "{\"benchmark\": \"mpix_partitioned\", \"label\": \"%s\", \"date\": \"%s\", "
                 "\"device\": \"%s\", \"buffers\": \"%s\", \"compute_us\": %.1f, "
                 "\"results\": [\n",
                 o.label.c_str(), date, prop.name, o.device_buffers ? "device" : "host",
                 o.compute_us);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result &r = results[i];
      std::fprintf(f,
                   "  {\"mode\": \"%s\", \"partitions\": %d, \"bytes\": %zu, "
                   "\"oneway_us\": %.3f, \"pready_ns\": %.1f, \"iters\": %d, "
                   "\"wall_oneway_us\": %.3f}%s\n",
                   r.mode.c_str(), r.parts, r.bytes, r.oneway_us, r.pready_ns, r.iters, r.wall_us,
                   i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  if (o.device_buffers) {
    cudaFree(sbuf);
    cudaFree(rbuf);
    cudaFreeHost(c.hs);
    cudaFreeHost(c.hr);
  } else {
    cudaFreeHost(sbuf);
    cudaFreeHost(rbuf);
  }
  cudaFree(c.pready);
  MPI_Comm_free(&c.comm);
  MPIX_Stream_free(&c.stream);
  cudaStreamDestroy(c.cs);
  MPI_Finalize();
  return 0;
}
