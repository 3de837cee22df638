// MPIX_TLS_FAST: the initial-exec TLS model for a thread-local the enqueue path reads, so that
// it is a load at a fixed offset from the thread pointer instead of a __tls_get_addr call (the
// general-dynamic model a shared library otherwise uses: ~18 instructions a read). libmpix is
// linked, not dlopen'ed, by its users; a dlopen'ed one takes these few bytes from the static TLS
// surplus the C library keeps for that.
#pragma once

#define MPIX_TLS_FAST __attribute__((tls_model("initial-exec")))
