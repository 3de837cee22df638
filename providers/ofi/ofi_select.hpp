// Making provider ofi (ofi_select.cpp): the factory MPIX_PROVIDER=ofi calls, which picks the
// libfabric provider and runs its self-test; what tests can ask of the provider in use; and the
// hardware-trigger probe MPIX_PROVIDER=auto uses. The class is in ofi_provider.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/provider.hpp"

namespace mpix {

// The ofi provider for MPIX_OFI_PROVIDER (a libfabric provider name, or auto: the first of a
// ranked list that opens and passes the self-test). @p why says what was chosen and tried.
Status make_ofi_provider(std::unique_ptr<Provider> *out, std::string *why);

// What tests can check of the provider in use: whether it is ofi, whether it posts native
// triggered ops, and how many libfabric trigger counters it has opened so far (each stream
// opens its own, and a fresh one when a counter is full or near sockets' threshold limit).
struct OfiTestInfo {
  bool active = false;
  bool native = false;
  uint64_t counters_opened = 0;
};
OfiTestInfo ofi_test_info();

// True when a libfabric provider that fires triggered operations in NIC hardware is present
// (then MPIX_PROVIDER=auto prefers ofi); @p why says what was found.
bool ofi_hardware_triggers(std::string *why);

}  // namespace mpix
