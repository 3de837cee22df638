// C entry points: streams and stream communicators (MPICH-compatible).
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "api/api_settings.hpp"
#include "api/checks.hpp"
#include "api/errors.hpp"
#include "api/info_hex.hpp"
#include "api/stream_handle.hpp"
#include "core/comm_ctx.hpp"
#include "core/enqueue.hpp"
#include "core/runtime.hpp"
#include "core/stream.hpp"
#include "mpix/mpix.h"

namespace mpix {
namespace {

// Reads @p key from @p info; false if absent.
bool info_get(MPI_Info info, const char *key, std::string *out) {
  if (info == MPI_INFO_NULL) return false;
  int len = 0, flag = 0;
  MPI_Info_get_valuelen(info, key, &len, &flag);
  if (!flag) return false;
  std::string v(static_cast<std::size_t>(len) + 1, '\0');
  MPI_Info_get(info, key, len + 1, &v[0], &flag);
  v.resize(static_cast<std::size_t>(len));
  *out = v;
  return true;
}

Status parse_trigger(MPI_Info info, TriggerMode *mode, bool *explicit_mode) {
  std::string v;
  *explicit_mode = true;
  if (!info_get(info, "mpix_trigger", &v)) v = setting_str(ApiSetting::trigger);
  if (v == "auto") {
    *explicit_mode = false;
    *mode = TriggerMode::memop;
  } else if (v == "memop") *mode = TriggerMode::memop;
  else if (v == "hostfn") *mode = TriggerMode::hostfn;
  else if (v == "kernel") *mode = TriggerMode::kernel;
  else
    return make_status(MPI_ERR_ARG, "trigger mode \"%s\" is not one of memop, hostfn, kernel",
                       v.c_str());
  return {};
}

Status parse_defer_triggers(MPI_Info info, bool *on) {
  std::string v;
  if (!info_get(info, "mpix_defer_trigger", &v)) v = setting_str(ApiSetting::defer_trigger);
  if (v == "1" || v == "true" || v == "on") *on = true;
  else if (v == "0" || v == "false" || v == "off") *on = false;
  else return make_status(MPI_ERR_ARG, "mpix_defer_trigger \"%s\" is not true or false", v.c_str());
  return {};
}

// Info key mpix_sync_plain_calls (see Stream::set_sync_plain_calls); @p on keeps its default
// when the key is absent.
Status parse_sync_plain(MPI_Info info, bool *on) {
  std::string v;
  if (!info_get(info, "mpix_sync_plain_calls", &v)) return {};
  if (v == "1" || v == "true" || v == "on") *on = true;
  else if (v == "0" || v == "false" || v == "off") *on = false;
  else
    return make_status(MPI_ERR_ARG, "mpix_sync_plain_calls \"%s\" is not true or false", v.c_str());
  return {};
}

Status stream_create(MPI_Info info, MPIX_Stream *out) {
  if (!out) return make_status(MPI_ERR_ARG, "stream is NULL");
  MPIX_TRY(runtime_init());
  std::string type;
  StreamKind kind = StreamKind::general;
  if (info_get(info, "type", &type)) {
    if (type == "cudaStream_t") kind = StreamKind::cuda;
    else if (type == "hipStream_t") kind = StreamKind::hip;
    else if (type == "mpix_host_stream") kind = StreamKind::host;
    else
      return make_status(MPI_ERR_ARG,
                         "info type \"%s\" is not cudaStream_t, hipStream_t or "
                         "mpix_host_stream",
                         type.c_str());
  }
  bool defer = false;
  MPIX_TRY(parse_defer_triggers(info, &defer));
  bool sync_plain = kind == StreamKind::cuda || kind == StreamKind::hip;
  MPIX_TRY(parse_sync_plain(info, &sync_plain));
  if (kind == StreamKind::general) sync_plain = false;  // nothing to synchronise
  Backend *be = nullptr;
  MPIX_TRY(backend_get(kind, &be));
  std::unique_ptr<ExecStream> exec;
  if (kind != StreamKind::general) {
    void *native = nullptr;
    std::string hex;
    if (info_get(info, "value", &hex)) {
      if (!hex_decode(hex, &native, sizeof native))
        return make_status(MPI_ERR_ARG,
                           "info value \"%s\" is not a %zu-byte handle encoded "
                           "with MPIX_Info_set_hex",
                           hex.c_str(), sizeof native);
    } else if (kind != StreamKind::host) {
      return make_status(MPI_ERR_ARG,
                         "info type %s needs a \"value\" (the stream handle, set "
                         "with MPIX_Info_set_hex)",
                         type.c_str());
    }
    TriggerMode mode = TriggerMode::memop;
    bool explicit_mode = false;
    MPIX_TRY(parse_trigger(info, &mode, &explicit_mode));
    MPIX_TRY(be->open_stream(native, mode, &exec));
  }
  auto s = make_stream(stream_new_id(), kind, be, std::move(exec));
  s->set_defer_triggers(defer);
  s->set_sync_plain_calls(sync_plain);
  uint64_t id = 0;
  MPIX_TRY(stream_register(std::move(s), &id));
  *out = to_handle(id);
  return {};
}

Status stream_comm_create(MPI_Comm comm, MPIX_Stream h, MPI_Comm *newcomm) {
  MPIX_TRY(check_comm(comm));
  if (!newcomm) return make_status(MPI_ERR_ARG, "newcomm is NULL");
  // A bad MPIX_* setting on this rank only still joins the agreement below, so that the other
  // ranks get an error instead of waiting in MPI_Comm_dup for this one.
  bool bad_setting = false;
  Status local = runtime_init(&bad_setting);
  if (!local.is_ok() && !bad_setting) return local;
  auto ctx = std::make_shared<CommCtx>();
  if (local.is_ok() && h != MPIX_STREAM_NULL) local = find_stream(h, &ctx->stream);
  Provider *prov = nullptr;
  if (local.is_ok()) local = provider_get(&prov);
  MPI_Comm dup = MPI_COMM_NULL;
  MPIX_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  // Agree before anything else collective: a rank with a bad argument must not leave the
  // others waiting in the provider's address exchange.
  int bad = local.is_ok() ? 0 : 1, any_bad = 0;
  int rc = MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, dup);
  Status st = local;
  if (st.is_ok() && rc != MPI_SUCCESS) st = mpi_status(rc, "MPI_Allreduce", __FILE__, __LINE__);
  if (st.is_ok() && any_bad)
    st = make_status(MPI_ERR_OTHER, "another rank passed a bad argument; no communicator made");
  // Collective on every rank, whether or not this rank passed a stream.
  CommStreamInfo si;
  // Host streams have no device, unless their backend stands in for one (MPIX_HOST_IPC, tests).
  if (st.is_ok() && ctx->stream && ctx->stream->kind() != StreamKind::general &&
      (ctx->stream->kind() != StreamKind::host ||
       ctx->stream->backend()->emulates_device_memory())) {
    ExecStream *ex = nullptr;
    if (ctx->stream->exec(&ex).is_ok()) {
      si.backend = ctx->stream->backend();
      si.device = ex->device();
      si.host_functions = ex->trigger_mode() == TriggerMode::hostfn;
    }
  }
  if (st.is_ok()) st = prov->comm_open_on_stream(dup, si, &ctx->prov);
  if (st.is_ok()) {
    if (ctx->stream) ctx->stream->attached_comms.fetch_add(1);
    st = comm_ctx_attach(dup, std::move(ctx));
  }
  if (!st.is_ok()) {
    MPI_Comm_free(&dup);
    return st;
  }
  *newcomm = dup;
  return {};
}

Status comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *out) {
  MPIX_TRY(check_comm(comm));
  if (!out) return make_status(MPI_ERR_ARG, "stream is NULL");
  MPIX_TRY(runtime_init());
  std::shared_ptr<CommCtx> ctx;
  MPIX_TRY(comm_ctx_get(comm, &ctx));
  if (ctx && ctx->mux) {
    const int n = static_cast<int>(ctx->mux->local.size());
    if (idx < 0 || idx >= n)
      return make_status(MPI_ERR_ARG,
                         "idx %d is out of range: this rank's multiplex communicator has %d "
                         "stream(s), indices 0..%d",
                         idx, n, n - 1);
    const auto &s = ctx->mux->local[static_cast<std::size_t>(idx)];
    *out = s ? to_handle(s->id()) : MPIX_STREAM_NULL;
    return {};
  }
  if (idx != 0 && idx != -1)
    return make_status(MPI_ERR_ARG, "idx %d: a single-stream communicator has only index 0", idx);
  *out = (ctx && ctx->stream) ? to_handle(ctx->stream->id()) : MPIX_STREAM_NULL;
  return {};
}

}  // namespace

Status find_stream(MPIX_Stream h, std::shared_ptr<Stream> *out, const char *what) {
  if (h == MPIX_STREAM_NULL) return make_status(MPI_ERR_ARG, "%s is MPIX_STREAM_NULL", what);
  *out = stream_lookup(handle_id(h));
  if (!*out)
    return make_status(MPI_ERR_ARG,
                       "%s: handle %p is not a live stream (never created by "
                       "MPIX_Stream_create, or freed)",
                       what, static_cast<void *>(h));
  return {};
}

Status stream_drain_for_host_call(Stream &s) {
  if (!s.syncs_plain_calls()) return {};
  ExecStream *ex = nullptr;
  MPIX_TRY(s.exec(&ex));
  {
    std::lock_guard<FutexLock> lk(s.enqueue_mutex());
    MPIX_TRY(flush_deferred_trigger(s, *ex));
  }
  MPIX_TRY(ex->synchronize());
  s.settle(std::chrono::seconds(1));  // ops over but for their answer (Stream::early_waits)
  return {};
}

}  // namespace mpix

using namespace mpix;

extern "C" {

int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream) {
  return api_guard("MPIX_Stream_create", [&]() -> int {
    return finish(MPI_COMM_NULL, "MPIX_Stream_create", stream_create(info, stream));
  });
}

int MPIX_Stream_free(MPIX_Stream *stream) {
  return api_guard("MPIX_Stream_free", [&]() -> int {
    Status st;
    if (!stream) st = make_status(MPI_ERR_ARG, "stream is NULL");
    else if (*stream == MPIX_STREAM_NULL)
      st = make_status(MPI_ERR_ARG, "stream is MPIX_STREAM_NULL");
    else st = stream_unregister(handle_id(*stream));
    if (st.is_ok()) *stream = MPIX_STREAM_NULL;
    return finish(MPI_COMM_NULL, "MPIX_Stream_free", st);
  });
}

int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm) {
  return api_guard("MPIX_Stream_comm_create", [&]() -> int {
    return finish(comm, "MPIX_Stream_comm_create", stream_comm_create(comm, stream, newcomm));
  });
}

int MPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream) {
  return api_guard("MPIX_Comm_get_stream", [&]() -> int {
    return finish(comm, "MPIX_Comm_get_stream", comm_get_stream(comm, idx, stream));
  });
}

int MPIX_Stream_synchronize(MPIX_Stream stream) {
  return api_guard("MPIX_Stream_synchronize", [&]() -> int {
    std::shared_ptr<Stream> s;
    Status st = find_stream(stream, &s);
    ExecStream *ex = nullptr;
    if (st.is_ok()) st = s->exec(&ex);
    if (st.is_ok()) {
      std::lock_guard<FutexLock> lk(s->enqueue_mutex());
      st = flush_deferred_trigger(*s, *ex);
    }
    if (st.is_ok()) st = ex->synchronize();
    if (!st.is_ok()) return finish(MPI_COMM_NULL, "MPIX_Stream_synchronize", st);
    // Every op the stream waited on is over: those whose wait went on before they completed
    // (GPU-direct sends released by their receiver's copy) complete on their answer, which is
    // on its way; when this returns, none is pending (MPI_Comm_free, MPIX_Stream_free).
    s->settle(std::chrono::seconds(1));
    // An enqueued blocking op failed since the last synchronize: its error code (with the cause)
    // goes to MPI_COMM_WORLD's error handler and back to the caller.
    if (const int code = s->take_sync_error())
      return report_code(MPI_COMM_NULL, "MPIX_Stream_synchronize", code);
    return MPI_SUCCESS;
  });
}

int MPIX_Stream_get_error(MPIX_Stream stream, int *errorcode) {
  return api_guard("MPIX_Stream_get_error", [&]() -> int {
    std::shared_ptr<Stream> s;
    Status st = find_stream(stream, &s);
    if (st.is_ok() && !errorcode) st = make_status(MPI_ERR_ARG, "errorcode is NULL");
    if (st.is_ok()) *errorcode = s->take_error();
    return finish(MPI_COMM_NULL, "MPIX_Stream_get_error", st);
  });
}

}  // extern "C"
