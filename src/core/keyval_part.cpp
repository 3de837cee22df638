#include "core/keyval_part.hpp"

namespace mpix {

KeyvalPart::~KeyvalPart() {
  if (kv_ != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&kv_);
}

Status KeyvalPart::get(MPI_Comm_delete_attr_function *delete_fn, int *kv) {
  if (kv_ == MPI_KEYVAL_INVALID) {
    int made = MPI_KEYVAL_INVALID;
    MPIX_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &made, nullptr));
    kv_ = made;
  }
  *kv = kv_;
  return {};
}

}  // namespace mpix
