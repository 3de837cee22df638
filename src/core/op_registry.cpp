// The live-op registry (core/op.hpp): what the finalize report lists. The Runtime owns it.
#include <mutex>

#include "base/log.hpp"
#include "core/op.hpp"
#include "core/runtime.hpp"

namespace mpix {

// An intrusive doubly linked list: O(1) add/remove with no allocation. An op is added when it
// is made and removed when it is deleted: a reused op (core/op_pool.hpp) stays.
// Ops left in it when the Runtime goes are reported and left alone (~Runtime).
class OpRegistry {
 public:
  OpRegistry() { head.reg_prev = head.reg_next = &head; }
  std::mutex mu;
  Op head;  // sentinel
  std::size_t size = 0;
  uint64_t next_seq = 0;
};

PartPtr<OpRegistry> op_registry_make() { return PartPtr<OpRegistry>(new OpRegistry); }
void part_delete(OpRegistry *r) { delete r; }

namespace {
using Registry = OpRegistry;
Registry &registry() { return runtime().ops(); }
}  // namespace

void op_registry_add(Op *op) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  op->seq = r.next_seq++;
  op->reg_next = &r.head;
  op->reg_prev = r.head.reg_prev;
  r.head.reg_prev->reg_next = op;
  r.head.reg_prev = op;
  ++r.size;
}

void op_registry_remove(Op *op) {
  // After MPI_Finalize (an op retired late) there is no registry left to unlink it from.
  Runtime *rt = runtime_current();
  if (!rt) return;
  Registry &r = rt->ops();
  std::lock_guard<std::mutex> lk(r.mu);
  if (!op->reg_next) return;
  op->reg_prev->reg_next = op->reg_next;
  op->reg_next->reg_prev = op->reg_prev;
  op->reg_prev = op->reg_next = nullptr;
  --r.size;
}

std::size_t op_registry_size() {
  Runtime *rt = runtime_current();
  return rt ? op_registry_size(rt->ops()) : 0;
}

// Ops kept for reuse (core/op_pool.hpp) stay listed, RETIRED: neither counted nor reported.
std::size_t op_registry_size(OpRegistry &r) {
  std::lock_guard<std::mutex> lk(r.mu);
  std::size_t n = 0;
  for (Op *op = r.head.reg_next; op != &r.head; op = op->reg_next)
    n += op->state.load() != OpState::retired;
  return n;
}

std::size_t op_registry_report(OpRegistry &r) {
  std::lock_guard<std::mutex> lk(r.mu);
  std::size_t n = 0;
  for (Op *op = r.head.reg_next; op != &r.head; op = op->reg_next) {
    if (op->state.load() == OpState::retired) continue;
    ++n;
    const char *why = op->state.load() == OpState::complete
                          ? "complete, but its request was never waited on or freed"
                          : "never completed";
    MPIX_LOG(warn, "agent", "op #%llu (%s, peer %d, tag %d) left in state %s at finalize: %s",
             static_cast<unsigned long long>(op->seq), op_kind_name(op->kind), op->peer, op->tag,
             op_state_name(op->state.load()), why);
  }
  return n;
}

}  // namespace mpix
