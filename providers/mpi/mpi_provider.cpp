#include "providers/mpi/mpi_provider.hpp"

#include "core/comm_ctx.hpp"
#include "core/op.hpp"

namespace mpix {

bool MpiProvider::reads_device(const Op &op) {
  const auto *mc =
      op.ctx && op.ctx->prov ? dynamic_cast<const MpiComm *>(op.ctx->prov.get()) : nullptr;
  return mc && ipc_sends_direct(op, mc->ipc.get());
}

bool MpiProvider::may_deliver_device(const Op &op) {
  const auto *mc =
      op.ctx && op.ctx->prov ? dynamic_cast<const MpiComm *>(op.ctx->prov.get()) : nullptr;
  return mc && ipc_may_receive_direct(op, mc->ipc.get());
}

Status MpiProvider::fire(Op &op) {
  if (ChunkEngine::takes(op)) return chunks_.fire(op);
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
  return {};
}

bool MpiProvider::progress(std::vector<Op *> &done) {
  const bool chunk_progress = chunks_.busy() && chunks_.progress(done);
  if (posted_.empty()) return chunk_progress;
  int n = static_cast<int>(reqs_.size());
  indices_.resize(n);
  statuses_.resize(n);
  int outcount = 0;
  int rc = MPI_Testsome(n, reqs_.data(), &outcount, indices_.data(), statuses_.data());
  if (outcount == MPI_UNDEFINED || outcount == 0) return chunk_progress;
  for (int i = 0; i < outcount; ++i) {
    Op *op = posted_[indices_[i]];
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
    ++w;
  }
  posted_.resize(w);
  reqs_.resize(w);
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
