// Family "bulk": the Hopper decode kernel (M <= 16: one token, or tiles of 8 / 16 tokens). The
// decode families before it kept the bytes in flight in registers or per-lane cp.async rings and
// measured latency-bound at low occupancy (DRAM at a third of peak, bench/NOTES.md). Here one
// producer warp per CTA streams each stage with bulk copies (cp.async.bulk, the copy engine: one
// instruction per contiguous piece, completion counted in bytes
// on an mbarrier), so P stages of weights are in flight per CTA at no register cost, and WC consumer
// warps only read shared memory, dequantize and issue mma.sync with the weights as A (frame v2's
// lane order is the A fragment, kernels/dec.cuh): for groups >= 64 the chunk's fp32 sums are
// scaled once, the MMA taking magic-biased raw weights corrected by an activation-sum MMA (one
// token, or 8 in a 32-feature tile) or exact (q - z) (the 128-feature tiles at 8/16 tokens);
// Deq<T> scales before the MMA (kPre, group 32).
//
// Work: an item is TN features (NS = TN/16 stripes of frame v2, each stripe's K chunks contiguous)
// x a K range: the whole K (CTA b takes tiles b, b + gridDim.x, ...), or with kSplit an even
// split of every tile or the stream-K ranges of kernels/split.cuh (every CTA the same number of
// stages, whatever the tile count). The grid is persistent; a CTA's producer streams its items
// back to back. A stage is CH chunks of 64
// (chunks_per_stage): per stripe one copy of CH x 512 bytes, per token one copy of its CH x 64
// activations, and the stage's scale rows (and zero-point rows). Consumer warp w takes chunks w,
// w + WC, ... of every stage; the warps' fp32 partials are reduced in warp order in shared memory;
// with kSplit a tile shared by several CTAs is summed in CTA order by its last arriver (even
// split) or its owner (stream-K): deterministic, no atomic adds.
// Act order is not served here (x is copied in rows; a gather is not a bulk copy): the planner
// sends act-order frames to the other decode families.
#pragma once
#include <type_traits>

#include "dec.cuh"
#include "mbarrier.cuh"
#include "pdl.cuh"
#include "split.cuh"

namespace mate {
namespace bulk {

// K chunks (of 64) per stage: 16 (8 KB per stripe) in the 32-feature tiles; 8 for the 112/128-feature tiles
// (2 stages: measured 7-12 % faster than 4 chunks x 4 stages, bench/NOTES.md "Session 4"), 4 with
// group 32 (twice the scale rows: 8 would not fit two CTAs per SM).
template <int TM, int TN, bool kPre>
__host__ __device__ constexpr int chunks_per_stage() { return TN <= 32 ? 16 : (kPre ? 4 : 8); }

// Stripes each consumer warp covers (see bulk_body): all of a narrow tile's, one of a wide tile's
// (two measured slower, bench/NOTES.md "Session 4"). Mirrored by Variant::bulk_stripes_per_warp
// in src/plan/variants.rs.
template <int TM, int TN, int WC>
__host__ __device__ constexpr int stripes_per_warp() { return TN / 16 <= 2 ? TN / 16 : 1; }

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// Global -> shared bulk copy, completion counted on `bar` (16-byte aligned, size % 16 == 0).
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// (q - z) exactly, as the four A registers of one MMA step (post-scale path, groups >= 64).
// fp16: the low nibble of each half gives 1024 + q, the high one 1024 + 16q (one LOP3 each); bf16
// has 8 mantissa bits, so each nibble is shifted to bits 0..3 first (128 + q). Rows g / g+8 have
// zero points z0 / z1; the constants are built with integer ops (folded for symmetric frames).
template <typename T>
struct Sub;

template <>
struct Sub<__half> {
  uint32_t lo0, hi1;  // half2(1024 + z0); half2(-(64 + z1))
  __device__ __forceinline__ Sub(int z0, int z1)
      : lo0(0x64006400u + static_cast<uint32_t>(z0) * 0x00010001u),
        hi1(0xD400D400u + static_cast<uint32_t>(z1) * 0x00100010u) {}
  __device__ __forceinline__ void operator()(uint32_t w, uint32_t a[4]) const {
    const __half2 k16 = __half2half2(__ushort_as_half(0x2C00));  // 1/16
    const uint32_t w8 = w >> 8;
    a[0] = dec::as_u32(__hsub2(dec::as_h2(dec::lop_or(w, 0x000F000F, 0x64006400)), dec::as_h2(lo0)));
    a[1] = dec::as_u32(__hfma2(dec::as_h2(dec::lop_or(w, 0x00F000F0, 0x64006400)), k16, dec::as_h2(hi1)));
    a[2] = dec::as_u32(__hsub2(dec::as_h2(dec::lop_or(w8, 0x000F000F, 0x64006400)), dec::as_h2(lo0)));
    a[3] = dec::as_u32(__hfma2(dec::as_h2(dec::lop_or(w8, 0x00F000F0, 0x64006400)), k16, dec::as_h2(hi1)));
  }
};

template <>
struct Sub<__nv_bfloat16> {
  uint32_t z0, z1;  // bf16x2(128 + z)
  __device__ __forceinline__ Sub(int zg, int zg8)
      : z0(0x43004300u + static_cast<uint32_t>(zg) * 0x00010001u),
        z1(0x43004300u + static_cast<uint32_t>(zg8) * 0x00010001u) {}
  __device__ __forceinline__ void operator()(uint32_t w, uint32_t a[4]) const {
    a[0] = dec::as_u32(__hsub2(dec::as_b2(dec::lop_or(w, 0x000F000F, 0x43004300)), dec::as_b2(z0)));
    a[1] = dec::as_u32(__hsub2(dec::as_b2(dec::lop_or(w >> 4, 0x000F000F, 0x43004300)), dec::as_b2(z1)));
    a[2] = dec::as_u32(__hsub2(dec::as_b2(dec::lop_or(w >> 8, 0x000F000F, 0x43004300)), dec::as_b2(z0)));
    a[3] = dec::as_u32(__hsub2(dec::as_b2(dec::lop_or(w >> 12, 0x000F000F, 0x43004300)), dec::as_b2(z1)));
  }
};

// mma.sync with a zero accumulator input (d = a * b): a chunk's first MMA needs no zeroing.
template <typename T>
__device__ __forceinline__ void mma0(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  constexpr bool kHalf = std::is_same<T, __half>::value;
  const float z = 0.f;
  if constexpr (kHalf) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(z));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(z));
  }
}

// Shared memory of one stage (bytes). Mirrored by Variant::dynamic_smem in src/plan/variants.rs.
template <int TM, int TN, bool kPre>
__host__ __device__ constexpr int w_bytes() { return (TN / 16) * chunks_per_stage<TM, TN, kPre>() * 512; }
template <int TM, int TN, bool kPre>
__host__ __device__ constexpr int x_pitch() { return chunks_per_stage<TM, TN, kPre>() * 128 + 16; }  // pad: banks
// Scale (and zero-point) rows per stage: group 32 (kPre) has two per chunk; groups >= 64 at most
// one (a stage starts on a 64 boundary).
template <int TM, int TN, bool kPre>
__host__ __device__ constexpr int scale_rows() { return (kPre ? 2 : 1) * chunks_per_stage<TM, TN, kPre>(); }
// A stage's zero-point row: the tile's TN / 2 bytes, copied in 16-byte pieces; with an odd stripe
// count (the seven-stripe tile) from the 16-byte boundary at or before the tile's first stripe,
// eight stripes (the tile's and one neighbour), so the row holds TN / 2 + 8 bytes.
template <int TN>
__host__ __device__ constexpr int z_row_bytes() { return (TN / 16) % 2 == 0 ? TN / 2 : TN / 2 + 8; }
template <int TM, int TN, bool kZeros, bool kPre>
__host__ __device__ constexpr int stage_bytes() {
  return w_bytes<TM, TN, kPre>() + TM * x_pitch<TM, TN, kPre>() + scale_rows<TM, TN, kPre>() * (TN * 2 + (kZeros ? z_row_bytes<TN>() : 0));
}

}  // namespace bulk

// Two CTAs an SM (the planner's slots), but the 160-feature tiles: one (planned where their tiles
// fit one round of the SMs; src/plan/variants.rs Variant::ctas_per_sm mirrors this).
template <int TM, int TN>
constexpr int bulk_min_blocks = TN > 128 ? 1 : 2;

// Lab timeline (bench/lab/bulk_trace.py; compiled out of the library): per CTA, in p.perm's place,
// [0] SM id, [1] start, [2] end, then per ring stage r < 64 the producer's issue, warp 0's full
// and warp 0's done times (%globaltimer, ns).
#ifdef MATE_BULK_TRACE
__device__ __forceinline__ void bulk_trace(const GemmParams& p, int slot, uint64_t v) {
  reinterpret_cast<uint64_t*>(const_cast<int32_t*>(p.perm))[blockIdx.x * 196 + slot] = v;
}
__device__ __forceinline__ uint64_t bulk_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
#define MATE_BULK_TRACE_AT(slot, v) bulk_trace(p, (slot), (v))
#else
#define MATE_BULK_TRACE_AT(slot, v) ((void)0)
#endif

// WK warps: WC = WK - 1 consumers, then the producer. Dynamic smem = P * stage_bytes + 16 * P
// (barriers) + max(PH - 1, 1) * NS * ceil(TM/8) * 512 (the reduction: PH warps per stripe
// block, below); Variant::dynamic_smem mirrors it.
template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void bulk_body(const GemmParams& p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  using namespace dec;
  using namespace bulk;
  constexpr int WC = WK - 1;
  constexpr int CH = chunks_per_stage<TM, TN, kPre>();
  constexpr int MT = (TM + 7) / 8, NS = TN / 16;  // TM = 1: one activation row staged (M = 1 only)
  // How the consumer warps share a stage: warp w covers the NSW stripes of stripe block w % NB and
  // takes chunks w / NB, w / NB + PH, ... of the stage; the PH warps of one block add their sums
  // in warp order. Narrow tiles (NS <= 2: 1 or 8 tokens): one block, every warp a chunk phase.
  // Wide tiles: one stripe a warp (two measured slower, bench/NOTES.md "Session 4").
  constexpr int NSW = stripes_per_warp<TM, TN, WC>();
  constexpr int NB = NS / NSW, PH = WC / NB;
  // Post-scale on raw weights corrected by activation sums (below): one token, or 8 in a narrow tile.
  constexpr bool kRaw = !kPre && (TM == 1 || (MT == 1 && NSW > 1));
  static_assert((TM == 1 || TM == 8 || TM == 16) && NB * NSW == NS && NB * PH == WC && P >= 2, "bad bulk tile");
  // Zero-point rows travel in 16-byte pieces (32 features): an odd stripe count copies from the
  // piece boundary before an odd tile's first stripe (zoff below; z_row_bytes). An even tile then
  // reads one stripe past its end, inside the row but for the last tile, which is odd: N is a
  // multiple of 64 (src/frame, FrameMeta), so N / 112 is a multiple of 4.
  constexpr int kZR = z_row_bytes<TN>();
  constexpr int kW = w_bytes<TM, TN, kPre>();
  constexpr int kXP = x_pitch<TM, TN, kPre>();
  constexpr int kS = scale_rows<TM, TN, kPre>() * TN * 2;
  constexpr int kStage = stage_bytes<TM, TN, kZeros, kPre>();
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sbase = smem_u32(smem);
  const uint32_t full0 = sbase + P * kStage;  // P full barriers, then P empty barriers
  const uint32_t empty0 = full0 + 8 * P;
  float* red = reinterpret_cast<float*>(smem + P * kStage + 16 * P);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int C = p.K >> 6;
  const int M = p.M, N = p.N, G = p.group_size;
  // Group of row k = k >> gs: group sizes 32/64/128 are powers of two; any other is per channel
  // (G = K, one group), where k >> 31 = 0 does the same without a division.
  const int gs = (G & (G - 1)) == 0 ? __ffs(G) - 1 : 31;
  // Persistent: whole K, CTA b takes tiles b, b + gridDim.x, ...; kSplit: the unit, in chunks,
  // travels in p.max_seg (src/plan/bulk.rs bulk_split). UNIT == 1: the even split, G = tiles x S,
  // every CTA one part of one tile (k_range; a 64-bit form of the same ranges measured slower on
  // these small kernels). Else stream-K (kernels/split.cuh) over stages (a range cut mid-stage
  // would add a short stage, a DRAM round trip for a few bytes): CTA b takes its range of the
  // tiles x SPT units, from its last tile to its first. Either way its producer streams the items
  // back to back, so the ring does not drain between them.
  const int UNIT = kSplit ? p.max_seg : CH;
  const bool even = kSplit && UNIT == 1;
  const int tiles = N / TN, SPT = (C + UNIT - 1) / UNIT;
  const int S = even ? static_cast<int>(gridDim.x) / tiles : 1;  // CTAs per tile
  const StreamK sk{static_cast<int64_t>(tiles) * SPT, static_cast<int>(gridDim.x)};
  // (the planner keeps tiles x chunks below 2^31: src/plan/bulk.rs bulk_split)
  const int u0 = kSplit && !even ? static_cast<int>(sk.start(blockIdx.x)) : 0;
  const int u1 = kSplit && !even ? static_cast<int>(sk.start(blockIdx.x + 1)) : 0;
  const int items = even ? 1
                    : kSplit ? (u1 > u0 ? (u1 - 1) / SPT - u0 / SPT + 1 : 0)
                             : (static_cast<int>(blockIdx.x) < tiles ? (tiles - 1 - static_cast<int>(blockIdx.x)) / static_cast<int>(gridDim.x) + 1 : 0);
  struct Item {
    int tile, cb, ce, nst, stripe0;  // chunks [cb, ce) of the tile, in nst stages
  };
  auto item_of = [&](int i) {
    Item t;
    if (even) {
      t.tile = blockIdx.x / S;
      const KRange r = k_range(blockIdx.x - t.tile * S, S, C, CH);
      t.cb = r.cb;
      t.ce = r.ce;
    } else if constexpr (kSplit) {
      t.tile = (u1 - 1) / SPT - i;
      const int base = t.tile * SPT;
      t.cb = max(u0 - base, 0) * UNIT;
      t.ce = min(min(u1 - base, SPT) * UNIT, C);
    } else {
      t.tile = blockIdx.x + i * gridDim.x;
      t.cb = 0;
      t.ce = C;
    }
    t.nst = (t.ce - t.cb + CH - 1) / CH;
    t.stripe0 = t.tile * NS;
    return t;
  };

#ifdef MATE_BULK_TRACE
  if (threadIdx.x == 0) {
    uint32_t smid;
    asm volatile("mov.u32 %0, %smid;" : "=r"(smid));
    MATE_BULK_TRACE_AT(0, smid);
    MATE_BULK_TRACE_AT(1, bulk_now());
  }
#endif
  if (threadIdx.x == 0) {
    for (int i = 0; i < P; ++i) {
      mbar_init(full0 + 8 * i, 1);
      mbar_init(empty0 + 8 * i, WC * 32);  // every consumer lane arrives (below)
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  pdl_trigger();
  if (warp == WC) {
    // Producer warp: lane 0 announces a stage's bytes, then the lanes issue its copies. The first
    // stage's x rows go after pdl_wait (kernels/pdl.cuh), its weights before.
    bool waited = false;
    const uint64_t stream = policy_evict_first(), keep = policy_evict_last();
    const char* qw = reinterpret_cast<const char*>(p.qweight);
    const T* x = static_cast<const T*>(p.x);
    const T* sc = static_cast<const T*>(p.scales);
    int ring = 0;  // stages issued so far: the ring slot and phase
    for (int item = 0; item < items; ++item) {
      const Item w = item_of(item);
      const int stripe0 = w.stripe0;
      for (int it = 0; it < w.nst; ++it, ++ring) {
        const int slot = ring % P;
        if (ring >= P) mbar_wait(empty0 + 8 * slot, ((ring / P) - 1) & 1);
        const int c0 = w.cb + it * CH, nch = min(CH, w.ce - c0);
        const int g0 = (c0 * 64) >> gs, g1 = ((c0 + nch) * 64 - 1) >> gs;
        const int srows = g1 - g0 + 1;
        const uint32_t full = full0 + 8 * slot, st = sbase + slot * kStage;
#if defined(MATE_BULK_NOCOPY)  // (lab switches, wrong results: nothing staged, the consumers alone)
        const uint32_t bytes = 0;
#elif defined(MATE_BULK_NOX)  // (x rows never staged, consumers read stale x)
        const uint32_t bytes = NS * nch * 512 + srows * TN * 2 + (kZeros ? srows * kZR : 0);
#else
        const uint32_t bytes = NS * nch * 512 + M * nch * 128 + srows * TN * 2 + (kZeros ? srows * kZR : 0);
#endif
#ifdef MATE_BULK_TRACE
        if (lane == 0 && ring < 64) MATE_BULK_TRACE_AT(4 + ring, bulk_now());
#endif
        if (lane == 0) mbar_expect_tx(full, bytes);
        __syncwarp();
        const int ncopy = NS + M + srows * (kZeros ? 2 : 1);
        auto copy_x = [&](int tok) {
#if defined(MATE_BULK_NOX) || defined(MATE_BULK_NOCOPY)
          return;
#elif defined(MATE_BULK_X1)  // (x's bytes as one copy of M rows' worth, wrong data: copy count vs bytes)
          if (tok == 0) bulk_copy(st + kW, x + static_cast<int64_t>(c0) * 64 * M, M * nch * 128, full, keep);
          return;
#endif
          bulk_copy(st + kW + tok * kXP, x + static_cast<int64_t>(tok) * p.x_row_stride + c0 * 64, nch * 128, full, keep);
        };
#ifdef MATE_BULK_NOCOPY
        for (int i = ncopy; i < 0; ++i) {
#else
        for (int i = lane; i < ncopy; i += 32) {
#endif
          if (i < NS) {
            bulk_copy(st + i * (CH * 512), qw + (static_cast<int64_t>(stripe0 + i) * C + c0) * 512, nch * 512, full, stream);
          } else if (i < NS + M) {
            if (waited) copy_x(i - NS);
          } else if (i < NS + M + srows) {
            const int r = i - NS - M;
            bulk_copy(st + kW + TM * kXP + r * (TN * 2), sc + static_cast<int64_t>(g0 + r) * N + stripe0 * 16, TN * 2, full, keep);
          } else {
            const int r = i - NS - M - srows;
            bulk_copy(st + kW + TM * kXP + kS + r * kZR, p.zeros + static_cast<int64_t>(g0 + r) * (N >> 3) + (NS % 2 ? stripe0 & ~1 : stripe0) * 2,
                      kZR, full, keep);
          }
        }
        if (!waited) {
          pdl_wait();
          waited = true;
          for (int tok = lane; tok < M; tok += 32) copy_x(tok);
        }
      }
    }
    return;
  }

  // Consumer warps.
  const int g = lane >> 2, ci = lane & 3;
  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  int ring = 0;
  for (int item = 0; item < items; ++item) {
    const Item wk = item_of(item);
    const int tile = wk.tile, stripe0 = wk.stripe0;
    const int zoff = NS % 2 ? (stripe0 & 1) * 8 : 0;  // the tile's first stripe in its zero-point row
    float acc[MT][NSW][4];
    zero_frags(acc);

    for (int it = 0; it < wk.nst; ++it, ++ring) {
      const int slot = ring % P;
      mbar_wait(full0 + 8 * slot, (ring / P) & 1);
#ifdef MATE_BULK_TRACE
      if (threadIdx.x == 0 && ring < 64) MATE_BULK_TRACE_AT(68 + ring, bulk_now());
#endif
      const int c0 = wk.cb + it * CH, nch = min(CH, wk.ce - c0);
      const int g0 = (c0 * 64) >> gs;
      const uint32_t st = sbase + slot * kStage;
#ifndef MATE_BULK_NOCOMPUTE  // (a lab switch: time the copy pipeline alone, wrong results)
      // Chunk j's activation fragments. Token tiles of 8/16 load every staged row, also rows past
      // M (stale shared memory): they reach only the MMA columns of tokens >= M, which are never
      // stored, so no guard or zero fill per chunk. M = 1 stages one row and every lane loads it:
      // all eight MMA columns hold the token (column 0 is the one stored; the others cost nothing).
      const uint32_t xa = st + kW + (TM == 1 ? 0 : g) * kXP + ci * 32;
      auto load_x = [&](int j, uint4 (&xb)[MT][2]) {
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          const uint32_t a = xa + t * 8 * kXP + j * 128;
          asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                       : "=r"(xb[t][0].x), "=r"(xb[t][0].y), "=r"(xb[t][0].z), "=r"(xb[t][0].w)
                       : "r"(a));
          asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                       : "=r"(xb[t][1].x), "=r"(xb[t][1].y), "=r"(xb[t][1].z), "=r"(xb[t][1].w)
                       : "r"(a + 16));
        }
      };
      // One chunk's four MMA steps for a stripe: deq turns packed word jj into the A registers;
      // with a fresh accumulator (std::true_type) the first step overwrites d(t) instead of
      // adding to it.
      auto steps = [&](const auto& deq, const auto& words, const auto& xb, auto&& d, auto fresh) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          uint32_t a[4];
          deq(words[jj], a);
#pragma unroll
          for (int t = 0; t < MT; ++t) {
            const uint4& u = xb[t][jj >> 1];
            if (decltype(fresh)::value && jj == 0) mma0<T>(d(t), a, u.x, u.y);
            else mma<T>(d(t), a, (jj & 1) ? u.z : u.x, (jj & 1) ? u.w : u.y);
          }
        }
      };
      // A stripe's scales (raw halves) and zero points, rows g and g + 8, from their addresses in
      // the stage's scale row (sa) and zero-point row (za: words 2sg and 2sg + 1 of the row).
      auto load_group_at = [&](uint32_t sa, uint32_t za, unsigned short& h0, unsigned short& h1, int& z0, int& z1) {
        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(h0) : "r"(sa));
        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(h1) : "r"(sa + 16));
        z0 = z1 = 8;
        if constexpr (kZeros) {
          uint32_t zw0, zw1;
          asm volatile("ld.shared.u32 %0, [%1];" : "=r"(zw0) : "r"(za));
          asm volatile("ld.shared.u32 %0, [%1];" : "=r"(zw1) : "r"(za + 4));
          z0 = (zw0 >> (4 * g)) & 0xF;
          z1 = (zw1 >> (4 * g)) & 0xF;
        }
      };
      if constexpr (!kPre && !kRaw) {
        // Exact (q - z) into the MMA (the 128-feature tiles at 8/16 tokens), the fp32 sums scaled
        // once per group: fewer instructions per weight than scaling each half2, no fp16 rounding
        // of (q - z) * s. A group's scales and zero points are loaded once; with groups >= 128
        // (and per channel) two chunks of one group share them and one scaling of their sums
        // (bench/NOTES.md, session 13). Addresses are the stage's bases plus the chunk's offset.
        const int gsh = gs - 6;  // chunks per group = 1 << gsh (>= 64: a chunk is in one group)
        const uint32_t sa0 = st + kW + TM * kXP + ((warp % NB) * NSW * 16 + g) * 2;
        const uint32_t wa0 = st + (warp % NB) * NSW * (CH * 512) + lane * 16;
        float f0[NSW], f1[NSW];
        int z0[NSW], z1[NSW];
        // Chunk j's group: its scales (fp32) and zero points.
        auto load_group = [&](int j) {
          const int srow = ((c0 + j) >> gsh) - g0;
#pragma unroll
          for (int s = 0; s < NSW; ++s) {
            unsigned short h0, h1;
            load_group_at(sa0 + srow * (TN * 2) + s * 32, st + kW + TM * kXP + kS + srow * kZR + zoff + ((warp % NB) * NSW + s) * 8, h0, h1,
                          z0[s], z1[s]);
            f0[s] = Num<T>::to_f(*reinterpret_cast<const T*>(&h0));
            f1[s] = Num<T>::to_f(*reinterpret_cast<const T*>(&h1));
          }
        };
        // One chunk's MMA steps per stripe into d (fresh: see steps).
        auto chunk = [&](int jc, auto& d, auto fresh) {
          uint4 xb[MT][2];
          load_x(jc, xb);
#pragma unroll
          for (int s = 0; s < NSW; ++s) {
            uint4 w;
            asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                         : "r"(wa0 + s * (CH * 512) + jc * 512));
            const uint32_t words[4] = {w.x, w.y, w.z, w.w};
            steps(Sub<T>(z0[s], z1[s]), words, xb, [&](int t) -> float* { return d[s][t]; }, fresh);
          }
        };
        auto scale = [&](const auto& d) {
#pragma unroll
          for (int s = 0; s < NSW; ++s) {
#pragma unroll
            for (int t = 0; t < MT; ++t) {
              acc[t][s][0] = fmaf(f0[s], d[s][t][0], acc[t][s][0]);
              acc[t][s][1] = fmaf(f0[s], d[s][t][1], acc[t][s][1]);
              acc[t][s][2] = fmaf(f1[s], d[s][t][2], acc[t][s][2]);
              acc[t][s][3] = fmaf(f1[s], d[s][t][3], acc[t][s][3]);
            }
          }
        };
        auto single = [&](int j) {
          float part[NSW][MT][4];
          load_group(j);
          chunk(j, part, std::true_type{});
          scale(part);
        };
        const bool pairs = PH == 1 && gsh > 0;
        if constexpr (MT == 2) {
          // Groups >= 128 (and per channel), 16 tokens: a chunk from an even index (a split range
          // may start odd) and the next one add to one set of sums (two MMA chains, one per token
          // tile), the second behind a branch: ptxas then keeps the two chunks apart, which
          // measured 1-4 % faster on the large layers than the pair interleaved (96 registers).
          for (int j = warp / NB, two; j < nch; j += two ? 2 : PH) {
            two = pairs && ((c0 + j) & 1) == 0 && j + 1 < nch;
            float part[NSW][MT][4];
            load_group(j);
            chunk(j, part, std::true_type{});
            if (two) chunk(j + 1, part, std::false_type{});
            scale(part);
          }
        } else if (pairs) {
          // 8 tokens: the pair's chunks into their own sums (two chains side by side), with no
          // branch between them so ptxas overlaps the two: split ranges of 1-2 stages (Llama-8B
          // qkv) measured 4-5 % slower with the branch and one chain, which in turn is 2-4 %
          // faster on the large layers (branch bulk-m8-branchy, bench/NOTES.md session 13).
          int j = 0;
          if (c0 & 1) single(j++);
          for (; j + 1 < nch; j += 2) {
            float part[2][NSW][MT][4];
            load_group(j);
            chunk(j, part[0], std::true_type{});
            chunk(j + 1, part[1], std::true_type{});
            scale(part[0]);
            scale(part[1]);
          }
          if (j < nch) single(j);
        } else {
          for (int j = warp / NB; j < nch; j += PH) single(j);
        }
      } else {
      // One token, 128 features (kRaw, a stripe a warp): the activation sums of the warp's 8
      // chunks of the stage in one MMA against ones, B column n holding chunk n (lane (g, ci)
      // loads chunk g's fragment): 4 MMAs a stage instead of 4 a chunk, lane n / 2 holding chunk
      // n's sum in xsp[n & 1] (rows g and g + 8 alike). Session 13: the split plans 1-5 % faster
      // (Llama-70B, Llama-8B down), but the whole-K variant (Llama-8B gate_up, 224 tiles) 18 %
      // slower in the library (PDL, graph) though 2-3 % faster in the lab (plain launches): not
      // understood, so split variants only; in the 32-feature tile (two chunks a warp a stage,
      // the sums already shared by its two stripes) 3-6 % slower in the lab, so not there.
      constexpr bool kPackedSums = kRaw && TM == 1 && NSW == 1 && kSplit;
      [[maybe_unused]] float xsp[4];
      if constexpr (kPackedSums) {
        const uint32_t ones[4] = {Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne};
        uint4 xn[MT][2];
        load_x(min(warp / NB + g * PH, CH - 1), xn);
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const uint4& u = xn[0][jj >> 1];
          if (jj == 0) mma0<T>(xsp, ones, u.x, u.y);
          else mma<T>(xsp, ones, (jj & 1) ? u.z : u.x, (jj & 1) ? u.w : u.y);
        }
      }
      for (int j = warp / NB, n = 0; j < nch; j += PH, ++n) {
        const int srow = (((c0 + j) * 64 + ci * 16) >> gs) - g0;  // kPre: group 32 differs per ci
        uint4 xb[MT][2];
        load_x(j, xb);
        [[maybe_unused]] float xs[4];  // kRaw: the chunk's activation sums (below)
#pragma unroll
        for (int s = 0; s < NSW; ++s) {
          const int sg = (warp % NB) * NSW + s;  // the stripe within the tile
          uint4 w;
          asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                       : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                       : "r"(st + sg * (CH * 512) + j * 512 + lane * 16));
          unsigned short s0, s1;
          int z0, z1;
          load_group_at(st + kW + TM * kXP + srow * (TN * 2) + (sg * 16 + g) * 2, st + kW + TM * kXP + kS + srow * kZR + zoff + sg * 8, s0, s1,
                        z0, z1);
          const uint32_t words[4] = {w.x, w.y, w.z, w.w};
          if constexpr (kPre) {
            Deq<T> dq;
            dq.set(*reinterpret_cast<const T*>(&s0), *reinterpret_cast<const T*>(&s1), z0, z1);
            steps(dq, words, xb, [&](int t) -> float* { return acc[t][s]; }, std::false_type{});
          } else if constexpr (kRaw) {
            // One token, or 8 in a narrow tile: the MMA takes magic-biased raw weights (dec.cuh
            // Raw<T>, one LOP3 a register), and the bias and zero point come off the chunk's fp32
            // sums as (bias + mul * z) times the chunk's activation sum (xs): 102 instead
            // of 131 instructions per two one-token chunks, 2-5 % faster in the lab on the Llama
            // layers at M = 1, the same error (bench/NOTES.md, "Session 11"; 2-8 tokens: "Session
            // 12"). Kept exact in the wide tiles at 8/16 tokens: there the extra MMAs measured 4-8 %
            // slower (8 tokens), and the 8-token split variant spills at ptxas' 96-register cap.
            // xs (every row holds a token column's sum) comes from an MMA against ones issued with
            // the first stripe's steps (hoisted out of the stripe loop, ptxas stopped unrolling the
            // one-token 128-feature loop: +4-27 %, session 12), or for one token in 128 features
            // from the stage's packed sums (kPackedSums, above).
            float part[4];
            const uint32_t ones[4] = {Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne, Raw<T>::kOne};
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
              uint32_t a[4];
              Raw<T>::apply(words[jj], a);
              const uint4& u = xb[0][jj >> 1];
              const uint32_t b0 = (jj & 1) ? u.z : u.x, b1 = (jj & 1) ? u.w : u.y;
              if (jj == 0) {
                mma0<T>(part, a, b0, b1);
                if (!kPackedSums && s == 0) mma0<T>(xs, ones, b0, b1);
              } else {
                mma<T>(part, a, b0, b1);
                if (!kPackedSums && s == 0) mma<T>(xs, ones, b0, b1);
              }
            }
            if (kPackedSums) xs[0] = xs[2] = __shfl_sync(0xffffffffu, (n & 1) ? xsp[1] : xsp[0], n >> 1);
            const float f0 = Num<T>::to_f(*reinterpret_cast<const T*>(&s0)) / Raw<T>::kMul0;
            const float f1 = Num<T>::to_f(*reinterpret_cast<const T*>(&s1)) / Raw<T>::kMul1;
            const float c0 = Raw<T>::kBias0 + Raw<T>::kMul0 * static_cast<float>(z0);
            const float c1 = Raw<T>::kBias1 + Raw<T>::kMul1 * static_cast<float>(z1);
            // Rows g and g + 8; one token: column 0 only (the column the epilogue reads).
            acc[0][s][0] = fmaf(f0, fmaf(-c0, xs[0], part[0]), acc[0][s][0]);
            acc[0][s][2] = fmaf(f1, fmaf(-c1, xs[2], part[2]), acc[0][s][2]);
            if constexpr (TM > 1) {
              acc[0][s][1] = fmaf(f0, fmaf(-c0, xs[1], part[1]), acc[0][s][1]);
              acc[0][s][3] = fmaf(f1, fmaf(-c1, xs[3], part[3]), acc[0][s][3]);
            }
          }
        }
      }
      }
#endif
#ifdef MATE_BULK_TRACE
      if (threadIdx.x == 0 && ring < 64) MATE_BULK_TRACE_AT(132 + ring, bulk_now());
#endif
      // Every lane arrives: an arrive releases only the executing thread's own prior accesses
      // (PTX memory model), so one lane's arrive would not order the other lanes' loads before
      // the refill (bench/NOTES.md, session 6: racecheck).
      mbar_arrive(empty0 + 8 * slot);
    }

    // Reduce each stripe block's PH partials in phase order (named barrier: the producer takes
    // no part; the first keeps the previous item's readers of `red` ahead of these writes).
    // Phases 1.. store theirs, phase 0 adds them to its own and leaves the block's sum in copy 0:
    // `red` holds max(PH - 1, 1) copies of the tile (Variant::dynamic_smem), not PH.
    constexpr int kPart = NSW * MT * 32 * 4;
    const int sb = warp % NB, ph = warp / NB;
    asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
    if (PH == 1 || ph > 0) store_frags(red + ((PH == 1 ? 0 : ph - 1) * NB + sb) * kPart, lane, acc);
    if constexpr (PH > 1) {
      asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
      if (ph == 0) {
        for (int c = 0; c < PH - 1; ++c) add_frags(acc, red + (c * NB + sb) * kPart, lane);
        store_frags(red + sb * kPart, lane, acc);
      }
    }
    asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");

    constexpr int kTile = TM * TN;
    // Split plans (kernels/split.cuh; workspace: one counter per tile, then [G][TM * TN] fp32
    // slots). The even split (UNIT == 1: every CTA one part of one tile) stores every part and the
    // last arriver sums them (split_ticket); stream-K stores the parts that do not end their tile
    // (contributors) and the owner sums them (split_wait). One protocol per launch.
    const bool contributor = kSplit && (even || wk.ce < C);
    float* const slots = kSplit ? ws_partials(p.workspace) : nullptr;
    float v_keep[(TM * TN + WC * 32 - 1) / (WC * 32)];
#pragma unroll
    for (int i = 0; i < (kTile + WC * 32 - 1) / (WC * 32); ++i) {
      const int idx = i * WC * 32 + threadIdx.x;
      float v = 0.f;
      if (idx < kTile) {
        const int tok = idx / TN, row = idx % TN;  // consecutive threads -> consecutive features
        const int s = row >> 4, r16 = row & 15;
        const int blk = static_cast<unsigned>(s) / NSW, sw = static_cast<unsigned>(s) % NSW;  // block, stripe in it
        const int t = tok >> 3, col = tok & 7;
        const int frag = (t * 32 + (r16 & 7) * 4 + (col >> 1)) * 4 + (r16 >> 3) * 2 + (col & 1);
        v = red[blk * kPart + sw * MT * 128 + frag];
        if (contributor) slots[static_cast<int64_t>(blockIdx.x) * kTile + idx] = v;
      }
      v_keep[i] = v;
    }
    if constexpr (kSplit) {
      int* counters = ws_tickets(p.workspace);
      if (even) {
        // Measured faster than an owner's wait here (bench/NOTES.md, session 7).
        const int first = tile * S, parts = S;
        __shared__ int last;
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
#ifndef MATE_BULK_LAB_NOTICKET  // lab switch (MATE_KERNEL_FLAGS, never shipped; wrong results): what the ticket and sum cost
        if (threadIdx.x == 0) last = (split_ticket(counters + tile) == parts - 1);
#else
        if (threadIdx.x == 0) last = (static_cast<int>(blockIdx.x) - first == parts - 1);
#endif
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        if (!last) continue;  // uniform over the consumers: all read `last` before the next write
#ifndef MATE_BULK_LAB_NOTICKET
        // 5..kBatch parts: every part's load issued before the first add (one L2 round trip, not
        // one per four parts: the loop below is unrolled by four), added in part order as the loop
        // does, so the bits are the same. Measured on the H200 (bench/NOTES.md session 32): 0.93-0.985x
        // on the 5- and 8-part plans (Llama-8B qkv / down, Qwen2-1.5B down at M = 1 / 8); with 2-4
        // parts 0.98-1.03x, so those keep the loop.
        constexpr int kBatch = 8;
#pragma unroll
        for (int i = 0; i < (kTile + WC * 32 - 1) / (WC * 32); ++i) {
          const int idx = i * WC * 32 + threadIdx.x;
          float v = 0.f;
          if (idx < kTile && parts > 4 && parts <= kBatch) {
            float t[kBatch];
#pragma unroll
            for (int c = 0; c < kBatch; ++c) t[c] = c < parts ? __ldcg(slots + static_cast<int64_t>(first + c) * kTile + idx) : 0.f;
#pragma unroll
            for (int c = 0; c < kBatch; ++c)
              if (c < parts) v += t[c];
          } else if (idx < kTile) {
            for (int c = first; c < first + parts; ++c) v += __ldcg(slots + static_cast<int64_t>(c) * kTile + idx);
          }
          v_keep[i] = v;
        }
#endif
        if (threadIdx.x == 0) counters[tile] = 0;
      } else if (contributor) {
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        if (threadIdx.x == 0) split_arrive(counters + tile);
        continue;
      } else if (wk.cb > 0) {
        // The owner of a tile that earlier CTAs share: their slots, in CTA order, then its own part.
        const int first = sk.cta_of(static_cast<int64_t>(tile) * SPT);
        if (threadIdx.x == 0) split_wait(counters + tile, static_cast<int>(blockIdx.x) - first);
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
#pragma unroll
        for (int i = 0; i < (kTile + WC * 32 - 1) / (WC * 32); ++i) {
          const int idx = i * WC * 32 + threadIdx.x;
          float v = 0.f;
          if (idx < kTile) {
            for (int c = first; c < static_cast<int>(blockIdx.x); ++c) v += __ldcg(slots + static_cast<int64_t>(c) * kTile + idx);
            v += v_keep[i];
          }
          v_keep[i] = v;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < (kTile + WC * 32 - 1) / (WC * 32); ++i) {
      const int idx = i * WC * 32 + threadIdx.x;
      const int tok = idx / TN, row = idx % TN;
      if (idx < kTile && tok < M) {
        const int n = stripe0 * 16 + row;
        float v = v_keep[i];
        if (bias != nullptr) v += Num<T>::to_f(bias[n]);
        out[static_cast<int64_t>(tok) * N + n] = Num<T>::from_f(v);
      }
    }
  }  // items
#ifdef MATE_BULK_TRACE
  if (threadIdx.x == 0) MATE_BULK_TRACE_AT(2, bulk_now());
#endif
#else
  __trap();  // the planner never selects this family below sm_90
#endif
}

}  // namespace mate
