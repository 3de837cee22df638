// The GPU benchmark context: device per local rank, stream, buffers, stream communicators.
#include <cstdio>
#include <cstdlib>

#include "gpu_bench.hpp"

namespace bench {

void cuda_check(cudaError_t rc, const char *what) {
  if (rc == cudaSuccess) return;
  std::fprintf(stderr, "bench: %s failed: %s\n", what, cudaGetErrorString(rc));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void GpuCtx::reserve(std::size_t bytes, int slots) {
  if (bytes < max_size) bytes = max_size;
  std::size_t want = (bytes ? bytes : 1) * static_cast<std::size_t>(slots);
  if (want <= cap) return;
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  auto release = [&](void *&p, bool dev) {
    if (!p) return;
    cuda_check(dev ? cudaFree(p) : cudaFreeHost(p), "free");
    p = nullptr;
  };
  release(sbuf, device_buffers);
  release(rbuf, device_buffers);
  release(hsbuf, false);
  release(hrbuf, false);
  for (void **p : {&sbuf, &rbuf})
    cuda_check(device_buffers ? cudaMalloc(p, want) : cudaMallocHost(p, want), "buffer alloc");
  cuda_check(cudaMallocHost(&hsbuf, want), "staging alloc");
  cuda_check(cudaMallocHost(&hrbuf, want), "staging alloc");
  cuda_check(cudaMemset(sbuf, 1, want), "cudaMemset");
  cuda_check(cudaMemset(rbuf, 0, want), "cudaMemset");
  cap = want;
}

MPI_Comm GpuCtx::comm_for(const std::string &trigger) {
  auto it = comms.find(trigger);
  if (it != comms.end()) return it->second;
  MPIX_Stream st = make_stream("cudaStream_t", &s, sizeof s, trigger.c_str());
  MPI_Comm c;
  check(MPIX_Stream_comm_create(MPI_COMM_WORLD, st, &c), "MPIX_Stream_comm_create");
  streams[trigger] = st;
  comms[trigger] = c;
  return c;
}

int use_local_gpu(int *ndev) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  cuda_check(cudaGetDeviceCount(ndev), "cudaGetDeviceCount");
  const int device = local % *ndev;
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

GpuCtx &gpu_ctx(const Options &o) {
  static GpuCtx *g = [&] {
    auto *c = new GpuCtx;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    c->peer = c->rank ^ 1;  // pairs (0, 1), (2, 3), ...
    int ndev = 0;
    c->device = use_local_gpu(&ndev);
    // --host-wait: how host threads wait in cudaStreamSynchronize (also what
    // MPIX_Stream_synchronize calls on a CUDA stream). The default (auto) spins when the
    // process has fewer contexts than CPUs. Set before the bench's first use of the context;
    // on an already active primary context it replaces the flags.
    if (!o.host_wait.empty()) {
      const unsigned f = o.host_wait == "spin"    ? cudaDeviceScheduleSpin
                         : o.host_wait == "yield" ? cudaDeviceScheduleYield
                                                  : cudaDeviceScheduleBlockingSync;
      cuda_check(cudaSetDeviceFlags(f), "cudaSetDeviceFlags");
    }
    cuda_check(load_bench_kernels(), "loading the benchmark kernels");
    cuda_check(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking), "cudaStreamCreate");
    // OSU placement: first letter rank 0, second letter rank 1.
    char mine = o.buffers.size() >= 3 ? o.buffers[c->rank % 2 == 0 ? 0 : 2] : 'H';
    c->device_buffers = mine == 'D';
    // --set alloc=grow: re-allocate as sizes grow instead (a freed send buffer's place used
    // again: how GPU-direct fares with codes that re-allocate their buffers).
    auto a = o.extra.find("alloc");
    c->max_size = a != o.extra.end() && a->second == "grow" ? 0 : o.max_size;
    auto k = o.extra.find("kernel");
    c->write_kernel = k != o.extra.end() && k->second == "write";
    auto l = o.extra.find("launch");
    const bool pdl = l != o.extra.end() && l->second == "pdl";
    set_compute_pdl(pdl);
    if (c->rank == 0) {
      cudaDeviceProp p{};
      cudaGetDeviceProperties(&p, c->device);
      unsigned flags = 0;
      cuda_check(cudaGetDeviceFlags(&flags), "cudaGetDeviceFlags");
      const unsigned sched = flags & cudaDeviceScheduleMask;
      std::printf(
          "# GPU: %s (rank 0 on device %d of %d); kernel before each send: %s%s; "
          "host wait: %s\n",
          p.name, c->device, ndev, c->write_kernel ? "writes the message" : "empty",
          pdl ? " (programmatic dependent launch)" : "",
          sched == cudaDeviceScheduleSpin           ? "spin"
          : sched == cudaDeviceScheduleYield        ? "yield"
          : sched == cudaDeviceScheduleBlockingSync ? "block"
                                                    : "auto");
      std::fflush(stdout);
    }
    return c;
  }();
  return *g;
}

}  // namespace bench
