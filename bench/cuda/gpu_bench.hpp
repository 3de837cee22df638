// Shared state of the GPU benchmark modes (-d cuda): one GPU per rank, a CUDA stream, the OSU
// buffer placement (D = device memory, H = pinned host memory), and mpix stream communicators
// per trigger mode.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>
#include <map>
#include <string>

#include "../bench_common.hpp"

namespace bench {

// Launches the per-iteration kernel: empty, or (write) one that writes @p n bytes of @p buf.
cudaError_t launch_compute(bool write, void *buf, std::size_t n, int iter, cudaStream_t s);
// --set launch=pdl: launch_compute's kernels go as programmatic dependents of the kernel before.
void set_compute_pdl(bool on);
cudaError_t load_bench_kernels();

void cuda_check(cudaError_t rc, const char *what);

struct GpuCtx {
  int rank = 0, peer = 1, device = 0;
  cudaStream_t s = nullptr;
  bool device_buffers = false;  // this rank's placement is D
  bool write_kernel = false;    // --set kernel=write
  std::size_t cap = 0;
  std::size_t max_size = 0;               // -m's largest size: the buffers are made for it at once
  void *sbuf = nullptr, *rbuf = nullptr;  // in the rank's placement
  void *hsbuf = nullptr, *hrbuf = nullptr;  // pinned host staging (mpi-sync with D)
  std::map<std::string, MPI_Comm> comms;    // per trigger mode
  std::map<std::string, MPIX_Stream> streams;

  // Grows the buffers to @p bytes (x @p slots for the host staging of windows), at least to
  // max_size x @p slots: as OSU's benchmarks do, every size of a run uses the same allocations
  // (re-allocating as sizes grow measures the allocator and mpix's handling of freed buffers,
  // not a message's latency).
  void reserve(std::size_t bytes, int slots);
  // Stream communicator whose stream uses trigger mode @p trigger (made on first use).
  MPI_Comm comm_for(const std::string &trigger);
};

// Makes the GPU of the rank's place on its node (local rank % devices) current; returns it, and
// the number of devices in *@p ndev.
int use_local_gpu(int *ndev);

// The process's GPU context, made on first use (after MPI_Init) from the options.
GpuCtx &gpu_ctx(const Options &o);

}  // namespace bench
