// Argument checks of the C entry points. Each returns a Status with the MPI error class the
// standard names for that argument and a message naming it.
#pragma once

#include <mpi.h>

#include "base/status.hpp"
#include "core/named_types.hpp"

namespace mpix {

Status check_comm(MPI_Comm comm);
Status check_count(int count);
// MPI_DATATYPE_NULL, or a derived datatype not committed (MPI_ERR_TYPE): as far as the MPI
// library's argument checks tell (there is no MPI query; see checks.cpp). Needs runtime_init.
Status check_datatype(MPI_Datatype dt);
// A null buffer is an error for count > 0 with a predefined datatype (derived datatypes may
// address absolute memory from MPI_BOTTOM).
Status check_buffer(const void *buf, int count, MPI_Datatype dt, const char *name);
// @p any: MPI_ANY_SOURCE allowed (receives). @p peers: the ranks a peer may name on @p comm
// where the caller knows them (CommCtx::peer_count), else -1 (MPI is asked).
Status check_rank(MPI_Comm comm, int rank, bool any, int peers = -1);
// @p any: MPI_ANY_TAG allowed (receives).
Status check_tag(int tag, bool any);
// comm, count, datatype, buffer, peer and tag of a point-to-point call (@p peers: check_rank),
// each check in turn.
Status check_p2p_each(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                      bool is_recv, int peers = -1);
// The enqueue path's common case (a predefined datatype seen before, a rank below a known
// @p peers, a tag every MPI allows), answered inline, asking MPI nothing: true when it holds
// (then @p dt is a predefined datatype). False says nothing: ask check_p2p_each.
inline bool check_p2p_quick(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                            MPI_Comm comm, bool is_recv, int peers) {
  // MPI guarantees MPI_TAG_UB >= 32767; larger tags are checked against the real bound.
  constexpr int kTagUbMin = 32767;
  const bool rank_ok =
      (peer >= 0 && peer < peers) || peer == MPI_PROC_NULL || (is_recv && peer == MPI_ANY_SOURCE);
  const bool tag_ok = (tag >= 0 && tag <= kTagUbMin) || (is_recv && tag == MPI_ANY_TAG);
  return comm != MPI_COMM_NULL && count >= 0 && (buf || count == 0) && rank_ok && tag_ok &&
         datatype_known_named(dt);
}
// check_p2p_each, with the common case (check_p2p_quick) inline; anything else takes
// check_p2p_each, so errors and their messages are the same.
inline Status check_p2p(const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                        MPI_Comm comm, bool is_recv, int peers = -1) {
  if (check_p2p_quick(buf, count, dt, peer, tag, comm, is_recv, peers)) return {};
  return check_p2p_each(buf, count, dt, peer, tag, comm, is_recv, peers);
}

}  // namespace mpix
