# CUDA tests of queues and partitioned communication (label gpu). They reuse the GPU tests'
# main (test/gpu: one GPU per rank, exit 77 = skipped where a rank has no device).
add_executable(partitioned_cuda partitioned_cuda_test.cpp partitioned_cuda_kernels.cu)
target_link_libraries(partitioned_cuda PRIVATE mpix_gpu_main mpix mpix_catch MPI::MPI_CXX
  mpix_gpu_test_kernels CUDA::cudart_static)
target_include_directories(partitioned_cuda PRIVATE ${PROJECT_SOURCE_DIR}/test
  ${PROJECT_SOURCE_DIR}/test/gpu)
mpix_warnings(partitioned_cuda)
add_test(NAME partitioned_cuda_np2
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIX_MPIEXEC_PREFLAGS}
          -x CUDA_MODULE_LOADING $<TARGET_FILE:partitioned_cuda>)
set_tests_properties(partitioned_cuda_np2 PROPERTIES
  ENVIRONMENT "${MPIX_TEST_ENV};CUDA_MODULE_LOADING=EAGER"
  TIMEOUT 300 LABELS "gpu" PROCESSORS 2 SKIP_RETURN_CODE 77)
# Direct rounds alone, in processes that exported no buffer before: they must go direct.
add_test(NAME partitioned_cuda_direct_np2
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIX_MPIEXEC_PREFLAGS}
          -x CUDA_MODULE_LOADING -x MPIX_TEST_EXPECT_DIRECT $<TARGET_FILE:partitioned_cuda> "[direct]")
set_tests_properties(partitioned_cuda_direct_np2 PROPERTIES
  ENVIRONMENT "${MPIX_TEST_ENV};CUDA_MODULE_LOADING=EAGER;MPIX_TEST_EXPECT_DIRECT=1"
  TIMEOUT 300 LABELS "gpu" PROCESSORS 2 SKIP_RETURN_CODE 77)
