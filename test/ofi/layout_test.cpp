// Derived datatypes under every provider (issue 15 items 1 and 3): data moves in typemap order,
// not memory order, whatever the typemap's addresses; a type is sent in place only where its
// typemap runs through memory in increasing address order without gaps; a message shorter than
// a derived-type receive fills the typemap's first entries, a partial last element included.
#include <cstddef>
#include <vector>

#include "mpi/test_util.hpp"

using namespace mpix_test;

namespace {

bool paired() {
  const int rank = world_rank(), size = world_size();
  return rank < size - size % 2;
}

// RAII for a committed derived datatype.
struct Type {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  Type() = default;
  Type(const Type &) = delete;
  Type &operator=(const Type &) = delete;
  ~Type() {
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }
  void commit() { REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS); }
};

// Indexed {1,1,1} at {2,0,1} ints: covers its three ints without a gap, out of address order.
void rotated(Type &ty) {
  const int lens[3] = {1, 1, 1}, disps[3] = {2, 0, 1};
  REQUIRE(MPI_Type_indexed(3, lens, disps, MPI_INT, &ty.t) == MPI_SUCCESS);
  ty.commit();
}

}  // namespace

TEST_CASE("a receive through a typemap out of address order fills it in typemap order",
          "[datatype][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  Type ty;
  rotated(ty);
  if (rank % 2 == 0) {
    int in[3] = {-1, -1, -1};
    REQUIRE(MPIX_Recv_enqueue(in, 1, ty.t, peer, 1, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    // Message [11 21 31] into typemap offsets 2, 0, 1.
    CHECK(in[0] == 21);
    CHECK(in[1] == 31);
    CHECK(in[2] == 11);
  } else {
    int out[3] = {11, 21, 31};
    REQUIRE(MPIX_Send_enqueue(out, 3, MPI_INT, peer, 1, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("a send through a typemap out of address order delivers typemap order",
          "[datatype][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  Type ty;
  rotated(ty);
  if (rank % 2 == 0) {
    // Two elements: the second starts one extent (3 ints) on.
    int out[6] = {10, 20, 30, 40, 50, 60};
    REQUIRE(MPIX_Send_enqueue(out, 2, ty.t, peer, 2, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    int in[6] = {-1, -1, -1, -1, -1, -1};
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(in, 6, MPI_INT, peer, 2, s.comm, &st) == MPI_SUCCESS);
    s.sync();
    const int want[6] = {30, 10, 20, 60, 40, 50};
    for (int i = 0; i < 6; ++i) CHECK(in[i] == want[i]);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 6);
  }
}

TEST_CASE("a struct receive into MPI_BOTTOM whose second address is lower", "[datatype][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  if (rank % 2 == 0) {
    int pair[2] = {-1, -1};
    // Field 0 is pair[1], field 1 is pair[0]: adjacent, no gap, descending addresses.
    MPI_Aint addr[2];
    MPI_Get_address(&pair[1], &addr[0]);
    MPI_Get_address(&pair[0], &addr[1]);
    const int lens[2] = {1, 1};
    const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    Type ty;
    REQUIRE(MPI_Type_create_struct(2, lens, addr, types, &ty.t) == MPI_SUCCESS);
    ty.commit();
    REQUIRE(MPIX_Recv_enqueue(MPI_BOTTOM, 1, ty.t, peer, 3, s.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    s.sync();
    CHECK(pair[1] == 7);
    CHECK(pair[0] == 8);
  } else {
    int out[2] = {7, 8};
    REQUIRE(MPIX_Send_enqueue(out, 2, MPI_INT, peer, 3, s.comm) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("in-order and gap-free derived types still arrive intact (sent in place)", "[datatype]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  // Indexed {2,3} at {0,2}: in order, touching; a struct of an int then a float, no padding.
  const int lens[2] = {2, 3}, disps[2] = {0, 2};
  Type ty;
  REQUIRE(MPI_Type_indexed(2, lens, disps, MPI_INT, &ty.t) == MPI_SUCCESS);
  ty.commit();
  if (rank % 2 == 0) {
    std::vector<int> out(10);
    for (int i = 0; i < 10; ++i) out[i] = 100 + i;
    REQUIRE(MPIX_Send_enqueue(out.data(), 2, ty.t, peer, 4, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> in(10, -1);
    REQUIRE(MPIX_Recv_enqueue(in.data(), 2, ty.t, peer, 4, s.comm, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    s.sync();
    for (int i = 0; i < 10; ++i) CHECK(in[i] == 100 + i);
  }
}

TEST_CASE("a short message into a derived-type receive writes its partial last element",
          "[datatype][short]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  Type vec;  // ints 0 1 _ _ 4 5 per element, extent 6 ints
  REQUIRE(MPI_Type_vector(2, 2, 4, MPI_INT, &vec.t) == MPI_SUCCESS);
  vec.commit();
  if (rank % 2 == 0) {
    const int out[5] = {1, 2, 3, 4, 5};
    REQUIRE(MPIX_Send_enqueue(out, 5, MPI_INT, peer, 5, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> in(18, -1);
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(in.data(), 3, vec.t, peer, 5, s.comm, &st) == MPI_SUCCESS);
    s.sync();
    // Element 0: ints 0 1 4 5; element 1 starts at 6: its first typemap entry is int 6.
    const int want[18] = {1, 2, -1, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    for (int i = 0; i < 18; ++i) CHECK(in[i] == want[i]);
    int ints = -1;
    MPI_Get_elements(&st, MPI_INT, &ints);
    CHECK(ints == 5);
    CHECK(st.MPI_ERROR == MPI_SUCCESS);
  }
}

TEST_CASE("a short message through an out-of-order type: the partial element in typemap order",
          "[datatype][short][order]") {
  HostStreamComm s;
  if (!paired()) return;
  const int rank = world_rank(), peer = rank ^ 1;
  Type ty;
  rotated(ty);
  if (rank % 2 == 0) {
    const int out[5] = {1, 2, 3, 4, 5};
    REQUIRE(MPIX_Send_enqueue(out, 5, MPI_INT, peer, 6, s.comm) == MPI_SUCCESS);
    s.sync();
  } else {
    std::vector<int> in(6, -1);
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(in.data(), 2, ty.t, peer, 6, s.comm, &st) == MPI_SUCCESS);
    s.sync();
    // Element 1 (ints 3..5) gets its typemap's first two entries: offsets 2, then 0.
    const int want[6] = {2, 3, 1, 5, -1, 4};
    for (int i = 0; i < 6; ++i) CHECK(in[i] == want[i]);
    int ints = -1;
    MPI_Get_elements(&st, MPI_INT, &ints);
    CHECK(ints == 5);
  }
}
