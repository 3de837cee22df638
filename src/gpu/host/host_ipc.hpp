// The host backend's stand-in for device memory and CUDA IPC (MPIX_HOST_IPC=on; tests): memory
// from host_ipc_alloc counts as device memory of device 0, and ranks of one node map each
// other's allocations through shared memory, so that the same-node GPU-direct protocol
// (providers/mpi/ipc_path.hpp) runs, and is tested, on machines without a GPU.
//
// An allocation is a memfd mapped shared; its handle names the exporting process and the
// descriptor, which a peer opens through /proc (same user, same node). Buffer ids are unique
// per allocation for the process's life, so a freed allocation re-made at the same address
// has another, as with CUDA's buffer ids. With the setting off nothing here is offered: the
// host backend has no IPC, and host streams stage nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.hpp"

namespace mpix {

// MPIX_HOST_IPC, read once.
bool host_ipc_on();
// Shared "device" memory of @p bytes (at least one), zeroed; null when none can be had.
void *host_ipc_alloc(std::size_t bytes);
// Frees what host_ipc_alloc returned (null: nothing).
void host_ipc_free(void *p);
// Whether @p p lies in an allocation of host_ipc_alloc; its start, size and buffer id.
bool host_ipc_range(const void *p, uint64_t *base, uint64_t *size, uint64_t *buffer_id);
// The handle of the allocation starting at @p base (MPI_ERR_ARG where none does).
Status host_ipc_handle(uint64_t base, unsigned char (&handle)[64]);
// Maps the allocation @p handle names (another process's) here, until host_ipc_close.
Status host_ipc_open(const unsigned char (&handle)[64], void **base);
void host_ipc_close(void *base);
// The extent of a mapping host_ipc_open made, for a pointer into it.
bool host_ipc_mapped_range(const void *p, uint64_t *start, uint64_t *size);

}  // namespace mpix
