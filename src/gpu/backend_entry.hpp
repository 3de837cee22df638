// How a stream backend registers: each backend folder defines one
// BackendEntry (k_<name>_backend), and CMake lists those it builds in the generated
// backend_table.inc (one MPIX_BACKEND_ENTRY(name) line each). gpu/registry.cpp names none.
#pragma once

#include "base/status.hpp"
#include "gpu/backend.hpp"

namespace mpix {

struct BackendEntry {
  const char *name;              // as backends_built() lists it
  StreamKind kinds[2];           // the stream kinds it drives (the second may repeat the first)
  Status (*get)(Backend **out);  // starts it on first use
};

}  // namespace mpix
