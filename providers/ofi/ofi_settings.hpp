// Provider ofi's settings (ofi_settings.def), a table of their own beside the engine's
// (base/settings.hpp); providers/registry.cpp registers it, in every build, so that mpix_info
// lists them and a bad value fails initialisation whether or not the provider was built.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class OfiSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "providers/ofi/ofi_settings.def"
#undef MPIX_SETTING
};

const SettingTable &ofi_settings();
inline const char *setting_str(OfiSetting s) {
  return ofi_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(OfiSetting s) { return ofi_settings().value(static_cast<std::size_t>(s)); }

}  // namespace mpix
