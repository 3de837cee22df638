// How a provider registers: each provider folder defines one ProviderEntry,
// and CMake lists the entries of the folders it builds, in the order MPIX_PROVIDER=auto tries
// them, in the generated provider_table.inc (one MPIX_PROVIDER_ENTRY(name) line each; the
// entry's variable is k_<name>_provider). Adding a provider is its folder plus one line in
// providers/CMakeLists.txt; registry.cpp names none of them.
#pragma once

#include <memory>
#include <string>

#include "base/status.hpp"

namespace mpix {

class Provider;

struct ProviderEntry {
  const char *name;  // MPIX_PROVIDER=<name>
  // Whether MPIX_PROVIDER=auto takes it on this machine; *why says why (or why not).
  bool (*auto_takes)(std::string *why);
  // Makes the provider (what it checks, it checks here); *why says what was chosen.
  Status (*make)(std::unique_ptr<Provider> *out, std::string *why);
  // Makes it for the collective slot, beside a p2p provider without collectives (provider.hpp);
  // null where it cannot fill that slot.
  Status (*make_collective)(std::unique_ptr<Provider> *out);
};

}  // namespace mpix
