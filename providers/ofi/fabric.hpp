// The libfabric objects of this process: one fabric, domain, address vector, completion queue
// and RDM endpoint, shared by every stream communicator (communicators are told apart by the
// context id in the tag). Every fid is owned by a unique_ptr that closes it; members are
// declared in opening order so they close in reverse (endpoint first, fabric last).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace mpix {

template <class T>
struct FidCloser {
  void operator()(T *p) const {
    if (p) fi_close(&p->fid);
  }
};
template <class T>
using FidPtr = std::unique_ptr<T, FidCloser<T>>;

struct InfoFree {
  void operator()(fi_info *i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFree>;

class Fabric {
 public:
  // Opens the endpoint of libfabric provider @p prov_name ("sockets", "tcp", "shm", ...) for
  // FI_EP_RDM + FI_TAGGED + FI_MSG. FI_TRIGGER is asked for when the provider offers it.
  static Status open(const std::string &prov_name, std::unique_ptr<Fabric> *out);
  ~Fabric();

  fid_ep *ep() const { return ep_.get(); }
  fid_cq *cq() const { return cq_.get(); }
  fid_domain *domain() const { return domain_.get(); }
  const fi_info &info() const { return *info_; }
  // The provider's full name ("tcp;ofi_rxm").
  std::string prov_name() const { return info_->fabric_attr->prov_name; }
  bool has_trigger() const { return (info_->caps & FI_TRIGGER) != 0; }
  // Send-after-send order on both sides: MPI's non-overtaking rule holds without help.
  bool sends_ordered() const;
  bool auto_progress() const { return info_->domain_attr->data_progress == FI_PROGRESS_AUTO; }
  // This endpoint's address (fi_getname).
  const std::vector<unsigned char> &name() const { return name_; }
  // fi_addr_t for a peer address; each distinct address is inserted once.
  Status insert(const unsigned char *addr, std::size_t len, fi_addr_t *out);
  // A counter for triggered operations (not bound to the endpoint).
  Status open_counter(FidPtr<fid_cntr> *out);
  std::string describe() const;

 private:
  Fabric() = default;

  InfoPtr info_;
  FidPtr<fid_fabric> fabric_;
  FidPtr<fid_domain> domain_;
  FidPtr<fid_av> av_;
  FidPtr<fid_cq> cq_;
  FidPtr<fid_ep> ep_;
  std::vector<unsigned char> name_;
  std::mutex av_mu_;
  std::map<std::vector<unsigned char>, fi_addr_t> addrs_;
};

// The libfabric providers offering FI_EP_RDM + FI_TAGGED + FI_MSG here ("sockets tcp;ofi_rxm ...").
std::string ofi_providers_available();

}  // namespace mpix
