// Provider "mpi": portable. The agent posts MPI_Isend / MPI_Irecv / MPI_Iallreduce on the stream
// communicator when the stream reaches an op, and tests them. Interoperates with plain MPI on
// the peer. Needs MPI_THREAD_MULTIPLE (the agent thread calls MPI).
#pragma once

#include <memory>
#include <vector>

#include "providers/provider.hpp"

namespace mpix {

class MpiProvider final : public Provider {
 public:
  const char *name() const override { return "mpi"; }
  ProviderCaps caps() const override { return {}; }
  Status fire(Op &op) override;
  bool progress(std::vector<Op *> &done) override;
  bool busy() const override { return !posted_.empty(); }
  std::string describe() const override;

 private:
  std::vector<Op *> posted_;
  std::vector<MPI_Request> reqs_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

std::unique_ptr<Provider> make_mpi_provider();

}  // namespace mpix
