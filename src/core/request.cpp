#include "core/request.hpp"

#include <mutex>
#include <unordered_map>

#include "core/agent.hpp"
#include "core/log.hpp"
#include "core/op.hpp"
#include "core/staging.hpp"

namespace mpix {
namespace {

std::mutex g_mu;
std::unordered_map<MPI_Request, Op *> &requests() {
  static auto *m = new std::unordered_map<MPI_Request, Op *>;
  return *m;
}

int query_fn(void *extra, MPI_Status *status) {
  auto *op = static_cast<Op *>(extra);
  // MPI calls this after MPI_Grequest_complete, which the agent calls after publishing
  // kOpCompleted: the acquire makes the agent's writes of op->status visible here in terms the
  // C++ memory model (and ThreadSanitizer, which cannot see inside libmpi) understands.
  (void)op->flags.load(std::memory_order_acquire);
  // Completed on the host (MPI_Wait / MPI_Test), not by a stream wait: a staged receive's data
  // is still in its bounce buffer. MPI calls this on the waiting user thread, where the GPU
  // runtime may be called.
  if (op->staging) {
    Status st = staging_copy_in_on_host(*op->staging);
    if (!st.is_ok()) {
      MPIX_LOG(error, "api", "copying a staged receive into device memory: %s", st.what().c_str());
      if (op->status.MPI_ERROR == MPI_SUCCESS) op->status.MPI_ERROR = st.code();
    }
  }
  status->MPI_SOURCE = op->status.MPI_SOURCE;
  status->MPI_TAG = op->status.MPI_TAG;
  status->MPI_ERROR = op->status.MPI_ERROR;
  MPI_Status_set_cancelled(status, 0);
  MPI_Count n = 0;
  if (op->kind == OpKind::recv && op->status.MPI_ERROR == MPI_SUCCESS &&
      MPI_Get_elements_x(&op->status, op->dt, &n) != MPI_SUCCESS)
    n = 0;
  MPI_Status_set_elements_x(status, op->dt, n);
  const int err = op->status.MPI_ERROR;
  // Open MPI may run free_fn - and so retire the op - on the agent thread, inside its
  // MPI_Grequest_complete, right after this thread's MPI_Test / MPI_Wait: its own reference count
  // orders that, invisibly to ThreadSanitizer. A release on refs orders this callback's reads
  // before the deletion in C++ terms too (op_unref's fetch_sub acquires).
  op->refs.fetch_add(0, std::memory_order_release);
  return err;
}

int free_fn(void *extra) {
  auto *op = static_cast<Op *>(extra);
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = requests().find(op->grequest);
    if (it != requests().end() && it->second == op) requests().erase(it);
  }
  op_unref(op);
  return MPI_SUCCESS;
}

int cancel_fn(void *, int complete) {
  // An enqueued op cannot be withdrawn from the stream; MPI_Cancel of an incomplete one is a
  // no-op (allowed: cancellation is never guaranteed) and the op completes normally.
  (void)complete;
  return MPI_SUCCESS;
}

}  // namespace

Status request_start(Op *op) {
  op->refs.fetch_add(1);
  int rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->grequest);
  if (rc != MPI_SUCCESS) {
    op->refs.fetch_sub(1);
    return mpi_status(rc, "MPI_Grequest_start", __FILE__, __LINE__);
  }
  std::lock_guard<std::mutex> lk(g_mu);
  requests()[op->grequest] = op;
  return {};
}

Op *request_find(MPI_Request req, bool take) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = requests().find(req);
  if (it == requests().end()) return nullptr;
  Op *op = it->second;
  if (take) requests().erase(it);
  return op;
}

void request_complete(Op *op, bool free_now) {
  // Copy the handle: free_fn (run inside MPI_Request_free) may drop the last reference.
  MPI_Request r = op->grequest;
  int rc = MPI_Grequest_complete(r);
  if (rc != MPI_SUCCESS) MPIX_LOG(error, "agent", "MPI_Grequest_complete failed (%d)", rc);
  if (free_now) {
    rc = MPI_Request_free(&r);
    if (rc != MPI_SUCCESS) MPIX_LOG(error, "agent", "MPI_Request_free failed (%d)", rc);
  }
}

void request_free(Op *op) {
  MPI_Request r = op->grequest;
  int rc = MPI_Request_free(&r);
  if (rc != MPI_SUCCESS) MPIX_LOG(error, "api", "MPI_Request_free failed (%d)", rc);
}

}  // namespace mpix
