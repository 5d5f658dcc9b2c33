// Family "wmma": the first correct kernel. One CTA computes a BM x BN output tile; each K step
// dequantizes a BK x BN weight tile into shared memory (fp32 math, rounded to the activation
// dtype) and runs 16x16x16 WMMA with fp32 accumulation. No split-K, no workspace.
// Correctness baseline for the faster families, not a speed target.
#pragma once
#include <mma.h>

#include "numeric.cuh"
#include "params.cuh"

namespace mate {

template <typename T, bool kZeros, int BM, int BN, int BK, int THREADS>
__device__ __forceinline__ void wmma_body(const GemmParams& p) {
  using namespace nvcuda;
  static_assert(BM == 64 && BN == 64 && THREADS == 128, "warp layout below is 2x2 warps of 32x32");
  static_assert(BK % 16 == 0 && BK % 8 == 0, "BK must hold whole WMMA steps and packed words");
  constexpr int kPad = 8;  // halves; keeps WMMA rows 32-byte aligned and spreads banks
  __shared__ __align__(32) T As[BM][BK + kPad];
  __shared__ __align__(32) T Bs[BK][BN + kPad];
  __shared__ __align__(32) float Cs[BM][BN + 4];

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;
  const int m0 = blockIdx.x * BM;
  const int n0 = blockIdx.y * BN;
  const int M = p.M, N = p.N, K = p.K;
  const T* __restrict__ x = static_cast<const T*>(p.x);
  const T* __restrict__ scales = static_cast<const T*>(p.scales);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: BM rows x BK columns, 8 elements (16 bytes) per chunk.
    constexpr int kChunksA = BM * BK / 8;
#pragma unroll
    for (int c = tid; c < kChunksA; c += THREADS) {
      const int row = c / (BK / 8);
      const int col = (c % (BK / 8)) * 8;
      const int m = m0 + row;
      if (m >= M) {
        *reinterpret_cast<uint4*>(&As[row][col]) = make_uint4(0, 0, 0, 0);
      } else if (p.perm == nullptr) {
        *reinterpret_cast<uint4*>(&As[row][col]) =
            *reinterpret_cast<const uint4*>(x + m * p.x_row_stride + k0 + col);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int src = p.perm[k0 + col + e];
          // An out-of-range permutation entry poisons its products instead of reading out of bounds.
          As[row][col + e] = (static_cast<unsigned>(src) < static_cast<unsigned>(K))
                                 ? x[m * p.x_row_stride + src]
                                 : Num<T>::from_f(__int_as_float(0x7fc00000));
        }
      }
    }
    // B tile: BK/8 packed rows x BN columns, one int32 word = 8 consecutive K rows of one column.
    const int g = k0 / p.group_size;  // BK divides the group: the tile sits in one group
    constexpr int kWordsB = (BK / 8) * BN;
#pragma unroll
    for (int w = tid; w < kWordsB; w += THREADS) {
      const int rr = w / BN;
      const int col = w % BN;
      const int n = n0 + col;
      const uint32_t q = static_cast<uint32_t>(p.qweight[static_cast<int64_t>(k0 / 8 + rr) * N + n]);
      const float s = Num<T>::to_f(scales[static_cast<int64_t>(g) * N + n]);
      float z = 8.0f;
      if constexpr (kZeros) {
        const uint32_t zw = static_cast<uint32_t>(p.zeros[static_cast<int64_t>(g) * (N / 8) + n / 8]);
        z = static_cast<float>((zw >> (4 * (n % 8))) & 0xFu);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float v = static_cast<float>((q >> (4 * j)) & 0xFu) - z;
        Bs[rr * 8 + j][col] = Num<T>::from_f(v * s);
      }
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &As[wm * 32 + i * 16][kk], BK + kPad);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &Bs[kk][wn * 32 + j * 16], BN + kPad);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + 4,
                              wmma::mem_row_major);
  __syncthreads();

  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  for (int idx = tid; idx < BM * BN; idx += THREADS) {
    const int row = idx / BN;
    const int col = idx % BN;
    const int m = m0 + row;
    if (m >= M) continue;
    float v = Cs[row][col];
    if (bias != nullptr) v += Num<T>::to_f(bias[n0 + col]);
    out[static_cast<int64_t>(m) * N + n0 + col] = Num<T>::from_f(v);
  }
}

}  // namespace mate
