// Internal status: an MPI error class plus, on failure, a message naming what went wrong.
// The success path carries no allocation (empty string).
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

namespace mpix {

class Status {
 public:
  Status() = default;
  Status(int mpi_class, std::string what) : code_(mpi_class), what_(std::move(what)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == MPI_SUCCESS; }
  int code() const { return code_; }
  const std::string &what() const { return what_; }

 private:
  int code_ = MPI_SUCCESS;
  std::string what_;
};

// Formats a Status with printf-style text.
Status make_status(int mpi_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Turns a foreign MPI return code into a Status that names the expression and place.
Status mpi_status(int rc, const char *expr, const char *file, int line);

}  // namespace mpix

#define MPIX_MPI_CHECK(expr)                                                       \
  do {                                                                             \
    int mpix_rc_ = (expr);                                                         \
    if (mpix_rc_ != MPI_SUCCESS) return ::mpix::mpi_status(mpix_rc_, #expr, __FILE__, __LINE__); \
  } while (0)

#define MPIX_TRY(expr)                              \
  do {                                              \
    ::mpix::Status mpix_st_ = (expr);               \
    if (!mpix_st_.is_ok()) return mpix_st_;         \
  } while (0)
