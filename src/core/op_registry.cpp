#include <mutex>
#include <unordered_set>

#include "core/log.hpp"
#include "core/op.hpp"

namespace mpix {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_set<Op *> live;
  uint64_t next_seq = 0;
};

Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

}  // namespace

void op_registry_add(Op *op) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  op->seq = r.next_seq++;
  r.live.insert(op);
}

void op_registry_remove(Op *op) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.live.erase(op);
}

std::size_t op_registry_size() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.live.size();
}

std::size_t op_registry_report() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  for (Op *op : r.live) {
    const char *why = op->state.load() == OpState::complete
                          ? "complete, but its request was never waited on or freed"
                          : "never completed";
    MPIX_LOG(warn, "agent", "op #%llu (%s, peer %d, tag %d) left in state %s at finalize: %s",
             static_cast<unsigned long long>(op->seq), op_kind_name(op->kind), op->peer, op->tag,
             op_state_name(op->state.load()), why);
  }
  return r.live.size();
}

}  // namespace mpix
