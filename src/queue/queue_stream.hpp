// What the `void *stream` of MPIX_Create_queue is (HPE's call has no info argument to say it),
// and the queue's private mpix Stream over it. The rules are listed in mpix.h at
// MPIX_Create_queue; this is their one implementation.
#pragma once

#include <mpi.h>

#include <memory>

#include "base/status.hpp"

namespace mpix {

class Stream;

// Opens a private Stream (its own trigger word) over the native stream @p native, whose kind
// is decided from @p comm, the handle and MPIX_QUEUE_STREAM. The Stream is not registered as
// an MPIX_Stream handle; it never owns a stream the caller passed in.
Status queue_stream_open(MPI_Comm comm, void *native, std::shared_ptr<Stream> *out);

}  // namespace mpix
