#include "gpu/cuda/cuda_backend.hpp"

#include "gpu/common/gpu_backend.hpp"
#include "gpu/cuda/cuda_api.hpp"

namespace mpix {

Status cuda_backend_get(Backend **out) {
  // Never destroyed: streams and signal registrations may outlive static destruction.
  static auto *b = new GpuBackend<CudaApi>;
  MPIX_TRY(b->start());
  *out = b;
  return {};
}

}  // namespace mpix
