// Family "wmma": the first correct kernel. One CTA computes a BM x BN output tile; each K step
// dequantizes a BK x BN weight tile into shared memory (fp32 math, rounded to the activation
// dtype) and runs 16x16x16 WMMA with fp32 accumulation. No split-K, no workspace.
// Correctness baseline for the faster families, not a speed target.
#pragma once
#include <mma.h>

#include "numeric.cuh"
#include "params.cuh"

namespace mate {

template <int TM, int TN>
constexpr int wmma_min_blocks = 1;

// BM x BN tile, WARPS = 4 warps; the K step is one frame chunk (64). P, kSplit, kPre unused.
template <typename T, bool kZeros, int BM, int BN, int WARPS, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void wmma_body(const GemmParams& p) {
  using namespace nvcuda;
  constexpr int THREADS = WARPS * 32;
  constexpr int BK = 64;
  static_assert(BM == 64 && BN == 64 && WARPS == 4, "warp layout below is 2x2 warps of 32x32");
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
    // B tile from frame v2: BN/16 stripes x one 64-deep chunk, 128 words per stripe-chunk.
    // Word (lane L, j) holds rows g, g+8 (g = L/4) at k = 16(L%4) + 4j + {0..3}; nibble p sits at
    // row g + 8(p&1), k + 2((p>>1)&1) + (p>>2).
    const int C = K / 64;
    const int chunk = k0 / 64;
    constexpr int kWordsB = (BN / 16) * 128;
#pragma unroll
    for (int w = tid; w < kWordsB; w += THREADS) {
      const int st = w / 128, within = w % 128;
      const int L = within / 4, j = within % 4;
      const int stripe = n0 / 16 + st;
      const uint32_t q = static_cast<uint32_t>(p.qweight[(static_cast<int64_t>(stripe) * C + chunk) * 128 + within]);
      const int kbase = 16 * (L % 4) + 4 * j;  // 16-aligned: one group for every group size
      const int grp = (k0 + kbase) / p.group_size;
      float s2[2], z2[2] = {8.0f, 8.0f};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int n = stripe * 16 + L / 4 + 8 * h;
        s2[h] = Num<T>::to_f(scales[static_cast<int64_t>(grp) * N + n]);
        if constexpr (kZeros) {
          const uint32_t zw = static_cast<uint32_t>(p.zeros[static_cast<int64_t>(grp) * (N / 8) + n / 8]);
          z2[h] = static_cast<float>((zw >> (4 * (n % 8))) & 0xFu);
        }
      }
#pragma unroll
      for (int nib = 0; nib < 8; ++nib) {
        const int h = nib & 1;
        const int row = st * 16 + L / 4 + 8 * h;
        const int kk = kbase + 2 * ((nib >> 1) & 1) + (nib >> 2);
        const float v = static_cast<float>((q >> (4 * nib)) & 0xFu) - z2[h];
        Bs[kk][row] = Num<T>::from_f(v * s2[h]);
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
