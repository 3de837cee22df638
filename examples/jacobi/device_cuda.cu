// The Jacobi compute on a cudaStream_t: kernels on device memory. The same steps as the host
// device (device_host.cpp), with the same per-point arithmetic (stencil.hpp).
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "device.hpp"
#include "mpix/mpix_device.h"
#include "stencil.hpp"

namespace jacobi {
namespace {

void cuda_check(cudaError_t e, const char *expr, int line) {
  if (e == cudaSuccess) return;
  throw std::runtime_error(std::string("device_cuda.cu:") + std::to_string(line) + ": " + expr +
                           ": " + cudaGetErrorString(e));
}
#define JACOBI_CUDA_CHECK(expr) cuda_check((expr), #expr, __LINE__)

// Device "cuda-pdl" launches every kernel as a programmatic dependent of the kernel before it
// on the stream (compute capability 9.0 and later): the GPU may start it as soon as that
// kernel's blocks have ended, so each kernel waits here, first, for that kernel's end and
// memory (this also orders it after mpix's kernels, which go the same way). Launched plainly,
// this returns at once.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

__global__ void jacobi_kernel(const double *__restrict__ u, double *__restrict__ unew, int nx,
                              int ny) {
  wait_for_previous_kernel();
  const long x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  const long y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x > nx || y > ny) return;
  const long w = nx + 2;
  unew[y * w + x] =
      update(u[(y - 1) * w + x], u[(y + 1) * w + x], u[y * w + x - 1], u[y * w + x + 1]);
}

// One thread per halo cell index i < max(nx, ny): [N nx | S nx | W ny | E ny].
__global__ void pack_kernel(const double *__restrict__ u, int nx, int ny,
                            double *__restrict__ send) {
  wait_for_previous_kernel();
  const long i = blockIdx.x * blockDim.x + threadIdx.x;
  const long w = nx + 2;
  if (i < nx) {
    send[i] = u[w + 1 + i];
    send[nx + i] = u[ny * w + 1 + i];
  }
  if (i < ny) {
    send[2 * nx + i] = u[(i + 1) * w + 1];
    send[2 * nx + ny + i] = u[(i + 1) * w + nx];
  }
}

// The partitioned variant's pack: block (k, side) writes partition k of that side's halo, then
// one thread marks it ready. Only the sides with partitions are packed (a side without a
// neighbour has none).
__global__ void pack_pready_kernel(const double *__restrict__ u, int nx, int ny,
                                   double *__restrict__ send, HaloReady ready) {
  wait_for_previous_kernel();
  const int side = blockIdx.y, k = blockIdx.x, parts = ready.parts[side];
  if (k >= parts) return;  // the whole block: no thread of it reaches the barrier below
  const long w = nx + 2;
  const long first[4] = {w + 1, ny * w + 1, w + 1, w + nx};  // the side's cell 0 in u
  const long step[4] = {1, 1, w, w};                         // to its next cell
  const long off[4] = {0, nx, 2 * nx, 2 * nx + ny};          // its halo in send
  const long per = (side < 2 ? nx : ny) / parts;
  for (long i = k * per + threadIdx.x; i < (k + 1) * per; i += blockDim.x)
    send[off[side] + i] = u[first[side] + i * step[side]];
  // Every thread's writes are done (and visible to thread 0) before thread 0 marks the
  // partition; its MPIX_Pready is a system-scope release, so the data reaches host memory
  // before the mark does (mpix_device.h). A misuse is recorded in the request and returned by
  // the host's next call on it.
  __syncthreads();
  if (threadIdx.x == 0) MPIX_Pready(k, ready.preq[side]);
}

__global__ void unpack_kernel(const double *__restrict__ recv, int nx, int ny, unsigned have,
                              double *__restrict__ u) {
  wait_for_previous_kernel();
  const long i = blockIdx.x * blockDim.x + threadIdx.x;
  const long w = nx + 2;
  if (i < nx) {
    if (have & (1u << kNorth)) u[1 + i] = recv[i];
    if (have & (1u << kSouth)) u[(ny + 1) * w + 1 + i] = recv[nx + i];
  }
  if (i < ny) {
    if (have & (1u << kWest)) u[(i + 1) * w] = recv[2 * nx + i];
    if (have & (1u << kEast)) u[(i + 1) * w + nx + 1] = recv[2 * nx + ny + i];
  }
}

constexpr int kReduceThreads = 256;

// Sum of squared differences: grid-stride partial sums, a block tree, one atomicAdd per block.
// The order of the sum differs from the host's; the tests allow for that (main.cpp).
__global__ void residual_kernel(const double *__restrict__ u, const double *__restrict__ unew,
                                int nx, int ny, double *sum) {
  wait_for_previous_kernel();
  __shared__ double part[kReduceThreads];
  double s = 0;
  const long n = static_cast<long>(nx) * ny;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long idx = (k / nx + 1) * (nx + 2) + k % nx + 1;
    const double d = unew[idx] - u[idx];
    s += d * d;
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) part[threadIdx.x] += part[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

class CudaDevice final : public Device {
 public:
  CudaDevice(int device, bool pdl) : pdl_(pdl) {
    JACOBI_CUDA_CHECK(cudaSetDevice(device));
    // Load every kernel now: with lazy module loading a kernel's first launch may synchronise
    // the context, and a launch behind a stream blocked in an mpix wait would then never
    // return (docs/migrating.md; run with CUDA_MODULE_LOADING=EAGER as well).
    cudaFuncAttributes attr;
    JACOBI_CUDA_CHECK(cudaFuncGetAttributes(&attr, jacobi_kernel));
    JACOBI_CUDA_CHECK(cudaFuncGetAttributes(&attr, pack_kernel));
    JACOBI_CUDA_CHECK(cudaFuncGetAttributes(&attr, pack_pready_kernel));
    JACOBI_CUDA_CHECK(cudaFuncGetAttributes(&attr, unpack_kernel));
    JACOBI_CUDA_CHECK(cudaFuncGetAttributes(&attr, residual_kernel));
    JACOBI_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    JACOBI_CUDA_CHECK(cudaMalloc(&sum_, sizeof(double)));
    for (auto &e : events_) JACOBI_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~CudaDevice() override {
    cudaStreamSynchronize(stream_);
    for (auto &e : events_) cudaEventDestroy(e);
    cudaFree(sum_);
    cudaStreamDestroy(stream_);
  }

  const char *name() const override { return pdl_ ? "cuda-pdl" : "cuda"; }

  double *alloc(std::size_t n) override {
    void *p = nullptr;
    JACOBI_CUDA_CHECK(cudaMalloc(&p, (n ? n : 1) * sizeof(double)));
    JACOBI_CUDA_CHECK(cudaMemset(p, 0, (n ? n : 1) * sizeof(double)));
    return static_cast<double *>(p);
  }
  void free(double *p) override { cudaFree(p); }
  double *alloc_host(std::size_t n) override {
    void *p = nullptr;
    JACOBI_CUDA_CHECK(cudaMallocHost(&p, (n ? n : 1) * sizeof(double)));
    return static_cast<double *>(p);
  }
  void free_host(double *p) override { cudaFreeHost(p); }
  bool host_accessible() const override { return false; }
  // On the solver's stream: the legacy default stream does not order with a non-blocking one.
  void upload(double *dst, const double *src, std::size_t n) override {
    copy_async(dst, src, n);
    synchronize();
  }
  void download(double *dst, const double *src, std::size_t n) override {
    copy_async(dst, src, n);
    synchronize();
  }
  void copy_async(double *dst, const double *src, std::size_t n) override {
    JACOBI_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(double), cudaMemcpyDefault, stream_));
  }

  void jacobi(const double *u, double *unew, int nx, int ny) override {
    const dim3 block(32, 8);
    const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
    launch(jacobi_kernel, grid, block, u, unew, nx, ny);
  }
  void pack(const double *u, int nx, int ny, double *send) override {
    const int n = nx > ny ? nx : ny;
    launch(pack_kernel, dim3((n + 255) / 256), dim3(256), u, nx, ny, send);
  }
  void pack_pready(const double *u, int nx, int ny, double *send, const HaloReady &ready) override {
    int most = 0;
    for (int p : ready.parts) most = p > most ? p : most;
    if (most == 0) return;  // no neighbours
    launch(pack_pready_kernel, dim3(most, 4), dim3(256), u, nx, ny, send, ready);
  }
  void unpack(const double *recv, int nx, int ny, SideMask have, double *u) override {
    const int n = nx > ny ? nx : ny;
    launch(unpack_kernel, dim3((n + 255) / 256), dim3(256), recv, nx, ny, have, u);
  }
  void residual(const double *u, const double *unew, int nx, int ny, double *host_out) override {
    const long n = static_cast<long>(nx) * ny;
    long blocks = (n + kReduceThreads - 1) / kReduceThreads;
    if (blocks > 1024) blocks = 1024;
    JACOBI_CUDA_CHECK(cudaMemsetAsync(sum_, 0, sizeof(double), stream_));
    launch(residual_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kReduceThreads), u, unew, nx,
           ny, sum_);
    JACOBI_CUDA_CHECK(
        cudaMemcpyAsync(host_out, sum_, sizeof(double), cudaMemcpyDeviceToHost, stream_));
  }

  long mark() override {
    const long ticket = ++issued_;
    JACOBI_CUDA_CHECK(cudaEventRecord(events_[ticket % kEvents], stream_));
    return ticket;
  }
  void wait_mark(long ticket) override {
    if (ticket <= issued_ - kEvents)  // its event was recorded again since: long passed
      return synchronize();
    JACOBI_CUDA_CHECK(cudaEventSynchronize(events_[ticket % kEvents]));
  }
  void synchronize() override { JACOBI_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  int make_mpix_stream(MPIX_Stream *out) override {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "cudaStream_t");
    int rc = MPIX_Info_set_hex(info, "value", &stream_, sizeof stream_);
    if (rc == MPI_SUCCESS) rc = MPIX_Stream_create(info, out);
    MPI_Info_free(&info);
    return rc;
  }

 private:
  // Launches @p k on the stream: plainly, or (cuda-pdl) as a programmatic dependent.
  template <class... P, class... A>
  void launch(void (*k)(P...), dim3 grid, dim3 block, A... args) {
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = stream_;
    cfg.attrs = pdl_ ? &attr : nullptr;
    cfg.numAttrs = pdl_ ? 1 : 0;
    JACOBI_CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, static_cast<P>(args)...));
  }

  static constexpr int kEvents = 8;
  bool pdl_ = false;
  cudaStream_t stream_ = nullptr;
  double *sum_ = nullptr;
  cudaEvent_t events_[kEvents] = {};
  long issued_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(MPI_Comm comm, std::string *why, bool pdl) {
  // One GPU per rank on a node: the node-local rank picks it. (Collective: before any early
  // return, so that every rank takes part.)
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return nullptr;
  }
  return std::make_unique<CudaDevice>(local % count, pdl);
}

}  // namespace jacobi
