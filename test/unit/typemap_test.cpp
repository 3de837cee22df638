// The typemap runs staging copies device buffers with (core/typemap.hpp): for every kind of
// datatype constructor, the bytes the runs cover are exactly the bytes MPI's own pack/unpack
// touches, regular types stay a few runs, and copying by runs on a host stream or with the
// backend's blocking copy writes the typemap's bytes and leaves every gap byte alone.
// One rank under mpirun (MPI_Type_* and MPI_Pack need MPI), no GPU.
#include "core/typemap.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu/backend.hpp"
#include "gpu/host/host_backend.hpp"

using mpix::CopyRun;
using mpix::TypeLayout;

namespace {

// A committed datatype, freed at scope exit.
struct Type {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  std::string name;
  Type(MPI_Datatype dt, std::string n) : t(dt), name(std::move(n)) {
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
  }
  ~Type() { MPI_Type_free(&t); }
  Type(const Type &) = delete;
  Type &operator=(const Type &) = delete;
};

std::vector<std::unique_ptr<Type>> all_types() {
  std::vector<std::unique_ptr<Type>> v;
  auto add = [&](MPI_Datatype t, const char *name) { v.emplace_back(new Type(t, name)); };
  MPI_Datatype t, u;
  MPI_Type_vector(10, 2, 5, MPI_INT, &t);
  add(t, "vector(10,2,5,int)");
  MPI_Type_vector(4, 1, 2, MPI_INT, &t);  // extent 7 ints: elements do not line up
  add(t, "vector(4,1,2,int)");
  MPI_Type_create_hvector(6, 3, -40, MPI_SHORT, &t);
  add(t, "hvector(6,3,-40 B,short)");
  MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &u);
  MPI_Type_contiguous(5, u, &t);
  MPI_Type_free(&u);
  add(t, "contiguous(5,vector(3,1,4,double))");
  MPI_Type_contiguous(7, MPI_INT, &t);
  add(t, "contiguous(7,int)");
  {
    int lens[] = {1, 3, 2, 2, 5, 1, 4};
    int disps[] = {0, 1, 6, 8, 13, 30, 40};  // 0..3 touching, then gaps of every size
    MPI_Type_indexed(7, lens, disps, MPI_INT, &t);
    add(t, "indexed(irregular)");
  }
  {
    int lens[] = {2, 1, 3};
    MPI_Aint disps[] = {-24, 0, 17};
    MPI_Type_create_hindexed(3, lens, disps, MPI_SHORT, &t);
    add(t, "hindexed(negative and odd displacements)");
  }
  {
    int disps[] = {0, 3, 6, 9, 20};
    MPI_Type_create_indexed_block(5, 2, disps, MPI_FLOAT, &t);
    add(t, "indexed_block(5,2,float)");
  }
  {
    MPI_Aint disps[] = {0, 100, 64};
    MPI_Type_create_hindexed_block(3, 4, disps, MPI_CHAR, &t);
    add(t, "hindexed_block(3,4,char)");
  }
  {
    // A struct with padding (int, 3 doubles, 3 chars), resized to its C size.
    int lens[] = {1, 3, 3};
    MPI_Aint disps[] = {0, 8, 32};
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, lens, disps, types, &u);
    MPI_Type_create_resized(u, 0, 40, &t);
    MPI_Type_free(&u);
    add(t, "struct(particle) resized to 40");
  }
  {
    MPI_Datatype inner;
    MPI_Type_vector(3, 1, 3, MPI_INT, &inner);
    int lens[] = {2, 1};
    MPI_Aint disps[] = {0, 200};
    MPI_Datatype types[] = {inner, MPI_DOUBLE};
    MPI_Type_create_struct(2, lens, disps, types, &t);
    MPI_Type_free(&inner);
    add(t, "struct(2 x vector, double)");
  }
  {
    int sizes[] = {16, 12}, sub[] = {5, 4}, starts[] = {3, 2};
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    add(t, "subarray 2D C");
  }
  {
    int sizes[] = {6, 7, 8}, sub[] = {3, 2, 8}, starts[] = {1, 4, 0};
    MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
    add(t, "subarray 3D C, full rows");
  }
  {
    int sizes[] = {6, 7, 8}, sub[] = {2, 3, 4}, starts[] = {1, 2, 3};
    MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &t);
    add(t, "subarray 3D Fortran");
  }
  {
    // Decoded by the byte mask: darray is not taken apart.
    int gsizes[] = {8, 9}, distribs[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int dargs[] = {2, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 2};
    MPI_Type_create_darray(4, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    add(t, "darray (byte mask)");
  }
  MPI_Type_dup(MPI_SHORT_INT, &t);
  add(t, "dup(MPI_SHORT_INT): a named type with a hole");
  MPI_Type_vector(5, 1, 3, MPI_INT, &u);
  MPI_Type_create_resized(u, 0, 15 * sizeof(int), &t);
  MPI_Type_free(&u);
  add(t, "vector(5,1,3,int) resized to 15 ints: elements line up");
  {
    // Overlapping blocks (legal for sends): the runs must be the union.
    int lens[] = {3, 3};
    int disps[] = {0, 1};
    MPI_Type_indexed(2, lens, disps, MPI_INT, &t);
    add(t, "indexed(overlapping)");
  }
  return v;
}

// Which bytes of the span the runs cover, each at most once.
std::vector<int> coverage(const TypeLayout &l) {
  std::vector<int> hits(l.span, 0);
  if (l.dense()) {
    for (int &h : hits) h = 1;
    return hits;
  }
  for (const CopyRun &r : l.runs)
    for (uint64_t k = 0; k < r.count; ++k)
      for (uint64_t b = 0; b < r.len; ++b) {
        const uint64_t at = r.offset + k * r.stride + b;
        REQUIRE(at < l.span);
        ++hits[at];
      }
  return hits;
}

}  // namespace

TEST_CASE("typemap runs cover exactly the bytes MPI packs", "[typemap]") {
  for (const auto &t : all_types()) {
    for (int count : {1, 2, 3, 17}) {
      INFO(t->name << ", count " << count);
      TypeLayout fast, mask;
      REQUIRE(mpix::typemap_layout(count, t->t, &fast).is_ok());
      REQUIRE(mpix::typemap_layout_by_mask(count, t->t, &mask).is_ok());
      CHECK(fast.lb == mask.lb);
      REQUIRE(fast.span == mask.span);
      std::vector<int> a = coverage(fast), b = coverage(mask);
      // Each byte once, except where the typemap itself repeats bytes (a send-only type).
      const bool overlaps = t->name.find("overlapping") != std::string::npos;
      std::size_t twice = 0, differ = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        twice += a[i] > 1;
        differ += (a[i] > 0) != (b[i] > 0);
      }
      CHECK(differ == 0);
      if (!overlaps) CHECK(twice == 0);
      for (int h : b) REQUIRE(h <= 1);  // the byte mask is a set
    }
  }
}

TEST_CASE("regular datatypes stay a few runs; dense ones are one copy", "[typemap]") {
  TypeLayout l;
  REQUIRE(mpix::typemap_layout(1000, MPI_DOUBLE, &l).is_ok());
  CHECK(l.dense());
  CHECK(l.span == 8000);

  MPI_Datatype t;
  MPI_Type_contiguous(9, MPI_INT, &t);
  Type contig(t, "contiguous");
  REQUIRE(mpix::typemap_layout(5, contig.t, &l).is_ok());
  CHECK(l.dense());

  MPI_Type_vector(100000, 2, 7, MPI_INT, &t);
  Type vec(t, "vector");
  REQUIRE(mpix::typemap_layout(1, vec.t, &l).is_ok());
  REQUIRE(l.runs.size() == 1);
  CHECK(l.runs[0].count == 100000);
  CHECK(l.runs[0].len == 8);
  CHECK(l.runs[0].stride == 28);

  int lens[] = {1, 3, 3};
  MPI_Aint disps[] = {0, 8, 32};
  MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype s;
  MPI_Type_create_struct(3, lens, disps, types, &s);
  MPI_Type_create_resized(s, 0, 40, &t);
  MPI_Type_free(&s);
  Type particle(t, "particle");
  REQUIRE(mpix::typemap_layout(1000, particle.t, &l).is_ok());
  CHECK(l.runs.size() == 2);  // the ints and the doubles+chars, each strided over the elements

  int sizes[] = {64, 64, 64}, sub[] = {64, 64, 1}, starts[] = {0, 0, 5};
  MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  Type face(t, "x face");
  REQUIRE(mpix::typemap_layout(1, face.t, &l).is_ok());
  REQUIRE(l.runs.size() == 1);
  CHECK(l.runs[0].count == 64 * 64);
}

TEST_CASE("an empty typemap copies nothing; a negative extent is refused", "[typemap]") {
  MPI_Datatype t;
  MPI_Type_contiguous(0, MPI_INT, &t);
  Type empty(t, "empty");
  TypeLayout l;
  REQUIRE(mpix::typemap_layout(4, empty.t, &l).is_ok());
  CHECK(l.span == 0);
  REQUIRE(mpix::typemap_layout(0, MPI_INT, &l).is_ok());
  CHECK(l.span == 0);

  MPI_Datatype n;
  MPI_Type_create_resized(MPI_INT, 0, -8, &n);
  Type neg(n, "negative extent");
  mpix::Status st = mpix::typemap_layout(2, neg.t, &l);
  CHECK(st.code() == MPI_ERR_TYPE);
}

TEST_CASE("copies by runs write the typemap's bytes and leave the gaps alone", "[typemap]") {
  mpix::Backend *be = mpix::host_backend();
  std::unique_ptr<mpix::ExecStream> ex;
  REQUIRE(be->open_stream(nullptr, mpix::TriggerMode::memop, &ex).is_ok());
  for (const auto &t : all_types()) {
    for (int count : {1, 5}) {
      INFO(t->name << ", count " << count);
      TypeLayout l;
      REQUIRE(mpix::typemap_layout(count, t->t, &l).is_ok());
      if (l.dense()) continue;
      std::vector<int> cov = coverage(l);
      std::vector<unsigned char> src(l.span), dst_async(l.span, 0xA5), dst_sync(l.span, 0xA5);
      for (std::size_t i = 0; i < l.span; ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
      REQUIRE(
          ex->copy_runs_async(dst_async.data(), src.data(), l.runs.data(), l.runs.size()).is_ok());
      REQUIRE(ex->synchronize().is_ok());
      REQUIRE(
          be->copy_runs_sync(dst_sync.data(), src.data(), l.runs.data(), l.runs.size()).is_ok());
      std::size_t bad = 0;
      for (std::size_t i = 0; i < l.span; ++i) {
        const unsigned char want = cov[i] ? src[i] : 0xA5;
        bad += (dst_async[i] != want) + (dst_sync[i] != want);
      }
      CHECK(bad == 0);
    }
  }
}
