#include "core/settings.hpp"

#include <cstdlib>
#include <mutex>

namespace mpix {
namespace {

const SettingInfo kSettings[] = {
#define MPIX_SETTING(id, name, def, help) {name, def, help},
#include "core/settings_table.def"
#undef MPIX_SETTING
};
static_assert(sizeof kSettings / sizeof kSettings[0] == setting_count(),
              "every Setting has one table row");

struct Cache {
  const char *value[setting_count()];
  Cache() {
    for (std::size_t i = 0; i < setting_count(); ++i) {
      const char *env = std::getenv(kSettings[i].name);
      value[i] = (env && *env) ? env : kSettings[i].default_value;
    }
  }
};

const Cache &cache() {
  static const Cache c;
  return c;
}

}  // namespace

const SettingInfo &setting_info(Setting s) { return kSettings[static_cast<std::size_t>(s)]; }

const char *setting_str(Setting s) { return cache().value[static_cast<std::size_t>(s)]; }

long setting_long(Setting s) {
  const char *v = setting_str(s);
  char *end = nullptr;
  long n = std::strtol(v, &end, 0);
  if (end == v || *end != '\0') n = std::strtol(setting_info(s).default_value, nullptr, 0);
  return n;
}

}  // namespace mpix
