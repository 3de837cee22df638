#include "partitioned/private_comms.hpp"

#include <iterator>
#include <map>
#include <mutex>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/keyval_part.hpp"
#include "core/provider.hpp"
#include "core/runtime.hpp"

namespace mpix {
namespace {

using Holder = std::shared_ptr<PrivateComms>;

int delete_fn(MPI_Comm, int, void *attr, void *) {
  delete static_cast<Holder *>(attr);  // the comms go when the last request lets go
  return MPI_SUCCESS;
}

// The Runtime's key for the private communicators (a duplicate gets private communicators of
// its own).
struct PrivateCommsKey final : KeyvalPart {};

// Collective over @p comm: the private communicator and the provider's state for it, told about
// the user communicator's stream by @p si where it is not null (every rank alike).
Status make_private(MPI_Comm comm, const CommStreamInfo *si, MPI_Comm *out,
                    std::shared_ptr<CommCtx> *ctx) {
  int rank = 0;
  MPIX_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // MPI_Comm_split, not MPI_Comm_dup: a dup would copy the user's attributes (a stream
  // communicator's stream among them). Same group, same rank order.
  MPIX_MPI_CHECK(MPI_Comm_split(comm, 0, rank, out));
  MPIX_MPI_CHECK(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
  Provider *prov = nullptr;
  MPIX_TRY(provider_get(&prov));
  auto c = std::make_shared<CommCtx>();
  if (si) MPIX_TRY(prov->comm_open_on_stream(*out, *si, &c->prov));
  else MPIX_TRY(prov->comm_open(*out, &c->prov));
  *ctx = std::move(c);
  return {};
}

}  // namespace

PrivateComms::~PrivateComms() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // The provider's state goes first: it may refer to the communicators.
  hdr_ctx.reset();
  data_ctx.reset();
  ctl_ctx.reset();
  if (finalized) return;
  if (hdr != MPI_COMM_NULL) MPI_Comm_free(&hdr);
  if (data != MPI_COMM_NULL) MPI_Comm_free(&data);
  if (ctl != MPI_COMM_NULL) MPI_Comm_free(&ctl);
}

Status private_comms_get(MPI_Comm comm, const CommStreamInfo *si,
                         std::shared_ptr<PrivateComms> *out) {
  PrivateCommsKey &k = runtime().part<PrivateCommsKey>();
  std::lock_guard<std::mutex> lk(k.mu());
  int kv = MPI_KEYVAL_INVALID;
  MPIX_TRY(k.get(delete_fn, &kv));
  void *v = nullptr;
  int flag = 0;
  MPIX_MPI_CHECK(MPI_Comm_get_attr(comm, kv, &v, &flag));
  if (flag) {
    *out = *static_cast<Holder *>(v);
    return {};
  }
  int inter = 0;
  MPIX_MPI_CHECK(MPI_Comm_test_inter(comm, &inter));
  if (inter)
    return make_status(MPI_ERR_COMM,
                       "partitioned communication on an intercommunicator is not "
                       "supported");
  auto pc = std::make_shared<PrivateComms>();
  MPIX_TRY(make_private(comm, nullptr, &pc->hdr, &pc->hdr_ctx));
  // The data messages may take the provider's direct paths between GPUs (same-node GPU-direct
  // of provider mpi, for partitions of device buffers), as the stream communicator's own do.
  MPIX_TRY(make_private(comm, si, &pc->data, &pc->data_ctx));
  MPIX_TRY(make_private(comm, nullptr, &pc->ctl, &pc->ctl_ctx));
  auto *h = new Holder(pc);
  int rc = MPI_Comm_set_attr(comm, kv, h);
  if (rc != MPI_SUCCESS) {
    delete h;
    return mpi_status(rc, "MPI_Comm_set_attr", __FILE__, __LINE__);
  }
  MPIX_LOG(debug, "api", "partitioned: made the private communicators of a communicator");
  *out = std::move(pc);
  return {};
}

namespace {

// The Runtime's data-tag ranges in use.
struct TagSpace final : RuntimePart {
  std::mutex mu;
  std::map<int, int> live;  // base -> count
  int cursor = 0;
};

TagSpace &tags() { return runtime().part<TagSpace>(); }

}  // namespace

int tag_upper_bound() {
  static const int ub = [] {
    int *p = nullptr, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
    return flag ? *p : 32767;
  }();
  return ub;
}

Status data_tags_acquire(int n, int *base) {
  const int64_t space = static_cast<int64_t>(tag_upper_bound()) + 1;
  if (n > space)
    return make_status(MPI_ERR_OTHER,
                       "%d partitions need %d tags, more than MPI_TAG_UB + 1 "
                       "(%lld)",
                       n, n, static_cast<long long>(space));
  TagSpace &t = tags();
  std::lock_guard<std::mutex> lk(t.mu);
  if (n == 0) {
    *base = 0;
    return {};
  }
  // First fit from a moving cursor, wrapping once round the tag space.
  int64_t c = t.cursor;
  for (std::size_t tries = 0; tries <= t.live.size() + 1; ++tries) {
    if (c + n > space) c = 0;
    auto it = t.live.lower_bound(static_cast<int>(c));
    if (it != t.live.begin()) {
      auto prev = std::prev(it);
      if (static_cast<int64_t>(prev->first) + prev->second > c) {
        c = static_cast<int64_t>(prev->first) + prev->second;
        continue;
      }
    }
    if (it != t.live.end() && it->first < c + n) {
      c = static_cast<int64_t>(it->first) + it->second;
      continue;
    }
    *base = static_cast<int>(c);
    t.live.emplace(*base, n);
    t.cursor = static_cast<int>((c + n) % space);
    return {};
  }
  return make_status(MPI_ERR_OTHER,
                     "no free range of %d tags left for partitioned sends "
                     "(%zu live partitioned sends hold them)",
                     n, t.live.size());
}

void data_tags_release(int base, int n) {
  Runtime *rt = runtime_current();  // none after MPI_Finalize: nothing left to give back to
  if (n == 0 || !rt) return;
  TagSpace &t = rt->part<TagSpace>();
  std::lock_guard<std::mutex> lk(t.mu);
  t.live.erase(base);
}

}  // namespace mpix
