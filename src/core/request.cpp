#include "core/request.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/log.hpp"
#include "base/spin_lock.hpp"
#include "core/op.hpp"
#include "core/runtime.hpp"
#include "core/stager.hpp"
#include "core/stream.hpp"

namespace mpix {

// MPI_Request -> Op, open addressing with linear probing over a power-of-two table: no
// allocation per request in steady state (a node-based map allocates on every insert and frees
// on every erase, on the enqueue path). An erase shifts the entries after it back (Knuth's
// algorithm R), so there are no tombstones and the table is rebuilt only to grow.
class RequestTable {
 public:
  // Guards all below (the table is the Runtime's, core/runtime.hpp). Every section is a few
  // probes of the table (a rebuild, rarely): a spin lock, taken on every enqueue and free.
  SpinLock mu;
  // Entries that are spare requests (Op::spare_request, request_make_spare): entered when the
  // agent makes them, so that an enqueue taking one has no table work. Not counted by
  // request_count. Changed under mu, except by request_start, which takes a spare without it.
  std::atomic<std::ptrdiff_t> spares{0};

  void insert(MPI_Request r, Op *op) {
    if (4 * (live_ + 1) > slots_.size()) rebuild();  // at most a quarter full: short runs
    for (std::size_t i = home(r);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.op && s.key == r) {  // a stale entry for a reused handle: replace it
        s.op = op;
        return;
      }
      if (!s.op) {
        s = Slot{r, op};
        ++live_;
        return;
      }
    }
  }
  // The op of @p r, or null; removes the entry when @p take.
  Op *find(MPI_Request r, bool take) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(r);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (!s.op) return nullptr;
      if (s.key == r) {
        Op *op = s.op;
        if (take) erase_at(i);
        return op;
      }
    }
  }
  std::size_t size() const { return live_; }
  // Removes @p r only if it still maps to @p op.
  void erase(MPI_Request r, Op *op) {
    if (slots_.empty()) return;
    for (std::size_t i = home(r);; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (!s.op) return;
      if (s.key == r) {
        if (s.op == op) erase_at(i);
        return;
      }
    }
  }

 private:
  struct Slot {
    MPI_Request key;
    Op *op;  // null: empty
  };

  std::size_t home(MPI_Request r) const {
    uint64_t bits = 0;
    static_assert(sizeof(MPI_Request) <= sizeof bits, "handle larger than 64 bits");
    std::memcpy(&bits, &r, sizeof r);
    // Fibonacci hashing: request handles (pointers, or small integers) spread over the table.
    // The product's top bits are the well-mixed ones: its middle bits cluster some allocators'
    // handle patterns (long probe runs for Open MPI's requests made on another thread).
    return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // Empties slot @p i, moving back each later entry of the run whose home is not cyclically in
  // (i, j], so that every entry stays reachable from its home without crossing an empty slot.
  void erase_at(std::size_t i) {
    for (std::size_t j = i;;) {
      j = (j + 1) & mask_;
      if (!slots_[j].op) break;
      const std::size_t k = home(slots_[j].key);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{MPI_REQUEST_NULL, nullptr};
    --live_;
  }
  void rebuild() {
    std::size_t cap = 256;
    while (cap < 8 * (live_ + 1)) cap <<= 1;
    std::vector<Slot> old(cap, Slot{MPI_REQUEST_NULL, nullptr});
    old.swap(slots_);
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
    live_ = 0;
    for (const Slot &s : old)
      if (s.op) insert(s.key, s.op);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0, live_ = 0;
  unsigned shift_ = 56;  // 64 - log2(table size): home() keeps the hash's top bits
};

// Spare requests kept at most by request_recycle: each holds an op and an MPI request until
// MPI_Finalize (~0.5 KiB together). Enough for 10,000 sends and 10,000 receives in flight at
// once; past it, a consumed request is completed and freed as before.
constexpr std::ptrdiff_t kMaxSpares = 32768;

PartPtr<RequestTable> request_table_make() { return PartPtr<RequestTable>(new RequestTable); }
void part_delete(RequestTable *t) { delete t; }

namespace {

// Null before runtime_init and after MPI_Finalize: no handle is an mpix request then.
RequestTable *requests() {
  Runtime *rt = runtime_current();
  return rt ? &rt->requests() : nullptr;
}

int query_fn(void *extra, MPI_Status *status) {
  auto *op = static_cast<Op *>(extra);
  // MPI calls this after MPI_Grequest_complete, which the agent calls after publishing
  // kOpCompleted: the acquire makes the agent's writes of op->status visible here in terms the
  // C++ memory model (and ThreadSanitizer, which cannot see inside libmpi) understands.
  (void)op->flags.load(std::memory_order_acquire);
  // Completed on the host (MPI_Wait / MPI_Test), not by a stream wait: a staged receive's data
  // is still in its bounce buffer. MPI calls this on the waiting user thread, where the GPU
  // runtime may be called.
  // The op's own result is the agent's and final: read, never written here (the agent may
  // still be reading it after MPI_Grequest_complete, ordered only inside libmpi).
  int err = op->status.MPI_ERROR;
  if (op->stager) {
    Status st = op->stager->on_host_wait();
    if (!st.is_ok()) {
      MPIX_LOG(error, "api", "copying a staged receive into device memory: %s", st.what().c_str());
      if (err == MPI_SUCCESS)
        err = mpi_error_code(make_status(st.code(),
                                         "%s: copying the received data into device memory: %s",
                                         op->call, st.what().c_str()));
    }
  }
  // Carried as bytes: MPI libraries disagree on what MPI_Status_set_elements_x counts for a
  // derived datatype (MPICH 4.0 takes whole datatypes, Open MPI basic elements); for MPI_BYTE
  // they agree, and MPI_Get_count / MPI_Get_elements then derive the rest from the bytes.
  MPI_Count n = 0;
  if (op->kind == OpKind::recv && err == MPI_SUCCESS &&
      MPI_Get_elements_x(&op->status, MPI_BYTE, &n) != MPI_SUCCESS)
    n = 0;
  // A host wait also reports an earlier blocking op's failure on the same stream, once.
  if (err == MPI_SUCCESS)
    if (const int code = op->stream->take_wait_error()) err = code;
  status->MPI_SOURCE = op->status.MPI_SOURCE;
  status->MPI_TAG = op->status.MPI_TAG;
  status->MPI_ERROR = err;
  MPI_Status_set_cancelled(status, 0);
  MPI_Status_set_elements_x(status, MPI_BYTE, n);
  // Open MPI may run free_fn - and so retire the op - on the agent thread, inside its
  // MPI_Grequest_complete, right after this thread's MPI_Test / MPI_Wait: its own reference count
  // orders that, invisibly to ThreadSanitizer. A release on refs orders this callback's reads
  // before the deletion in C++ terms too (op_unref's fetch_sub acquires).
  op->refs.fetch_add(0, std::memory_order_release);
  return err;
}

int free_fn(void *extra) {
  auto *op = static_cast<Op *>(extra);
  // A spare request let go unused (request_drop_spare): its op is retired, and no request
  // handed out refers to it. A request handed out holds a reference, so its op is never retired
  // before this callback.
  if (op->state.load(std::memory_order_relaxed) == OpState::retired) return MPI_SUCCESS;
  if (RequestTable *t = requests()) {
    std::lock_guard<SpinLock> lk(t->mu);
    t->erase(op->grequest, op);
  }
  op_unref(op);
  return MPI_SUCCESS;
}

int cancel_fn(void *extra, int complete) {
  // Cancelling a completed request has no effect (MPI). An incomplete enqueued op is not
  // withdrawn (the stream still passes through it): refused with an error, so that the caller
  // does not wait for a cancellation that never happens; the op completes normally.
  if (complete) return MPI_SUCCESS;
  const auto *op = static_cast<const Op *>(extra);
  MPIX_LOG(warn, "api",
           "MPI_Cancel: an mpix enqueued %s (peer %d, tag %d) cannot be cancelled; "
           "it stays in stream order and completes normally",
           op_kind_name(op->kind), op->peer, op->tag);
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

// @p r, @p op's spare request, into the table (an enqueue taking it then has no table work).
void add_spare(RequestTable &t, MPI_Request r, Op *op) {
  std::lock_guard<SpinLock> lk(t.mu);
  t.insert(r, op);
  t.spares.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Status request_start(Op *op) {
  Runtime &rt = runtime();
  op->refs.fetch_add(1);
  RequestTable &t = rt.requests();
  if (op->spare_request != MPI_REQUEST_NULL) {
    // In the table already, mapped to this op (request_make_spare).
    op->grequest = op->spare_request;
    op->spare_request = MPI_REQUEST_NULL;
    t.spares.fetch_sub(1, std::memory_order_relaxed);
    return {};
  }
  int rc = rt.mpi().grequest_start(query_fn, free_fn, cancel_fn, op, &op->grequest);
  if (rc != MPI_SUCCESS) {
    op->refs.fetch_sub(1);
    return mpi_status(rc, "MPI_Grequest_start", __FILE__, __LINE__);
  }
  std::lock_guard<SpinLock> lk(t.mu);
  t.insert(op->grequest, op);
  return {};
}

bool request_make_spare(Op *op) {
  Runtime &rt = runtime();
  if (rt.mpi().grequest_start(query_fn, free_fn, cancel_fn, op, &op->spare_request) != MPI_SUCCESS)
    return false;
  add_spare(rt.requests(), op->spare_request, op);
  return true;
}

bool request_recycle(Op *op) {
  RequestTable *t = requests();
  if (!t || t->spares.load(std::memory_order_relaxed) >= kMaxSpares) return false;
  add_spare(*t, op->grequest, op);  // taken out by the stream wait (request_find_all)
  op->spare_request = op->grequest;
  op->grequest = MPI_REQUEST_NULL;
  return true;
}

void request_drop_spare(Op *op) {
  MPI_Request r = op->spare_request;
  op->spare_request = MPI_REQUEST_NULL;
  Runtime *rt = runtime_current();
  if (!rt) return;  // MPI is finalised: nothing left to free
  {
    RequestTable &t = rt->requests();
    std::lock_guard<SpinLock> lk(t.mu);
    t.erase(r, op);
    t.spares.fetch_sub(1, std::memory_order_relaxed);
  }
  MpiCalls &mpi = rt->mpi();
  int rc = mpi.grequest_complete(r);
  if (rc == MPI_SUCCESS) rc = mpi.request_free(&r);
  if (rc != MPI_SUCCESS)
    MPIX_LOG(error, "api", "freeing a spare generalized request failed (%d)", rc);
}

Op *request_find(MPI_Request req, bool take) {
  RequestTable *t = requests();
  if (!t) return nullptr;
  std::lock_guard<SpinLock> lk(t->mu);
  return t->find(req, take);
}

int request_find_all(int n, const MPI_Request *reqs, Op **ops, bool take) {
  RequestTable *t = requests();
  if (!t) {
    for (int i = 0; i < n; ++i) {
      ops[i] = nullptr;
      if (reqs[i] != MPI_REQUEST_NULL) return i;
    }
    return -1;
  }
  std::lock_guard<SpinLock> lk(t->mu);
  for (int i = 0; i < n; ++i) {
    ops[i] = reqs[i] == MPI_REQUEST_NULL ? nullptr : t->find(reqs[i], take);
    if (reqs[i] != MPI_REQUEST_NULL && !ops[i]) {
      // Put back what was taken (a handle listed twice is found once only).
      if (take)
        for (int k = 0; k < i; ++k)
          if (ops[k]) t->insert(reqs[k], ops[k]);
      return i;
    }
  }
  return -1;
}

void request_complete(Op *op, bool free_now) {
  // Copy the handle: free_fn (run inside MPI_Request_free) may drop the last reference.
  MPI_Request r = op->grequest;
  MpiCalls &mpi = runtime().mpi();
  int rc = mpi.grequest_complete(r);
  if (rc != MPI_SUCCESS) MPIX_LOG(error, "agent", "MPI_Grequest_complete failed (%d)", rc);
  if (free_now) {
    rc = mpi.request_free(&r);
    if (rc != MPI_SUCCESS) MPIX_LOG(error, "agent", "MPI_Request_free failed (%d)", rc);
  }
}

void request_free(MPI_Request r) {
  int rc = runtime().mpi().request_free(&r);
  if (rc != MPI_SUCCESS) MPIX_LOG(error, "api", "MPI_Request_free failed (%d)", rc);
}

std::size_t request_count() {
  RequestTable *t = requests();
  if (!t) return 0;
  std::lock_guard<SpinLock> lk(t->mu);
  return t->size() - static_cast<std::size_t>(t->spares.load(std::memory_order_relaxed));
}

}  // namespace mpix
