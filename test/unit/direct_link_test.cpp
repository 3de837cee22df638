// Direct partitioned rounds without a device (issue 12, "in CI"): which side qualifies and when
// a receiver declines an offer (partitioned/direct_link.hpp).
#include "partitioned/direct_link.hpp"

#include <string>

#include "catch.hpp"

using namespace mpix;

namespace {

DirectSide qualifying() {
  DirectSide s;
  s.setting_on = s.has_peer = s.pair_direct = s.cuda = s.device_memory = true;
  s.bytes = 4096;
  return s;
}

bool mentions(const char *why, const char *what) {
  return why && std::string(why).find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("direct rounds: a side qualifies only with everything in place", "[direct]") {
  CHECK(direct_side_refusal(qualifying()) == nullptr);
  DirectSide s = qualifying();
  s.setting_on = false;
  CHECK(mentions(direct_side_refusal(s), "MPIX_PARTITIONED_DIRECT=off"));
  s = qualifying();
  s.has_peer = false;
  CHECK(mentions(direct_side_refusal(s), "MPI_PROC_NULL"));
  s = qualifying();
  s.pair_direct = false;
  CHECK(mentions(direct_side_refusal(s), "GPU-direct pair"));
  s = qualifying();
  s.cuda = false;
  CHECK(mentions(direct_side_refusal(s), "cudaMalloc"));
  s = qualifying();
  s.device_memory = false;  // managed or host memory
  CHECK(mentions(direct_side_refusal(s), "cudaMalloc"));
  s = qualifying();
  s.bytes = 0;
  CHECK(mentions(direct_side_refusal(s), "no bytes"));
}

TEST_CASE("direct rounds: the receiver declines where its side does not qualify or sizes differ",
          "[direct]") {
  CHECK(direct_answer_refusal(nullptr, 4096, 4096) == nullptr);
  CHECK(mentions(direct_answer_refusal(nullptr, 4096, 8192), "differ in size"));
  CHECK(mentions(direct_answer_refusal(nullptr, 8192, 4096), "differ in size"));
  CHECK(mentions(direct_answer_refusal("its own reason", 4096, 4096), "its own reason"));
}
