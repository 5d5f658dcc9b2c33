// Lab: the tensor pipe's cost of one wgmma m64nNk16 (A from registers, B from shared memory with
// the 128-byte swizzle, as bwg issues them) against N. Question (NOTES session 52): does n = 40
// cost like n = 64 (the 40-token bwg tile takes 1.33-1.38x the 32-token one at the same M)?
//   nvcc -std=c++17 -O3 -arch=sm_90a -I kernels bench/lab/wgmma_rate.cu -o /tmp/wgmma_rate && /tmp/wgmma_rate
// Each warpgroup issues ITERS groups of four k16 steps (one bwg chunk) on random data, waiting for
// each group (`wait_group 0`, as bwg does) or not; cycles by clock64 per warpgroup, medians over
// the grid. Grid: 2 CTAs an SM of WG warpgroups, as the 12-warp bwg tiles (2 consumers a CTA).
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include "bulk.cuh"
#include "wgmma_ops.cuh"
#include "wg.cuh"

using namespace mate;
constexpr int ITERS = 4096;

template <int N, bool kWait>
__global__ void __launch_bounds__(256, 2) rate(long long* cycles, float* sink, uint32_t seed) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (bulk::smem_u32(smem_raw) + 1023u) & ~1023u;
  unsigned char* sm = smem_raw + (base - bulk::smem_u32(smem_raw));
  uint32_t s = seed ^ (threadIdx.x * 2654435761u) ^ (blockIdx.x * 40503u);
  for (int i = threadIdx.x; i < 32768 / 4; i += blockDim.x) {
    s = s * 1664525u + 1013904223u;
    // two halves in [-1, 1): sign, small exponent, random mantissa
    const uint32_t h0 = 0x3800u | (s & 0x83FFu), h1 = 0x3800u | ((s >> 16) & 0x83FFu);
    reinterpret_cast<uint32_t*>(sm)[i] = h0 | (h1 << 16);
  }
  __syncthreads();
  uint32_t a[4][4];
  for (int j = 0; j < 4; ++j)
    for (int r = 0; r < 4; ++r) {
      s = s * 1664525u + 1013904223u;
      a[j][r] = (0x3400u | (s & 0x83FFu)) | ((0x3400u | ((s >> 16) & 0x83FFu)) << 16);
    }
  float acc[N / 2];
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  const int wgi = threadIdx.x / 128;
  const uint32_t b0 = base + (wgi & 1) * 16384;  // each warpgroup its own B (N <= 128 rows)
  __syncwarp();
  const long long t0 = clock64();
  for (int it = 0; it < ITERS; ++it) {
    wg::fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) wg::Wgmma<__half, N>::run(acc, a[j], wg::desc_sw128(b0 + j * 32), 1);
    wg::commit();
    if constexpr (kWait) wg::wait0();
  }
  wg::wait0();
  const long long t1 = clock64();
  float sum = 0.f;
  for (int i = 0; i < N / 2; ++i) sum += acc[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * (blockDim.x / 128) + wgi] = t1 - t0;
#endif
}

template <int N, bool kWait>
void run(int sms, int wgs, int ctas_per_sm) {
  const int grid = sms * ctas_per_sm, threads = 128 * wgs, smem = 32768 + 1024;
  auto k = rate<N, kWait>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  long long* cyc;
  float* sink;
  cudaMalloc(&cyc, grid * wgs * sizeof(long long));
  cudaMalloc(&sink, grid * threads * sizeof(float));
  k<<<grid, threads, smem>>>(cyc, sink, 1u);  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  k<<<grid, threads, smem>>>(cyc, sink, 7u);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  std::vector<long long> h(grid * wgs);
  cudaMemcpy(h.data(), cyc, h.size() * sizeof(long long), cudaMemcpyDeviceToHost);
  std::sort(h.begin(), h.end());
  const double med = h[h.size() / 2], per = med / (ITERS * 4.0);
  const int per_sm = wgs * ctas_per_sm;
  // SM-level cycles a wgmma: per-warpgroup cycles / warpgroups sharing the SM's tensor pipe
  const double flops = 2.0 * 64 * N * 16 * ITERS * 4.0 * grid * wgs;
  printf("N=%3d wait=%d wg/SM=%d  cycles/wgmma(wg)=%7.2f  SM cycles/wgmma=%6.2f  ideal=%5.1f  %7.1f TFLOP/s  %s\n", N, kWait ? 1 : 0, per_sm,
         per, per / per_sm, N / 2.0, flops / (ms * 1e-3) / 1e12, cudaGetErrorString(cudaGetLastError()));
  cudaFree(cyc);
  cudaFree(sink);
}

template <int N>
void all(int sms) {
  run<N, true>(sms, 1, 1);
  run<N, true>(sms, 2, 2);
  run<N, false>(sms, 2, 2);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("%s, %d SMs\n", p.name, sms);
  all<16>(sms);
  all<24>(sms);
  all<32>(sms);
  all<40>(sms);
  all<48>(sms);
  all<56>(sms);
  all<64>(sms);
  all<128>(sms);
  return 0;
}
