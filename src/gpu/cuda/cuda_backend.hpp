// Stream backend "cuda": cudaStream_t streams (gpu/common/gpu_backend.hpp over CudaApi).
#pragma once

#include "base/status.hpp"

namespace mpix {
class Backend;
// The CUDA backend, started on first use; an error says why it cannot run (no driver, no
// device, a driver without stream memory operations).
Status cuda_backend_get(Backend **out);
}  // namespace mpix
