// mpix_scale -d cuda: stream communicators of CUDA streams (non-blocking, on the rank's GPU: local
// rank % devices), buffers in pinned host or device memory. What the host pays per enqueue call
// then includes the CUDA driver's share (a stream memory operation per trigger unless
// MPIX_DEFER_TRIGGER batches them), and no host-stream worker threads share the cores.
#include <cstdio>
#include <memory>

#include "gpu_bench.hpp"

namespace bench {
namespace {

struct CudaScaleComm final : ScaleComm {
  cudaStream_t s = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  CudaScaleComm() {
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    stream = make_stream("cudaStream_t", &s, sizeof s);
    check(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &c), "MPIX_Stream_comm_create");
  }
  ~CudaScaleComm() override {
    synchronize();
    MPI_Comm_free(&c);
    MPIX_Stream_free(&stream);
    cudaStreamDestroy(s);
  }
  MPI_Comm comm() const override { return c; }
  void synchronize() override { check(MPIX_Stream_synchronize(stream), "MPIX_Stream_synchronize"); }
};

struct CudaScaleBackend final : ScaleBackend {
  bool device;
  explicit CudaScaleBackend(bool device_buffers) : device(device_buffers) {
    int ndev = 0;
    use_local_gpu(&ndev);
  }
  const char *name() const override {
    return device ? "CUDA streams, device buffers" : "CUDA streams, pinned host buffers";
  }
  std::unique_ptr<ScaleComm> make_comm() override { return std::make_unique<CudaScaleComm>(); }
  long *alloc(std::size_t n) override {
    void *p = nullptr;
    const std::size_t bytes = (n ? n : 1) * sizeof(long);
    cuda_check(device ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes), "buffer alloc");
    cuda_check(cudaMemset(p, 0, bytes), "cudaMemset");
    return static_cast<long *>(p);
  }
  void release(long *p) override { cuda_check(device ? cudaFree(p) : cudaFreeHost(p), "free"); }
  void put(long *dst, const long *src, std::size_t n) override {
    cuda_check(cudaMemcpy(dst, src, n * sizeof(long), cudaMemcpyDefault), "cudaMemcpy");
  }
  void get(long *dst, const long *src, std::size_t n) override {
    cuda_check(cudaMemcpy(dst, src, n * sizeof(long), cudaMemcpyDefault), "cudaMemcpy");
  }
};

}  // namespace

std::unique_ptr<ScaleBackend> cuda_scale_backend(bool device_buffers) {
  return std::make_unique<CudaScaleBackend>(device_buffers);
}

}  // namespace bench
