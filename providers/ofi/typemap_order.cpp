#include "providers/ofi/typemap_order.hpp"

#include <vector>

namespace mpix {
namespace {

using i64 = long long;

// A typemap walked in order, summed up: nothing (empty), one ascending gap-free run of len
// bytes at off (from the element's origin), or anything else (broken).
struct Seg {
  enum Kind { empty, run, broken } kind = empty;
  i64 off = 0, len = 0;
};

constexpr int kMaxDepth = 32;

Seg broken() { return Seg{Seg::broken, 0, 0}; }

// @p b after @p a in typemap order.
Seg then(Seg a, Seg b) {
  if (a.kind == Seg::broken || b.kind == Seg::broken) return broken();
  if (a.kind == Seg::empty) return b;
  if (b.kind == Seg::empty) return a;
  if (a.off + a.len != b.off) return broken();
  return Seg{Seg::run, a.off, a.len + b.len};
}

Seg shift(Seg s, i64 by) {
  if (s.kind == Seg::run) s.off += by;
  return s;
}

// @p n copies of @p s, @p step bytes apart.
Seg repeat(Seg s, i64 n, i64 step) {
  if (n <= 0 || s.kind == Seg::empty) return Seg{};
  if (s.kind == Seg::broken) return s;
  if (n == 1) return s;
  if (step != s.len) return broken();
  return Seg{Seg::run, s.off, s.len * n};
}

bool named(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
  return comb == MPI_COMBINER_NAMED;
}

struct Contents {
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  ~Contents() {
    for (MPI_Datatype &t : types)
      if (t != MPI_DATATYPE_NULL && !named(t)) MPI_Type_free(&t);
  }
};

Status extent_of(MPI_Datatype t, i64 *ext) {
  MPI_Count lb = 0, e = 0;
  MPIX_MPI_CHECK(MPI_Type_get_extent_x(t, &lb, &e));
  *ext = e;
  return {};
}

Status walk(MPI_Datatype t, int depth, Seg *out) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  MPIX_MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  if (comb == MPI_COMBINER_NAMED) {
    MPI_Count size = 0, tlb = 0, text = 0;
    MPIX_MPI_CHECK(MPI_Type_size_x(t, &size));
    MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(t, &tlb, &text));
    if (size == 0) *out = Seg{};
    else if (size == text) *out = Seg{Seg::run, tlb, size};
    else *out = broken();  // a pair type with a hole (MPI_SHORT_INT, ...)
    return {};
  }
  if (depth >= kMaxDepth) {
    *out = broken();
    return {};
  }
  Contents c;
  c.ints.resize(static_cast<std::size_t>(ni));
  c.addrs.resize(static_cast<std::size_t>(na));
  c.types.assign(static_cast<std::size_t>(nd), MPI_DATATYPE_NULL);
  MPIX_MPI_CHECK(
      MPI_Type_get_contents(t, ni, na, nd, c.ints.data(), c.addrs.data(), c.types.data()));
  const std::vector<int> &I = c.ints;
  const std::vector<MPI_Aint> &A = c.addrs;
  Seg elem;
  i64 ext = 0;
  auto old = [&](MPI_Datatype o) -> Status {
    MPIX_TRY(extent_of(o, &ext));
    return walk(o, depth + 1, &elem);
  };
  switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the bounds change, the typemap does not
      return walk(c.types[0], depth + 1, out);
    case MPI_COMBINER_CONTIGUOUS:
      MPIX_TRY(old(c.types[0]));
      *out = repeat(elem, I[0], ext);
      return {};
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      MPIX_TRY(old(c.types[0]));
      const i64 stride = comb == MPI_COMBINER_VECTOR ? I[2] * ext : A[0];
      *out = repeat(repeat(elem, I[1], ext), I[0], stride);
      return {};
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      MPIX_TRY(old(c.types[0]));
      const int n = I[0];
      Seg acc;
      for (int i = 0; i < n && acc.kind != Seg::broken; ++i) {
        const i64 disp = comb == MPI_COMBINER_INDEXED ? I[1 + n + i] * ext : A[i];
        acc = then(acc, shift(repeat(elem, I[1 + i], ext), disp));
      }
      *out = acc;
      return {};
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      MPIX_TRY(old(c.types[0]));
      const Seg block = repeat(elem, I[1], ext);
      Seg acc;
      for (int i = 0; i < I[0] && acc.kind != Seg::broken; ++i) {
        const i64 disp = comb == MPI_COMBINER_INDEXED_BLOCK ? I[2 + i] * ext : A[i];
        acc = then(acc, shift(block, disp));
      }
      *out = acc;
      return {};
    }
    case MPI_COMBINER_STRUCT: {
      Seg acc;
      for (int i = 0; i < I[0] && acc.kind != Seg::broken; ++i) {
        Seg field;
        i64 fext = 0;
        MPIX_TRY(extent_of(c.types[i], &fext));
        MPIX_TRY(walk(c.types[i], depth + 1, &field));
        acc = then(acc, shift(repeat(field, I[1 + i], fext), A[i]));
      }
      *out = acc;
      return {};
    }
    case MPI_COMBINER_SUBARRAY: {
      // ints: ndims, sizes, subsizes, starts, order; the fastest-varying dimension innermost.
      MPIX_TRY(old(c.types[0]));
      const int n = I[0];
      const bool c_order = I[1 + 3 * n] == MPI_ORDER_C;
      Seg cur = elem;
      i64 stride = ext;
      for (int k = 0; k < n; ++k) {
        const int d = c_order ? n - 1 - k : k;
        cur = shift(repeat(cur, I[1 + n + d], stride), I[1 + 2 * n + d] * stride);
        stride *= I[1 + d];
      }
      *out = cur;
      return {};
    }
    default:  // darray, Fortran types, ...: MPI_Pack knows
      *out = broken();
      return {};
  }
}

}  // namespace

Status typemap_in_order(int count, MPI_Datatype dt, bool *in_order, MPI_Aint *start) {
  *in_order = false;
  *start = 0;
  Seg one;
  MPIX_TRY(walk(dt, 0, &one));
  i64 ext = 0;
  MPIX_TRY(extent_of(dt, &ext));
  const Seg all = repeat(one, count, ext);
  if (all.kind == Seg::broken) return {};
  *in_order = true;
  if (all.kind == Seg::run) *start = static_cast<MPI_Aint>(all.off);
  return {};
}

}  // namespace mpix
