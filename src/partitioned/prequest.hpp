// A persistent partitioned request (MPIX_Request): MPI-4 partitioned send or receive, started
// and completed many times, its partitions marked ready by host threads or GPU kernels.
//
// Rounds are numbered with signal-word values that only grow (PWords): round r is R = base+2r.
// The request's words say where a round stands, for the host, the agent and the device alike:
//   round   R-1 once round r has started (written by MPIX_Start, or by the stream at
//           MPIX_Start_enqueue), R once it has completed (MPIX_Wait, or the stream after
//           MPIX_Pwait_enqueue). Nothing of round r moves before round reaches R-1.
//   part[i] R once send partition i is ready (MPIX_Pready, host or device), or receive
//           partition i has arrived (written by the agent).
//   done    R once round r has completed on this side (written by the agent).
// Restarting never resets a flag, so a late reader of round r can never mistake round r+1's
// marks for its own, and a stream wait left over from an earlier round is never undone.
//
// Every message is an ordinary op (core/op.hpp) carried by the provider, so staging,
// MPIX_TIMEOUT, profiling and the finalize report apply. The PartitionedEngine poller, on the
// agent thread, schedules them (prequest_engine.cpp): when a round opens it makes one op per
// send partition, gated on that partition's word (the agent fires it once the word reaches R),
// or one op per piece of a receive (piece_map.hpp), gated on round reaching R-1; it writes part
// and done words as the ops complete. The header that matches a send with its receive is an op
// too, made at init.
//
// Between a same-node GPU-direct pair on cudaMalloc buffers the rounds go direct instead: no
// agent step per round, one copy by the sender's stream at its wait (partitioned/
// direct_link.hpp). The engine then only carries the header and the receiver's answer.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/futex_lock.hpp"
#include "base/signal_pool.hpp"
#include "base/status.hpp"
#include "gpu/backend.hpp"
#include "partitioned/direct_link.hpp"
#include "partitioned/piece_map.hpp"

namespace mpix {

// First word of a partitioned message's header (prequest.cpp writes it, prequest_engine.cpp
// checks it): "mpixpark".
constexpr int64_t kHeaderMagic = 0x6d7069787061726bLL;
// The gate word of headers and answers: always open (prequest.cpp says why one word).
extern const uint64_t kHeaderGate;

struct CommCtx;
struct Op;
struct PrivateComms;
class Backend;
class ExecStream;
struct StreamMemOp;

// A device-memory copy of a request's round word (mpix_prequest_s::dround of a device request
// on CUDA): kernels read it without crossing to host memory.
struct RoundMirror {
  uint64_t *word;
  int device;
  Backend *backend;  // the device's: it writes the copy for the host (round_mirror.hpp)
};

// The signal words of one request; shared with its device requests, which may outlive it.
struct PWords {
  explicit PWords(int partitions);
  ~PWords();
  PWords(const PWords &) = delete;
  PWords &operator=(const PWords &) = delete;
  uint64_t R(uint64_t r) const { return base + 2 * r; }

  SignalWord round, done, error;
  std::vector<SignalWord> part;
  uint64_t base = 0;  // even; no word held more than this when acquired
  // Copies of the round word, written with it (partitioned/round_mirror.hpp).
  std::mutex mirror_mu;
  std::vector<RoundMirror> mirrors;
  // A send's device marks (PRequest::share_device_marks): per partition, in device memory of
  // the buffer's GPU, the round value of its last ready mark. Set once, under the request's
  // lock; null until then.
  uint64_t *dmarks = nullptr;
  int dmarks_device = -1;               // their GPU
  Backend *dmarks_backend = nullptr;    // its backend (writes them for the host)
  std::shared_ptr<void> dmarks_memory;  // gives them back for reuse (never freed)
};

class PRequest : public std::enable_shared_from_this<PRequest> {
 public:
  enum class Side { send, recv };

  static Status init(Side side, void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                     int peer, int tag, MPI_Comm comm, std::shared_ptr<PRequest> *out);
  ~PRequest();
  PRequest(const PRequest &) = delete;
  PRequest &operator=(const PRequest &) = delete;

  // Host API (any thread). check_start is the part of start() that can fail, so that
  // MPIX_Startall checks every request before starting any.
  Status check_start(bool enqueued);
  Status start(bool enqueued);
  Status pready(const int *partitions, int n);
  // MPIX_Pready_enqueue / _range_enqueue / _list_enqueue (prequest_group.cpp): the marks of
  // @p partitions, written by the communicator's stream when it gets there (the device marks
  // first, then the host words), so that what the stream ran before them is sent. Checked as
  // pready() checks, also against earlier enqueued marks of this round.
  Status pready_enqueue(const int *partitions, int n);
  Status parrived(int partition, int *flag);
  // MPIX_Wait (@p flag null) or MPIX_Test.
  Status wait(MPI_Status *status, int *flag);
  Status pwait_enqueue(MPI_Status *status);
  // MPIX_Startall_enqueue / MPIX_Pwaitall_enqueue (prequest_group.cpp): the stream operations
  // of every request in one stream call where all are on one stream, else one call each, in
  // order. Each request is checked before any is started; @p statuses: one per request (each
  // may be MPI_STATUS_IGNORE).
  static Status start_enqueue_all(const std::vector<std::shared_ptr<PRequest>> &rs);
  static Status pwait_enqueue_all(const std::vector<std::shared_ptr<PRequest>> &rs,
                                  const std::vector<MPI_Status *> &statuses);
  // MPIX_Request_free: refuses an active request (unless a device error stalled it);
  // *released says whether the request was let go (a device error may still be reported).
  Status release(bool *released);

  // MPIX_Request_get_path (either pointer may be null).
  void path(int *direct, MPI_Count *host_steps) const;

  // At MPI_Finalize: logs this request if a round is still active; true if it was.
  bool report_if_active();

  // Registers @p m as a copy of the round word: @p init(value) stores the value the round word
  // has for work that runs from now on, under the request's lock so no transition is missed.
  Status attach_round_mirror(const RoundMirror &m, const std::function<Status(uint64_t)> &init);

  // The device marks of a send on cudaMalloc memory, shared by the device requests made on
  // the buffer's GPU (@p local: mpix_prequest_s::device_data) and written by the host's
  // MPIX_Pready too: what a direct round waits for, in device memory. @p alloc makes them
  // (initial values given) on first use. A device request made elsewhere (@p local false)
  // marks only the host words: direct rounds then wait for those (refused once a direct round
  // waited for the device marks: it would not see its marks). *@p out: the marks, or null.
  using MarksAlloc = std::function<Status(const std::vector<uint64_t> &init, PWords *w)>;
  Status share_device_marks(bool local, const MarksAlloc &alloc, uint64_t **out);
  const char *buffer() const { return buf_; }

  // Device address of the receiver's arrived word where its rounds may go direct, else null
  // (mpix_prequest_s::darrived).
  uint64_t *link_arrived() const {
    return side_ == Side::recv && slot_.words ? slot_.words + 1 : nullptr;
  }

  Side side() const { return side_; }
  MPI_Comm comm() const { return comm_; }
  int partitions() const { return partitions_; }
  const std::shared_ptr<PWords> &words() const { return words_; }

  // Agent thread (PartitionedEngine).
  bool progress();
  bool engine_idle() const;
  // Under the engine lock, at a start: the new round leaves the engine nothing to do (its rounds
  // go direct, or failed and are carried by the host; no message of its own is pending), so
  // the start neither lists it nor wakes the agent: progress() would only mark the round done.
  bool engine_nothing_to_do() const;

 private:
  PRequest() = default;
  uint64_t current_round() const { return started_.load(std::memory_order_acquire); }
  Status stream_of_comm(class ExecStream **ex, FutexLock **order);
  // A misuse recorded by a device since the last report; MPI_SUCCESS if none. @p consume
  // marks it reported.
  Status device_error(bool consume);
  void fill_status(MPI_Status *st);
  // MPIX_Pready's checks, host or enqueued (mu_ held, the request an active send): every
  // partition in range, none marked twice in the round ending at @p R (by the host, by an
  // earlier MPIX_Pready_enqueue, or twice in @p parts).
  Status check_marks(const int *parts, int n, uint64_t R) const;
  // The stream operations of enqueued starts of @p rs (one stream; mu_ of each held,
  // check_start passed) in one stream call; then each is started (prequest_group.cpp).
  static Status enqueue_starts(const std::vector<PRequest *> &rs);
  // The same for enqueued waits (each active, its path known), after the stream's deferred
  // trigger; then each is inactive. Returns the first device misuse not yet reported.
  static Status enqueue_waits(const std::vector<PRequest *> &rs,
                              const std::vector<MPI_Status *> &statuses);
  // Whether @p rs are two or more distinct requests of one stream (else the group calls go
  // one by one); a request named twice is refused.
  static Status one_stream(const std::vector<std::shared_ptr<PRequest>> &rs, bool *yes);
  // The requests of @p rs and their mutexes (for LockAll, prequest_group.cpp).
  static std::vector<PRequest *> raw_and_mutexes(const std::vector<std::shared_ptr<PRequest>> &rs,
                                                 std::vector<std::mutex *> *mus);
  // An enqueued start's stream operations, appended to *@p ops (check_start passed); *@p tell
  // says whether they tell the device the rounds go direct. mu_ held.
  void start_ops(std::vector<StreamMemOp> *ops, bool *tell);
  // The request is started once its operations are on the stream (@p told: start_ops' tell).
  // mu_ held.
  void mark_started(bool told);
  // MPIX_Pwait_enqueue's first part, before mu_: waits until a direct candidate's path is
  // known (its first round).
  Status pwait_path_known();
  // The wait's stream operations (after the stream's deferred trigger), appended to *@p ops;
  // a direct send's copy is started from here. mu_ held, the request active.
  Status pwait_ops(MPI_Status *status, std::vector<StreamMemOp> *ops);
  // The request is inactive once its wait's operations are on the stream; returns a device
  // misuse not yet reported. mu_ held.
  Status mark_waited();
  // Gives up the active round (ending at @p R) after a device misuse; mu_ held.
  void abandon_round(uint64_t R);

  // Makes one message of this request and hands it to the agent, which fires it once *gate
  // reaches @p threshold; *out is the engine's reference.
  Status start_op(bool send, void *buf, int count, MPI_Datatype dt, int tag,
                  const std::shared_ptr<CommCtx> &ctx, const uint64_t *gate, uint64_t threshold,
                  Op **out);

  // Direct rounds (direct_link.hpp). direct_ goes from unknown to no / yes / failed once, on
  // the agent (the receiver when it sees the header, the sender on the answer).
  enum Direct : int { kDirectUnknown, kDirectNo, kDirectYes, kDirectFailed };
  // Host: waits (or, with @p block false, looks) until the path is known; *known says whether.
  Status direct_known(bool block, bool *known);
  // The sender's copy of direct round @p r, on its private stream (made on first use), once
  // every partition is marked ready and the receiver started the round; then, with
  // @p write_done, the round's done word (what a host wait polls). mu_ held.
  Status direct_push(uint64_t r, bool write_done);
  // MPIX_Pwait_enqueue of direct round @p r: the sender's push, started from here, or the
  // receiver's wait for arrival; then the round's completion, in stream order: the stream
  // operations appended to *@p ops. mu_ held.
  Status direct_round_ops(uint64_t r, std::vector<StreamMemOp> *ops);
  // Host: whether the receiver's arrived word reached round @p r's value.
  Status direct_arrived(uint64_t r, bool *yes);
  // Round @p k's status, from the request's fields and @p error.
  MPI_Status round_status(int error) const;
  // Records round @p k's status (round_status) for MPIX_Wait and the MPIX_Pwait_enqueue calls
  // of that round.
  void set_round_status(uint64_t k, int error);
  // Ends round @p r with @p err (a device misuse, failed direct rounds): abandons it, fills
  // *@p status, sets *@p flag; returns @p err. mu_ held.
  Status fail_round(uint64_t r, const Status &err, MPI_Status *status, int *flag);

  // Engine steps.
  bool engine_header();
  bool engine_reply();
  bool engine_confirm();
  void engine_answer_offer();
  // The tags on ctl of a request pair's answer and confirmation (the sender's data-tag base
  // told apart by its low bit: either process may also send the other on ctl).
  int ctl_tag(bool confirm) const { return 2 * data_tag_base_ + (confirm ? 1 : 0); }
  bool engine_open_round(uint64_t k);
  void engine_post_drains(uint64_t R);
  bool engine_reap_orphans();
  bool engine_test_pieces(uint64_t k);
  void engine_complete_round(uint64_t k);
  void engine_cancel();

  // Fixed at init.
  Side side_ = Side::send;
  char *buf_ = nullptr;
  int partitions_ = 0;
  int count_ = 0;  // elements per partition (checked <= INT_MAX)
  MPI_Datatype dt_ = MPI_DATATYPE_NULL;
  bool dt_owned_ = false;
  MPI_Aint extent_ = 0;
  int type_size_ = 0;
  int peer_ = MPI_PROC_NULL;
  int tag_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<CommCtx> ctx_;  // set when comm_ is a stream communicator
  std::shared_ptr<PrivateComms> pc_;
  std::shared_ptr<PWords> words_;
  int data_tag_base_ = 0;  // send: allocated; receive: from the header
  // magic, partitions, bytes per partition, data-tag base, offer of direct rounds (0 / 1).
  int64_t header_[5] = {0, 0, 0, 0, 0};
  Op *header_op_ = nullptr;  // until the engine saw it complete
  // Classifies and stages the buffer (a GPU backend for device or managed memory, else the
  // host's), and the device whose side stream the agent copies on (-1: its current one).
  Backend *be_ = nullptr;
  int device_ = -1;
  // Direct rounds: why this side does not qualify, null where it does (a send then offers; a
  // receive has a link slot).
  const char *direct_refusal_ = nullptr;
  bool direct_candidate() const { return !direct_refusal_; }
  LinkSlot slot_;           // receive candidate: its open / arrived words
  DirectReply reply_{};     // the answer (sent by the receiver, received by the sender)
  Op *reply_op_ = nullptr;  // until the engine saw it complete
  // The sender's confirmation once it has mapped the receiver's memory (1) or could not (0),
  // sent on ctl after the answer; the receiver decides on it.
  int64_t confirm_ = 0;
  Op *confirm_op_ = nullptr;  // until the engine saw it complete
  std::atomic<int> direct_{kDirectNo};
  std::atomic<uint64_t> host_steps_{0};  // rounds a host thread of mpix's worked on
  Status direct_error_;                  // kDirectFailed: why (written before direct_)
  DirectTarget target_;   // send, kDirectYes: the receiver's buffer and words (before direct_)
  CopyFacts push_facts_;  // send: what the side stream learned of target_.dst and buf_ (mu_)

  // Host view (mu_).
  std::mutex mu_;
  bool active_ = false;
  bool last_wait_enqueued_ = false;
  uint64_t reported_error_ = 0;              // last device error word value reported
  std::unique_ptr<ExecStream> side_stream_;  // direct rounds driven from the host
  uint64_t pushed_round_ = 0;                // send: the last round pushed on side_stream_
  bool foreign_marks_ = false;  // a device request that cannot share the device marks exists
  bool told_direct_ = false;    // receive: link word [2] set (kernels poll device words only)
  bool dmarks_waited_ = false;  // a direct round waited for the device marks
  // Send: per partition, the round value of its last MPIX_Pready_enqueue (empty until the
  // first); the stream may not have written the host word yet.
  std::vector<uint64_t> enq_marks_;
  std::atomic<bool> stream_marks_checked_{false};  // device_marks_for_stream ran (pready_enqueue)

  // Shared with the engine.
  std::atomic<uint64_t> started_{0};  // rounds started; incremented under the engine lock
  std::atomic<bool> cancel_{false};
  std::mutex status_mu_;  // round status hand-off
  MPI_Status round_status_{};
  uint64_t status_round_ = 0;     // the round round_status_ belongs to
  std::string round_error_text_;  // why round_status_.MPI_ERROR is set
  // MPIX_Pwait_enqueue statuses to fill when their round completes (the host may enqueue
  // several rounds ahead of the agent).
  std::vector<std::pair<uint64_t, MPI_Status *>> enqueued_status_;

  // Engine only (agent thread), or under the engine lock.
  friend class PartitionedEngine;
  bool in_engine_ = false;
  bool freed_ = false;
  uint64_t eng_completed_ = 0;
  bool header_known_ = false;
  Status header_error_;
  PieceMap map_;
  bool open_ = false;
  std::vector<Op *> piece_ops_;  // this round's messages not yet seen complete
  // Messages of a round abandoned after a device misuse, kept until the provider is done with
  // them (their buffers must stay alive).
  std::vector<Op *> orphans_;
  std::vector<int> remaining_;
  int pieces_left_ = 0;
  int round_error_ = MPI_SUCCESS;
  // A receive whose size does not fit the sender's still takes (and drops) the sender's
  // partition messages every round, so that the sender completes and no message is left to
  // match a later request's receive: the sender's partition count and bytes per partition.
  int drain_parts_ = 0, drain_bytes_ = 0;
  bool draining_ = false;  // this round's pieces are drains
  std::vector<char> drain_buf_;
};

// Live handles: ids never reused, so a stale or forged MPIX_Request is refused.
uint64_t prequest_register(std::shared_ptr<PRequest> r);
std::shared_ptr<PRequest> prequest_lookup(uint64_t id);
void prequest_unregister(uint64_t id);

}  // namespace mpix
