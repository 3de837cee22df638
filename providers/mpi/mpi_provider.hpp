// Provider "mpi": portable. The agent posts MPI_Isend / MPI_Irecv / MPI_Iallreduce on the stream
// communicator when the stream reaches an op, and tests them. Interoperates with plain MPI on
// the peer. It also fills the collective slot beside provider ofi (provider.hpp), where it sees
// allreduce ops only. Needs MPI_THREAD_MULTIPLE (the agent thread calls MPI). On a communicator
// with MPIX_STAGING_CHUNK set, large staged sends go in pieces and receives are matched by mpix
// (mpi_chunk.hpp).
//
// Small sends in flight are capped (kMaxSmallSends): Open MPI 4.1 over shared memory (vader)
// with tens of thousands of sends posted while another thread is inside MPI (a host
// MPI_Waitall) stops completing anything, plain Open MPI included. Sends past the cap wait in a
// FIFO, in stream order, and are posted as earlier ones complete.
//
// MPIX_TIMEOUT (when set): an op neither complete nor posted within it fails with MPI_ERR_OTHER.
// A receive is cancelled first (one that matched meanwhile completes as usual); a send, a
// reduction, or a receive the cancel cannot take back (matched, its data stalled) is kept and
// tested until MPI finishes it (orphans_), while the user's op fails.
//
// Bounded progress: each agent loop tests the oldest kHead posted requests and a window of
// kWindow of the rest that moves on every loop, so a loop costs the same with 10 or 10,000 in
// flight, and a request far from the oldest is still seen within (in flight) / kWindow loops.
// Completed entries leave holes (MPI_REQUEST_NULL), squeezed out in order once they are half
// the array: the array stays in posting order, so the head is the oldest. A loop that finds
// nothing done lets the agent back off only once the window has gone round (unseen_).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/provider.hpp"
#include "providers/mpi/mpi_chunk.hpp"

namespace mpix {

class MpiProvider final : public Provider {
 public:
  const char *name() const override { return "mpi"; }
  ProviderCaps caps() const override {
    ProviderCaps c;
    c.agent_copies = true;
    c.mpi_buffers = true;
    c.plain_comms = true;
    c.collectives = true;
    return c;
  }
  Status comm_open(MPI_Comm comm, std::unique_ptr<ProviderComm> *out) override {
    return chunk_comm_open(comm, CommStreamInfo{}, out);
  }
  Status comm_open_on_stream(MPI_Comm comm, const CommStreamInfo &si,
                             std::unique_ptr<ProviderComm> *out) override {
    return chunk_comm_open(comm, si, out);
  }
  Status comm_dup(const ProviderComm *old, std::unique_ptr<ProviderComm> *out) override {
    return chunk_comm_dup(old, out);
  }
  // GPU-direct sends (ipc_path.hpp) are not staged, or staged in device memory.
  DeviceRead reads_device(const Op &op) override;
  // Receives from GPU-direct peers may be delivered into device memory.
  bool may_deliver_device(const Op &op) override;
  // Messages above MPIX_GPU_DIRECT_EAGER_MAX go GPU-direct, which waits for the receive.
  bool direct_waits_for_receive(uint64_t bytes) override;
  // A GPU-direct send from a stream is announced (ipc_path.hpp): arm() gives it a ready word,
  // take() sends its header where no earlier send to that peer waits for its stream; and it is
  // completed on the GPU (ipc_path.hpp, "Completion on the GPU"): arm() gives it a done word.
  MpiProvider() {  // without either arm() does nothing; without announcements take() neither
    arms_ops_ = announce_ || gpu_completion_;
    takes_ops_ = announce_;
  }
  Status arm(Op &op, ExecStream *ex, FireRecipe *fire) override;
  void take(Op &op) override;
  Status fire(Op &op) override;
  void disarm(Op &op) override;
  bool progress(std::vector<Op *> &done) override;
  bool busy() const override;
  bool large_in_flight() const override;
  void shutdown() override;
  std::string describe() const override;

 private:
  // Small (eager) sends posted at once at most; the rest wait in held_.
  static constexpr int kMaxSmallSends = 1024;
  // Requests tested per loop: the oldest kHead, and kWindow of the rest (see above).
  static constexpr std::size_t kHead = 32, kWindow = 256;
  using Clock = std::chrono::steady_clock;
  Status post(Op &op, bool small, Clock::time_point since);
  bool post_held(std::vector<Op *> &done);
  void compact();
  // The slots progress() tests this loop (oldest first), gathered into test_slots_/test_reqs_.
  void gather();
  // MPIX_TIMEOUT: fails what is past it (every 50 ms at most).
  void check_timeouts(std::vector<Op *> &done);
  bool test_orphans();

  ChunkEngine chunks_;  // MPIX_STAGING_CHUNK: chunked sends, receives matched by mpix
  std::vector<Op *> posted_;
  std::vector<MPI_Request> reqs_;
  // Per posted_ entry: kSmallFlag for a small send (counted in small_sends_), kLargeFlag for a
  // message past the eager limit (counted in large_posted_).
  static constexpr char kSmallFlag = 1, kLargeFlag = 2;
  std::vector<char> flags_;
  std::size_t large_posted_ = 0;
  void forget(std::size_t i);  // entry i completed or dropped: its counts go
  // Per posted_ entry: when the stream reached it (MPIX_TIMEOUT counts from there), and whether
  // it is a receive being cancelled after its timeout.
  std::vector<Clock::time_point> since_;
  std::vector<char> cancelling_;
  std::size_t holes_ = 0;   // posted_ entries completed (reqs_[i] null), not yet squeezed out
  std::size_t first_ = 0;   // the first live entry: none before it
  std::size_t cursor_ = 0;  // where the window starts on the next loop (past the head)
  // Entries past the head not tested since the last completion or post: while some are left,
  // a loop that found nothing done still counts as progress, so that the agent does not nap
  // before the window has gone round once.
  std::size_t unseen_ = 0;
  std::vector<std::size_t> test_slots_;  // per tested request: its posted_ index
  std::vector<MPI_Request> test_reqs_;   // copies of the requests tested
  int small_sends_ = 0;
  struct Held {
    Op *op;
    Clock::time_point since;
  };
  std::deque<Held> held_;  // sends not yet posted, stream order
  // Sends taken and not yet fired (announced ones aside), per communicator and peer: a send
  // is announced only where none is, so that it overtakes none (MPI's non-overtaking order).
  std::map<std::pair<MPI_Comm, int>, int> unfired_;
  const bool announce_ = ipc_announce_on();           // MPIX_GPU_DIRECT_ANNOUNCE, read once
  const bool gpu_completion_ = ipc_gpu_completion();  // MPIX_GPU_DIRECT_COMPLETION, read once
  // Whether GPU-direct send @p op from stream @p ex is announced (its header at take()).
  bool may_announce(const Op &op, const ExecStream &ex, const IpcShared &ipc) const;
  void fired_or_dropped(const Op &op);
  // The announce policy of @p op's peer on its communicator (null: no GPU-direct state).
  static AnnouncePolicy *announce_policy(const Op &op);
  long timeout_s_ = -1;  // MPIX_TIMEOUT, read on first use (0: never)
  Clock::time_point last_check_{};
  std::vector<MPI_Request> orphans_;  // sends of failed ops, tested until MPI finishes them
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

std::unique_ptr<Provider> make_mpi_provider();

}  // namespace mpix
