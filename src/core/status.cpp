#include "core/status.hpp"

#include <cstdarg>
#include <cstdio>

namespace mpix {

Status make_status(int mpi_class, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Status(mpi_class, buf);
}

Status mpi_status(int rc, const char *expr, const char *file, int line) {
  int cls = MPI_ERR_OTHER;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) text[0] = '\0';
  return make_status(cls, "%s failed at %s:%d: %s", expr, file, line, text);
}

}  // namespace mpix
