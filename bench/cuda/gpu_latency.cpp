// GPU modes of mpix_latency (-d cuda). The pattern of every mode: a ping-pong where, each
// iteration, each rank launches one small kernel on its stream right before its send (empty,
// or writing the message with --set kernel=write); one-way latency = half the round trip.
// --set launch=pdl launches that kernel as a programmatic dependent of the kernel before it (it
// waits for that one's end first; compute capability 9.0 and later).
//   mpi-sync        kernel, cudaStreamSynchronize, staging by hand (D), MPI_Send / MPI_Recv
//   enqueue         MPIX_*_enqueue on the CUDA stream, trigger mode memop; every iteration is
//                   enqueued up front and the host waits once at the end
//   enqueue-hostfn  the same with mpix_trigger=hostfn (host-function triggers, MPICH's design)
//   enqueue-kernel  the same with mpix_trigger=kernel (1-thread store / spin kernels)
//   nccl            ncclSend / ncclRecv on the stream (built when NCCL is found; D D only)
//   isend-cpu       not a latency: the median host time of one MPIX_Isend_enqueue call (us)
//   exchange-cpu    not a latency: a halo exchange per iteration on both ranks (the kernel,
//                   MPIX_Irecv_enqueue, MPIX_Isend_enqueue, MPIX_Waitall_enqueue of the two),
//                   the median host time of each call and of the iteration; returns the
//                   iteration's (us); MPIX_BENCH_SYNC_EVERY=K waits for the stream every K
//                   iterations (default 64)
//   allreduce       not a ping-pong: per iteration each rank's kernel writes its input, then
//                   MPIX_Allreduce_enqueue (MPI_SUM of size/8 doubles, at least 1) on the
//                   stream; the host waits once per 64 iterations. Returns the time per
//                   iteration (us) and prints the median host time of the call
//   allreduce-sync  the same written host-synchronised: kernel, copy to pinned memory (D),
//                   cudaStreamSynchronize, MPI_Allreduce, copy back (D): the baseline
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "gpu_bench.hpp"
#include "gpu_nccl.hpp"

namespace bench {
namespace {

// How the host waits for the enqueued rounds. MPIX_BENCH_HOST_WAIT=poll: cudaStreamQuery and
// short sleeps instead of cudaStreamSynchronize, so that the waiting thread makes no long
// runtime call while mpix's agent thread issues its own (staging copies).
void host_wait(cudaStream_t s) {
  static const bool poll = [] {
    const char *v = std::getenv("MPIX_BENCH_HOST_WAIT");
    return v && std::string(v) == "poll";
  }();
  if (!poll) {
    cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return;
  }
  for (;;) {
    const cudaError_t rc = cudaStreamQuery(s);
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) cuda_check(rc, "cudaStreamQuery");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Large messages are staged through one bounce buffer per op in flight; bound how far ahead
// the host enqueues them so the pinned memory stays bounded (a stream sync every batch).
int batch_for(std::size_t size, int iters) { return size > (64u << 10) ? 16 : iters; }

double enqueue_latency(const Options &o, const char *trigger, std::size_t size, int iters,
                       int warmup) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, 1);
  MPI_Comm comm = g.comm_for(trigger);
  const int n = static_cast<int>(size);
  // Blocking enqueue calls: each puts its trigger and its completion wait on the stream in one
  // batch, so after a receive completes the stream runs only: wait released, kernel, trigger.
  auto round = [&](int count, int base) {
    const int batch = batch_for(size, count);
    for (int i = 0; i < count; ++i) {
      if (g.rank % 2 == 0) {
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        check(MPIX_Send_enqueue(g.sbuf, n, MPI_BYTE, g.peer, 1, comm), "MPIX_Send_enqueue");
        check(MPIX_Recv_enqueue(g.rbuf, n, MPI_BYTE, g.peer, 1, comm, MPI_STATUS_IGNORE),
              "MPIX_Recv_enqueue");
      } else {
        check(MPIX_Recv_enqueue(g.rbuf, n, MPI_BYTE, g.peer, 1, comm, MPI_STATUS_IGNORE),
              "MPIX_Recv_enqueue");
        cuda_check(launch_compute(g.write_kernel, g.sbuf, size, base + i, g.s), "kernel");
        check(MPIX_Send_enqueue(g.sbuf, n, MPI_BYTE, g.peer, 1, comm), "MPIX_Send_enqueue");
      }
      if ((i + 1) % batch == 0) host_wait(g.s);
    }
    host_wait(g.s);
  };
  round(warmup, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  round(iters, warmup);
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

double mpi_sync_latency(const Options &o, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, 1);
  const int n = static_cast<int>(size);
  const bool d = g.device_buffers;
  void *sb = d ? g.hsbuf : g.sbuf, *rb = d ? g.hrbuf : g.rbuf;
  double t0 = 0;
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    if (g.rank % 2 == 0) {
      cuda_check(launch_compute(g.write_kernel, g.sbuf, size, i, g.s), "kernel");
      if (d) cuda_check(cudaMemcpyAsync(g.hsbuf, g.sbuf, size, cudaMemcpyDeviceToHost, g.s), "D2H");
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      MPI_Send(sb, n, MPI_BYTE, g.peer, 1, MPI_COMM_WORLD);
      MPI_Recv(rb, n, MPI_BYTE, g.peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (d) cuda_check(cudaMemcpyAsync(g.rbuf, g.hrbuf, size, cudaMemcpyHostToDevice, g.s), "H2D");
    } else {
      MPI_Recv(rb, n, MPI_BYTE, g.peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (d) cuda_check(cudaMemcpyAsync(g.rbuf, g.hrbuf, size, cudaMemcpyHostToDevice, g.s), "H2D");
      cuda_check(launch_compute(g.write_kernel, g.sbuf, size, i, g.s), "kernel");
      if (d) cuda_check(cudaMemcpyAsync(g.hsbuf, g.sbuf, size, cudaMemcpyDeviceToHost, g.s), "D2H");
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      MPI_Send(sb, n, MPI_BYTE, g.peer, 1, MPI_COMM_WORLD);
    }
  }
  cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

// Host cost of one MPIX_Isend_enqueue call: rank 0 enqueues sends in windows of 64, timing each
// call; rank 1 receives them. Returns the median (us) and prints the mean thread CPU time.
double isend_cpu(const Options &o, std::size_t size, int iters, int warmup) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, 1);
  MPI_Comm comm = g.comm_for("memop");
  const int n = static_cast<int>(size), w = 64;
  std::vector<MPI_Request> reqs(w);
  std::vector<double> per_call;
  double cpu_total = 0;
  const int total = iters + warmup;
  for (int done = 0; done < total; done += w) {
    const int m = std::min(w, total - done);
    if (g.rank == 0) {
      timespec c0, c1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      for (int k = 0; k < m; ++k) {
        auto a = std::chrono::steady_clock::now();
        check(MPIX_Isend_enqueue(g.sbuf, n, MPI_BYTE, 1, 2, comm, &reqs[k]), "MPIX_Isend_enqueue");
        auto b = std::chrono::steady_clock::now();
        if (done + k >= warmup)
          per_call.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      }
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      if (done >= warmup)
        cpu_total += (c1.tv_sec - c0.tv_sec) * 1e6 + (c1.tv_nsec - c0.tv_nsec) / 1e3;
    } else {
      for (int k = 0; k < m; ++k)
        check(MPIX_Irecv_enqueue(g.rbuf, n, MPI_BYTE, 0, 2, comm, &reqs[k]), "MPIX_Irecv_enqueue");
    }
    check(MPIX_Waitall_enqueue(m, reqs.data(), MPI_STATUSES_IGNORE), "MPIX_Waitall_enqueue");
    cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g.rank != 0) return 0;
  std::sort(per_call.begin(), per_call.end());
  double med = per_call[per_call.size() / 2];
  std::printf(
      "# isend-cpu %zu B: median %.3f us, p90 %.3f us, mean thread CPU %.3f us per call "
      "(%zu calls)\n",
      size, med, per_call[per_call.size() * 9 / 10],
      cpu_total / static_cast<double>(per_call.size()), per_call.size());
  return med;
}

// Host cost of a halo exchange as codes write it: each rank, every iteration, launches the
// kernel that writes its message, then MPIX_Irecv_enqueue from the peer, MPIX_Isend_enqueue to
// it and one MPIX_Waitall_enqueue of the two, and never waits inside the loop (a stream
// synchronize every 64 iterations bounds what is in flight). Prints the medians of each call.
double exchange_cpu(const Options &o, std::size_t size, int iters, int warmup) {
  // MPIX_BENCH_SYNC_EVERY=K: the host waits for the stream every K iterations (default 64; 1 is
  // a code that synchronises after each exchange, whose next one finds mpix's agent idle).
  static const int sync_every = [] {
    const char *v = std::getenv("MPIX_BENCH_SYNC_EVERY");
    const int k = v ? std::atoi(v) : 64;
    return k > 0 ? k : 64;
  }();
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size, 1);
  MPI_Comm comm = g.comm_for("memop");
  const int n = static_cast<int>(size);
  std::vector<double> t_kernel, t_recv, t_send, t_wait, t_iter;
  using C = std::chrono::steady_clock;
  auto us = [](C::time_point a, C::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  MPI_Barrier(MPI_COMM_WORLD);
  C::time_point t0 = C::now();
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) t0 = C::now();
    MPI_Request r[2];
    const auto a = C::now();
    cuda_check(launch_compute(g.write_kernel, g.sbuf, size, i, g.s), "kernel");
    const auto b = C::now();
    check(MPIX_Irecv_enqueue(g.rbuf, n, MPI_BYTE, g.peer, 4, comm, &r[0]), "MPIX_Irecv_enqueue");
    const auto c = C::now();
    check(MPIX_Isend_enqueue(g.sbuf, n, MPI_BYTE, g.peer, 4, comm, &r[1]), "MPIX_Isend_enqueue");
    const auto d = C::now();
    check(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE), "MPIX_Waitall_enqueue");
    const auto e = C::now();
    if (i >= warmup) {
      t_kernel.push_back(us(a, b));
      t_recv.push_back(us(b, c));
      t_send.push_back(us(c, d));
      t_wait.push_back(us(d, e));
      t_iter.push_back(us(a, e));
    }
    if ((i + 1) % sync_every == 0) host_wait(g.s);
  }
  host_wait(g.s);
  const double wall = us(t0, C::now()) / iters;
  MPI_Barrier(MPI_COMM_WORLD);
  auto med = [](std::vector<double> &v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double it = med(t_iter);
  if (g.rank == 0)
    std::printf(
        "# exchange-cpu %zu B, medians of %zu iterations (us): kernel launch %.3f, "
        "MPIX_Irecv_enqueue %.3f, MPIX_Isend_enqueue %.3f, MPIX_Waitall_enqueue(2) %.3f, "
        "iteration %.3f; wall time per iteration (waits included) %.3f\n",
        size, t_iter.size(), med(t_kernel), med(t_recv), med(t_send), med(t_wait), it, wall);
  return it;
}

// A residual or dot product per iteration (see the header): enqueued, or host-synchronised
// with @p sync. Both ranks do the same; time per iteration, the host waiting only every 64.
double allreduce_latency(const Options &o, std::size_t size, int iters, int warmup, bool sync) {
  GpuCtx &g = gpu_ctx(o);
  g.reserve(size < 8 ? 8 : size, 1);
  MPI_Comm comm = sync ? MPI_COMM_WORLD : g.comm_for("memop");
  const int n = size < 8 ? 1 : static_cast<int>(size / 8);
  const std::size_t bytes = static_cast<std::size_t>(n) * 8;
  const bool d = g.device_buffers;
  std::vector<double> per_call;
  using C = std::chrono::steady_clock;
  double t0 = 0;
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) {
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    cuda_check(launch_compute(g.write_kernel, g.sbuf, bytes, i, g.s), "kernel");
    if (sync) {
      void *sb = d ? g.hsbuf : g.sbuf, *rb = d ? g.hrbuf : g.rbuf;
      if (d)
        cuda_check(cudaMemcpyAsync(g.hsbuf, g.sbuf, bytes, cudaMemcpyDeviceToHost, g.s), "D2H");
      cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
      MPI_Allreduce(sb, rb, n, MPI_DOUBLE, MPI_SUM, comm);
      if (d)
        cuda_check(cudaMemcpyAsync(g.rbuf, g.hrbuf, bytes, cudaMemcpyHostToDevice, g.s), "H2D");
      continue;
    }
    const auto a = C::now();
    check(MPIX_Allreduce_enqueue(g.sbuf, g.rbuf, n, MPI_DOUBLE, MPI_SUM, comm),
          "MPIX_Allreduce_enqueue");
    const auto b = C::now();
    if (i >= warmup) per_call.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    if ((i + 1) % 64 == 0) host_wait(g.s);
  }
  cuda_check(cudaStreamSynchronize(g.s), "cudaStreamSynchronize");
  const double per_iter = (MPI_Wtime() - t0) * 1e6 / iters;
  if (g.rank == 0 && !per_call.empty()) {
    std::sort(per_call.begin(), per_call.end());
    std::printf("# allreduce %zu B: MPIX_Allreduce_enqueue host time median %.3f us, p90 %.3f us\n",
                bytes, per_call[per_call.size() / 2], per_call[per_call.size() * 9 / 10]);
  }
  return per_iter;
}

LatencyFn gpu_only(const char *name, LatencyFn f) {
  return [name, f](const Options &o, std::size_t s, int i, int w) {
    if (o.device != "cuda") {
      std::fprintf(stderr, "mode %s needs -d cuda\n", name);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return f(o, s, i, w);
  };
}

}  // namespace

void register_gpu_latency_modes(std::map<std::string, LatencyFn> &modes) {
  LatencyFn host_enqueue = modes["enqueue"];
  modes["enqueue"] = [host_enqueue](const Options &o, std::size_t s, int i, int w) {
    return o.device == "cuda" ? enqueue_latency(o, "memop", s, i, w) : host_enqueue(o, s, i, w);
  };
  modes["mpi-sync"] = gpu_only("mpi-sync", mpi_sync_latency);
  modes["enqueue-hostfn"] =
      gpu_only("enqueue-hostfn", [](const Options &o, std::size_t s, int i, int w) {
        return enqueue_latency(o, "hostfn", s, i, w);
      });
  modes["enqueue-kernel"] =
      gpu_only("enqueue-kernel", [](const Options &o, std::size_t s, int i, int w) {
        return enqueue_latency(o, "kernel", s, i, w);
      });
  modes["isend-cpu"] = gpu_only("isend-cpu", isend_cpu);
  modes["exchange-cpu"] = gpu_only("exchange-cpu", exchange_cpu);
  modes["allreduce"] = gpu_only("allreduce", [](const Options &o, std::size_t s, int i, int w) {
    return allreduce_latency(o, s, i, w, false);
  });
  modes["allreduce-sync"] =
      gpu_only("allreduce-sync", [](const Options &o, std::size_t s, int i, int w) {
        return allreduce_latency(o, s, i, w, true);
      });
  register_nccl_latency(modes);
}

}  // namespace bench
