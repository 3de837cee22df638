// C entry points: HPE Cray MPICH-compatible queues (MPIX_Queue).
#include <cstdint>

#include "api/checks.hpp"
#include "api/errors.hpp"
#include "core/agent.hpp"
#include "core/op.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"
#include "queue/queue.hpp"

namespace mpix {
namespace {

uint64_t queue_id(MPIX_Queue q) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(q)); }

Status find_queue(MPIX_Queue h, std::shared_ptr<Queue> *out) {
  if (h == MPIX_QUEUE_NULL) return make_status(MPI_ERR_ARG, "queue is MPIX_QUEUE_NULL");
  *out = queue_lookup(queue_id(h));
  if (!*out)
    return make_status(MPI_ERR_ARG, "queue handle %p is not a live queue (freed?)",
                       static_cast<void *>(h));
  return {};
}

Status create_queue(MPI_Comm comm, void *stream, MPIX_Queue *queue) {
  MPIX_TRY(check_comm(comm));
  if (!queue) return make_status(MPI_ERR_ARG, "queue is NULL");
  std::shared_ptr<Queue> q;
  MPIX_TRY(Queue::create(comm, stream, &q));
  *queue = reinterpret_cast<MPIX_Queue>(static_cast<uintptr_t>(queue_register(std::move(q))));
  return {};
}

Status enqueue(OpKind kind, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
               MPI_Comm comm, MPIX_Queue queue, MPI_Request *request) {
  std::shared_ptr<Queue> q;
  MPIX_TRY(find_queue(queue, &q));
  if (!request) return make_status(MPI_ERR_ARG, "request is NULL");
  MPIX_TRY(runtime_init());
  MPIX_TRY(check_p2p(buf, count, dt, peer, tag, comm, kind == OpKind::recv));
  MPIX_TRY(agent_start());  // a thread that cannot be started fails before an op exists
  return q->enqueue(p2p_args(kind, buf, count, dt, peer, tag, comm), request);
}

// The communicator whose error handler a queue call's failure goes to.
MPI_Comm queue_comm(MPIX_Queue queue) {
  std::shared_ptr<Queue> q = queue == MPIX_QUEUE_NULL ? nullptr : queue_lookup(queue_id(queue));
  return q ? q->comm() : MPI_COMM_NULL;
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Create_queue(MPI_Comm comm, void *stream, MPIX_Queue *queue) {
  return api_guard("MPIX_Create_queue", [&]() -> int {
    return finish(comm, "MPIX_Create_queue", create_queue(comm, stream, queue));
  });
}

int MPIX_Free_queue(MPIX_Queue queue) {
  return api_guard("MPIX_Free_queue", [&]() -> int {
    MPI_Comm comm = queue_comm(queue);
    Status st = queue == MPIX_QUEUE_NULL ? make_status(MPI_ERR_ARG, "queue is MPIX_QUEUE_NULL")
                                         : queue_unregister(queue_id(queue));
    return finish(comm, "MPIX_Free_queue", st);
  });
}

int MPIX_Enqueue_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPIX_Queue queue, MPI_Request *request) {
  return api_guard("MPIX_Enqueue_send", [&]() -> int {
    return finish(comm, "MPIX_Enqueue_send",
                  enqueue(OpKind::send, buf, count, datatype, dest, tag, comm, queue, request));
  });
}

int MPIX_Enqueue_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPIX_Queue queue, MPI_Request *request) {
  return api_guard("MPIX_Enqueue_recv", [&]() -> int {
    return finish(comm, "MPIX_Enqueue_recv",
                  enqueue(OpKind::recv, buf, count, datatype, source, tag, comm, queue, request));
  });
}

int MPIX_Enqueue_start(MPIX_Queue queue) {
  return api_guard("MPIX_Enqueue_start", [&]() -> int {
    std::shared_ptr<Queue> q;
    Status st = find_queue(queue, &q);
    if (st.is_ok()) st = q->start();
    return finish(q ? q->comm() : MPI_COMM_NULL, "MPIX_Enqueue_start", st);
  });
}

int MPIX_Enqueue_wait(MPIX_Queue queue) {
  return api_guard("MPIX_Enqueue_wait", [&]() -> int {
    std::shared_ptr<Queue> q;
    Status st = find_queue(queue, &q);
    if (st.is_ok()) st = q->wait();
    return finish(q ? q->comm() : MPI_COMM_NULL, "MPIX_Enqueue_wait", st);
  });
}

}  // extern "C"
