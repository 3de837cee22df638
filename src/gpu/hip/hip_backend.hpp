// Stream backend "hip": hipStream_t streams (gpu/common/gpu_backend.hpp over HipApi).
#pragma once

#include "base/status.hpp"

namespace mpix {
class Backend;
// The HIP backend, started on first use; an error says why it cannot run (no device).
Status hip_backend_get(Backend **out);
}  // namespace mpix
