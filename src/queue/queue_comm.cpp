#include "queue/queue_comm.hpp"

#include <mutex>

#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/keyval_part.hpp"
#include "core/runtime.hpp"

namespace mpix {
namespace {

using Holder = std::shared_ptr<CommCtx>;

int delete_fn(MPI_Comm, int, void *attr, void *) {
  delete static_cast<Holder *>(attr);  // queues still holding the context keep it
  return MPI_SUCCESS;
}

// The Runtime's key for the queue's plain-communicator state.
struct QueueKey final : KeyvalPart {};

}  // namespace

Status queue_plain_ctx(MPI_Comm comm, std::shared_ptr<CommCtx> *out) {
  Provider *prov = nullptr;
  MPIX_TRY(provider_get(&prov));
  if (prov->caps().plain_comms) {
    *out = std::make_shared<CommCtx>();  // no state: the provider posts on comm itself
    return {};
  }
  QueueKey &k = runtime().part<QueueKey>();
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
  auto ctx = std::make_shared<CommCtx>();
  MPIX_TRY(prov->comm_open(comm, &ctx->prov));
  auto *h = new Holder(ctx);
  const int rc = MPI_Comm_set_attr(comm, kv, h);
  if (rc != MPI_SUCCESS) {
    delete h;
    return mpi_status(rc, "MPI_Comm_set_attr", __FILE__, __LINE__);
  }
  MPIX_LOG(debug, "api", "queue: opened provider %s's state for a plain communicator",
           prov->name());
  *out = std::move(ctx);
  return {};
}

}  // namespace mpix
