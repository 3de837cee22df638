// Which threads are mpix's own: the agent, host-stream workers, progress threads, and any thread
// while it runs inside an mpix entry point. libmpix's plain-MPI wrappers (api/plain_mpi_api.cpp)
// synchronise a stream communicator's stream before a user's call; mpix's own MPI calls on
// those communicators (the agent posting an enqueued op, a collective inside
// MPIX_Stream_comm_create) must go straight to the MPI library instead.
#pragma once

#include "base/tls_fast.hpp"

namespace mpix {

// Every entry point reads it twice (base/tls_fast.hpp).
extern thread_local int t_internal_depth MPIX_TLS_FAST;

// True on an mpix thread or inside an mpix call.
inline bool in_internal() { return t_internal_depth > 0; }

// Names the calling thread (at most 15 characters kept) for ps, top, gdb and perf, which then
// tell mpix's threads from the application's; a refusal is ignored. Every mpix thread calls
// it: it also marks the thread as mpix's for MPIX_PROFILE's report (base/profile.hpp).
void name_this_thread(const char *name);

// Marks the current thread as mpix's own for the scope's lifetime (nests).
struct InternalScope {
  InternalScope() { ++t_internal_depth; }
  ~InternalScope() { --t_internal_depth; }
  InternalScope(const InternalScope &) = delete;
  InternalScope &operator=(const InternalScope &) = delete;
};

}  // namespace mpix
