// Act-order x for the bwg family: dst[m][k] = x[m][perm[k]] (2-byte elements: fp16 or bf16),
// into the call's workspace, so the TMA boxes of kernels/bwg.cuh read a gathered copy. The other
// families gather inside their mainloops; bwg's x arrives in boxes, which cannot gather, and wg's
// in-loop gather made act-order prefill 10-15x slower than bwg (bench/NOTES.md, session 9).
// One thread per 8 consecutive k of one row (K is a multiple of 64): 8 gathered 2-byte loads,
// one 16-byte store. A perm entry outside [0, K) yields NaN (nan_bits), as in the other families.
#pragma once
#include <cstdint>

namespace mate {

__device__ __forceinline__ void gather_x_body(const uint16_t* __restrict__ x, int64_t x_row_stride, const int32_t* __restrict__ perm,
                                              uint16_t* __restrict__ dst, int M, int K, uint32_t nan_bits) {
  const int pieces = K >> 3;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(M) * pieces) return;
  const int m = static_cast<int>(i / pieces), k0 = static_cast<int>(i - static_cast<int64_t>(m) * pieces) * 8;
  const uint16_t* row = x + static_cast<int64_t>(m) * x_row_stride;
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c0 = __ldg(perm + k0 + 2 * j), c1 = __ldg(perm + k0 + 2 * j + 1);
    const uint32_t lo = static_cast<uint32_t>(c0) < static_cast<uint32_t>(K) ? __ldg(row + c0) : nan_bits;
    const uint32_t hi = static_cast<uint32_t>(c1) < static_cast<uint32_t>(K) ? __ldg(row + c1) : nan_bits;
    w[j] = lo | (hi << 16);
  }
  *reinterpret_cast<uint4*>(dst + static_cast<int64_t>(m) * K + k0) = make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace mate
