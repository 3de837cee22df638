// Derived datatypes on staged device buffers: a receive into a strided (or padded, or irregular)
// datatype in device or managed memory writes exactly the typemap's bytes — every gap byte keeps
// the sentinel it was filled with — and a send of such a datatype out of device memory delivers
// exactly its typemap's bytes (received as MPI_PACKED and unpacked on the host). Covers the
// staging paths: a single 2D copy (vector), several 2D copies (elements that do not line up),
// the scatter/gather kernel (an irregular indexed type, a 3D subarray), a large strided message,
// and host completion (MPI_Wait) of a strided receive.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "test_kernels.hpp"

using namespace mpix_gpu_test;

namespace {

constexpr unsigned char kSentinel = 0xA5;

struct Type {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int count = 1;
  std::string name;
  Type(MPI_Datatype dt, int n, std::string s) : t(dt), count(n), name(std::move(s)) {
    MPI_Type_commit(&t);
  }
  ~Type() { MPI_Type_free(&t); }
  Type(const Type &) = delete;
  Type &operator=(const Type &) = delete;
};

// Datatypes whose typemaps leave gaps, with the count each is sent with.
std::vector<std::unique_ptr<Type>> gap_types() {
  std::vector<std::unique_ptr<Type>> v;
  MPI_Datatype t, u;
  MPI_Type_vector(256, 3, 8, MPI_INT, &t);
  v.emplace_back(new Type(t, 1, "vector(256,3,8,int) x1: one 2D copy"));
  MPI_Type_vector(4, 1, 2, MPI_INT, &t);
  v.emplace_back(new Type(t, 3, "vector(4,1,2,int) x3: elements do not line up"));
  {
    int lens[] = {1, 3, 3};
    MPI_Aint disps[] = {0, 8, 32};
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, lens, disps, types, &u);
    MPI_Type_create_resized(u, 0, 40, &t);
    MPI_Type_free(&u);
    v.emplace_back(new Type(t, 500, "struct with padding x500"));
  }
  {
    std::vector<int> lens, disps;
    int at = 0;
    for (int i = 0; i < 40; ++i) {
      lens.push_back(1 + i % 5);
      disps.push_back(at);
      at += lens.back() + 1 + (i * 7) % 11;
    }
    MPI_Type_indexed(40, lens.data(), disps.data(), MPI_INT, &t);
    v.emplace_back(new Type(t, 2, "indexed, 40 irregular blocks x2: the kernel path"));
  }
  {
    int sizes[] = {20, 18, 16}, sub[] = {9, 7, 5}, starts[] = {2, 3, 4};
    MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_FLOAT, &t);
    v.emplace_back(new Type(t, 1, "subarray 3D: 9 strided runs"));
  }
  {
    // 4 MiB of 1 KiB rows with 1 KiB gaps: past the eager limit, copy engine 2D.
    MPI_Type_vector(4096, 256, 512, MPI_INT, &t);
    v.emplace_back(new Type(t, 1, "vector 4 MiB of 1 KiB rows"));
  }
  return v;
}

// The span of (count, dt) from its true lower bound, and which of its bytes the typemap covers,
// by MPI's own unpacking of 0xFF bytes into a zeroed buffer.
struct Span {
  MPI_Aint lb = 0;
  std::size_t bytes = 0;
  std::vector<unsigned char> mask;
};

Span span_of(const Type &t) {
  MPI_Aint tlb = 0, text = 0, lb = 0, ext = 0;
  MPI_Type_get_true_extent(t.t, &tlb, &text);
  MPI_Type_get_extent(t.t, &lb, &ext);
  Span s;
  s.lb = tlb;
  s.bytes = static_cast<std::size_t>(text + (t.count - 1) * ext);
  int size = 0;
  MPI_Pack_size(t.count, t.t, MPI_COMM_SELF, &size);
  std::vector<unsigned char> ones(s.bytes, 0xFF);
  std::vector<char> packed(static_cast<std::size_t>(size));
  int pos = 0;
  MPI_Pack(ones.data() - tlb, t.count, t.t, packed.data(), size, &pos, MPI_COMM_SELF);
  s.mask.assign(s.bytes, 0);
  int upos = 0;
  MPI_Unpack(packed.data(), pos, &upos, s.mask.data() - tlb, t.count, t.t, MPI_COMM_SELF);
  return s;
}

std::vector<unsigned char> pattern(uint32_t seed, std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(seed, i);
  return v;
}

// Bytes of @p got that are wrong: typemap bytes must hold the sender's pattern, gaps the sentinel.
std::size_t wrong_bytes(const std::vector<unsigned char> &got, const Span &s, uint32_t seed,
                        std::size_t *gap_bytes) {
  std::size_t bad = 0;
  *gap_bytes = 0;
  for (std::size_t i = 0; i < s.bytes; ++i) {
    if (s.mask[i]) {
      bad += got[i] != pattern_byte(seed, i);
    } else {
      ++*gap_bytes;
      bad += got[i] != kSentinel;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("a strided receive into device memory writes only the typemap's bytes",
          "[gpu][datatype]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  for (const auto &t : gap_types()) {
    const Span sp = span_of(*t);
    for (Place place : {Place::device, Place::managed}) {
      INFO(t->name << ", buffers: " << place_name(place) << ", trigger " << trigger_under_test());
      GpuBuf out(place, sp.bytes), in(place, sp.bytes);
      out.write(pattern(10 + rank, sp.bytes));
      in.write(std::vector<unsigned char>(sp.bytes, kSentinel));
      // The user's buffer pointer is the span's start minus the true lower bound.
      char *ubuf_out = out.as<char>() - sp.lb, *ubuf_in = in.as<char>() - sp.lb;
      MPI_Request r[2];
      REQUIRE(MPIX_Irecv_enqueue(ubuf_in, t->count, t->t, peer, 7, s.comm, &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(ubuf_out, t->count, t->t, peer, 7, s.comm, &r[1]) == MPI_SUCCESS);
      MPI_Status st[2];
      REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      s.sync();
      std::size_t gaps = 0;
      CHECK(wrong_bytes(in.read<unsigned char>(sp.bytes), sp, 10 + peer, &gaps) == 0);
      CHECK(gaps > 0);  // the test means something only if the type has gaps
      int count = -1;
      REQUIRE(MPI_Get_count(&st[0], t->t, &count) == MPI_SUCCESS);
      CHECK(count == t->count);
    }
  }
}

TEST_CASE("a strided send out of device memory delivers exactly the typemap's bytes",
          "[gpu][datatype]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  for (const auto &t : gap_types()) {
    const Span sp = span_of(*t);
    INFO(t->name << ", trigger " << trigger_under_test());
    // Even ranks send typed from device memory; odd ranks take the message as MPI_PACKED
    // (which matches any send) on the host and unpack it into a sentinel-filled buffer.
    if (rank % 2 == 0) {
      GpuBuf out(Place::device, sp.bytes);
      out.write(pattern(20 + rank, sp.bytes));
      REQUIRE(MPIX_Send_enqueue(out.as<char>() - sp.lb, t->count, t->t, peer, 8, s.comm) ==
              MPI_SUCCESS);
      s.sync();
    } else {
      int psize = 0;
      MPI_Pack_size(t->count, t->t, MPI_COMM_SELF, &psize);
      GpuBuf packed(Place::pinned, static_cast<std::size_t>(psize));
      MPI_Status st;
      REQUIRE(MPIX_Recv_enqueue(packed.get(), psize, MPI_PACKED, peer, 8, s.comm, &st) ==
              MPI_SUCCESS);
      s.sync();
      int got = 0;
      MPI_Get_count(&st, MPI_PACKED, &got);
      std::vector<unsigned char> host(sp.bytes, kSentinel);
      int pos = 0;
      REQUIRE(MPI_Unpack(packed.get(), got, &pos, host.data() - sp.lb, t->count, t->t,
                         MPI_COMM_SELF) == MPI_SUCCESS);
      std::size_t gaps = 0;
      CHECK(wrong_bytes(host, sp, 20 + peer, &gaps) == 0);
    }
  }
}

TEST_CASE("a strided device receive completed by host MPI_Wait keeps its gaps",
          "[gpu][datatype][status]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  for (const auto &t : gap_types()) {
    const Span sp = span_of(*t);
    INFO(t->name);
    GpuBuf out(Place::device, sp.bytes), in(Place::device, sp.bytes);
    out.write(pattern(30 + rank, sp.bytes));
    in.write(std::vector<unsigned char>(sp.bytes, kSentinel));
    MPI_Request r, sr;
    REQUIRE(MPIX_Irecv_enqueue(in.as<char>() - sp.lb, t->count, t->t, peer, 9, s.comm, &r) ==
            MPI_SUCCESS);
    REQUIRE(MPIX_Isend_enqueue(out.as<char>() - sp.lb, t->count, t->t, peer, 9, s.comm, &sr) ==
            MPI_SUCCESS);
    // No stream wait: the host completion copies the data into device memory itself.
    REQUIRE(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    std::size_t gaps = 0;
    CHECK(wrong_bytes(in.read<unsigned char>(sp.bytes), sp, 30 + peer, &gaps) == 0);
    REQUIRE(MPI_Wait(&sr, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    s.sync();
  }
}

TEST_CASE("a strided device receive of fewer elements than posted writes only those",
          "[gpu][datatype][short]") {
  const int rank = world_rank(), size = world_size();
  CudaStreamComm s;
  if (rank >= size - size % 2) return;
  const int peer = rank ^ 1;
  for (const auto &t : gap_types()) {
    // Post count + 2 elements, send count: the two elements past the message stay untouched.
    MPI_Datatype d;
    MPI_Type_dup(t->t, &d);
    Type posted(d, t->count + 2, t->name);
    const Span sent = span_of(*t), all = span_of(posted);
    for (bool host_wait : {false, true}) {
      INFO(t->name << " + 2 elements posted, completed by "
                   << (host_wait ? "MPI_Wait" : "the stream"));
      GpuBuf out(Place::device, all.bytes), in(Place::device, all.bytes);
      out.write(pattern(40 + rank, all.bytes));
      in.write(std::vector<unsigned char>(all.bytes, kSentinel));
      MPI_Request r[2];
      MPI_Status st[2];
      REQUIRE(MPIX_Irecv_enqueue(in.as<char>() - all.lb, posted.count, posted.t, peer, 10, s.comm,
                                 &r[0]) == MPI_SUCCESS);
      REQUIRE(MPIX_Isend_enqueue(out.as<char>() - sent.lb, t->count, t->t, peer, 10, s.comm,
                                 &r[1]) == MPI_SUCCESS);
      if (host_wait) REQUIRE(MPI_Waitall(2, r, st) == MPI_SUCCESS);
      else REQUIRE(MPIX_Waitall_enqueue(2, r, st) == MPI_SUCCESS);
      s.sync();
      int count = -1;
      REQUIRE(MPI_Get_count(&st[0], posted.t, &count) == MPI_SUCCESS);
      CHECK(count == t->count);
      // The sent elements' typemap bytes hold the pattern; every other byte the sentinel.
      auto got = in.read<unsigned char>(all.bytes);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < all.bytes; ++i) {
        const bool msg = i < sent.bytes && sent.mask[i];
        bad += got[i] != (msg ? pattern_byte(40 + peer, i) : kSentinel);
      }
      CHECK(bad == 0);
    }
  }
}
