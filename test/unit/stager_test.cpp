// The stagers (core/stager.hpp) one hook at a time, on a host stream with host memory standing
// in for device memory: what each copies, and when. Needs MPI (typemaps, statuses): one rank.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/waiter.hpp"
#include "catch.hpp"
#include "core/mpi_calls.hpp"
#include "core/provider.hpp"
#include "core/runtime.hpp"
#include "core/staging/agent_stager.hpp"
#include "core/staging/bounce_pool.hpp"
#include "core/staging/pipelined_stager.hpp"
#include "core/staging/stream_stager.hpp"
#include "gpu/backend.hpp"
#include "gpu/host/host_backend.hpp"

namespace {

using mpix::StagedBuffers;

MPI_Status received(int bytes) {
  MPI_Status st{};
  st.MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements_x(&st, MPI_BYTE, bytes);
  return st;
}

// A staged receive of @p user (n bytes); *bounce: where the provider receives into.
StagedBuffers stage_recv(std::vector<char> &user, char **bounce) {
  StagedBuffers b(mpix::host_backend());
  REQUIRE(
      b.stage(user.data(), static_cast<int>(user.size()), MPI_BYTE, &b.in, bounce, true).is_ok());
  b.has_in = true;
  b.short_ok = true;
  return b;
}

// The bounce-buffer pool belongs to the Runtime: a Runtime of this test's own for each case
// (its provider is never asked for), destroyed at the end of the case as MPI_Finalize would.
struct HostStream {
  HostStream() {
    mpix::runtime_install(std::make_unique<mpix::Runtime>(mpix::mpi_calls(), nullptr));
    REQUIRE(mpix::host_backend()->open_stream(nullptr, mpix::TriggerMode::memop, &ex).is_ok());
  }
  ~HostStream() {
    ex.reset();
    mpix::runtime_install(nullptr);
  }
  std::unique_ptr<mpix::ExecStream> ex;
};

}  // namespace

TEST_CASE("a stream stager copies in only the message's bytes", "[stager]") {
  HostStream s;
  const std::size_t in_use = mpix::staging_pool_stats().in_use;
  // Outlives every bounce buffer of the loop: a released buffer's pool entry keeps pointing at
  // the word that says when it may be reused, and the next iteration's acquire reads it.
  uint64_t trigger = 0;
  for (bool clip : {true, false}) {
    INFO("clip " << clip);
    std::vector<char> user(64, 'u');
    char *bounce = nullptr;
    {
      mpix::StreamStager stg(stage_recv(user, &bounce), clip);
      REQUIRE(stg.before_trigger(*s.ex, &trigger, 1).is_ok());  // fills the bounce buffer
      REQUIRE(s.ex->synchronize().is_ok());
      std::memset(bounce, 'm', 10);  // the network writes a 10-byte message
      stg.on_done(received(10));
      REQUIRE(stg.after_wait(*s.ex, &trigger, 2).is_ok());
      REQUIRE(s.ex->synchronize().is_ok());
      CHECK(std::string(user.data(), 12) == "mmmmmmmmmmuu");
      CHECK(user[63] == 'u');
      std::memset(bounce, 'x', 64);
      REQUIRE(stg.on_host_wait().is_ok());  // copied once: by after_wait
      CHECK(user[0] == 'm');
    }
  }
  CHECK(mpix::staging_pool_stats().in_use == in_use);
}

TEST_CASE("a staged receive of 2^k bytes takes a bounce buffer of 2^k bytes and a page",
          "[stager]") {
  HostStream s;
  const std::size_t before = mpix::staging_pool_stats().bytes;
  std::vector<char> user(1 << 20, 'u');
  char *bounce = nullptr;
  {
    mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true);
    // The span and the length words after it, not twice the span.
    const std::size_t grown = mpix::staging_pool_stats().bytes - before;
    CHECK(grown <= (std::size_t{1} << 20) + 4096);
    CHECK(grown >= (std::size_t{1} << 20));
  }
}

TEST_CASE("a message delivered straight into the target is not copied over", "[stager]") {
  HostStream s;
  std::vector<char> user(64, 'u');
  char *bounce = nullptr;
  mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true);
  REQUIRE(stg.direct_target() == user.data());
  std::memset(user.data(), 'd', 20);  // the direct path's copy
  std::memset(bounce, 'x', 64);
  stg.on_done(received(20));
  uint64_t trigger = 0;
  REQUIRE(stg.after_wait(*s.ex, &trigger, 1).is_ok());
  REQUIRE(s.ex->synchronize().is_ok());
  CHECK(std::string(user.data(), 21) == std::string(20, 'd') + "u");

  // Without a length-reading copy in there is no direct target.
  std::vector<char> other(64, 'u');
  mpix::StreamStager fill(stage_recv(other, &bounce), /*clip=*/false);
  CHECK(fill.direct_target() == nullptr);
}

TEST_CASE("a message delivered from elsewhere is copied in by the stream, then announced",
          "[stager]") {
  HostStream s;
  uint64_t trigger = 0;
  std::vector<char> sender(40, 's');  // the sender's buffer, as if mapped here (GPU-direct)
  for (bool host_wait : {false, true}) {
    INFO("host wait " << host_wait);
    std::vector<char> user(64, 'u');
    char *bounce = nullptr;
    mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true, /*direct=*/true);
    std::memset(bounce, 'x', 64);  // never copied: the message is not in the bounce buffer
    const uint64_t *copied = nullptr;
    // The sender's done word, as if mapped here (Op::peer_done): the stream's copy sets it to 7.
    uint64_t done = 6;
    REQUIRE(stg.deliver_from(sender.data(), 30, &copied, nullptr, 0, &done, 7));
    REQUIRE(copied != nullptr);
    stg.on_done(received(30));  // keeps the length and source deliver_from stored
    CHECK(mpix::load_signal(copied) == 0);
    CHECK(mpix::load_signal(&done) == 6);
    if (host_wait) {
      REQUIRE(stg.on_host_wait().is_ok());
    } else {
      REQUIRE(stg.after_wait(*s.ex, &trigger, 1).is_ok());
      REQUIRE(s.ex->synchronize().is_ok());
    }
    CHECK(std::string(user.data(), 31) == std::string(30, 's') + "u");
    CHECK(mpix::load_signal(copied) == 1);  // the sender may reuse its buffer now
    // A host wait's copy leaves the word (device memory of the sender's, where it is real): the
    // sender's stream goes on at the answer that copied leads to.
    CHECK(mpix::load_signal(&done) == (host_wait ? 6u : 7u));
  }
  // Only a receive set up for GPU-direct takes a message from elsewhere.
  std::vector<char> other(64, 'u');
  char *bounce = nullptr;
  mpix::StreamStager plain(stage_recv(other, &bounce), /*clip=*/true);
  const uint64_t *copied = nullptr;
  CHECK_FALSE(plain.deliver_from(sender.data(), 30, &copied, nullptr, 0, nullptr, 0));
}

TEST_CASE("a host wait copies a message from an announced send once its ready word says so",
          "[stager]") {
  // The sender's ready word, as if mapped here, already at the send's value (5): the host
  // wait reads it, finds it reached and copies. (A word below it would hold the wait; the host
  // backend's stream copy does not read the word: the GPU tests cover the kernels' wait.)
  HostStream s;  // the host backend the staging uses
  std::vector<char> sender(40, 's');
  uint64_t ready = 5;
  std::vector<char> user(64, 'u');
  char *bounce = nullptr;
  mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true, /*direct=*/true);
  const uint64_t *copied = nullptr;
  REQUIRE(stg.deliver_from(sender.data(), 30, &copied, &ready, 5, nullptr, 0));
  stg.on_done(received(30));
  REQUIRE(stg.on_host_wait().is_ok());
  CHECK(std::string(user.data(), 31) == std::string(30, 's') + "u");
  CHECK(mpix::load_signal(copied) == 1);
}

TEST_CASE(
    "a receive that may get a GPU-direct message holds a short bounce buffer until a long "
    "staged message comes",
    "[stager]") {
  HostStream s;
  uint64_t trigger = 0;
  for (int len : {10, 16, 40}) {  // fits the short buffer, fills it, needs the whole one
    INFO("message of " << len << " bytes");
    std::vector<char> user(64, 'u');
    char *bounce = nullptr;
    StagedBuffers b(mpix::host_backend());
    REQUIRE(b.stage(user.data(), 64, MPI_BYTE, &b.in, &bounce, true, /*short_max=*/16).is_ok());
    b.has_in = true;
    b.short_ok = true;
    CHECK(b.in_cap == 16);
    CHECK(b.in.bytes == 64);
    mpix::StreamStager stg(std::move(b), /*clip=*/true, /*direct=*/true);
    void *at = bounce;
    REQUIRE(stg.receive_space(static_cast<uint64_t>(len), &at).is_ok());
    if (len <= 16) {
      CHECK(at == bounce);
    } else {
      CHECK(at != bounce);  // a whole buffer beside the short one
      void *again = bounce;
      REQUIRE(stg.receive_space(static_cast<uint64_t>(len), &again).is_ok());
      CHECK(again == at);  // once
    }
    std::memset(at, 'm', static_cast<std::size_t>(len));  // the network writes the message
    stg.on_done(received(len));
    REQUIRE(stg.after_wait(*s.ex, &trigger, 1).is_ok());
    REQUIRE(s.ex->synchronize().is_ok());
    CHECK(std::string(user.data(), static_cast<std::size_t>(len) + 1) ==
          std::string(static_cast<std::size_t>(len), 'm') + "u");
    CHECK(user[63] == 'u');
  }
}

TEST_CASE("a short bounce buffer holds a page, not the receive's span", "[stager]") {
  HostStream s;
  const std::size_t before = mpix::staging_pool_stats().bytes;
  std::vector<char> user(1 << 20, 'u');
  char *bounce = nullptr;
  StagedBuffers b(mpix::host_backend());
  REQUIRE(b.stage(user.data(), 1 << 20, MPI_BYTE, &b.in, &bounce, true, 1024).is_ok());
  CHECK(mpix::staging_pool_stats().bytes - before <= 4096);
  // A datatype with gaps keeps its whole span (its copy in goes by the typemap).
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  REQUIRE(MPI_Type_vector(1024, 1, 2, MPI_CHAR, &vec) == MPI_SUCCESS);
  REQUIRE(MPI_Type_commit(&vec) == MPI_SUCCESS);
  StagedBuffers g(mpix::host_backend());
  REQUIRE(g.stage(user.data(), 1, vec, &g.in, &bounce, true, 16).is_ok());
  CHECK(g.in_cap == g.in.bytes);
  MPI_Type_free(&vec);
}

TEST_CASE("a pipelined send copies piece by piece, each but the last followed by its trigger",
          "[stager]") {
  HostStream s;
  std::vector<char> user(10000);
  for (std::size_t i = 0; i < user.size(); ++i) user[i] = static_cast<char>(i * 13);
  StagedBuffers b(mpix::host_backend());
  char *bounce = nullptr;
  REQUIRE(b.stage(user.data(), static_cast<int>(user.size()), MPI_BYTE, &b.out[0], &bounce, false)
              .is_ok());
  b.nout = 1;
  mpix::PipelinedStager stg(std::move(b), 4096);
  CHECK(stg.pieces() == 3);
  CHECK_FALSE(stg.copies_before_wait());
  uint64_t trigger = 0;
  REQUIRE(stg.before_trigger(*s.ex, &trigger, 7).is_ok());
  REQUIRE(s.ex->synchronize().is_ok());
  CHECK(mpix::load_signal(&trigger) == 8);  // pieces 0 and 1; the fire recipe writes 9
  CHECK(std::memcmp(bounce, user.data(), user.size()) == 0);
}

TEST_CASE("a pipelined receive copies each piece in once it has arrived", "[stager]") {
  HostStream s;
  std::vector<char> user(10000, 'u');
  char *bounce = nullptr;
  mpix::PipelinedStager stg(stage_recv(user, &bounce), 4096);
  CHECK(stg.pieces() == 1);
  CHECK(stg.direct_target() == nullptr);
  REQUIRE(stg.copies_before_wait());
  std::memset(bounce, 'm', 5000);  // a 5000-byte message: pieces 0 and 1
  stg.on_piece(5000, 1);
  REQUIRE(stg.before_wait(*s.ex).is_ok());  // the stream now waits for piece 1
  stg.on_piece(5000, 2);
  stg.on_done(received(5000));
  REQUIRE(s.ex->synchronize().is_ok());
  CHECK(user[4999] == 'm');
  CHECK(user[5000] == 'u');
  uint64_t trigger = 0;
  REQUIRE(stg.after_wait(*s.ex, &trigger, 1).is_ok());
  REQUIRE(s.ex->synchronize().is_ok());
  CHECK(user[5000] == 'u');
}

TEST_CASE("an agent stager copies on the agent: out at the fire, in by the received length",
          "[stager]") {
  HostStream s;
  std::vector<char> src(64, 's'), user(64, 'u');
  StagedBuffers b(mpix::host_backend());
  char *sbounce = nullptr, *rbounce = nullptr;
  REQUIRE(b.stage(src.data(), 64, MPI_BYTE, &b.out[0], &sbounce, false).is_ok());
  b.nout = 1;
  mpix::AgentStager send(std::move(b), -1, 0);
  std::memset(sbounce, 'z', 64);
  uint64_t trigger = 0;
  REQUIRE(send.before_trigger(*s.ex, &trigger, 1).is_ok());
  REQUIRE(s.ex->synchronize().is_ok());
  CHECK(sbounce[0] == 'z');  // the stream carries no copy
  bool copying = false;
  REQUIRE(send.on_fire(&copying).is_ok());
  CHECK(copying);
  CHECK(send.copy_done());
  CHECK(std::memcmp(sbounce, src.data(), 64) == 0);

  mpix::AgentStager recv(stage_recv(user, &rbounce), -1, 0);
  REQUIRE(recv.on_fire(&copying).is_ok());
  CHECK_FALSE(copying);  // a receive has nothing to copy out
  std::memset(rbounce, 'm', 64);
  REQUIRE(recv.on_complete(received(0), &copying).is_ok());
  CHECK_FALSE(copying);
  REQUIRE(recv.on_complete(received(10), &copying).is_ok());
  CHECK(copying);
  CHECK(std::string(user.data(), 11) == "mmmmmmmmmmu");
  REQUIRE(recv.on_host_wait().is_ok());  // the agent copied: nothing is left
  CHECK(user[10] == 'u');
}

namespace {

// A stream that only answers the fusion checks: which buffer owner staging told it
// (can_fuse_staged, can_copy_prefix_staged), and whether anything asked about addresses (the
// driver-query check, can_fuse_copy).
struct FusionProbe : mpix::ExecStream {
  mpix::Status write_value(uint64_t *, uint64_t) override { return {}; }
  mpix::Status wait_value(const uint64_t *, uint64_t) override { return {}; }
  mpix::Status launch_host(void (*)(void *), void *) override { return {}; }
  mpix::Status copy_async(void *, const void *, std::size_t) override { return {}; }
  mpix::Status synchronize() override { return {}; }
  mpix::TriggerMode trigger_mode() const override { return mpix::TriggerMode::memop; }
  void *native() const override { return nullptr; }
  int device() const override { return 2; }
  bool can_fuse_copy(const void *, const void *, std::size_t) override {
    ++address_checks;
    return true;
  }
  bool can_fuse_staged(std::size_t, int user_device) override {
    told.push_back(user_device);
    return user_device == mpix::kAnyDevice || user_device == device();
  }
  bool can_copy_prefix_staged(int user_device) override {
    told.push_back(user_device);
    return user_device == mpix::kAnyDevice || user_device == device();
  }
  int address_checks = 0;
  std::vector<int> told;
};

}  // namespace

TEST_CASE("a stream stager's fusion checks use the owner staging found, asking about no address",
          "[stager]") {
  HostStream s;
  FusionProbe probe;
  for (int owner : {2, 5, mpix::kAnyDevice}) {  // the stream's device, another one, managed
    INFO("user buffer of device " << owner);
    const bool reach = owner != 5;
    std::vector<char> rbuf(64, 'u'), sbuf(64, 's');
    char *bounce = nullptr;
    StagedBuffers r = stage_recv(rbuf, &bounce);
    r.in.user_device = owner;
    mpix::StreamStager recv(std::move(r), /*clip=*/true);
    probe.told.clear();
    CHECK(recv.fuses_copy_in(probe) == reach);
    CHECK_FALSE(probe.told.empty());
    for (int told : probe.told) CHECK(told == owner);

    StagedBuffers b(mpix::host_backend());
    REQUIRE(b.stage(sbuf.data(), 64, MPI_BYTE, &b.out[0], &bounce, false).is_ok());
    b.out[0].user_device = owner;
    b.nout = 1;
    mpix::StreamStager send(std::move(b), /*clip=*/false);
    probe.told.clear();
    CHECK(send.fuses_copy_out(probe) == reach);
    REQUIRE(probe.told.size() == 1);
    CHECK(probe.told[0] == owner);
  }
  CHECK(probe.address_checks == 0);

  // A receive restaged with a whole bounce buffer keeps what staging found.
  std::vector<char> user(1 << 16, 'u');
  char *bounce = nullptr;
  StagedBuffers b(mpix::host_backend());
  REQUIRE(b.stage(user.data(), 1 << 16, MPI_BYTE, &b.in, &bounce, true, 1024).is_ok());
  b.in.user_device = 5;
  REQUIRE(b.restage_in_whole(1 << 16, MPI_BYTE, &bounce).is_ok());
  CHECK(b.in.user_device == 5);
  CHECK(b.in_cap == b.in.bytes);
}

namespace {

// A stream that records the gated flag of each copy in by length (copy_prefix_async).
struct CopyInProbe : FusionProbe {
  mpix::Status copy_prefix_async(void *, const void *, std::size_t, const uint64_t *, uint64_t,
                                 bool gated) override {
    this->gated.push_back(gated);
    return {};
  }
  std::vector<bool> gated;
};

}  // namespace

// A GPU-direct message from an announced send may still be unwritten when the receiving stream
// reaches its copy: only a receive that may get one tells the stream so (a GPU stream then waits
// for it with one thread, not a resident grid: gate_then_publish, gpu/cuda/cuda_kernels.cu).
TEST_CASE("a copy in says whether an announced send's data may still be on its way", "[stager]") {
  HostStream s;
  // Outlives every bounce buffer of the loop: a released buffer's pool entry keeps pointing at
  // the word that says when it may be reused, and the next iteration's acquire reads it.
  uint64_t trigger = 0;
  for (bool direct : {false, true}) {
    INFO((direct ? "may be GPU-direct" : "staged only"));
    std::vector<char> user(std::size_t{1} << 20, 'u');
    char *bounce = nullptr;
    mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true, direct);
    CopyInProbe probe;
    REQUIRE(stg.after_wait(probe, &trigger, 1).is_ok());
    REQUIRE(probe.gated.size() == 1);
    CHECK(probe.gated[0] == direct);
  }
}

TEST_CASE("only a GPU-direct receive a message may wait for writes its trigger first", "[stager]") {
  HostStream s;
  for (bool direct : {false, true})
    for (bool first : {false, true}) {
      std::vector<char> user(64, 'u');
      char *bounce = nullptr;
      mpix::StreamStager stg(stage_recv(user, &bounce), /*clip=*/true, direct, first);
      CHECK(stg.triggers_first() == (direct && first));
      CHECK(stg.waits_first() == direct);
    }
}

TEST_CASE("the bounce pool hands out a ready buffer before it checks the pending ones",
          "[stager]") {
  // Streams' words, as pending buffers point at them: declared first, they outlive the pool.
  uint64_t word = 5, behind = 1;
  HostStream s;  // the pool is the Runtime's
  mpix::Backend *be = mpix::host_backend();
  mpix::Bounce a, b, c;
  REQUIRE(mpix::bounce_acquire(be, 100, &a).is_ok());
  REQUIRE(mpix::bounce_acquire(be, 100, &b).is_ok());
  mpix::bounce_release(a, &word, 3);    // pending until the word reaches 3: it has (5)
  mpix::bounce_release(b, nullptr, 0);  // ready at once
  // b is ready: a is not checked (its word would be a read of GPU-written memory).
  REQUIRE(mpix::bounce_acquire(be, 100, &c).is_ok());
  CHECK(c.p == b.p);
  // None ready now: a is checked, found past its value, and handed out.
  mpix::Bounce d;
  REQUIRE(mpix::bounce_acquire(be, 100, &d).is_ok());
  CHECK(d.p == a.p);
  // One whose word has not reached its value is skipped, not waited for: a new buffer.
  mpix::bounce_release(d, &behind, 2);
  mpix::Bounce e;
  REQUIRE(mpix::bounce_acquire(be, 100, &e).is_ok());
  CHECK(e.p != a.p);
  mpix::bounce_release(c, nullptr, 0);
  mpix::bounce_release(e, nullptr, 0);
}

TEST_CASE("a tiny receive's message goes out in flagged words last, for the fused copy in",
          "[stager]") {
  using mpix::TinyWords;
  // The words a copy in waits on and a released bounce buffer points at: declared before the
  // stream and its pool, so that they outlive both.
  uint64_t done = 0, trigger = 0;
  HostStream s;
  uint32_t last_flag = 0;
  // 8 bytes received into an 8-byte buffer; 5 into a 16-byte one (a shorter message); the
  // largest tiny buffer, full. Each receive has a flag of its own, never 0.
  for (int cap : {8, 16, static_cast<int>(TinyWords::kBytes)}) {
    const int len = cap == 16 ? 5 : cap;
    INFO("buffer " << cap << ", message " << len);
    std::vector<char> user(static_cast<std::size_t>(cap), 'u');
    char *bounce = nullptr;
    StagedBuffers b = stage_recv(user, &bounce);
    const uint64_t *tw = b.tiny_words();
    REQUIRE(tw != nullptr);
    const uint32_t flag = b.tiny_flag;
    CHECK(flag != 0);
    CHECK(flag != last_flag);
    last_flag = flag;
    mpix::StreamStager stg(std::move(b), /*clip=*/true);
    REQUIRE(stg.tiny_copy_in());
    const std::size_t words = TinyWords::words(static_cast<std::size_t>(cap));
    std::vector<char> msg(TinyWords::kBytes);
    for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<char>('A' + i % 26);
    // The fused copy in, queued first (a host stream polls the words as the CUDA kernel does).
    const uint64_t round = ++trigger;  // the stream passes each round's threshold at once
    REQUIRE(stg.wait_and_copy_in(*s.ex, &done, round, &trigger, round, nullptr, 0).is_ok());
    std::memcpy(bounce, msg.data(), static_cast<std::size_t>(len));  // the provider's receive
    stg.on_done(received(len));
    // Not before on_release: whoever sees a flagged word may take the receive as complete.
    for (std::size_t i = 0; i < words; ++i) CHECK(mpix::load_signal(tw + i) >> 32 != flag);
    stg.on_release();
    // The copy in took the message from the words (the completion word is still 0).
    REQUIRE(s.ex->synchronize().is_ok());
    CHECK(std::string(user.data(), static_cast<std::size_t>(len)) ==
          std::string(msg.data(), static_cast<std::size_t>(len)));
    CHECK(std::string(user.data() + len, static_cast<std::size_t>(cap - len)) ==
          std::string(static_cast<std::size_t>(cap - len), 'u'));
    mpix::store_signal(&done, round);
    CHECK(mpix::load_signal(tw) == TinyWords::word(flag, static_cast<uint32_t>(len)));
    std::vector<char> got(TinyWords::kBytes);
    for (std::size_t i = 1; i < words; ++i) {
      const uint64_t w = mpix::load_signal(tw + i);
      CHECK(w >> 32 == flag);
      const uint32_t v = static_cast<uint32_t>(w);
      std::memcpy(got.data() + 4 * (i - 1), &v, 4);
    }
    CHECK(std::string(got.data(), static_cast<std::size_t>(len)) ==
          std::string(msg.data(), static_cast<std::size_t>(len)));
  }
  // A host MPI_Wait copies from the bounce buffer (the words are written anyway: a copy in
  // queued after the receive completed polls them).
  {
    std::vector<char> user(8, 'u');
    char *bounce = nullptr;
    StagedBuffers b = stage_recv(user, &bounce);
    const uint64_t *tw = b.tiny_words();
    const uint32_t flag = b.tiny_flag;
    mpix::StreamStager stg(std::move(b), /*clip=*/true);
    std::memcpy(bounce, "12345678", 8);
    stg.on_done(received(8));
    stg.on_release();
    CHECK(mpix::load_signal(tw) == TinyWords::word(flag, 8));
    REQUIRE(stg.on_host_wait().is_ok());
    CHECK(std::string(user.data(), 8) == "12345678");
  }
  // A larger receive has no words (and on_release writes none); a message delivered elsewhere
  // leaves them as they were.
  std::vector<char> big(TinyWords::kBytes + 8, 'u');
  char *bounce = nullptr;
  StagedBuffers b = stage_recv(big, &bounce);
  CHECK(b.tiny_flag == 0);
  CHECK(b.tiny_words() == nullptr);
  mpix::StreamStager stg(std::move(b), /*clip=*/true);
  CHECK_FALSE(stg.tiny_copy_in());
  stg.on_done(received(8));
  stg.on_release();
  std::vector<char> small(8, 'u');
  StagedBuffers d = stage_recv(small, &bounce);
  const uint64_t *dtw = d.tiny_words();
  const std::vector<uint64_t> dbefore(dtw, dtw + TinyWords::words(8));
  mpix::StreamStager delivered(std::move(d), /*clip=*/true);
  REQUIRE(delivered.direct_target() == small.data());
  delivered.on_done(received(8));
  delivered.on_release();
  CHECK(std::vector<uint64_t>(dtw, dtw + TinyWords::words(8)) == dbefore);
}
