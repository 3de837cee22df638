// Picks the provider of this process (MPIX_PROVIDER) from those built.
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "providers/mpi/mpi_provider.hpp"
#include "providers/provider.hpp"

#ifdef MPIX_HAVE_OFI
#include "providers/ofi/ofi_provider.hpp"
#endif

namespace mpix {
namespace {

std::mutex g_mu;
Provider *g_provider = nullptr;
std::atomic<Provider *> g_chosen{nullptr};
std::string g_reason;

Status choose(Provider **out) {
  const char *want = setting_str(Setting::provider);
  std::string tried;
#ifdef MPIX_HAVE_OFI
  // auto takes ofi only where a NIC fires triggered ops itself: elsewhere ofi's triggers are
  // software too, and the mpi provider is faster here (docs/results-ofi.md) and lets the peer
  // use plain MPI calls on the stream communicator.
  bool ofi_wanted = std::strcmp(want, "ofi") == 0;
  if (std::strcmp(want, "auto") == 0) {
    std::string hw;
    ofi_wanted = ofi_hardware_triggers(&hw);
    if (!ofi_wanted) tried = "ofi not taken (" + hw + "); ";
  }
  if (ofi_wanted) {
    std::unique_ptr<Provider> p;
    std::string why;
    Status st = make_ofi_provider(&p, &why);
    if (st.is_ok()) {
      g_reason = std::string("MPIX_PROVIDER=") + want + ": " + why;
      *out = p.release();
      return {};
    }
    if (std::strcmp(want, "ofi") == 0)
      return make_status(st.code(), "MPIX_PROVIDER=ofi: %s", st.what().c_str());
    tried = "ofi (" + st.what() + "); ";
  }
#endif
  if (std::strcmp(want, "mpi") == 0 || std::strcmp(want, "auto") == 0) {
    g_reason = std::string("MPIX_PROVIDER=") + want + ": " + tried +
               "mpi (always available; interoperates with plain MPI on the peer)";
    *out = make_mpi_provider().release();
    return {};
  }
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "MPIX_PROVIDER=%s: no such provider in this build (built: %s)", want,
                     providers_built());
}

}  // namespace

Status provider_get(Provider **out) {
  // Fast path: every enqueue asks; the provider never changes once chosen.
  if ((*out = g_chosen.load(std::memory_order_acquire))) return {};
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_provider) {
    MPIX_TRY(choose(&g_provider));
    MPIX_LOG(info, "api", "provider %s (%s)", g_provider->name(), g_reason.c_str());
    g_chosen.store(g_provider, std::memory_order_release);
  }
  *out = g_provider;
  return {};
}

void provider_shutdown() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_provider) g_provider->shutdown();
}

std::string provider_choice_reason() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_reason;
}

const char *providers_built() {
#ifdef MPIX_HAVE_OFI
  return "mpi ofi";
#else
  return "mpi";
#endif
}

}  // namespace mpix
