// A bad MPIX_* value (CTest runs this program once per value, see CMakeLists.txt; the variable
// and value the program expects to be refused come in MPIX_TEST_BAD_SETTING="NAME=value"):
// every mpix call fails with MPI_ERR_ARG and a log line naming the variable and what it takes,
// nothing hangs, and no state is left behind. Where only some ranks have the bad value
// (MPIX_TEST_BAD_SETTING unset on the others), a collective mpix call fails on every rank.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_util.hpp"

using namespace mpix_test;

namespace {

// The NAME=value this rank's environment gets wrong, or "" where it has no bad setting.
std::string bad_setting() {
  const char *v = std::getenv("MPIX_TEST_BAD_SETTING");
  return v ? v : "";
}

// Runs @p fn with stderr going to a file; returns what was written there.
template <class Fn>
std::string stderr_of(Fn fn) {
  std::fflush(stderr);
  char path[] = "/tmp/mpix_bad_setting_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = dup(2);
  dup2(fd, 2);
  fn();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string out;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return out;
}

}  // namespace

TEST_CASE("a bad setting fails the first and every later mpix call, with a log line naming it",
          "[setting]") {
  const std::string bad = bad_setting();
  if (bad.empty()) return;  // the ranks with good settings of the mixed run
  const std::string name = bad.substr(0, bad.find('='));
  MPIX_Stream st = MPIX_STREAM_NULL;
  int rc = MPI_SUCCESS;
  const std::string log = stderr_of([&] { rc = MPIX_Stream_create(MPI_INFO_NULL, &st); });
  CHECK(error_class(rc) == MPI_ERR_ARG);
  CHECK(st == MPIX_STREAM_NULL);
  INFO(log);
  CHECK(log.find(bad + " is ") != std::string::npos);          // the variable and its value
  CHECK(log.find(": it takes ") != std::string::npos);         // and what it takes
  CHECK(log.find("MPIX_Stream_create") != std::string::npos);  // and the call
  // Every later call too: mpix never starts with the value silently replaced.
  CHECK(error_class(MPIX_Stream_create(MPI_INFO_NULL, &st)) == MPI_ERR_ARG);
  int x = 0;
  CHECK(error_class(MPIX_Send_enqueue(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_ARG);
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK(error_class(MPIX_Irecv_enqueue(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r)) == MPI_ERR_ARG);
  CHECK(r == MPI_REQUEST_NULL);
  MPIX_Queue q = nullptr;
  CHECK(error_class(MPIX_Create_queue(MPI_COMM_WORLD, nullptr, &q)) != MPI_SUCCESS);
  // The host stream API (usable without MPI) refuses to start a worker with it too.
  mpix_host_stream_t hs = nullptr;
  CHECK(mpix_host_stream_create(&hs) == MPI_ERR_ARG);
  CHECK(hs == nullptr);
}

TEST_CASE("a collective call with a bad setting on some ranks fails everywhere, no hang",
          "[setting]") {
  const bool bad_here = !bad_setting().empty();
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, MPIX_STREAM_NULL, &c);
  // The rank with the bad value: its own error; the others: "another rank passed a bad
  // argument" (when every rank has the bad value, every rank gets its own).
  CHECK(error_class(rc) == (bad_here ? MPI_ERR_ARG : MPI_ERR_OTHER));
  CHECK(c == MPI_COMM_NULL);
  // Whether any rank has the bad value: the world must agree it failed.
  int mine = bad_here ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(any == 1);
  // A rank with good settings still works on its own afterwards.
  if (!bad_here) {
    mpix_host_stream_t hs = nullptr;
    REQUIRE(mpix_host_stream_create(&hs) == 0);
    CHECK(mpix_host_stream_destroy(&hs) == 0);
  }
}
