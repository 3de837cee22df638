// When a GPU-direct send to a peer is announced (providers/mpi/announce_policy.hpp): always
// while the peer's stream copies them; after the peer's agent copies one (WANT), the next 16
// sends go unannounced, then one is tried, and each further WANT doubles the pause up to 4096;
// a stream copy ends the pause. arms() (what the enqueuing threads read) follows.
#include "providers/mpi/announce_policy.hpp"

#include <cstdint>

#include "catch.hpp"

using mpix::AnnouncePolicy;

namespace {

// Takes sends until one is announced; returns how many went unannounced before it.
uint32_t unannounced_before_next(AnnouncePolicy &p) {
  uint32_t n = 0;
  while (!p.taken()) ++n;
  return n;
}

}  // namespace

TEST_CASE("announce policy: a peer whose stream copies keeps getting announced sends") {
  AnnouncePolicy p;
  for (int i = 0; i < 1000; ++i) {
    CHECK(p.arms());
    CHECK(p.taken());
    p.stream_copied();
  }
  CHECK(p.pause() == 0);
}

TEST_CASE("announce policy: each WANT doubles the pause, up to 4096") {
  AnnouncePolicy p;
  REQUIRE(p.taken());
  p.wanted();
  CHECK_FALSE(p.arms());
  CHECK(unannounced_before_next(p) == AnnouncePolicy::kFirstPause);
  CHECK(p.arms());  // armed again once the pause is over
  uint32_t expect = AnnouncePolicy::kFirstPause;
  for (int i = 0; i < 12; ++i) {
    p.wanted();
    expect = expect * 2 > AnnouncePolicy::kMaxPause ? AnnouncePolicy::kMaxPause : expect * 2;
    CHECK(p.pause() == expect);
    CHECK(unannounced_before_next(p) == expect);
  }
  CHECK(p.pause() == AnnouncePolicy::kMaxPause);
}

TEST_CASE("announce policy: a stream copy after a pause starts the doubling afresh") {
  AnnouncePolicy p;
  p.wanted();
  p.wanted();
  CHECK(p.pause() == 2 * AnnouncePolicy::kFirstPause);
  CHECK(unannounced_before_next(p) == 2 * AnnouncePolicy::kFirstPause);
  p.stream_copied();
  CHECK(p.pause() == 0);
  CHECK(p.taken());
  p.wanted();
  CHECK(unannounced_before_next(p) == AnnouncePolicy::kFirstPause);
}
