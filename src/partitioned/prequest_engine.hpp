// The agent's share of partitioned communication, the partition front end's scheduler
// (PartitionScheduler): an AgentPoller that drives every request with a round in progress (or
// a stream wait, a header or a message of an abandoned round still to pass), making its
// messages as gated ops (prequest_engine.cpp). It holds a reference to each, so a request
// freed by the user stays alive until the agent, the provider and the streams are done with it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/agent.hpp"
#include "core/runtime.hpp"

namespace mpix {

class PRequest;

// A part of the Runtime (core/runtime.hpp), made on first use.
class PartitionedEngine final : public AgentPoller, public RuntimePart {
 public:
  ~PartitionedEngine() override;
  // Counts a new round of @p r and makes sure the agent drives it.
  void activate(const std::shared_ptr<PRequest> &r);
  // The user freed @p r: keep it until its rounds and its stream's last write are done.
  void release(const std::shared_ptr<PRequest> &r);

  bool poll() override;
  bool busy() const override { return count_.load(std::memory_order_relaxed) != 0; }

 private:
  void ensure_registered();

  std::mutex mu_;  // taken inside the agent's poller lock: never call the agent with it held
  std::vector<std::shared_ptr<PRequest>> list_;
  std::atomic<std::size_t> count_{0};
  std::once_flag registered_;
};

// The Runtime's engine (after runtime_init).
PartitionedEngine &partitioned_engine();

}  // namespace mpix
