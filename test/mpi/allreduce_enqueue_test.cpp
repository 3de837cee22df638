// MPIX_Allreduce_enqueue on host streams: results for predefined ops and types, MPI_IN_PLACE,
// derived datatypes (freed right after the call), a non-commutative user op, stream order
// (input read and output written exactly where the stream is), interleaving with enqueued
// point-to-point, two streams at once, a general stream, and argument errors. Runs on 2 and 4
// ranks. All inputs are small integers, so every expected result is exact.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

int rank_of(MPI_Comm c = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}
int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

// A host stream, its MPIX_Stream and a stream communicator over MPI_COMM_WORLD.
struct StreamComm {
  mpix_host_stream_t hs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;

  StreamComm() {
    REQUIRE(mpix_host_stream_create(&hs) == 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "mpix_host_stream");
    REQUIRE(MPIX_Info_set_hex(info, "value", &hs, sizeof hs) == MPI_SUCCESS);
    REQUIRE(MPIX_Stream_create(info, &stream) == MPI_SUCCESS);
    MPI_Info_free(&info);
    REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS);
  }
  ~StreamComm() {
    CHECK(MPIX_Stream_synchronize(stream) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
    CHECK(MPIX_Stream_free(&stream) == MPI_SUCCESS);
    CHECK(mpix_host_stream_destroy(&hs) == 0);
  }
  void sync() { REQUIRE(MPIX_Stream_synchronize(stream) == MPI_SUCCESS); }
  // Runs @p f on the stream, in order with the enqueued ops.
  template <class F>
  void launch(F *f) {
    REQUIRE(mpix_host_stream_launch(
                hs, [](void *p) { (*static_cast<F *>(p))(); }, f) == 0);
  }
};

// Holds a stream until released (bounded, so a broken test fails instead of hanging).
struct Gate {
  std::atomic<bool> open{false}, entered{false};
  void operator()() {
    entered = true;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!open && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
};

}  // namespace

TEST_CASE("allreduce_enqueue: sum and max of int and double, several counts", "[allreduce]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  for (int count : {1, 7, 1000, 8191, 100000}) {
    std::vector<int> si(count), sum_i(count, -1), max_i(count, -1);
    std::vector<double> sd(count), sum_d(count, -1), max_d(count, -1);
    for (int i = 0; i < count; ++i) {
      si[i] = (r + 1) * (i % 97) - r;
      sd[i] = 0.5 * si[i];
    }
    REQUIRE(MPIX_Allreduce_enqueue(si.data(), sum_i.data(), count, MPI_INT, MPI_SUM, sc.comm) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(si.data(), max_i.data(), count, MPI_INT, MPI_MAX, sc.comm) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(sd.data(), sum_d.data(), count, MPI_DOUBLE, MPI_SUM, sc.comm) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(sd.data(), max_d.data(), count, MPI_DOUBLE, MPI_MAX, sc.comm) ==
            MPI_SUCCESS);
    sc.sync();
    int wrong = 0;
    for (int i = 0; i < count; ++i) {
      // sum over q of (q+1)*(i%97) - q = (i%97) * n(n+1)/2 - n(n-1)/2; max at q = n-1 or 0.
      const int m = i % 97;
      const int esum = m * n * (n + 1) / 2 - n * (n - 1) / 2;
      const int emax = m >= 1 ? n * m - (n - 1) : 0;
      wrong +=
          sum_i[i] != esum || max_i[i] != emax || sum_d[i] != 0.5 * esum || max_d[i] != 0.5 * emax;
    }
    INFO("count " << count);
    CHECK(wrong == 0);
  }
}

TEST_CASE("allreduce_enqueue: other predefined ops and types", "[allreduce]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  long long ll = 1000000000000LL + r, ll_min = 0;
  unsigned bits = 1u << r, bor = 0, band = 0, bxor = 0;
  float f = static_cast<float>(r + 1), fprod = 0;
  int flag = r == 0 ? 1 : 0, lor = -1, land = -1;
  struct {
    double v;
    int i;
  } loc{static_cast<double>((r * 7) % n), r}, maxloc{}, minloc{};
  unsigned char uc = static_cast<unsigned char>(10 + r), uc_max = 0;
  auto ok = [](int rc) { return rc == MPI_SUCCESS; };
  CHECK(ok(MPIX_Allreduce_enqueue(&ll, &ll_min, 1, MPI_LONG_LONG, MPI_MIN, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&bits, &bor, 1, MPI_UNSIGNED, MPI_BOR, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&bits, &band, 1, MPI_UNSIGNED, MPI_BAND, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&bits, &bxor, 1, MPI_UNSIGNED, MPI_BXOR, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&f, &fprod, 1, MPI_FLOAT, MPI_PROD, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&flag, &lor, 1, MPI_INT, MPI_LOR, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&flag, &land, 1, MPI_INT, MPI_LAND, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&loc, &maxloc, 1, MPI_DOUBLE_INT, MPI_MAXLOC, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&loc, &minloc, 1, MPI_DOUBLE_INT, MPI_MINLOC, sc.comm)));
  CHECK(ok(MPIX_Allreduce_enqueue(&uc, &uc_max, 1, MPI_UNSIGNED_CHAR, MPI_MAX, sc.comm)));
  sc.sync();
  CHECK(ll_min == 1000000000000LL);
  CHECK(bor == (1u << n) - 1);
  CHECK(band == (n == 1 ? 1u : 0u));
  CHECK(bxor == (1u << n) - 1);
  float expect = 1;
  for (int q = 1; q <= n; ++q) expect *= static_cast<float>(q);
  CHECK(fprod == expect);
  CHECK(lor == 1);
  CHECK(land == (n == 1 ? 1 : 0));
  // Values (7q mod n) over q: the max n-1 and the min 0 each occur once (7 is coprime to 2, 4).
  int qmax = 0, qmin = 0;
  for (int q = 0; q < n; ++q) {
    if ((q * 7) % n == n - 1) qmax = q;
    if ((q * 7) % n == 0) qmin = q;
  }
  CHECK(maxloc.v == n - 1);
  CHECK(maxloc.i == qmax);
  CHECK(minloc.v == 0);
  CHECK(minloc.i == qmin);
  CHECK(uc_max == 10 + n - 1);
}

TEST_CASE("allreduce_enqueue: MPI_IN_PLACE", "[allreduce]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  std::vector<long> v(513);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<long>(i) * (r + 1);
  REQUIRE(MPIX_Allreduce_enqueue(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_LONG,
                                 MPI_SUM, sc.comm) == MPI_SUCCESS);
  // In place twice in a row: the second reads the first's result in stream order.
  REQUIRE(MPIX_Allreduce_enqueue(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_LONG,
                                 MPI_MAX, sc.comm) == MPI_SUCCESS);
  sc.sync();
  int wrong = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    wrong += v[i] != static_cast<long>(i) * n * (n + 1) / 2;
  CHECK(wrong == 0);
}

namespace {
// User-defined ops for the derived-datatype tests. MPI hands a user op the buffers in the
// datatype's own layout, @p len elements of it; each op knows the one type it is used with.
// (Predefined ops on derived datatypes are not portable: Open MPI refuses them, see the error
// test below.)
void sum_int3(void *in, void *inout, int *len, MPI_Datatype *) {  // contiguous(3, MPI_INT)
  for (int i = 0; i < 3 * *len; ++i) static_cast<int *>(inout)[i] += static_cast<int *>(in)[i];
}
void max_vec_4_2_3(void *in, void *inout, int *len, MPI_Datatype *) {  // vector(4, 2, 3, double)
  // Consecutive elements of a vector type start one extent (3 * 3 + 2 = 11 doubles) apart.
  for (int e = 0; e < *len; ++e)
    for (int b = 0; b < 4; ++b)
      for (int k = 0; k < 2; ++k) {
        const int at = 11 * e + 3 * b + k;
        double &o = static_cast<double *>(inout)[at];
        o = std::max(o, static_cast<double *>(in)[at]);
      }
}
void sum_vec_3_1_2(void *in, void *inout, int *len, MPI_Datatype *) {  // vector(3, 1, 2, int)
  for (int e = 0; e < *len; ++e)
    for (int b = 0; b < 3; ++b)
      static_cast<int *>(inout)[5 * e + 2 * b] += static_cast<int *>(in)[5 * e + 2 * b];
}
}  // namespace

TEST_CASE("allreduce_enqueue: derived datatypes (freed right after the call) with user ops",
          "[allreduce]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  SECTION("contiguous of 3 ints") {
    MPI_Op op;
    MPI_Op_create(sum_int3, 1, &op);
    MPI_Datatype t3;
    MPI_Type_contiguous(3, MPI_INT, &t3);
    MPI_Type_commit(&t3);
    std::vector<int> s(3 * 5), out(3 * 5, -1);
    for (int i = 0; i < 15; ++i) s[i] = i + r;
    REQUIRE(MPIX_Allreduce_enqueue(s.data(), out.data(), 5, t3, op, sc.comm) == MPI_SUCCESS);
    MPI_Type_free(&t3);  // mpix keeps its own reference until the op is done
    sc.sync();
    MPI_Op_free(&op);
    int wrong = 0;
    for (int i = 0; i < 15; ++i) wrong += out[i] != n * i + n * (n - 1) / 2;
    CHECK(wrong == 0);
  }
  SECTION("strided vector, two elements: gaps in the result stay untouched") {
    // Per element, 4 blocks of 2 doubles with stride 3: offsets 0,1, 3,4, 6,7, 9,10 of an
    // 11-double extent; 2, 5, 8 are gaps. Element 1 is the same 11 doubles later.
    MPI_Op op;
    MPI_Op_create(max_vec_4_2_3, 1, &op);
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    std::vector<double> s(22), out(22, -7.0);
    for (int i = 0; i < 22; ++i) s[i] = i * (r + 1);
    REQUIRE(MPIX_Allreduce_enqueue(s.data(), out.data(), 2, vec, op, sc.comm) == MPI_SUCCESS);
    MPI_Type_free(&vec);
    sc.sync();
    MPI_Op_free(&op);
    for (int i = 0; i < 22; ++i) {
      INFO("double " << i);
      CHECK(out[i] == (i % 11 % 3 == 2 ? -7.0 : static_cast<double>(i * n)));
    }
  }
  SECTION("in place with a strided vector, two elements") {
    MPI_Op op;
    MPI_Op_create(sum_vec_3_1_2, 1, &op);
    // vector(3, 1, 2): offsets 0, 2, 4; extent 5, so two elements cover 0..9.
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    std::vector<int> v = {1 + r, 100, 2 + r, 100, 3 + r, 4 + r, 100, 5 + r, 100, 6 + r};
    REQUIRE(MPIX_Allreduce_enqueue(MPI_IN_PLACE, v.data(), 2, vec, op, sc.comm) == MPI_SUCCESS);
    MPI_Type_free(&vec);
    sc.sync();
    MPI_Op_free(&op);
    const int b = n * (n - 1) / 2;
    CHECK(v == std::vector<int>{n + b, 100, 2 * n + b, 100, 3 * n + b, 4 * n + b, 100, 5 * n + b,
                                100, 6 * n + b});
  }
}

namespace {
// 2x2 integer matrix product, row-major: inout = in * inout. MPI applies a non-commutative op
// in rank order, so the result is M_0 * M_1 * ... * M_(n-1).
void matmul(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<long *>(in);
  auto *b = static_cast<long *>(inout);
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                       a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    for (int i = 0; i < 4; ++i) b[i] = c[i];
  }
}
}  // namespace

TEST_CASE("allreduce_enqueue: a non-commutative user op is applied in rank order", "[allreduce]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  MPI_Op op;
  REQUIRE(MPI_Op_create(matmul, 0, &op) == MPI_SUCCESS);
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_LONG, &mat);
  MPI_Type_commit(&mat);
  // Upper-triangular shears with different entries: their product depends on the order.
  const long mine[4] = {1, r + 1, 0, 1 + (r % 2)};
  long out[4] = {0, 0, 0, 0};
  REQUIRE(MPIX_Allreduce_enqueue(mine, out, 1, mat, op, sc.comm) == MPI_SUCCESS);
  MPI_Type_free(&mat);
  sc.sync();  // the op stays allocated until the stream has passed the call
  MPI_Op_free(&op);
  long e[4] = {1, 0, 0, 1};
  for (int q = 0; q < n; ++q) {
    const long m[4] = {1, q + 1, 0, 1 + (q % 2)};
    const long c[4] = {e[0] * m[0] + e[1] * m[2], e[0] * m[1] + e[1] * m[3],
                       e[2] * m[0] + e[3] * m[2], e[2] * m[1] + e[3] * m[3]};
    for (int i = 0; i < 4; ++i) e[i] = c[i];
  }
  for (int i = 0; i < 4; ++i) CHECK(out[i] == e[i]);
}

TEST_CASE("allreduce_enqueue: the input is read where the stream is, not at the call",
          "[allreduce][order]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  int in = -1000, out1 = 0, out2 = 0;
  // Stream: [in = r+1] [allreduce -> out1] [in = 10*(r+1)] [allreduce -> out2]. The host sets
  // nothing; had the call read `in` at enqueue time, out1 would be -1000 * n.
  auto set1 = [&] { in = r + 1; };
  auto set2 = [&] { in = 10 * (r + 1); };
  sc.launch(&set1);
  REQUIRE(MPIX_Allreduce_enqueue(&in, &out1, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
  sc.launch(&set2);
  REQUIRE(MPIX_Allreduce_enqueue(&in, &out2, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
  sc.sync();
  CHECK(out1 == n * (n + 1) / 2);
  CHECK(out2 == 10 * n * (n + 1) / 2);
}

TEST_CASE(
    "allreduce_enqueue: the host does not wait, and the stream goes on only with the "
    "result in place",
    "[allreduce][order]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  Gate gate;
  int in = r, out = -1, seen_at_call = 0, seen_by_stream = -2;
  sc.launch(&gate);
  // The stream is held: the call must return at once and leave the output alone.
  REQUIRE(MPIX_Allreduce_enqueue(&in, &out, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
  auto snap = [&] { seen_by_stream = out; };
  sc.launch(&snap);
  seen_at_call = out;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(out == -1);
  CHECK(seen_at_call == -1);
  // The last rank releases its stream later than the others, so on every other rank the
  // collective cannot finish before it: had the stream not waited for the result, the
  // snapshot would see -1.
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == n - 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate.open = true;
  sc.sync();
  CHECK(out == n * (n - 1) / 2);
  CHECK(seen_by_stream == n * (n - 1) / 2);
}

TEST_CASE("allreduce_enqueue: interleaved with enqueued point-to-point in stream order",
          "[allreduce][order]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  // Ring: send my rank right, receive left's; reduce the received values (sum of all ranks),
  // then a second ring round carrying that sum; then reduce again.
  int token = r, got = -1, sum1 = 0, got2 = -1, sum2 = 0;
  for (int round = 0; round < 5; ++round) {
    MPI_Request rq[2];
    REQUIRE(MPIX_Irecv_enqueue(&got, 1, MPI_INT, left, round, sc.comm, &rq[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&token, 1, MPI_INT, right, round, sc.comm, &rq[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(&got, &sum1, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(&got2, 1, MPI_INT, left, 100 + round, sc.comm, &rq[0]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&sum1, 1, MPI_INT, right, 100 + round, sc.comm, &rq[1]) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(2, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(&got2, &sum2, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
    sc.sync();
    INFO("round " << round);
    CHECK(got == left);
    CHECK(sum1 == n * (n - 1) / 2);
    CHECK(got2 == n * (n - 1) / 2);
    CHECK(sum2 == n * n * (n - 1) / 2);
  }
}

TEST_CASE("allreduce_enqueue: sends enqueued before it go out with it, data intact",
          "[allreduce][order]") {
  // With deferred triggers and staged buffers (the ctest variants), the sends' copies out wait
  // for the stream's next flush, which this allreduce is: its kernel copies them, then its own
  // input, then writes the trigger that covers all of them.
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  for (int round = 0; round < 20; ++round) {
    int a = 1000 * round + r, b = -(1000 * round + r), got_a = -1, got_b = -1, mine = r + round;
    int sum = -1;
    MPI_Request rq[4];
    REQUIRE(MPIX_Irecv_enqueue(&got_a, 1, MPI_INT, left, 1, sc.comm, &rq[0]) == MPI_SUCCESS);
    REQUIRE(MPIX_Irecv_enqueue(&got_b, 1, MPI_INT, left, 2, sc.comm, &rq[1]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&a, 1, MPI_INT, right, 1, sc.comm, &rq[2]) == MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(&b, 1, MPI_INT, right, 2, sc.comm, &rq[3]) == MPI_SUCCESS);
    REQUIRE(MPIX_Allreduce_enqueue(&mine, &sum, 1, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
    REQUIRE(MPIX_Waitall_enqueue(4, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    sc.sync();
    INFO("round " << round);
    CHECK(got_a == 1000 * round + left);
    CHECK(got_b == -(1000 * round + left));
    CHECK(sum == n * (n - 1) / 2 + n * round);
  }
}

TEST_CASE("allreduce_enqueue: many in flight, ranks at different speeds", "[allreduce][order]") {
  StreamComm sc;
  const int r = rank_of(), n = size_of();
  constexpr int kOps = 200;
  std::vector<int> in(kOps), out(kOps, -1);
  for (int i = 0; i < kOps; ++i) in[i] = i * (r + 1);
  // Rank r's stream starts r * 10 ms late; the host enqueues everything at once.
  auto delay = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(10 * r)); };
  sc.launch(&delay);
  for (int i = 0; i < kOps; ++i)
    REQUIRE(MPIX_Allreduce_enqueue(&in[i], &out[i], 1, MPI_INT, i % 2 ? MPI_MAX : MPI_SUM,
                                   sc.comm) == MPI_SUCCESS);
  sc.sync();
  int wrong = 0;
  for (int i = 0; i < kOps; ++i) wrong += out[i] != (i % 2 ? i * n : i * n * (n + 1) / 2);
  CHECK(wrong == 0);
}

TEST_CASE("allreduce_enqueue: two streams reduce independently", "[allreduce]") {
  StreamComm a, b;
  const int r = rank_of(), n = size_of();
  Gate gate;
  int ia = r, ib = 2 * r, oa = -1, ob = -1;
  // Stream a is held; stream b's allreduce (another communicator) must still complete.
  a.launch(&gate);
  REQUIRE(MPIX_Allreduce_enqueue(&ia, &oa, 1, MPI_INT, MPI_SUM, a.comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Allreduce_enqueue(&ib, &ob, 1, MPI_INT, MPI_SUM, b.comm) == MPI_SUCCESS);
  b.sync();
  CHECK(ob == n * (n - 1));
  CHECK(oa == -1);
  gate.open = true;
  a.sync();
  CHECK(oa == n * (n - 1) / 2);
}

TEST_CASE("allreduce_enqueue: on a general stream (MPI_INFO_NULL)", "[allreduce]") {
  MPIX_Stream s;
  REQUIRE(MPIX_Stream_create(MPI_INFO_NULL, &s) == MPI_SUCCESS);
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(MPI_COMM_WORLD, s, &comm) == MPI_SUCCESS);
  const int r = rank_of(), n = size_of();
  double x = r + 0.25, y = 0;
  REQUIRE(MPIX_Allreduce_enqueue(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(s) == MPI_SUCCESS);
  CHECK(y == n * (n - 1) / 2.0 + 0.25 * n);
  // count 0 is a valid no-op.
  REQUIRE(MPIX_Allreduce_enqueue(&x, &y, 0, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(s) == MPI_SUCCESS);
  CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
  CHECK(MPIX_Stream_free(&s) == MPI_SUCCESS);
}

TEST_CASE("allreduce_enqueue: bad arguments fail with the right class and enqueue nothing",
          "[allreduce][errors]") {
  StreamComm sc;
  int a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
  auto cls = [&](int rc) { return error_class(rc); };
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, 4, MPI_INT, MPI_OP_NULL, sc.comm)) == MPI_ERR_OP);
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, -1, MPI_INT, MPI_SUM, sc.comm)) == MPI_ERR_COUNT);
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, 4, MPI_DATATYPE_NULL, MPI_SUM, sc.comm)) == MPI_ERR_TYPE);
  CHECK(cls(MPIX_Allreduce_enqueue(a, nullptr, 4, MPI_INT, MPI_SUM, sc.comm)) == MPI_ERR_BUFFER);
  CHECK(cls(MPIX_Allreduce_enqueue(nullptr, b, 4, MPI_INT, MPI_SUM, sc.comm)) == MPI_ERR_BUFFER);
  CHECK(cls(MPIX_Allreduce_enqueue(a, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, sc.comm)) ==
        MPI_ERR_BUFFER);
  CHECK(cls(MPIX_Allreduce_enqueue(a, a, 4, MPI_INT, MPI_SUM, sc.comm)) == MPI_ERR_BUFFER);
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL)) == MPI_ERR_COMM);
  // Op/type pairs no MPI defines: refused at the call, not later by the agent's MPI_Iallreduce.
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, 2, MPI_INT, MPI_MAXLOC, sc.comm)) == MPI_ERR_OP);
  double d[2] = {1, 2}, e[2] = {0, 0};
  CHECK(cls(MPIX_Allreduce_enqueue(d, e, 2, MPI_DOUBLE, MPI_BAND, sc.comm)) == MPI_ERR_OP);
  // A predefined op on a derived datatype: whatever this MPI says for MPI_Reduce_local, the
  // call says the same now (Open MPI refuses the pair; MPICH accepts it).
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  char x = 0, y = 0;
  const int local = MPI_Reduce_local(&x, &y, 0, pair, MPI_SUM);
  if (local != MPI_SUCCESS) {
    CHECK(cls(MPIX_Allreduce_enqueue(a, b, 2, pair, MPI_SUM, sc.comm)) == MPI_ERR_OP);
  } else {
    REQUIRE(MPIX_Allreduce_enqueue(a, b, 2, pair, MPI_SUM, sc.comm) == MPI_SUCCESS);
    sc.sync();
    for (int i = 0; i < 4; ++i) CHECK(b[i] == (i + 1) * size_of());
    for (int &v : b) v = 0;
  }
  MPI_Type_free(&pair);
  // A communicator without a stream.
  MPI_Comm plain;
  MPI_Comm_dup(MPI_COMM_WORLD, &plain);
  CHECK(cls(MPIX_Allreduce_enqueue(a, b, 4, MPI_INT, MPI_SUM, plain)) == MPI_ERR_COMM);
  MPI_Comm_free(&plain);
  // Nothing was enqueued by the failed calls: the next collective on the communicator pairs
  // with the other ranks' next one, and the buffers were not touched.
  CHECK(b[0] == 0);
  REQUIRE(MPIX_Allreduce_enqueue(a, b, 4, MPI_INT, MPI_SUM, sc.comm) == MPI_SUCCESS);
  sc.sync();
  const int n = size_of();
  for (int i = 0; i < 4; ++i) CHECK(b[i] == (i + 1) * n);
}

TEST_CASE("allreduce_enqueue: on an intercommunicator (MPI_IN_PLACE refused)", "[allreduce]") {
  const int r = rank_of(), n = size_of();
  if (n < 2 || n % 2) return;
  // Two halves: low ranks and high ranks. Each side gets the reduction of the other side.
  const int low = r < n / 2;
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, low, r, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? n / 2 : 0, 77, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  mpix_host_stream_t hs;
  REQUIRE(mpix_host_stream_create(&hs) == 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Info_set_hex(info, "value", &hs, sizeof hs);
  MPIX_Stream s;
  REQUIRE(MPIX_Stream_create(info, &s) == MPI_SUCCESS);
  MPI_Info_free(&info);
  MPI_Comm comm;
  REQUIRE(MPIX_Stream_comm_create(inter, s, &comm) == MPI_SUCCESS);
  int x = r, y = -1;
  CHECK(error_class(MPIX_Allreduce_enqueue(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, comm)) ==
        MPI_ERR_ARG);
  REQUIRE(MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  REQUIRE(MPIX_Stream_synchronize(s) == MPI_SUCCESS);
  // Sum of the other half's world ranks.
  const int h = n / 2, low_sum = h * (h - 1) / 2, high_sum = n * (n - 1) / 2 - low_sum;
  CHECK(y == (low ? high_sum : low_sum));
  CHECK(MPI_Comm_free(&comm) == MPI_SUCCESS);
  CHECK(MPIX_Stream_free(&s) == MPI_SUCCESS);
  CHECK(mpix_host_stream_destroy(&hs) == 0);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}
