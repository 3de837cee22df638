#include "gpu/hip/hip_backend.hpp"

#include "gpu/backend_entry.hpp"
#include "gpu/common/gpu_backend.hpp"
#include "gpu/hip/hip_api.hpp"

namespace mpix {

Status hip_backend_get(Backend **out) {
  // Process-wide, not the Runtime's (core/runtime.hpp), and never destroyed: streams of the
  // application use it without MPI, and they and its signal registrations outlive MPI_Finalize
  // and static destruction.
  static auto *b = new GpuBackend<HipApi>;
  MPIX_TRY(b->start());
  *out = b;
  return {};
}

extern const BackendEntry k_hip_backend = {
    "hip", {StreamKind::hip, StreamKind::hip}, hip_backend_get};

}  // namespace mpix
