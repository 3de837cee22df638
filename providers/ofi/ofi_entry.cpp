// Provider ofi's registration (providers/provider_entry.hpp). MPIX_PROVIDER=auto takes it only
// where a NIC fires triggered ops itself: elsewhere its triggers are software too, and provider
// mpi is faster here (docs/results-ofi.md) and lets the peer use plain MPI calls on the stream
// communicator. It carries no collectives: provider mpi fills the collective slot beside it.
#include "providers/ofi/ofi_select.hpp"
#include "providers/provider_entry.hpp"

namespace mpix {

extern const ProviderEntry k_ofi_provider = {"ofi", ofi_hardware_triggers, make_ofi_provider,
                                             nullptr};

}  // namespace mpix
