// Ready words of early-announced GPU-direct sends (ipc_path.hpp, "Announced sends").
//
// A GPU-direct send whose header goes to the receiver before its stream reaches the send tells
// the receiver where its data will be and which device word says that it is there: the sending
// stream writes the word, in stream order, right before the send's trigger; the receiver's copy
// waits for it on the GPU. The words live in exported device slabs (gpu/ipc_slabs.hpp) that a
// receiver maps once. A word goes back to the pool when its send completes (the receiver has
// copied, so no longer reads it) and serves again with a larger value: values only grow. The
// same word serves as the send's done word (ipc_path.hpp, "Completion on the GPU"): the
// receiver's copy kernel writes value + 1 once it has read the message; the next use of the
// word starts at value + 2.
#pragma once

#include <cstdint>

#include "base/status.hpp"

namespace mpix {

class Backend;

struct ReadyWord {
  uint64_t *word = nullptr;  // device address in this process
  uint64_t value = 0;        // what the stream writes; the receiver waits until word >= value
                             // (value + 1: what the receiver's copy writes, done)
  uint64_t slab_base = 0, slab_id = 0, slab_bytes = 0;
  Backend *be = nullptr;
  int device = -1;
};

// Any thread: a word of @p device and the next value to write to it.
Status ready_word_take(Backend *be, int device, ReadyWord *out);
// Any thread: @p w serves again (its value as the last one written or never written).
void ready_word_give(const ReadyWord &w);
// A send that will never be written (it failed before its stream reached it): writes the
// value from the host, so that a receiver that already waits goes on. Blocks for the copy.
Status ready_word_force(const ReadyWord &w);

}  // namespace mpix
