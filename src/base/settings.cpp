#include "base/settings.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/base_settings.hpp"
#include "base/log.hpp"

namespace mpix {
namespace {

struct Registered {
  std::mutex mu;
  std::vector<const SettingTable *> tables;
};

Registered &registered() {
  static Registered *r = new Registered;  // never destroyed: tables are read until exit
  return *r;
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

void settings_register(const SettingTable &t) {
  Registered &r = registered();
  std::lock_guard<std::mutex> lk(r.mu);
  r.tables.push_back(&t);
}

std::vector<const SettingTable *> setting_tables() {
  std::vector<const SettingTable *> all{&base_settings()};
  Registered &r = registered();
  std::lock_guard<std::mutex> lk(r.mu);
  all.insert(all.end(), r.tables.begin(), r.tables.end());
  return all;
}

const char *SettingTable::str(std::size_t i) const {
  std::call_once(read_, [this] {
    values_.reset(new const char *[n_]);
    for (std::size_t k = 0; k < n_; ++k) {
      const char *env = std::getenv(rows_[k].name);
      values_[k] = (env && *env) ? env : rows_[k].default_value;
    }
  });
  return values_[i];
}

std::string SettingTable::takes(std::size_t row) const {
  const SettingInfo &i = info(row);
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

Status SettingTable::parse(std::size_t row, const char *value, long *n) const {
  const SettingInfo &i = info(row);
  auto bad = [&](const char *why) {
    return make_status(MPI_ERR_ARG, "%s=%s is %s: it takes %s", i.name, value, why,
                       takes(row).c_str());
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

long SettingTable::value(std::size_t i) const {
  long n = 0;
  if (parse(i, str(i), &n).is_ok()) return n;
  // A bad value fails initialisation (settings_check); code that still runs (the logger, a host
  // stream made without MPI) gets the default.
  n = 0;
  parse(i, info(i).default_value, &n);
  return n;
}

const Status &settings_check() {
  static const Status *result = [] {
    Status first;
    for (const SettingTable *t : setting_tables())
      for (std::size_t i = 0; i < t->size(); ++i) {
        Status st = t->parse(i, t->str(i), nullptr);
        if (st.is_ok()) continue;
        MPIX_LOG(error, "api", "%s", st.what().c_str());
        if (first.is_ok()) first = std::move(st);
      }
    return new Status(std::move(first));  // never destroyed: read until exit
  }();
  return *result;
}

}  // namespace mpix
