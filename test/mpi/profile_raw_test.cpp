// MPIX_PROFILE=1 with MPIX_PROFILE_RAW=PREFIX (set by CTest): at MPI_Finalize each rank writes
// every sample of each stage, in the order the agent took them, to PREFIX.RANK.STAGE.txt. Two
// ranks ping-pong kIters messages on a host stream; after MPI_Finalize each rank reads its own
// files back: one "post" and one "network" sample per op it enqueued (a send and a receive per
// iteration), each a decimal count of nanoseconds, and a "turnaround" file. Exits non-zero on a
// failure, printing what failed.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "mpix/mpix.h"
#include "mpix/mpix_host_stream.h"

namespace {

int failed = 0;

void expect(bool ok, const std::string &what) {
  if (ok) return;
  ++failed;
  std::fprintf(stderr, "failed: %s\n", what.c_str());
}

// The lines of @p path, each a decimal number; false when missing or malformed.
bool read_samples(const std::string &path, std::vector<unsigned long> *out) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  while (std::getline(f, line)) {
    char *end = nullptr;
    const unsigned long v = std::strtoul(line.c_str(), &end, 10);
    if (line.empty() || *end != '\0') return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  constexpr int kIters = 50, kN = 64;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *prefix = std::getenv("MPIX_PROFILE_RAW");
  expect(size == 2, "two ranks");
  expect(prefix && std::string(prefix) != "none", "MPIX_PROFILE_RAW set by the test");
  {
    mpix_host_stream_t hs = nullptr;
    MPIX_Stream stream = MPIX_STREAM_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", "mpix_host_stream");
    expect(mpix_host_stream_create(&hs) == 0, "host stream created");
    expect(MPIX_Info_set_hex(info, "value", &hs, sizeof hs) == MPI_SUCCESS, "info set");
    expect(MPIX_Stream_create(info, &stream) == MPI_SUCCESS, "stream created");
    MPI_Info_free(&info);
    expect(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS,
           "stream communicator created");
    // Rank 0's pattern goes back and forth; the host does not touch the buffer while the
    // stream may use it (the ops run in stream order, after the calls return).
    std::vector<int> buf(kN, 0);
    if (rank == 0)
      for (int i = 0; i < kN; ++i) buf[i] = 1000 + i;
    const int peer = rank ^ 1;
    for (int it = 0; it < kIters && failed == 0; ++it) {
      if (rank == 0) {
        expect(MPIX_Send_enqueue(buf.data(), kN, MPI_INT, peer, 1, comm) == MPI_SUCCESS, "send");
        expect(MPIX_Recv_enqueue(buf.data(), kN, MPI_INT, peer, 1, comm, MPI_STATUS_IGNORE) ==
                   MPI_SUCCESS,
               "receive");
      } else {
        expect(MPIX_Recv_enqueue(buf.data(), kN, MPI_INT, peer, 1, comm, MPI_STATUS_IGNORE) ==
                   MPI_SUCCESS,
               "receive");
        expect(MPIX_Send_enqueue(buf.data(), kN, MPI_INT, peer, 1, comm) == MPI_SUCCESS, "send");
      }
    }
    expect(MPIX_Stream_synchronize(stream) == MPI_SUCCESS, "stream synchronized");
    int wrong = 0;
    for (int i = 0; i < kN; ++i) wrong += buf[i] != 1000 + i;
    expect(wrong == 0, "rank 0's data went back and forth (" + std::to_string(wrong) + " wrong)");
    expect(MPI_Comm_free(&comm) == MPI_SUCCESS, "communicator freed");
    expect(MPIX_Stream_free(&stream) == MPI_SUCCESS, "stream freed");
    expect(mpix_host_stream_destroy(&hs) == 0, "host stream destroyed");
  }
  MPI_Finalize();  // the files are written here

  const std::string base = std::string(prefix ? prefix : "") + "." + std::to_string(rank) + ".";
  for (const char *stage : {"post", "network"}) {
    std::vector<unsigned long> v;
    expect(read_samples(base + stage + ".txt", &v), base + stage + ".txt read");
    expect(v.size() == 2u * kIters,
           base + stage + ".txt has " + std::to_string(v.size()) + " samples, one per op");
  }
  std::vector<unsigned long> t;
  expect(read_samples(base + "turnaround.txt", &t) && !t.empty(), base + "turnaround.txt read");
  std::printf("rank %d: %s\n", rank, failed ? "FAILED" : "passed");
  return failed ? 1 : 0;
}
