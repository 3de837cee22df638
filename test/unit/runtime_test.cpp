// The Runtime (core/runtime.hpp) in one process without MPI_Init: made with a fake provider and
// fake MPI calls (core/mpi_calls.hpp), on host streams, and destroyed; ops driven through every
// transition of their life (core/op.hpp) by the real agent thread and op functions, checking
// what each does: pending counts, completion word, request completion, retirement.
#include "core/runtime.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/signal_pool.hpp"
#include "catch.hpp"
#include "core/agent.hpp"
#include "core/comm_ctx.hpp"
#include "core/op.hpp"
#include "core/op_pool.hpp"
#include "core/provider.hpp"
#include "core/request.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"

using mpix::Op;
using mpix::OpState;

namespace {

// Generalized requests as MPI keeps them: free_fn runs once the request is both complete and
// freed, whichever comes second.
class FakeMpi final : public mpix::MpiCalls {
 public:
  std::atomic<int> starts{0}, completes{0}, frees{0};

  int grequest_start(MPI_Grequest_query_function *, MPI_Grequest_free_function *free,
                     MPI_Grequest_cancel_function *, void *extra, MPI_Request *out) override {
    ++starts;
    std::lock_guard<std::mutex> lk(mu_);
    const uintptr_t key = 0x1000 + 16 * next_++;
    reqs_[key] = Req{free, extra, false, false};
    *out = handle(key);
    return MPI_SUCCESS;
  }
  int grequest_complete(MPI_Request r) override {
    ++completes;
    return settle(r, /*complete=*/true);
  }
  int request_free(MPI_Request *r) override {
    ++frees;
    const int rc = settle(*r, /*complete=*/false);
    *r = MPI_REQUEST_NULL;
    return rc;
  }
  void status_set_empty(MPI_Status &) override {}  // op_failed zeroed it already
  int error_class(int code) override { return code; }
  void error_string(int code, char text[MPI_MAX_ERROR_STRING]) override {
    std::snprintf(text, MPI_MAX_ERROR_STRING, "fake MPI error %d", code);
  }
  std::size_t live() {
    std::lock_guard<std::mutex> lk(mu_);
    return reqs_.size();
  }

 private:
  struct Req {
    MPI_Grequest_free_function *free;
    void *extra;
    bool completed, freed;
  };
  static MPI_Request handle(uintptr_t key) {
    MPI_Request r = MPI_REQUEST_NULL;
    std::memcpy(&r, &key, sizeof r < sizeof key ? sizeof r : sizeof key);
    return r;
  }
  static uintptr_t key_of(MPI_Request r) {
    uintptr_t key = 0;
    std::memcpy(&key, &r, sizeof r < sizeof key ? sizeof r : sizeof key);
    return key;
  }
  int settle(MPI_Request r, bool complete) {
    Req done{};
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = reqs_.find(key_of(r));
      if (it == reqs_.end()) return MPI_ERR_REQUEST;
      (complete ? it->second.completed : it->second.freed) = true;
      if (!it->second.completed || !it->second.freed) return MPI_SUCCESS;
      done = it->second;
      reqs_.erase(it);
    }
    return done.free(done.extra);  // outside the lock: it retires the op
  }

  std::mutex mu_;
  std::map<uintptr_t, Req> reqs_;
  uintptr_t next_ = 0;
};

// What the fake provider saw; shared with the test because the Runtime keeps its provider
// past its own end (~Runtime).
struct Seen {
  std::atomic<int> fired{0}, shutdowns{0};
  std::atomic<int> state_at_fire{-1};
  std::atomic<bool> refuse_post{false};
  std::atomic<int> network_error{MPI_SUCCESS};
};

// Posts on fire() and completes every posted op at its next progress() call.
class FakeProvider final : public mpix::Provider {
 public:
  explicit FakeProvider(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
  const char *name() const override { return "fake"; }
  mpix::ProviderCaps caps() const override { return {}; }
  mpix::Status fire(Op &op) override {
    seen_->state_at_fire = static_cast<int>(op.state.load());
    ++seen_->fired;
    if (seen_->refuse_post) return mpix::make_status(MPI_ERR_OTHER, "the fake refuses to post");
    mpix::op_posted(op);
    posted_.push_back(&op);
    return {};
  }
  bool progress(std::vector<Op *> &done) override {
    if (posted_.empty()) return false;
    for (Op *op : posted_) {
      MPI_Status st{};
      st.MPI_SOURCE = op->peer;
      st.MPI_TAG = op->tag;
      st.MPI_ERROR = seen_->network_error;
      mpix::op_completed(*op, st);
      done.push_back(op);
    }
    posted_.clear();
    return true;
  }
  bool busy() const override { return !posted_.empty(); }
  void shutdown() override { ++seen_->shutdowns; }
  std::string describe() const override { return "fake provider (unit test)"; }

 private:
  std::shared_ptr<Seen> seen_;
  std::vector<Op *> posted_;  // agent thread only
};

bool eventually(const std::function<bool()> &cond) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A Runtime installed as the process's, with a host stream and a communicator context; the
// Runtime is destroyed at the end as MPI_Finalize destroys it.
struct Fixture {
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  FakeMpi *mpi = nullptr;
  std::shared_ptr<mpix::Stream> stream;
  std::shared_ptr<mpix::CommCtx> ctx = std::make_shared<mpix::CommCtx>();
  std::size_t words_before = 0;

  Fixture() {
    auto calls = std::make_unique<FakeMpi>();
    mpi = calls.get();
    mpix::runtime_install(
        std::make_unique<mpix::Runtime>(std::move(calls), std::make_unique<FakeProvider>(seen)));
    mpix::Backend *host = nullptr;
    REQUIRE(mpix::backend_get(mpix::StreamKind::host, &host).is_ok());
    std::unique_ptr<mpix::ExecStream> exec;
    REQUIRE(host->open_stream(nullptr, mpix::TriggerMode::memop, &exec).is_ok());
    stream =
        mpix::make_stream(mpix::stream_new_id(), mpix::StreamKind::host, host, std::move(exec));
    words_before = mpix::signal_pool().words_in_use();
  }
  ~Fixture() {
    stream.reset();
    ctx.reset();
    mpix::runtime_install(nullptr);
  }

  // An op as op_create leaves it: registered, with its completion word, counted as pending;
  // with a generalized request, or else blocking (a stream waits on it, no MPI_Status).
  // @p pooled: a retired op from one of the Runtime's pools instead of a new one.
  Op *make_op(bool with_request, Op *pooled = nullptr) {
    Op *op = pooled;
    if (op) {
      mpix::op_reuse(*op);
    } else {
      op = new Op;
      mpix::op_registry_add(op);
      op->done = mpix::signal_pool().acquire();
    }
    op->call = "unit_send";
    op->peer = 3;
    op->tag = 7;
    op->ctx = ctx;
    op->stream = stream;
    op->done_value = mpix::load_signal(op->done.word) + 1;
    {
      std::lock_guard<mpix::FutexLock> lk(stream->enqueue_mutex());
      op->threshold = stream->next_threshold();
    }
    stream->pending_ops.fetch_add(1);
    ctx->pending_ops.fetch_add(1);
    if (with_request) REQUIRE(mpix::request_start(op).is_ok());
    else op->flags.fetch_or(mpix::kOpWaitEnqueued);
    return op;
  }
  void submit(Op *op) {
    REQUIRE(mpix::agent_start().is_ok());
    mpix::agent_submit(op);
  }
  // The stream reaches the op's trigger (in stream order, on the host stream's thread).
  void trigger(const Op *op) {
    mpix::ExecStream *ex = nullptr;
    REQUIRE(stream->exec(&ex).is_ok());
    REQUIRE(ex->write_value(stream->trigger_word(), op->threshold).is_ok());
  }
  bool completed(const Op *op) { return completed(op->done.word, op->done_value); }
  // For an op that may be gone once complete: its word (signal memory is never freed).
  bool completed(const uint64_t *word, uint64_t value) {
    return eventually([&] { return mpix::load_signal(word) == value; });
  }
  // The user frees the request (MPI_Request_free) of a completed op.
  void user_frees(Op *op) {
    MPI_Request r = op->grequest;
    REQUIRE(mpix::request_find(r, /*take=*/false) == op);
    REQUIRE(mpi->request_free(&r) == MPI_SUCCESS);
  }
  void check_complete_effects(const Op *op) {
    CHECK(op->state.load() == OpState::complete);
    CHECK(stream->pending_ops.load() == 0);  // counts dropped
    CHECK(ctx->pending_ops.load() == 0);
    CHECK(op->ctx == nullptr);  // the communicator context is let go
  }
  void check_retired() {
    // The agent may drop its reference just after the user's: either one retires the op.
    CHECK(eventually([] { return mpix::op_registry_size() == 0; }));
    CHECK(mpix::request_count() == 0);
    // Requests left: the agent's spares (core/op_create.hpp, op_make_spare), each in a retired
    // op of the spare pool; the agent may be starting one just now.
    CHECK(eventually([&] { return mpi->live() == mpix::runtime().spare_pool()->size(); }));
    // The completion word is back, or kept with its op for reuse (core/op_pool.hpp). An op is
    // RETIRED (uncounted above) just before op_unref hands it to the pool: wait for that too.
    CHECK(eventually([&] {
      return mpix::signal_pool().words_in_use() == words_before +
                                                       mpix::runtime().op_pool()->size() +
                                                       mpix::runtime().spare_pool()->size();
    }));
  }
};

}  // namespace

TEST_CASE("a Runtime is made and destroyed in one process, more than once", "[runtime]") {
  for (int round = 0; round < 2; ++round) {
    auto seen = std::make_shared<Seen>();
    REQUIRE(mpix::runtime_current() == nullptr);
    mpix::runtime_install(
        std::make_unique<mpix::Runtime>(mpix::mpi_calls(), std::make_unique<FakeProvider>(seen)));
    REQUIRE(mpix::runtime_current() != nullptr);
    mpix::Provider *p = nullptr;
    REQUIRE(mpix::provider_get(&p).is_ok());
    CHECK(std::string(p->name()) == "fake");
    REQUIRE(mpix::agent_start().is_ok());  // starts the agent thread
    CHECK(mpix::runtime().agent_started() != nullptr);

    mpix::runtime_install(nullptr);  // MPI_Finalize's teardown
    CHECK(mpix::runtime_current() == nullptr);
    CHECK(seen->shutdowns.load() == 1);  // after the agent stopped
    // Nothing is left to find, and nothing starts again.
    CHECK(mpix::request_find(MPI_REQUEST_NULL, false) == nullptr);
    CHECK(mpix::stream_lookup(1) == nullptr);
    CHECK(mpix::op_registry_size() == 0);
    CHECK_FALSE(mpix::agent_start().is_ok());
    CHECK_FALSE(mpix::provider_get(&p).is_ok());
  }
}

TEST_CASE("op_advance takes every transition of the table and refuses all others", "[runtime]") {
  Fixture f;
  int legal = 0;
  for (int from = 0; from < mpix::kOpStates; ++from)
    for (int to = 0; to < mpix::kOpStates; ++to) {
      const auto a = static_cast<OpState>(from), b = static_cast<OpState>(to);
      INFO(mpix::op_state_name(a) << " -> " << mpix::op_state_name(b));
      Op op;
      op.state.store(a);
      const bool ok = mpix::op_advance(op, b);
      CHECK(ok == mpix::op_transition_legal(a, b));
      CHECK(op.state.load() == (ok ? b : a));
      legal += ok;
    }
  // ARMED: 4, STAGING_OUT: 2, TRIGGERED: 2, POSTED: 2, STAGING_IN: 1, COMPLETE: 1.
  CHECK(legal == 12);
}

TEST_CASE("an op through the agent: ARMED > TRIGGERED > POSTED > COMPLETE > RETIRED", "[runtime]") {
  Fixture f;
  Op *op = f.make_op(/*with_request=*/true);
  CHECK(mpix::request_count() == 1);
  f.submit(op);
  // The agent holds it, ARMED, until the stream reaches its trigger.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(f.seen->fired.load() == 0);
  CHECK(op->state.load() == OpState::armed);
  f.trigger(op);
  REQUIRE(f.completed(op));
  CHECK(f.seen->state_at_fire.load() == static_cast<int>(OpState::triggered));
  f.check_complete_effects(op);
  CHECK(op->status.MPI_ERROR == MPI_SUCCESS);
  CHECK(op->status.MPI_SOURCE == 3);
  CHECK(op->status.MPI_TAG == 7);
  REQUIRE(eventually([&] { return f.mpi->completes.load() == 1; }));  // request completed
  // The request's reference keeps the op until the user lets go of the handle.
  CHECK(mpix::op_registry_size() == 1);
  CHECK(mpix::request_count() == 1);
  f.user_frees(op);  // RETIRED: deleted
  f.check_retired();
}

TEST_CASE("a post the provider refuses: TRIGGERED > COMPLETE, the stream keeps the error",
          "[runtime]") {
  Fixture f;
  f.seen->refuse_post = true;
  Op *op = f.make_op(/*with_request=*/false);  // blocking: nobody else sees the status
  const uint64_t *word = op->done.word, value = op->done_value;
  f.submit(op);
  f.trigger(op);  // the op is the agent's alone from here: not read again
  REQUIRE(f.completed(word, value));
  CHECK(f.seen->fired.load() == 1);
  // The agent's was the only reference: retired once complete.
  REQUIRE(eventually([] { return mpix::op_registry_size() == 0; }));
  CHECK(f.stream->pending_ops.load() == 0);
  CHECK(f.ctx->pending_ops.load() == 0);
  CHECK(f.stream->take_error() == MPI_ERR_OTHER);
  CHECK(f.mpi->completes.load() == 0);  // no request to complete
  f.check_retired();
}

TEST_CASE("op_fail before the trigger: ARMED > COMPLETE, never posted", "[runtime]") {
  Fixture f;
  Op *op = f.make_op(/*with_request=*/true);
  f.submit(op);
  mpix::op_fail(*op, mpix::make_status(MPI_ERR_BUFFER, "injected by the test"));
  REQUIRE(f.completed(op));
  f.check_complete_effects(op);
  CHECK(f.seen->fired.load() == 0);  // its bounce buffer may never have been filled
  CHECK(op->status.MPI_ERROR == MPI_ERR_BUFFER);
  CHECK(op->error.what().find("injected by the test") != std::string::npos);
  CHECK(op->error.what().find("unit_send to rank 3") != std::string::npos);
  // The trigger still comes later in stream order: nothing is posted then either.
  f.trigger(op);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(f.seen->fired.load() == 0);
  REQUIRE(eventually([&] { return f.mpi->completes.load() == 1; }));
  f.user_frees(op);
  f.check_retired();
}

TEST_CASE("a failed message: POSTED > COMPLETE with the error; a later stream wait gets it",
          "[runtime]") {
  Fixture f;
  f.seen->network_error = MPI_ERR_TRUNCATE;
  Op *op = f.make_op(/*with_request=*/true);
  f.submit(op);
  f.trigger(op);
  REQUIRE(f.completed(op));
  f.check_complete_effects(op);
  CHECK(op->error.what().find("fake MPI error") != std::string::npos);
  REQUIRE(eventually([&] { return f.mpi->completes.load() == 1; }));
  // MPIX_Wait_enqueue after completion: takes the handle, copies the status, frees the request.
  REQUIRE(mpix::request_find(op->grequest, /*take=*/true) == op);
  MPI_Status st{};
  mpix::op_wait_enqueued(*op, &st);
  CHECK(st.MPI_ERROR == MPI_ERR_TRUNCATE);
  CHECK(st.MPI_TAG == 7);
  CHECK(f.mpi->frees.load() == 1);
  f.check_retired();
}

TEST_CASE("a request a stream wait consumed before completion is kept as a spare and reused",
          "[runtime]") {
  Fixture f;
  Op *op = f.make_op(/*with_request=*/true);
  const MPI_Request r = op->grequest;
  CHECK(f.mpi->starts.load() == 1);
  // MPIX_Wait_enqueue before completion: the handle is consumed, the stream waits on the op.
  REQUIRE(mpix::request_find(r, /*take=*/true) == op);
  mpix::op_wait_enqueued(*op, nullptr);
  CHECK(mpix::request_count() == 0);
  f.submit(op);
  f.trigger(op);
  REQUIRE(f.completed(op));
  // No one can reach the request: it is neither completed nor freed, but kept with its op,
  // which retires into the spare pool; the agent owes no spare for it.
  REQUIRE(eventually([&] { return mpix::runtime().spare_pool()->size() == 1; }));
  CHECK(mpix::op_registry_size() == 0);
  CHECK(f.mpi->completes.load() == 0);
  CHECK(f.mpi->frees.load() == 0);
  CHECK(f.mpi->live() == 1);
  CHECK(mpix::request_count() == 0);
  CHECK(mpix::request_find(r, /*take=*/false) == op);  // in the table, as a spare
  // The next op with a request takes it: the same handle, no MPI_Grequest_start.
  Op *again = mpix::runtime().spare_pool()->take();
  REQUIRE(again == op);
  again = f.make_op(/*with_request=*/true, again);
  CHECK(again->grequest == r);
  CHECK(again->spare_request == MPI_REQUEST_NULL);
  CHECK(f.mpi->starts.load() == 1);
  CHECK(mpix::request_count() == 1);
  // Waited on by the host this time: completed by the agent, freed by the user, as any request.
  f.submit(again);
  f.trigger(again);
  REQUIRE(f.completed(again));
  REQUIRE(eventually([&] { return f.mpi->completes.load() == 1; }));
  f.user_frees(again);
  CHECK(f.mpi->frees.load() == 1);
  f.check_retired();
}

TEST_CASE("an op that never reached the agent: ARMED > RETIRED", "[runtime]") {
  Fixture f;
  Op *op = f.make_op(/*with_request=*/false);
  CHECK(mpix::op_registry_size() == 1);
  f.stream->pending_ops.fetch_sub(1);  // what the failed enqueue undoes
  f.ctx->pending_ops.fetch_sub(1);
  mpix::op_unref(op);
  f.check_retired();
}

TEST_CASE("transitions out of order are refused and change nothing", "[runtime]") {
  Fixture f;
  Op *op = f.make_op(/*with_request=*/false);
  // A provider reporting POSTED for an op the stream has not reached.
  mpix::op_posted(*op);
  CHECK(op->state.load() == OpState::armed);
  CHECK(mpix::load_signal(op->done.word) != op->done_value);
  // Jumps backwards, and out of the end.
  CHECK_FALSE(mpix::op_advance(*op, OpState::staging_in));
  mpix::op_advance(*op, OpState::triggered);
  CHECK_FALSE(mpix::op_advance(*op, OpState::armed));
  CHECK_FALSE(mpix::op_advance(*op, OpState::retired));
  CHECK(op->state.load() == OpState::triggered);
  mpix::op_advance(*op, OpState::complete);
  CHECK_FALSE(mpix::op_advance(*op, OpState::posted));
  CHECK_FALSE(mpix::op_advance(*op, OpState::complete));
  CHECK(op->state.load() == OpState::complete);
  f.stream->pending_ops.fetch_sub(1);
  f.ctx->pending_ops.fetch_sub(1);
  mpix::op_unref(op);
  f.check_retired();
}

TEST_CASE("the Runtime ends with an op never completed: reported, kept, the agent stopped",
          "[runtime]") {
  auto seen = std::make_shared<Seen>();
  {
    Fixture f;
    seen = f.seen;
    Op *op = f.make_op(/*with_request=*/true);
    f.submit(op);  // never triggered
  }                // ~Fixture destroys the Runtime, as MPI_Finalize does
  CHECK(mpix::runtime_current() == nullptr);
  CHECK(seen->shutdowns.load() == 1);
  CHECK(seen->fired.load() == 0);
}

TEST_CASE("a stream never freed outlives the Runtime and can still be freed", "[runtime]") {
  uint64_t id = 0;
  {
    Fixture f;
    REQUIRE(mpix::stream_register(f.stream, &id).is_ok());
  }  // MPI_Finalize's teardown
  REQUIRE(mpix::runtime_current() == nullptr);
  // As MPIX_Stream_free after MPI_Finalize (a C++ wrapper's destructor, say): no MPI needed.
  REQUIRE(mpix::stream_lookup(id) != nullptr);
  CHECK(mpix::stream_unregister(id).is_ok());
  CHECK(mpix::stream_lookup(id) == nullptr);
  CHECK_FALSE(mpix::stream_unregister(id).is_ok());  // freed twice
}
