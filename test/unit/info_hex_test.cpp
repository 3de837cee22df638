// Hex encoding of binary info values (MPIX_Info_set_hex and the stream handle it carries).
#include "api/info_hex.hpp"

#include <cstdint>
#include <string>

#include "catch.hpp"

TEST_CASE("hex_encode writes bytes in memory order, two lower-case digits each", "[hex]") {
  const unsigned char bytes[] = {0x00, 0xff, 0x10, 0xab, 0x7e};
  CHECK(mpix::hex_encode(bytes, 5) == "00ff10ab7e");
  CHECK(mpix::hex_encode(bytes, 1) == "00");
}

TEST_CASE("hex_decode inverts hex_encode for handles", "[hex]") {
  int x = 0;
  void *handle = &x, *back = nullptr;
  std::string text = mpix::hex_encode(&handle, sizeof handle);
  CHECK(text.size() == 2 * sizeof handle);
  REQUIRE(mpix::hex_decode(text, &back, sizeof back));
  CHECK(back == handle);
  uint64_t v = 0x0123456789abcdefULL, w = 0;
  REQUIRE(mpix::hex_decode(mpix::hex_encode(&v, 8), &w, 8));
  CHECK(w == v);
}

TEST_CASE("hex_decode accepts upper case and refuses bad text", "[hex]") {
  unsigned char b[2] = {0, 0};
  REQUIRE(mpix::hex_decode("AbCd", b, 2));
  CHECK(b[0] == 0xab);
  CHECK(b[1] == 0xcd);
  unsigned char c[2] = {1, 2};
  CHECK_FALSE(mpix::hex_decode("abc", c, 2));     // too short
  CHECK_FALSE(mpix::hex_decode("abcdef", c, 2));  // too long
  CHECK_FALSE(mpix::hex_decode("zz00", c, 2));    // not hex
  CHECK_FALSE(mpix::hex_decode("0 00", c, 2));
  CHECK_FALSE(mpix::hex_decode("", c, 2));
}
