// The op state machine's name table (used by logs and the finalize-time report) and op kinds.
#include <set>
#include <string>

#include "catch.hpp"
#include "core/op.hpp"

using mpix::OpKind;
using mpix::OpState;

TEST_CASE("every op state has its own name, in life-cycle order", "[op]") {
  CHECK(std::string(mpix::op_state_name(OpState::armed)) == "ARMED");
  CHECK(std::string(mpix::op_state_name(OpState::triggered)) == "TRIGGERED");
  CHECK(std::string(mpix::op_state_name(OpState::posted)) == "POSTED");
  CHECK(std::string(mpix::op_state_name(OpState::complete)) == "COMPLETE");
  CHECK(std::string(mpix::op_state_name(OpState::retired)) == "RETIRED");
  CHECK(OpState::armed < OpState::triggered);
  CHECK(OpState::triggered < OpState::posted);
  CHECK(OpState::posted < OpState::complete);
  CHECK(OpState::complete < OpState::retired);
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
}
