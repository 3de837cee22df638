// What the rows of a settings table (MPIX_SETTING lines of a .def file) expand to. Include it
// only where a table is defined (<folder>_settings.cpp).
// What a row takes (checked at initialisation; a bad value is an error naming the variable):
// MPIX_INT(lo, hi) a decimal integer in lo..hi; MPIX_ONE_OF("a|b") one of the words;
// MPIX_LIST_OF("all", "a,b") the first word or a comma-separated list of the others;
// MPIX_NAME a non-empty word (no blanks), checked further by whoever uses it.
#pragma once

#include "base/settings.hpp"

// The byte and microsecond limits the tables use: large enough for any real use, small enough
// that no arithmetic on them (sizes, time points) can overflow.
#define MPIX_MAX_BYTES 1099511627776L  // 1 TiB
#define MPIX_MAX_US 3600000000L        // an hour
#define MPIX_INT(lo, hi) ::mpix::SettingKind::integer, (lo), (hi), nullptr, nullptr
#define MPIX_ONE_OF(words) ::mpix::SettingKind::one_of, 0, 0, words, nullptr
#define MPIX_LIST_OF(all, words) ::mpix::SettingKind::list_of, 0, 0, words, all
#define MPIX_NAME ::mpix::SettingKind::name, 0, 0, nullptr, nullptr
// One SettingInfo of a row.
#define MPIX_SETTING_INFO(id, name, def, takes, help) {name, def, takes, help},
