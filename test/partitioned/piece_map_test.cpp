// PieceMap: where a partitioned send's partitions land in a receive with another partition
// count, and which receive partitions each one completes.
#include "partitioned/piece_map.hpp"

#include "catch.hpp"

using mpix::PieceMap;

TEST_CASE("equal partition counts map one to one", "[partitioned]") {
  PieceMap m;
  REQUIRE(PieceMap::build(4, 40, 4, 40, 4, &m).is_ok());
  REQUIRE(m.pieces.size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK(m.pieces[i].elem_offset == i * 10);
    CHECK(m.pieces[i].count == 10);
    CHECK(m.pieces[i].first_part == i);
    CHECK(m.pieces[i].last_part == i);
    CHECK(m.pieces_of[i] == 1);
  }
}

TEST_CASE("one send partition fills eight receive partitions", "[partitioned]") {
  PieceMap m;
  REQUIRE(PieceMap::build(1, 64, 8, 8, 8, &m).is_ok());
  REQUIRE(m.pieces.size() == 1);
  CHECK(m.pieces[0].count == 8);
  CHECK(m.pieces[0].first_part == 0);
  CHECK(m.pieces[0].last_part == 7);
  for (int j = 0; j < 8; ++j) CHECK(m.pieces_of[j] == 1);
}

TEST_CASE("eight send partitions fill one receive partition", "[partitioned]") {
  PieceMap m;
  REQUIRE(PieceMap::build(8, 8, 1, 64, 4, &m).is_ok());
  REQUIRE(m.pieces.size() == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(m.pieces[i].elem_offset == 2 * i);
    CHECK(m.pieces[i].count == 2);
    CHECK(m.pieces[i].first_part == 0);
    CHECK(m.pieces[i].last_part == 0);
  }
  CHECK(m.pieces_of[0] == 8);
}

TEST_CASE("unaligned partition counts overlap", "[partitioned]") {
  // 6 x 8 bytes into 4 x 12 bytes: piece 1 (bytes 8..16) straddles receive partitions 0 and 1.
  PieceMap m;
  REQUIRE(PieceMap::build(6, 8, 4, 12, 4, &m).is_ok());
  CHECK(m.pieces[1].first_part == 0);
  CHECK(m.pieces[1].last_part == 1);
  CHECK(m.pieces[2].first_part == 1);
  CHECK(m.pieces[2].last_part == 1);
  CHECK(m.pieces_of[0] == 2);
  CHECK(m.pieces_of[1] == 2);
  CHECK(m.pieces_of[2] == 2);
  CHECK(m.pieces_of[3] == 2);
}

TEST_CASE("size mismatches and split elements are errors", "[partitioned]") {
  PieceMap m;
  CHECK(PieceMap::build(2, 8, 1, 8, 4, &m).code() == MPI_ERR_TRUNCATE);
  CHECK(PieceMap::build(1, 8, 2, 8, 4, &m).code() == MPI_ERR_COUNT);
  // 3 x 4 bytes into 12 bytes of 8-byte elements: piece 1 starts inside element 0.
  CHECK(PieceMap::build(3, 4, 1, 12, 8, &m).code() == MPI_ERR_TYPE);
}

TEST_CASE("empty partitions arrive without pieces", "[partitioned]") {
  PieceMap m;
  REQUIRE(PieceMap::build(2, 0, 3, 0, 4, &m).is_ok());
  CHECK(m.pieces.size() == 2);
  CHECK(m.pieces[0].last_part < m.pieces[0].first_part);
  for (int j = 0; j < 3; ++j) CHECK(m.pieces_of[j] == 0);
}
