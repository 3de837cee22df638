// Base's settings (base_settings.def): the log's, the waiter's and the profiler's. Their table
// comes first of all (base/settings.hpp, setting_tables); every other folder's rows live in its
// own table (<folder>_settings.def), registered beside this one.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class BaseSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "base/base_settings.def"
#undef MPIX_SETTING
};

const SettingTable &base_settings();
inline const char *setting_str(BaseSetting s) {
  return base_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(BaseSetting s) {
  return base_settings().value(static_cast<std::size_t>(s));
}

}  // namespace mpix
