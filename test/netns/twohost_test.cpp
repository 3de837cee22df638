// The rank program of the two-host test (twohost.sh): rank 0 in network namespace A, rank 1 in
// B, joined only by a veth pair. Host-stream enqueued traffic, data checked, under whatever
// provider the environment names.
//   twohost_test exchange   both directions at sizes 4 B .. 4 MiB, nonblocking and blocking
//                           enqueued calls; ends with MPI_Finalize.
//   twohost_test cut        a warm-up exchange, then back-to-back 1 MiB exchanges; after a few
//                           rounds each rank creates $TWOHOST_DIR/ready.<rank>, the script cuts
//                           the link, and the round in flight must fail with an MPI error within
//                           MPIX_TIMEOUT. A peer cut off cannot be finalized with, so the rank
//                           ends with _exit.
// Each rank writes $TWOHOST_DIR/netns.<rank> (its network namespace, so the script can check
// that the launch agent put rank 1 in B) and, last, $TWOHOST_DIR/result.<rank>: "ok" or the
// failures. mpirun's status cannot carry the verdict of a run whose link was cut.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

std::string g_dir;
int g_rank = -1;
std::string g_failures;

void fail(const std::string &what) {
  std::fprintf(stderr, "twohost[%d]: FAILED: %s\n", g_rank, what.c_str());
  g_failures += what + "\n";
}

void check(bool ok, const std::string &what) {
  if (!ok) fail(what);
}

void write_file(const std::string &name, const std::string &text) {
  const std::string path = g_dir + "/" + name + "." + std::to_string(g_rank);
  const std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f) return;
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());  // The script never sees a half-written file.
}

std::string netns_id() {
  char buf[128] = {0};
  ssize_t n = readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
}

std::string error_text(int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0, cls = 0;
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, s, &len);
  return "class " + std::to_string(cls) + ": " + std::string(s, static_cast<size_t>(len));
}

// What rank `from` sends in round `round`: distinct per rank, round and position.
int value(int from, int round, int i) { return (from << 28) ^ (round << 20) ^ i; }

void fill(std::vector<int> &v, int from, int round) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = value(from, round, static_cast<int>(i));
}

// The first index where `v` is not what `from` sent in `round`, or -1.
long first_wrong(const std::vector<int> &v, int from, int round) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != value(from, round, static_cast<int>(i))) return static_cast<long>(i);
  return -1;
}

struct Host {
  mpix_host_stream_t hs = nullptr;
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
};

bool open_stream(Host &h) {
  if (mpix_host_stream_create(&h.hs) != 0) return fail("mpix_host_stream_create"), false;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "mpix_host_stream");
  MPIX_Info_set_hex(info, "value", &h.hs, sizeof h.hs);
  int rc = MPIX_Stream_create(info, &h.stream);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return fail("MPIX_Stream_create: " + error_text(rc)), false;
  rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, h.stream, &h.comm);
  if (rc != MPI_SUCCESS) return fail("MPIX_Stream_comm_create: " + error_text(rc)), false;
  MPI_Comm_set_errhandler(h.comm, MPI_ERRORS_RETURN);
  return true;
}

// Returns the teardown's first error (or MPI_SUCCESS).
int close_stream(Host &h) {
  int first = MPIX_Stream_synchronize(h.stream);
  int rc = MPI_Comm_free(&h.comm);
  if (first == MPI_SUCCESS) first = rc;
  rc = MPIX_Stream_free(&h.stream);
  if (first == MPI_SUCCESS) first = rc;
  if (mpix_host_stream_destroy(&h.hs) != 0 && first == MPI_SUCCESS) first = MPI_ERR_OTHER;
  return first;
}

// One nonblocking exchange of `count` ints with the peer: MPI_SUCCESS and the data checked, or
// the first error.
int exchange_nonblocking(Host &h, int peer, int count, int round) {
  std::vector<int> out(static_cast<size_t>(count)), in(static_cast<size_t>(count), -1);
  fill(out, g_rank, round);
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = MPIX_Irecv_enqueue(in.data(), count, MPI_INT, peer, round, h.comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPIX_Isend_enqueue(out.data(), count, MPI_INT, peer, round, h.comm, &r[1]);
  if (rc != MPI_SUCCESS) {
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    return rc;
  }
  // Each wait on its own, so that both requests end whatever the first one returns.
  rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  int rc2 = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) rc = rc2;
  if (rc != MPI_SUCCESS) return rc;
  long bad = first_wrong(in, peer, round);
  check(bad < 0, "round " + std::to_string(round) + " (" + std::to_string(count) +
                     " ints): wrong data at index " + std::to_string(bad));
  return MPI_SUCCESS;
}

// Blocking enqueued calls in stream order (rank 0 sends first, rank 1 receives first), then
// MPIX_Stream_synchronize.
int exchange_blocking(Host &h, int peer, int count, int round) {
  std::vector<int> out(static_cast<size_t>(count)), in(static_cast<size_t>(count), -1);
  fill(out, g_rank, round);
  int rc;
  if (g_rank == 0) {
    rc = MPIX_Send_enqueue(out.data(), count, MPI_INT, peer, round, h.comm);
    if (rc == MPI_SUCCESS)
      rc = MPIX_Recv_enqueue(in.data(), count, MPI_INT, peer, round, h.comm, MPI_STATUS_IGNORE);
  } else {
    rc = MPIX_Recv_enqueue(in.data(), count, MPI_INT, peer, round, h.comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPIX_Send_enqueue(out.data(), count, MPI_INT, peer, round, h.comm);
  }
  int rc2 = MPIX_Stream_synchronize(h.stream);
  if (rc == MPI_SUCCESS) rc = rc2;
  if (rc != MPI_SUCCESS) return rc;
  long bad = first_wrong(in, peer, round);
  check(bad < 0, "blocking round " + std::to_string(round) + " (" + std::to_string(count) +
                     " ints): wrong data at index " + std::to_string(bad));
  return MPI_SUCCESS;
}

int run_exchange(Host &h, int peer) {
  int round = 0;
  for (int count : {1, 1000, 65536, 1 << 20}) {
    for (int rep = 0; rep < 3; ++rep) {
      int rc = exchange_nonblocking(h, peer, count, ++round);
      check(rc == MPI_SUCCESS,
            "nonblocking exchange of " + std::to_string(count) + " ints: " + error_text(rc));
      rc = exchange_blocking(h, peer, count, ++round);
      check(rc == MPI_SUCCESS,
            "blocking exchange of " + std::to_string(count) + " ints: " + error_text(rc));
    }
  }
  int rc = close_stream(h);
  check(rc == MPI_SUCCESS, "stream teardown: " + error_text(rc));
  write_file("result", g_failures.empty() ? "ok\n" : g_failures);
  std::fprintf(stderr, "twohost[%d]: exchange done, %s\n", g_rank,
               g_failures.empty() ? "ok" : "FAILED");
  MPI_Finalize();
  return g_failures.empty() ? 0 : 1;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int run_cut(Host &h, int peer, long timeout) {
  int rc = exchange_nonblocking(h, peer, 1000, 1);
  check(rc == MPI_SUCCESS, "warm-up exchange: " + error_text(rc));
  const int count = 1 << 18;  // 1 MiB a direction and round: the cut lands mid-transfer.
  const int ready_after = 20;
  // The script cuts the link within seconds of both ready files; a cut never noticed fails here
  // instead of exchanging for ever.
  const double give_up = 60.0 + static_cast<double>(timeout);
  auto ready_at = std::chrono::steady_clock::now();
  int round = 2;
  for (;; ++round) {
    if (round == ready_after) {
      write_file("ready", "in the exchange\n");
      ready_at = std::chrono::steady_clock::now();
    }
    if (round > ready_after && since(ready_at) > give_up) {
      fail("no error " + std::to_string(static_cast<long>(give_up)) +
           " s after the ready signal: the cut was not noticed");
      break;
    }
    auto start = std::chrono::steady_clock::now();
    rc = exchange_nonblocking(h, peer, count, round & 0x3ff);
    if (rc == MPI_SUCCESS) continue;
    const double waited = since(start);
    std::fprintf(stderr, "twohost[%d]: round %d failed after %.1f s (%s)\n", g_rank, round, waited,
                 error_text(rc).c_str());
    check(round >= ready_after, "an error before the link was cut: " + error_text(rc));
    // The round began at most moments before the cut (rounds take milliseconds while the link is
    // up); 5 s of slack for a loaded machine.
    check(waited < static_cast<double>(timeout) + 5.0, "the error came " + std::to_string(waited) +
                                                           " s into the round, MPIX_TIMEOUT is " +
                                                           std::to_string(timeout) + " s");
    break;
  }
  // What comes after the error must end too (its result is not judged: the error may be
  // reported again, item 9 makes it sticky).
  auto start = std::chrono::steady_clock::now();
  rc = close_stream(h);
  std::fprintf(stderr, "twohost[%d]: teardown after the cut ended after %.1f s (%s)\n", g_rank,
               since(start), rc == MPI_SUCCESS ? "success" : error_text(rc).c_str());
  check(since(start) < static_cast<double>(timeout) + 5.0, "teardown within MPIX_TIMEOUT");
  write_file("result", g_failures.empty() ? "ok\n" : g_failures);
  std::fprintf(stderr, "twohost[%d]: cut done, %s\n", g_rank, g_failures.empty() ? "ok" : "FAILED");
  std::fflush(stderr);
  // No MPI_Finalize: its closing fence needs the peer that the cut took away.
  _exit(g_failures.empty() ? 0 : 1);
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *dir = std::getenv("TWOHOST_DIR");
  const std::string mode = argc > 1 ? argv[1] : "";
  const char *t = std::getenv("MPIX_TIMEOUT");
  const long timeout = t ? std::atol(t) : 0;
  if (size != 2 || !dir || (mode != "exchange" && mode != "cut") ||
      (mode == "cut" && timeout <= 0)) {
    if (g_rank == 0)
      std::fprintf(stderr,
                   "usage: TWOHOST_DIR=<dir> [MPIX_TIMEOUT=<s>] mpirun -np 2 twohost_test "
                   "exchange|cut (cut needs MPIX_TIMEOUT > 0)\n");
    MPI_Finalize();
    return 2;
  }
  g_dir = dir;
  write_file("netns", netns_id() + "\n");
  Host h;
  if (!open_stream(h)) {
    write_file("result", g_failures);
    MPI_Finalize();
    return 1;
  }
  return mode == "exchange" ? run_exchange(h, 1 - g_rank) : run_cut(h, 1 - g_rank, timeout);
}
