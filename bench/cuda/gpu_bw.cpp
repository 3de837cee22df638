// GPU modes of mpix_bw (-d cuda): rank 0 launches a kernel, then sends a window of messages;
// rank 1 receives them and answers with a 1-byte ack; MB/s = bytes moved / time.
//   mpi-sync        kernel, cudaStreamSynchronize, staging by hand (D: one copy per message
//                   into its own pinned slot), MPI_Isend x window, MPI_Waitall
//   enqueue[-hostfn|-kernel]  MPIX_Isend_enqueue x window + MPIX_Waitall_enqueue on the CUDA
//                   stream; every iteration enqueued up front (small messages) or one window at
//                   a time (above 64 KiB, to bound the pinned staging memory in flight)
//   nccl            grouped ncclSend x window (D D)
#include <cstdio>
#include <vector>

#include "gpu_bench.hpp"
#include "gpu_nccl.hpp"

namespace bench {
namespace {

double enqueue_bw(const Options &o, const char *trigger, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, 1);
  MPI_Comm comm = g.comm_for(trigger);
  const int n = static_cast<int>(size);
  std::vector<MPI_Request> reqs(o.window);
  const bool sync_each = size > (64u << 10);
  auto round = [&](int count, int base) {
    for (int i = 0; i < count; ++i) {
      if (g.rank == 0) {
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        for (int w = 0; w < o.window; ++w)
          check(MPIX_Isend_enqueue(g.sbuf, n, MPI_BYTE, 1, 100, comm, &reqs[w]),
                "MPIX_Isend_enqueue");
        check(MPIX_Waitall_enqueue(o.window, reqs.data(), MPI_STATUSES_IGNORE),
              "MPIX_Waitall_enqueue");
        check(MPIX_Recv_enqueue(g.hrbuf, 1, MPI_BYTE, 1, 101, comm, MPI_STATUS_IGNORE),
              "MPIX_Recv_enqueue");
      } else {
        for (int w = 0; w < o.window; ++w)
          check(MPIX_Irecv_enqueue(g.rbuf, n, MPI_BYTE, 0, 100, comm, &reqs[w]),
                "MPIX_Irecv_enqueue");
        check(MPIX_Waitall_enqueue(o.window, reqs.data(), MPI_STATUSES_IGNORE),
              "MPIX_Waitall_enqueue");
        check(MPIX_Send_enqueue(g.hsbuf, 1, MPI_BYTE, 0, 101, comm), "MPIX_Send_enqueue");
      }
      if (sync_each) cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
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

double mpi_sync_bw(const Options &o, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, o.window);
  const int n = static_cast<int>(size);
  const bool d = g.device_buffers;
  std::vector<MPI_Request> reqs(o.window);
  char *hs = static_cast<char *>(g.hsbuf), *hr = static_cast<char *>(g.hrbuf);
  char *rb = static_cast<char *>(g.rbuf);
  double t0 = 0;
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (g.rank == 0) {
      cuda_check(launch_compute(g.write_kernel, g.sbuf, size, i, g.s), "kernel");
      if (d)
        for (int w = 0; w < o.window; ++w)
          cuda_check(cudaMemcpyAsync(hs + w * size, g.sbuf, size, cudaMemcpyDeviceToHost, g.s),
                     "D2H");
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      for (int w = 0; w < o.window; ++w)
        MPI_Isend(d ? hs + w * size : g.sbuf, n, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE);
      MPI_Recv(hr, 1, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      for (int w = 0; w < o.window; ++w)
        MPI_Irecv(d ? hr + w * size : rb, n, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE);
      if (d)
        for (int w = 0; w < o.window; ++w)
          cuda_check(
              cudaMemcpyAsync(rb + w * size, hr + w * size, size, cudaMemcpyHostToDevice, g.s),
              "H2D");
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      MPI_Send(hs, 1, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
    }
  }
  return static_cast<double>(size) * o.window * iters / (MPI_Wtime() - t0) / 1e6;
}

BwFn gpu_only(const char *name, BwFn f) {
  return [name, f](const Options &o, std::size_t s, int i, int w) {
    if (o.device != "cuda") {
      std::fprintf(stderr, "mode %s needs -d cuda\n", name);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return f(o, s, i, w);
  };
}

}  // namespace

void register_gpu_bw_modes(std::map<std::string, BwFn> &modes) {
  BwFn host_enqueue = modes["enqueue"];
  modes["enqueue"] = [host_enqueue](const Options &o, std::size_t s, int i, int w) {
    return o.device == "cuda" ? enqueue_bw(o, "memop", s, i, w) : host_enqueue(o, s, i, w);
  };
  modes["mpi-sync"] = gpu_only("mpi-sync", mpi_sync_bw);
  modes["enqueue-hostfn"] =
      gpu_only("enqueue-hostfn", [](const Options &o, std::size_t s, int i, int w) {
        return enqueue_bw(o, "hostfn", s, i, w);
      });
  modes["enqueue-kernel"] =
      gpu_only("enqueue-kernel", [](const Options &o, std::size_t s, int i, int w) {
        return enqueue_bw(o, "kernel", s, i, w);
      });
  register_nccl_bw(modes);
}

}  // namespace bench
