#pragma once

#include <cstddef>
#include <cstdint>

#include "mpix/mpix_host_stream.h"

namespace mpix {
class Backend;
struct StreamMemOp;
// Enqueues @p n writes and waits on @p s under one lock and one wake-up of its worker (what
// mpix_host_stream_write_value64 / wait_value64 do one at a time). MPI_ERR_ARG if @p s is not
// live or a word is null.
int host_stream_push_memops(mpix_host_stream_t s, const StreamMemOp *ops, std::size_t n);
// The same for a stream the caller has just found live (HostExecStream::check_live).
int host_stream_push_memops_live(mpix_host_stream_t s, const StreamMemOp *ops, std::size_t n);
// One write (@p wait false) or wait of @p value on @p word, for a live stream: the enqueue
// path's single trigger write, without building a StreamMemOp and looping over one.
int host_stream_push_one_live(mpix_host_stream_t s, bool wait, uint64_t *word, uint64_t value);
Backend *host_backend();
// Whether @p s is a live host stream (a set lookup: never dereferences @p s).
bool host_stream_is_live(mpix_host_stream_t s);
// Bumped whenever a host stream is destroyed: a stream found live stays live while this value
// does not change.
uint64_t host_stream_destroyed_epoch();
}  // namespace mpix
