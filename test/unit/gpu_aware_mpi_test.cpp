// Whether device buffers go to MPI unstaged (gpu/gpu_aware_mpi.hpp): every combination of the
// setting, the MPI library's answer and the backend. No GPU and no CUDA-aware MPI needed.
#include "gpu/gpu_aware_mpi.hpp"

#include "catch.hpp"

using namespace mpix;

TEST_CASE("MPIX_CUDA_AWARE values parse; others are refused", "[unit][aware]") {
  AwareSetting s = AwareSetting::off;
  REQUIRE(parse_aware_setting("auto", &s));
  CHECK(s == AwareSetting::automatic);
  for (const char *v : {"on", "1", "true", "yes"}) {
    INFO(v);
    REQUIRE(parse_aware_setting(v, &s));
    CHECK(s == AwareSetting::on);
  }
  for (const char *v : {"off", "0", "false", "no"}) {
    INFO(v);
    REQUIRE(parse_aware_setting(v, &s));
    CHECK(s == AwareSetting::off);
  }
  s = AwareSetting::on;
  CHECK_FALSE(parse_aware_setting("maybe", &s));
  CHECK_FALSE(parse_aware_setting("", &s));
  CHECK_FALSE(parse_aware_setting(nullptr, &s));
  CHECK(s == AwareSetting::on);  // untouched on failure
}

TEST_CASE("CUDA streams: auto follows the MPI library, on and off force the choice",
          "[unit][aware]") {
  const StreamKind k = StreamKind::cuda;
  CHECK(aware_choose(AwareSetting::automatic, AwareQuery::yes, k).direct);
  CHECK_FALSE(aware_choose(AwareSetting::automatic, AwareQuery::no, k).direct);
  CHECK_FALSE(aware_choose(AwareSetting::automatic, AwareQuery::unknown, k).direct);
  for (AwareQuery q : {AwareQuery::yes, AwareQuery::no, AwareQuery::unknown}) {
    CHECK(aware_choose(AwareSetting::on, q, k).direct);
    CHECK_FALSE(aware_choose(AwareSetting::off, q, k).direct);
  }
  // The reason names the cause, so mpix_info can say why.
  CHECK(aware_choose(AwareSetting::off, AwareQuery::yes, k).why.find("MPIX_CUDA_AWARE=off") !=
        std::string::npos);
  CHECK(aware_choose(AwareSetting::automatic, AwareQuery::no, k).why.find("no CUDA support") !=
        std::string::npos);
  CHECK(aware_choose(AwareSetting::on, AwareQuery::no, k).why.find("not CUDA-aware") !=
        std::string::npos);
}

TEST_CASE("host and HIP streams are never handed to MPI unstaged by this rule", "[unit][aware]") {
  for (AwareSetting s : {AwareSetting::automatic, AwareSetting::on, AwareSetting::off})
    for (AwareQuery q : {AwareQuery::yes, AwareQuery::no, AwareQuery::unknown}) {
      CHECK_FALSE(aware_choose(s, q, StreamKind::hip).direct);
      CHECK_FALSE(aware_choose(s, q, StreamKind::host).direct);
      CHECK_FALSE(aware_choose(s, q, StreamKind::general).direct);
    }
}
