// Makes the signal pool's host memory visible to a GPU: every chunk is registered with the
// runtime (mapped, portable) as it appears, and host word addresses are translated to the
// device addresses that stream memory operations and kernels use. Where the device reaches
// registered memory at the host address (CUDA's "host pointer for registered memory", true on
// current x86 and Grace systems) the translation is the identity and costs nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

#include "base/log.hpp"
#include "base/signal_pool.hpp"
#include "base/status.hpp"

namespace mpix {

template <class Api>
class SignalMap {
 public:
  // Registers existing and future chunks of the process's signal pool. Call once, with the
  // device that should own the registration current.
  void attach() {
    signal_pool().add_hook(
        [this](void *base, std::size_t bytes, bool added) { on_chunk(base, bytes, added); });
  }

  Status device_address(const uint64_t *word, uint64_t *dev) const {
    if (identity_.load(std::memory_order_acquire)) {
      *dev = reinterpret_cast<uint64_t>(word);
      return {};
    }
    auto w = reinterpret_cast<uintptr_t>(word);
    std::lock_guard<std::mutex> lk(mu_);
    auto it = chunks_.upper_bound(w);
    if (it != chunks_.begin()) {
      --it;
      const Chunk &c = it->second;
      if (w < it->first + c.bytes && c.mapped) {
        *dev = static_cast<uint64_t>(w - it->first) + c.dev_base;
        return {};
      }
    }
    return make_status(MPI_ERR_OTHER,
                       "signal word %p is not mapped for the %s device (registering its chunk "
                       "with the runtime failed; see the log)",
                       static_cast<const void *>(word), Api::kName);
  }

 private:
  struct Chunk {
    std::size_t bytes = 0;
    uint64_t dev_base = 0;
    bool mapped = false;
  };

  // Called by the pool with its lock held.
  void on_chunk(void *base, std::size_t bytes, bool added) {
    std::lock_guard<std::mutex> lk(mu_);
    auto key = reinterpret_cast<uintptr_t>(base);
    if (!added) {
      if (chunks_.erase(key)) Api::host_unregister(base);
      return;
    }
    Chunk c;
    c.bytes = bytes;
    Status st = Api::host_register(base, bytes);
    if (st.is_ok()) st = Api::host_device_pointer(base, &c.dev_base);
    c.mapped = st.is_ok();
    if (!c.mapped) {
      MPIX_LOG(error, Api::kSubsys, "registering signal memory %p (%zu bytes): %s", base, bytes,
               st.what().c_str());
    }
    if (!c.mapped || c.dev_base != key) identity_.store(false, std::memory_order_release);
    chunks_[key] = c;
  }

  mutable std::mutex mu_;
  std::map<uintptr_t, Chunk> chunks_;
  std::atomic<bool> identity_{true};
};

}  // namespace mpix
