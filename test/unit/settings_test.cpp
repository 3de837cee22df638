// The settings registry: one row per MPIX_* variable, in base's table and each other folder's,
// values from the environment (CTest sets MPIX_SLEEP_US, MPIX_TIMEOUT and
// MPIX_YIELD_US for this program, see CMakeLists.txt) or the default, every value checked
// strictly against what its row says it takes.
#include "base/settings.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "api/api_settings.hpp"
#include "base/base_settings.hpp"
#include "catch.hpp"
#include "core/provider.hpp"
#include "core/staging/staging_settings.hpp"
#include "gpu/gpu_settings.hpp"
#include "providers/mpi/mpi_settings.hpp"
#include "providers/ofi/ofi_settings.hpp"
#include "providers/providers_settings.hpp"
#include "queue/queue_settings.hpp"

using mpix::ApiSetting;
using mpix::BaseSetting;
using mpix::ProvidersSetting;
using mpix::QueueSetting;
using mpix::SettingKind;
using mpix::StagingSetting;

namespace {

// One row of one table.
struct Row {
  const mpix::SettingTable *t;
  std::size_t i;
  const mpix::SettingInfo &info() const { return t->info(i); }
};
Row row(BaseSetting s) { return {&mpix::base_settings(), static_cast<std::size_t>(s)}; }
Row row(StagingSetting s) { return {&mpix::staging_settings(), static_cast<std::size_t>(s)}; }
Row row(ApiSetting s) { return {&mpix::api_settings(), static_cast<std::size_t>(s)}; }
Row row(ProvidersSetting s) { return {&mpix::providers_settings(), static_cast<std::size_t>(s)}; }
Row row(QueueSetting s) { return {&mpix::queue_settings(), static_cast<std::size_t>(s)}; }
Row row(mpix::OfiSetting s) { return {&mpix::ofi_settings(), static_cast<std::size_t>(s)}; }

// Every folder's table: base's, then the others (each registered when libmpix loads).
std::vector<const mpix::SettingTable *> all_tables() {
  return {&mpix::base_settings(), &mpix::gpu_settings(),       &mpix::staging_settings(),
          &mpix::api_settings(),  &mpix::providers_settings(), &mpix::ofi_settings(),
          &mpix::mpi_settings(),  &mpix::queue_settings()};
}

// Every row of every folder's table.
std::vector<Row> all_rows() {
  std::vector<Row> rows;
  for (const mpix::SettingTable *t : all_tables())
    for (std::size_t i = 0; i < t->size(); ++i) rows.push_back({t, i});
  return rows;
}

// The words of "a|b|c" (or "a,b,c").
std::vector<std::string> words(const char *w, char sep) {
  std::vector<std::string> out(1);
  for (; *w; ++w) {
    if (*w == sep) out.emplace_back();
    else out.back() += *w;
  }
  return out;
}

// setting_parse's verdict on @p value, checking that a refusal is MPI_ERR_ARG and its message
// names the variable, the value and what the variable takes.
bool accepts(Row r, const std::string &value, long *n = nullptr) {
  mpix::Status st = r.t->parse(r.i, value.c_str(), n);
  if (st.is_ok()) return true;
  CHECK(st.code() == MPI_ERR_ARG);
  const std::string &what = st.what();
  CHECK(what.find(std::string(r.info().name) + "=" + value) != std::string::npos);
  CHECK(what.find("takes " + r.t->takes(r.i)) != std::string::npos);
  return false;
}
template <class E>
bool accepts(E s, const std::string &value, long *n = nullptr) {
  return accepts(row(s), value, n);
}

}  // namespace

TEST_CASE("every setting has a unique MPIX_ name, a default it accepts and help text",
          "[settings]") {
  REQUIRE(all_rows().size() >= 28);
  std::set<std::string> names;
  for (const Row &r : all_rows()) {
    const auto &s = r.info();
    REQUIRE(s.name != nullptr);
    REQUIRE(s.default_value != nullptr);
    REQUIRE(s.help != nullptr);
    CHECK(std::strncmp(s.name, "MPIX_", 5) == 0);
    CHECK(std::strlen(s.help) > 10);
    CHECK(names.insert(s.name).second);  // no duplicates
    INFO(s.name);
    CHECK(accepts(r, s.default_value));
    CHECK(!r.t->takes(r.i).empty());
  }
  CHECK(std::string(row(BaseSetting::sleep_us).info().name) == "MPIX_SLEEP_US");
  CHECK(std::string(row(BaseSetting::spin_us).info().name) == "MPIX_SPIN_US");
}

TEST_CASE("integer settings: strict decimal within their range", "[settings]") {
  int integers = 0;
  for (const Row &s : all_rows()) {
    const auto &info = s.info();
    if (info.kind != SettingKind::integer) continue;
    ++integers;
    INFO(info.name);
    REQUIRE(info.min <= info.max);
    long n = 12345;
    // Good values, both ends of the range included.
    CHECK(accepts(s, std::to_string(info.min), &n));
    CHECK(n == info.min);
    CHECK(accepts(s, std::to_string(info.max), &n));
    CHECK(n == info.max);
    CHECK(accepts(s, std::to_string(info.min + (info.max - info.min) / 2), &n));
    CHECK(n == info.min + (info.max - info.min) / 2);
    // Just outside the range.
    if (info.min > LONG_MIN) CHECK(!accepts(s, std::to_string(info.min - 1)));
    if (info.max < LONG_MAX) CHECK(!accepts(s, std::to_string(info.max + 1)));
    // Negative where not allowed (also "-0" stays 0, which is fine where 0 is).
    if (info.min >= 0) {
      CHECK(!accepts(s, "-1"));
      CHECK(!accepts(s, "-5"));
    }
    // Overflow of long: 20 digits.
    CHECK(!accepts(s, "99999999999999999999"));
    CHECK(!accepts(s, "-99999999999999999999"));
    CHECK(!accepts(s, "18446744073709551616"));
    // Garbage: not an integer, or an integer with something around it.
    for (const char *g : {"abc", "soon", "", "-", "12abc", "1e3", "0x10", " 5", "5 ", "+5", "1.5",
                          "5s", "--1", "1-"})
      CHECK(!accepts(s, g));
    n = 777;
    CHECK(!accepts(s, "abc", &n));
    CHECK(n == 777);  // a refused value leaves the output alone
  }
  CHECK(integers >= 10);
  // Values whose meaning matters: -1 is "any size" for MPIX_AGENT_COPY_MAX, 0 "never" for
  // MPIX_TIMEOUT; MPIX_OFI_CNTR_OPS needs at least one op per counter.
  long n = 0;
  CHECK(accepts(StagingSetting::agent_copy_max, "-1", &n));
  CHECK(n == -1);
  CHECK(!accepts(StagingSetting::agent_copy_max, "-2"));
  CHECK(accepts(ProvidersSetting::timeout, "0", &n));
  CHECK(!accepts(ProvidersSetting::timeout, "-5"));
  CHECK(!accepts(mpix::OfiSetting::ofi_cntr_ops, "0"));
  CHECK(!accepts(BaseSetting::spin_us, "-1"));
  CHECK(!accepts(BaseSetting::yield_us, "12345678901234567890"));
}

TEST_CASE("word settings: exactly one of their words", "[settings]") {
  int word_settings = 0;
  for (const Row &s : all_rows()) {
    const auto &info = s.info();
    if (info.kind != SettingKind::one_of) continue;
    ++word_settings;
    INFO(info.name);
    const auto ws = words(info.words, '|');
    REQUIRE(ws.size() >= 2);
    for (const auto &w : ws) {
      CHECK(accepts(s, w));
      CHECK(!accepts(s, w + " "));
      CHECK(!accepts(s, " " + w));
      CHECK(!accepts(s, w + "x"));
      CHECK(!accepts(s, w.substr(0, w.size() - 1)));
      CHECK(!accepts(s, w + "|" + w));
    }
    for (const char *g : {"bogus", "shout", "", "|", "AUTO x"}) CHECK(!accepts(s, g));
  }
  CHECK(word_settings >= 8);
  CHECK(!accepts(BaseSetting::log_level, "shout"));
  CHECK(!accepts(BaseSetting::log_level, "WARN"));
  CHECK(!accepts(QueueSetting::queue_stream, "bogus"));
  CHECK(!accepts(ProvidersSetting::provider, "ofi2"));
  CHECK(accepts(ApiSetting::defer_trigger, "on"));
}

TEST_CASE("list and name settings", "[settings]") {
  const BaseSetting s = BaseSetting::log_subsys;
  REQUIRE(row(s).info().kind == SettingKind::list_of);
  CHECK(accepts(s, "all"));
  for (const auto &w : words(row(s).info().words, ',')) CHECK(accepts(s, w));
  CHECK(accepts(s, "agent,ofi"));
  CHECK(accepts(s, "api,agent,stream,mpi,ofi,cuda,hip,host"));
  for (const char *g :
       {"", "bogus", "agent,", ",agent", "agent,,ofi", "agent, ofi", "all,agent", "agent ofi"})
    CHECK(!accepts(s, g));

  const Row p = row(mpix::OfiSetting::ofi_provider);
  REQUIRE(p.info().kind == SettingKind::name);
  CHECK(accepts(p, "tcp"));
  CHECK(accepts(p, "verbs;ofi_rxm"));
  CHECK(!accepts(p, ""));
  CHECK(!accepts(p, "tc p"));
  CHECK(!accepts(p, "tcp\n"));
}

TEST_CASE("values come from the environment, else the default; a bad one is reported",
          "[settings]") {
  // Set by CTest for this program.
  REQUIRE(std::getenv("MPIX_SLEEP_US") != nullptr);
  CHECK(std::string(mpix::setting_str(BaseSetting::sleep_us)) == "12345");
  CHECK(mpix::setting_long(BaseSetting::sleep_us) == 12345);
  // Bad: settings_check names it (mpix does not initialise, runtime_init returns this).
  REQUIRE(std::string(std::getenv("MPIX_TIMEOUT")) == "soon");
  CHECK(std::string(mpix::setting_str(ProvidersSetting::timeout)) == "soon");
  const mpix::Status &st = mpix::settings_check();
  CHECK(st.code() == MPI_ERR_ARG);
  CHECK(st.what().find("MPIX_TIMEOUT=soon") != std::string::npos);
  CHECK(st.what().find("takes a decimal integer 0..") != std::string::npos);
  // Empty counts as unset.
  REQUIRE(std::getenv("MPIX_YIELD_US") != nullptr);
  CHECK(std::string(mpix::setting_str(BaseSetting::yield_us)) ==
        row(BaseSetting::yield_us).info().default_value);
  // Not set at all: the default (unless whoever runs the test set it).
  if (!std::getenv("MPIX_OFI_PROVIDER"))
    CHECK(std::string(mpix::setting_str(mpix::OfiSetting::ofi_provider)) ==
          row(mpix::OfiSetting::ofi_provider).info().default_value);
}

TEST_CASE("every folder's table is registered once, after base's", "[settings]") {
  REQUIRE(mpix::providers_built() != nullptr);  // links the registry, which registers providers'
  const std::vector<const mpix::SettingTable *> t = mpix::setting_tables();
  const std::vector<const mpix::SettingTable *> all = all_tables();
  REQUIRE(t.size() == all.size());
  CHECK(t[0] == &mpix::base_settings());
  for (const mpix::SettingTable *a : all) {
    INFO(a->owner());
    CHECK(std::count(t.begin(), t.end(), a) == 1);
  }
  // providers/registry.cpp registers the providers' table, then each provider folder's.
  const auto at = [&](const mpix::SettingTable &x) { return std::find(t.begin(), t.end(), &x); };
  CHECK(at(mpix::providers_settings()) + 1 == at(mpix::ofi_settings()));
  CHECK(at(mpix::ofi_settings()) + 1 == at(mpix::mpi_settings()));
  CHECK(std::string(mpix::setting_str(mpix::MpiSetting::staging_chunk)) ==
        (std::getenv("MPIX_STAGING_CHUNK") ? std::getenv("MPIX_STAGING_CHUNK") : "0"));
}

TEST_CASE("values are read once: later environment changes do not apply", "[settings]") {
  const std::string before = mpix::setting_str(BaseSetting::sleep_us);
  setenv("MPIX_SLEEP_US", "999", 1);
  CHECK(std::string(mpix::setting_str(BaseSetting::sleep_us)) == before);
  setenv("MPIX_SLEEP_US", before.c_str(), 1);
}
