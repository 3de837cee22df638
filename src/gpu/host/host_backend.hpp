#pragma once

#include "mpix/mpix_host_stream.h"

namespace mpix {
class Backend;
Backend *host_backend();
// Whether @p s is a live host stream (a set lookup: never dereferences @p s).
bool host_stream_is_live(mpix_host_stream_t s);
}  // namespace mpix
