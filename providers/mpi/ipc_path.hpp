// Same-node GPU-direct on provider mpi (MPIX_GPU_DIRECT; docs/guide.md, "GPU-direct").
//
// Between two ranks of one node whose GPUs can map each other's memory (the same GPU, or two
// GPUs with peer access), a send from device memory moves GPU to GPU in one copy, with no
// bounce buffer and no MPI on the data path:
//
//   sender's agent, once its stream reaches the send:
//     MPI_Isend of a 128-byte IpcRts {magic, length, the allocation's CUDA IPC handle, offset,
//     buffer id, a token} on the USER communicator with the user's tag, so it is matched
//     exactly as the data would be (wildcards, non-overtaking order, truncation);
//     MPI_Irecv of the IpcFin answer on a private communicator, tagged by the token.
//   receiver's agent, which matches every receive on such a communicator itself (the matcher
//   of mpi_chunk.hpp), on a header that checks out:
//     maps the allocation (cached per sender process and allocation; mapped anew when the
//     buffer id differs, i.e. the sender freed the buffer and its address was reused; the old
//     mapping is closed only at MPI_Finalize, since unmapping waits for the device), hands the
//     mapped address and the length to the receive's copy in (Stager::deliver_from) and
//     completes the receive: the receiving stream's copy-in kernel then copies the message
//     from the sender's memory into the receive buffer and sets a word, on which the agent
//     answers with an IpcFin; the send completes with the answer. The agent makes no GPU call
//     for a message but the first mapping of an allocation. Where the receive's stager cannot
//     (an agent-copied or chunked receive, a partition's receive), the agent copies on its
//     copy stream instead and answers once that copy has run: the copies one agent loop
//     starts share one completion write, and those into device memory of at most 1 MiB run
//     in one kernel (Backend::agent_copy_deferred; a cudaMemcpyAsync costs the agent 4-5 us
//     under MPS).
//
// Chosen once per pair of ranks at MPIX_Stream_comm_create: both on CUDA streams, on one host,
// the receiver's device able to map the sender's, MPIX_GPU_DIRECT not off on either, and both
// ranks agreeing. Sends of host or managed memory, of datatypes with holes or derived ones,
// and everything to other peers keep the staged path; receives take either kind of message.
// Partitioned requests on a stream communicator (src/partitioned) have their data
// communicator opened the same way: each partition of a cudaMalloc buffer is a gated op (no
// stream) that goes GPU-direct at every size (a partitioned send may wait for its receiver),
// where a staged one would cost two synchronous agent copies.
// The receiver's buffer is written only after its stream reached the receive (the agent posts
// it then) and the sender's read only after its stream reached the send.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.hpp"
#include "core/provider.hpp"
#include "gpu/backend.hpp"
#include "gpu/ipc_map_cache.hpp"

namespace mpix {

struct Op;

constexpr uint64_t kIpcRtsMagic = 0x737472637069786dull;  // "mxipcrts"
constexpr uint64_t kIpcFinMagic = 0x6e69666370697864ull;

struct IpcRts {
  uint64_t magic;
  uint64_t bytes;  // of the message
  uint64_t host;   // the sender's host (hash of its name) and process: the mapping cache key
  int64_t pid;
  uint64_t base;  // the allocation's start in the sender, and the message's offset in it
  uint64_t offset;
  uint64_t buffer_id;  // the allocation's id in the sender (a reused address has another)
  uint64_t token;      // the tag of the answer on the private communicator
  unsigned char handle[64];
};
static_assert(sizeof(IpcRts) == 128, "the rendezvous header is a wire format");

struct IpcFin {
  uint64_t magic;
  uint64_t token;
  int64_t error;   // MPI error class of the receive (MPI_ERR_TRUNCATE, ...); 0 on success
  uint64_t bytes;  // copied
};
static_assert(sizeof(IpcFin) == 32, "the answer is a wire format");

// What every rank tells the others at MPIX_Stream_comm_create (an MPI_Allgather).
struct IpcPeerInfo {
  uint64_t host = 0;  // hash of the host name
  int64_t pid = 0;
  int32_t wants = 0;  // MPIX_GPU_DIRECT not off, a CUDA stream whose backend has IPC
  int32_t device = -1;
  unsigned char uuid[16] = {};
};
static_assert(sizeof(IpcPeerInfo) == 40, "exchanged between ranks");

// Why the pair (@p me, @p peer) keeps the staged path, or null for GPU-direct. @p reachable:
// whether my device can map memory of the peer's (Backend::ipc_can_reach). Pure, for tests.
const char *ipc_pair_refusal(const IpcPeerInfo &me, const IpcPeerInfo &peer, bool reachable,
                             bool self);

// The GPU-direct state of a stream communicator, shared by its duplicates.
struct IpcShared {
  MPI_Comm priv = MPI_COMM_NULL;  // IpcFin answers, tagged by the sender's token
  int tag_ub = 32767;
  int device = -1;  // this rank's device (of the communicator's stream)
  Backend *backend = nullptr;
  std::vector<uint8_t> direct;                   // per rank of the communicator: 1 = GPU-direct
  std::unordered_map<int, uint64_t> next_token;  // per destination; agent thread only
  ~IpcShared();
};

// Collective over @p comm, on every rank: decides the GPU-direct pairs (every rank takes part,
// whatever its own stream). *@p out stays null where this rank has no GPU-direct peer.
// @p backend / @p device: this rank's stream backend and device (null / -1 for no CUDA stream).
Status ipc_comm_open(MPI_Comm comm, Backend *backend, int device, bool chunked,
                     std::shared_ptr<IpcShared> *out);

// How @p op, a send, is read (Provider::reads_device): GPU-direct as it is where it is a dense
// predefined datatype in device memory to a GPU-direct peer, from an allocation that overlaps
// none this process exported before; GPU-direct from a device copy where it overlaps one (a
// receiver may still map a freed one, and CUDA then refuses or only partly maps the new one:
// gpu/ipc_exports.hpp); else staged. The enqueuing thread decides staging with it.
DeviceRead ipc_send_read(const Op &op, const IpcShared *ipc);
// The provider's question once the op is made: a send that was not staged, or staged in device
// memory, goes GPU-direct exactly where the basic conditions of ipc_send_read hold. Any thread.
bool ipc_send_goes_direct(const Op &op, const IpcShared *ipc);
// Whether GPU-direct messages are copied by the receiving stream (MPIX_GPU_DIRECT_COPY=stream),
// not by the receiver's agent.
bool ipc_stream_copies();
// Whether receive @p op may get a GPU-direct message (from a GPU-direct peer, or any source
// where there is one): its staging must then copy in by the received length (the message may
// already be in place, and nothing may overwrite it).
bool ipc_may_receive_direct(const Op &op, const IpcShared *ipc);

// The agent-thread side: rendezvous sends, mapped allocations, answers. One per provider.
class IpcPath {
 public:
  ~IpcPath();
  Status fire_send(Op &op, IpcShared &ipc);
  bool progress(std::vector<Op *> &done);
  bool busy() const { return !sends_.empty() || !fins_.empty() || !copies_.empty(); }

  // Receiver: where @p rts's message is in this process (its allocation mapped on @p device).
  Status map_source(const IpcRts &rts, Backend *be, int device, const char **src);
  // Receiver: starts the copy of @p rts's message (@p bytes of it) into @p dst on @p device;
  // *@p ticket tells Backend::agent_copy_done when it has run. The copy is never waited for
  // here, and its completion is written by flush_copies: the copies of one agent loop (a
  // round's partitions, a window of messages) run back to back, small ones in one kernel
  // (Backend::agent_copy_deferred), and share one completion write.
  // @p dst_on_device: @p dst is device or managed memory (else host memory).
  Status start_copy(const IpcRts &rts, std::size_t bytes, void *dst, bool dst_on_device,
                    Backend *be, int device, uint64_t *ticket);
  // Writes the completions of the batched copies started since the last call.
  Status flush_copies();
  // Receiver: answers the sender of @p rts (rank @p source of the communicator).
  Status answer(IpcShared &ipc, int source, const IpcRts &rts, int error, uint64_t bytes);
  // Receiver: answers as answer() does once *@p copied is nonzero (a stream copied the message,
  // Stager::deliver_from); @p keep holds the word until then.
  void answer_when(const std::shared_ptr<IpcShared> &ipc, int source, const IpcRts &rts,
                   uint64_t bytes, const uint64_t *copied, std::shared_ptr<const void> keep);

 private:
  struct Send {
    Op *op = nullptr;
    IpcRts rts{};
    IpcFin fin{};
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  struct Fin {
    IpcFin fin{};
    MPI_Request req = MPI_REQUEST_NULL;
  };
  // A message a receiving stream copies; answered once it has.
  struct StreamCopy {
    std::shared_ptr<IpcShared> ipc;
    int source = 0;
    IpcRts rts{};
    uint64_t bytes = 0;
    const uint64_t *copied = nullptr;
    std::shared_ptr<const void> keep;
  };

  std::vector<std::unique_ptr<Send>> sends_;
  std::vector<std::unique_ptr<Fin>> fins_;
  std::vector<StreamCopy> copies_;
  IpcMapCache maps_;  // what this process mapped of its senders' allocations
  std::vector<std::pair<Backend *, int>> unflushed_;  // devices with batched copies unflushed
};

}  // namespace mpix
