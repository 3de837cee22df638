// The stream API's settings (api_settings.def), a table of their own beside base's
// (base/base_settings.hpp); api_settings.cpp registers it when libmpix loads, so that mpix_info
// lists them and a bad value fails initialisation.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class ApiSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "api/api_settings.def"
#undef MPIX_SETTING
};

const SettingTable &api_settings();
inline const char *setting_str(ApiSetting s) {
  return api_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(ApiSetting s) { return api_settings().value(static_cast<std::size_t>(s)); }

}  // namespace mpix
