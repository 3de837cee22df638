#pragma once

namespace mpix {
class Backend;
Backend *host_backend();
}  // namespace mpix
