// Streams whose last reference goes on the agent thread are destroyed later, elsewhere: a
// stream's teardown synchronises its native stream (core/stream.cpp), and that stream may be
// waiting in stream order for an op only the agent can complete (a queue's private stream, whose
// ops the agent lets go of while the stream communicator's next exchange waits on the same host
// stream). The agent thread never waits for a stream.
#pragma once

#include <atomic>

namespace mpix {

class Stream;

// The deleter of every Stream's shared_ptr (make_stream): on the agent thread the stream goes to
// the release list; elsewhere it is deleted at once.
void stream_delete(Stream *s);
// Deletes every stream on the release list; nothing on the agent thread. Called at the start of
// every C entry point (api_guard) and at MPI_Finalize once the agent has stopped.
void stream_release_run();
extern std::atomic<bool> g_stream_release_pending;
inline void stream_release_pending() {
  if (g_stream_release_pending.load(std::memory_order_relaxed)) stream_release_run();
}

}  // namespace mpix
