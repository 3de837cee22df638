#include "core/typemap.hpp"

#include <algorithm>
#include <cstdint>

#include "base/log.hpp"
#include "base/tls_fast.hpp"

namespace mpix {
namespace {

using i64 = long long;

// Blocks of `len` bytes at off + k * stride, k < count; offsets from the buffer pointer.
struct Run {
  i64 off, len, stride, count;
};
using Runs = std::vector<Run>;

// Nesting deeper than this is decoded by the byte mask instead of recursion.
constexpr int kMaxDepth = 32;
// A replicated list of at most this many blocks is also tried block by block, interleaved,
// which can fold it into fewer runs (a vector of a struct with one gap, say).
constexpr i64 kTryInterleaved = 256;
// The byte-mask method allocates twice this at most.
constexpr i64 kMaxMaskBytes = i64{1} << 30;

bool is_named(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
  return comb == MPI_COMBINER_NAMED;
}

struct Extents {
  i64 size = 0, lb = 0, ext = 0, tlb = 0, text = 0;
};

Status extents(MPI_Datatype t, Extents *e) {
  MPI_Count size = 0, lb = 0, ext = 0, tlb = 0, text = 0;
  MPIX_MPI_CHECK(MPI_Type_size_x(t, &size));
  MPIX_MPI_CHECK(MPI_Type_get_extent_x(t, &lb, &ext));
  MPIX_MPI_CHECK(MPI_Type_get_true_extent_x(t, &tlb, &text));
  *e = Extents{size, lb, ext, tlb, text};
  return {};
}

// What MPI_Type_get_contents hands back; the derived datatypes among it are ours to free.
struct Contents {
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;

  Status load(MPI_Datatype t, int ni, int na, int nd) {
    ints.resize(static_cast<std::size_t>(ni));
    addrs.resize(static_cast<std::size_t>(na));
    types.assign(static_cast<std::size_t>(nd), MPI_DATATYPE_NULL);
    MPIX_MPI_CHECK(MPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()));
    return {};
  }
  ~Contents() {
    for (MPI_Datatype &t : types)
      if (t != MPI_DATATYPE_NULL && !is_named(t)) MPI_Type_free(&t);
  }
};

// A run in canonical form: positive stride, blocks that touch folded into one, empty ones
// dropped (count 0 then).
Run canonical(Run r) {
  if (r.len <= 0 || r.count <= 0) return Run{0, 0, 0, 0};
  if (r.count > 1 && r.stride < 0) {
    r.off += (r.count - 1) * r.stride;
    r.stride = -r.stride;
  }
  if (r.count > 1 && r.stride == 0) r.count = 1;  // the same bytes again (a send may do that)
  if (r.count > 1 && r.stride == r.len) {
    r.len *= r.count;
    r.count = 1;
  }
  if (r.count == 1) r.stride = 0;
  return r;
}

// Appends @p r to @p out, folding it into the last run where the result covers exactly the
// bytes of both: every rule below only renames the same set of blocks.
void append(Runs &out, Run r) {
  r = canonical(r);
  if (r.count == 0) return;
  if (!out.empty() && r.count == 1) {
    Run &p = out.back();
    if (p.count == 1 && p.off + p.len == r.off) {  // touching blocks
      p.len += r.len;
      return;
    }
    if (r.len == p.len && p.count == 1 && r.off >= p.off + p.len) {  // a second block
      p.stride = r.off - p.off;
      p.count = 2;
      return;
    }
    if (r.len == p.len && p.count > 1 && r.off == p.off + p.count * p.stride) {  // one more
      ++p.count;
      return;
    }
  }
  out.push_back(r);
}

// @p n copies of @p in, @p step bytes apart, the first @p shift bytes along, appended to @p out.
void replicate(const Runs &in, i64 n, i64 step, i64 shift, Runs &out) {
  if (n <= 0) return;
  if (n == 1) {
    for (const Run &r : in) append(out, Run{r.off + shift, r.len, r.stride, r.count});
    return;
  }
  // One run per run of `in`, where a run of `in` extends over the copies as a strided run.
  Runs by_run;
  for (const Run &r : in) {
    const i64 off = r.off + shift;
    if (r.count == 1) {
      append(by_run, Run{off, r.len, step, n});
    } else if (r.stride * r.count == step) {
      append(by_run, Run{off, r.len, r.stride, r.count * n});
    } else {
      for (i64 k = 0; k < n; ++k) append(by_run, Run{off + k * step, r.len, r.stride, r.count});
    }
  }
  // Copies in address order instead, when that is cheap to try: blocks of several runs of `in`
  // may line up into one stride across the copies.
  i64 blocks = 0;
  for (const Run &r : in) blocks += r.count;
  if (in.size() > 1 && blocks * n <= kTryInterleaved) {
    Runs interleaved;
    for (i64 k = 0; k < n; ++k)
      for (const Run &r : in)
        for (i64 j = 0; j < r.count; ++j)
          append(interleaved, Run{r.off + shift + k * step + j * r.stride, r.len, 0, 1});
    if (interleaved.size() < by_run.size()) by_run.swap(interleaved);
  }
  for (const Run &r : by_run) append(out, r);
}

// The blocks of @p count elements of @p t, by packing 0xFF bytes and unpacking them into a
// zeroed buffer: whatever the datatype, MPI itself says which bytes it touches.
Status mask_runs(int count, MPI_Datatype t, Runs &out) {
  Extents e;
  MPIX_TRY(extents(t, &e));
  if (count <= 0 || e.size == 0) return {};
  if (e.ext < 0 || e.text < 0)
    return make_status(MPI_ERR_TYPE, "a datatype with a negative extent cannot be staged");
  const i64 span = e.text + (count - 1) * e.ext;
  if (span > kMaxMaskBytes)
    return make_status(MPI_ERR_TYPE,
                       "cannot map the typemap of a %lld-byte datatype span "
                       "(its constructor is not decoded and the span is over %lld bytes)",
                       span, kMaxMaskBytes);
  // A datatype from MPI_Type_get_contents may be uncommitted: pack with a committed duplicate.
  MPI_Datatype c = t;
  const bool dup = !is_named(t);
  if (dup) {
    MPIX_MPI_CHECK(MPI_Type_dup(t, &c));
    int rc = MPI_Type_commit(&c);
    if (rc != MPI_SUCCESS) {
      MPI_Type_free(&c);
      return mpi_status(rc, "MPI_Type_commit", __FILE__, __LINE__);
    }
  }
  std::vector<unsigned char> src(static_cast<std::size_t>(span), 0xFF),
      mask(static_cast<std::size_t>(span), 0);
  int psize = 0;
  int rc = MPI_Pack_size(count, c, MPI_COMM_SELF, &psize);
  std::vector<char> packed(static_cast<std::size_t>(std::max(psize, 1)));
  int pos = 0, upos = 0;
  // The buffers hold the span from the true lower bound; MPI addresses them from buf + lb.
  if (rc == MPI_SUCCESS)
    rc = MPI_Pack(src.data() - e.tlb, count, c, packed.data(), psize, &pos, MPI_COMM_SELF);
  if (rc == MPI_SUCCESS)
    rc = MPI_Unpack(packed.data(), pos, &upos, mask.data() - e.tlb, count, c, MPI_COMM_SELF);
  if (dup) MPI_Type_free(&c);
  if (rc != MPI_SUCCESS)
    return mpi_status(rc, "MPI_Pack / MPI_Unpack of a byte mask", __FILE__, __LINE__);
  for (i64 i = 0; i < span;) {
    if (!mask[static_cast<std::size_t>(i)]) {
      ++i;
      continue;
    }
    i64 j = i;
    while (j < span && mask[static_cast<std::size_t>(j)]) ++j;
    append(out, Run{e.tlb + i, j - i, 0, 1});
    i = j;
  }
  return {};
}

// The runs of one element of @p t, offsets from the element's origin.
Status decode(MPI_Datatype t, Runs &out, int depth) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  MPIX_MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  if (comb == MPI_COMBINER_NAMED) {
    Extents e;
    MPIX_TRY(extents(t, &e));
    if (e.size == e.text) {
      append(out, Run{e.tlb, e.size, 0, 1});
      return {};
    }
    return mask_runs(1, t, out);  // a pair type with a hole (MPI_SHORT_INT ...)
  }
  if (depth >= kMaxDepth) return mask_runs(1, t, out);
  Contents c;
  MPIX_TRY(c.load(t, ni, na, nd));
  // The element the constructor repeats (most constructors have one), and its extent.
  Runs elem;
  Extents old;
  auto load_old = [&](MPI_Datatype o) -> Status {
    MPIX_TRY(extents(o, &old));
    return decode(o, elem, depth + 1);
  };
  const std::vector<int> &I = c.ints;
  const std::vector<MPI_Aint> &A = c.addrs;
  switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // bounds change, bytes do not
      return decode(c.types[0], out, depth + 1);
    case MPI_COMBINER_CONTIGUOUS:
      MPIX_TRY(load_old(c.types[0]));
      replicate(elem, I[0], old.ext, 0, out);
      return {};
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      MPIX_TRY(load_old(c.types[0]));
      const i64 stride = comb == MPI_COMBINER_VECTOR ? I[2] * old.ext : A[0];
      Runs block;
      replicate(elem, I[1], old.ext, 0, block);
      replicate(block, I[0], stride, 0, out);
      return {};
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      MPIX_TRY(load_old(c.types[0]));
      const int n = I[0];
      for (int i = 0; i < n; ++i) {
        const i64 disp = comb == MPI_COMBINER_INDEXED ? I[1 + n + i] * old.ext : A[i];
        replicate(elem, I[1 + i], old.ext, disp, out);
      }
      return {};
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      MPIX_TRY(load_old(c.types[0]));
      Runs block;
      replicate(elem, I[1], old.ext, 0, block);
      for (int i = 0; i < I[0]; ++i) {
        const i64 disp = comb == MPI_COMBINER_INDEXED_BLOCK ? I[2 + i] * old.ext : A[i];
        replicate(block, 1, 0, disp, out);
      }
      return {};
    }
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < I[0]; ++i) {
        Runs field;
        Extents fe;
        MPIX_TRY(extents(c.types[i], &fe));
        MPIX_TRY(decode(c.types[i], field, depth + 1));
        replicate(field, I[1 + i], fe.ext, A[i], out);
      }
      return {};
    case MPI_COMBINER_SUBARRAY: {
      // ints: ndims, sizes[ndims], subsizes[ndims], starts[ndims], order. Dimensions from the
      // fastest-varying out, each one a replication of the one inside it.
      MPIX_TRY(load_old(c.types[0]));
      const int nd_ = I[0];
      const bool c_order = I[1 + 3 * nd_] == MPI_ORDER_C;
      Runs cur = std::move(elem);
      i64 stride = old.ext;
      for (int k = 0; k < nd_; ++k) {
        const int d = c_order ? nd_ - 1 - k : k;
        Runs next;
        replicate(cur, I[1 + nd_ + d], stride, I[1 + 2 * nd_ + d] * stride, next);
        cur.swap(next);
        stride *= I[1 + d];
      }
      for (const Run &r : cur) append(out, r);
      return {};
    }
    default:  // darray, Fortran types, ...: let MPI say
      return mask_runs(1, t, out);
  }
}

// Fills @p out from @p runs (offsets from buf) for a span starting at buf + @p tlb; false if a
// run leaves the span, which a correct decoding never does.
bool to_layout(const Runs &runs, i64 tlb, i64 span, TypeLayout *out) {
  out->runs.clear();
  out->runs.reserve(runs.size());
  for (const Run &r : runs) {
    const i64 off = r.off - tlb;
    if (off < 0 || off + (r.count - 1) * r.stride + r.len > span) return false;
    out->runs.push_back(CopyRun{static_cast<uint64_t>(off), static_cast<uint64_t>(r.len),
                                static_cast<uint64_t>(r.stride), static_cast<uint64_t>(r.count)});
  }
  // One block over the whole span: dense, a single copy.
  if (out->runs.size() == 1 && out->runs[0].count == 1 && out->runs[0].offset == 0 &&
      out->runs[0].len == static_cast<uint64_t>(span))
    out->runs.clear();
  return true;
}

// The dense predefined datatypes a thread staged lately, by handle, with their size: a
// predefined type is never freed, so its handle names it for the whole run, and the layout of a
// count of it needs no MPI call (three extent queries and an envelope each time, before).
struct DenseNamed {
  MPI_Datatype dt;
  i64 size;
};
constexpr int kDenseNamedSlots = 4;
MPIX_TLS_FAST thread_local DenseNamed t_dense_named[kDenseNamedSlots];
MPIX_TLS_FAST thread_local unsigned t_dense_named_next;

const DenseNamed *dense_named_find(MPI_Datatype dt) {
  for (const DenseNamed &d : t_dense_named)
    if (d.dt == dt && d.size > 0) return &d;
  return nullptr;
}

Status layout_common(int count, MPI_Datatype dt, bool mask_only, TypeLayout *out) {
  if (!mask_only)
    if (const DenseNamed *d = dense_named_find(dt)) {
      out->lb = 0;
      out->span = count > 0 ? static_cast<std::size_t>(d->size * count) : 0;
      out->runs.clear();
      return {};
    }
  Extents e;
  MPIX_TRY(extents(dt, &e));
  if (e.ext < 0 || e.text < 0)
    return make_status(MPI_ERR_TYPE,
                       "device buffers with a negative-extent datatype cannot be "
                       "staged");
  *out = TypeLayout{};
  out->lb = static_cast<std::ptrdiff_t>(e.tlb);
  // No bytes at all (an empty typemap may still have an extent): nothing to copy.
  if (count <= 0 || e.size == 0) return {};
  const i64 span = e.text + (count - 1) * e.ext;
  out->span = static_cast<std::size_t>(span);
  // The fast path: a predefined type without holes, elements back to back.
  if (!mask_only && e.size == e.text && (count == 1 || e.ext == e.size) && is_named(dt)) {
    if (e.ext == e.size && e.tlb == 0)
      t_dense_named[t_dense_named_next++ % kDenseNamedSlots] = DenseNamed{dt, e.size};
    return {};
  }
  Runs runs;
  if (!mask_only) {
    Runs elem;
    MPIX_TRY(decode(dt, elem, 0));
    replicate(elem, count, e.ext, 0, runs);
    // A check of the decoding: the runs hold as many bytes as the typemap (MPI's size counts a
    // byte that overlapping entries repeat as often as they repeat it, and so do the runs; such
    // a typemap is legal for a send only, whose copy then reads those bytes twice). Should the
    // decoding ever disagree, the byte mask decides.
    i64 bytes = 0;
    for (const Run &r : runs) bytes += r.len * r.count;
    if (bytes == e.size * count && to_layout(runs, e.tlb, span, out)) return {};
    MPIX_LOG(debug, "stream",
             "datatype covers %lld bytes in %zu runs, size says %lld: taking "
             "its typemap from a byte mask",
             bytes, runs.size(), e.size * count);
    runs.clear();
  }
  MPIX_TRY(mask_runs(count, dt, runs));
  if (!to_layout(runs, e.tlb, span, out))
    return make_status(MPI_ERR_INTERN, "the byte mask of a datatype leaves its true extent");
  return {};
}

}  // namespace

Status typemap_layout(int count, MPI_Datatype dt, TypeLayout *out) {
  return layout_common(count, dt, false, out);
}

Status typemap_layout_by_mask(int count, MPI_Datatype dt, TypeLayout *out) {
  return layout_common(count, dt, true, out);
}

}  // namespace mpix
