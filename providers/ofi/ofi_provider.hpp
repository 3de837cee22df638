// Provider "ofi": libfabric tagged messages on an FI_EP_RDM endpoint (DESIGN.md §3).
//
// Native triggers (the libfabric provider has FI_TRIGGER, e.g. sockets): arm() posts each send
// and receive at enqueue time as a triggered operation whose threshold is on the stream's
// libfabric counter; when the stream reaches the op, fire() is fi_cntr_add(counter, 1) and
// libfabric posts it. A triggered receive sits in the counter's trigger list, not in the
// receive queue, until then, so it cannot match (or write the buffer) before the stream
// reaches it; the start-up self-test checks exactly that.
//
// Emulated triggers (tcp, shm, udp;ofi_rxd, verbs;ofi_rxm, or MPIX_OFI_NATIVE_TRIGGER=0): mpix
// keeps the deferred work itself; fire() posts the op. Either way allreduce goes to provider
// mpi in the collective slot (core/provider.hpp).
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
