// The settings of every provider (providers_settings.def), a table of their own beside base's
// (base/base_settings.hpp); providers/registry.cpp registers it before each provider folder's,
// so that mpix_info lists them and a bad value fails initialisation.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class ProvidersSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "providers/providers_settings.def"
#undef MPIX_SETTING
};

const SettingTable &providers_settings();
inline const char *setting_str(ProvidersSetting s) {
  return providers_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(ProvidersSetting s) {
  return providers_settings().value(static_cast<std::size_t>(s));
}

}  // namespace mpix
