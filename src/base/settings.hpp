// The settings registry: every MPIX_* variable with its default, what it takes and help text,
// in tables of MPIX_SETTING rows (base/setting_rows.hpp), one per folder that reads them:
// base's (base/base_settings.def), and each other folder's in that folder
// (<folder>_settings.def, e.g. gpu/gpu_settings.def, providers/<name>/<name>_settings.def),
// registered with base's. Values are read from the environment once, on first use, and
// checked strictly: a bad value is an error at mpix's initialisation (runtime_init), never read
// as the default.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace mpix {

// What a setting takes (base/setting_rows.hpp: MPIX_INT, MPIX_ONE_OF, MPIX_LIST_OF, MPIX_NAME).
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

// One folder's table: its rows, in order, and their values in effect.
class SettingTable {
 public:
  // @p owner names the folder ("base", "gpu", "ofi", ...); @p rows outlive the table.
  SettingTable(const char *owner, const SettingInfo *rows, std::size_t n)
      : owner_(owner), rows_(rows), n_(n) {}
  const char *owner() const { return owner_; }
  std::size_t size() const { return n_; }
  const SettingInfo &info(std::size_t i) const { return rows_[i]; }
  // The value in effect: the environment's if set and non-empty, else the default.
  const char *str(std::size_t i) const;
  // The value in effect of an integer setting; the default if the value is bad (which
  // settings_check reports: mpix does not initialise with a bad value).
  long value(std::size_t i) const;
  // Checks @p value against what row @p i takes; an integer's value goes to @p *n (may be
  // null). The error (MPI_ERR_ARG) names the variable, the value and what it takes.
  Status parse(std::size_t i, const char *value, long *n) const;
  // What row @p i takes, in words ("an integer 0..100", "one of auto, mpi, ofi").
  std::string takes(std::size_t i) const;

 private:
  const char *owner_;
  const SettingInfo *rows_;
  std::size_t n_;
  mutable std::once_flag read_;
  mutable std::unique_ptr<const char *[]> values_;  // read from the environment on first use
};

// Adds a folder's table (called once per table, at load time, before settings are checked: by
// the folder's <folder>_settings.cpp, or for the providers' by providers/registry.cpp).
void settings_register(const SettingTable &t);
// Every table: base's first, then the registered ones in registration order. A program linked
// against the static mpix_internal has only the tables of the objects it pulled in (mpix_info
// links every object, as libmpix has them).
std::vector<const SettingTable *> setting_tables();
// Every value in effect of every table checked, once; the error of the first bad one (all are
// logged).
const Status &settings_check();

}  // namespace mpix
