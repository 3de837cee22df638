#include "providers/ofi/ofi_check.hpp"

#include <cstdlib>
#include <cstring>

namespace mpix {

int ofi_error_class(int fi_errno) {
  switch (std::abs(fi_errno)) {
    case FI_ETRUNC:
      return MPI_ERR_TRUNCATE;
    case FI_ENOMEM:
      return MPI_ERR_NO_MEM;
    case FI_ENOSYS:
    case FI_EOPNOTSUPP:
      return MPI_ERR_UNSUPPORTED_OPERATION;
    case FI_EINVAL:
    case FI_EBADFLAGS:
      return MPI_ERR_ARG;
    default:
      return MPI_ERR_OTHER;
  }
}

Status ofi_status(long rc, const char *expr, const char *file, int line) {
  int err = static_cast<int>(rc < 0 ? -rc : rc);
  return make_status(ofi_error_class(err), "%s failed at %s:%d: %s (%d)", expr, source_file(file),
                     line, fi_strerror(err), -err);
}

}  // namespace mpix
