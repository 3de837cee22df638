#include "providers/ofi/ofi_comm.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/log.hpp"
#include "providers/ofi/fabric.hpp"
#include "providers/ofi/tag_layout.hpp"

namespace mpix {
namespace {

// What each rank contributes to the address exchange.
struct AddrRecord {
  static constexpr std::size_t kMaxAddr = 240;
  uint64_t prov_hash;  // which libfabric provider this rank opened
  uint32_t len;        // address bytes used (0: this rank's address did not fit)
  uint32_t pad;
  unsigned char addr[kMaxAddr];
};
static_assert(sizeof(AddrRecord) == 256, "address records are exchanged as raw bytes");

}  // namespace

Status OfiComm::dup(std::unique_ptr<ProviderComm> *out) const {
  uint32_t ctx = 0;
  MPIX_TRY(family_->take(&ctx));
  *out = std::make_unique<OfiComm>(family_, ctx, rank_, addrs_);
  return {};
}

namespace {

// Frees a communicator made for the set-up steps.
struct CommHolder {
  MPI_Comm c = MPI_COMM_NULL;
  ~CommHolder() {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
};

}  // namespace

Status ofi_comm_open(Fabric &fabric, MPI_Comm comm, std::unique_ptr<ProviderComm> *out) {
  int inter = 0, rank = 0, peers = 0;
  MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Peers are the remote group of an intercommunicator: MPI_Allgather on it gathers theirs.
  if (inter) MPIX_MPI_CHECK(MPI_Comm_remote_size(comm, &peers));
  else MPIX_MPI_CHECK(MPI_Comm_size(comm, &peers));
  // Agreement over both groups of an intercommunicator needs one intracommunicator.
  CommHolder merged;
  if (inter) MPIX_MPI_CHECK(MPI_Intercomm_merge(comm, 0, &merged.c));
  MPI_Comm all_ranks = inter ? merged.c : comm;
  int local_size = 0;
  MPIX_MPI_CHECK(MPI_Comm_size(comm, &local_size));

  AddrRecord mine{};
  mine.prov_hash = std::hash<std::string>{}(fabric.prov_name());
  const auto &name = fabric.name();
  if (name.size() <= AddrRecord::kMaxAddr) {
    mine.len = static_cast<uint32_t>(name.size());
    std::memcpy(mine.addr, name.data(), name.size());
  }
  std::vector<AddrRecord> all(static_cast<std::size_t>(peers));
  MPIX_MPI_CHECK(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm));
  Status st;
  if (std::max(peers, local_size) > ofi_tag::kMaxRanks)
    st = make_status(MPI_ERR_COMM,
                     "a communicator of %d ranks: provider ofi's tag layout "
                     "carries at most %d",
                     std::max(peers, local_size), ofi_tag::kMaxRanks);
  for (int r = 0; r < peers && st.is_ok(); ++r) {
    if (all[r].prov_hash != mine.prov_hash)
      st = make_status(MPI_ERR_OTHER,
                       "provider ofi: rank %d opened a different libfabric "
                       "provider than this rank (%s); set MPIX_OFI_PROVIDER alike on every rank",
                       r, fabric.prov_name().c_str());
    else if (all[r].len == 0)
      st = make_status(MPI_ERR_OTHER,
                       "provider ofi: rank %d's endpoint address is longer than "
                       "%zu bytes",
                       r, AddrRecord::kMaxAddr);
  }
  auto addrs = std::make_shared<std::vector<fi_addr_t>>(static_cast<std::size_t>(peers));
  for (int r = 0; r < peers && st.is_ok(); ++r)
    st = fabric.insert(all[r].addr, all[r].len, &(*addrs)[r]);
  // Failures above can be local to some ranks: agree before the collective context-id step.
  int bad = st.is_ok() ? 0 : 1, any_bad = 0;
  MPIX_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, all_ranks));
  if (!st.is_ok()) return st;
  if (any_bad)
    return make_status(MPI_ERR_OTHER,
                       "provider ofi: another rank could not set up the "
                       "communicator's libfabric addresses");

  std::shared_ptr<CtxFamily> family;
  uint32_t ctx = 0;
  MPIX_TRY(ctx_family_open(all_ranks, &family, &ctx));
  MPIX_LOG(debug, "ofi", "stream %scommunicator: %d peer ranks, context id %u",
           inter ? "inter" : "", peers, ctx);
  *out = std::make_unique<OfiComm>(std::move(family), ctx, rank, std::move(addrs));
  return {};
}

}  // namespace mpix
