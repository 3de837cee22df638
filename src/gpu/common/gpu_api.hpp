// Types shared by the GPU API shims. CUDA and HIP are near twins, so one implementation
// (gpu_backend.hpp, gpu_exec_stream.hpp, signal_map.hpp) is written once as templates over a
// shim struct, `Api`, that each backend provides (gpu/cuda/cuda_api.hpp, gpu/hip/hip_api.hpp):
//
//   types      stream_t
//   constants  kKind, kName, kSubsys, kStreamType, kHasKernels, kHasBatch
//   process    init(), versions(), device_count(), device_info(), get_device(), set_device()
//   streams    is_default_stream(), stream_device(), check_stream_context(), is_capturing(),
//              synchronize(), stream_create_private(), check_module_loading()
//   in order   write_value(), wait_value(), batch(), launch_host(), copy_async(),
//              copy_2d_async(), kernel_write(), kernel_wait(), copy_runs_kernel(),
//              copy_list_kernel(), copy_prefix_kernel(), copy_write_kernel(),
//              wait_copy_prefix_kernel(), fuse_slot_acquire(), load_kernels()
//   memory     classify(), kernel_can_access(), host_alloc(), host_free(), host_register(),
//              host_unregister(), host_device_pointer()
//
// Every call returns a Status (MPI error class + message); device addresses travel as
// uint64_t so the common code needs no vendor types.
#pragma once

#include <cstdint>
#include <string>

namespace mpix {

struct GpuDeviceInfo {
  std::string name;
  bool memops = false;               // 64-bit stream wait/write value operations
  bool host_ptr_registered = false;  // registered host memory has the same address on device
};

// One stream memory operation of a batch.
struct GpuMemOp {
  enum Kind : uint8_t { write, wait } kind;
  uint64_t dev_word;  // device address of the signal word
  uint64_t value;
};

}  // namespace mpix
