#include "providers/ofi/fabric.hpp"

#include <rdma/fi_tagged.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>

#include "base/log.hpp"
#include "providers/ofi/ofi_check.hpp"

namespace mpix {
namespace {

constexpr uint32_t kApiVersion = FI_VERSION(1, 17);

// Hints for an RDM tagged endpoint of @p prov (empty: any provider).
InfoPtr make_hints(const std::string &prov, bool trigger, bool ordered) {
  InfoPtr h(fi_allocinfo());
  if (!h) return h;
  // FI_MSG: mpix's own matching (soft_match.hpp) sends its headers as untagged messages.
  h->caps = FI_TAGGED | FI_MSG | FI_SEND | FI_RECV | (trigger ? FI_TRIGGER : 0);
  h->ep_attr->type = FI_EP_RDM;
  // Every operation gets a context of fi_context2 size (ofi_op.hpp), so both modes are fine.
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->domain_attr->threading = FI_THREAD_SAFE;
  h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  if (ordered) {
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
  }
  if (!prov.empty()) h->fabric_attr->prov_name = strdup(prov.c_str());
  return h;
}

// libfabric's shm names an endpoint "<pid>:<domain>:<endpoint>" by default, and its shared
// memory file (/dev/shm/<name>) outlives a killed process: a later process that gets the same
// pid then fails fi_enable with EBUSY. mpix names its shm endpoints itself, with a random part,
// so that no file left behind can be in the way. shm's names are NUL-terminated strings.
std::string unique_shm_name() {
  static std::atomic<unsigned> serial{0};
  std::random_device rd;
  const unsigned long long nonce = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  char name[64];
  std::snprintf(name, sizeof name, "mpix-%ld-%u-%016llx", static_cast<long>(getpid()),
                serial.fetch_add(1, std::memory_order_relaxed), nonce);
  return name;
}

}  // namespace

Fabric::~Fabric() = default;

Status Fabric::open(const std::string &prov_name, std::unique_ptr<Fabric> *out) {
  std::unique_ptr<Fabric> f(new Fabric);
  // Ask for the most first: triggered ops and send-after-send order, then less.
  int last_rc = -FI_ENODATA;
  for (int attempt = 0; attempt < 4 && !f->info_; ++attempt) {
    bool trigger = attempt == 0 || attempt == 2;
    bool ordered = attempt < 2;
    InfoPtr hints = make_hints(prov_name, trigger, ordered);
    if (!hints) return make_status(MPI_ERR_NO_MEM, "fi_allocinfo failed");
    fi_info *got = nullptr;
    last_rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &got);
    if (last_rc == 0 && got) f->info_.reset(got);
  }
  if (!f->info_)
    return make_status(MPI_ERR_UNSUPPORTED_OPERATION,
                       "libfabric has no provider \"%s\" for FI_EP_RDM + FI_TAGGED + FI_MSG (%s; "
                       "available: %s)",
                       prov_name.c_str(), fi_strerror(-last_rc), ofi_providers_available().c_str());
  // Keep only the first match (first interface); the list tail is not needed.
  if (f->info_->next) {
    InfoPtr first(fi_dupinfo(f->info_.get()));
    if (!first) return make_status(MPI_ERR_NO_MEM, "fi_dupinfo failed");
    f->info_ = std::move(first);
  }
  fi_info *info = f->info_.get();

  fid_fabric *fab = nullptr;
  MPIX_OFI_CHECK(fi_fabric(info->fabric_attr, &fab, nullptr));
  f->fabric_.reset(fab);
  fid_domain *dom = nullptr;
  MPIX_OFI_CHECK(fi_domain(fab, info, &dom, nullptr));
  f->domain_.reset(dom);

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  fid_av *av = nullptr;
  MPIX_OFI_CHECK(fi_av_open(dom, &av_attr, &av, nullptr));
  f->av_.reset(av);

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_NONE;
  fid_cq *cq = nullptr;
  MPIX_OFI_CHECK(fi_cq_open(dom, &cq_attr, &cq, nullptr));
  f->cq_.reset(cq);

  fid_ep *ep = nullptr;
  MPIX_OFI_CHECK(fi_endpoint(dom, info, &ep, nullptr));
  f->ep_.reset(ep);
  MPIX_OFI_CHECK(fi_ep_bind(ep, &av->fid, 0));
  MPIX_OFI_CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
  if (std::strcmp(info->fabric_attr->prov_name, "shm") == 0) {
    const std::string name = unique_shm_name();
    MPIX_OFI_CHECK(fi_setname(&ep->fid, const_cast<char *>(name.c_str()), name.size() + 1));
  }
  MPIX_OFI_CHECK(fi_enable(ep));

  size_t len = 0;
  int rc = fi_getname(&ep->fid, nullptr, &len);
  if (rc != -FI_ETOOSMALL && rc < 0) MPIX_OFI_CHECK(rc);
  f->name_.resize(len);
  MPIX_OFI_CHECK(fi_getname(&ep->fid, f->name_.data(), &len));
  f->name_.resize(len);
  MPIX_LOG(debug, "ofi", "opened %s (fabric %s, domain %s, address %zu bytes)",
           info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name, len);
  *out = std::move(f);
  return {};
}

bool Fabric::sends_ordered() const {
  return (info_->tx_attr->msg_order & FI_ORDER_SAS) && (info_->rx_attr->msg_order & FI_ORDER_SAS);
}

Status Fabric::insert(const unsigned char *addr, std::size_t len, fi_addr_t *out) {
  std::vector<unsigned char> key(addr, addr + len);
  std::lock_guard<std::mutex> lk(av_mu_);
  auto it = addrs_.find(key);
  if (it != addrs_.end()) {
    *out = it->second;
    return {};
  }
  fi_addr_t fa = FI_ADDR_NOTAVAIL;
  int n = fi_av_insert(av_.get(), key.data(), 1, &fa, 0, nullptr);
  if (n != 1) {
    if (n < 0) MPIX_OFI_CHECK(n);
    return make_status(MPI_ERR_OTHER, "fi_av_insert did not take a peer address (%d inserted)", n);
  }
  addrs_.emplace(std::move(key), fa);
  *out = fa;
  return {};
}

Status Fabric::open_counter(FidPtr<fid_cntr> *out) {
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_NONE;
  fid_cntr *c = nullptr;
  MPIX_OFI_CHECK(fi_cntr_open(domain_.get(), &attr, &c, nullptr));
  out->reset(c);
  return {};
}

std::string Fabric::describe() const {
  std::string s = std::string(info_->fabric_attr->prov_name) + " on " + info_->domain_attr->name +
                  " (fabric " + info_->fabric_attr->name + ")";
  s += has_trigger() ? ", FI_TRIGGER" : ", no FI_TRIGGER";
  s += sends_ordered() ? ", FI_ORDER_SAS" : ", sends unordered";
  s += auto_progress() ? ", auto progress" : ", manual progress";
  return s;
}

std::string ofi_providers_available() {
  InfoPtr hints = make_hints("", false, false);
  fi_info *got = nullptr;
  if (!hints || fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &got) != 0 || !got)
    return "none";
  InfoPtr list(got);
  std::set<std::string> names;
  for (fi_info *i = got; i; i = i->next) names.insert(i->fabric_attr->prov_name);
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace mpix
