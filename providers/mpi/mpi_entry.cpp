// Provider mpi's registration (providers/provider_entry.hpp): always available, and the last
// that MPIX_PROVIDER=auto tries.
#include "providers/mpi/mpi_provider.hpp"
#include "providers/provider_entry.hpp"

namespace mpix {
namespace {

bool mpi_auto_takes(std::string *why) {
  *why = "always available; interoperates with plain MPI on the peer";
  return true;
}

Status mpi_make(std::unique_ptr<Provider> *out, std::string *why) {
  *why = "always available; interoperates with plain MPI on the peer";
  *out = make_mpi_provider();
  return {};
}

// The collective slot beside a provider without collectives (ofi): MPI_Iallreduce.
Status mpi_make_collective(std::unique_ptr<Provider> *out) {
  *out = make_mpi_provider();
  return {};
}

}  // namespace

extern const ProviderEntry k_mpi_provider = {"mpi", mpi_auto_takes, mpi_make, mpi_make_collective};

}  // namespace mpix
