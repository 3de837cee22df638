// Internal status: an MPI error class plus, on failure, a message naming what went wrong.
// The success path carries no allocation and is one word to make and to drop (the message sits
// behind a pointer, null on success): the enqueue path passes dozens of them per call.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <utility>

namespace mpix {

class Status {
 public:
  Status() = default;
  Status(int mpi_class, std::string what)
      : code_(mpi_class), what_(std::make_unique<std::string>(std::move(what))) {}
  Status(const Status &o) : code_(o.code_), what_(o.what_ ? new std::string(*o.what_) : nullptr) {}
  Status &operator=(const Status &o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status &&) noexcept = default;
  Status &operator=(Status &&) noexcept = default;

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == MPI_SUCCESS; }
  int code() const { return code_; }
  const std::string &what() const { return what_ ? *what_ : empty(); }

 private:
  static const std::string &empty() {
    static const std::string *e = new std::string;  // never destroyed: used until exit
    return *e;
  }

  int code_ = MPI_SUCCESS;
  std::unique_ptr<std::string> what_;
};

// Formats a Status with printf-style text.
Status make_status(int mpi_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// @p file (a __FILE__) from the project's root on ("src/core/op.cpp"), so that every message
// names a place the same way, whatever the build's absolute paths.
const char *source_file(const char *file);

// Turns a foreign MPI return code into a Status that names the expression and place.
Status mpi_status(int rc, const char *expr, const char *file, int line);

// An MPI error code for @p st that a user can take apart: MPI_Error_class gives st.code() and
// MPI_Error_string st.what() (MPI_Add_error_code / MPI_Add_error_string; one code per distinct
// message, at most a few hundred in a process, then the bare class). For errors that reach the
// user through an MPI_Status (asynchronous ones): MPI_SUCCESS for success.
int mpi_error_code(const Status &st);

}  // namespace mpix

#define MPIX_MPI_CHECK(expr)                                                                     \
  do {                                                                                           \
    int mpix_rc_ = (expr);                                                                       \
    if (mpix_rc_ != MPI_SUCCESS) return ::mpix::mpi_status(mpix_rc_, #expr, __FILE__, __LINE__); \
  } while (0)

#define MPIX_TRY(expr)                      \
  do {                                      \
    ::mpix::Status mpix_st_ = (expr);       \
    if (!mpix_st_.is_ok()) return mpix_st_; \
  } while (0)
