// A deferred communication op and its life cycle.
//
//   ARMED ──(stream reached its threshold)──► TRIGGERED ──(provider posted it)──► POSTED
//     POSTED ──(provider reports completion)──► COMPLETE ──(last reference dropped)──► RETIRED
//
// ARMED: enqueued; the stream has not reached it. TRIGGERED: the agent saw the stream's trigger
// word reach op.threshold. POSTED: the network has it. COMPLETE: status filled, completion word
// written. RETIRED: the request is freed and the agent is done with it; the op is deleted.
// Providers with native triggers (ofi + FI_TRIGGER) post at ARMED time and still pass through
// TRIGGERED when the agent fires the counter.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/signal_pool.hpp"

namespace mpix {

enum class OpState : uint8_t { armed, triggered, posted, complete, retired };
inline const char *op_state_name(OpState s) {
  static const char *const kNames[] = {"ARMED", "TRIGGERED", "POSTED", "COMPLETE", "RETIRED"};
  return kNames[static_cast<int>(s)];
}

enum class OpKind : uint8_t { send, recv, allreduce };
inline const char *op_kind_name(OpKind k) {
  static const char *const kNames[] = {"send", "recv", "allreduce"};
  return kNames[static_cast<int>(k)];
}

class Stream;
struct CommCtx;
struct Staging;

// Flags exchanged between the enqueuing thread and the agent (see Op::flags).
enum OpFlag : unsigned {
  kOpCompleted = 1u,     // the agent has finished the op (status final)
  kOpWaitEnqueued = 2u,  // a stream waits on it; whoever sets the second flag frees the request
};

struct Op {
  OpKind kind = OpKind::send;
  std::atomic<OpState> state{OpState::armed};
  std::atomic<unsigned> flags{0};
  std::atomic<int> refs{1};  // the agent's; +1 while a user-visible MPI_Request exists

  // What the provider sends or receives into (a bounce buffer for staged device memory).
  const void *sbuf = nullptr;  // send / allreduce send (MPI_IN_PLACE allowed)
  void *rbuf = nullptr;        // recv / allreduce result
  int count = 0;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  bool dt_owned = false;  // dt is our MPI_Type_dup of a derived type
  MPI_Op reduce_op = MPI_OP_NULL;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  std::shared_ptr<CommCtx> ctx;
  std::shared_ptr<Stream> stream;

  uint64_t threshold = 0;  // fire once the stream's trigger word reaches this
  SignalWord done;         // completion word
  uint64_t done_value = 0; // written to `done` at completion

  MPI_Request grequest = MPI_REQUEST_NULL;  // generalized request handed to the user, if any
  MPI_Status *user_status = nullptr;        // where to copy the status in stream order
  MPI_Status status{};                      // the result

  std::shared_ptr<Staging> staging;             // device buffers staged (core/staging.hpp)
  bool agent_copying = false;                   // agent thread: its staging copy out is in flight
  void *prov = nullptr;                         // provider-private state
  MPI_Request prov_req = MPI_REQUEST_NULL;      // provider mpi: the underlying request
  uint64_t seq = 0;                             // creation order, for reports
  uint64_t t_seen = 0, t_posted = 0;            // MPIX_PROFILE stamps (core/profile.hpp)
  uint64_t t_copy = 0;                          // MPIX_PROFILE: agent staging copy issued
  Op *reg_prev = nullptr, *reg_next = nullptr;  // live-op registry links (op_registry.cpp)
  Op *submit_next = nullptr;                    // the agent's incoming stack (agent.cpp)
};

// Live-op registry: every op from creation to retirement, for the finalize-time report.
void op_registry_add(Op *op);
void op_registry_remove(Op *op);
// Logs every op never retired; returns how many.
std::size_t op_registry_report();
std::size_t op_registry_size();

}  // namespace mpix
