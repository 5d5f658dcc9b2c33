// Family "dect": the decode kernel with CTA tiles. One CTA owns TN output features (NS = TN/16
// stripes) and its WK warps split K into contiguous chunk ranges; each warp streams its weights
// straight into registers (P chunks in flight), dequantizes and scales before mma.sync (Deq<T>,
// weights as the A operand), and the warps fp32 partials are reduced in shared memory in warp
// order (deterministic), then bias, round, store. Whole K per CTA: no workspace. It shares the
// frame-v2 fragment helpers of kernels/dec.cuh. Measured faster than the persistent "dec" family
// on most decode shapes (bench/NOTES.md), so the planner prefers it where it serves.
#pragma once
#include "dec.cuh"
#include "pdl.cuh"

namespace mate {

template <int TM, int TN>
constexpr int dect_min_blocks = 1;

// TM tokens (MT = TM/8 token tiles, M <= TM); TN features (NS = TN/16 stripes, all in each warp);
// WK warps along K; P chunks in flight per warp. Dynamic smem: WK * NS * MT * 512 bytes.
template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void dect_body(const GemmParams& p) {
  using namespace dec;
  constexpr int MT = TM / 8, NS = TN / 16;
  static_assert(MT * 8 == TM && NS * 16 == TN && WK >= 1 && P >= 1, "bad dec tile");
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int C = p.K >> 6;                 // K chunks of 64
  const int stripe0 = blockIdx.x * NS;    // this CTA's first 16-feature stripe
  const int c_begin = (warp * C) / WK;
  const int c_end = ((warp + 1) * C) / WK;
  const int M = p.M, N = p.N;
  const uint4* __restrict__ wq = reinterpret_cast<const uint4*>(p.qweight);
  const T* __restrict__ x = static_cast<const T*>(p.x);
  const unsigned short* __restrict__ sc = static_cast<const unsigned short*>(p.scales);

  float acc[MT][NS][4];
  zero_frags(acc);

  uint4 wbuf[P][NS];
  uint4 xbuf[P][MT][2];
  unsigned short sbuf[P][NS][2];
  uint32_t zbuf[P][NS][2];

  // A chunk's loads: the weights, scales and zero points (nothing on the device writes them), and
  // this lane's activations (the previous kernel in the stream may: after pdl_wait).
  auto load_w = [&](int i, int ch) {
    if (ch >= c_end) return;
#pragma unroll
    for (int s = 0; s < NS; ++s)
      wbuf[i][s] = ld_stream(wq + (static_cast<int64_t>(stripe0 + s) * C + ch) * 32 + lane);
    const int k = (ch << 6) + (c << 4);
    const int grp = k / p.group_size;
#pragma unroll
    for (int s = 0; s < NS; ++s) {
      const int n = (stripe0 + s) * 16 + g;
      sbuf[i][s][0] = __ldg(sc + static_cast<int64_t>(grp) * N + n);
      sbuf[i][s][1] = __ldg(sc + static_cast<int64_t>(grp) * N + n + 8);
      if constexpr (kZeros) {
        const int32_t* zrow = p.zeros + static_cast<int64_t>(grp) * (N >> 3);
        zbuf[i][s][0] = static_cast<uint32_t>(__ldg(zrow + (n >> 3)));
        zbuf[i][s][1] = static_cast<uint32_t>(__ldg(zrow + (n >> 3) + 1));
      }
    }
  };
  auto load_x = [&](int i, int ch) {
    if (ch >= c_end) return;
    const int k = (ch << 6) + (c << 4);  // this lane's 16 activation columns
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      const int tok = t * 8 + g;
      if (tok < M) {
        if (p.perm == nullptr) {
          const uint4* src = reinterpret_cast<const uint4*>(x + static_cast<int64_t>(tok) * p.x_row_stride + k);
          xbuf[i][t][0] = __ldg(src);
          xbuf[i][t][1] = __ldg(src + 1);
        } else {
          T v[16];
#pragma unroll
          for (int e = 0; e < 16; ++e) {
            const int col = __ldg(p.perm + k + e);
            v[e] = static_cast<unsigned>(col) < static_cast<unsigned>(p.K)
                       ? x[static_cast<int64_t>(tok) * p.x_row_stride + col]
                       : Num<T>::from_f(__int_as_float(0x7fc00000));
          }
          xbuf[i][t][0] = *reinterpret_cast<uint4*>(&v[0]);
          xbuf[i][t][1] = *reinterpret_cast<uint4*>(&v[8]);
        }
      } else {
        xbuf[i][t][0] = make_uint4(0, 0, 0, 0);
        xbuf[i][t][1] = make_uint4(0, 0, 0, 0);
      }
    }
  };
  auto load = [&](int i, int ch) {
    load_w(i, ch);
    load_x(i, ch);
  };

  auto compute = [&](int i) {
#pragma unroll
    for (int s = 0; s < NS; ++s) {
      Deq<T> dq;
      int z0 = 8, z1 = 8;
      if constexpr (kZeros) {
        z0 = (zbuf[i][s][0] >> (4 * g)) & 0xF;  // row g is column n; n % 8 == g
        z1 = (zbuf[i][s][1] >> (4 * g)) & 0xF;  // row g + 8 is in the next word
      }
      dq.set(*reinterpret_cast<const T*>(&sbuf[i][s][0]), *reinterpret_cast<const T*>(&sbuf[i][s][1]), z0, z1);
      const uint32_t words[4] = {wbuf[i][s].x, wbuf[i][s].y, wbuf[i][s].z, wbuf[i][s].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t a[4];
        dq(words[j], a);
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          const uint4& u = xbuf[i][t][j >> 1];
          const uint32_t b0 = (j & 1) ? u.z : u.x;
          const uint32_t b1 = (j & 1) ? u.w : u.y;
          mma<T>(acc[t][s], a, b0, b1);
        }
      }
    }
  };

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Programmatic dependent launch (kernels/pdl.cuh): the first P chunks' weights stream while the
  // previous kernel finishes; every global write (the output) comes after the wait. (Launched
  // without it, this order measured ~12 % slower than loading chunk by chunk on Llama-8B o at
  // M = 1; with it 0.81x: bench/NOTES.md, session 6. sm_80 keeps the chunk-by-chunk order.)
  pdl_trigger();
#pragma unroll
  for (int i = 0; i < P; ++i) load_w(i, c_begin + i);
  pdl_wait();
#pragma unroll
  for (int i = 0; i < P; ++i) load_x(i, c_begin + i);
#else
#pragma unroll
  for (int i = 0; i < P; ++i) load(i, c_begin + i);
#endif
  for (int base = c_begin; base < c_end; base += P) {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (base + i < c_end) {
        compute(i);
        load(i, base + i + P);
      }
    }
  }

  // Reduce the WK warps' partials in warp order.
  extern __shared__ float red[];  // [WK][NS][MT][32][4]
  constexpr int kPart = NS * MT * 32 * 4;
  store_frags(red + warp * kPart, lane, acc);
  __syncthreads();

  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  const int rows = NS * 16;
  for (int idx = threadIdx.x; idx < rows * M; idx += WK * 32) {
    const int tok = idx / rows;
    const int row = idx % rows;  // consecutive threads -> consecutive features
    const int s = row >> 4, r16 = row & 15;
    const int t = tok >> 3, col = tok & 7;
    const int ln = (r16 & 7) * 4 + (col >> 1);
    const int reg = (r16 >> 3) * 2 + (col & 1);
    const int off = ((s * MT + t) * 32 + ln) * 4 + reg;
    float v = 0.f;
#pragma unroll
    for (int w = 0; w < WK; ++w) v += red[w * kPart + off];
    const int n = stripe0 * 16 + row;
    if (bias != nullptr) v += Num<T>::to_f(bias[n]);
    out[static_cast<int64_t>(tok) * N + n] = Num<T>::from_f(v);
  }
}

}  // namespace mate
