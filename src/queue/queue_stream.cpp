#include "queue/queue_stream.hpp"

#include <cstring>
#include <string>

#include "api/api_settings.hpp"
#include "base/log.hpp"
#include "core/comm_ctx.hpp"
#include "core/stream.hpp"
#include "gpu/backend.hpp"
#include "gpu/host/host_backend.hpp"
#include "queue/queue_settings.hpp"

namespace mpix {
namespace {

Status trigger_setting(TriggerMode *mode) {
  const char *v = setting_str(ApiSetting::trigger);
  if (!std::strcmp(v, "auto") || !std::strcmp(v, "memop")) *mode = TriggerMode::memop;
  else if (!std::strcmp(v, "hostfn")) *mode = TriggerMode::hostfn;
  else if (!std::strcmp(v, "kernel")) *mode = TriggerMode::kernel;
  else
    return make_status(MPI_ERR_ARG, "MPIX_TRIGGER=%s is not one of auto, memop, hostfn, kernel", v);
  return {};
}

// MPIX_QUEUE_STREAM: false with @p kind untouched for "auto".
Status kind_setting(bool *forced, StreamKind *kind) {
  const char *v = setting_str(QueueSetting::queue_stream);
  *forced = true;
  if (!std::strcmp(v, "auto")) *forced = false;
  else if (!std::strcmp(v, "mpix_host_stream")) *kind = StreamKind::host;
  else if (!std::strcmp(v, "cudaStream_t")) *kind = StreamKind::cuda;
  else if (!std::strcmp(v, "hipStream_t")) *kind = StreamKind::hip;
  else
    return make_status(MPI_ERR_ARG,
                       "MPIX_QUEUE_STREAM=%s is not one of auto, mpix_host_stream, "
                       "cudaStream_t, hipStream_t",
                       v);
  return {};
}

// Rule 5 of MPIX_Create_queue: a handle that is not a live host stream is a GPU stream of the
// first GPU backend built that can run here. The backend's open_stream asks the runtime about
// the handle, which refuses an invalid one.
Status guess_gpu_kind(void *native, StreamKind *kind) {
  std::string why;
  for (StreamKind k : {StreamKind::cuda, StreamKind::hip}) {
    Backend *be = nullptr;
    Status st = backend_get(k, &be);
    if (st.is_ok()) {
      *kind = k;
      return {};
    }
    why += std::string(why.empty() ? "" : "; ") + st.what();
  }
  return make_status(MPI_ERR_ARG,
                     "stream %p is not a live mpix_host_stream_t and no GPU "
                     "backend can take it (%s)",
                     native, why.c_str());
}

}  // namespace

Status queue_stream_open(MPI_Comm comm, void *native, std::shared_ptr<Stream> *out) {
  std::shared_ptr<CommCtx> ctx;
  MPIX_TRY(comm_ctx_get(comm, &ctx));
  const Stream *comm_stream = ctx ? ctx->stream.get() : nullptr;

  StreamKind kind = StreamKind::host;
  TriggerMode mode = TriggerMode::memop;
  MPIX_TRY(trigger_setting(&mode));
  bool forced = false;
  MPIX_TRY(kind_setting(&forced, &kind));
  const char *rule = nullptr;
  if (!native && comm_stream) {
    // Rule 1: the communicator's own native stream (a general stream's host stream).
    ExecStream *ex = nullptr;
    MPIX_TRY(ctx->stream->exec(&ex));
    native = ex->native();
    mode = ex->trigger_mode();
    kind = comm_stream->kind() == StreamKind::general ? StreamKind::host : comm_stream->kind();
    rule = "the stream communicator's stream";
  } else if (!native) {
    kind = StreamKind::host;  // rule 2: a host stream mpix owns
    rule = "NULL: a host stream owned by the queue";
  } else if (forced) {
    rule = "MPIX_QUEUE_STREAM";
  } else if (comm_stream) {
    kind = comm_stream->kind() == StreamKind::general ? StreamKind::host : comm_stream->kind();
    rule = "the stream communicator's kind";
  } else if (host_stream_is_live(static_cast<mpix_host_stream_t>(native))) {
    kind = StreamKind::host;
    rule = "a live mpix_host_stream_t";
  } else {
    MPIX_TRY(guess_gpu_kind(native, &kind));
    rule = "not a host stream: the GPU backend built";
  }
  if (kind == StreamKind::host && native &&
      !host_stream_is_live(static_cast<mpix_host_stream_t>(native)))
    return make_status(MPI_ERR_ARG, "stream %p is not a live mpix_host_stream_t (%s)", native,
                       rule);
  Backend *be = nullptr;
  MPIX_TRY(backend_get(kind, &be));
  std::unique_ptr<ExecStream> exec;
  MPIX_TRY(be->open_stream(native, mode, &exec));
  MPIX_LOG(debug, "api", "queue on %s %p (%s), trigger mode %s", stream_kind_name(kind),
           exec->native(), rule, trigger_mode_name(exec->trigger_mode()));
  *out = make_stream(stream_new_id(), kind, be, std::move(exec));
  return {};
}

}  // namespace mpix
