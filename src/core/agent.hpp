// The agent: one progress thread per process, started on first use. It watches each stream's
// trigger word, fires the ops the streams have reached (in threshold order), drives the
// provider's progress, and completes ops: status, completion word, generalized request.
// With nothing armed or in flight it sleeps on the notifier (no CPU); with work outstanding it
// spins briefly, then yields, then sleeps in short, growing naps (base/waiter.hpp).
#pragma once

#include <atomic>

#include "base/status.hpp"

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

// Starts the agent if it is not running (what agent_submit needs; the enqueue path and the C
// API call it before any op exists). An error (MPI_ERR_OTHER: the thread could not be started)
// leaves nothing behind. Inline: a load on the enqueue path once it runs.
extern std::atomic<bool> g_agent_running;
Status agent_start_slow();
inline Status agent_start() {
  if (g_agent_running.load(std::memory_order_acquire)) return {};
  return agent_start_slow();
}
// Hands @p op to the agent, which must be running (agent_start). The op must be fully set up.
void agent_submit(Op *op);
// op_fail: the agent completes the submitted @p op with op->error unless it already fired
// it; takes over one reference.
void agent_abort(Op *op);
// Whether the calling thread is the agent's (which must never wait for a stream: the stream may
// wait for the agent).
bool agent_on_thread();

}  // namespace mpix
