#include "base/settings.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/log.hpp"

namespace mpix {
namespace {

// The byte and microsecond limits the table uses: large enough for any real use, small enough
// that no arithmetic on them (sizes, time points) can overflow.
#define MPIX_MAX_BYTES 1099511627776L  // 1 TiB
#define MPIX_MAX_US 3600000000L        // an hour
#define MPIX_INT(lo, hi) SettingKind::integer, (lo), (hi), nullptr, nullptr
#define MPIX_ONE_OF(words) SettingKind::one_of, 0, 0, words, nullptr
#define MPIX_LIST_OF(all, words) SettingKind::list_of, 0, 0, words, all
#define MPIX_NAME SettingKind::name, 0, 0, nullptr, nullptr

const SettingInfo kSettings[] = {
#define MPIX_SETTING(id, name, def, takes, help) {name, def, takes, help},
#include "base/settings_table.def"
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

// Whether [b, e) is one of the '|'- or ','-separated words of @p words.
bool is_word_of(const char *b, std::size_t len, const char *words, char sep) {
  for (const char *w = words; *w;) {
    const char *end = std::strchr(w, sep);
    const std::size_t n = end ? static_cast<std::size_t>(end - w) : std::strlen(w);
    if (n == len && std::strncmp(w, b, n) == 0) return true;
    if (!end) break;
    w = end + 1;
  }
  return false;
}

// A strict decimal integer: an optional '-', then digits only, nothing else (no blanks, no
// '+', no hex or octal, no suffix), within long.
bool parse_decimal(const char *v, long *out, bool *overflow) {
  *overflow = false;
  const char *p = v + (*v == '-');
  if (!*p) return false;
  for (const char *q = p; *q; ++q)
    if (!std::isdigit(static_cast<unsigned char>(*q))) return false;
  errno = 0;
  char *end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (errno == ERANGE) {
    *overflow = true;
    return false;
  }
  *out = n;
  return *end == '\0';
}

}  // namespace

const SettingInfo &setting_info(Setting s) { return kSettings[static_cast<std::size_t>(s)]; }

const char *setting_str(Setting s) { return cache().value[static_cast<std::size_t>(s)]; }

std::string setting_takes(Setting s) {
  const SettingInfo &i = setting_info(s);
  std::string out;
  switch (i.kind) {
    case SettingKind::integer:
      return "a decimal integer " + std::to_string(i.min) + ".." + std::to_string(i.max);
    case SettingKind::one_of:
      out = "one of ";
      for (const char *w = i.words; *w; ++w)
        out += *w == '|' ? std::string(", ") : std::string(1, *w);
      return out;
    case SettingKind::list_of:
      out = std::string(i.all) + " or a comma-separated list of ";
      for (const char *w = i.words; *w; ++w)
        out += *w == ',' ? std::string(", ") : std::string(1, *w);
      return out;
    case SettingKind::name:
      return "a name without blanks";
  }
  return out;
}

Status setting_parse(Setting s, const char *value, long *n) {
  const SettingInfo &i = setting_info(s);
  auto bad = [&](const char *why) {
    return make_status(MPI_ERR_ARG, "%s=%s is %s: it takes %s", i.name, value, why,
                       setting_takes(s).c_str());
  };
  switch (i.kind) {
    case SettingKind::integer: {
      long v = 0;
      bool overflow = false;
      if (!parse_decimal(value, &v, &overflow))
        return bad(overflow ? "out of range" : "not a decimal integer");
      if (v < i.min || v > i.max) return bad("out of range");
      if (n) *n = v;
      return {};
    }
    case SettingKind::one_of: {
      if (!is_word_of(value, std::strlen(value), i.words, '|')) return bad("not a valid value");
      // Numeric words ("0|1") are read as numbers by setting_long.
      long v = 0;
      bool overflow = false;
      if (n && parse_decimal(value, &v, &overflow)) *n = v;
      return {};
    }
    case SettingKind::list_of: {
      if (std::strcmp(value, i.all) == 0) return {};
      for (const char *p = value;;) {
        const char *end = std::strchr(p, ',');
        const std::size_t len = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
        if (!is_word_of(p, len, i.words, ',')) return bad("not a valid list");
        if (!end) return {};
        p = end + 1;
      }
    }
    case SettingKind::name:
      if (!*value) return bad("empty");
      for (const char *p = value; *p; ++p)
        if (std::isspace(static_cast<unsigned char>(*p)) ||
            !std::isprint(static_cast<unsigned char>(*p)))
          return bad("not a name");
      return {};
  }
  return bad("of an unknown kind");
}

long setting_long(Setting s) {
  long n = 0;
  if (setting_parse(s, setting_str(s), &n).is_ok()) return n;
  // A bad value fails initialisation (settings_check); code that still runs (the logger, a host
  // stream made without MPI) gets the default.
  n = 0;
  setting_parse(s, setting_info(s).default_value, &n);
  return n;
}

const Status &settings_check() {
  static const Status *result = [] {
    Status first;
    for (std::size_t i = 0; i < setting_count(); ++i) {
      Status st =
          setting_parse(static_cast<Setting>(i), setting_str(static_cast<Setting>(i)), nullptr);
      if (st.is_ok()) continue;
      MPIX_LOG(error, "api", "%s", st.what().c_str());
      if (first.is_ok()) first = std::move(st);
    }
    return new Status(std::move(first));  // never destroyed: read until exit
  }();
  return *result;
}

}  // namespace mpix
