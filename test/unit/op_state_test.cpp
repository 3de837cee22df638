// The op state machine (core/op.hpp): names in life-cycle order, the transition table that
// op_advance checks, and op kinds.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <utility>

#include "catch.hpp"
#include "core/op.hpp"

using mpix::OpKind;
using mpix::OpState;

namespace {

// Runs @p call with stderr (where mpix logs) sent to a file; returns what was written.
template <class F>
std::string stderr_of(F call) {
  char path[] = "/tmp/mpix_op_state_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  call();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  char buf[512];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return text;
}

}  // namespace

TEST_CASE("every op state has its own name, in life-cycle order", "[op]") {
  const OpState order[] = {OpState::armed,  OpState::staging_out, OpState::triggered,
                           OpState::posted, OpState::staging_in,  OpState::complete,
                           OpState::retired};
  const char *names[] = {"ARMED",      "STAGING_OUT", "TRIGGERED", "POSTED",
                         "STAGING_IN", "COMPLETE",    "RETIRED"};
  for (int i = 0; i < mpix::kOpStates; ++i) {
    CHECK(std::string(mpix::op_state_name(order[i])) == names[i]);
    if (i > 0) CHECK(order[i - 1] < order[i]);
  }
}

TEST_CASE("op kinds have names", "[op]") {
  std::set<std::string> names;
  for (OpKind k : {OpKind::send, OpKind::recv, OpKind::allreduce})
    CHECK(names.insert(mpix::op_kind_name(k)).second);
  CHECK(names.count("send") == 1);
  CHECK(names.count("recv") == 1);
}

TEST_CASE("a new op starts ARMED with one reference and no flags", "[op]") {
  mpix::Op op;
  CHECK(op.state.load() == OpState::armed);
  CHECK(op.refs.load() == 1);
  CHECK(op.flags.load() == 0u);
  CHECK(op.grequest == MPI_REQUEST_NULL);
  CHECK(op.error.is_ok());
}

namespace {
// Every path through the life cycle that the engine takes.
const std::vector<std::vector<OpState>> kLegalPaths = {
    // Unstaged send or receive.
    {OpState::armed, OpState::triggered, OpState::posted, OpState::complete, OpState::retired},
    // Staged, with agent copies out and in.
    {OpState::armed, OpState::staging_out, OpState::triggered, OpState::posted, OpState::staging_in,
     OpState::complete, OpState::retired},
    // Failures: not posted (op_fail before the trigger), copy out failed, post failed.
    {OpState::armed, OpState::complete, OpState::retired},
    {OpState::armed, OpState::staging_out, OpState::complete, OpState::retired},
    {OpState::armed, OpState::triggered, OpState::complete, OpState::retired},
    // An op that never reached the agent.
    {OpState::armed, OpState::retired},
};
}  // namespace

TEST_CASE("op_advance takes every legal path of the life cycle", "[op]") {
  for (const auto &path : kLegalPaths) {
    mpix::Op op;
    for (std::size_t i = 1; i < path.size(); ++i) {
      INFO(mpix::op_state_name(path[i - 1]) << " -> " << mpix::op_state_name(path[i]));
      CHECK(mpix::op_transition_legal(path[i - 1], path[i]));
      CHECK(mpix::op_advance(op, path[i]));
      CHECK(op.state.load() == path[i]);
    }
  }
}

TEST_CASE("op_advance refuses illegal transitions and keeps the state", "[op]") {
  const std::pair<OpState, OpState> bad[] = {
      {OpState::armed, OpState::posted},       {OpState::armed, OpState::staging_in},
      {OpState::triggered, OpState::armed},    {OpState::posted, OpState::triggered},
      {OpState::complete, OpState::complete},  {OpState::complete, OpState::posted},
      {OpState::retired, OpState::armed},      {OpState::staging_in, OpState::posted},
      {OpState::triggered, OpState::retired},  {OpState::posted, OpState::retired},
      {OpState::staging_out, OpState::posted}, {OpState::armed, OpState::armed}};
  for (const auto &t : bad) {
    INFO(mpix::op_state_name(t.first) << " -> " << mpix::op_state_name(t.second));
    CHECK_FALSE(mpix::op_transition_legal(t.first, t.second));
    mpix::Op op;
    op.state.store(t.first);
    CHECK_FALSE(mpix::op_advance(op, t.second));
    CHECK(op.state.load() == t.first);
  }
}

TEST_CASE("an illegal transition is an internal error with a log line; a legal one logs none",
          "[op]") {
  mpix::Op op;
  op.kind = OpKind::recv;
  op.peer = 3;
  op.tag = 17;
  op.seq = 42;
  op.state.store(OpState::triggered);
  bool ok = true;
  const std::string bad = stderr_of([&] { ok = mpix::op_advance(op, OpState::armed); });
  INFO(bad);
  CHECK_FALSE(ok);
  CHECK(op.state.load() == OpState::triggered);
  CHECK(bad.find("internal error") != std::string::npos);
  CHECK(bad.find("op #42 (recv, peer 3, tag 17) may not go from TRIGGERED to ARMED") !=
        std::string::npos);
  // Exactly one line.
  CHECK(bad.find('\n') == bad.size() - 1);
  const std::string good = stderr_of([&] { ok = mpix::op_advance(op, OpState::posted); });
  CHECK(ok);
  CHECK(good.find("internal error") == std::string::npos);
}
