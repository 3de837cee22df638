// The start-up self-test of a libfabric provider, run before the provider is used: tagged
// messages to this process's own endpoint, wildcard matching of a message that arrived before
// its receive, and, for native triggers, proof that a triggered receive does not match before
// its counter reaches the threshold and that a triggered send waits for its counter too. Local
// (no other rank is involved).
#pragma once

#include <memory>
#include <string>

#include "base/status.hpp"

namespace mpix {

class Fabric;

// Tagged messages to this endpoint. *wildcards_ok tells whether a receive with ignore bits
// matches a message that had already arrived (libfabric 1.17's shm fails this: then mpix does
// its own matching, soft_match.hpp). On failure the fabric is closed (reset) before returning:
// posted test ops may still refer to the test's buffers.
Status ofi_self_test(std::unique_ptr<Fabric> &fabric, bool *wildcards_ok);
// Triggered receives and sends wait for their counter (native triggers). Fabric as above.
Status ofi_self_test_triggers(std::unique_ptr<Fabric> &fabric);

}  // namespace mpix
