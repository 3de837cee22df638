// Which threads are mpix's own: the agent, host-stream workers, progress threads, and any thread
// while it runs inside an mpix entry point. libmpix's plain-MPI wrappers (api/plain_mpi_api.cpp)
// synchronise a stream communicator's stream before a user's call; mpix's own MPI calls on
// those communicators (the agent posting an enqueued op, a collective inside
// MPIX_Stream_comm_create) must go straight to the MPI library instead.
#pragma once

namespace mpix {

// Initial-exec: read at a fixed offset from the thread pointer, not through __tls_get_addr
// (every entry point reads it twice). libmpix is linked, not dlopen'ed, by its users; a
// dlopen'ed one takes these few bytes from the static TLS surplus the C library keeps for that.
#define MPIX_TLS_FAST __attribute__((tls_model("initial-exec")))
extern thread_local int t_internal_depth MPIX_TLS_FAST;

// True on an mpix thread or inside an mpix call.
inline bool in_internal() { return t_internal_depth > 0; }

// Marks the current thread as mpix's own for the scope's lifetime (nests).
struct InternalScope {
  InternalScope() { ++t_internal_depth; }
  ~InternalScope() { --t_internal_depth; }
  InternalScope(const InternalScope &) = delete;
  InternalScope &operator=(const InternalScope &) = delete;
};

}  // namespace mpix
