// How C entry points report failure: log one line naming the call and the problem, invoke the
// error handler of the communicator involved (MPI_COMM_WORLD's when there is none), and return
// the MPI error class. No C++ exception crosses the C API: every entry point runs inside
// api_guard, which turns one into an MPI error class.
#pragma once

#include <mpi.h>

#include "base/exception_class.hpp"
#include "base/internal_thread.hpp"
#include "base/status.hpp"
#include "core/stream_release.hpp"

namespace mpix {

int finish_failed(MPI_Comm comm, const char *call, const Status &st);
// Inline where it succeeds (every call returns through it): no call on the fast path.
inline int finish(MPI_Comm comm, const char *call, const Status &st) {
  return st.is_ok() ? MPI_SUCCESS : finish_failed(comm, call, st);
}
// The same for an MPI error code made earlier (an asynchronous failure's, with its message).
int report_code(MPI_Comm comm, const char *call, int code);

// Call only inside a catch block: exception_class (base/exception_class.hpp), then MPI_COMM_WORLD's
// error handler (the communicator of a call that threw is not known for sure).
int exception_finish(const char *call) noexcept;

// Runs an entry point's body (@p fn returns its MPI error class); an exception becomes an MPI
// error class instead of crossing into C. Streams the agent let go of are destroyed first
// (core/stream_release.hpp). Inside it, the thread counts as mpix's own
// (base/internal_thread.hpp): mpix's MPI calls skip the plain-MPI wrappers' stream sync.
template <class Fn>
int api_guard(const char *call, Fn &&fn) noexcept {
  InternalScope internal;
  try {
    stream_release_pending();
    return fn();
  } catch (...) {
    return exception_finish(call);
  }
}

}  // namespace mpix
