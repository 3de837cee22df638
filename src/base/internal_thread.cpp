#include "base/internal_thread.hpp"

#include <pthread.h>

#include "base/profile.hpp"

namespace mpix {

thread_local int t_internal_depth MPIX_TLS_FAST = 0;

void name_this_thread(const char *name) {
  (void)pthread_setname_np(pthread_self(), name);
  profile_mark_mpix_thread();
}

}  // namespace mpix
