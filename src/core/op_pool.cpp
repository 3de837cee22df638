#include "core/op_pool.hpp"

#include <thread>

#include "core/op.hpp"

namespace mpix {

OpPool::~OpPool() {
  for (Op *list : {free_, given_.exchange(nullptr, std::memory_order_acquire)})
    while (list) {
      Op *next = list->submit_next;
      op_delete(list);
      list = next;
    }
}

Op *OpPool::take() {
  if (taking_.exchange(true, std::memory_order_acquire)) return nullptr;
  // acquire: the giver's writes to the op (its last use) happen before its reuse here.
  if (!free_) free_ = given_.exchange(nullptr, std::memory_order_acquire);
  Op *op = free_;
  if (op) free_ = op->submit_next;
  taking_.store(false, std::memory_order_release);
  return op;
}

std::size_t OpPool::size() {
  while (taking_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  std::size_t n = 0;
  // A given op's link is written before the push that publishes it and not again until a take.
  for (Op *list : {free_, given_.load(std::memory_order_acquire)})
    for (Op *op = list; op; op = op->submit_next) ++n;
  taking_.store(false, std::memory_order_release);
  return n;
}

void OpPool::give(Op *op) {
  Op *head = given_.load(std::memory_order_relaxed);
  do {
    op->submit_next = head;
  } while (!given_.compare_exchange_weak(head, op, std::memory_order_release,
                                         std::memory_order_relaxed));
}

}  // namespace mpix
