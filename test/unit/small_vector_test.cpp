// base/small_vector.hpp: the inline array of a Waitall's ops and waits, and what happens past it.
#include "base/small_vector.hpp"

#include <cstdint>

#include "catch.hpp"

using mpix::SmallVector;

namespace {

struct Pair {
  uint64_t *word = nullptr;
  uint64_t value = 7;  // value-initialised elements get their members' initialisers
};

}  // namespace

TEST_CASE("a small vector keeps up to N elements inside itself", "[small_vector]") {
  SmallVector<int, 4> v;
  CHECK(v.empty());
  const int *inside = v.data();
  for (int i = 0; i < 4; ++i) v.push_back(10 + i);
  CHECK(v.size() == 4);
  CHECK(v.data() == inside);  // no allocation yet
  CHECK(v.front() == 10);
  CHECK(v.back() == 13);
  v.clear();
  CHECK(v.empty());
  CHECK(v.data() == inside);
}

TEST_CASE("past N a small vector moves to the heap and keeps its elements", "[small_vector]") {
  SmallVector<int, 2> v;
  const int *inside = v.data();
  for (int i = 0; i < 100; ++i) v.push_back(i);
  CHECK(v.data() != inside);
  REQUIRE(v.size() == 100);
  int sum = 0;
  for (int x : v) sum += x;
  CHECK(sum == 99 * 100 / 2);
  for (int i = 0; i < 100; ++i) CHECK(v[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("resize value-initialises new elements, reserve keeps the old ones", "[small_vector]") {
  SmallVector<Pair, 2> v(3);  // past N at once
  REQUIRE(v.size() == 3);
  for (const Pair &p : v) {
    CHECK(p.word == nullptr);
    CHECK(p.value == 7);
  }
  v[0].value = 1;
  v.reserve(64);
  CHECK(v.size() == 3);
  CHECK(v[0].value == 1);
  v.resize(1);
  CHECK(v.size() == 1);
  v.resize(5);
  CHECK(v[0].value == 1);
  CHECK(v[4].value == 7);
  SmallVector<const void *, 16> ops(5);
  for (const void *p : ops) CHECK(p == nullptr);
}
