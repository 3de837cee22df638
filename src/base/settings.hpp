// The settings registry: every MPIX_* variable with its default, what it takes and help text
// (settings_table.def). Values are read from the environment once, on first use, and checked
// strictly: a bad value is an error at mpix's initialisation (runtime_init), never read as
// the default.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.hpp"

namespace mpix {

enum class Setting {
#define MPIX_SETTING(id, name, def, takes, help) id,
#include "base/settings_table.def"
#undef MPIX_SETTING
  count_
};

// What a setting takes (settings_table.def: MPIX_INT, MPIX_ONE_OF, MPIX_LIST_OF, MPIX_NAME).
enum class SettingKind { integer, one_of, list_of, name };

struct SettingInfo {
  const char *name;
  const char *default_value;
  SettingKind kind;
  long min, max;      // integer: the range, both ends allowed
  const char *words;  // one_of: "a|b|c"; list_of: "a,b,c" (the list's elements)
  const char *all;    // list_of: the word that stands for every element
  const char *help;
};

const SettingInfo &setting_info(Setting s);
constexpr std::size_t setting_count() { return static_cast<std::size_t>(Setting::count_); }

// The value in effect: the environment's if set and non-empty, else the default.
const char *setting_str(Setting s);
// The value in effect of an integer setting; the default if the value is bad (which
// settings_check reports: mpix does not initialise with a bad value).
long setting_long(Setting s);

// Checks @p value against what @p s takes; an integer setting's value goes to @p *n (may be
// null). The error (MPI_ERR_ARG) names the variable, the value and what it takes.
Status setting_parse(Setting s, const char *value, long *n);
// What @p s takes, in words ("an integer 0..100", "one of auto, mpi, ofi").
std::string setting_takes(Setting s);
// Every value in effect checked, once; the error of the first bad one (all are logged).
const Status &settings_check();

}  // namespace mpix
