// Whether a GPU-direct send to one peer is announced (MPIX_GPU_DIRECT_ANNOUNCE=auto; ipc_path.hpp,
// "Announced sends").
//
// Only sends of more than kMinBytes: below, where the receiving stream copies with its fused
// kernel, announcing cost 0.3-1.1 us one way on one H200 (session 33); above, it took 1.5-4 us
// off one message of 128 KiB-4 MiB and ~13 us off 64 MiB.
//
// An announced send gains where its receiver's stream copies it (the copy waits for the
// sender's ready word on the GPU: no agent and no MPI message between the sender's stream
// reaching the send and the copy), and costs where the receiver's agent copies it (that copy
// waits for a WANT and a READY message through both agents): a window of receives under one
// wait, where only the stream's next wait is copied by the stream, lost up to 30% of its
// bandwidth on one H200 (docs/results-gpu.md, session 22). So the sender announces to a peer
// until that peer asks for READY (WANT: its agent copied), then sends the next 16 unannounced,
// tries one announced send again, and doubles the pause each time the peer asks again, up to
// 4096; an announced send the peer's stream copied (its answer came without a WANT) ends the
// pause. A ping-pong or a halo of one message per wait keeps announcing; a windowed stream of
// messages pays one READY round trip per 16, 32, ... 4096 sends.
//
// The agent thread decides (taken, wanted, stream_copied); the enqueuing threads read
// arms() to decide whether a send gets a ready word at all (a hint: a send armed while the
// agent turns the pair quiet goes unannounced at take(), its word unused).
#pragma once

#include <atomic>
#include <cstdint>

namespace mpix {

class AnnouncePolicy {
 public:
  // auto announces sends of more than this many bytes only (mpi_provider.cpp, MpiProvider::arm).
  static constexpr uint64_t kMinBytes = 64 * 1024;
  static constexpr uint32_t kFirstPause = 16;
  static constexpr uint32_t kMaxPause = 4096;

  // Any thread: whether a send enqueued now should get a ready word (and may be announced).
  bool arms() const { return arm_.load(std::memory_order_relaxed); }

  // Agent thread: a GPU-direct send to the peer is taken; true where it is announced (the
  // provider's other conditions permitting). Counts the pause down.
  bool taken() {
    if (countdown_ == 0) return true;
    if (--countdown_ == 0) arm_.store(true, std::memory_order_relaxed);
    return false;
  }
  // Agent thread: the peer's agent copied an announced send (it sent WANT).
  void wanted() {
    pause_ = pause_ == 0 ? kFirstPause : (pause_ >= kMaxPause / 2 ? kMaxPause : pause_ * 2);
    countdown_ = pause_;
    arm_.store(false, std::memory_order_relaxed);
  }
  // Agent thread: the peer's stream copied an announced send (its answer came without WANT).
  void stream_copied() { pause_ = 0; }

  uint32_t pause() const { return pause_; }

 private:
  std::atomic<bool> arm_{true};
  uint32_t pause_ = 0;      // the sends left unannounced after the last WANT
  uint32_t countdown_ = 0;  // of them, still to come
};

}  // namespace mpix
