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
#pragma once

#include <chrono>
#include <deque>
#include <memory>
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
  // GPU-direct sends (ipc_path.hpp) are not staged.
  bool reads_device(const Op &op) override;
  // Receives from GPU-direct peers may be delivered into device memory.
  bool may_deliver_device(const Op &op) override;
  Status fire(Op &op) override;
  bool progress(std::vector<Op *> &done) override;
  bool busy() const override { return !posted_.empty() || !held_.empty() || chunks_.busy(); }
  void shutdown() override;
  std::string describe() const override;

 private:
  // Small (eager) sends posted at once at most; the rest wait in held_.
  static constexpr int kMaxSmallSends = 1024;
  using Clock = std::chrono::steady_clock;
  Status post(Op &op, bool small, Clock::time_point since);
  bool post_held(std::vector<Op *> &done);
  void compact();
  // MPIX_TIMEOUT: fails what is past it (every 50 ms at most).
  void check_timeouts(std::vector<Op *> &done);
  bool test_orphans();

  ChunkEngine chunks_;  // MPIX_STAGING_CHUNK: chunked sends, receives matched by mpix
  std::vector<Op *> posted_;
  std::vector<MPI_Request> reqs_;
  std::vector<char> small_;  // per posted_ entry: a small send (counted in small_sends_)
  // Per posted_ entry: when the stream reached it (MPIX_TIMEOUT counts from there), and whether
  // it is a receive being cancelled after its timeout.
  std::vector<Clock::time_point> since_;
  std::vector<char> cancelling_;
  int small_sends_ = 0;
  struct Held {
    Op *op;
    Clock::time_point since;
  };
  std::deque<Held> held_;  // sends not yet posted, stream order
  long timeout_s_ = -1;    // MPIX_TIMEOUT, read on first use (0: never)
  Clock::time_point last_check_{};
  std::vector<MPI_Request> orphans_;  // sends of failed ops, tested until MPI finishes them
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

std::unique_ptr<Provider> make_mpi_provider();

}  // namespace mpix
