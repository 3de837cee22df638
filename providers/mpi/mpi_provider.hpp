// Provider "mpi": portable. The agent posts MPI_Isend / MPI_Irecv / MPI_Iallreduce on the stream
// communicator when the stream reaches an op, and tests them. Interoperates with plain MPI on
// the peer. Needs MPI_THREAD_MULTIPLE (the agent thread calls MPI). On a communicator with
// MPIX_STAGING_CHUNK set, large staged sends go in pieces and receives are matched by mpix
// (mpi_chunk.hpp).
//
// Small sends in flight are capped (kMaxSmallSends): Open MPI 4.1 over shared memory (vader)
// with tens of thousands of sends posted while another thread is inside MPI (a host
// MPI_Waitall) stops completing anything, plain Open MPI included. Sends past the cap wait in a
// FIFO, in stream order, and are posted as earlier ones complete.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "providers/mpi/mpi_chunk.hpp"
#include "providers/provider.hpp"

namespace mpix {

class MpiProvider final : public Provider {
 public:
  const char *name() const override { return "mpi"; }
  ProviderCaps caps() const override {
    ProviderCaps c;
    c.agent_copies = true;
    c.mpi_buffers = true;
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
  Status fire(Op &op) override;
  bool progress(std::vector<Op *> &done) override;
  bool busy() const override { return !posted_.empty() || !held_.empty() || chunks_.busy(); }
  std::string describe() const override;

 private:
  // Small (eager) sends posted at once at most; the rest wait in held_.
  static constexpr int kMaxSmallSends = 1024;
  Status post(Op &op, bool small);
  bool post_held(std::vector<Op *> &done);

  ChunkEngine chunks_;  // MPIX_STAGING_CHUNK: chunked sends, receives matched by mpix
  std::vector<Op *> posted_;
  std::vector<MPI_Request> reqs_;
  std::vector<char> small_;  // per posted_ entry: a small send (counted in small_sends_)
  int small_sends_ = 0;
  std::deque<Op *> held_;  // sends not yet posted, stream order
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

std::unique_ptr<Provider> make_mpi_provider();

}  // namespace mpix
