// Same-node GPU-direct partitioned requests (MPIX_PARTITIONED_DIRECT; docs/guide.md,
// "Partitioned communication").
//
// Between two ranks of one node whose GPUs can map each other's memory, a partitioned request
// on device buffers moves its rounds GPU to GPU with no host thread: at MPIX_Start (or when the
// stream reaches MPIX_Start_enqueue) one kernel of mpix's starts on the request's own stream on
// each side. The receiver's marks the round open in a device word the sender maps, then turns
// each partition's arrival into the request's partition word and finally its done word; the
// sender's waits for each partition's ready mark (MPIX_Pready, host or device) and for the
// receiver's open round, copies the partition into the receiver's buffer (mapped with CUDA IPC)
// and marks it arrived there, then writes its done word. MPIX_Wait, MPIX_Parrived and
// MPIX_Pwait_enqueue read the same words as on the agent's path; the agent takes no step.
//
// Chosen per request by a handshake when it is made, on the request's private tags: the
// sender's header offers (its host, process and device) where its buffer is device memory; the
// receiver accepts where its own buffer is device memory of a GPU that can map the sender's,
// on the same host, with the same partitions, and answers with the IPC handles of its buffer
// and of its device words; the sender confirms once it mapped both. Otherwise both keep the
// agent's per-partition messages. Rounds started before the handshake ended wait for it.
#pragma once

#include <cstdint>
#include <memory>

#include "base/signal_pool.hpp"
#include "base/status.hpp"

namespace mpix {

class Backend;
struct PWords;

// A partitioned header: magic, partitions, bytes per partition, first data tag, then the
// sender's offer (5 words: magic, host, process, device UUID).
constexpr int kHeaderWords = 9;
constexpr int kOfferWords = 5;
constexpr int64_t kDirectOfferMagic = 0x6d70697864697265LL;  // "mpixdire"
constexpr uint64_t kDirectReplyMagic = 0x7270697864697265ull;

// What one side of a partitioned pair says about itself.
struct DirectSide {
  bool wants = false;  // MPIX_PARTITIONED_DIRECT=auto, a device buffer, a device with IPC
  uint64_t host = 0;   // hash of the host name
  int64_t pid = 0;
  unsigned char uuid[16] = {};
};

// This rank's side for a request on @p buf (device @p device of @p be; -1: none).
DirectSide direct_side_of(Backend *be, int device, const void *buf);
void direct_offer_encode(const DirectSide &s, int64_t (&words)[kOfferWords]);
bool direct_offer_decode(const int64_t (&words)[kOfferWords], DirectSide *s);
// Why a receiver (@p me) refuses @p peer's offer, or null to accept. @p reachable: whether my
// device can map the peer's memory; @p same_layout: both sides have the same partitions of the
// same size. Pure, for tests.
const char *direct_refusal(const DirectSide &me, const DirectSide &peer, bool reachable,
                           bool same_layout);

// The receiver's answer to an offer (a wire format).
struct DirectReply {
  uint64_t magic = 0;
  int64_t accept = 0;
  uint64_t buf_id = 0, buf_offset = 0;      // the receive buffer's allocation and offset in it
  uint64_t flags_id = 0, flags_offset = 0;  // the receiver's device words
  uint64_t host = 0;
  int64_t pid = 0;
  unsigned char buf_handle[64] = {};
  unsigned char flags_handle[64] = {};
};
static_assert(sizeof(DirectReply) == 192, "the reply is a wire format");

// One side's GPU-direct state of one request: its device words (counters, the open word and
// the arrival words, the table of its partition words), its stream, and on the sender the
// receiver's buffer and words mapped here.
class DirectLink {
 public:
  // Receiver: makes the link for @p partitions partitions of @p buf and the reply that lets
  // the sender map the buffer and the words.
  static Status accept(Backend *be, int device, void *buf, const PWords &w,
                       std::unique_ptr<DirectLink> *out, DirectReply *reply);
  // Sender: maps what @p reply names and makes the link.
  static Status connect(Backend *be, int device, const void *buf, uint64_t part_bytes,
                        const PWords &w, const DirectReply &reply,
                        std::unique_ptr<DirectLink> *out);
  // The device words and the stream go back to this process's pools (a peer keeps the words
  // mapped; they are reset before they serve again).
  ~DirectLink();
  DirectLink(const DirectLink &) = delete;
  DirectLink &operator=(const DirectLink &) = delete;

  // Starts round @p r's kernel (rounds in order, each once).
  Status launch(const PWords &w, uint64_t r);
  // Gives up round @p r: its kernels stop waiting, mark nothing more and leave done alone.
  void cancel(uint64_t r);

 private:
  DirectLink() = default;
  static Status make(Backend *be, int device, const PWords &w, std::unique_ptr<DirectLink> *out);

  Backend *be_ = nullptr;
  int device_ = -1;
  bool send_ = false;
  int partitions_ = 0;
  uint64_t part_bytes_ = 0;
  int grid_ = 1;
  void *stream_ = nullptr;
  char *block_ = nullptr;  // device words (layout in direct_link.cpp)
  std::size_t block_bytes_ = 0;
  SignalWord cancel_;
  const char *src_ = nullptr;  // send: this rank's buffer
  char *dst_ = nullptr;        // send: the receiver's buffer, mapped
  uint64_t *open_ = nullptr, *arrived_ = nullptr;  // the receiver's (mapped on the sender)
};

}  // namespace mpix
