// Provider ofi's state of one stream communicator: its context id, this rank, and the
// libfabric address of every peer rank (the remote group of an intercommunicator). Duplicates
// share the address table and get their own context id from the same family (ctx_ids.hpp).
#pragma once

#include <rdma/fabric.h>

#include <memory>
#include <vector>

#include "core/provider.hpp"
#include "providers/ofi/ctx_ids.hpp"

namespace mpix {

class Fabric;

class OfiComm final : public ProviderComm {
 public:
  OfiComm(std::shared_ptr<CtxFamily> family, uint32_t ctx, int rank,
          std::shared_ptr<const std::vector<fi_addr_t>> addrs)
      : family_(std::move(family)), ctx_(ctx), rank_(rank), addrs_(std::move(addrs)) {}
  ~OfiComm() override { family_->give(ctx_); }

  uint32_t ctx() const { return ctx_; }
  int rank() const { return rank_; }
  int peers() const { return static_cast<int>(addrs_->size()); }
  fi_addr_t addr(int r) const { return (*addrs_)[static_cast<std::size_t>(r)]; }

  // A duplicate (MPI_Comm_dup / idup): same ranks, next free context id of the family.
  Status dup(std::unique_ptr<ProviderComm> *out) const;

 private:
  std::shared_ptr<CtxFamily> family_;
  uint32_t ctx_;
  int rank_;
  std::shared_ptr<const std::vector<fi_addr_t>> addrs_;
};

// Collective over @p comm: agree on a context id and exchange endpoint addresses
// (MPI_Allgather). Fails on every rank alike if the ranks opened different libfabric providers.
Status ofi_comm_open(Fabric &fabric, MPI_Comm comm, std::unique_ptr<ProviderComm> *out);

}  // namespace mpix
