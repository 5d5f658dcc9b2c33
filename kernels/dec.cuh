// Family "dec": the decode (small-M) kernel. Streams each weight byte once from HBM straight into
// registers (16-byte non-allocating loads, P units in flight per warp), dequantizes in registers
// with lop3-style magic-number tricks, and runs mma.sync m16n8k16 with the weights as the A
// operand ("swap AB": 16 output features x 16 k per MMA, tokens as the n=8 side), fp32 accumulate.
//
// Frame v2 (src/frame/mod.rs) stores, per 16-feature stripe and 64-deep K chunk, 32 lanes x 16 bytes
// in exactly the order the A fragments need, and maps MMA k-slots so that lane (g, c) needs the
// activation's k range [16c, 16c+16) of the chunk: two 16-byte loads per token.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "numeric.cuh"
#include "params.cuh"
#include "split.cuh"

namespace mate {
namespace dec {

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// Ampere-style async copies (sm_80+): each lane copies, then later reads, only its own bytes, so a
// warp's ring needs no barrier: cp.async.wait_group orders a lane's copies before its reads.
__device__ __forceinline__ void cp_async_cg16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_ca16(void* smem, const void* gmem, bool pred) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_ca4(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}

__device__ __forceinline__ uint32_t lop_or(uint32_t w, uint32_t mask, uint32_t magic) {
  uint32_t r;  // (w & mask) | magic in one LOP3
  asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(mask), "r"(magic));
  return r;
}

__device__ __forceinline__ uint32_t as_u32(__half2 v) { return *reinterpret_cast<uint32_t*>(&v); }
__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t*>(&v); }
__device__ __forceinline__ __half2 as_h2(uint32_t v) { return *reinterpret_cast<__half2*>(&v); }
__device__ __forceinline__ __nv_bfloat162 as_b2(uint32_t v) { return *reinterpret_cast<__nv_bfloat162*>(&v); }

// Per-lane dequantization constants for one chunk and one stripe: rows g and g+8.
template <typename T>
struct Deq;

template <>
struct Deq<__half> {
  __half2 s0, s1;      // scale of row g, row g+8
  __half2 z0, z1;      // 1024 + zero   (for nibbles in bits 0..3 of a half)
  __half2 z16_0, z16_1;  // -(64 + zero) (for nibbles in bits 4..7, value 1024 + 16q)
  __device__ __forceinline__ void set(__half sg, __half sg8, int zg, int zg8) {
    s0 = __half2half2(sg);
    s1 = __half2half2(sg8);
    z0 = __half2half2(__int2half_rn(1024 + zg));
    z1 = __half2half2(__int2half_rn(1024 + zg8));
    z16_0 = __half2half2(__int2half_rn(-(64 + zg)));
    z16_1 = __half2half2(__int2half_rn(-(64 + zg8)));
  }
  // One packed word -> the four A registers of one MMA step.
  __device__ __forceinline__ void operator()(uint32_t w, uint32_t a[4]) const {
    const __half2 k16 = __half2half2(__float2half(0.0625f));
    const uint32_t w8 = w >> 8;
    a[0] = as_u32(__hmul2(__hsub2(as_h2(lop_or(w, 0x000F000F, 0x64006400)), z0), s0));
    a[1] = as_u32(__hmul2(__hfma2(as_h2(lop_or(w, 0x00F000F0, 0x64006400)), k16, z16_1), s1));
    a[2] = as_u32(__hmul2(__hsub2(as_h2(lop_or(w8, 0x000F000F, 0x64006400)), z0), s0));
    a[3] = as_u32(__hmul2(__hfma2(as_h2(lop_or(w8, 0x00F000F0, 0x64006400)), k16, z16_1), s1));
  }
};

template <>
struct Deq<__nv_bfloat16> {
  __nv_bfloat162 s0, s1, z0, z1;  // scales; 128 + zero
  __device__ __forceinline__ void set(__nv_bfloat16 sg, __nv_bfloat16 sg8, int zg, int zg8) {
    s0 = __bfloat162bfloat162(sg);
    s1 = __bfloat162bfloat162(sg8);
    z0 = __bfloat162bfloat162(__int2bfloat16_rn(128 + zg));
    z1 = __bfloat162bfloat162(__int2bfloat16_rn(128 + zg8));
  }
  __device__ __forceinline__ void operator()(uint32_t w, uint32_t a[4]) const {
    // bf16 has 8 mantissa bits: 128 + q is exact only with q in bits 0..3 of each half.
    a[0] = as_u32(__hmul2(__hsub2(as_b2(lop_or(w, 0x000F000F, 0x43004300)), z0), s0));
    a[1] = as_u32(__hmul2(__hsub2(as_b2(lop_or(w >> 4, 0x000F000F, 0x43004300)), z1), s1));
    a[2] = as_u32(__hmul2(__hsub2(as_b2(lop_or(w >> 8, 0x000F000F, 0x43004300)), z0), s0));
    a[3] = as_u32(__hmul2(__hsub2(as_b2(lop_or(w >> 12, 0x000F000F, 0x43004300)), z1), s1));
  }
};

// Post-scale dequantization: the MMA consumes magic-biased values as they come out of one LOP3
// each (no subtract, no multiply); the zero point and the scale are applied to the fp32 group
// sums (see dec_body). fp16: rows g get 1024 + q, rows g+8 get 1024 + 16q. bf16: 128 + q.
template <typename T>
struct Raw;

template <>
struct Raw<__half> {
  static constexpr uint32_t kOne = 0x3C003C00u;  // half2(1, 1)
  static constexpr float kBias0 = 1024.f, kBias1 = 1024.f, kMul0 = 1.f, kMul1 = 16.f;
  __device__ __forceinline__ static void apply(uint32_t w, uint32_t a[4]) {
    const uint32_t w8 = w >> 8;
    a[0] = lop_or(w, 0x000F000F, 0x64006400);
    a[1] = lop_or(w, 0x00F000F0, 0x64006400);
    a[2] = lop_or(w8, 0x000F000F, 0x64006400);
    a[3] = lop_or(w8, 0x00F000F0, 0x64006400);
  }
};

template <>
struct Raw<__nv_bfloat16> {
  static constexpr uint32_t kOne = 0x3F803F80u;  // bf16x2(1, 1)
  static constexpr float kBias0 = 128.f, kBias1 = 128.f, kMul0 = 1.f, kMul1 = 1.f;
  __device__ __forceinline__ static void apply(uint32_t w, uint32_t a[4]) {
    a[0] = lop_or(w, 0x000F000F, 0x43004300);
    a[1] = lop_or(w >> 4, 0x000F000F, 0x43004300);
    a[2] = lop_or(w >> 8, 0x000F000F, 0x43004300);
    a[3] = lop_or(w >> 12, 0x000F000F, 0x43004300);
  }
};

template <typename T>
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);

template <>
__device__ __forceinline__ void mma<__half>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Accumulator fragments of MT token tiles x NS stripes (mma.sync m16n8k16 D: lane (g, c) holds
// rows g / g+8, tokens 2c / 2c+1), and their per-warp layout [NS][MT][32 lanes][4] in shared
// memory for the in-CTA reductions of dect and bulk.
template <int MT, int NS>
__device__ __forceinline__ void zero_frags(float (&acc)[MT][NS][4]) {
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int s = 0; s < NS; ++s)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[t][s][r] = 0.f;
}
template <int MT, int NS>
__device__ __forceinline__ void store_frags(float* part, int lane, const float (&acc)[MT][NS][4]) {
#pragma unroll
  for (int s = 0; s < NS; ++s)
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int r = 0; r < 4; ++r) part[((s * MT + t) * 32 + lane) * 4 + r] = acc[t][s][r];
}

template <int MT, int NS>
__device__ __forceinline__ void add_frags(float (&acc)[MT][NS][4], const float* part, int lane) {
#pragma unroll
  for (int s = 0; s < NS; ++s)
#pragma unroll
    for (int t = 0; t < MT; ++t)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[t][s][r] += part[((s * MT + t) * 32 + lane) * 4 + r];
}

}  // namespace dec

// Resident CTAs per SM the register allocation must allow (more warps hide the MMA and copy
// latency): three for one token tile; two above, where an 80-register cap spills.
template <int TM, int TN>
constexpr int dec_min_blocks = TM <= 8 ? 3 : 2;

// Bytes of one ring stage of one warp (dynamic smem = WK * P * this). Mirrored by
// Variant::dynamic_smem in src/plan/variants.rs.
template <int TM, int TN, bool kZeros>
__host__ __device__ constexpr int dec_stage_bytes() {
  return (TN / 16) * 512 + (TM / 8) * 1024 + (TN / 16) * 256 + (kZeros ? (TN / 16) * 256 : 0);
}

// Persistent and balanced: the (stripe group, K chunk) units are flattened stripe-major, which in
// frame v2 is also address order, and each of the grid's total_warps warps streams one contiguous
// range of them, so every SM streams from the first cycle to the last with no per-tile ramp.
// Each warp keeps P-1 units in flight in its own shared-memory ring (cp.async: the bytes in flight
// cost no registers): weights, its activation slice, scales and zero points.
// A warp flushes its accumulators whenever its range leaves a stripe group:
//  - kSplit == false: ranges are whole stripe groups (its own instantiation: no workspace, no
//    atomics); the flush writes the output.
//  - kSplit == true: a range may cover part of a group. A warp that covered a whole group writes
//    the output; otherwise it stores an fp32 partial in its segment's slot and takes a ticket; the
//    group's last arriving warp sums all slots in segment order (deterministic, no atomic adds),
//    writes the output and resets the ticket for the next call.
// kPre == false (groups of >= 64, per channel): the MMA runs on magic-biased raw values (Raw<T>)
//   and each group's fp32 sums are corrected and scaled once: out += s * (acc - (bias + z) * X),
//   X the group's activation sum from one extra MMA against ones. kPre == true (group 32, which
//   splits a chunk): weights are dequantized and scaled before the MMA (Deq<T>).
//
// TM tokens (MT = TM/8 token tiles, M <= TM); TN features per unit (NS = TN/16 stripes, sharing
// the activation loads); WK warps per CTA; P ring stages per warp.
template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void dec_body(const GemmParams& p) {
  using namespace dec;
  constexpr int MT = TM / 8, NS = TN / 16;
  static_assert(MT * 8 == TM && NS * 16 == TN && WK >= 1 && P >= 2, "bad dec tile");
  constexpr int kStage = dec_stage_bytes<TM, TN, kZeros>();
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, c = lane & 3;
  const int C = p.K >> 6;  // K chunks of 64
  const int SG = p.N / TN;
  const int64_t U = static_cast<int64_t>(SG) * C;
  const int64_t WT = p.total_warps;
  const int64_t w = static_cast<int64_t>(blockIdx.x) * WK + (threadIdx.x >> 5);
  if (w >= WT) return;  // the last CTA may hold fewer than WK working warps
  int64_t u0, u1;
  if constexpr (kSplit) {
    u0 = w * U / WT;
    u1 = (w + 1) * U / WT;
  } else {
    u0 = (w * SG / WT) * C;
    u1 = ((w + 1) * SG / WT) * C;
  }
  if (u0 >= u1) return;
  const int cnt = static_cast<int>(u1 - u0);
  const int M = p.M, N = p.N;
  const int cpg = p.group_size >> 6;  // chunks per group (post-scale path)
  const uint4* __restrict__ wq = reinterpret_cast<const uint4*>(p.qweight);
  const T* __restrict__ x = static_cast<const T*>(p.x);
  const T* __restrict__ sc = static_cast<const T*>(p.scales);

  extern __shared__ __align__(16) unsigned char dec_smem[];
  unsigned char* ring = dec_smem + (threadIdx.x >> 5) * (P * kStage);
  auto st_w = [&](int i, int s) { return reinterpret_cast<uint4*>(ring + i * kStage) + s * 32 + lane; };
  auto st_x = [&](int i, int t, int h) {
    return reinterpret_cast<uint4*>(ring + i * kStage + NS * 512) + (t * 2 + h) * 32 + lane;
  };
  auto st_s = [&](int i, int s, int h) {
    return reinterpret_cast<uint32_t*>(ring + i * kStage + NS * 512 + MT * 1024) + (s * 2 + h) * 32 + lane;
  };
  auto st_z = [&](int i, int s, int h) {
    return reinterpret_cast<uint32_t*>(ring + i * kStage + NS * 768 + MT * 1024) + (s * 2 + h) * 32 + lane;
  };

  float acc[MT][NS][4];  // kPre: the output sums; else: the current group's raw sums
  float tot[MT][NS][4];  // post-scale output sums
  float xs[MT][4];       // post-scale: the group's activation sums (tokens 2c, 2c+1 twice)
  auto zero = [](auto& a) {
    float* f = reinterpret_cast<float*>(&a);
#pragma unroll
    for (int i = 0; i < int(sizeof(a) / sizeof(float)); ++i) f[i] = 0.f;
  };
  zero(acc);
  zero(tot);
  zero(xs);

  int sg_ld = static_cast<int>(u0 / C), ch_ld = static_cast<int>(u0 - static_cast<int64_t>(sg_ld) * C);
  int sg_cu = sg_ld, ch_cu = ch_ld;
  int gpos = kPre ? 0 : ch_cu % cpg;  // position of the computed chunk in its group

  // Issues the copies of the next unit into stage i.
  auto issue = [&](int i) {
    const int sg = sg_ld, ch = ch_ld;
    if (++ch_ld == C) {
      ch_ld = 0;
      ++sg_ld;
    }
#pragma unroll
    for (int s = 0; s < NS; ++s) cp_async_cg16(st_w(i, s), wq + (static_cast<int64_t>(sg * NS + s) * C + ch) * 32 + lane);
    const int k = (ch << 6) + (c << 4);  // this lane's 16 activation columns
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      const int tok = t * 8 + g;
      if (p.perm == nullptr) {
        const T* src = tok < M ? x + static_cast<int64_t>(tok) * p.x_row_stride + k : x;
        cp_async_ca16(st_x(i, t, 0), src, tok < M);
        cp_async_ca16(st_x(i, t, 1), src + 8, tok < M);
      } else {
        // Act order: a gather, done synchronously (no 16-byte run to copy).
        T v[16];
#pragma unroll
        for (int e = 0; e < 16; ++e) {
          const int col = __ldg(p.perm + k + e);
          v[e] = tok >= M ? Num<T>::from_f(0.f)
                 : static_cast<unsigned>(col) < static_cast<unsigned>(p.K)
                     ? x[static_cast<int64_t>(tok) * p.x_row_stride + col]
                     : Num<T>::from_f(__int_as_float(0x7fc00000));
        }
        *st_x(i, t, 0) = *reinterpret_cast<uint4*>(&v[0]);
        *st_x(i, t, 1) = *reinterpret_cast<uint4*>(&v[8]);
      }
    }
    const int grp = k / p.group_size;
#pragma unroll
    for (int s = 0; s < NS; ++s) {
      const int n = (sg * NS + s) * 16 + g;  // rows n and n + 8; (n & ~1) keeps 4-byte alignment
      cp_async_ca4(st_s(i, s, 0), sc + static_cast<int64_t>(grp) * N + (n & ~1));
      cp_async_ca4(st_s(i, s, 1), sc + static_cast<int64_t>(grp) * N + ((n + 8) & ~1));
      if constexpr (kZeros) {
        const int32_t* zrow = p.zeros + static_cast<int64_t>(grp) * (N >> 3);
        cp_async_ca4(st_z(i, s, 0), zrow + (n >> 3));
        cp_async_ca4(st_z(i, s, 1), zrow + (n >> 3) + 1);
      }
    }
  };

  // Scale of row g (h = 0) or g + 8 (h = 1) of stripe s from stage i: the half at n & 1 == g & 1.
  auto scale_of = [&](int i, int s, int h) {
    const uint32_t pair = *st_s(i, s, h);
    const unsigned short bits = static_cast<unsigned short>((g & 1) ? (pair >> 16) : (pair & 0xFFFF));
    return *reinterpret_cast<const T*>(&bits);
  };
  auto zeros_of = [&](int i, int s, int& z0, int& z1) {
    z0 = 8;
    z1 = 8;
    if constexpr (kZeros) {
      z0 = (*st_z(i, s, 0) >> (4 * g)) & 0xF;  // row g is column n; n % 8 == g
      z1 = (*st_z(i, s, 1) >> (4 * g)) & 0xF;  // row g + 8 is in the next word
    }
  };

  auto compute = [&](int i) {
    uint4 xb[MT][2];
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      xb[t][0] = *st_x(i, t, 0);
      xb[t][1] = *st_x(i, t, 1);
    }
    if constexpr (!kPre) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t ones[4] = {Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne};
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          const uint4& u = xb[t][j >> 1];
          mma<T>(xs[t], ones, (j & 1) ? u.z : u.x, (j & 1) ? u.w : u.y);
        }
      }
    }
#pragma unroll
    for (int s = 0; s < NS; ++s) {
      Deq<T> dq;
      if constexpr (kPre) {
        int z0, z1;
        zeros_of(i, s, z0, z1);
        dq.set(scale_of(i, s, 0), scale_of(i, s, 1), z0, z1);
      }
      const uint4 wv = *st_w(i, s);
      const uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t a[4];
        if constexpr (kPre) {
          dq(words[j], a);
        } else {
          Raw<T>::apply(words[j], a);
        }
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          const uint4& u = xb[t][j >> 1];
          mma<T>(acc[t][s], a, (j & 1) ? u.z : u.x, (j & 1) ? u.w : u.y);
        }
      }
    }
  };

  // Post-scale: fold the current group's raw sums into the output sums.
  auto close_group = [&](int i) {
#pragma unroll
    for (int s = 0; s < NS; ++s) {
      int z0, z1;
      zeros_of(i, s, z0, z1);
      const float s0 = Num<T>::to_f(scale_of(i, s, 0)) / Raw<T>::kMul0;
      const float s1 = Num<T>::to_f(scale_of(i, s, 1)) / Raw<T>::kMul1;
      const float b0 = Raw<T>::kBias0 + Raw<T>::kMul0 * z0;
      const float b1 = Raw<T>::kBias1 + Raw<T>::kMul1 * z1;
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float raw = fmaf(-(r < 2 ? b0 : b1), xs[t][r], acc[t][s][r]);
          tot[t][s][r] = fmaf(r < 2 ? s0 : s1, raw, tot[t][s][r]);
          acc[t][s][r] = 0.f;
        }
    }
    zero(xs);
  };

  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  auto write_out = [&](int sg, const float (&v)[MT][NS][4]) {
#pragma unroll
    for (int s = 0; s < NS; ++s)
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int tok = t * 8 + 2 * c + (r & 1);
          if (tok < M) {
            const int n = (sg * NS + s) * 16 + g + 8 * (r >> 1);
            float o = v[t][s][r];
            if (bias != nullptr) o += Num<T>::to_f(bias[n]);
            out[static_cast<int64_t>(tok) * N + n] = Num<T>::from_f(o);
          }
        }
  };

  auto flush = [&](float (&res)[MT][NS][4]) {
    const int sg = sg_cu;
    const int64_t first = static_cast<int64_t>(sg) * C;
    if (!kSplit || (u0 <= first && u1 >= first + C)) {
      write_out(sg, res);
    } else {
      // warp_of(u): the warp whose range holds unit u.
      auto warp_of = [&](int64_t u) { return ((u + 1) * WT + U - 1) / U - 1; };
      const int64_t wfirst = warp_of(first);
      const int nseg = static_cast<int>(warp_of(first + C - 1) - wfirst + 1);
      constexpr int kSlot = NS * MT * 32;  // float4s per slot
      float4* slots = reinterpret_cast<float4*>(ws_partials(p.workspace));
      int* tickets = ws_tickets(p.workspace);
      float4* mine = slots + (static_cast<int64_t>(sg) * p.max_seg + (w - wfirst)) * kSlot;
#pragma unroll
      for (int s = 0; s < NS; ++s)
#pragma unroll
        for (int t = 0; t < MT; ++t)
          __stcg(mine + (s * MT + t) * 32 + lane, make_float4(res[t][s][0], res[t][s][1], res[t][s][2], res[t][s][3]));
      __syncwarp();
      int ticket = 0;
      if (lane == 0) ticket = split_ticket(tickets + sg);  // kernels/split.cuh
      ticket = __shfl_sync(0xffffffffu, ticket, 0);
      __syncwarp();  // orders lane 0's acquire before every lane's reads
      if (ticket == nseg - 1) {
        float sum[MT][NS][4];
        zero(sum);
        const float4* base = slots + static_cast<int64_t>(sg) * p.max_seg * kSlot;
        for (int j = 0; j < nseg; ++j) {  // segment order: deterministic
#pragma unroll
          for (int s = 0; s < NS; ++s)
#pragma unroll
            for (int t = 0; t < MT; ++t) {
              const float4 v = __ldcg(base + j * kSlot + (s * MT + t) * 32 + lane);
              sum[t][s][0] += v.x;
              sum[t][s][1] += v.y;
              sum[t][s][2] += v.z;
              sum[t][s][3] += v.w;
            }
        }
        write_out(sg, sum);
        if (lane == 0) tickets[sg] = 0;
      }
    }
    zero(res);
  };

  // Prologue: P-1 units in flight (one commit group per stage, empty groups past the range).
#pragma unroll
  for (int i = 0; i < P - 1; ++i) {
    if (i < cnt) issue(i);
    cp_async_commit();
  }
  for (int base = 0; base < cnt; base += P) {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const int idx = base + i;
      if (idx < cnt) {
        if (idx + P - 1 < cnt) issue((i + P - 1) % P);  // refill the stage read last iteration
        cp_async_commit();
        cp_async_wait<P - 1>();  // this lane's copies of unit idx have landed
        compute(i);
        const bool last = idx + 1 == cnt;
        const bool stripe_end = ch_cu + 1 == C;
        if constexpr (kPre) {
          if (last || stripe_end) flush(acc);
        } else {
          if (++gpos == cpg || last) {
            close_group(i);
            gpos = 0;
          }
          if (last || stripe_end) flush(tot);
        }
        if (++ch_cu == C) {
          ch_cu = 0;
          ++sg_cu;
        }
      }
    }
  }
  cp_async_wait<0>();
}

}  // namespace mate
