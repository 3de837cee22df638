#include "base/base_settings.hpp"

#include "base/setting_rows.hpp"

namespace mpix {
namespace {

const SettingInfo kRows[] = {
#define MPIX_SETTING MPIX_SETTING_INFO
#include "base/base_settings.def"
#undef MPIX_SETTING
};

}  // namespace

const SettingTable &base_settings() {
  static const SettingTable *t = new SettingTable("base", kRows, sizeof kRows / sizeof kRows[0]);
  return *t;
}

}  // namespace mpix
