// Choosing the libfabric provider (MPIX_OFI_PROVIDER) and the trigger mode
// (MPIX_OFI_NATIVE_TRIGGER), and making the OfiProvider.
#include "providers/ofi/ofi_select.hpp"

#include <cstring>
#include <typeinfo>
#include <vector>

#include "base/log.hpp"
#include "providers/ofi/fabric.hpp"
#include "providers/ofi/ofi_provider.hpp"
#include "providers/ofi/ofi_settings.hpp"
#include "providers/ofi/self_test.hpp"
#include "providers/providers_settings.hpp"

namespace mpix {
namespace {

// MPIX_OFI_PROVIDER=auto tries these in order. Hardware transports first; then, on this kind of
// machine (docs/results-ofi.md), the fastest software ones; shm last, as it cannot reach other
// nodes.
const char *const kAutoOrder[] = {"cxi", "verbs;ofi_rxm", "tcp", "sockets", "udp;ofi_rxd", "shm"};

// Providers whose triggered operations are fired by the NIC, not by provider software.
const char *const kHardwareTrigger[] = {"cxi"};

enum class NativeWish { automatic, off, on };

Status parse_native(NativeWish *w) {
  const char *v = setting_str(OfiSetting::ofi_native_trigger);
  if (!std::strcmp(v, "auto")) *w = NativeWish::automatic;
  else if (!std::strcmp(v, "0")) *w = NativeWish::off;
  else if (!std::strcmp(v, "1")) *w = NativeWish::on;
  else return make_status(MPI_ERR_ARG, "MPIX_OFI_NATIVE_TRIGGER=%s is not auto, 0 or 1", v);
  return {};
}

// Opens @p prov and runs its self-test; fills the options.
Status try_provider(const std::string &prov, NativeWish wish, std::unique_ptr<Fabric> *fabric,
                    OfiOptions *opt) {
  MPIX_TRY(Fabric::open(prov, fabric));
  Fabric &f = **fabric;
  const char *order = setting_str(OfiSetting::ofi_order);
  if (std::strcmp(order, "auto") != 0 && std::strcmp(order, "serialize") != 0)
    return make_status(MPI_ERR_ARG, "MPIX_OFI_ORDER=%s is not auto or serialize", order);
  opt->serialize = !f.sends_ordered() || !std::strcmp(order, "serialize");
  const char *match = setting_str(OfiSetting::ofi_match);
  if (std::strcmp(match, "auto") != 0 && std::strcmp(match, "libfabric") != 0 &&
      std::strcmp(match, "mpix") != 0)
    return make_status(MPI_ERR_ARG, "MPIX_OFI_MATCH=%s is not auto, libfabric or mpix", match);
  bool wildcards_ok = false;
  Status st = ofi_self_test(*fabric, &wildcards_ok);
  if (!st.is_ok()) return make_status(st.code(), "%s: %s", prov.c_str(), st.what().c_str());
  std::string why_match;
  if (!std::strcmp(match, "auto")) {
    opt->soft = !wildcards_ok;
    why_match = wildcards_ok ? "MPI matching by libfabric"
                             : "MPI matching by mpix: libfabric's wildcard receives do not match "
                               "messages that arrived first (self-test)";
  } else {
    opt->soft = !std::strcmp(match, "mpix");
    why_match = std::string("MPI matching by ") + match + " (MPIX_OFI_MATCH)";
    if (!opt->soft && !wildcards_ok)
      MPIX_LOG(warn, "ofi",
               "MPIX_OFI_MATCH=libfabric although %s's wildcard receives fail the "
               "self-test: MPI_ANY_SOURCE / MPI_ANY_TAG receives may hang",
               prov.c_str());
  }
  std::string why;
  if (wish == NativeWish::on && !f.has_trigger())
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPIX_OFI_NATIVE_TRIGGER=1 but libfabric "
                       "provider %s has no FI_TRIGGER",
                       f.prov_name().c_str());
  if (wish == NativeWish::on && opt->soft)
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPIX_OFI_NATIVE_TRIGGER=1 needs libfabric "
                       "to match messages (%s)",
                       why_match.c_str());
  if (wish == NativeWish::off) {
    opt->native = false;
    why = "MPIX_OFI_NATIVE_TRIGGER=0";
  } else if (!f.has_trigger()) {
    opt->native = false;
    why = "no FI_TRIGGER";
  } else if (opt->soft) {
    // mpix matches each message when its receive is reached: nothing to post ahead.
    opt->native = false;
    why = "mpix matches messages";
  } else if (opt->serialize) {
    // Serialized sends wait for delivery before the next is posted; triggered ops cannot.
    if (wish == NativeWish::on)
      return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                         "MPIX_OFI_NATIVE_TRIGGER=1 needs ordered "
                         "sends (FI_ORDER_SAS and not MPIX_OFI_ORDER=serialize)");
    opt->native = false;
    why = "sends must be serialized";
  } else {
    opt->native = true;
    why = "FI_TRIGGER";
  }
  opt->why_mode = why +
                  (opt->serialize ? "; sends to a peer serialized (FI_DELIVERY_COMPLETE)"
                                  : "; MPI order from FI_ORDER_SAS") +
                  "; " + why_match;
  if (opt->native) {
    st = ofi_self_test_triggers(*fabric);
    if (!st.is_ok()) return make_status(st.code(), "%s: %s", prov.c_str(), st.what().c_str());
  }
  return {};
}

}  // namespace

Status make_ofi_provider(std::unique_ptr<Provider> *out, std::string *why) {
  NativeWish wish = NativeWish::automatic;
  MPIX_TRY(parse_native(&wish));
  std::string want = setting_str(OfiSetting::ofi_provider);
  std::vector<std::string> candidates;
  if (want == "auto") candidates.assign(std::begin(kAutoOrder), std::end(kAutoOrder));
  else candidates.push_back(want);
  std::string tried;
  for (const auto &prov : candidates) {
    std::unique_ptr<Fabric> fabric;
    OfiOptions opt;
    opt.timeout_s = setting_long(ProvidersSetting::timeout);
    Status st = try_provider(prov, wish, &fabric, &opt);
    if (!st.is_ok()) {
      MPIX_LOG(info, "ofi", "libfabric provider %s: %s", prov.c_str(), st.what().c_str());
      if (candidates.size() == 1)
        return make_status(st.code(), "MPIX_OFI_PROVIDER=%s: %s", want.c_str(), st.what().c_str());
      tried += (tried.empty() ? "" : "; ") + prov + ": " + st.what();
      continue;
    }
    *why = "MPIX_OFI_PROVIDER=" + want + ": " + fabric->prov_name() + " passed its self-test (" +
           (opt.native ? "native" : "emulated") + " triggers: " + opt.why_mode + ")";
    if (!tried.empty()) *why += "; tried before: " + tried;
    auto p = std::make_unique<OfiProvider>(std::move(fabric), opt);
    MPIX_TRY(p->start());
    *out = std::move(p);
    return {};
  }
  return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                     "MPIX_OFI_PROVIDER=auto: no libfabric provider passed its self-test (tried: "
                     "%s)",
                     tried.c_str());
}

OfiTestInfo ofi_test_info() {
  OfiTestInfo info;
  Provider *p = nullptr;
  if (!provider_get(&p).is_ok()) return info;
  // The active provider is this folder's own (its exact type: OfiProvider is final).
  if (typeid(*p) != typeid(OfiProvider)) return info;
  const auto *o = static_cast<const OfiProvider *>(p);
  info.active = true;
  info.native = o->caps().native_triggers;
  info.counters_opened = o->counters_opened();
  return info;
}

bool ofi_hardware_triggers(std::string *why) {
  for (const char *p : kHardwareTrigger) {
    std::unique_ptr<Fabric> f;
    if (Fabric::open(p, &f).is_ok() && f->has_trigger()) {
      *why = std::string("libfabric provider ") + p + " fires triggered operations in the NIC";
      return true;
    }
  }
  *why = "no libfabric provider here fires triggered operations in hardware (libfabric has: " +
         ofi_providers_available() + ")";
  return false;
}

}  // namespace mpix
