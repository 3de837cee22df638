// Where an enqueued op's time goes, as the agent sees it (MPIX_PROFILE=1). The agent stamps
// each op when it sees the stream's trigger, when the provider has posted it, when the provider
// reports it complete and when the completion word is written; per stream it also times the
// turnaround from a completion word written to the stream's next trigger seen (in a ping-pong:
// the stream's wait released, the kernel, the trigger write and its detection). Medians and
// 90th percentiles go to stderr at MPI_Finalize, and with MPIX_PROFILE_RAW every sample, in the
// order taken, to a file per stage. Off by default; when off it costs one branch.
#pragma once

#include <cstdint>

namespace mpix {

enum class ProfileStage { post, network, complete, turnaround, copy_out, copy_in, count_ };

bool profile_enabled();
uint64_t profile_now_ns();
// Agent thread only.
void profile_record(ProfileStage s, uint64_t ns);
// Prints the stage statistics (once the agent has stopped).
void profile_report();

}  // namespace mpix
