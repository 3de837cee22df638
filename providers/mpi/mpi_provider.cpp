#include "providers/mpi/mpi_provider.hpp"

#include "core/comm_ctx.hpp"
#include "core/op.hpp"

namespace mpix {
namespace {

// A send of at most this many bytes is eager under every transport of Open MPI and MPICH
// (vader's eager limit is 4 KiB): it completes without its receive, so holding it back behind
// others can never wait for the peer.
constexpr MPI_Count kSmallSendBytes = 4096;

bool is_small_send(const Op &op) {
  if (op.kind != OpKind::send) return false;
  MPI_Count sz = 0;
  if (MPI_Type_size_x(op.dt, &sz) != MPI_SUCCESS || sz == MPI_UNDEFINED) return false;
  return sz * op.count <= kSmallSendBytes;
}

}  // namespace

bool MpiProvider::reads_device(const Op &op) {
  const auto *mc =
      op.ctx && op.ctx->prov ? dynamic_cast<const MpiComm *>(op.ctx->prov.get()) : nullptr;
  return mc && ipc_sends_direct(op, mc->ipc.get());
}

Status MpiProvider::fire(Op &op) {
  if (ChunkEngine::takes(op)) return chunks_.fire(op);
  if (op.kind == OpKind::send) {
    const bool small = is_small_send(op);
    // Every send behind a held one waits too: sends are posted in stream order, so that MPI's
    // non-overtaking order holds for each communicator, peer and tag.
    if (!held_.empty() || (small && small_sends_ >= kMaxSmallSends)) {
      held_.push_back(&op);
      return {};
    }
    return post(op, small);
  }
  return post(op, false);
}

Status MpiProvider::post(Op &op, bool small) {
  MPI_Request r = MPI_REQUEST_NULL;
  switch (op.kind) {
    case OpKind::send:
      MPIX_MPI_CHECK(MPI_Isend(op.sbuf, op.count, op.dt, op.peer, op.tag, op.comm, &r));
      break;
    case OpKind::recv:
      MPIX_MPI_CHECK(MPI_Irecv(op.rbuf, op.count, op.dt, op.peer, op.tag, op.comm, &r));
      break;
    case OpKind::allreduce:
      MPIX_MPI_CHECK(MPI_Iallreduce(op.sbuf, op.rbuf, op.count, op.dt, op.reduce_op, op.comm, &r));
      break;
  }
  op_posted(op);
  posted_.push_back(&op);
  reqs_.push_back(r);
  small_.push_back(small);
  if (small) ++small_sends_;
  return {};
}

// Held sends, in order, as far as the cap on small sends in flight allows. A send larger than
// the cap's sends is posted at once when it reaches the front.
bool MpiProvider::post_held(std::vector<Op *> &done) {
  bool any = false;
  while (!held_.empty()) {
    Op *op = held_.front();
    const bool small = is_small_send(*op);
    if (small && small_sends_ >= kMaxSmallSends) break;
    held_.pop_front();
    any = true;
    Status st = post(*op, small);
    if (!st.is_ok()) {
      op_failed(*op, std::move(st));
      done.push_back(op);
    }
  }
  return any;
}

bool MpiProvider::progress(std::vector<Op *> &done) {
  bool any = chunks_.busy() && chunks_.progress(done);
  if (posted_.empty()) return post_held(done) || any;
  int n = static_cast<int>(reqs_.size());
  indices_.resize(n);
  statuses_.resize(n);
  int outcount = 0;
  int rc = MPI_Testsome(n, reqs_.data(), &outcount, indices_.data(), statuses_.data());
  if (outcount == MPI_UNDEFINED || outcount == 0) return post_held(done) || any;
  for (int i = 0; i < outcount; ++i) {
    Op *op = posted_[indices_[i]];
    if (small_[indices_[i]]) --small_sends_;
    // MPI_Testsome sets MPI_ERROR only when it returns MPI_ERR_IN_STATUS.
    if (rc != MPI_ERR_IN_STATUS) statuses_[i].MPI_ERROR = MPI_SUCCESS;
    // MPI's empty status for a receive from MPI_PROC_NULL, which MPICH 4.0 does not fill in
    // (it reports source 0, tag 0).
    if (op->kind == OpKind::recv && op->peer == MPI_PROC_NULL &&
        statuses_[i].MPI_ERROR == MPI_SUCCESS) {
      statuses_[i].MPI_SOURCE = MPI_PROC_NULL;
      statuses_[i].MPI_TAG = MPI_ANY_TAG;
      MPI_Status_set_elements_x(&statuses_[i], MPI_BYTE, 0);
    }
    op_completed(*op, statuses_[i]);
    done.push_back(op);
  }
  // Compact: drop completed entries (their requests are MPI_REQUEST_NULL now), keep order.
  std::size_t w = 0;
  for (std::size_t i = 0; i < posted_.size(); ++i) {
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    posted_[w] = posted_[i];
    reqs_[w] = reqs_[i];
    small_[w] = small_[i];
    ++w;
  }
  posted_.resize(w);
  reqs_.resize(w);
  small_.resize(w);
  post_held(done);
  return true;
}

std::string MpiProvider::describe() const {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string s(lib, static_cast<std::size_t>(len));
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return "mpi: MPI_Isend/MPI_Irecv posted by the agent over " + s;
}

std::unique_ptr<Provider> make_mpi_provider() { return std::make_unique<MpiProvider>(); }

}  // namespace mpix
