// The stream backends' settings (gpu_settings.def), a table of their own beside base's
// (base/base_settings.hpp); gpu_settings.cpp registers it when libmpix loads, so that mpix_info
// lists them and a bad value fails initialisation.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class GpuSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "gpu/gpu_settings.def"
#undef MPIX_SETTING
};

const SettingTable &gpu_settings();
inline const char *setting_str(GpuSetting s) {
  return gpu_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(GpuSetting s) { return gpu_settings().value(static_cast<std::size_t>(s)); }

}  // namespace mpix
