// C entry points: MPI-4 partitioned communication (MPIX_Psend_init ... MPIX_Pwait_enqueue,
// MPIX_Pready_enqueue) and device requests (MPIX_Prequest_create / _free).
#include <climits>
#include <cstdint>
#include <vector>

#include "api/checks.hpp"
#include "api/errors.hpp"
#include "core/mpi_status.hpp"
#include "core/runtime.hpp"
#include "mpix/mpix.h"
#include "partitioned/device_request.hpp"
#include "partitioned/prequest.hpp"

namespace mpix {
namespace {

uint64_t id_of(MPIX_Request r) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(r)); }

Status find(MPIX_Request h, std::shared_ptr<PRequest> *out) {
  if (h == MPIX_REQUEST_NULL) return make_status(MPI_ERR_REQUEST, "request is MPIX_REQUEST_NULL");
  *out = prequest_lookup(id_of(h));
  if (!*out)
    return make_status(MPI_ERR_REQUEST, "request %p is not a live partitioned request (freed?)",
                       static_cast<void *>(h));
  return {};
}

MPI_Comm comm_of(MPIX_Request h) {
  if (h == MPIX_REQUEST_NULL) return MPI_COMM_NULL;
  std::shared_ptr<PRequest> r = prequest_lookup(id_of(h));
  return r ? r->comm() : MPI_COMM_NULL;
}

Status p_init(PRequest::Side side, const void *buf, int partitions, MPI_Count count,
              MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPIX_Request *request) {
  MPIX_TRY(check_comm(comm));
  if (!request) return make_status(MPI_ERR_ARG, "request is NULL");
  if (partitions < 0) return make_status(MPI_ERR_ARG, "partitions %d is negative", partitions);
  if (count < 0)
    return make_status(MPI_ERR_COUNT, "count %lld is negative", static_cast<long long>(count));
  if (count > INT_MAX)
    return make_status(MPI_ERR_COUNT,
                       "count %lld per partition is more than INT_MAX (each "
                       "partition travels as one MPI message)",
                       static_cast<long long>(count));
  MPIX_TRY(runtime_init());
  MPIX_TRY(check_datatype(dt));
  MPIX_TRY(check_buffer(buf, partitions > 0 && count > 0 ? 1 : 0, dt, "buf"));
  // MPI-4 partitioned calls take no wildcards.
  if (peer == MPI_ANY_SOURCE)
    return make_status(MPI_ERR_RANK,
                       "MPI_ANY_SOURCE: partitioned communication takes no "
                       "wildcards");
  if (tag == MPI_ANY_TAG)
    return make_status(MPI_ERR_TAG, "MPI_ANY_TAG: partitioned communication takes no wildcards");
  MPIX_TRY(check_rank(comm, peer, false));
  MPIX_TRY(check_tag(tag, false));
  std::shared_ptr<PRequest> r;
  MPIX_TRY(
      PRequest::init(side, const_cast<void *>(buf), partitions, count, dt, peer, tag, comm, &r));
  *request = reinterpret_cast<MPIX_Request>(static_cast<uintptr_t>(prequest_register(r)));
  return {};
}

// MPIX_Start (@p many false) and MPIX_Startall: every request is checked before any starts.
Status start_all(int count, MPIX_Request reqs[], bool enqueued, bool many) {
  MPIX_TRY(check_count(count));
  if (count > 0 && !reqs) return make_status(MPI_ERR_ARG, "array_of_requests is NULL");
  std::vector<std::shared_ptr<PRequest>> rs(static_cast<std::size_t>(count));
  auto which = [many](int i, const Status &st) {
    return many ? make_status(st.code(), "array_of_requests[%d]: %s", i, st.what().c_str()) : st;
  };
  for (int i = 0; i < count; ++i) {
    Status st = find(reqs[i], &rs[static_cast<std::size_t>(i)]);
    if (!st.is_ok()) return which(i, st);
  }
  for (int i = 0; i < count; ++i) {
    Status st = rs[static_cast<std::size_t>(i)]->check_start(enqueued);
    if (!st.is_ok()) return which(i, st);
  }
  if (enqueued && many) return PRequest::start_enqueue_all(rs);
  for (auto &r : rs) MPIX_TRY(r->start(enqueued));
  return {};
}

// MPIX_Pwaitall_enqueue: MPIX_REQUEST_NULL entries get an empty status, the others are
// waited for together.
Status pwait_all(int count, MPIX_Request reqs[], MPI_Status *statuses) {
  MPIX_TRY(check_count(count));
  if (count > 0 && !reqs) return make_status(MPI_ERR_ARG, "array_of_requests is NULL");
  std::vector<std::shared_ptr<PRequest>> rs;
  std::vector<MPI_Status *> sts;
  for (int i = 0; i < count; ++i) {
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
    if (reqs[i] == MPIX_REQUEST_NULL) {
      status_set_empty(st);
      continue;
    }
    std::shared_ptr<PRequest> r;
    Status found = find(reqs[i], &r);
    if (!found.is_ok())
      return make_status(found.code(), "array_of_requests[%d]: %s", i, found.what().c_str());
    rs.push_back(std::move(r));
    sts.push_back(st);
  }
  return PRequest::pwait_enqueue_all(rs, sts);
}

// MPIX_Pready[_enqueue] of @p n partitions (the host's mark, or the stream's with @p enqueued).
Status pready(MPIX_Request request, const int *parts, int n, bool enqueued) {
  std::shared_ptr<PRequest> r;
  MPIX_TRY(find(request, &r));
  return enqueued ? r->pready_enqueue(parts, n) : r->pready(parts, n);
}

// MPIX_Pready_range[_enqueue]: every partition from @p low to @p high.
Status pready_range(int low, int high, MPIX_Request request, bool enqueued) {
  if (low > high)
    return make_status(MPI_ERR_ARG, "partition_low %d > partition_high %d", low, high);
  std::vector<int> parts;
  parts.reserve(static_cast<std::size_t>(static_cast<int64_t>(high) - low + 1));
  for (int64_t p = low; p <= high; ++p) parts.push_back(static_cast<int>(p));
  return pready(request, parts.data(), static_cast<int>(parts.size()), enqueued);
}

// MPIX_Pready_list[_enqueue]: the @p length partitions listed (none: the handle is checked).
Status pready_list(int length, const int *parts, MPIX_Request request, bool enqueued) {
  if (length < 0) return make_status(MPI_ERR_ARG, "length %d is negative", length);
  if (length > 0 && !parts) return make_status(MPI_ERR_ARG, "array_of_partitions is NULL");
  if (length > 0) return pready(request, parts, length, enqueued);
  std::shared_ptr<PRequest> r;
  return find(request, &r);
}

Status wait_or_test(MPIX_Request *request, int *flag, MPI_Status *status) {
  if (!request) return make_status(MPI_ERR_ARG, "request is NULL");
  if (*request == MPIX_REQUEST_NULL) {
    status_set_empty(status);
    if (flag) *flag = 1;
    return {};
  }
  std::shared_ptr<PRequest> r;
  MPIX_TRY(find(*request, &r));
  return r->wait(status, flag);
}

}  // namespace
}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPIX_Request *request) {
  return api_guard("MPIX_Psend_init", [&]() -> int {
    (void)info;  // no hints are defined
    return finish(
        comm, "MPIX_Psend_init",
        p_init(PRequest::Side::send, buf, partitions, count, datatype, dest, tag, comm, request));
  });
}

int MPIX_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPIX_Request *request) {
  return api_guard("MPIX_Precv_init", [&]() -> int {
    (void)info;
    return finish(
        comm, "MPIX_Precv_init",
        p_init(PRequest::Side::recv, buf, partitions, count, datatype, source, tag, comm, request));
  });
}

int MPIX_Start(MPIX_Request *request) {
  return api_guard("MPIX_Start", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    Status st =
        request ? start_all(1, request, false, false) : make_status(MPI_ERR_ARG, "request is NULL");
    return finish(comm, "MPIX_Start", st);
  });
}

int MPIX_Startall(int count, MPIX_Request array_of_requests[]) {
  return api_guard("MPIX_Startall", [&]() -> int {
    MPI_Comm comm = count > 0 && array_of_requests ? comm_of(array_of_requests[0]) : MPI_COMM_NULL;
    return finish(comm, "MPIX_Startall", start_all(count, array_of_requests, false, true));
  });
}

int MPIX_Start_enqueue(MPIX_Request *request) {
  return api_guard("MPIX_Start_enqueue", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    Status st =
        request ? start_all(1, request, true, false) : make_status(MPI_ERR_ARG, "request is NULL");
    return finish(comm, "MPIX_Start_enqueue", st);
  });
}

int MPIX_Pready(int partition, MPIX_Request request) {
  return api_guard("MPIX_Pready", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready", pready(request, &partition, 1, false));
  });
}

int MPIX_Pready_range(int partition_low, int partition_high, MPIX_Request request) {
  return api_guard("MPIX_Pready_range", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready_range",
                  pready_range(partition_low, partition_high, request, false));
  });
}

int MPIX_Pready_list(int length, const int array_of_partitions[], MPIX_Request request) {
  return api_guard("MPIX_Pready_list", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready_list",
                  pready_list(length, array_of_partitions, request, false));
  });
}

int MPIX_Pready_enqueue(int partition, MPIX_Request request) {
  return api_guard("MPIX_Pready_enqueue", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready_enqueue", pready(request, &partition, 1, true));
  });
}

int MPIX_Pready_range_enqueue(int partition_low, int partition_high, MPIX_Request request) {
  return api_guard("MPIX_Pready_range_enqueue", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready_range_enqueue",
                  pready_range(partition_low, partition_high, request, true));
  });
}

int MPIX_Pready_list_enqueue(int length, const int array_of_partitions[], MPIX_Request request) {
  return api_guard("MPIX_Pready_list_enqueue", [&]() -> int {
    return finish(comm_of(request), "MPIX_Pready_list_enqueue",
                  pready_list(length, array_of_partitions, request, true));
  });
}

int MPIX_Parrived(MPIX_Request request, int partition, int *flag) {
  return api_guard("MPIX_Parrived", [&]() -> int {
    std::shared_ptr<PRequest> r;
    Status st = find(request, &r);
    if (st.is_ok()) st = r->parrived(partition, flag);
    return finish(comm_of(request), "MPIX_Parrived", st);
  });
}

int MPIX_Request_get_path(MPIX_Request request, int *direct, MPI_Count *host_steps) {
  return api_guard("MPIX_Request_get_path", [&]() -> int {
    std::shared_ptr<PRequest> r;
    Status st = find(request, &r);
    if (st.is_ok()) r->path(direct, host_steps);
    return finish(comm_of(request), "MPIX_Request_get_path", st);
  });
}

int MPIX_Wait(MPIX_Request *request, MPI_Status *status) {
  return api_guard("MPIX_Wait", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    return finish(comm, "MPIX_Wait", wait_or_test(request, nullptr, status));
  });
}

int MPIX_Test(MPIX_Request *request, int *flag, MPI_Status *status) {
  return api_guard("MPIX_Test", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    Status st =
        flag ? wait_or_test(request, flag, status) : make_status(MPI_ERR_ARG, "flag is NULL");
    return finish(comm, "MPIX_Test", st);
  });
}

int MPIX_Pwait_enqueue(MPIX_Request *request, MPI_Status *status) {
  return api_guard("MPIX_Pwait_enqueue", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    std::shared_ptr<PRequest> r;
    Status st = request ? find(*request, &r) : make_status(MPI_ERR_ARG, "request is NULL");
    if (st.is_ok()) st = r->pwait_enqueue(status);
    return finish(comm, "MPIX_Pwait_enqueue", st);
  });
}

int MPIX_Startall_enqueue(int count, MPIX_Request array_of_requests[]) {
  return api_guard("MPIX_Startall_enqueue", [&]() -> int {
    MPI_Comm comm = count > 0 && array_of_requests ? comm_of(array_of_requests[0]) : MPI_COMM_NULL;
    return finish(comm, "MPIX_Startall_enqueue", start_all(count, array_of_requests, true, true));
  });
}

int MPIX_Pwaitall_enqueue(int count, MPIX_Request array_of_requests[],
                          MPI_Status array_of_statuses[]) {
  return api_guard("MPIX_Pwaitall_enqueue", [&]() -> int {
    MPI_Comm comm = count > 0 && array_of_requests ? comm_of(array_of_requests[0]) : MPI_COMM_NULL;
    return finish(comm, "MPIX_Pwaitall_enqueue",
                  pwait_all(count, array_of_requests, array_of_statuses));
  });
}

int MPIX_Request_free(MPIX_Request *request) {
  return api_guard("MPIX_Request_free", [&]() -> int {
    MPI_Comm comm = request ? comm_of(*request) : MPI_COMM_NULL;
    std::shared_ptr<PRequest> r;
    Status st = request ? find(*request, &r) : make_status(MPI_ERR_ARG, "request is NULL");
    if (st.is_ok()) {
      bool released = false;
      st = r->release(&released);  // may report a device error and still free
      if (released) {
        prequest_unregister(id_of(*request));
        *request = MPIX_REQUEST_NULL;
      }
    }
    return finish(comm, "MPIX_Request_free", st);
  });
}

int MPIX_Prequest_create(MPIX_Request request, MPIX_Prequest *prequest) {
  return api_guard("MPIX_Prequest_create", [&]() -> int {
    std::shared_ptr<PRequest> r;
    Status st = find(request, &r);
    if (st.is_ok() && !prequest) st = make_status(MPI_ERR_ARG, "prequest is NULL");
    if (st.is_ok()) st = device_request_create(r, prequest);
    return finish(comm_of(request), "MPIX_Prequest_create", st);
  });
}

MPIX_Prequest MPIX_Prequest_host_view(MPIX_Prequest prequest) {
  try {
    return prequest == MPIX_PREQUEST_NULL ? MPIX_PREQUEST_NULL : device_request_host_view(prequest);
  } catch (...) {
    exception_class("MPIX_Prequest_host_view");
    return MPIX_PREQUEST_NULL;
  }
}

int MPIX_Prequest_host_marked(MPIX_Prequest view, int low, int high, uint64_t mark) {
  return api_guard("MPIX_Prequest_host_marked", [&]() -> int {
    return finish(MPI_COMM_NULL, "MPIX_Prequest_host_marked",
                  device_request_host_marked(view, low, high, mark));
  });
}

int MPIX_Prequest_free(MPIX_Prequest *prequest) {
  return api_guard("MPIX_Prequest_free", [&]() -> int {
    Status st;
    if (!prequest || *prequest == MPIX_PREQUEST_NULL)
      st = make_status(MPI_ERR_ARG, "prequest is %s", prequest ? "MPIX_PREQUEST_NULL" : "NULL");
    else st = device_request_free(*prequest);
    if (st.is_ok()) *prequest = MPIX_PREQUEST_NULL;
    return finish(MPI_COMM_NULL, "MPIX_Prequest_free", st);
  });
}

}  // extern "C"
