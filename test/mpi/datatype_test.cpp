// Derived datatypes through enqueued ops: strided vectors and structs on either side, and a
// datatype freed right after the enqueue call, before the stream reaches the op (MPI allows it;
// mpix must keep the type alive until the op is done).
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// 10 blocks of 2 ints, 5 ints apart: elements {0,1, 5,6, 10,11, ...}.
MPI_Datatype make_vector() {
  MPI_Datatype t;
  REQUIRE(MPI_Type_vector(10, 2, 5, MPI_INT, &t) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
  return t;
}

int vector_index(int k) { return (k / 2) * 5 + k % 2; }  // k-th int the vector type covers

struct Particle {
  int id;
  double pos[3];
  char tag[3];
};

MPI_Datatype make_particle() {
  int lens[3] = {1, 3, 3};
  MPI_Aint disp[3] = {offsetof(Particle, id), offsetof(Particle, pos), offsetof(Particle, tag)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype t, resized;
  REQUIRE(MPI_Type_create_struct(3, lens, disp, types, &t) == MPI_SUCCESS);
  REQUIRE(MPI_Type_create_resized(t, 0, sizeof(Particle), &resized) == MPI_SUCCESS);
  REQUIRE(MPI_Type_free(&t) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&resized) == MPI_SUCCESS);
  return resized;
}

}  // namespace

TEST_CASE("vector datatype: strided send, contiguous receive, and the reverse", "[datatype]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  MPI_Datatype vec = make_vector();
  if (rank % 2 == 0) {
    std::vector<int> strided(50);
    for (int i = 0; i < 50; ++i) strided[i] = 1000 + i;
    REQUIRE(MPIX_Send_enqueue(strided.data(), 1, vec, peer, 1, s.comm) == MPI_SUCCESS);
    std::vector<int> in(50, -1);
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(in.data(), 1, vec, peer, 2, s.comm, &st) == MPI_SUCCESS);
    s.sync();
    int count = -1;
    REQUIRE(MPI_Get_count(&st, vec, &count) == MPI_SUCCESS);
    CHECK(count == 1);
    std::vector<int> expect(50, -1);
    for (int k = 0; k < 20; ++k) expect[vector_index(k)] = 2000 + k;
    CHECK(in == expect);  // the gaps of the vector stay untouched
  } else {
    std::vector<int> in(20, -1);
    MPI_Status st;
    REQUIRE(MPIX_Recv_enqueue(in.data(), 20, MPI_INT, peer, 1, s.comm, &st) == MPI_SUCCESS);
    std::vector<int> out(20);
    for (int k = 0; k < 20; ++k) out[k] = 2000 + k;
    REQUIRE(MPIX_Send_enqueue(out.data(), 20, MPI_INT, peer, 2, s.comm) == MPI_SUCCESS);
    s.sync();
    int count = -1;
    REQUIRE(MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS);
    CHECK(count == 20);
    for (int k = 0; k < 20; ++k) CHECK(in[k] == 1000 + vector_index(k));
  }
  MPI_Type_free(&vec);
}

TEST_CASE("struct datatype round trip", "[datatype]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  MPI_Datatype pt = make_particle();
  const int n = 4;
  std::vector<Particle> out(n), in(n);
  for (int i = 0; i < n; ++i) {
    out[i].id = rank * 100 + i;
    for (int d = 0; d < 3; ++d) out[i].pos[d] = rank + i * 0.25 + d;
    out[i].tag[0] = 'a' + static_cast<char>(i);
    out[i].tag[1] = 'x';
    out[i].tag[2] = '\0';
    in[i] = Particle{-1, {0, 0, 0}, {0, 0, 0}};
  }
  MPI_Request r[2];
  MPI_Status st[2];
  REQUIRE(MPIX_Irecv_enqueue(in.data(), n, pt, peer, 4, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(out.data(), n, pt, peer, 4, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
  s.sync();
  int count = -1;
  REQUIRE(MPI_Get_count(&st[0], pt, &count) == MPI_SUCCESS);
  CHECK(count == n);
  for (int i = 0; i < n; ++i) {
    CHECK(in[i].id == peer * 100 + i);
    CHECK(in[i].pos[2] == peer + i * 0.25 + 2);
    CHECK(in[i].tag[0] == 'a' + i);
    CHECK(in[i].tag[1] == 'x');
  }
  MPI_Type_free(&pt);
}

TEST_CASE("a datatype freed right after the enqueue call still describes the op", "[datatype]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  // The gate holds the stream, so each op is still ARMED when its datatype is freed.
  Gate gate;
  gate.launch(s.hs);
  std::vector<int> strided(50), in(50, -1);
  for (int i = 0; i < 50; ++i) strided[i] = rank * 1000 + i;
  MPI_Datatype vec = make_vector();
  MPI_Request r;
  REQUIRE(MPIX_Isend_enqueue(strided.data(), 1, vec, peer, 6, s.comm, &r) == MPI_SUCCESS);
  REQUIRE(MPI_Type_free(&vec) == MPI_SUCCESS);
  CHECK(vec == MPI_DATATYPE_NULL);
  MPI_Datatype vec2 = make_vector();
  REQUIRE(MPIX_Recv_enqueue(in.data(), 1, vec2, peer, 6, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Type_free(&vec2) == MPI_SUCCESS);
  // Also a struct type freed after a blocking enqueued send and receive.
  MPI_Datatype pt = make_particle();
  Particle pout{rank, {1.0, 2.0, 3.0}, {'p', 'q', 0}}, pin{-1, {0, 0, 0}, {0, 0, 0}};
  REQUIRE(MPIX_Send_enqueue(&pout, 1, pt, peer, 7, s.comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Recv_enqueue(&pin, 1, pt, peer, 7, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Type_free(&pt) == MPI_SUCCESS);
  // Put the types through their paces before the ops run: new types may reuse the handles.
  MPI_Datatype noise = make_vector();
  gate.release();
  REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  s.sync();
  CHECK_FALSE(gate.timed_out());
  for (int k = 0; k < 20; ++k) CHECK(in[vector_index(k)] == peer * 1000 + vector_index(k));
  CHECK(in[2] == -1);
  CHECK(pin.id == peer);
  CHECK(pin.pos[1] == 2.0);
  CHECK(pin.tag[1] == 'q');
  MPI_Type_free(&noise);
}
