#include "base/runtime_lib.hpp"

#include <dlfcn.h>

namespace mpix {

RuntimeLib::RuntimeLib(const char *what, std::initializer_list<const char *> sonames)
    : what_(what), sonames_(sonames) {}

void RuntimeLib::open() {
  std::call_once(once_, [this] {
    for (const char *name : sonames_) {
      // RTLD_LOCAL: its symbols stay out of the global scope (nothing else binds to them).
      handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle_) {
        opened_ = name;
        return;
      }
      if (!why_.empty()) why_ += "; ";
      const char *err = dlerror();
      why_ += err ? err : name;
    }
  });
}

void *RuntimeLib::sym(const char *name) {
  open();
  return handle_ ? dlsym(handle_, name) : nullptr;
}

bool RuntimeLib::loaded() {
  open();
  return handle_ != nullptr;
}

std::string RuntimeLib::describe() {
  open();
  if (handle_) return std::string(what_) + ": loaded (" + opened_ + ")";
  return std::string(what_) + ": not loaded: " + why_;
}

}  // namespace mpix
