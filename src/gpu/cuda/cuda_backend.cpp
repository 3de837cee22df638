#include "gpu/cuda/cuda_backend.hpp"

#include "gpu/backend_entry.hpp"
#include "gpu/common/gpu_backend.hpp"
#include "gpu/cuda/cuda_api.hpp"

namespace mpix {

Status cuda_backend_get(Backend **out) {
  // Process-wide, not the Runtime's (core/runtime.hpp), and never destroyed: streams of the
  // application use it without MPI, and they and its signal registrations outlive MPI_Finalize
  // and static destruction.
  static auto *b = new GpuBackend<CudaApi>;
  MPIX_TRY(b->start());
  *out = b;
  return {};
}

extern const BackendEntry k_cuda_backend = {
    "cuda", {StreamKind::cuda, StreamKind::cuda}, cuda_backend_get};

}  // namespace mpix
