// The start-up self-test of a libfabric provider, run before the provider is used: tagged
// messages to this process's own endpoint, and, for native triggers, proof that a triggered
// receive does not match before its counter reaches the threshold and that a triggered send
// waits for its counter too. Local (no other rank is involved).
#pragma once

#include <memory>
#include <string>

#include "core/status.hpp"

namespace mpix {

class Fabric;

// On failure the fabric is closed (reset) before returning: posted test ops may still refer to
// the test's buffers.
Status ofi_self_test(std::unique_ptr<Fabric> &fabric, bool native);

}  // namespace mpix
