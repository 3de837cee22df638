// Provider mpi's settings (mpi_settings.def), a table of their own beside the engine's
// (base/settings.hpp); providers/registry.cpp registers it, in every build, so that mpix_info
// lists them and a bad value fails initialisation whether or not the provider was built.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class MpiSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "providers/mpi/mpi_settings.def"
#undef MPIX_SETTING
};

const SettingTable &mpi_settings();
inline const char *setting_str(MpiSetting s) {
  return mpi_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(MpiSetting s) { return mpi_settings().value(static_cast<std::size_t>(s)); }

}  // namespace mpix
