// The settings registry: every MPIX_* variable with its default and help text
// (settings_table.def). Values are read from the environment once, on first use.
#pragma once

#include <cstddef>

namespace mpix {

enum class Setting {
#define MPIX_SETTING(id, name, def, help) id,
#include "core/settings_table.def"
#undef MPIX_SETTING
  count_
};

struct SettingInfo {
  const char *name;
  const char *default_value;
  const char *help;
};

const SettingInfo &setting_info(Setting s);
constexpr std::size_t setting_count() { return static_cast<std::size_t>(Setting::count_); }

// The value in effect: the environment's if set and non-empty, else the default.
const char *setting_str(Setting s);
// setting_str parsed as an integer; the default if the value does not parse.
long setting_long(Setting s);

}  // namespace mpix
