// Mode nccl of mpix_latency / mpix_bw (-d cuda, D D): ncclSend / ncclRecv on the stream, with
// the same kernel-before-send pattern. Registered only when NCCL was found at build time.
#pragma once

#include <map>
#include <string>

#include "../bench_common.hpp"

namespace bench {
void register_nccl_latency(std::map<std::string, LatencyFn> &modes);
void register_nccl_bw(std::map<std::string, BwFn> &modes);
}  // namespace bench
