// Messages name a source place the same way everywhere (base/status.hpp, source_file).
#include "base/status.hpp"

#include <string>

#include "catch.hpp"

using mpix::source_file;

TEST_CASE("source places are named from the project root", "[status]") {
  CHECK(std::string(source_file("/work/main/src/core/op.cpp")) == "src/core/op.cpp");
  CHECK(std::string(source_file("/home/u/mpix/providers/ofi/ofi_op.cpp")) ==
        "providers/ofi/ofi_op.cpp");
  // A checkout inside a folder named src: the project's own src is the last one.
  CHECK(std::string(source_file("/src/build/mpix/src/base/status.cpp")) == "src/base/status.cpp");
  CHECK(std::string(source_file("op.cpp")) == "op.cpp");
}
