#include "providers/providers_settings.hpp"

#include "base/setting_rows.hpp"

namespace mpix {
namespace {

const SettingInfo kRows[] = {
#define MPIX_SETTING MPIX_SETTING_INFO
#include "providers/providers_settings.def"
#undef MPIX_SETTING
};

}  // namespace

const SettingTable &providers_settings() {
  static const SettingTable *t =
      new SettingTable("providers", kRows, sizeof kRows / sizeof kRows[0]);
  return *t;
}

}  // namespace mpix
