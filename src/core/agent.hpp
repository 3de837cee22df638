// The agent: one progress thread per process, started on first use. It watches each stream's
// trigger word, fires the ops the streams have reached (in threshold order), drives the
// provider's progress, and completes ops: status, completion word, generalized request.
// With nothing armed or in flight it sleeps on the notifier (no CPU); with work outstanding it
// spins briefly, then yields, then sleeps in short, growing naps (core/waiter.hpp).
#pragma once

#include "core/status.hpp"

namespace mpix {

struct Op;

// Extra work the agent runs every loop (partitioned requests, timeouts, ...).
class AgentPoller {
 public:
  virtual ~AgentPoller() = default;
  // Agent thread: do what is ready; true if anything happened.
  virtual bool poll() = 0;
  // Agent thread: true while the poller waits for something (keeps the agent polling).
  virtual bool busy() const = 0;
};
// Adds / removes a poller (any thread; remove waits until the agent is not inside poll()).
Status agent_add_poller(AgentPoller *p);
void agent_remove_poller(AgentPoller *p);

// Starts the agent thread if it is not running; an error (MPI_ERR_OTHER: the thread could not
// be started) leaves nothing behind. The C API calls it before it makes an op.
Status agent_start();
// Hands @p op to the agent (starting it if needed). The op must be fully set up.
Status agent_submit(Op *op);
// Stops the agent thread (at MPI_Finalize). Ops still held are reported by the caller.
void agent_stop();
// Drops one reference to @p op; the last one retires it.
void op_unref(Op *op);

}  // namespace mpix
