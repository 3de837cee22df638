// The settings registry: one row per MPIX_* variable, values from the environment (CTest sets
// MPIX_SLEEP_US and MPIX_TIMEOUT for this program, see CMakeLists.txt) or the default.
#include "core/settings.hpp"

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "catch.hpp"

using mpix::Setting;

TEST_CASE("every setting has a unique MPIX_ name, a default and help text", "[settings]") {
  REQUIRE(mpix::setting_count() >= 10);
  std::set<std::string> names;
  for (std::size_t i = 0; i < mpix::setting_count(); ++i) {
    const auto &s = mpix::setting_info(static_cast<Setting>(i));
    REQUIRE(s.name != nullptr);
    REQUIRE(s.default_value != nullptr);
    REQUIRE(s.help != nullptr);
    CHECK(std::strncmp(s.name, "MPIX_", 5) == 0);
    CHECK(std::strlen(s.help) > 10);
    CHECK(names.insert(s.name).second);  // no duplicates
  }
  CHECK(std::string(mpix::setting_info(Setting::sleep_us).name) == "MPIX_SLEEP_US");
  CHECK(std::string(mpix::setting_info(Setting::spin_us).name) == "MPIX_SPIN_US");
}

TEST_CASE("values come from the environment, else the default", "[settings]") {
  // Set by CTest for this program.
  REQUIRE(std::getenv("MPIX_SLEEP_US") != nullptr);
  CHECK(std::string(mpix::setting_str(Setting::sleep_us)) == "12345");
  CHECK(mpix::setting_long(Setting::sleep_us) == 12345);
  // Unparsable: the default is used instead.
  REQUIRE(std::string(std::getenv("MPIX_TIMEOUT")) == "soon");
  CHECK(std::string(mpix::setting_str(Setting::timeout)) == "soon");
  CHECK(mpix::setting_long(Setting::timeout) ==
        std::strtol(mpix::setting_info(Setting::timeout).default_value, nullptr, 0));
  // Empty counts as unset.
  REQUIRE(std::getenv("MPIX_YIELD_US") != nullptr);
  CHECK(std::string(mpix::setting_str(Setting::yield_us)) ==
        mpix::setting_info(Setting::yield_us).default_value);
  // Not set at all: the default (unless whoever runs the test set it).
  if (!std::getenv("MPIX_OFI_PROVIDER"))
    CHECK(std::string(mpix::setting_str(Setting::ofi_provider)) ==
          mpix::setting_info(Setting::ofi_provider).default_value);
}

TEST_CASE("values are read once: later environment changes do not apply", "[settings]") {
  const std::string before = mpix::setting_str(Setting::sleep_us);
  setenv("MPIX_SLEEP_US", "999", 1);
  CHECK(std::string(mpix::setting_str(Setting::sleep_us)) == before);
  setenv("MPIX_SLEEP_US", before.c_str(), 1);
}
