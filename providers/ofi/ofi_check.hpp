// libfabric return codes turned into mpix Status values (MPI error classes), keeping the
// failing expression and place (STYLE.md habit 5).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstddef>

#include "base/status.hpp"

namespace mpix {

// The MPI error class for a libfabric error number (positive or negative FI_E*).
int ofi_error_class(int fi_errno);
// Status for a failed libfabric call: rc is its (negative) return value.
Status ofi_status(long rc, const char *expr, const char *file, int line);

}  // namespace mpix

#define MPIX_OFI_CHECK(expr)                                                                  \
  do {                                                                                        \
    long mpix_ofi_rc_ = static_cast<long>(expr);                                              \
    if (mpix_ofi_rc_ < 0) return ::mpix::ofi_status(mpix_ofi_rc_, #expr, __FILE__, __LINE__); \
  } while (0)
