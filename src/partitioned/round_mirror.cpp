#include "partitioned/round_mirror.hpp"

#include <mutex>
#include <unordered_map>

#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mpix {

#ifdef MPIX_HAVE_CUDA
namespace {

// One non-blocking stream per device, made on first use and kept for the process (a device
// request may be used after MPI_Finalize).
Status side_stream(int device, cudaStream_t *out) {
  static auto *mu = new std::mutex;
  static auto *streams = new std::unordered_map<int, cudaStream_t>;
  std::lock_guard<std::mutex> lk(*mu);
  auto it = streams->find(device);
  if (it != streams->end()) {
    *out = it->second;
    return {};
  }
  cudaStream_t s = nullptr;
  cudaError_t rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (rc != cudaSuccess)
    return make_status(MPI_ERR_OTHER, "a stream for device requests on device %d: %s", device,
                       cudaGetErrorString(rc));
  (*streams)[device] = s;
  *out = s;
  return {};
}

}  // namespace

Status device_upload(int device, void *dst, const void *src, std::size_t n) {
  int current = -1;
  cudaError_t rc = cudaGetDevice(&current);
  if (rc == cudaSuccess && current != device) rc = cudaSetDevice(device);
  if (rc != cudaSuccess)
    return make_status(MPI_ERR_OTHER, "selecting device %d: %s", device, cudaGetErrorString(rc));
  cudaStream_t s = nullptr;
  Status st = side_stream(device, &s);
  if (st.is_ok()) {
    // From pageable memory the copy may be staged; the synchronize makes it land either way.
    rc = cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s);
    const cudaError_t sync = cudaStreamSynchronize(s);
    if (rc == cudaSuccess) rc = sync;
    if (rc != cudaSuccess)
      st = make_status(MPI_ERR_OTHER, "writing %zu bytes of a device request: %s", n,
                       cudaGetErrorString(rc));
  }
  if (current != device) cudaSetDevice(current);
  return st;
}
#else
Status device_upload(int device, void *dst, const void *src, std::size_t n) {
  (void)dst;
  (void)src;
  return make_status(MPI_ERR_INTERN, "no GPU backend to write %zu bytes on device %d", n, device);
}
#endif

void round_mirrors_append(PWords &w, uint64_t value, std::vector<StreamMemOp> *ops) {
  std::lock_guard<std::mutex> lk(w.mirror_mu);
  for (const RoundMirror &m : w.mirrors) {
    StreamMemOp op{StreamMemOp::write, m.word, value};
    op.device_word = true;
    ops->push_back(op);
  }
}

Status round_mirrors_store(PWords &w, uint64_t value) {
  std::lock_guard<std::mutex> lk(w.mirror_mu);
  for (const RoundMirror &m : w.mirrors) MPIX_TRY(device_upload(m.device, m.word, &value, 8));
  return {};
}

}  // namespace mpix
