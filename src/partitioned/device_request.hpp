// MPIX_Prequest: a partitioned request exported to GPU kernels. The handle IS the address of
// its descriptor (struct mpix_prequest_s, mpix/mpix_device.h) in host memory the device can
// read: pinned memory of the GPU backend when one runs here, plain host memory otherwise
// (then host threads use the same header's inline calls). The descriptor points at the
// request's signal words, which the GPU backend maps for the device at their host addresses.
#pragma once

#include <memory>

#include "core/status.hpp"
#include "mpix/mpix.h"

namespace mpix {

class PRequest;

Status device_request_create(const std::shared_ptr<PRequest> &r, MPIX_Prequest *out);
Status device_request_free(MPIX_Prequest p);

}  // namespace mpix
