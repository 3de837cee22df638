// Host cost of single CUDA calls on an H200 (under MPS when the daemon runs): ns per call.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
__global__ void empty_k() {}
__global__ void copy_k(const char *s, char *d, int n) {
  int i = threadIdx.x;
  if (i < n) d[i] = s[i];
}
template <class F>
double per_call(F f, int n = 20000) {
  for (int i = 0; i < 200; ++i) f();
  auto a = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  auto b = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(b - a).count() / n;
}
int main() {
  cudaSetDevice(0);
  cuInit(0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  char *d, *h;
  cudaMalloc(&d, 1 << 20);
  cudaHostAlloc((void **)&h, 1 << 20, cudaHostAllocMapped);
  unsigned long long *w;
  cudaHostAlloc((void **)&w, 64, cudaHostAllocMapped);
  CUdeviceptr dw;
  cuMemHostGetDevicePointer(&dw, w, 0);
  cudaPointerAttributes at;
  printf("cudaPointerGetAttributes(device)   %8.0f ns\n",
         per_call([&] { cudaPointerGetAttributes(&at, d + 64); }));
  printf("cudaPointerGetAttributes(pinned)   %8.0f ns\n",
         per_call([&] { cudaPointerGetAttributes(&at, h + 64); }));
  int dev;
  printf("cudaGetDevice                      %8.0f ns\n", per_call([&] { cudaGetDevice(&dev); }));
  int n = 0;
  printf("cudaLaunchKernel(empty)            %8.0f ns\n", per_call([&] {
           empty_k<<<1, 1, 0, s>>>();
           if (++n % 1000 == 0) cudaStreamSynchronize(s);
         }));
  printf("cudaLaunchKernel(copy 8 B, args)   %8.0f ns\n", per_call([&] {
           copy_k<<<1, 32, 0, s>>>(d, h, 8);
           if (++n % 1000 == 0) cudaStreamSynchronize(s);
         }));
  printf("cuStreamWriteValue64               %8.0f ns\n", per_call([&] {
           cuStreamWriteValue64((CUstream)s, dw, 1, 0);
           if (++n % 1000 == 0) cudaStreamSynchronize(s);
         }));
  printf("cudaMemcpyAsync D2H 8 B            %8.0f ns\n", per_call([&] {
           cudaMemcpyAsync(h, d, 8, cudaMemcpyDeviceToHost, s);
           if (++n % 1000 == 0) cudaStreamSynchronize(s);
         }));
  printf("cudaStreamIsCapturing              %8.0f ns\n", per_call([&] {
           cudaStreamCaptureStatus c;
           cudaStreamIsCapturing(s, &c);
         }));
  cudaStreamSynchronize(s);
  return 0;
}
