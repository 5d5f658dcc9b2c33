// Lab probe (not part of the library): what does one register-operand wgmma m64nNk16 cost an SM
// at the token counts of decode (N = 16-64), and how much of it does the bwg/wg pattern (four
// wgmma on one accumulator, commit, wait_group 0 before the next chunk's dequantization) leave
// unused? Modes, every warpgroup of every CTA doing `reps` chunks of four k16 steps:
//   0 chunk+wait : 4 wgmma (A from registers) -> commit -> wait_group 0 (the library's pattern
//                  without its dequantization: the latency a chunk costs one warpgroup)
//   1 stream     : 4 wgmma -> commit -> wait_group 1 (two chunks in flight: throughput)
//   2 ss stream  : as 1 with A from shared memory (the SS form)
// Prints cycles per wgmma per SM (SM clock cycles of the whole run / wgmma an SM issued).
// Build and run on the GPU machine:
//   nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3 -I kernels -o /tmp/wr bench/lab/wgmma_rate.cu && /tmp/wr
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "wgmma_ops.cuh"

using mate::wg::Wgmma;

__device__ __forceinline__ uint64_t desc_sw128(uint32_t a) {
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (1ull << 16) | (static_cast<uint64_t>(1024 >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
__device__ __forceinline__ void wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void ss(float* d, uint64_t da, uint64_t db) {
  // m64nNk16 with both operands in shared memory (N = 64 / 256 only, for the comparison)
  if constexpr (N == 64) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
          "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
          "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db));
  }
}

template <int N, int MODE>
__global__ void __launch_bounds__(N == 256 ? 256 : 512, 1) rate(int reps, float* out, long long* cycles) {
  extern __shared__ __align__(1024) unsigned char sm[];
  for (int i = threadIdx.x; i < 32768; i += blockDim.x)
    reinterpret_cast<__half*>(sm)[i] = __float2half(static_cast<float>((i * 37) % 17 - 8) * 0.01f);
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  const int wg = threadIdx.x / 128;
  const uint32_t xb = base + (wg & 1) * 16384;  // B tiles (x) of two warpgroups apart
  uint32_t a[4][4];
#pragma unroll
  for (int s = 0; s < 4; ++s)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[s][r] = 0x3C003C00u ^ ((threadIdx.x * 7 + s * 4 + r) & 0x00FF00FFu);
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  const long long t0 = clock64();
  for (int it = 0; it < reps; ++it) {
    fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      if constexpr (MODE == 2)
        ss<N>(acc, desc_sw128(base + 32768 + s * 32), desc_sw128(xb + s * 32));
      else
        Wgmma<__half, N>::run(acc, a[s], desc_sw128(xb + s * 32), 1);
    }
    commit();
    if constexpr (MODE == 0) wait0(); else wait1();
  }
  wait0();
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int N, int MODE>
void run(int wgs, int ctas_per_sm, const char* name) {
  const int sms = 132, reps = 4096, threads = 128 * wgs, grid = sms * ctas_per_sm;
  const int smem = 65536;
  auto k = rate<N, MODE>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  float* out;
  long long* cyc;
  cudaMalloc(&out, sizeof(float) * grid * threads);
  cudaMalloc(&cyc, sizeof(long long) * grid);
  k<<<grid, threads, smem>>>(16, out, cyc);  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  k<<<grid, threads, smem>>>(reps, out, cyc);
  cudaEventRecord(e1);
  cudaError_t err = cudaEventSynchronize(e1);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, e0, e1);
  long long h[1024];
  cudaMemcpy(h, cyc, sizeof(long long) * grid, cudaMemcpyDeviceToHost);
  double mean = 0;
  for (int i = 0; i < grid; ++i) mean += static_cast<double>(h[i]) / grid;
  // wgmma an SM issued: every warpgroup of its CTAs, 4 a chunk
  const double per_sm = 4.0 * reps * wgs * ctas_per_sm;
  const double mac = 64.0 * N * 16;
  printf("%-12s N=%3d wg/cta=%d cta/sm=%d  %7.3f ms  %6.1f cyc/wgmma/SM (CTA clock)  %6.1f ns/wgmma/SM  %5.0f TFLOP/s  %s\n", name, N, wgs,
         ctas_per_sm, ms, mean / (4.0 * reps * wgs) / ctas_per_sm, ms * 1e6 / per_sm, 2 * mac * per_sm * sms / (ms * 1e9),
         err == cudaSuccess ? "" : cudaGetErrorString(err));
  cudaFree(out);
  cudaFree(cyc);
}

template <int N>
void sweep() {
  for (int wgs : {1, 2, 4}) {
    if (N == 256 && wgs == 4) continue;  // 128 accumulators a thread: over the 128-register cap
    run<N, 0>(wgs, 1, "chunk+wait");
    run<N, 1>(wgs, 1, "stream");
  }
  if (N == 256) return;  // two 256-thread CTAs of ~170 registers do not fit an SM
  run<N, 0>(2, 2, "chunk+wait");
  run<N, 1>(2, 2, "stream");
}

int main() {
  sweep<16>();
  sweep<32>();
  sweep<64>();
  sweep<128>();
  sweep<256>();
  for (int wgs : {1, 2, 4}) run<64, 2>(wgs, 1, "ss stream");
  return 0;
}
