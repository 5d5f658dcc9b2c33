// Act-order x: dst[m][k] = x[m][perm[k]] (2-byte elements: fp16 or bf16) into the call's
// workspace, so the plain plan reads a gathered copy (every routed act-order call on Hopper but
// the small layers' fewest tokens, src/plan/mod.rs plan_uncached): the families' in-loop
// gathers measured 1.2-13x slower at M = 1-64 (session 11) and 10-15x at prefill (session 9);
// bwg's x arrives in TMA boxes, which cannot gather at all.
// A perm entry outside [0, K) yields NaN (nan_bits), as in the other families (the host checks
// perm first).
//
// gather_x_rows (Hopper; K <= GATHER_ROWS_MAX_K, x and perm 16-byte aligned): persistent CTAs over rows.
// perm goes to shared memory once per CTA (as 16-bit indices), each row arrives by one bulk copy
// into one of two row buffers (the next row's copy in flight while this one is gathered), and each
// thread gathers 8 consecutive k from shared memory and stores 16 bytes (0.95-1.22x the GEMM's time
// without act order on the Llama shapes at M = 128-4096, bench/NOTES.md session 10). gather_x_body (any K, any
// row stride): one thread per 8 consecutive k of one row, 8 gathered 2-byte loads from global
// memory: a warp's 32 random loads touch ~28 lines of the row, so the loads cost L1 wavefronts,
// not bytes (1.04-1.32x the GEMM's time without act order at M = 128-4096, bench/NOTES.md).
#pragma once
#include <cstdint>
#include "mbarrier.cuh"
#include "pdl.cuh"

namespace mate {

__device__ __forceinline__ void gather_x_body(const uint16_t* __restrict__ x, int64_t x_row_stride, const int32_t* __restrict__ perm,
                                              uint16_t* __restrict__ dst, int M, int K, uint32_t nan_bits) {
  const int pieces = K >> 3;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(M) * pieces) return;
  const int m = static_cast<int>(i / pieces), k0 = static_cast<int>(i - static_cast<int64_t>(m) * pieces) * 8;
  const uint16_t* row = x + static_cast<int64_t>(m) * x_row_stride;
  // A programmatic launch (where src/plan/mod.rs gather_programmatic says; both instructions are
  // no-ops after a plain launch): perm (never written by a kernel) before the wait for the
  // previous kernel, x and the stores after it (the previous kernel may write x, or still read
  // this workspace); the trigger lets the GEMM behind start its prologue.
  pdl_trigger();
  int c[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) c[j] = __ldg(perm + k0 + j);
  pdl_wait();
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c0 = c[2 * j], c1 = c[2 * j + 1];
    const uint32_t lo = static_cast<uint32_t>(c0) < static_cast<uint32_t>(K) ? __ldg(row + c0) : nan_bits;
    const uint32_t hi = static_cast<uint32_t>(c1) < static_cast<uint32_t>(K) ? __ldg(row + c1) : nan_bits;
    w[j] = lo | (hi << 16);
  }
  *reinterpret_cast<uint4*>(dst + static_cast<int64_t>(m) * K + k0) = make_uint4(w[0], w[1], w[2], w[3]);
}

// Shared memory of gather_x_rows: perm as 16-bit indices (K x 2 bytes; 0xFFFF marks an entry
// outside [0, K), so K < 65535), two row buffers (2 x K x 2), two mbarriers: 6 K + 16 bytes.
// Mirrored by gather_rows_smem in src/device/mod.rs, which also keeps K within the device's
// shared memory (GATHER_ROWS_MAX_K).

__device__ __forceinline__ void gather_x_rows(const uint16_t* x, int64_t x_row_stride, const int32_t* __restrict__ perm,
                                              uint16_t* __restrict__ dst, int M, int K, uint32_t nan_bits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char gather_smem[];
  uint16_t* const sperm = reinterpret_cast<uint16_t*>(gather_smem);  // 0xFFFF: outside [0, K)
  uint16_t* const rows = sperm + K;                                  // two buffers of K
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(rows + 2 * K));
  const int tid = threadIdx.x, nrows = (M - static_cast<int>(blockIdx.x) + static_cast<int>(gridDim.x) - 1) / static_cast<int>(gridDim.x);
  if (tid == 0) {
    mbar_init(bar0, 1);
    mbar_init(bar0 + 8, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // perm in 16-byte pieces, eight a thread in flight at once (one load after another was an L2
  // round trip per element: ~14 us at K = 8192)
  const int4* perm4 = reinterpret_cast<const int4*>(perm);
  auto idx = [K](int c) -> uint32_t { return static_cast<uint32_t>(c) < static_cast<uint32_t>(K) ? static_cast<uint32_t>(c) : 0xFFFFu; };
  for (int base = tid; base < (K >> 2); base += 8 * blockDim.x) {
    int4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int i = base + u * blockDim.x;
      if (i < (K >> 2)) v[u] = __ldg(perm4 + i);
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int i = base + u * blockDim.x;
      if (i < (K >> 2)) reinterpret_cast<uint2*>(sperm)[i] = make_uint2(idx(v[u].x) | (idx(v[u].y) << 16), idx(v[u].z) | (idx(v[u].w) << 16));
    }
  }
  pdl_trigger();
  pdl_wait();  // x may be the previous kernel's output
  __syncthreads();
  auto fetch = [&](int j) {  // row j of this CTA into buffer j & 1 (thread 0)
    const int m = blockIdx.x + j * gridDim.x;
    const uint32_t bar = bar0 + 8 * (j & 1), bytes = 2 * K;
    mbar_expect_tx(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(rows + (j & 1) * K))),
                 "l"(x + static_cast<int64_t>(m) * x_row_stride), "r"(bytes), "r"(bar)
                 : "memory");
  };
  if (tid == 0 && nrows > 0) fetch(0);
  for (int j = 0; j < nrows; ++j) {
    // buffer (j + 1) & 1 was last read in row j - 1, before the barrier that ended it
    if (tid == 0 && j + 1 < nrows) fetch(j + 1);
    mbar_wait(bar0 + 8 * (j & 1), (j >> 1) & 1);
    const uint16_t* row = rows + (j & 1) * K;
    uint4* const out = reinterpret_cast<uint4*>(dst + static_cast<int64_t>(blockIdx.x + j * gridDim.x) * K);
    for (int i = tid; i < (K >> 3); i += blockDim.x) {
      const uint4 pv = reinterpret_cast<const uint4*>(sperm)[i];
      const uint32_t pw[4] = {pv.x, pv.y, pv.z, pv.w};
      uint32_t w[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint32_t c0 = pw[q] & 0xFFFF, c1 = pw[q] >> 16;
        const uint32_t lo = c0 != 0xFFFF ? row[c0] : nan_bits, hi = c1 != 0xFFFF ? row[c1] : nan_bits;
        w[q] = lo | (hi << 16);
      }
      out[i] = make_uint4(w[0], w[1], w[2], w[3]);
    }
    // this thread's reads of the buffer before the next copy into it (async proxy)
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
  }
#else
  __trap();  // src/device/mod.rs launches this gather only on sm_90 (gather_rows_smem_max)
#endif
}

}  // namespace mate
