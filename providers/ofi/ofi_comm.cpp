#include "providers/ofi/ofi_comm.hpp"

#include <cstring>
#include <functional>

#include "core/log.hpp"
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

Status ofi_comm_open(Fabric &fabric, MPI_Comm comm, std::unique_ptr<ProviderComm> *out) {
  int inter = 0, rank = 0, size = 0;
  MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
  if (inter)
    return make_status(MPI_ERR_COMM, "provider ofi does not support intercommunicators (use "
                                     "MPIX_PROVIDER=mpi)");
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPIX_MPI_CHECK(MPI_Comm_size(comm, &size));
  if (size > ofi_tag::kMaxRanks)
    return make_status(MPI_ERR_COMM, "communicator of %d ranks: provider ofi's tag layout carries "
                       "at most %d", size, ofi_tag::kMaxRanks);

  AddrRecord mine{};
  mine.prov_hash = std::hash<std::string>{}(fabric.prov_name());
  const auto &name = fabric.name();
  if (name.size() <= AddrRecord::kMaxAddr) {
    mine.len = static_cast<uint32_t>(name.size());
    std::memcpy(mine.addr, name.data(), name.size());
  }
  std::vector<AddrRecord> all(static_cast<std::size_t>(size));
  MPIX_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE,
                               comm));
  // Every rank sees the same records, so every rank takes the same decision here.
  for (int r = 0; r < size; ++r) {
    if (all[r].prov_hash != all[0].prov_hash)
      return make_status(MPI_ERR_OTHER, "provider ofi: rank %d opened a different libfabric "
                         "provider than rank 0 (this rank: %s); set MPIX_OFI_PROVIDER alike on "
                         "every rank", r, fabric.prov_name().c_str());
    if (all[r].len == 0)
      return make_status(MPI_ERR_OTHER, "provider ofi: rank %d's endpoint address is longer than "
                         "%zu bytes", r, AddrRecord::kMaxAddr);
  }
  auto addrs = std::make_shared<std::vector<fi_addr_t>>(static_cast<std::size_t>(size));
  Status st;
  for (int r = 0; r < size && st.is_ok(); ++r) st = fabric.insert(all[r].addr, all[r].len, &(*addrs)[r]);
  // An address-vector failure is local: agree on it before the collective context-id step.
  int bad = st.is_ok() ? 0 : 1, any_bad = 0;
  MPIX_MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm));
  if (!st.is_ok()) return st;
  if (any_bad)
    return make_status(MPI_ERR_OTHER, "provider ofi: another rank could not insert the "
                                      "communicator's addresses");

  std::shared_ptr<CtxFamily> family;
  uint32_t ctx = 0;
  MPIX_TRY(ctx_family_open(comm, &family, &ctx));
  MPIX_LOG(debug, "ofi", "stream communicator: %d ranks, context id %u", size, ctx);
  *out = std::make_unique<OfiComm>(std::move(family), ctx, rank, std::move(addrs));
  return {};
}

}  // namespace mpix
