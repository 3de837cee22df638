// The Jacobi time loop in all three variants. The compute (pack, unpack, Jacobi update,
// residual) is the same stream work in all; what differs is who moves the halos and reduces the
// residual:
//
//   classic:     the host waits for the stream (synchronize), then MPI_Irecv/MPI_Isend/
//                MPI_Waitall on the host, staging device buffers through host memory itself;
//                MPI_Allreduce on the host.
//   mpix:        MPIX_Irecv_enqueue/MPIX_Isend_enqueue/MPIX_Waitall_enqueue and
//                MPIX_Allreduce_enqueue on a stream communicator: the stream sends, receives and
//                reduces in order with the compute, and the host only enqueues.
//   partitioned: as mpix, but the halo messages are persistent partitioned requests set up
//                once (PartitionedHalos); each iteration starts and completes their rounds in
//                stream order (MPIX_Start_enqueue / MPIX_Pwait_enqueue), and the pack kernel
//                itself marks each halo partition ready (device-side MPIX_Pready).
//
// exchange_classic / exchange_mpix / exchange_partitioned and reduce_classic / reduce_mpix hold
// the whole difference.
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "jacobi.hpp"
#include "stencil.hpp"

namespace jacobi {
namespace {

// Tags name the direction the data travels: a halo sent to the north neighbour travels north,
// and that neighbour receives it from its south side.
int opposite(int side) { return side ^ 1; }  // N <-> S, W <-> E

class PartitionedHalos;

struct State {
  State(const Params &params, const Decomp &decomp, Device &device, HaloBuffers &halo)
      : p(params),
        d(decomp),
        dev(device),
        send(halo.send),
        recv(halo.recv),
        send_h(halo.send_h),
        recv_h(halo.recv_h) {}
  const Params &p;
  const Decomp &d;
  Device &dev;
  Buffer u, unew;           // (ny+2) x (nx+2), halos included
  Buffer &send, &recv;      // packed halos [N | S | W | E] (HaloBuffers)
  Buffer &send_h, &recv_h;  // classic only: host copies when compute memory is not host memory
  Buffer local, global;     // one slot per check: local and global sum of squares (host memory)
  MPI_Comm comm = MPI_COMM_NULL;      // classic: the Cartesian communicator; mpix: its stream twin
  std::vector<long> marks;            // mpix: the stream passed check c's allreduce at marks[c]
  PartitionedHalos *halos = nullptr;  // partitioned only
  double *steps = nullptr;            // timed iterations: Result::host_step_seconds, else null
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Host time per step of an iteration (Result::host_step_seconds): next(k) ends the step
// running since the last next() (or construction) and counts it to step k.
class StepClock {
 public:
  explicit StepClock(State &s) : steps_(s.steps), t_(steps_ ? now() : 0) {}
  void next(int k) {
    if (!steps_) return;
    const double t = now();
    steps_[k] += t - t_;
    t_ = t;
  }

 private:
  double *steps_;
  double t_;
};

// ---------------------------------------------------------------------------------------------
// classic: synchronise, then plain MPI on the host.
// ---------------------------------------------------------------------------------------------
void exchange_classic(State &s) {
  const Decomp &d = s.d;
  StepClock clk(s);
  const bool staged = !s.dev.host_accessible() && !s.p.host_halos;
  s.dev.pack(s.u.get(), d.nx, d.ny, s.send.get());
  if (staged) s.dev.copy_async(s.send_h.get(), s.send.get(), d.halo_total());  // stage out
  // The host waits until the halos are packed -- and until last iteration's unpack has read
  // the receive buffer, which the receives below overwrite.
  s.dev.synchronize();
  clk.next(kStepPack);
  double *send = staged ? s.send_h.get() : s.send.get();
  double *recv = staged ? s.recv_h.get() : s.recv.get();
  MPI_Request req[8];
  int n = 0;
  for (int side = 0; side < 4; ++side)
    if (d.nbr[side] != MPI_PROC_NULL)
      check_mpi(MPI_Irecv(recv + d.halo_off(side), d.halo_len(side), MPI_DOUBLE, d.nbr[side],
                          opposite(side), s.comm, &req[n++]),
                "MPI_Irecv");
  clk.next(kStepRecv);
  for (int side = 0; side < 4; ++side)
    if (d.nbr[side] != MPI_PROC_NULL)
      check_mpi(MPI_Isend(send + d.halo_off(side), d.halo_len(side), MPI_DOUBLE, d.nbr[side], side,
                          s.comm, &req[n++]),
                "MPI_Isend");
  clk.next(kStepSend);
  check_mpi(MPI_Waitall(n, req, MPI_STATUSES_IGNORE), "MPI_Waitall");  // host waits for MPI
  clk.next(kStepWait);
  if (staged) s.dev.copy_async(s.recv.get(), s.recv_h.get(), d.halo_total());  // stage in
  s.dev.unpack(s.recv.get(), d.nx, d.ny, d.have(), s.u.get());
  clk.next(kStepUnpack);
}

void reduce_classic(State &s, int c) {
  s.dev.residual(s.u.get(), s.unew.get(), s.d.nx, s.d.ny, s.local.get() + c);
  s.dev.synchronize();  // the host waits for the local sum
  check_mpi(MPI_Allreduce(s.local.get() + c, s.global.get() + c, 1, MPI_DOUBLE, MPI_SUM, s.comm),
            "MPI_Allreduce");
}

// ---------------------------------------------------------------------------------------------
// mpix: the same messages, enqueued on the stream communicator. No host synchronisation.
// ---------------------------------------------------------------------------------------------
void exchange_mpix(State &s) {
  const Decomp &d = s.d;
  StepClock clk(s);
  MPI_Request req[8];
  int n = 0;
  // Posted when the stream gets here, i.e. after last iteration's unpack has read the buffer.
  for (int side = 0; side < 4; ++side)
    if (d.nbr[side] != MPI_PROC_NULL)
      check_mpi(MPIX_Irecv_enqueue(s.recv.get() + d.halo_off(side), d.halo_len(side), MPI_DOUBLE,
                                   d.nbr[side], opposite(side), s.comm, &req[n++]),
                "MPIX_Irecv_enqueue");
  clk.next(kStepRecv);
  s.dev.pack(s.u.get(), d.nx, d.ny, s.send.get());
  clk.next(kStepPack);
  // Sent when the stream gets here, i.e. once the pack has run. Device buffers are staged by
  // mpix in stream order.
  for (int side = 0; side < 4; ++side)
    if (d.nbr[side] != MPI_PROC_NULL)
      check_mpi(MPIX_Isend_enqueue(s.send.get() + d.halo_off(side), d.halo_len(side), MPI_DOUBLE,
                                   d.nbr[side], side, s.comm, &req[n++]),
                "MPIX_Isend_enqueue");
  clk.next(kStepSend);
  // The stream (not the host) waits for all eight; the next pack cannot overwrite a send
  // buffer still in flight, and the unpack reads only landed data.
  check_mpi(MPIX_Waitall_enqueue(n, req, MPI_STATUSES_IGNORE), "MPIX_Waitall_enqueue");
  clk.next(kStepWait);
  s.dev.unpack(s.recv.get(), d.nx, d.ny, d.have(), s.u.get());
  clk.next(kStepUnpack);
}

void reduce_mpix(State &s, int c) {
  s.dev.residual(s.u.get(), s.unew.get(), s.d.nx, s.d.ny, s.local.get() + c);
  check_mpi(
      MPIX_Allreduce_enqueue(s.local.get() + c, s.global.get() + c, 1, MPI_DOUBLE, MPI_SUM, s.comm),
      "MPIX_Allreduce_enqueue");
  s.marks[c] = s.dev.mark();  // the host may read global[c] once the stream passed this
}

// ---------------------------------------------------------------------------------------------
// partitioned: persistent partitioned requests, set up once; the pack kernel releases the sends.
// ---------------------------------------------------------------------------------------------

// The largest partition count <= @p most that splits @p len elements evenly (MPI partitions
// are equal-sized; 1 always does).
int partitions_for(int len, int most) {
  int k = most < len ? most : len;
  while (k > 1 && len % k != 0) --k;
  return k < 1 ? 1 : k;
}

// The partitioned variant's requests on the stream communicator, made once per solve: per
// neighbour a partitioned send of HaloReady::parts partitions, exported to the device for the
// pack kernel, and a partitioned receive of one partition (the unpack waits for the whole halo
// anyway; MPI-4 lets the two sides partition the same bytes differently). Tags as in the other
// variants. The first partitioned init on a communicator is collective over it in mpix
// (docs/partitioned.md): every rank gets here at the same point, and with more than one rank
// every rank has a neighbour, hence an init.
class PartitionedHalos {
 public:
  PartitionedHalos(const Decomp &d, const Params &p, Device &dev, MPI_Comm comm, double *send,
                   double *recv)
      : dev_(dev) {
    for (int side = 0; side < 4; ++side) {
      ready.preq[side] = MPIX_PREQUEST_NULL;
      ready.parts[side] = 0;
    }
    try {
      for (int side = 0; side < 4; ++side)  // receives first: started first every round
        if (d.nbr[side] != MPI_PROC_NULL)
          check_mpi(MPIX_Precv_init(recv + d.halo_off(side), 1, d.halo_len(side), MPI_DOUBLE,
                                    d.nbr[side], opposite(side), comm, MPI_INFO_NULL, &req[n++]),
                    "MPIX_Precv_init");
      for (int side = 0; side < 4; ++side)
        if (d.nbr[side] != MPI_PROC_NULL) {
          const int parts = partitions_for(d.halo_len(side), p.partitions);
          MPIX_Request *r = &req[n++];
          check_mpi(MPIX_Psend_init(send + d.halo_off(side), parts, d.halo_len(side) / parts,
                                    MPI_DOUBLE, d.nbr[side], side, comm, MPI_INFO_NULL, r),
                    "MPIX_Psend_init");
          check_mpi(MPIX_Prequest_create(*r, &ready.preq[side]), "MPIX_Prequest_create");
          ready.parts[side] = parts;
        }
    } catch (...) {
      release();
      throw;
    }
  }
  // Frees the requests once the stream has drained (the kernels are done with the device
  // requests, and the last rounds have completed). Throws if freeing reports an error, e.g. a
  // device-side misuse in the last rounds.
  void close() {
    dev_.synchronize();
    int rc = release();
    check_mpi(rc, "MPIX_Prequest_free / MPIX_Request_free");
  }
  ~PartitionedHalos() {
    if (n == 0) return;
    try {
      dev_.synchronize();
    } catch (...) {
    }
    release();
  }
  PartitionedHalos(const PartitionedHalos &) = delete;
  PartitionedHalos &operator=(const PartitionedHalos &) = delete;

  MPIX_Request req[8];  // receives, then sends; n of them
  int n = 0;
  HaloReady ready;  // the sends' device requests and partition counts, by side

 private:
  int release() {
    int first = MPI_SUCCESS;
    for (MPIX_Prequest &pr : ready.preq)
      if (pr != MPIX_PREQUEST_NULL) {
        const int rc = MPIX_Prequest_free(&pr);
        if (first == MPI_SUCCESS) first = rc;
      }
    for (int i = 0; i < n; ++i) {
      const int rc = MPIX_Request_free(&req[i]);
      if (first == MPI_SUCCESS) first = rc;
    }
    n = 0;
    return first;
  }
  Device &dev_;
};

void exchange_partitioned(State &s) {
  const Decomp &d = s.d;
  PartitionedHalos &h = *s.halos;
  StepClock clk(s);
  // A new round of every request when the stream gets here: the receives are posted after last
  // iteration's unpack has read the buffer, and the sends become active for the pack kernel.
  // (One stream call for all of them: MPIX_Startall_enqueue.)
  check_mpi(MPIX_Startall_enqueue(h.n, h.req), "MPIX_Startall_enqueue");
  clk.next(kStepRecv);
  // Writes each halo partition, then marks it ready (device MPIX_Pready): it is sent as soon as
  // it is marked, with no stream trigger or host call in between.
  s.dev.pack_pready(s.u.get(), d.nx, d.ny, s.send.get(), h.ready);
  clk.next(kStepPack);
  // The stream waits for every round: the send buffer may be packed again, the halos landed.
  check_mpi(MPIX_Pwaitall_enqueue(h.n, h.req, MPI_STATUSES_IGNORE), "MPIX_Pwaitall_enqueue");
  clk.next(kStepWait);
  s.dev.unpack(s.recv.get(), d.nx, d.ny, d.have(), s.u.get());
  clk.next(kStepUnpack);
}

// An MPIX_Stream over the device's stream and a stream communicator over the Cartesian one.
// Freed in reverse order after the stream has drained (freeing either with ops still pending
// fails with MPI_ERR_PENDING).
class StreamComm {
 public:
  StreamComm(Device &dev, MPI_Comm parent) : dev_(dev) {
    check_mpi(dev.make_mpix_stream(&stream_), "MPIX_Stream_create");
    check_mpi(MPIX_Stream_comm_create(parent, stream_, &comm_), "MPIX_Stream_comm_create");
  }
  ~StreamComm() {
    dev_.synchronize();
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    if (stream_ != MPIX_STREAM_NULL) MPIX_Stream_free(&stream_);
  }
  StreamComm(const StreamComm &) = delete;
  StreamComm &operator=(const StreamComm &) = delete;
  MPI_Comm comm() const { return comm_; }

 private:
  Device &dev_;
  MPIX_Stream stream_ = MPIX_STREAM_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

void init_field(State &s) {
  const Decomp &d = s.d;
  const std::size_t w = d.nx + 2;
  std::vector<double> h(w * (d.ny + 2));
  for (int y = 0; y < d.ny + 2; ++y)
    for (int x = 0; x < d.nx + 2; ++x)
      h[y * w + x] = start_value(d.gy0 - 1 + y, d.gx0 - 1 + x, d.NY, d.NX);
  // Both arrays carry the boundary ring: the update writes only interior cells.
  s.dev.upload(s.u.get(), h.data(), h.size());
  s.dev.upload(s.unew.get(), h.data(), h.size());
}

}  // namespace

Result solve(MPI_Comm comm, const Params &p, Device &dev, HaloBuffers *keep) {
  if (p.iters < 0 || p.check_every < 1 || p.warmup < 0 || p.warmup > p.iters || p.partitions < 1)
    throw std::runtime_error(
        "bad parameters: need iters >= warmup >= 0, check_every >= 1 and "
        "partitions >= 1");
  Decomp d(comm, p);
  HaloBuffers own;
  State s(p, d, dev, keep ? *keep : own);
  const std::size_t cells = static_cast<std::size_t>(d.nx + 2) * (d.ny + 2);
  const int checks = p.iters / p.check_every;
  s.u = Buffer(dev, cells, false);
  s.unew = Buffer(dev, cells, false);
  // Device halos of the partitioned variant go GPU to GPU partition by partition where the two
  // ranks share a node (docs/partitioned.md), and are staged through host memory elsewhere.
  const std::size_t halo = d.halo_total();
  auto ensure = [&](Buffer &b, bool host) {
    if (!b.holds(dev, halo, host)) b = Buffer(dev, halo, host);
  };
  ensure(s.send, p.host_halos);
  ensure(s.recv, p.host_halos);
  if (p.variant == Variant::classic && !dev.host_accessible() && !p.host_halos) {
    ensure(s.send_h, true);
    ensure(s.recv_h, true);
  }
  s.local = Buffer(dev, checks + 1, true);
  s.global = Buffer(dev, checks + 1, true);
  s.marks.assign(checks + 1, -1);
  init_field(s);

  const bool enqueued = p.variant != Variant::classic;  // mpix and partitioned
  std::unique_ptr<StreamComm> sc;
  std::unique_ptr<PartitionedHalos> halos;  // freed before sc's communicator
  if (enqueued) {
    sc = std::make_unique<StreamComm>(dev, d.cart);
    s.comm = sc->comm();
  } else {
    s.comm = d.cart;
  }
  if (p.variant == Variant::partitioned) {
    halos = std::make_unique<PartitionedHalos>(d, p, dev, s.comm, s.send.get(), s.recv.get());
    s.halos = halos.get();
  }
  auto exchange = p.variant == Variant::classic ? exchange_classic
                  : p.variant == Variant::mpix  ? exchange_mpix
                                                : exchange_partitioned;
  auto reduce = enqueued ? reduce_mpix : reduce_classic;
  // Has the stream finished check c's reduction? (classic: it finished on the host already.)
  double waited = 0;
  bool it_timed = false;
  auto reduced = [&](int c) {
    if (enqueued) {
      const double w0 = now();
      dev.wait_mark(s.marks[c]);
      if (it_timed) waited += now() - w0;
    }
    return std::sqrt(s.global.get()[c]);
  };

  Result r;
  double t0 = now();
  int it = 0;
  for (; it < p.iters; ++it) {
    if (it == p.warmup) {
      dev.synchronize();
      check_mpi(MPI_Barrier(d.cart), "MPI_Barrier");
      t0 = now();
      it_timed = true;
      s.steps = r.host_step_seconds;
    }
    exchange(s);
    {
      StepClock clk(s);
      dev.jacobi(s.u.get(), s.unew.get(), d.nx, d.ny);
      clk.next(kStepJacobi);
    }
    bool stop = false;
    if ((it + 1) % p.check_every == 0) {
      const int c = (it + 1) / p.check_every - 1;
      {
        StepClock clk(s);
        reduce(s, c);
        clk.next(kStepReduce);
      }
      // Stopping rule, the same in every variant so they stop at the same iteration: at check
      // c, look at check c-1. The mpix host thus never waits for the reduction it has just
      // enqueued, only for one enqueued K iterations ago; that wait also keeps the host from
      // running more than K iterations ahead of the stream.
      if (c >= 1) {
        const double previous = reduced(c - 1);
        stop = p.tol > 0 && previous < p.tol;
      }
    }
    s.u.swap(s.unew);
    if (stop) {
      ++it;
      break;
    }
  }
  const double t_loop = now();
  dev.synchronize();
  const double t1 = now();
  if (halos) halos->close();
  if (it_timed) {
    r.host_loop_seconds = t_loop - t0;
    r.host_wait_seconds = waited;
  }
  r.iters_done = it;
  r.timed_iters = it > p.warmup ? it - p.warmup : 0;
  double mine = r.timed_iters ? t1 - t0 : 0;
  check_mpi(MPI_Allreduce(&mine, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, d.cart), "MPI_Allreduce");
  for (int c = 0; c < it / p.check_every; ++c) r.residuals.push_back(std::sqrt(s.global.get()[c]));

  std::vector<double> h(cells);
  dev.download(h.data(), s.u.get(), cells);
  r.field.resize(static_cast<std::size_t>(d.nx) * d.ny);
  for (int y = 0; y < d.ny; ++y)
    for (int x = 0; x < d.nx; ++x)
      r.field[static_cast<std::size_t>(y) * d.nx + x] = h[(y + 1) * (d.nx + 2) + x + 1];
  r.nx = d.nx;
  r.ny = d.ny;
  r.gx0 = d.gx0;
  r.gy0 = d.gy0;
  r.NX = d.NX;
  r.NY = d.NY;
  return r;
}

}  // namespace jacobi
