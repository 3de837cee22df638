// The queue's settings (queue_settings.def), a table of their own beside base's
// (base/base_settings.hpp); queue_settings.cpp registers it when libmpix loads, so that mpix_info
// lists them and a bad value fails initialisation.
#pragma once

#include <cstddef>

#include "base/settings.hpp"

namespace mpix {

enum class QueueSetting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "queue/queue_settings.def"
#undef MPIX_SETTING
};

const SettingTable &queue_settings();
inline const char *setting_str(QueueSetting s) {
  return queue_settings().str(static_cast<std::size_t>(s));
}
inline long setting_long(QueueSetting s) {
  return queue_settings().value(static_cast<std::size_t>(s));
}

}  // namespace mpix
