// Bad input under MPI_ERRORS_RETURN (set by mpi_main.cpp on MPI_COMM_WORLD; stream
// communicators inherit it): each call returns the MPI error class the API documents, nothing
// crashes or hangs, and valid calls made afterwards still work.
#include <climits>
#include <vector>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// A short exchange that must still work after the errors a test provoked.
void check_still_works(HostStreamComm &s) {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int x = rank + 1000, y = -1;
  MPI_Request r[2];
  REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, prev, 77, s.comm, &r[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, next, 77, s.comm, &r[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  s.sync();
  CHECK(y == prev + 1000);
}

int tag_ub() {
  int *ub = nullptr, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag ? *ub : 32767;
}

}  // namespace

TEST_CASE("null pointers", "[errors]") {
  HostStreamComm s;
  int buf[4] = {0, 0, 0, 0};
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(error_class(MPIX_Stream_create(MPI_INFO_NULL, nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Stream_free(nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Stream_comm_create(MPI_COMM_WORLD, s.stream, nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Comm_get_stream(s.comm, 0, nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Send_enqueue(nullptr, 4, MPI_INT, 0, 0, s.comm)) == MPI_ERR_BUFFER);
  CHECK(error_class(MPIX_Recv_enqueue(nullptr, 4, MPI_INT, 0, 0, s.comm, MPI_STATUS_IGNORE)) ==
        MPI_ERR_BUFFER);
  CHECK(error_class(MPIX_Isend_enqueue(nullptr, 4, MPI_INT, 0, 0, s.comm, &r)) == MPI_ERR_BUFFER);
  CHECK(error_class(MPIX_Isend_enqueue(buf, 4, MPI_INT, 0, 0, s.comm, nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 4, MPI_INT, 0, 0, s.comm, nullptr)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Wait_enqueue(nullptr, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Waitall_enqueue(2, nullptr, MPI_STATUSES_IGNORE)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, nullptr, 4, MPI_INT, MPI_SUM, s.comm)) ==
        MPI_ERR_BUFFER);
  CHECK(error_class(MPIX_Allreduce_enqueue(nullptr, buf, 4, MPI_INT, MPI_SUM, s.comm)) ==
        MPI_ERR_BUFFER);
  MPI_Info info;
  MPI_Info_create(&info);
  CHECK(error_class(MPIX_Info_set_hex(info, nullptr, buf, 4)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Info_set_hex(info, "value", nullptr, 4)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Info_set_hex(info, "value", buf, 0)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Info_set_hex(MPI_INFO_NULL, "value", buf, 4)) == MPI_ERR_INFO);
  MPI_Info_free(&info);
  CHECK(r == MPI_REQUEST_NULL);  // failed calls hand out no request
  // A null buffer with count 0 is valid (nothing is read or written).
  CHECK(MPIX_Send_enqueue(nullptr, 0, MPI_INT, MPI_PROC_NULL, 0, s.comm) == MPI_SUCCESS);
  check_still_works(s);
}

TEST_CASE("negative count, null datatype, null op", "[errors]") {
  HostStreamComm s;
  int buf[4] = {0, 0, 0, 0};
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(error_class(MPIX_Send_enqueue(buf, -1, MPI_INT, 0, 0, s.comm)) == MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Recv_enqueue(buf, -4, MPI_INT, 0, 0, s.comm, MPI_STATUS_IGNORE)) ==
        MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Isend_enqueue(buf, -1, MPI_INT, 0, 0, s.comm, &r)) == MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, INT_MIN, MPI_INT, 0, 0, s.comm, &r)) == MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Waitall_enqueue(-1, &r, MPI_STATUSES_IGNORE)) == MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, buf + 2, -2, MPI_INT, MPI_SUM, s.comm)) ==
        MPI_ERR_COUNT);
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_DATATYPE_NULL, 0, 0, s.comm)) == MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 1, MPI_DATATYPE_NULL, 0, 0, s.comm, &r)) ==
        MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, s.comm)) ==
        MPI_ERR_OP);
  CHECK(r == MPI_REQUEST_NULL);
  check_still_works(s);
}

TEST_CASE("bad rank, bad tag", "[errors]") {
  HostStreamComm s;
  const int size = world_size();
  int buf[4] = {0, 0, 0, 0};
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, size, 0, s.comm)) == MPI_ERR_RANK);
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, -5, 0, s.comm)) == MPI_ERR_RANK);
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, s.comm)) == MPI_ERR_RANK);
  CHECK(error_class(MPIX_Isend_enqueue(buf, 1, MPI_INT, size + 7, 0, s.comm, &r)) == MPI_ERR_RANK);
  CHECK(error_class(MPIX_Recv_enqueue(buf, 1, MPI_INT, size, 0, s.comm, MPI_STATUS_IGNORE)) ==
        MPI_ERR_RANK);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 1, MPI_INT, -3, 0, s.comm, &r)) == MPI_ERR_RANK);

  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, 0, -1, s.comm)) == MPI_ERR_TAG);
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, 0, MPI_ANY_TAG, s.comm)) == MPI_ERR_TAG);
  CHECK(error_class(MPIX_Isend_enqueue(buf, 1, MPI_INT, 0, -2, s.comm, &r)) == MPI_ERR_TAG);
  CHECK(error_class(MPIX_Recv_enqueue(buf, 1, MPI_INT, 0, -5, s.comm, MPI_STATUS_IGNORE)) ==
        MPI_ERR_TAG);
  const int ub = tag_ub();
  if (ub < INT_MAX)
    CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, 0, ub + 1, s.comm)) == MPI_ERR_TAG);
  CHECK(r == MPI_REQUEST_NULL);
  // The largest legal tag is accepted.
  const int rank = world_rank();
  int x = 5, y = -1;
  REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, rank, ub, s.comm, &r) == MPI_SUCCESS);
  REQUIRE(MPIX_Send_enqueue(&x, 1, MPI_INT, rank, ub, s.comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  s.sync();
  CHECK(y == 5);
  check_still_works(s);
}

TEST_CASE("MPI_COMM_NULL and communicators without a stream", "[errors]") {
  HostStreamComm s;
  int buf[4] = {0, 0, 0, 0};
  MPI_Request r = MPI_REQUEST_NULL;
  MPIX_Stream got = MPIX_STREAM_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Recv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE)) ==
        MPI_ERR_COMM);
  CHECK(error_class(MPIX_Isend_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, buf + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL)) ==
        MPI_ERR_COMM);
  CHECK(error_class(MPIX_Stream_comm_create(MPI_COMM_NULL, s.stream, &c)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Comm_get_stream(MPI_COMM_NULL, 0, &got)) == MPI_ERR_COMM);
  CHECK(c == MPI_COMM_NULL);
  // MPI_COMM_WORLD has no stream.
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r)) == MPI_ERR_COMM);
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, buf + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_COMM);
  // Nor does a stream communicator made with MPIX_STREAM_NULL.
  MPI_Comm plain;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &plain) == MPI_SUCCESS);
  CHECK(error_class(MPIX_Recv_enqueue(buf, 1, MPI_INT, 0, 0, plain, MPI_STATUS_IGNORE)) ==
        MPI_ERR_COMM);
  REQUIRE(MPI_Comm_free(&plain) == MPI_SUCCESS);
  CHECK(error_class(MPIX_Comm_get_stream(s.comm, 3, &got)) == MPI_ERR_ARG);
  CHECK(r == MPI_REQUEST_NULL);
  check_still_works(s);
}

TEST_CASE("freed, forged and doubly freed streams", "[errors]") {
  MPIX_Stream st = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Stream_create(MPI_INFO_NULL, &st) == MPI_SUCCESS);
  MPIX_Stream stale = st;
  REQUIRE(MPIX_Stream_free(&st) == MPI_SUCCESS);
  CHECK(st == MPIX_STREAM_NULL);
  CHECK(error_class(MPIX_Stream_free(&stale)) == MPI_ERR_ARG);  // double free
  CHECK(stale != MPIX_STREAM_NULL);
  CHECK(error_class(MPIX_Stream_free(&st)) == MPI_ERR_ARG);  // MPIX_STREAM_NULL
  CHECK(error_class(MPIX_Stream_synchronize(stale)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Stream_synchronize(MPIX_STREAM_NULL)) == MPI_ERR_ARG);
  MPIX_Stream forged = reinterpret_cast<MPIX_Stream>(static_cast<uintptr_t>(0xdeadbeef));
  CHECK(error_class(MPIX_Stream_synchronize(forged)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Stream_free(&forged)) == MPI_ERR_ARG);
  // Collective with a freed stream: every rank gets an error, none hangs, no communicator.
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(error_class(MPIX_Stream_comm_create(MPI_COMM_WORLD, stale, &c)) == MPI_ERR_ARG);
  CHECK(c == MPI_COMM_NULL);
  // A host stream destroyed behind mpix's back is refused as a "value" too.
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  mpix_host_stream_t dead = hs;
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
  CHECK(mpix_host_stream_launch(
            dead, [](void *) {}, nullptr) == MPI_ERR_ARG);
  // Valid calls still work.
  HostStreamComm s;
  check_still_works(s);
}

TEST_CASE("a rank with a bad argument fails Stream_comm_create everywhere", "[errors]") {
  const int rank = world_rank();
  MPIX_Stream good = MPIX_STREAM_NULL;
  REQUIRE(MPIX_Stream_create(MPI_INFO_NULL, &good) == MPI_SUCCESS);
  MPIX_Stream bad = reinterpret_cast<MPIX_Stream>(static_cast<uintptr_t>(0xbad0));
  MPI_Comm c = MPI_COMM_NULL;
  int rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, rank == 0 ? bad : good, &c);
  CHECK(rc != MPI_SUCCESS);
  CHECK(error_class(rc) == (rank == 0 ? MPI_ERR_ARG : MPI_ERR_OTHER));
  CHECK(c == MPI_COMM_NULL);
  REQUIRE(MPIX_Stream_free(&good) == MPI_SUCCESS);
}

TEST_CASE("bad stream info: unknown type, bad value, bad trigger mode", "[errors]") {
  MPI_Info info;
  MPI_Info_create(&info);
  MPIX_Stream st = MPIX_STREAM_NULL;
  MPI_Info_set(info, "type", "openclQueue");
  CHECK(error_class(MPIX_Stream_create(info, &st)) == MPI_ERR_ARG);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPI_Info_set(info, "value", "not-hex!");
  CHECK(error_class(MPIX_Stream_create(info, &st)) == MPI_ERR_ARG);
  MPI_Info_set(info, "value", "00ff");  // too short for a handle
  CHECK(error_class(MPIX_Stream_create(info, &st)) == MPI_ERR_ARG);
  MPI_Info_delete(info, "value");
  MPI_Info_set(info, "mpix_trigger", "telepathy");
  CHECK(error_class(MPIX_Stream_create(info, &st)) == MPI_ERR_ARG);
  CHECK(st == MPIX_STREAM_NULL);
  // A GPU stream type without a GPU backend (or without a value) is refused, not crashed on.
  MPI_Info_delete(info, "mpix_trigger");
  for (const char *type : {"cudaStream_t", "hipStream_t"}) {
    MPI_Info_set(info, "type", type);
    int cls = error_class(MPIX_Stream_create(info, &st));
    CHECK((cls == MPI_ERR_UNSUPPORTED_OPERATION || cls == MPI_ERR_ARG));
  }
  CHECK(st == MPIX_STREAM_NULL);
  // A host stream without a value: mpix makes and owns one.
  MPI_Info_set(info, "type", "mpix_host_stream");
  REQUIRE(MPIX_Stream_create(info, &st) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(st) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_free(&st) == MPI_SUCCESS);
  MPI_Info_free(&info);
}

TEST_CASE("MPIX_Stream_free while a stream communicator uses the stream", "[errors]") {
  HostStreamComm s;
  MPIX_Stream h = s.stream;
  CHECK(error_class(MPIX_Stream_free(&h)) == MPI_ERR_OTHER);
  CHECK(h == s.stream);  // nothing freed
  check_still_works(s);
}

TEST_CASE("freeing a communicator or stream with ops pending: MPI_ERR_PENDING", "[errors]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;                     // collective: made on every rank
  if (rank >= size - size % 2) return;  // odd rank out, if any
  const int peer = rank ^ 1;
  int x = rank + 7, y = -1;
  if (rank % 2 == 0) {
    // The gate holds the stream, so the send below stays pending.
    Gate gate;
    gate.launch(s.hs);
    MPI_Request r;
    REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 3, s.comm, &r) == MPI_SUCCESS);
    REQUIRE(MPIX_Send_enqueue(&x, 1, MPI_INT, peer, 4, s.comm) == MPI_SUCCESS);
    MPI_Comm c = s.comm;
    CHECK(error_class(MPI_Comm_free(&c)) == MPI_ERR_PENDING);
    CHECK(c == s.comm);  // not freed
    MPIX_Stream h = s.stream;
    CHECK(error_class(MPIX_Stream_free(&h)) == MPI_ERR_PENDING);
    CHECK(h == s.stream);
    gate.release();
    REQUIRE(MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
    CHECK_FALSE(gate.timed_out());
  } else {
    REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, 3, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(y == peer + 7);
    REQUIRE(MPI_Recv(&y, 1, MPI_INT, peer, 4, s.comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  check_still_works(s);
  // ~HostStreamComm frees the communicator and the stream: both must succeed now.
}

TEST_CASE("MPIX_Wait_enqueue refuses requests that are not mpix enqueue requests", "[errors]") {
  const int rank = world_rank(), size = world_size();
  HostStreamComm s;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int x = rank, y = -1, z = -1;
  MPI_Request plain;
  REQUIRE(MPI_Irecv(&y, 1, MPI_INT, prev, 5, s.comm, &plain) == MPI_SUCCESS);
  MPI_Request keep = plain;
  CHECK(error_class(MPIX_Wait_enqueue(&plain, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
  CHECK(plain == keep);  // untouched
  // Waitall with one bad entry enqueues nothing: the good request stays the caller's.
  MPI_Request mine;
  REQUIRE(MPIX_Irecv_enqueue(&z, 1, MPI_INT, prev, 6, s.comm, &mine) == MPI_SUCCESS);
  MPI_Request both[2] = {mine, plain};
  CHECK(error_class(MPIX_Waitall_enqueue(2, both, MPI_STATUSES_IGNORE)) == MPI_ERR_REQUEST);
  CHECK(both[0] == mine);
  CHECK(both[1] == plain);
  REQUIRE(MPI_Send(&x, 1, MPI_INT, next, 5, s.comm) == MPI_SUCCESS);
  REQUIRE(MPI_Send(&x, 1, MPI_INT, next, 6, s.comm) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&plain, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&mine, MPI_STATUS_IGNORE) == MPI_SUCCESS);  // completes on the host
  CHECK(y == prev);
  CHECK(z == prev);
  // A plain request that has completed is MPI_REQUEST_NULL: a no-op for Wait_enqueue.
  CHECK(plain == MPI_REQUEST_NULL);
  REQUIRE(MPIX_Wait_enqueue(&plain, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  check_still_works(s);
}

namespace {
int g_handler_calls = 0, g_handler_code = MPI_SUCCESS;
void record_error(MPI_Comm *, int *code, ...) {
  ++g_handler_calls;
  g_handler_code = *code;
}
}  // namespace

TEST_CASE("errors go to the communicator's error handler", "[errors]") {
  HostStreamComm s;
  int &calls = g_handler_calls, &last_code = g_handler_code;
  MPI_Errhandler eh;
  REQUIRE(MPI_Comm_create_errhandler(&record_error, &eh) == MPI_SUCCESS);
  REQUIRE(MPI_Comm_set_errhandler(s.comm, eh) == MPI_SUCCESS);
  int buf = 0;
  CHECK(error_class(MPIX_Send_enqueue(&buf, 1, MPI_INT, 0, -1, s.comm)) == MPI_ERR_TAG);
  CHECK(calls == 1);
  CHECK(error_class(last_code) == MPI_ERR_TAG);
  CHECK(error_class(MPIX_Send_enqueue(&buf, -1, MPI_INT, 0, 0, s.comm)) == MPI_ERR_COUNT);
  CHECK(calls == 2);
  CHECK(error_class(last_code) == MPI_ERR_COUNT);
  REQUIRE(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  MPI_Errhandler_free(&eh);
  check_still_works(s);
}

TEST_CASE("uncommitted datatypes: MPI_ERR_TYPE at the call, the type left uncommitted",
          "[errors]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int peer = rank ^ 1;  // pairs (0,1), (2,3)
  if (peer >= size) return;
  MPI_Datatype vec;
  REQUIRE(MPI_Type_vector(2, 1, 2, MPI_INT, &vec) == MPI_SUCCESS);
  int buf[8] = {0}, out[8] = {0};
  MPI_Request r = MPI_REQUEST_NULL;
#ifdef MPICH_VERSION
  // MPICH 4.0's argument checks let an uncommitted type through a zero-element send to
  // MPI_PROC_NULL, the probe mpix asks (docs/guide.md §6: where the library checks nothing, an
  // uncommitted type is not detected).
  MPI_Type_free(&vec);
  WARN("MPICH: uncommitted datatypes are not detected");
  (void)out;
  (void)r;
  return;
#endif
  CHECK(error_class(MPIX_Send_enqueue(buf, 1, vec, peer, 5, s.comm)) == MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Recv_enqueue(buf, 1, vec, peer, 5, s.comm, MPI_STATUS_IGNORE)) ==
        MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Isend_enqueue(buf, 1, vec, peer, 5, s.comm, &r)) == MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Irecv_enqueue(buf, 1, vec, peer, 5, s.comm, &r)) == MPI_ERR_TYPE);
  CHECK(r == MPI_REQUEST_NULL);
  // Count 0 and MPI_PROC_NULL too: the type is still wrong.
  CHECK(error_class(MPIX_Send_enqueue(buf, 0, vec, MPI_PROC_NULL, 5, s.comm)) == MPI_ERR_TYPE);
  // Allreduce: a type error, not an op error.
  CHECK(error_class(MPIX_Allreduce_enqueue(buf, out, 1, vec, MPI_SUM, s.comm)) == MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Allreduce_enqueue(MPI_IN_PLACE, out, 1, vec, MPI_SUM, s.comm)) ==
        MPI_ERR_TYPE);
  // Queues and partitioned requests.
  MPIX_Queue q = MPIX_QUEUE_NULL;
  REQUIRE(MPIX_Create_queue(s.comm, nullptr, &q) == MPI_SUCCESS);
  CHECK(error_class(MPIX_Enqueue_send(buf, 1, vec, peer, 5, s.comm, q, &r)) == MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Enqueue_recv(buf, 1, vec, peer, 5, s.comm, q, &r)) == MPI_ERR_TYPE);
  CHECK(r == MPI_REQUEST_NULL);
  REQUIRE(MPIX_Free_queue(q) == MPI_SUCCESS);
  MPIX_Request pr = MPIX_REQUEST_NULL;
  CHECK(error_class(MPIX_Psend_init(buf, 2, 1, vec, peer, 5, s.comm, MPI_INFO_NULL, &pr)) ==
        MPI_ERR_TYPE);
  CHECK(error_class(MPIX_Precv_init(buf, 2, 1, vec, peer, 5, s.comm, MPI_INFO_NULL, &pr)) ==
        MPI_ERR_TYPE);
  CHECK(pr == MPIX_REQUEST_NULL);
  // mpix did not commit the user's type behind its back: MPI still calls it uncommitted.
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  CHECK(error_class(MPI_Send(buf, 0, vec, MPI_PROC_NULL, 0, self)) == MPI_ERR_TYPE);
  MPI_Comm_free(&self);
  // Nothing was left pending (the destructor frees the communicator and stream, and checks),
  // and once committed the same type moves the data.
  REQUIRE(MPI_Type_commit(&vec) == MPI_SUCCESS);
  for (int i = 0; i < 8; ++i) buf[i] = rank * 100 + i;
  MPI_Request rr[2];
  REQUIRE(MPIX_Irecv_enqueue(out, 2, vec, peer, 6, s.comm, &rr[0]) == MPI_SUCCESS);
  REQUIRE(MPIX_Isend_enqueue(buf, 2, vec, peer, 6, s.comm, &rr[1]) == MPI_SUCCESS);
  REQUIRE(MPIX_Waitall_enqueue(2, rr, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  s.sync();
  // Two vectors of extent 3 ints: elements 0, 2 | 3, 5.
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == ((i == 0 || i == 2 || i == 3 || i == 5) ? peer * 100 + i : 0));
  MPI_Type_free(&vec);
  check_still_works(s);
}

TEST_CASE("a host-stream value that is no live host stream: MPI_ERR_ARG, nothing left behind",
          "[errors]") {
  MPIX_Stream st = MPIX_STREAM_NULL;
  // Forged and destroyed handles are refused at MPIX_Stream_create.
  auto forged = reinterpret_cast<mpix_host_stream_t>(static_cast<uintptr_t>(0xdeadbeef));
  CHECK(error_class(make_host_mpix_stream(forged, &st)) == MPI_ERR_ARG);
  CHECK(st == MPIX_STREAM_NULL);
  mpix_host_stream_t hs = nullptr;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  mpix_host_stream_t dead = hs;
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
  CHECK(error_class(make_host_mpix_stream(dead, &st)) == MPI_ERR_ARG);
  CHECK(st == MPIX_STREAM_NULL);
  // A host stream destroyed while an MPIX_Stream still names it (the header forbids it): the
  // next enqueue fails before it creates anything, so the communicator and the stream still
  // free, with nothing pending (no leaked op at MPI_Finalize either).
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  REQUIRE(make_host_mpix_stream(hs, &st) == MPI_SUCCESS);
  MPI_Comm c = MPI_COMM_NULL;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, st, &c) == MPI_SUCCESS);
  REQUIRE(mpix_host_stream_destroy(&hs) == 0);
  int x = 1;
  MPI_Request r = MPI_REQUEST_NULL;
  const int peer = (world_rank() ^ 1) < world_size() ? world_rank() ^ 1 : MPI_PROC_NULL;
  CHECK(error_class(MPIX_Isend_enqueue(&x, 1, MPI_INT, peer, 3, c, &r)) == MPI_ERR_ARG);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK(error_class(MPIX_Send_enqueue(&x, 1, MPI_INT, peer, 3, c)) == MPI_ERR_ARG);
  CHECK(error_class(MPIX_Recv_enqueue(&x, 1, MPI_INT, peer, 3, c, MPI_STATUS_IGNORE)) ==
        MPI_ERR_ARG);
  CHECK(error_class(MPIX_Allreduce_enqueue(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c)) ==
        MPI_ERR_ARG);
  CHECK(error_class(MPIX_Stream_synchronize(st)) == MPI_ERR_ARG);
  CHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
  CHECK(MPIX_Stream_free(&st) == MPI_SUCCESS);
  HostStreamComm s;
  check_still_works(s);
}

TEST_CASE("MPI_Cancel of an enqueued request is refused, not a silent no-op", "[errors]") {
  HostStreamComm s;
  const int rank = world_rank(), size = world_size();
  const int peer = rank ^ 1;
  if (peer >= size) return;
  const bool receiver = rank % 2 == 0;
  int y = -1, x = 4242;
  MPI_Request r = MPI_REQUEST_NULL;
  if (receiver) {
    REQUIRE(MPIX_Irecv_enqueue(&y, 1, MPI_INT, peer, 31, s.comm, &r) == MPI_SUCCESS);
    // Not matched yet (the peer sends after the barrier): refused with an error class.
    CHECK(error_class(MPI_Cancel(&r)) == MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(r != MPI_REQUEST_NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (!receiver) REQUIRE(MPIX_Send_enqueue(&x, 1, MPI_INT, peer, 31, s.comm) == MPI_SUCCESS);
  if (receiver) {
    // The receive was not withdrawn: it completes with the message, not cancelled.
    MPI_Status st;
    REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
    CHECK(y == 4242);
    int cancelled = 1;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled == 0);
  }
  s.sync();
  // Cancelling a request that has completed has no effect (MPI) and succeeds.
  REQUIRE(MPIX_Isend_enqueue(&x, 1, MPI_INT, MPI_PROC_NULL, 32, s.comm, &r) == MPI_SUCCESS);
  s.sync();
  int flag = 0;
  MPI_Status st;
  int rc = MPI_SUCCESS;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Request_get_status(r, &flag, &st);
  REQUIRE(rc == MPI_SUCCESS);
  CHECK(MPI_Cancel(&r) == MPI_SUCCESS);
  REQUIRE(MPI_Wait(&r, &st) == MPI_SUCCESS);
  int cancelled = 1;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled == 0);
  check_still_works(s);
}
