#include "providers/mpi/ipc_ready.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/ipc_slabs.hpp"

namespace mpix {
namespace {

// Words given back, per (backend, device), with the last value they were given.
struct Pool {
  std::mutex mu;
  std::map<std::pair<Backend *, int>, std::vector<ReadyWord>> free;
};
Pool &pool() {
  static auto *p = new Pool;  // as the slabs: never destroyed
  return *p;
}

}  // namespace

Status ready_word_take(Backend *be, int device, ReadyWord *out) {
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lk(p.mu);
    std::vector<ReadyWord> &f = p.free[std::make_pair(be, device)];
    if (!f.empty()) {
      *out = f.back();
      f.pop_back();
      out->value += 2;  // past value + 1, which a receiver's copy may have written (done)
      return {};
    }
  }
  IpcSlabPiece piece;
  MPIX_TRY(ipc_slab_take(be, device, sizeof(uint64_t), &piece));
  out->word = piece.words;
  out->value = 1;  // the slab starts at 0
  out->slab_base = piece.slab_base;
  out->slab_id = piece.slab_id;
  out->slab_bytes = piece.slab_bytes;
  out->be = be;
  out->device = device;
  return {};
}

void ready_word_give(const ReadyWord &w) {
  if (!w.word) return;
  Pool &p = pool();
  std::lock_guard<std::mutex> lk(p.mu);
  p.free[std::make_pair(w.be, w.device)].push_back(w);
}

Status ready_word_force(const ReadyWord &w) {
  if (!w.word) return {};
  return w.be->copy_sync(w.word, &w.value, sizeof w.value);
}

}  // namespace mpix
