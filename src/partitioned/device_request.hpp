// MPIX_Prequest: a partitioned request exported to GPU kernels. The handle IS the address of
// its descriptor (struct mpix_prequest_s, mpix/mpix_device.h) where the device reads it:
// device memory on CUDA, pinned host memory of the HIP backend, plain host memory without a
// GPU backend (then host threads use the same header's inline calls). The descriptor points
// at the request's signal words in host memory, which the GPU backend maps for the device at
// their host addresses (registered memory; CUDA's "host pointer for registered memory").
#pragma once

#include <memory>

#include "base/status.hpp"
#include "mpix/mpix.h"

namespace mpix {

class PRequest;

Status device_request_create(const std::shared_ptr<PRequest> &r, MPIX_Prequest *out);
Status device_request_free(MPIX_Prequest p);
// The descriptor host code reads (MPIX_Prequest_host_view): @p p itself, its host copy where
// @p p is in device memory, or null for a handle that is no live device request.
MPIX_Prequest device_request_host_view(MPIX_Prequest p);
// MPIX_Prequest_host_marked: copies marks made through host view @p view to the device marks.
Status device_request_host_marked(MPIX_Prequest view, int low, int high, uint64_t mark);
// The first MPIX_Pready_enqueue of send @p r on cudaMalloc memory of the current GPU: the
// request's device marks (PRequest::share_device_marks), made here where no device request
// made them, so that its direct rounds wait for marks in device memory, not for its host
// words across PCIe. Elsewhere (other memory, other builds) nothing.
Status device_marks_for_stream(const std::shared_ptr<PRequest> &r);

}  // namespace mpix
