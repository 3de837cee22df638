// Provider "mpi": portable. The agent posts MPI_Isend / MPI_Irecv / MPI_Iallreduce on the stream
// communicator when the stream reaches an op, and tests them. Interoperates with plain MPI on
// the peer. Needs MPI_THREAD_MULTIPLE (the agent thread calls MPI). On a communicator with
// MPIX_STAGING_CHUNK set, large staged sends go in pieces and receives are matched by mpix
// (mpi_chunk.hpp).
#pragma once

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
    c.plain_comms = true;
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
  bool busy() const override { return !posted_.empty() || chunks_.busy(); }
  std::string describe() const override;

 private:
  ChunkEngine chunks_;  // MPIX_STAGING_CHUNK: chunked sends, receives matched by mpix
  std::vector<Op *> posted_;
  std::vector<MPI_Request> reqs_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

std::unique_ptr<Provider> make_mpi_provider();

}  // namespace mpix
