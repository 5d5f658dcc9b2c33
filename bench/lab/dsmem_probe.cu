// Lab probe (not part of the library): is a split tile's fp32 partial exchange cheaper through
// distributed shared memory (a cluster of the tile's S parts) than through L2 (store, then read
// the slices back)? Shaped like bwg's sliced even split at 256 tokens x 128 features: 256
// consumer threads of 128 floats each (a 128 KB partial), 128 CTAs, one CTA per SM (225 KB of
// shared memory). Also prints how many clusters of S fit at once (cudaOccupancyMaxActiveClusters).
// Build and run on the GPU machine: nvcc -std=c++17 -arch=sm_90a -O3 -o /tmp/dp bench/lab/dsmem_probe.cu && /tmp/dp
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 256, NACC = 128, kPieces = NACC / 4, kSmem = 225 * 1024, kCtas = 128;

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %cluster_ctarank;" : "=r"(r));
  return r;
}

// mode 0: no exchange (own slice only); 1: DSMEM push; 2: L2 store + cluster barrier + L2 reads.
template <int S, int kMode>
__global__ void __launch_bounds__(kThreads, 1) exchange(float* ws, float* out, int reps) {
  extern __shared__ __align__(1024) unsigned char sm[];
  float acc[NACC];
#pragma unroll
  for (int i = 0; i < NACC; ++i) acc[i] = static_cast<float>(blockIdx.x * 7 + threadIdx.x + i);
  const int z = kMode == 0 ? 0 : static_cast<int>(cluster_rank());
  constexpr int kSlice = kPieces / S;  // pieces per part's slice (S divides 32 here)
  for (int rep = 0; rep < reps; ++rep) {
    if constexpr (kMode == 1) {
      cluster_sync();  // every part's shared memory is free
      const unsigned base = smem_u32(sm);
#pragma unroll
      for (int q = 0; q < kPieces; ++q) {
        const int j = q / kSlice;
        const unsigned local = base + ((z * kSlice + (q - j * kSlice)) * kThreads + threadIdx.x) * 16;
        unsigned remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(j));
        asm volatile("st.shared::cluster.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(remote), "f"(acc[4 * q]), "f"(acc[4 * q + 1]),
                     "f"(acc[4 * q + 2]), "f"(acc[4 * q + 3])
                     : "memory");
      }
      cluster_sync();  // every push has landed
      const float4* slots = reinterpret_cast<const float4*>(sm);
#pragma unroll
      for (int q = 0; q < kSlice; ++q) {
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int zz = 0; zz < S; ++zz) {
          const float4 v = slots[(zz * kSlice + q) * kThreads + threadIdx.x];
          s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
        }
        reinterpret_cast<float4*>(out)[((blockIdx.x * kSlice + q) * kThreads) + threadIdx.x] = s;
      }
    } else if constexpr (kMode == 2) {
      float4* mine = reinterpret_cast<float4*>(ws) + static_cast<size_t>(blockIdx.x) * kPieces * kThreads;
#pragma unroll
      for (int q = 0; q < kPieces; ++q) mine[q * kThreads + threadIdx.x] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
      cluster_sync();  // (the parts' stores before the others' reads; release / acquire at cluster scope)
      __threadfence();
      const float4* tile = reinterpret_cast<const float4*>(ws) + static_cast<size_t>(blockIdx.x - z) * kPieces * kThreads;
#pragma unroll
      for (int q = 0; q < kSlice; ++q) {
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int zz = 0; zz < S; ++zz) {
          const float4 v = __ldcg(tile + static_cast<size_t>(zz) * kPieces * kThreads + (z * kSlice + q) * kThreads + threadIdx.x);
          s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
        }
        reinterpret_cast<float4*>(out)[((blockIdx.x * kSlice + q) * kThreads) + threadIdx.x] = s;
      }
      cluster_sync();  // nobody overwrites a slot another part still reads
    } else {
#pragma unroll
      for (int q = 0; q < kSlice; ++q)
        reinterpret_cast<float4*>(out)[((blockIdx.x * kSlice + q) * kThreads) + threadIdx.x] =
            make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    }
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] += 1.f;
  }
}

template <int S, int kMode>
void run(float* ws, float* out) {
  auto k = exchange<S, kMode>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(kCtas);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = kMode == 0 ? 1 : S;
  at[0].val.clusterDim.y = at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  int clusters = -1;
  cudaOccupancyMaxActiveClusters(&clusters, k, &cfg);
  float best[2] = {1e30f, 1e30f};
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int r = 0; r < 2; ++r) {  // reps = 1 and 21: the difference is 20 exchanges, launch cost cancels
    for (int trial = 0; trial < 20; ++trial) {
      const int reps = r == 0 ? 1 : 21;
      cudaEventRecord(e0);
      cudaLaunchKernelEx(&cfg, k, ws, out, reps);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (ms < best[r]) best[r] = ms;
    }
  }
  const cudaError_t err = cudaGetLastError();
  printf("S=%d mode=%s max_active_clusters=%d  per exchange %.2f us (1 rep %.2f us) %s\n", S,
         kMode == 0 ? "none " : kMode == 1 ? "dsmem" : "l2   ", clusters, (best[1] - best[0]) * 1000.f / 20.f, best[0] * 1000.f,
         err == cudaSuccess ? "" : cudaGetErrorString(err));
}

int main() {
  float *ws, *out;
  cudaMalloc(&ws, static_cast<size_t>(kCtas) * NACC * kThreads * 4);
  cudaMalloc(&out, static_cast<size_t>(kCtas) * NACC * kThreads * 4);
  run<2, 0>(ws, out);
  run<2, 1>(ws, out);
  run<2, 2>(ws, out);
  run<4, 1>(ws, out);
  run<4, 2>(ws, out);
  run<8, 1>(ws, out);
  run<8, 2>(ws, out);
  return 0;
}
