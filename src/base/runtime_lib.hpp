// A shared library that mpix opens at run time (dlopen) instead of linking it, so that libmpix
// loads, and every other part of it works, on machines without that library: libamdhip64 (the
// HIP backend), libfabric (provider ofi). Opened once, on first use, and never closed.
#pragma once

#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace mpix {

class RuntimeLib {
 public:
  // @p what names the library in messages; @p sonames are tried in order.
  RuntimeLib(const char *what, std::initializer_list<const char *> sonames);
  RuntimeLib(const RuntimeLib &) = delete;
  RuntimeLib &operator=(const RuntimeLib &) = delete;

  // The symbol's address, or null when the library or the symbol is missing.
  void *sym(const char *name);
  bool loaded();
  // "libfabric: loaded (libfabric.so.1)" or "libfabric: not loaded: <why>" (for mpix_info).
  std::string describe();

 private:
  void open();

  const char *what_;
  std::vector<const char *> sonames_;
  std::once_flag once_;
  void *handle_ = nullptr;
  std::string opened_, why_;
};

}  // namespace mpix
