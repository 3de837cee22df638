// Device buffers for providers that cannot reach device memory (DESIGN.md §3): the provider
// sends from and receives into pinned host bounce buffers, and the stream copies between the
// user's buffer and the bounce buffer in stream order — out before the op's trigger, in after
// its completion wait. Bounce buffers come from a pool (power-of-two size classes) and go back
// to it once nothing can touch them any more: for a send when the op retires (the network is
// done and the copy out preceded the trigger); for a receive also when the stream has passed
// the copy in, which the stream's trigger word tells (it reaches the threshold of the next op
// enqueued after the copy).
//
// One op is one message on the wire whatever its size, so staged ops match plain MPI peers,
// ANY_SOURCE receives and receives larger than the message exactly as unstaged ones do.
//
// The bounce buffer mirrors the user's buffer from the datatype's true lower bound to its true
// upper bound. A datatype with gaps (a strided vector, a struct with padding) is copied block by
// block along its typemap (core/typemap.hpp), so a receive never writes the gap bytes of device
// memory and a send never reads them; a dense one is one copy.
//
// A receive's message may be shorter than its buffer, and MPI leaves the bytes past the message
// alone. The copy in therefore moves only the message's bytes: the agent stores the received
// length in a word of the bounce buffer before it releases the stream, and the stream copies
// that prefix (ExecStream::copy_prefix_async: a kernel or host function reading the length at
// run time). Where the stream cannot (a datatype with gaps, whose received bytes are a prefix in
// typemap order, not in address order; a HIP build without kernels; a buffer the kernel cannot
// reach), the copy out fills the bounce buffer from the receive buffer before the trigger
// instead, so that copying the whole span back writes the bytes past the message with the
// values they already had (nobody may write a buffer while a receive into it is pending).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "base/status.hpp"

namespace mpix {

struct Op;
class Backend;
class ExecStream;
struct Staging;

// Stages @p op's device or managed buffers through bounce buffers, if it has any and the
// provider cannot read device memory: sets op.staging and points op.sbuf / op.rbuf at the
// bounce buffers. Call before the op is armed. @p chunk (MPIX_STAGING_CHUNK of the op's
// communicator, 0: off): a send of a predefined datatype longer than @p chunk bytes is sent in
// pieces of @p chunk bytes (providers/mpi/mpi_chunk.hpp), each copied out and triggered on
// its own, so that the copy of one piece overlaps the transfer of the one before.
Status staging_setup(Op &op, Backend &be, bool provider_device_memory, std::size_t chunk = 0);

// Pieces of a chunked send (1: one message) and their size. A chunked send takes one trigger
// threshold per piece, consecutive from op.threshold: piece i may go once the stream's trigger
// word reaches op.threshold + i.
uint64_t staging_pieces(const Staging &stg);
std::size_t staging_chunk(const Staging &stg);

// Stream-ordered copy out of device memory into the bounce buffer (before the trigger). For a
// chunked send, piece by piece, each piece but the last followed by its trigger write to
// @p trigger_word (value @p first_threshold + i): the caller writes the last one.
Status staging_copy_out(Staging &stg, ExecStream &ex, uint64_t *trigger_word = nullptr,
                        uint64_t first_threshold = 0);

// A receive that a direct path may deliver straight into its device buffer (the provider's
// may_deliver_device): its copy in goes by the received length whatever the size, so that it
// copies nothing over a delivered message. Call after staging_setup.
void staging_copy_in_by_length(Staging &stg);

// Stream-ordered copy into device memory (after the completion wait). @p trigger_word and
// @p next_threshold (the next value the stream writes to that word after this copy) tell when
// the stream has run the copy, so that the bounce buffer may be reused. The data is copied in
// once: by the first of this call and staging_copy_in_on_host.
Status staging_copy_in(Staging &stg, ExecStream &ex, const uint64_t *trigger_word,
                       uint64_t next_threshold);

// Agent thread, before the op's completion word is written: a receive's message may be shorter
// than its buffer; records the received byte count (from @p st) where the stream's copy in reads
// it, so that bytes past the message are left as they were (MPI modifies only the message's).
void staging_received(Staging &stg, const MPI_Status &st);

// Chunked receives (providers/mpi/mpi_chunk.hpp), agent thread: the message is @p len bytes
// and its first @p pieces pieces are in the bounce buffer. Lets a pipelined copy in (below)
// go on, or, where the agent copies (staging_use_agent), copies those pieces in now.
void staging_pieces_arrived(Staging &stg, uint64_t len, uint64_t pieces);

// A receive on a chunk-enabled communicator whose stream copies in piece by piece: the stream
// must run staging_copy_in_pieces before its completion wait for the op (the trigger, deferred
// or not, already written), and staging_copy_in after it as usual.
bool staging_pipelined(const Staging &stg);
// For each chunk of the receive buffer: wait until the agent says its piece arrived, then copy
// it in (clipped at the message's length), so the copy overlaps the later pieces' transfer.
Status staging_copy_in_pieces(Staging &stg, ExecStream &ex);

// The op completed on the host (MPI_Wait / MPI_Test on its request, not a stream wait): copies
// the received data into device memory now, on the calling thread. Idempotent.
Status staging_copy_in_on_host(Staging &stg);

// Dense messages (every copy dense; at most MPIX_AGENT_COPY_MAX bytes if set): the agent thread
// copies instead of the stream, on the backend's side stream (Backend::agent_copy): out of
// device memory when the stream's trigger fires (the stream has run everything before it),
// into device memory when the message has arrived, before the completion word is written (so
// the stream's wait releases with the data in place), and only the bytes that arrived. The
// user's stream then carries no copy at all: each copy engine operation in a stream's chain
// costs several microseconds of stream time (docs/results-gpu.md), a host-issued one about a
// third of that. Call after staging_setup for ops that are not queue ops (a queue op copies
// out at its start). @p device: the stream's device (-1 for a host stream).
void staging_use_agent(Staging &stg, int device);
// Ops no stream runs (a partition's message, src/partitioned): the agent copies whatever the
// size. MPI_ERR_TYPE for a datatype with gaps (the agent copies dense ranges only).
Status staging_use_agent_always(Staging &stg, int device);
bool staging_on_agent(const Staging &stg);
// Agent thread: issue the copies out of device memory (before the op is posted).
Status staging_agent_copy_out(Staging &stg);
// Agent thread: issue the copy of the @p received bytes into device memory; *@p issued says
// whether there was anything to copy (nothing if a host wait already copied it).
Status staging_agent_copy_in(Staging &stg, std::size_t received, bool *issued);
// Agent thread: have the copies issued so far run?
bool staging_agent_copied(const Staging &stg);

// Agent thread, GPU-direct receives (providers/mpi/ipc_path.hpp): the user's device buffer, if
// the message may be copied straight into it — a dense receive whose copy in goes by the
// received length (the agent's copy, or the stream's length-reading one) — or null. Once
// given, the staging's copy in copies nothing: the message is already in place.
void *staging_direct_target(Staging &stg);

// Bounce buffers held by the pool (free or waiting for their stream) and in use, for tests.
struct StagingPoolStats {
  std::size_t cached = 0;
  std::size_t in_use = 0;
  std::size_t bytes = 0;
};
StagingPoolStats staging_pool_stats();

}  // namespace mpix
