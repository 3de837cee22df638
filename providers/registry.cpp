// Picks the provider (MPIX_PROVIDER) from the table of those built
// (provider_entry.hpp; the generated provider_table.inc lists them in the order auto tries),
// and registers the providers' settings table (providers_settings.def) and every provider
// folder's (provider_settings.inc).
#include <cstring>
#include <string>

#include "base/log.hpp"
#include "core/provider.hpp"
#include "providers/provider_entry.hpp"
#include "providers/providers_settings.hpp"

namespace mpix {

#define MPIX_PROVIDER_ENTRY(n) extern const ProviderEntry k_##n##_provider;
#include "provider_table.inc"
#undef MPIX_PROVIDER_ENTRY
#define MPIX_PROVIDER_SETTINGS(n) const SettingTable &n##_settings();
#include "provider_settings.inc"
#undef MPIX_PROVIDER_SETTINGS

namespace {

// The providers' settings table, then each provider folder's, registered beside base's when
// libmpix loads (before any setting is checked), so that settings_check and mpix_info see them.
[[maybe_unused]] const bool g_settings_registered = [] {
  settings_register(providers_settings());
#define MPIX_PROVIDER_SETTINGS(n) settings_register(n##_settings());
#include "provider_settings.inc"
#undef MPIX_PROVIDER_SETTINGS
  return true;
}();

const ProviderEntry *const kProviders[] = {
#define MPIX_PROVIDER_ENTRY(n) &k_##n##_provider,
#include "provider_table.inc"
#undef MPIX_PROVIDER_ENTRY
};

}  // namespace

Status provider_choose(std::unique_ptr<Provider> *out, std::string *reason) {
  const char *want = setting_str(ProvidersSetting::provider);
  const bool any = std::strcmp(want, "auto") == 0;
  std::string tried;
  for (const ProviderEntry *e : kProviders) {
    if (!any && std::strcmp(want, e->name) != 0) continue;
    std::string why;
    if (any && !e->auto_takes(&why)) {
      tried += std::string(e->name) + " not taken (" + why + "); ";
      continue;
    }
    std::unique_ptr<Provider> p;
    Status st = e->make(&p, &why);
    if (!st.is_ok()) {
      if (!any) return make_status(st.code(), "MPIX_PROVIDER=%s: %s", want, st.what().c_str());
      tried += std::string(e->name) + " (" + st.what() + "); ";
      continue;
    }
    *reason = std::string("MPIX_PROVIDER=") + want + ": " + tried + e->name + " (" + why + ")";
    *out = std::move(p);
    return {};
  }
  if (any)
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPIX_PROVIDER=auto: no provider could be used (%s)", tried.c_str());
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "MPIX_PROVIDER=%s: no such provider in this build (built: %s)", want,
                     providers_built());
}

Status collective_provider_choose(const Provider &p2p, std::unique_ptr<Provider> *out) {
  out->reset();
  if (p2p.caps().collectives) return {};
  for (const ProviderEntry *e : kProviders)
    if (e->make_collective) return e->make_collective(out);
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "provider %s carries no collectives, and no provider built (%s) can",
                     p2p.name(), providers_built());
}

const char *providers_built() {
  static const std::string names = [] {
    std::string n;
    for (const ProviderEntry *e : kProviders) n += (n.empty() ? "" : " ") + std::string(e->name);
    return n;
  }();
  return names.c_str();
}

}  // namespace mpix
