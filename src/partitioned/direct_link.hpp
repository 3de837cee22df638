// Direct rounds of a partitioned request pair (MPIX_PARTITIONED_DIRECT; docs/partitioned.md,
// "Direct rounds"): GPU to GPU, no host step per round.
//
// A partitioned send and its receive on a stream communicator whose two ranks are a same-node
// GPU-direct pair (provider mpi, MPIX_GPU_DIRECT), both on cudaMalloc buffers of the same size,
// move each round as ONE copy from the send buffer into the receive buffer, made by a private
// stream of the sender's request, started by the round's wait. With Rs / Rr the round values of
// each side (PWords numbering; each side has its own base):
//   receiver, at MPIX_Start_enqueue (its stream) or MPIX_Start (the host):   open := Rr - 1
//   sender, at MPIX_Pwait_enqueue, MPIX_Wait or MPIX_Test (once per round), on its private
//   stream: wait until every part[p] >= Rs (all partitions marked ready, by kernels on any
//   stream or by the host), wait until open >= Rr - 1 (the receiver started the round: its
//   buffer may be written), copy, arrived := Rr (one kernel for small rounds), and for MPIX_Wait
//   / MPIX_Test done := Rs; MPIX_Pwait_enqueue's stream waits until arrived >= Rr. The copy is
//   not gated on the user's stream reaching the wait: a receive waited for before the send on
//   both ranks would otherwise hold it back for ever.
//   receiver, at MPIX_Pwait_enqueue: wait until arrived >= Rr, done := Rr; a kernel's
//   MPIX_Parrived reads arrived (mpix_prequest_s::darrived); the host's MPIX_Wait / MPIX_Test /
//   MPIX_Parrived read it with a small copy.
// open and arrived are two words of the receiver's in device memory (a link slot: slabs
// exported once and never freed, so a mapping of them never goes stale); the sender maps them
// and the receive buffer's allocation with CUDA IPC. The private stream's waits are started
// only once the partitions they wait for were given to the GPU (the kernels marking them were
// launched before the wait was called), so it never waits for work its process has not yet
// submitted (the suspected hang of the session-14 design).
//
// Chosen per request pair before its first round: the sender offers (header word 4) where its
// own side qualifies; the receiver accepts where its side does too and the sizes match, and
// answers either way with a DirectReply on the private ctl communicator (tag 2 * the sender's
// data-tag base); after an acceptance the sender maps the receiver's memory and confirms with
// 1, or with 0 where it could not (tag 2 * base + 1), and both take the confirmed path. Both
// then keep that path for every round; no round opens before it is known. A first wait (either
// side) blocks until then.
// What the transfer gives up: partitions no longer move as they are marked ready (early-bird);
// the whole round moves at the sender's wait.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.hpp"

namespace mpix {

class Backend;
class ExecStream;

constexpr uint64_t kDirectReplyMagic = 0x796c70657278706dull;  // "mpxrreply"

// The receiver's answer to an offer: a wire format between mpix processes of one build.
struct DirectReply {
  uint64_t magic = 0;
  int64_t accept = 0;  // 1: direct rounds; 0: the agents' path (the receiver logs why)
  uint64_t host = 0;   // the receiver process (the mapping cache's key)
  int64_t pid = 0;
  uint64_t rbase = 0;  // the receiver's round numbering: round r is rbase + 2r
  // The receive buffer's allocation, and where the buffer starts in it.
  uint64_t buf_base = 0, buf_id = 0, buf_offset = 0;
  // The link slot's slab, and where the slot is in it.
  uint64_t slab_base = 0, slab_id = 0, slot_offset = 0;
  unsigned char buf_handle[64] = {};
  unsigned char slab_handle[64] = {};
};
static_assert(sizeof(DirectReply) == 216, "the answer is a wire format");

// Words of a receive request in device memory, all 0 at first: [0] open, [1] arrived (the
// two the sender maps), [2] 1 once the receiver knows its rounds go direct (what a kernel's
// MPIX_Parrived reads to poll device words only: mpix_prequest_s::darrived).
struct LinkSlot {
  uint64_t *words = nullptr;  // device address; null: no slot
  uint64_t slab_base = 0, slab_id = 0, slab_bytes = 0;
};
Status link_slot_acquire(Backend *be, int device, LinkSlot *out);

// What decides whether one side may take direct rounds.
struct DirectSide {
  bool setting_on = false;     // MPIX_PARTITIONED_DIRECT=auto
  bool has_peer = false;       // not MPI_PROC_NULL
  bool pair_direct = false;    // the data communicator's GPU-direct pair
  bool cuda = false;           // the buffer's backend is CUDA (or MPIX_HOST_IPC's stand-in)
  bool device_memory = false;  // cudaMalloc memory (not managed, not host)
  int64_t bytes = 0;           // of the whole buffer
};
// Why this side keeps the agents' path, or null. Pure, for tests.
const char *direct_side_refusal(const DirectSide &s);
// Receiver: why it declines an offer, or null. @p own: its side's refusal.
const char *direct_answer_refusal(const char *own, int64_t send_bytes, int64_t recv_bytes);

// Receiver: the reply's handles of the receive buffer @p buf (@p bytes) and of @p slot, and
// its round base. Fails where the buffer cannot be exported (then it declines).
Status direct_reply_fill(Backend *be, const void *buf, uint64_t bytes, const LinkSlot &slot,
                         uint64_t rbase, DirectReply *out);

// Sender: the receiver's buffer and link words, mapped here (cached per allocation).
struct DirectTarget {
  char *dst = nullptr;
  uint64_t *open = nullptr;
  uint64_t *arrived = nullptr;
  uint64_t rbase = 0;
};
Status direct_map(const DirectReply &r, Backend *be, int device, uint64_t bytes, DirectTarget *out);

// Private streams for rounds driven from the host (Backend::open_private_stream), reused.
Status direct_stream_acquire(Backend *be, int device, std::unique_ptr<ExecStream> *out);
void direct_stream_release(Backend *be, int device, std::unique_ptr<ExecStream> s);

}  // namespace mpix
