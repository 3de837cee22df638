// Chunked staged messages on provider mpi (MPIX_STAGING_CHUNK; docs/guide.md, "Staging").
//
// Open MPI here cannot read device memory, so a staged message is copied out, sent and copied in
// whole. With a chunk size C set (the same on every rank of the communicator, checked when it
// is made), a staged send of a predefined datatype longer than C bytes goes in pieces of C bytes
// from its bounce buffer, piece i as soon as the stream has copied it out (its trigger threshold
// is op.threshold + i), so the copy of one piece overlaps the transfer of the one before:
//
//   piece 0     C data bytes + a 32-byte header {magic, total bytes, C, sequence number}, on the
//               USER communicator with the user's tag: it matches receives exactly as the
//               unchunked message would (wildcards, order).
//   piece 1..   the rest, C bytes at a time, on a private communicator (same group) with the
//               header's sequence number (per sender and receiver) as tag.
//
// The receiving side cannot tell such a first piece from a plain message before it has it, so
// on a chunk-enabled communicator mpix matches every receive itself: the agent probes for any
// message (MPI_Improbe, ANY_SOURCE / ANY_TAG) while receives are pending and gives each to the
// earliest posted receive that matches it, or holds it for a later one, in arrival order, which
// is MPI's matching rule. A message of exactly C + 32 bytes whose header checks out is a first
// piece; anything else is a plain message. Hence the rule: on a chunk-enabled communicator,
// receive with mpix calls only (a plain MPI_Recv there may find its message taken).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/status.hpp"
#include "core/provider.hpp"
#include "providers/mpi/ipc_path.hpp"

namespace mpix {

struct Op;

struct ChunkHeader {
  uint64_t magic;
  uint64_t total;  // bytes of the whole message
  uint64_t chunk;  // bytes per piece (the sender's MPIX_STAGING_CHUNK)
  uint64_t seq;    // the tag of pieces 1.. on the private communicator (mod MPI_TAG_UB + 1)
};
static_assert(sizeof(ChunkHeader) == 32, "the chunk header is a wire format");
constexpr uint64_t kChunkMagic = 0x6b6e6863786970ffull;  // "\xffpixchnk"

// What a stream communicator and its duplicates share: the private communicator and the
// sequence numbers, so that pieces of messages sent on either never mix.
struct ChunkShared {
  MPI_Comm priv = MPI_COMM_NULL;
  std::size_t chunk = 0;
  int tag_ub = 32767;
  std::unordered_map<int, uint64_t> next_seq;  // per destination rank; agent thread only
  ~ChunkShared();
};

// The receives of one communicator in mpix's own matching (agent thread only).
struct Matcher {
  struct Held {
    MPI_Message msg;
    MPI_Status st;
  };
  std::shared_ptr<ChunkShared> shared;
  MPI_Comm comm = MPI_COMM_NULL;   // the user's communicator (set by its first receive)
  std::deque<Op *> pending;        // posted, unmatched, in post order
  std::deque<Held> held;           // probed, unmatched, in arrival order
  std::shared_ptr<IpcShared> ipc;  // GPU-direct peers (ipc_path.hpp): their headers are taken
  bool active = false;             // in the engine's list of matchers to probe
  ~Matcher();
};

// Provider mpi's state of a chunk-enabled communicator, or of one with GPU-direct peers (no
// state when neither): receives on it are matched by mpix.
class MpiComm final : public ProviderComm {
 public:
  std::size_t staging_chunk() const override { return shared->chunk; }
  bool gpu_direct_peer(int rank) const override;
  std::shared_ptr<ChunkShared> shared;
  std::shared_ptr<Matcher> matcher = std::make_shared<Matcher>();
  std::shared_ptr<IpcShared> ipc;  // null without GPU-direct peers
};

// Collective over @p comm: checks that every rank has the same MPIX_STAGING_CHUNK (MPI_ERR_ARG
// on every rank if not) and, when it is set, makes the communicator's state.
// Also decides the GPU-direct peers (ipc_comm_open), collectively.
Status chunk_comm_open(MPI_Comm comm, const CommStreamInfo &si, std::unique_ptr<ProviderComm> *out);
// Local: the state of a duplicate (shares the private communicator, matches on its own).
Status chunk_comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out);

struct ChunkSend;
struct ChunkRecv;

// The ops provider mpi hands over: chunked sends, GPU-direct sends and every receive on a
// communicator with mpix matching. Agent thread only.
class ChunkEngine {
 public:
  ChunkEngine();
  ~ChunkEngine();
  // Whether the engine carries @p op (else the provider posts it as usual).
  static bool takes(const Op &op);
  // An announced GPU-direct send (ipc_path.hpp): its header goes now; fire() follows.
  Status announce(Op &op);
  // An op armed and never fired (Provider::disarm): what announce() or arm() made for it goes.
  void drop(Op &op) { ipc_.drop_announced(op); }
  Status fire(Op &op);
  bool progress(std::vector<Op *> &done);
  bool busy() const {
    return !sends_.empty() || !recvs_.empty() || !matchers_.empty() || ipc_.busy();
  }

 private:
  Status post_recv(Op &op, Matcher &m, const std::shared_ptr<Matcher> &owner);
  Status start_recv(Op &op, Matcher &m, MPI_Message msg, const MPI_Status &st);
  bool probe(Matcher &m, std::vector<Op *> &done);

  std::vector<std::unique_ptr<ChunkSend>> sends_;
  std::vector<std::unique_ptr<ChunkRecv>> recvs_;
  std::vector<std::shared_ptr<Matcher>> matchers_;  // with pending receives
  IpcPath ipc_;
};

}  // namespace mpix
