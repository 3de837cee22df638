#include "base/exception_class.hpp"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <system_error>

#include "base/log.hpp"

namespace mpix {

int exception_class(const char *call) noexcept {
  int cls = MPI_ERR_INTERN;
  char msg[512];  // no allocation here: this may follow a std::bad_alloc
  try {
    throw;
  } catch (const std::bad_alloc &) {
    cls = MPI_ERR_NO_MEM;
    std::snprintf(msg, sizeof msg, "out of memory");
  } catch (const std::system_error &e) {
    cls = MPI_ERR_OTHER;
    std::snprintf(msg, sizeof msg,
                  "%s (system error %d: a thread or another system resource "
                  "could not be had)",
                  e.what(), e.code().value());
  } catch (const std::exception &e) {
    std::snprintf(msg, sizeof msg, "internal error: %s", e.what());
  } catch (...) {
    std::snprintf(msg, sizeof msg, "internal error: an unknown exception");
  }
  try {
    MPIX_LOG(error, "api", "%s: %s", call, msg);
  } catch (...) {
    // Logging itself ran out of memory: the error class still goes back.
  }
  return cls;
}

}  // namespace mpix
