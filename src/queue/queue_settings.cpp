#include "queue/queue_settings.hpp"

#include "base/setting_rows.hpp"

namespace mpix {
namespace {

const SettingInfo kRows[] = {
#define MPIX_SETTING MPIX_SETTING_INFO
#include "queue/queue_settings.def"
#undef MPIX_SETTING
};

}  // namespace

const SettingTable &queue_settings() {
  static const SettingTable *t = new SettingTable("queue", kRows, sizeof kRows / sizeof kRows[0]);
  return *t;
}

namespace {
// Registered when libmpix loads (before any setting is checked), so that settings_check and
// mpix_info see it.
[[maybe_unused]] const bool g_registered = (settings_register(queue_settings()), true);
}  // namespace

}  // namespace mpix
