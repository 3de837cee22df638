// MPIX_Stream handles: an id into the stream registry (core/stream.hpp), never a pointer.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.hpp"
#include "core/stream.hpp"
#include "mpix/mpix.h"

namespace mpix {

inline uint64_t handle_id(MPIX_Stream s) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s));
}
inline MPIX_Stream to_handle(uint64_t id) {
  return reinterpret_cast<MPIX_Stream>(static_cast<uintptr_t>(id));
}

// The live stream of @p h; MPI_ERR_ARG naming @p what (the argument) for MPIX_STREAM_NULL, a
// handle that was never a stream, or a freed one.
Status find_stream(MPIX_Stream h, std::shared_ptr<Stream> *out, const char *what = "stream");

// Before a host-side MPI call ordered after the stream's work (plain MPI calls on a stream
// communicator, MPIX_Stream_send & co.): writes a deferred trigger and waits until everything
// enqueued on @p s so far has executed. A no-op unless the stream syncs plain calls
// (Stream::syncs_plain_calls: GPU streams by default). Sticky errors stay for
// MPIX_Stream_synchronize.
Status stream_drain_for_host_call(Stream &s);

}  // namespace mpix
