#include "partitioned/round_mirror.hpp"

#include <mutex>

#ifdef MPIX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mpix {

Status device_write(Backend *be, int device, void *dst, const void *src, std::size_t n) {
#ifdef MPIX_HAVE_CUDA
  // copy_sync copies on the current device's private stream: make @p device current.
  int current = -1;
  cudaError_t rc = cudaGetDevice(&current);
  if (rc == cudaSuccess && current != device) rc = cudaSetDevice(device);
  if (rc != cudaSuccess)
    return make_status(MPI_ERR_OTHER, "selecting device %d: %s", device, cudaGetErrorString(rc));
  Status st = be->copy_sync(dst, src, n);
  if (current != device) cudaSetDevice(current);
  return st;
#else
  (void)device;
  return be->copy_sync(dst, src, n);
#endif
}

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
  for (const RoundMirror &m : w.mirrors)
    MPIX_TRY(device_write(m.backend, m.device, m.word, &value, 8));
  return {};
}

Status device_marks_store(PWords &w, const int *parts, int n, uint64_t value) {
  // Runs of consecutive partitions in one copy each.
  std::vector<uint64_t> values;
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && parts[j] == parts[j - 1] + 1) ++j;
    values.assign(static_cast<std::size_t>(j - i), value);
    MPIX_TRY(device_write(w.dmarks_backend, w.dmarks_device, w.dmarks + parts[i], values.data(),
                          values.size() * sizeof(uint64_t)));
    i = j;
  }
  return {};
}

}  // namespace mpix
