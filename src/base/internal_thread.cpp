#include "base/internal_thread.hpp"

namespace mpix {

thread_local int t_internal_depth MPIX_TLS_FAST = 0;

}  // namespace mpix
