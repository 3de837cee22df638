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
//
// Announced sends (MPIX_GPU_DIRECT_ANNOUNCE: auto, the default, as announce_policy.hpp decides
// per peer; always; off): the header goes when the agent takes the op (Provider::take), before
// the stream reaches the send, where no earlier send to that peer on that communicator is still
// unfired (MpiProvider::unfired_, so that none is overtaken). It names a ready word
// (ipc_ready.hpp) that the sending stream writes right before the send's trigger
// (FireRecipe::ready). The receiver's stream copy waits for the word on the GPU (StagedBuffers
// len_word[4..5]; a copy of more than 256 KiB in a one-thread kernel ahead of its grid, so that
// waiting receives leave the GPU to the sender's kernels: gate_then_publish in
// gpu/cuda/cuda_kernels.cu); a receive the agent copies first sends WANT on the FIN
// channel and waits for the sender's READY, which the sender's agent sends once its stream
// reached the send; a receive matched before its stream wait is queued asks too, but is still
// copied by its stream if that wait comes first and is the stream's next. The sender's stream
// still waits for the op's completion word (the FIN through both agents), and the receive is
// still posted when its stream reaches it.
//
// Completion on the GPU (MPIX_GPU_DIRECT_COMPLETION=gpu; opt-in: the default, answer, keeps the
// answer alone -- session 39 measured the halo level to ~1 us ahead, a ping-pong 2-3 us slower):
// arm() gives a GPU-direct send from a CUDA stream whose kernels wait (ExecStream::waits_either) a
// ready word of its device too, announced or not (IpcEarly::done), and names it the op's second
// completion word (Op::peer_done, at the word's value + 1); the header carries it (IpcRts::done).
// Where the receiver's stream copies the message, its copy kernel sets the word once every block
// has read the message, before it sets the word its agent answers on (Stager::deliver_from,
// len_word[6..7]). A wait on the send in a kernel (MPIX_Waitall_enqueue's, where its statuses
// are ignored) goes on at whichever comes first, that word or the op's completion word: the
// sender's stream no longer waits for the answer through both agents (a round trip a halo's
// Waitall sat behind). Every other wait (a stream memory operation; a status asked for), and
// every send the receiver's agent copies, still goes on at the answer, which always comes. The
// word goes back to its pool only on the answer, so no later use meets a late write: the
// receiver writes before it answers, and the next use starts at value + 2.
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
#include "providers/mpi/announce_policy.hpp"
#include "providers/mpi/ipc_ready.hpp"

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
  // An announced send (sent before the sender's stream reached the send): the sender's ready
  // word, which reaches ready_value once the data is in place (ipc_ready.hpp). early 0: the
  // header went when the stream reached the send, the data is in place, the rest is unused.
  uint64_t early;
  uint64_t ready_value;
  uint64_t ready_base, ready_id, ready_offset, ready_slab_bytes;
  // 1: the sender's stream may wait for the ready word to reach ready_value + 1, which a copy
  // of the message by the receiver's stream writes once it has read it ("Completion on the
  // GPU"; the word is sent as for an announced send, early or not).
  uint64_t done;
  uint64_t spare;
  unsigned char ready_handle[64];
};
static_assert(sizeof(IpcRts) == 256, "the rendezvous header is a wire format");

// The answers on the private communicator: the receiver's FIN (copied, or failed) and WANT (it
// copies with its agent, so it asks an announced send for READY), and the sender's READY (its
// stream reached the send). FIN and WANT go to the sender with fin_tag(token), READY to the
// receiver with ready_tag(token), so that they never meet the other direction's.
constexpr uint64_t kIpcWantMagic = 0x746e617763706978ull;
constexpr uint64_t kIpcReadyMagic = 0x7964616563706978ull;

struct IpcFin {
  uint64_t magic;
  uint64_t token;
  int64_t error;   // MPI error class of the receive (MPI_ERR_TRUNCATE, ...); 0 on success
  uint64_t bytes;  // copied
};
static_assert(sizeof(IpcFin) == 32, "the answer is a wire format");

// What a GPU-direct send's op holds (Op::prov) from arm() to its completion: its ready word,
// which the stream writes right before the send's trigger (FireRecipe::ready) where it may be
// announced (gate), and which the receiver's copy kernel sets one higher once it has copied
// (done: Op::peer_done).
struct IpcEarly {
  ReadyWord ready;
  bool gate = false;       // the stream writes ready.value before the trigger: may be announced
  bool done = false;       // Op::peer_done is the word, at ready.value + 1
  bool announced = false;  // its header went at take() (else at fire(), as any GPU-direct send)
};
// Whether sends are announced (MPIX_GPU_DIRECT_ANNOUNCE): never, per peer as announce_policy.hpp
// decides (auto, the default), or every send that can be (always).
enum class AnnounceMode { off, adaptive, always };
AnnounceMode ipc_announce_mode();
inline bool ipc_announce_on() { return ipc_announce_mode() != AnnounceMode::off; }
// Whether GPU-direct sends are completed on the GPU (MPIX_GPU_DIRECT_COMPLETION=gpu).
bool ipc_gpu_completion();

// What every rank tells the others at MPIX_Stream_comm_create (an MPI_Allgather).
struct IpcPeerInfo {
  uint64_t host = 0;  // hash of the host name
  int64_t pid = 0;
  int32_t wants = 0;  // MPIX_GPU_DIRECT not off, a CUDA stream whose backend has IPC
  int32_t device = -1;
  unsigned char uuid[16] = {};
  int32_t host_functions = 0;  // the stream's triggers are host functions (TriggerMode::hostfn)
  int32_t spare = 0;
};
static_assert(sizeof(IpcPeerInfo) == 48, "exchanged between ranks");

// Why the pair (@p me, @p peer) keeps the staged path, or null for GPU-direct. @p reachable:
// whether my device can map memory of the peer's (Backend::ipc_can_reach). Pure, for tests.
const char *ipc_pair_refusal(const IpcPeerInfo &me, const IpcPeerInfo &peer, bool reachable,
                             bool self);
// Whether my GPU-direct sends to @p peer may be announced: not where either stream's triggers
// are host functions. An announced send's receive waits on the GPU for the sender's kernels,
// so both processes' kernels must run at once, and host functions may hold kernels back
// (gpu_pipeline with hostfn triggers hung so: docs/results-gpu.md, sessions 33-34). Pure, for
// tests.
bool ipc_may_announce(const IpcPeerInfo &me, const IpcPeerInfo &peer);

// The GPU-direct state of a stream communicator, shared by its duplicates.
struct IpcShared {
  MPI_Comm priv = MPI_COMM_NULL;  // IpcFin answers, tagged by the sender's token
  int tag_ub = 32767;
  int device = -1;  // this rank's device (of the communicator's stream)
  Backend *backend = nullptr;
  std::vector<uint8_t> direct;                   // per rank of the communicator: 1 = GPU-direct
  std::vector<uint8_t> may_announce;             // per rank: ipc_may_announce
  std::unique_ptr<AnnouncePolicy[]> announce;    // per rank: whether sends to it are announced
  std::unordered_map<int, uint64_t> next_token;  // per destination; agent thread only
  int fin_tag(uint64_t token) const {
    return static_cast<int>(2 * (token % (static_cast<uint64_t>(tag_ub) / 2 + 1)));
  }
  int ready_tag(uint64_t token) const { return fin_tag(token) + 1; }
  // Whether sends to @p rank may be announced at all (ipc_may_announce).
  bool announces_to(int rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < may_announce.size() &&
           may_announce[static_cast<std::size_t>(rank)];
  }
  // The announce policy of sends to @p rank (null: no such rank).
  AnnouncePolicy *policy(int rank) const {
    return announce && rank >= 0 && static_cast<std::size_t>(rank) < direct.size()
               ? &announce[static_cast<std::size_t>(rank)]
               : nullptr;
  }
  ~IpcShared();
};

// Collective over @p comm, on every rank: decides the GPU-direct pairs (every rank takes part,
// whatever its own stream). *@p out stays null where this rank has no GPU-direct peer.
// @p backend / @p device: this rank's stream backend and device (null / -1 for no CUDA stream);
// @p host_functions: its stream triggers by host functions.
Status ipc_comm_open(MPI_Comm comm, Backend *backend, int device, bool host_functions, bool chunked,
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
// MPIX_GPU_DIRECT_EAGER_MAX: larger messages from a stream go GPU-direct (a partition's at
// every size); smaller ones stay eager (staged).
uint64_t ipc_eager_max();

// A receiver's WANT to an announced send and the READY it waits for (IpcPath::ask_ready).
struct IpcAsk {
  IpcFin want{}, ready{};
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  // Whether both went through (*@p rc: an MPI error class where one failed).
  bool done(int *rc);
};

// The agent-thread side: rendezvous sends, mapped allocations, answers. One per provider.
class IpcPath {
 public:
  ~IpcPath();
  // An announced send (Op::prov an IpcEarly): its header goes now, before its stream reaches
  // it; fire_send then only marks it reached (and sends READY where the receiver asked).
  Status announce_send(Op &op, IpcShared &ipc);
  Status fire_send(Op &op, IpcShared &ipc);
  // An announced send that will never be fired (Provider::disarm): its ready word is written
  // from the host, so that a receiver already waiting goes on, and its answer is dropped.
  void drop_announced(Op &op);
  bool progress(std::vector<Op *> &done);
  bool busy() const {
    return !sends_.empty() || !fins_.empty() || !copies_.empty() || !drains_.empty();
  }

  // Receiver: the device word of announced @p rts that says its data is in place, mapped here.
  Status map_ready(const IpcRts &rts, Backend *be, int device, const uint64_t **word);
  // Receiver: asks announced @p rts's sender for READY (WANT) and receives it (the agent may
  // copy once both requests completed: IpcAsk::done).
  Status ask_ready(IpcShared &ipc, int source, const IpcRts &rts, std::unique_ptr<IpcAsk> *out);
  // Receiver: READY is no longer needed (the stream copies after all): its requests are
  // completed here.
  void drain(std::unique_ptr<IpcAsk> ask);

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
  // reqs: the header's send, the answer's receive (FIN, or WANT and then FIN), READY's send.
  // sends_ holds those whose stream reached them (or never will: drop_announced wrote the
  // ready word); announced_ the others, untested until then.
  struct Send {
    Op *op = nullptr;  // null: dropped (drop_announced), kept until its answer came
    IpcShared *ipc = nullptr;
    int peer = 0;
    IpcRts rts{};
    IpcFin fin{};
    IpcFin ready{};
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    bool fin_in = false;
    bool wanted = false;    // announced, and the receiver's agent asked for READY
    int err = MPI_SUCCESS;  // an MPI call of this send failed: nothing more is tested
  };
  // Tells the send's peer's AnnouncePolicy how its receiver copied @p s (answered now).
  static void announce_learn(const Send &s, bool want);
  // @p e: the op's ready word (null: none); @p announced: the header goes before the stream
  // reaches the send.
  Status post_send(Op &op, IpcShared &ipc, const IpcEarly *e, bool announced);
  Status send_ready(Send &s);
  // Send @p s is over (answered, and fired unless dropped): completes its op.
  void finish_send(Send &s);
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

  std::vector<std::unique_ptr<Send>> sends_;                         // tested every loop
  std::unordered_map<const Op *, std::unique_ptr<Send>> announced_;  // not yet fired
  std::vector<std::unique_ptr<Fin>> fins_;
  std::vector<StreamCopy> copies_;
  std::vector<std::unique_ptr<IpcAsk>> drains_;
  IpcMapCache maps_;  // what this process mapped of its senders' allocations
  std::vector<std::pair<Backend *, int>> unflushed_;  // devices with batched copies unflushed
};

}  // namespace mpix
