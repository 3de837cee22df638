#include "gpu_nccl.hpp"

#ifdef MPIX_BENCH_NCCL
#include <nccl.h>

#include <cstdio>
#include <vector>

#include "gpu_bench.hpp"

namespace bench {
namespace {

void nccl_check(ncclResult_t rc, const char *what) {
  if (rc == ncclSuccess) return;
  std::fprintf(stderr, "bench: %s failed: %s\n", what, ncclGetErrorString(rc));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

ncclComm_t nccl_comm(const Options &o) {
  static ncclComm_t c = [&] {
    GpuCtx &g = gpu_ctx(o);
    if (!g.device_buffers) {
      std::fprintf(stderr, "mode nccl: NCCL needs device buffers (use --buffers \"D D\")\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ncclUniqueId id;
    if (g.rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    nccl_check(ncclCommInitRank(&comm, 2, id, g.rank), "ncclCommInitRank");
    return comm;
  }();
  return c;
}

double nccl_latency(const Options &o, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  ncclComm_t c = nccl_comm(o);
  g.reserve(size, 1);
  auto round = [&](int count, int base) {
    for (int i = 0; i < count; ++i) {
      if (g.rank == 0) {
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        nccl_check(ncclSend(g.sbuf, size, ncclChar, 1, c, g.s), "ncclSend");
        nccl_check(ncclRecv(g.rbuf, size, ncclChar, 1, c, g.s), "ncclRecv");
      } else {
        nccl_check(ncclRecv(g.rbuf, size, ncclChar, 0, c, g.s), "ncclRecv");
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        nccl_check(ncclSend(g.sbuf, size, ncclChar, 0, c, g.s), "ncclSend");
      }
    }
    cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
  };
  round(warmup, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  round(iters, warmup);
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

double nccl_bw(const Options &o, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  ncclComm_t c = nccl_comm(o);
  g.reserve(size, 1);
  auto round = [&](int count, int base) {
    for (int i = 0; i < count; ++i) {
      if (g.rank == 0) {
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        nccl_check(ncclGroupStart(), "ncclGroupStart");
        for (int w = 0; w < o.window; ++w)
          nccl_check(ncclSend(g.sbuf, size, ncclChar, 1, c, g.s), "ncclSend");
        nccl_check(ncclGroupEnd(), "ncclGroupEnd");
        nccl_check(ncclRecv(g.rbuf, 1, ncclChar, 1, c, g.s), "ncclRecv(ack)");
      } else {
        nccl_check(ncclGroupStart(), "ncclGroupStart");
        for (int w = 0; w < o.window; ++w)
          nccl_check(ncclRecv(g.rbuf, size, ncclChar, 0, c, g.s), "ncclRecv");
        nccl_check(ncclGroupEnd(), "ncclGroupEnd");
        nccl_check(ncclSend(g.sbuf, 1, ncclChar, 0, c, g.s), "ncclSend(ack)");
      }
    }
    cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
  };
  round(warmup, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  round(iters, warmup);
  double t = MPI_Wtime() - t0;
  return static_cast<double>(size) * o.window * iters / t / 1e6;
}

LatencyFn needs_cuda(LatencyFn f) {
  return [f](const Options &o, std::size_t s, int i, int w) {
    if (o.device != "cuda") {
      std::fprintf(stderr, "mode nccl needs -d cuda\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return f(o, s, i, w);
  };
}

}  // namespace

void register_nccl_latency(std::map<std::string, LatencyFn> &modes) {
  modes["nccl"] = needs_cuda(nccl_latency);
}
void register_nccl_bw(std::map<std::string, BwFn> &modes) { modes["nccl"] = needs_cuda(nccl_bw); }

}  // namespace bench

#else  // NCCL not found at build time: no nccl mode.

namespace bench {
void register_nccl_latency(std::map<std::string, LatencyFn> &) {}
void register_nccl_bw(std::map<std::string, BwFn> &) {}
}  // namespace bench

#endif
