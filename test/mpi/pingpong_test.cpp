#include <mpi.h>

#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

TEST_CASE("ping-pong on a host stream", "[p2p]") {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mpix_host_stream_t hs;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  REQUIRE(MPIX_Info_set_hex(info, "value", &hs, sizeof hs) == MPI_SUCCESS);
  MPIX_Stream stream;
  REQUIRE(MPIX_Stream_create(info, &stream) == MPI_SUCCESS);
  MPI_Info_free(&info);
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS);
  std::vector<int> buf(1000);
  int peer = rank ^ 1;
  for (int it = 0; it < 100; ++it) {
    if (rank == 0) {
      for (int i = 0; i < 1000; ++i) buf[i] = it * 1000 + i;
      REQUIRE(MPIX_Send_enqueue(buf.data(), 1000, MPI_INT, peer, 7, comm) == MPI_SUCCESS);
      REQUIRE(MPIX_Recv_enqueue(buf.data(), 1000, MPI_INT, peer, 8, comm, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
      CHECK(buf[999] == it * 1000 + 999 + 1);
    } else {
      REQUIRE(MPIX_Recv_enqueue(buf.data(), 1000, MPI_INT, peer, 7, comm, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
      for (auto &v : buf) v += 1;
      REQUIRE(MPIX_Send_enqueue(buf.data(), 1000, MPI_INT, peer, 8, comm) == MPI_SUCCESS);
      REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
    }
  }
  MPI_Request r;
  int x = rank, y = -1;
  REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, peer, 9, comm, &r) == MPI_SUCCESS);
  MPI_Request s2;
  REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 9, comm, &s2) == MPI_SUCCESS);
  MPI_Status st;
  REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
  CHECK(y == peer);
  CHECK(st.MPI_SOURCE == peer);
  CHECK(st.MPI_TAG == 9);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 1);
  REQUIRE(MPIX_Wait_enqueue(&s2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(s2 == MPI_REQUEST_NULL);
  REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_free(&comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&stream) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
}
