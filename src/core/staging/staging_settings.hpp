// Staging's settings (staging_settings.def), a table of their own beside base's
// (base/base_settings.hpp); staging_settings.cpp registers it when libmpix loads, so that
// mpix_info lists them and a bad value fails initialisation.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class StagingSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "core/staging/staging_settings.def"
#undef MPIX_SETTING
};

const SettingTable &staging_settings();
inline const char *setting_str(StagingSetting s) {
  return staging_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(StagingSetting s) {
  return staging_settings().value(static_cast<std::size_t>(s));
}

}  // namespace mpix
