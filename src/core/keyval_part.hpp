// A communicator attribute key owned by the Runtime, for the layers above the engine that hang
// state on a user's communicator (queues' provider state on plain communicators, partitioned
// requests' private communicators).
#pragma once

#include <mpi.h>

#include <mutex>

#include "base/status.hpp"
#include "core/runtime.hpp"

namespace mpix {

// Made on first use, not copied by MPI_Comm_dup (a duplicate is another communicator, with
// state of its own), freed with the Runtime at MPI_Finalize; communicators still carrying the
// attribute keep the key alive until they are freed. Each user derives its own type, which
// names its part (Runtime::part<T>).
class KeyvalPart : public RuntimePart {
 public:
  ~KeyvalPart() override;
  // Held around get() and the attribute calls that use the key.
  std::mutex &mu() { return mu_; }
  // With mu() held: the key, made on first use with @p delete_fn as its delete callback.
  Status get(MPI_Comm_delete_attr_function *delete_fn, int *kv);

 private:
  std::mutex mu_;
  int kv_ = MPI_KEYVAL_INVALID;  // guarded by mu_
};

}  // namespace mpix
