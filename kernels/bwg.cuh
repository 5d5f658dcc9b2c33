// Family "bwg": Hopper, 9 tokens and up. The wgmma product of the wg family (out^T = W^T x^T: the
// dequantized weights are the register operand A, the activation tile is operand B, read by the
// tensor cores from shared memory) fed by the bulk family's producer warp. The wg family makes its
// consumers copy and dequantize in turn and measured 2.6-4.7x the pure read at M = 32-64; the
// bulk family's mma.sync reads every activation row into the registers of every warp (8x the x
// bytes at 128 features), which grows with M. Here one producer warp streams each stage (the
// weights of TN/16 frame-v2 stripes and the scale rows by bulk copies, the x tile of each chunk
// by one TMA box with 128-byte swizzle), P stages in flight at no register cost; the consumer
// warpgroups only dequantize and issue wgmma.
//
// Work: an output tile is TN features x one TM-token m-tile; the grid is persistent. Whole K: CTA
// b takes tiles b, b + ctas, ... (ctas = gridDim.x). kSplit, p.total_warps = S > 0: the even
// split, every tile's K in S ranges, items = tiles x S taken the same way; the last arriver sums
// the fp32 partials in split order. kSplit, p.total_warps = 0 (128-256-token tiles): stream-K
// (kernels/split.cuh) over stages, after sk_whole_tiles() whole tiles taken the persistent way; a
// tile shared by several CTAs is finished by its owner, which adds the others' partials in CTA
// order. Either way deterministic, no atomic adds. A stage is CH chunks of 64 K
// (chunks_per_stage). A consumer warpgroup owns 64 features (warp w: stripe w of the tile, rows
// 16 (w % 4) of its wgmma), every chunk of the item.
//
// Frame v2 stores lane (g, ci)'s 16 bytes in lane order (bulk copies keep it); wgmma step j
// needs the k range [16j, 16j+16) from every lane, which lane (g, j) holds: each lane reads lane
// (g, j)'s 16 bytes (one 128-bit load per step: a quarter warp touches two such pieces, 64 bytes
// apart, so no bank conflicts) and picks its two words with one byte permute, as kernels/wg.cuh.
//
// The TMA box has min(TM / XH, M rounded up to 8) rows, XH boxes a chunk (x_halves: 2 for the
// 272-320-token tiles; src/device/tma.rs box_rows, the same rule):
// rows past M inside the box arrive as zeros, rows past the box are stale shared memory that only
// reaches output columns of tokens >= M, which are never stored. (The 128-320-token tiles' last
// m-tile of a multi-tile plan starts its boxes at M - TM instead: Item::x0 in bwg_body.) No act
// order (x arrives in boxes, not gathered); the planner sends act-order frames elsewhere.
#pragma once
#include "bulk.cuh"
#include "cluster.cuh"
#include "dec.cuh"
#include "mbarrier.cuh"
#include "split.cuh"
#include "pdl.cuh"
#include "wg.cuh"

namespace mate {
namespace bwg {

// K chunks (of 64) per stage. Mirrored by bwg_chunks_per_stage in src/plan/variants.rs. The
// 48 / 64-token tiles take two (two CTAs an SM, chunk pairs); the
// 128-token tile takes three (in a ring of three): its chunk is bound by the consumers' instruction
// stream (ncu: tensor pipe 51 % busy, 6.6 cycles a warp between instructions), and a stage's waits,
// releases and bookkeeping then come once in three chunks, not two (SASS: 138 instructions a chunk,
// 148 before): the routed M = 128 plans 0.90-0.97x (bench/NOTES.md session 25).
// The 40-token exact tile built with three stages takes four, as the 16-32-token tiles: at the
// same M = 32 the 32-token tile in stages of two chunks took 1.11-1.34x its time in stages of four
// (bench/NOTES.md session 52); it fits two CTAs an SM only with three scale rows a stage
// (scale_rows), so it serves groups of 128 or more.
// The 256-feature tiles (one CTA an SM, four consumer warpgroups sharing each stage's x boxes)
// take four chunks x 3 at 48-64 tokens: their stage (x boxes once for twice the weights) fits
// where the 128-feature tile's four-chunk stage does not fit two CTAs.
template <int TM, int TN, int P>
__host__ __device__ constexpr int chunks_per_stage() { return TN == 256 ? 4 : TM == 128 ? 3 : TM == 40 && P == 3 ? 4 : TM > 32 ? 2 : 4; }

// Scale (and zero-point) rows a stage holds: two a chunk (group 32 has two), or three where a
// stage of four chunks must fit two CTAs an SM (the 40-token tile of three stages): 256 k span at
// most three groups of 128 or more. Mirrored by bwg_scale_rows in src/plan/variants.rs, whose
// planner keeps smaller groups off such variants (src/plan/mod.rs serves).
template <int TM, int TN, int P>
__host__ __device__ constexpr int scale_rows() { return TN == 128 && TM == 40 && P == 3 ? 3 : 2 * chunks_per_stage<TM, TN, P>(); }

// Token tiles wider than one wgmma (n at most 256) issue two a step, on the two halves of the x
// tile, from the same dequantized A registers, so a chunk's dequantization serves up to twice
// the tokens; their x arrives in two boxes a chunk (a TMA box has at most 256 rows). Mirrored by
// bwg_x_halves in src/plan/variants.rs (src/device/tma.rs box_rows).
template <int TM>
__host__ __device__ constexpr int x_halves() { return TM > 256 ? 2 : 1; }

// Stream-K: tiles the grid's CTAs take whole before the stream-K ranges (persistent order): all
// full rounds of the grid but the last, so the shared ranges cover between one and two rounds
// (each range at least a tile deep where there are that many tiles). Mirrored by
// bwg_streamk_whole_tiles in src/plan/bwg.rs.
__host__ __device__ constexpr int sk_whole_tiles(int tiles, int ctas) {
  return tiles >= 2 * ctas ? (tiles / ctas - 1) * ctas : 0;
}

// Bytes of one stage: CH x boxes (TM x 128 bytes each, 1024-aligned for the swizzle), the
// stripes' CH x 512 bytes, scale_rows scale (and zero-point) rows, rounded up to 1024. Mirrored by
// Variant::dynamic_smem (plus 3 P mbarriers and 1024 bytes of alignment slack).
template <int TM, int TN, bool kZeros, int P>
__host__ __device__ constexpr int stage_bytes() {
  return (chunks_per_stage<TM, TN, P>() * (TM * 128 + (TN / 16) * 512) + scale_rows<TM, TN, P>() * (TN * 2 + (kZeros ? TN / 2 : 0)) + 1023) / 1024 * 1024;
}

__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}
__device__ __forceinline__ void sts128(uint32_t addr, const float4& v) {
  asm volatile("st.shared.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(addr), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}

// One packed word (frame v2, reordered for wgmma step s) -> the four A registers of that step:
// a[0] / a[2] rows g, a[1] / a[3] rows g + 8, each the exact q - z (zero constants zl / zh from
// zc() in bwg_body), times the rows' scales s0 / s1 (both halves of each word) when kScaled
// (pre-scale); unscaled for the exact form, which scales each group's fp32 sums after the MMA.
template <typename T, bool kScaled>
__device__ __forceinline__ void deq(uint32_t w, uint32_t a[4], uint32_t s0, uint32_t s1, uint32_t zl, uint32_t zh) {
#ifdef MATE_BWG_LAB_NODEQ  // lab switch (MATE_KERNEL_FLAGS, never shipped; wrong results): what dequantizing costs
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = w;
  return;
#endif
  if constexpr (std::is_same<T, __half>::value) {
    const __half2 k16 = __half2half2(__ushort_as_half(0x2C00));  // 1/16
    const uint32_t w8 = w >> 8;
    __half2 r[4] = {__hsub2(dec::as_h2(dec::lop_or(w, 0x000F000F, 0x64006400)), dec::as_h2(zl)),
                    __hfma2(dec::as_h2(dec::lop_or(w, 0x00F000F0, 0x64006400)), k16, dec::as_h2(zh)),
                    __hsub2(dec::as_h2(dec::lop_or(w8, 0x000F000F, 0x64006400)), dec::as_h2(zl)),
                    __hfma2(dec::as_h2(dec::lop_or(w8, 0x00F000F0, 0x64006400)), k16, dec::as_h2(zh))};
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = dec::as_u32(kScaled ? __hmul2(r[i], dec::as_h2(i & 1 ? s1 : s0)) : r[i]);
  } else {
    __nv_bfloat162 r[4] = {__hsub2(dec::as_b2(dec::lop_or(w, 0x000F000F, 0x43004300)), dec::as_b2(zl)),
                           __hsub2(dec::as_b2(dec::lop_or(w >> 4, 0x000F000F, 0x43004300)), dec::as_b2(zh)),
                           __hsub2(dec::as_b2(dec::lop_or(w >> 8, 0x000F000F, 0x43004300)), dec::as_b2(zl)),
                           __hsub2(dec::as_b2(dec::lop_or(w >> 12, 0x000F000F, 0x43004300)), dec::as_b2(zh))};
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = dec::as_u32(kScaled ? __hmul2(r[i], dec::as_b2(i & 1 ? s1 : s0)) : r[i]);
  }
}

// Orders a register's reads after the wgmma.wait that completes the asynchronous writes to it
// (the compiler sees the wgmma asm as the register's definition and could hoist a read above
// the wait otherwise).
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// A consumer thread's fp32 partial in a split slot (even split or stream-K): float4 pieces, thread
// t's piece q at (q * threads + t), so a warp moves 512 contiguous bytes per instruction (a
// quarter of the requests of a float per thread): 2-6 % faster on the split plans of Qwen2-1.5B
// down and Llama-8B qkv / o at M = 16-128 (bench/NOTES.md, session 9). Writer and reader are the
// same threads, so the layout is private.
template <int NACC, int kThreads>
__device__ __forceinline__ void store_part(float* slot, const float (&acc)[NACC]) {
  float4* d = reinterpret_cast<float4*>(slot) + threadIdx.x;
#pragma unroll
  for (int q = 0; q < NACC / 4; ++q) d[q * kThreads] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
}

// Two outputs -> one b16x2 register (lo in the low half), rounded as Num<T>::from_f.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same<T, __half>::value)
    return dec::as_u32(__floats2half2_rn(lo, hi));
  else
    return dec::as_u32(__floats2bfloat162_rn(lo, hi));
}

// Four 8x8 b16 matrices from mma-fragment registers, each stored transposed (row j of the stored
// matrix = column j of the fragment, 16 bytes at the address lane 8k + j gives for matrix k).
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]),
               "r"(r[3])
               : "memory");
}

// Adds a slot's pieces [q0, q1) (piece q holds the tile's token rows 8q .. 8q + 7) to acc;
// add_part: all of them.
template <int NACC, int kThreads>
__device__ __forceinline__ void add_part_rows(const float* slot, float (&acc)[NACC], int q0, int q1) {
  const float4* s = reinterpret_cast<const float4*>(slot) + threadIdx.x;
#pragma unroll
  for (int q = 0; q < NACC / 4; ++q) {
    if (q >= q0 && q < q1) {
      const float4 v = __ldcg(s + q * kThreads);
      acc[4 * q] += v.x;
      acc[4 * q + 1] += v.y;
      acc[4 * q + 2] += v.z;
      acc[4 * q + 3] += v.w;
    }
  }
}
template <int NACC, int kThreads>
__device__ __forceinline__ void add_part(const float* slot, float (&acc)[NACC]) {
  add_part_rows<NACC, kThreads>(slot, acc, 0, NACC / 4);
}

// The sliced split's store (bwg_body): pieces [q0, q1), which this part sums itself, to shared
// memory at `own` (piece q at ((q - q0) * threads + t) * 16), the rest to its slot as store_part.
template <int NACC, int kThreads>
__device__ __forceinline__ void store_part_apart(float* slot, uint32_t own, const float (&acc)[NACC], int q0, int q1) {
  float4* d = reinterpret_cast<float4*>(slot) + threadIdx.x;
#pragma unroll
  for (int q = 0; q < NACC / 4; ++q) {
    const float4 v = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    if (q >= q0 && q < q1)
      sts128(own + ((q - q0) * kThreads + threadIdx.x) * 16, v);
    else
      d[q * kThreads] = v;
  }
}
// add_part_rows for the pieces store_part_apart kept in shared memory.
template <int NACC, int kThreads>
__device__ __forceinline__ void add_own_rows(uint32_t own, float (&acc)[NACC], int q0, int q1) {
#pragma unroll
  for (int q = 0; q < NACC / 4; ++q) {
    if (q >= q0 && q < q1) {
      const uint4 v = lds128(own + ((q - q0) * kThreads + threadIdx.x) * 16);
      acc[4 * q] += __uint_as_float(v.x);
      acc[4 * q + 1] += __uint_as_float(v.y);
      acc[4 * q + 2] += __uint_as_float(v.z);
      acc[4 * q + 3] += __uint_as_float(v.w);
    }
  }
}

#ifdef MATE_PROBE
// Lab probe of where a split plan's time goes (bench/lab/probe_bwg.py; build with
// MATE_KERNEL_FLAGS=-DMATE_PROBE, never in the library that ships): 16 u64 per CTA after the
// split workspace (the lab passes a larger one). [0] globaltimer at entry, [8] at exit; clock64 at
// [1] entry, [2] the producer past pdl_wait, [3] the first weights, [4] the first x, [5] the
// mainloop's end, [6] the reduction's end, [7] the epilogue's end; [9] 1 = this CTA summed the
// tile (2: a stream-K owner, 3: a sliced part, 0: it stored a part), [10] %smid; the sliced
// split (128-256 tokens) also [11] its partial stored, [12] arrived, [13] every part arrived. First
// item only.
__device__ __forceinline__ unsigned long long probe_clock() { return clock64(); }
__device__ __forceinline__ unsigned long long probe_gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
#endif

// The sliced even-split sum of the kSliced variants (bwg_body, after the item loop; one CTA per
// part, all resident). The last arriver of a ticket reads all S partials through one SM (bound by
// that SM's L2 bandwidth: with that sum left out, Llama-8B o ran 0.72-0.87x at M = 16-32,
// Qwen2-1.5B down 0.63-0.74x), but the parts that leave at once free their slots for the next
// kernel's programmatic start, and a part that waits for the last arrival notices it a poll late.
// Measured against the ticket (bench/NOTES.md session 21): where a tile's partials pass 128 KB
// 0.88-0.97x (Qwen2-1.5B down, 17 parts of 8 / 16 KB at M = 9-16 / 17-32, 11 of 16 KB at M =
// 33-64; Llama-8B down, 8 parts of 32 KB at M = 33-64), at 64-128 KB 1.01-1.11x slower (Llama-8B
// o / qkv / down, Llama-70B o / down); the last few arrivers sharing the sum were slower still
// (1.02-1.3x). Part z of S waits for every part's slot (`all`: S slots of TM x TN floats, thread
// t's float4 q at q * WC * 32 + t), sums its share of the tile's WC x TM / 8 pieces of 512 bytes
// (piece (w, q): warp w's float4 q, tokens 8q .. 8q + 7 of stripe w) over the S slots in split
// order (0 + part 0 + ... + part S - 1: the ticket's sums), and stores them (tokens m0 + ...,
// features n0 + ...) with the bias. A part's rows are loaded at once by all consumer warps (one
// round trip) and staged in the ring at sbase (the caller checks that they fit). Out of line, so
// ptxas schedules the item loop nearly as in the variant without it (the 32 / 64-token loops'
// SASS 99 % the same after register renaming; inlined, 67-85 %).
template <typename T, int TM, int TN, int WC>
__device__ __noinline__ void sliced_sum(const float* all_f, int* ctr, int z, int S, int n0, int m0, int M, int N, T* out, const T* bias,
                                        uint32_t sbase) {
  constexpr int Q = TM / 8, kPieces = WC * Q, R = 8;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, ci = lane & 3;
  const float4* const all = reinterpret_cast<const float4*>(all_f);
  asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");  // this part's slot stored, the ring read
  if (threadIdx.x == 0) {
    split_arrive(ctr);
    split_wait_all(ctr, S);
  }
  asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
  const int p0 = (z * kPieces) / S, np = ((z + 1) * kPieces) / S - p0, F = np * S;
  for (int f0 = 0; f0 < F; f0 += WC * R) {  // row f: piece p0 + f / S of part f % S
    float4 v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int f = f0 + r * WC + warp, pc = p0 + f / S;
      if (f < F) v[r] = __ldcg(all + static_cast<int64_t>(f % S) * (TM * TN / 4) + (pc % Q) * (WC * 32) + (pc / Q) * 32 + lane);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int f = f0 + r * WC + warp;
      if (f < F) sts128(sbase + (f * 32 + lane) * 16, v[r]);
    }
  }
  asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
  if (threadIdx.x == 0) split_leave(ctr, S);
  for (int i = warp; i < np; i += WC) {
    const int pc = p0 + i, w = pc / Q, q = pc % Q;
    float a[4] = {0.f, 0.f, 0.f, 0.f};
    for (int zz = 0; zz < S; ++zz) {
      const uint4 u = lds128(sbase + ((i * S + zz) * 32 + lane) * 16);
      a[0] += __uint_as_float(u.x);
      a[1] += __uint_as_float(u.y);
      a[2] += __uint_as_float(u.z);
      a[3] += __uint_as_float(u.w);
    }
    const int n = n0 + w * 16 + g;  // as bwg_body's store_direct, for stripe w's piece q
    const float b0 = bias != nullptr ? Num<T>::to_f(bias[n]) : 0.f, b1 = bias != nullptr ? Num<T>::to_f(bias[n + 8]) : 0.f;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int tok = m0 + 8 * q + 2 * ci + (r & 1);
      if (tok < M) out[static_cast<int64_t>(tok) * N + n + ((r >> 1) << 3)] = Num<T>::from_f(a[r] + ((r >> 1) ? b1 : b0));
    }
  }
}
}  // namespace bwg

// Store warps: the whole 128-320-token tiles' output leaves shared memory by the producer
// warpgroup's three otherwise idle warps. The consumers stage the tile in the last slot's x boxes
// and release the slot; the store warps copy it out and arrive on the slot's `stored` barrier,
// which the producer waits for before refilling a slot that held an item's last stage. So the
// consumers go on to the next item without the store loop (ncu, bench/NOTES.md session 58: the
// CTA-wide epilogue was ~4 % of a consumer warp's time, the tensor pipe idle). Mirrored by
// bwg_store_warps in src/plan/variants.rs.
template <int TM, int WK, bool kSplit>
__host__ __device__ constexpr bool store_warps() { return TM >= 128 && WK == 12 && !kSplit; }

template <int TM, int TN>
constexpr int bwg_min_blocks = TM >= 128 || TN == 256 ? 1 : 2;

namespace bwg {
// setmaxnreg split of a 12-warp CTA (bwg_body, WK = 12): per SM sub-partition one warp of each
// warpgroup, 2 x 232 + 40 = 504 <= 512 registers per thread slot.
constexpr int kConsumerRegs = 232, kProducerRegs = 40;
// Two CTAs an SM (the 32/64-token 12-warp tiles): the CTA's pool at entry is 384 threads x 80
// registers; 4 x 32 x 32 + 8 x 32 x 104 fills it. The whole-K and ring-first tiles' producer takes
// 32 (whole: 0.96-0.98x on Llama / Qwen2-1.5B gate_up at M = 17-32), the other split ones keep 24
// (with 32 and the ring-first code, ptxas rescheduled the 32-token split consumer and the deep
// plans ran 1-2 % slower: hence a variant of its own; bench/NOTES.md session 17).
constexpr int kConsumerRegs2 = 104, kProducerRegs2 = 32, kProducerRegs2Split = 24;
// One 20-warp CTA an SM (the 256-feature tiles): the pool at entry is 640 threads x 96 registers;
// 4 x 32 x 32 + 16 x 32 x 112 fills it.
constexpr int kConsumerRegsW = 112, kProducerRegsW = 32;
}  // namespace bwg

// WK warps: WC consumers (WC / 4 warpgroups, TN = 16 WC), then the producer (kRegs below).
// kRingFirst (split = 2 in kernels/variants.def): the producer issues the weights of the first
// item's first ring (up to P stages) before pdl_wait, their x boxes after it (below). kSk (split =
// 3): the 32/64-token split tile with stream-K (planned where the tiles fall unevenly on the SMs;
// its own variant, so the even-split tile keeps its deferred tickets and its code).
template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre, bool kRingFirst, bool kSk, bool kSliced>
__device__ __forceinline__ void bwg_body(const GemmParams& p, const wg::XArg& xa) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace wg;
  using bulk::bulk_copy;
  // WK = 9: eight consumer warps and one producer warp. WK = 12 (the 128-256-token tiles): a
  // whole producer warpgroup (one warp issues, three exit) so the register file can move to the
  // consumers with setmaxnreg; a ninth warp would otherwise cap every warp at 168 registers
  // (three warps on one SM sub-partition) and the 128-float accumulators spill.
  constexpr bool kRegs = WK % 4 == 0;
  constexpr int WC = kRegs ? WK - 4 : WK - 1, NS = TN / 16;
  constexpr int CH = bwg::chunks_per_stage<TM, TN, P>(), SR = bwg::scale_rows<TM, TN, P>();
  // 128-320 tokens: TM / 8 even (the epilogue's stmatrix pairs; a box of TM / XH x 128 bytes is
  // then also a 1024-multiple, the 128-byte swizzle's atom), wgmma n at most 256.
  constexpr int XH = bwg::x_halves<TM>(), TH = TM / XH;  // x boxes a chunk, tokens a wgmma
  static_assert(WC % 4 == 0 && NS == WC && (kPre || TM <= 48 || TN == 256) && P >= 2 && (TM == 16 || TM == 24 || TM == 32 || (TM % 8 == 0 && TM > 32 && TM <= 64) || (TM % 16 == 0 && TM >= 128 && TH <= 256)),
                "bad bwg tile");
  // (352 tokens: ptxas serializes the wgmma, C7512, for registers; measured 1.10-1.21x slower)
  static_assert(TM <= 320, "wide bwg tiles end at 320 tokens");
  static_assert(TN == 128 || (TN == 256 && WK == 20 && TM > 40 && TM <= 64), "256-feature tiles: 20 warps, 48-64 tokens");
  static_assert(!kRingFirst || (kSplit && WK == 12 && TM <= 64), "the ring-first variants are 12-warp split tiles of 32/64 tokens");
  static_assert(!kSk || (kSplit && (WK == 12 || WK == 20) && TM >= 24 && TM <= 64 && !kRingFirst), "the stream-K variants are 12 / 20-warp 24-64-token split tiles");
  static_assert(!kSliced || (kSplit && TM <= 64 && !kSk), "the sliced variants are 16-64-token even-split tiles");
  constexpr int kX = 0;                      // CH boxes of TM x 128 bytes
  constexpr int kW = CH * TM * 128;          // NS stripes x CH x 512 bytes
  constexpr int kS = kW + NS * CH * 512;     // SR scale rows of TN halves
  constexpr int kZ = kS + SR * TN * 2;       // SR zero-point rows of TN / 8 words
  constexpr int kStage = bwg::stage_bytes<TM, TN, kZeros, P>();
  constexpr int NACC = TM / 2;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t sbase = (bulk::smem_u32(smem_raw) + 1023u) & ~1023u;
  // Per stage, one full barrier for each part: the bulk-copied weights, scales and zero points
  // (read by the consumers' shared-memory loads) and the TMA boxes of x (read by wgmma, so a
  // consumer waits for them only after dequantizing); and one empty barrier for the slot,
  // released once the stage's last wgmma has retired (after its loads too). A second empty
  // barrier for the weights' part, released right after a warp's last load, bought nothing (the
  // producer refills a slot only when both parts are free) and cost every stage a second proxy
  // fence and arrive: without it 0.98-0.99x (geomean of two runs; 0.96-1.01) at M = 16-64, 0.99x
  // at M >= 256 (bench/NOTES.md session 58).
  const uint32_t full0 = sbase + P * kStage;
  const uint32_t fullx0 = full0 + 8 * P;
  const uint32_t empty0 = fullx0 + 8 * P;
  const uint32_t stored0 = empty0 + 8 * P;  // kStoreWarps: every store-warp lane arrives
  const uint32_t staged0 = stored0 + 8 * P;  // kStoreWarps: every consumer lane arrives

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int C = p.K >> 6;
  const int M = p.M, N = p.N, G = p.group_size;
  const int gs = (G & (G - 1)) == 0 ? __ffs(G) - 1 : 31;  // per channel: k >> 31 = group 0
  const int rows = min(TH, (M + 7) & ~7);                 // the TMA box (src/device/tma.rs box_rows)
  // m-tiles walk in bands of p.max_seg (the planner sizes a band's x rows to stay in L2): within
  // a band every n-tile, within an n-tile the band's m-tiles, so CTAs working at the same time
  // share the weights through L2 and x stays hot (kernels/wg.cuh's raster). r: a tile's index in
  // that order.
  const int mtiles = (M + TM - 1) / TM, band = max(1, min(p.max_seg, mtiles));
  const int tiles = N / TN, NT = mtiles * tiles;  // output tiles
  const int ctas = gridDim.x, b = blockIdx.x;
  // Stream-K in the 128-256-token tiles and the 32/64-token kSk variants: in the 16/32-token even-split
  // variants its code cost 2-6 % on even-split plans (bench/NOTES.md, sessions 8 and 18).
  constexpr bool kStreamK = kSplit && (TM >= 128 || kSk);
  // The 128-256-token tiles stage their output through shared memory (the epilogue below).
  constexpr bool kStagedOut = TM >= 128;
  constexpr bool kStoreWarps = store_warps<TM, WK, kSplit>();
  constexpr int kStoreThreads = (WK - WC - 1) * 32;  // the producer warpgroup's warps after the producer
  // The 16-64-token split variants take their tiles' tickets after the item loop (below): any
  // branch or runtime loop in the item loop's epilogue made ptxas build every wgmma descriptor in
  // vector registers (R2UR each, ~10 % more instructions a chunk).
#ifdef MATE_BWG_NO_DEFER  // lab switch (MATE_KERNEL_FLAGS, never shipped; NOTES session 14): tickets in the loop
  constexpr bool kDeferred = false;
#else
  constexpr bool kDeferred = kSplit && !kStagedOut && !kSk;
#endif
  const bool streamk = kStreamK && p.total_warps == 0;
  const int S = kSplit && !streamk ? p.total_warps : 1;  // even split: CTAs per tile
  // Stream-K: whole tiles [0, D), then units (stages) of tiles [D, NT) shared in ranges [u0, u1).
  const int SPT = (C + CH - 1) / CH;
  const int D = streamk ? bwg::sk_whole_tiles(NT, ctas) : 0;
  const StreamK sk{static_cast<int64_t>(NT - D) * SPT, ctas};
  // (the planner keeps tiles x stages below 2^31: src/plan/bwg.rs bwg_split)
  const int u0 = streamk ? static_cast<int>(sk.start(b)) : 0, u1 = streamk ? static_cast<int>(sk.start(b + 1)) : 0;
  const int n_whole = streamk ? D / ctas : (NT * S - b + ctas - 1) / ctas;
  const int n_items = n_whole + (streamk && u1 > u0 ? (u1 - 1) / SPT - u0 / SPT + 1 : 0);
#ifdef MATE_PROBE
  unsigned long long* probe = nullptr;
  if constexpr (kSplit) {
    const int64_t ws = kWorkspaceTicketBytes + (static_cast<int64_t>(streamk ? ctas : NT * S) * TM * TN * 4 + 255) / 256 * 256;
    probe = reinterpret_cast<unsigned long long*>(static_cast<char*>(p.workspace) + ws) + 16 * b;
    if (threadIdx.x == 0) {
      probe[0] = bwg::probe_gtime();
      probe[1] = bwg::probe_clock();
      unsigned smid;
      asm volatile("mov.u32 %0, %smid;" : "=r"(smid));
      probe[10] = smid;
    }
  }
#define MATE_PROBE_AT(i, cond) \
  if (probe != nullptr && (cond)) probe[i] = bwg::probe_clock();
#else
#define MATE_PROBE_AT(i, cond)
#endif
  // x0: the first token of the item's x boxes. The 128-256-token tiles' last m-tile of a
  // multi-tile plan starts its boxes at M - TM, so that every box row exists: a box reaching past
  // M is filled by the copy engine, which measured slow (the 256-token tile at M = 320 1.19x its
  // time at M = 384, bench/NOTES.md session 26); the epilogue then skips the rows below the
  // tile's own first token (the previous m-tile's, stored there).
  struct Item : KRange {  // kernels/split.cuh
    int tile, mt, out_tile, z, r, x0;
  };
  auto item_of = [&](int i) {
    Item t;
    if (i < n_whole) {  // persistent order (with the even split: parts z of tile r)
      const int idx = b + i * ctas;
      t.r = idx / S;
      t.z = idx - t.r * S;
      static_cast<KRange&>(t) = k_range(t.z, S, C, CH);
    } else {  // stream-K: from the range's last tile to its first
      const int rr = (u1 - 1) / SPT - (i - n_whole), base = rr * SPT;
      t.r = D + rr;
      t.z = 0;
      t.cb = max(u0 - base, 0) * CH;
      t.ce = min(min(u1 - base, SPT) * CH, C);
      t.nst = (t.ce - t.cb + CH - 1) / CH;
    }
    const int b0 = (t.r / (band * tiles)) * band, rows_b = min(band, mtiles - b0);
    const int in = t.r - b0 * tiles;
    t.tile = in / rows_b;
    t.mt = b0 + in % rows_b;
    t.out_tile = t.mt * tiles + t.tile;  // the split's partials and ticket
    t.x0 = TM >= 128 && M > TM ? min(t.mt * TM, M - TM) : t.mt * TM;
    return t;
  };

  if (threadIdx.x == 0) {
    for (int i = 0; i < P; ++i) {
      mbar_init(full0 + 8 * i, 1);
      mbar_init(fullx0 + 8 * i, 1);
      mbar_init(empty0 + 8 * i, WC * 32);  // every consumer lane arrives (release, below)
      if constexpr (kStoreWarps) {
        mbar_init(stored0 + 8 * i, kStoreThreads);
        mbar_init(staged0 + 8 * i, WC * 32);
      }
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  pdl_trigger();
  // setmaxnreg (12-warp CTAs): one CTA an SM at 128-256 tokens, two at 32/64; the 20-warp
  // 256-feature CTA alone on its SM (bwg namespace above)
  constexpr int kProdRegs = TM >= 128 ? bwg::kProducerRegs : TN == 256 ? bwg::kProducerRegsW : kSplit && !kRingFirst ? bwg::kProducerRegs2Split : bwg::kProducerRegs2;
  constexpr int kConsRegs = TM >= 128 ? bwg::kConsumerRegs : TN == 256 ? bwg::kConsumerRegsW : bwg::kConsumerRegs2;
  if (warp >= WC) {
    if constexpr (kRegs) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProdRegs));
    // (warp-uniform to ptxas through the shuffle: a branch on `warp` alone cost the producer
    // loop 28-216 bytes of spills once this path had code, bench/NOTES.md session 57)
    if (__shfl_sync(0xffffffffu, warp, 0) > WC) {
      if constexpr (kStoreWarps) {
        // Store warps: each item's staged tile (its last slot's x boxes) out in 16-byte pieces,
        // then the slot back to the producer. They wait on the slot's `staged` barrier, not its
        // empty one: an item of more than P stages reuses the slot while they copy the previous
        // item, so the empty barrier's parity could read a phase two uses old. `staged` advances
        // once an item that ends in the slot, and the slot's next fill waits for `stored`, so it
        // never runs two phases ahead of them.
        const int t = threadIdx.x - (WC + 1) * 32;
        int ring_s = 0;
        uint32_t staged_par = 0;
        for (int item = 0; item < n_items; ++item) {
          const Item wk = item_of(item);
          ring_s += wk.nst;
          const int slot = (ring_s - 1) % P;
          mbar_wait(staged0 + 8 * slot, (staged_par >> slot) & 1u);
          staged_par ^= 1u << slot;
          const uint32_t ep = sbase + slot * kStage + kX;
          T* const dst = static_cast<T*>(p.out) + static_cast<int64_t>(wk.x0) * N + wk.tile * TN;
          const int lo = max(0, wk.mt * TM - wk.x0), hi = min(TM, M - wk.x0);
#pragma unroll 4
          for (int c = lo * 16 + t; c < hi * 16; c += kStoreThreads) {
            const int row = c >> 4, piece = c & 15;
            *reinterpret_cast<uint4*>(dst + static_cast<int64_t>(row) * N + piece * 8) = bwg::lds128(ep + row * 256 + ((piece ^ (row & 7)) << 4));
          }
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the reads before the refill's copies
          mbar_arrive(stored0 + 8 * slot);
        }
      }
      return;
    }
    // Producer warp: lane 0 announces a stage's bytes, then the lanes issue its copies. The first
    // stage's x boxes go after pdl_wait (kernels/pdl.cuh), its weights before. kRingFirst: the
    // weights of the first item's first `pre` stages (the ring's first fill), then the wait, then
    // their x boxes: the planner picks it where a split part is that short (src/plan/bwg.rs
    // bwg_ring_first), so the part's weights stream during the previous kernel's tail.
    bool waited = false;
    const uint64_t stream = bulk::policy_evict_first(), keep = bulk::policy_evict_last();
    const char* qw = reinterpret_cast<const char*>(p.qweight);
    const T* sc = static_cast<const T*>(p.scales);
    // a chunk's x: XH boxes of TH rows (tokens x0, x0 + TH), one after the other in the stage
    auto x_boxes = [&](uint32_t dst, int k0, int x0, uint32_t bar) {
#pragma unroll
      for (int h = 0; h < XH; ++h) tma_x(dst + h * (TH * 128), xa, k0, x0 + h * TH, bar);
    };
    int ring = 0, pre = 1;
    uint32_t last_mask = 0, stored_par = 0;  // kStoreWarps: slots holding an item's last stage; their parities
    if constexpr (kRingFirst) pre = n_items > 0 ? min(item_of(0).nst, P) : 0;
    for (int item = 0; item < n_items; ++item) {
      const Item w = item_of(item);
      const int stripe0 = w.tile * NS;
      for (int it = 0; it < w.nst; ++it, ++ring) {
        const int slot = ring % P;
        if (ring >= P) {
          mbar_wait(empty0 + 8 * slot, ((ring / P) - 1) & 1);
          if constexpr (kStoreWarps) {
            if ((last_mask >> slot) & 1u) {  // the store warps are still reading its staged tile
              mbar_wait(stored0 + 8 * slot, (stored_par >> slot) & 1u);
              stored_par ^= 1u << slot;
            }
          }
        }
        if constexpr (kStoreWarps) last_mask = (last_mask & ~(1u << slot)) | (static_cast<uint32_t>(it == w.nst - 1) << slot);
        const int c0 = w.cb + it * CH, nch = min(CH, w.ce - c0);
        const int g0 = (c0 * 64) >> gs, g1 = ((c0 + nch) * 64 - 1) >> gs;
        const int srows = g1 - g0 + 1;
        const uint32_t full = full0 + 8 * slot, fullx = fullx0 + 8 * slot, st = sbase + slot * kStage;
        if (lane == 0) {
          mbar_expect_tx(full, NS * nch * 512 + srows * TN * 2 + (kZeros ? srows * (TN / 2) : 0));
          mbar_expect_tx(fullx, nch * XH * rows * 128);
        }
        __syncwarp();
        const int ncopy = NS + nch + srows * (kZeros ? 2 : 1);
        auto copy_x = [&](int c) { x_boxes(st + kX + c * (TM * 128), (c0 + c) * 64, w.x0, fullx); };
        for (int i = lane; i < ncopy; i += 32) {
          if (i < NS) {
            bulk_copy(st + kW + i * (CH * 512), qw + (static_cast<int64_t>(stripe0 + i) * C + c0) * 512, nch * 512, full, stream);
          } else if (i < NS + nch) {
            if (kRingFirst ? ring >= pre : waited) copy_x(i - NS);
          } else if (i < NS + nch + srows) {
            const int r = i - NS - nch;
            bulk_copy(st + kS + r * (TN * 2), sc + static_cast<int64_t>(g0 + r) * N + stripe0 * 16, TN * 2, full, keep);
          } else {
            const int r = i - NS - nch - srows;
            bulk_copy(st + kZ + r * (TN / 2), p.zeros + static_cast<int64_t>(g0 + r) * (N >> 3) + stripe0 * 2, TN / 2, full, keep);
          }
        }
        if constexpr (kRingFirst) {
          if (ring == pre - 1) {  // (item 0) the x boxes of stages [0, pre)
            pdl_wait();
            MATE_PROBE_AT(2, lane == 0)
            for (int s = 0; s < pre; ++s) {
              const int c0s = w.cb + s * CH, nchs = min(CH, w.ce - c0s);
              for (int c = lane; c < nchs; c += 32)
                x_boxes(sbase + s * kStage + kX + c * (TM * 128), (c0s + c) * 64, w.x0, fullx0 + 8 * s);
            }
          }
        } else if (!waited) {
          pdl_wait();
          MATE_PROBE_AT(2, lane == 0)
          waited = true;
          for (int c = lane; c < nch; c += 32) copy_x(c);
        }
      }
    }
    return;
  }

  // Consumer warps.
  if constexpr (kRegs) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsRegs));
  const int g = lane >> 2, ci = lane & 3;
  const bool hi = (ci >> 1) != 0;
  const uint32_t sel = (ci & 1) ? 0x7351u : 0x6240u;
  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  // Hands part of a stage back to the producer: this warp's shared-memory reads of it (generic
  // proxy) are ordered before the refill's copies (async proxy) by a proxy fence, then every lane
  // arrives (an arrive releases only the executing thread's own accesses: a lane-0 arrive after
  // __syncwarp left the other lanes' loads formally unordered; bench/NOTES.md, session 6).
  auto release = [&](uint32_t bar) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    mbar_arrive(bar);
  };
  int ring = 0;
  // The ping-pong order of the two consumer warpgroups' wgmma issue (named barriers 2 and 3; 1 is
  // the consumers' CTA-wide barrier), 256-token tiles: Llama shapes at M = 256 / 1024 / 4096
  // 0.981 / 0.979 / 0.976x; on the 128-token tile (M = 128) 1.009x, so not there
  // (bench/NOTES.md session 10). The 288 / 320-token tiles keep it (not measured without).
  constexpr bool kPingPong = kRegs && WC == 8 && TM >= 256;
  const int wgi = warp >> 2;
  int issued = 0;  // chunks this warpgroup has issued (warpgroup 0 waits from its second on)
  // One A register set: the register-operand rule of kernels/wg.cuh makes each chunk wait for the
  // previous chunk's wgmma before dequantizing (`wait_group 0`); the other warpgroup and CTA
  // overlap it. Two sets alternating by chunk (`wait_group 1`) measured 5-10 % slower, and ptxas
  // serializes the wgmma of the unrolled form (bench/NOTES.md, session 5). Session 30's lab
  // (bench/lab/s30_alt_a_sets.patch: chunk 1 of a 144-256-token stage in a second set, dequantized
  // under chunk 0's wgmma) needed the in-flight set pinned past `wait_group 1` (ptxas reuses its
  // registers there) and measured 1.03-1.09x slower on 28 prefill points.
  uint32_t cur[4][4];
  // The exact form's chunk pairs (below): a second A register set, both sets written after one
  // wait and read by one batch of eight wgmma (not alternating: nothing in flight reads either
  // set while it is written). 16-token tiles but zp split (it spills at the 96-register cap of a
  // 9-warp CTA with the second set), measured 0.95-0.97x on the routed M = 9-16 plans; 32-token
  // tiles built with 12 warps (setmaxnreg: 104 registers a consumer) (bench/NOTES.md, session 15).
  // The 40 / 48-token tiles pair in both forms (the exact form's 20 / 24 group sums fit beside two
  // A sets at 104 registers: 0.92-0.98x of the pre-scaled pairs, session 51); the 56 / 64-token
  // tiles pair pre-scaled only (the exact 56-token tile spilled 16-144 bytes of stack), but the
  // 256-feature ones (112 consumer registers) pair in both forms.
  constexpr bool kPairs = !kPre ? (TM == 16 && !(kZeros && kSplit)) || ((TM >= 24 && (TM <= 48 || TN == 256)) && kRegs) : TM > 32 && TM <= 64 && kRegs;
  uint32_t cur2[kPairs ? 4 : 1][4];
  // Constants of the dequantization: fp16 1024 + z (a nibble in bits 0..3) and -(64 + z) (bits
  // 4..7, value 1024 + 16q, scaled by 1/16); bf16 128 + z. Built with integer ops.
  auto zc = [](int z, bool high) -> uint32_t {
    if constexpr (std::is_same<T, __half>::value)
      return high ? 0xD400D400u + static_cast<uint32_t>(z) * 0x00100010u : 0x64006400u + static_cast<uint32_t>(z) * 0x00010001u;
    else
      return 0x43004300u + static_cast<uint32_t>(z) * 0x00010001u;
  };
  // The exact form (!kPre: groups of 64 or more, and per channel; 16-48-token tiles): wgmma sums a
  // group's (q - z) x into grp (scale-d = 0 at the group's first chunk); after its last chunk's
  // wgmma has retired the group's scales fold it into acc (one FFMA an accumulator a group,
  // against four HMUL2 a word pre-scaled). A group's zero points load at its first chunk; every
  // chunk loads its group's scales (no branch), and the group's last chunk's apply at the next
  // chunk's wait.
  uint32_t xzl = zc(8, false), xzh = zc(8, true);
  // Exact form: a chunk's group state from the stage (group row srow): the zero points at the
  // group's first chunk (fresh), and the group's scales for rows g / g + 8.
  auto group_scales = [&](uint32_t st, uint32_t sbase_w, int srow, bool fresh, float& ns0, float& ns1) {
    if constexpr (kZeros) {
      if (fresh) {
        const uint32_t za = st + kZ + srow * (TN / 2) + warp * 8;
        xzl = zc((lds32(za) >> (4 * g)) & 0xF, false);
        xzh = zc((lds32(za + 4) >> (4 * g)) & 0xF, true);
      }
    }
    unsigned short s0, s1;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(s0) : "r"(sbase_w + srow * (TN * 2)));
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(s1) : "r"(sbase_w + srow * (TN * 2) + 16));
    ns0 = Num<T>::to_f(*reinterpret_cast<const T*>(&s0));
    ns1 = Num<T>::to_f(*reinterpret_cast<const T*>(&s1));
  };
  // Pre-scale form: chunk c's scales (rows g, g + 8 in one word) and zero-point constants for its
  // two 32-k halves (one group from group 64 on; group 32: two). g0: the stage's first group.
  auto pre_scales = [&](uint32_t st, uint32_t sbase_w, int c, int g0, uint32_t (&sv)[2], uint32_t (&zl)[2], uint32_t (&zh)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (h == 1 && G >= 64) {
        sv[1] = sv[0];
        zl[1] = zl[0];
        zh[1] = zh[0];
        break;
      }
      const int srow = ((c * 64 + h * 32) >> gs) - g0;
      unsigned short s0, s1;
      asm volatile("ld.shared.u16 %0, [%1];" : "=h"(s0) : "r"(sbase_w + srow * (TN * 2)));
      asm volatile("ld.shared.u16 %0, [%1];" : "=h"(s1) : "r"(sbase_w + srow * (TN * 2) + 16));
      sv[h] = static_cast<uint32_t>(s0) | (static_cast<uint32_t>(s1) << 16);
      if constexpr (kZeros) {
        const uint32_t za = st + kZ + srow * (TN / 2) + warp * 8;
        const int z0 = (lds32(za) >> (4 * g)) & 0xF, z1 = (lds32(za + 4) >> (4 * g)) & 0xF;
        zl[h] = zc(z0, false);
        zh[h] = zc(z1, true);  // (bf16: the same constant for both rows)
      }
    }
  };
  // Pre-scale form: word w (wgmma step s) of a chunk -> A registers a, with the chunk's scales.
  auto deq_pre = [&](uint32_t w, uint32_t (&a)[4], int s, const uint32_t (&sv)[2], const uint32_t (&zl)[2], const uint32_t (&zh)[2]) {
    const int h = s >> 1;
    const uint32_t s0 = prmt(sv[h], 0, 0x1010), s1 = prmt(sv[h], 0, 0x3232);  // row g, row g + 8
    bwg::deq<T, true>(w, a, s0, s1, zl[h], zh[h]);
  };
  float grp[kPre ? 1 : NACC];
  // The 16-64-token tiles' epilogue: straight from the fragment, tokens < M only (acc[4i + r] is
  // feature row g (+8 for r >= 2) of this warp's stripe, token 8i + 2ci (+1 for odd r)).
  auto store_direct = [&](const Item& wk, const auto& acc) {
    const int n = wk.tile * TN + warp * 16 + g;
    float b0 = 0.f, b1 = 0.f;
    if (bias != nullptr) {
      b0 = Num<T>::to_f(bias[n]);
      b1 = Num<T>::to_f(bias[n + 8]);
    }
#pragma unroll
    for (int i = 0; i < TM / 8; ++i) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int tok = wk.mt * TM + 8 * i + 2 * ci + (r & 1);
        if (tok < M) out[static_cast<int64_t>(tok) * N + n + ((r >> 1) << 3)] = Num<T>::from_f(acc[4 * i + r] + ((r >> 1) ? b1 : b0));
      }
    }
  };
  // The even split's last arriver: the tile's S parts in split order (0 + part 0 + ... + part
  // S-1) into acc, the counter reset for the next call.
  auto sum_parts = [&](const float* part, int* counters, const Item& wk, auto& acc) {
    constexpr int kTile = TM * TN;
    const float* all = part + static_cast<int64_t>(wk.out_tile) * S * kTile;
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = 0.f;
#ifndef MATE_BWG_LAB_NOSUM  // lab switch (MATE_KERNEL_FLAGS, never shipped; wrong results): what the sum costs
    for (int zz = 0; zz < S; ++zz) bwg::add_part<NACC, WC * 32>(all + static_cast<int64_t>(zz) * kTile, acc);
#endif
    if (threadIdx.x == 0) counters[wk.out_tile] = 0;
  };
  // The descriptor of x at byte `off` of a stage. 16/32/64-token tiles: the stage's descriptor plus
  // off / 16 (the address field is bits 0..13 of addr / 16 and shared addresses stay below 256 KB,
  // so the add cannot carry out of it): one uniform add a wgmma instead of the mask / shift / or of
  // desc_sw128. The 128-256-token tiles keep desc_sw128 (the add measured 1-8 % slower there,
  // bench/NOTES.md session 10).
  auto xdesc = [&](uint32_t st, int off) -> uint64_t {
    if constexpr (TM <= 64)
      return desc_sw128(st + kX) + static_cast<uint64_t>(off >> 4);
    else
      return desc_sw128(st + kX + off);
  };
  // One wgmma step of a chunk (its 16 k at byte `off` of the stage's x) into d: one m64nTMk16, or
  // (XH = 2) one m64nTHk16 a half of the tile's tokens (d's second half: tokens TH ..).
  auto mma = [&](float* d, const uint32_t (&a)[4], uint32_t st, int off, int scale_d) {
#pragma unroll
    for (int h = 0; h < XH; ++h) Wgmma<T, TH>::run(d + h * (TH / 2), a, xdesc(st, off + h * (TH * 128)), scale_d);
  };
  for (int item = 0; item < n_items; ++item) {
    const Item wk = item_of(item);
    float acc[NACC];  // pre-scale: no zero fill, the item's first wgmma ignores it (scale-d = 0)
    float ps0 = 0.f, ps1 = 0.f;  // exact: the scales (rows g, g + 8) of the group in grp
    if constexpr (!kPre) {
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[i] = 0.f;
    }
    // exact: grp (complete once the wgmma waited for has retired) into acc
    auto fold = [&]() {
      if constexpr (!kPre) {
        bwg::fence_regs(grp);
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[i] = fmaf(i & 2 ? ps1 : ps0, grp[i], acc[i]);
      }
    };
    for (int it = 0; it < wk.nst; ++it, ++ring) {
      const int slot = ring % P;
      mbar_wait(full0 + 8 * slot, (ring / P) & 1);
      MATE_PROBE_AT(3, threadIdx.x == 0 && ring == 0)
      const int c0 = wk.cb + it * CH, nch = min(CH, wk.ce - c0);
      const int g0 = (c0 * 64) >> gs;
      const uint32_t st = sbase + slot * kStage;
      const uint32_t wbase = st + kW + warp * (CH * 512) + g * 64;
      const uint32_t sbase_w = st + kS + (warp * 16 + g) * 2;
      // kPairs tiles, a stage of whole pairs starting on an even chunk (exact form: groups of 128 or
      // more, so a pair never straddles a group): chunks go in pairs, both dequantized after one
      // wait (two A register sets, two independent dequantization chains) and their eight wgmma in
      // one batch, so the wait, the fence and the first wgmma's stall come once a pair.
      if (kPairs && (kPre || gs >= 7) && ((c0 | nch) & 1) == 0) {
#pragma unroll
        for (int j = 0; j < CH; j += 2) {
          if (j >= nch) break;
          uint32_t w0[4], w1[4];  // the two chunks' loads interleaved (as measured)
#pragma unroll
          for (int s = 0; s < 4; ++s) {
            const uint4 v = bwg::lds128(wbase + j * 512 + s * 16);
            w0[s] = prmt(hi ? v.y : v.x, hi ? v.w : v.z, sel);
            const uint4 u = bwg::lds128(wbase + (j + 1) * 512 + s * 16);
            w1[s] = prmt(hi ? u.y : u.x, hi ? u.w : u.z, sel);
          }
          const int c = c0 + j;  // even: a group's first or second pair, never straddling one
          const bool fresh = c == wk.cb || ((c * 64) >> gs) != (((c - 1) * 64) >> gs);
          const bool pending = fresh && c != wk.cb;
          float ns0, ns1;
          uint32_t sv[2][2], zl[2][2] = {{zc(8, false), zc(8, false)}, {zc(8, false), zc(8, false)}},
                             zh[2][2] = {{zc(8, true), zc(8, true)}, {zc(8, true), zc(8, true)}};  // pre-scale: chunks c, c + 1
          if constexpr (kPre) {
            pre_scales(st, sbase_w, c, g0, sv[0], zl[0], zh[0]);
            pre_scales(st, sbase_w, c + 1, g0, sv[1], zl[1], zh[1]);
          } else {
            group_scales(st, sbase_w, ((c * 64) >> gs) - g0, fresh, ns0, ns1);
          }
          wait0();
          if (j == 0 && it > 0) release(empty0 + 8 * ((ring - 1) % P));
          if constexpr (kPre) {
#pragma unroll
            for (int s = 0; s < 4; ++s) {
              deq_pre(w0[s], cur[s], s, sv[0], zl[0], zh[0]);
              deq_pre(w1[s], cur2[s], s, sv[1], zl[1], zh[1]);
            }
          } else {
            if (pending) fold();
#pragma unroll
            for (int s = 0; s < 4; ++s) {
              bwg::deq<T, false>(w0[s], cur[s], 0u, 0u, xzl, xzh);
              bwg::deq<T, false>(w1[s], cur2[s], 0u, 0u, xzl, xzh);
            }
          }
          if (j == 0) mbar_wait(fullx0 + 8 * slot, (ring / P) & 1);
          fence();
          if constexpr (kPre) {  // the item's first wgmma ignores acc (scale-d = 0)
#pragma unroll
            for (int s = 0; s < 4; ++s) mma(acc, cur[s], st, j * (TM * 128) + s * 32, (it == 0 && j == 0 && s == 0) ? 0 : 1);
#pragma unroll
            for (int s = 0; s < 4; ++s) mma(acc, cur2[s], st, (j + 1) * (TM * 128) + s * 32, 1);
          } else {
#pragma unroll
            for (int s = 0; s < 4; ++s) mma(grp, cur[s], st, j * (TM * 128) + s * 32, (fresh && s == 0) ? 0 : 1);
#pragma unroll
            for (int s = 0; s < 4; ++s) mma(grp, cur2[s], st, (j + 1) * (TM * 128) + s * 32, 1);
            ps0 = ns0;
            ps1 = ns1;
          }
          commit();
        }
        continue;
      }
#pragma unroll
      for (int j = 0; j < CH; ++j) {
        if (j >= nch) break;
        // Shared-memory reads first: they overlap the previous chunk's wgmma.
        uint32_t w[4];
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          const uint4 v = bwg::lds128(wbase + j * 512 + s * 16);  // lane (g, s)'s 16 bytes
          w[s] = prmt(hi ? v.y : v.x, hi ? v.w : v.z, sel);
        }
        uint32_t sv[2], zl[2] = {zc(8, false), zc(8, false)}, zh[2] = {zc(8, true), zc(8, true)};  // (pre-scale)
        // exact: this chunk starts a group (fresh), the previous chunk ended one (its sums await
        // their scales); functions of the chunk index alone, so ptxas keeps them (and the
        // wgmma descriptors) warp-uniform: carried as loop state they measured 5-10 % slower
        const int c = c0 + j;
        const bool fresh = c == wk.cb || ((c * 64) >> gs) != (((c - 1) * 64) >> gs);
        const bool pending = fresh && c != wk.cb;
        float ns0 = 0.f, ns1 = 0.f;
        if constexpr (!kPre) group_scales(st, sbase_w, ((c * 64) >> gs) - g0, fresh, ns0, ns1);
        if constexpr (kPre) pre_scales(st, sbase_w, c, g0, sv, zl, zh);
        wait0();
        if (j == 0 && it > 0) {  // the previous stage's last wgmma (and load) has retired
          release(empty0 + 8 * ((ring - 1) % P));
        }
        uint32_t(&a)[4][4] = cur;
        if constexpr (kPre) {
#pragma unroll
          for (int s = 0; s < 4; ++s) deq_pre(w[s], a[s], s, sv, zl, zh);
        } else {
          if (pending) fold();
#pragma unroll
          for (int s = 0; s < 4; ++s) bwg::deq<T, false>(w[s], a[s], 0u, 0u, xzl, xzh);
        }
        if (j == 0) mbar_wait(fullx0 + 8 * slot, (ring / P) & 1);  // only the wgmma reads x
        MATE_PROBE_AT(4, threadIdx.x == 0 && ring == 0 && j == 0)
        // Ping-pong: warpgroup 1 issues chunk c after warpgroup 0 has issued it, warpgroup 0 issues
        // chunk c + 1 after warpgroup 1 has issued c, so one warpgroup dequantizes while the other's
        // wgmma runs instead of both waiting for the same stage and dequantizing at once.
        if constexpr (kPingPong) {
          if (wgi == 1) {
            asm volatile("bar.sync 3, 256;" ::: "memory");
          } else if (issued > 0) {
            asm volatile("bar.sync 2, 256;" ::: "memory");
          }
        }
        fence();
        if constexpr (kPre) {
#pragma unroll
          for (int s = 0; s < 4; ++s)
            mma(acc, a[s], st, j * (TM * 128) + s * 32, (it == 0 && j == 0 && s == 0) ? 0 : 1);
        } else {
#pragma unroll
          for (int s = 0; s < 4; ++s) mma(grp, a[s], st, j * (TM * 128) + s * 32, (fresh && s == 0) ? 0 : 1);
          ps0 = ns0;
          ps1 = ns1;
        }
        commit();
        if constexpr (kPingPong) {
          if (wgi == 0) {
            asm volatile("bar.arrive 3, 256;" ::: "memory");
          } else {
            asm volatile("bar.arrive 2, 256;" ::: "memory");
          }
          ++issued;
        }
      }
    }
    wait0();
    fold();  // the item's last group
    MATE_PROBE_AT(5, threadIdx.x == 0 && item == 0)
    // The item's last stage. Every item has one (the planner splits K into at most K / 64 / CH
    // parts, tests/plan.rs), so its first wgmma wrote every accumulator. Its slot stays
    // unreleased until the epilogue has staged the output tile in its x boxes (below); a part
    // that ends without an epilogue releases it first.
    const uint32_t last_slot = (ring - 1) % P;
    if constexpr (!kStagedOut) release(empty0 + 8 * last_slot);
    auto release_last = [&]() {
      if constexpr (kStagedOut) release(empty0 + 8 * last_slot);
    };

    // Accumulator fragment (kernels/wg.cuh): acc[4i + r] is feature row g (+8 for r >= 2) of this
    // warp's stripe, token 8i + 2ci (+1 for odd r).
    // The token rows of the tile this CTA stores, in pieces of 8 (all but the sliced even split).
    int q0 = 0, q1 = TM / 8;
    if constexpr (kSplit) {
      // Workspace (src/plan/mod.rs split_workspace): one counter per output tile, then fp32
      // partial tiles (even split: [tile][S]; stream-K: one slot per CTA).
      constexpr int kTile = TM * TN;
      float* const part = ws_partials(p.workspace);
      int* const counters = ws_tickets(p.workspace);
      if (P >= 3 && !streamk && kStagedOut && ctas == NT * S && S == 2 && cluster::size() == 2) {
        // Paired (src/plan/bwg.rs bwg_paired: the launch's 2-CTA clusters are a tile's two parts,
        // CTAs b and b ^ 1): part z sums half z of the tile's token rows (part 0 pieces [0, kH0),
        // part 1 the rest: kH0 even, the epilogue's stmatrix takes pieces in pairs) and stores
        // it. It pushes its partial's other half into the partner's shared memory (a
        // ring slot neither CTA stages its epilogue in: three slots needed) and adds the partner's
        // half of its own, in part order, (0 + part 0) + part 1: the ticket's sums, bit for bit,
        // without one SM reading both 64-128 KB partials through L2 (the plan has no workspace:
        // nothing leaves the pair). Llama-70B o / down at M = 128-256 0.94-0.975x of the ticket.
        // Four parts measured slower paired, both as a pair step before the sliced exchange and
        // with the partner's slice through shared memory beside the L2 stores (bench/NOTES.md
        // session 24).
        if constexpr (P >= 3) {
          constexpr int kH0 = 2 * ((TM / 16 + 1) / 2), kT = WC * 32;  // TM = 144: pieces 0-9 and 10-17
          static_assert(kH0 * kT * 16 <= kStage, "half a tile's partial must fit a ring slot");
          const int z = wk.z, h0 = z * kH0, o0 = (z ^ 1) * kH0;  // this part's half, the partner's
          const int nh = z == 0 ? kH0 : TM / 8 - kH0, no = TM / 8 - nh;
          q0 = h0;
          q1 = h0 + nh;
          // This CTA's only item ends on last_slot, the partner's on lp (its K range's stages).
          const int lp = (k_range(z ^ 1, S, C, CH).nst - 1) % P;
          int xs = 0;
          while (xs == static_cast<int>(last_slot) || xs == lp) ++xs;
          const uint32_t recv = sbase + xs * kStage;
          cluster::sync();  // both mainloops done (wgmma retired, no copy in flight): slot xs is free in both
          const uint32_t remote = cluster::peer(recv, z ^ 1);
#pragma unroll
          for (int q = 0; q < NACC / 4; ++q) {
            if (q >= o0 && q < o0 + no)
              cluster::st128(remote + ((q - o0) * kT + threadIdx.x) * 16, acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
          }
          cluster::sync();  // the partner's half of this part's rows has landed in slot xs
#pragma unroll
          for (int q = 0; q < NACC / 4; ++q) {
            if (q >= h0 && q < h0 + nh) {
              const uint4 v = bwg::lds128(recv + ((q - h0) * kT + threadIdx.x) * 16);
              const float o[4] = {__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z), __uint_as_float(v.w)};
#pragma unroll
              for (int e = 0; e < 4; ++e) acc[4 * q + e] = z == 0 ? (0.f + acc[4 * q + e]) + o[e] : (0.f + o[e]) + acc[4 * q + e];
            }
          }
#ifdef MATE_PROBE
          if (threadIdx.x == 0 && item == 0) probe[9] = 4;
#endif
        }
      } else if (!streamk && kStagedOut && ctas == NT * S && S >= 3) {
        // Sliced (kernels/split.cuh split_wait_all): the S parts of a tile end their mainloops
        // within ~0.5 us of each other (bench/lab/probe_bwg.py), so rather than one last arriver
        // reading all S partials through its SM (4-10 us at 128-256 tokens) and storing the whole
        // tile, every part sums and stores token rows [8 q0, 8 q1) of it. Same sums, same order
        // (0 + part 0 + ... + part S-1) as the ticket below. Every part is its own CTA here.
        // From 3 parts: Llama-8B o / down at M = 128-256 (4 parts) 0.89-0.96x; in 2 parts over a
        // long K (Llama-70B down, 112 stages a part) the parts' skew ate the saving (bench/NOTES.md
        // session 9).
        // A part's own slice never goes through L2: it waits in a free ring slot (the epilogue
        // stages in last_slot's; this CTA's only item is done, so the producer loads no more),
        // and only the other parts' slices are stored and read back (S = 4: a quarter less L2
        // traffic; the exchange was 7.5 of Llama-8B o's 21 us at M = 256, bench/lab/probe_bwg.py:
        // 6.85 after, the call 0.98-0.99x; bench/NOTES.md session 22).
        float* const all = part + static_cast<int64_t>(wk.out_tile) * S * kTile;
        q0 = 2 * ((wk.z * (TM / 16)) / S);  // in pairs of pieces: the epilogue's stmatrix takes two
        q1 = 2 * (((wk.z + 1) * (TM / 16)) / S);
        const uint32_t own = sbase + ((last_slot + 1) % P) * kStage;
        static_assert(P >= 2 && (TM / 8 / 3 + 2) * WC * 32 * 16 <= kStage, "a slice of three or more parts must fit a ring slot");
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");  // both warpgroups' wgmma reads of the ring retired
        bwg::store_part_apart<NACC, WC * 32>(all + static_cast<int64_t>(wk.z) * kTile, own, acc, q0, q1);
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        MATE_PROBE_AT(11, threadIdx.x == 0 && item == 0)
        if (threadIdx.x == 0) {
          split_arrive(counters + wk.out_tile);
          MATE_PROBE_AT(12, item == 0)
          split_wait_all(counters + wk.out_tile, S);
        }
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        MATE_PROBE_AT(13, threadIdx.x == 0 && item == 0)
#pragma unroll
        for (int q = 0; q < NACC / 4; ++q) {
          if (q >= q0 && q < q1) acc[4 * q] = acc[4 * q + 1] = acc[4 * q + 2] = acc[4 * q + 3] = 0.f;
        }
        for (int zz = 0; zz < S; ++zz) {
          if (zz == wk.z)
            bwg::add_own_rows<NACC, WC * 32>(own, acc, q0, q1);
          else
            bwg::add_part_rows<NACC, WC * 32>(all + static_cast<int64_t>(zz) * kTile, acc, q0, q1);
        }
        if (threadIdx.x == 0) split_leave(counters + wk.out_tile, S);
#ifdef MATE_PROBE
        if (threadIdx.x == 0 && item == 0) probe[9] = 3;
#endif
      } else if (!streamk) {
        float* mine = part + (static_cast<int64_t>(wk.out_tile) * S + wk.z) * kTile;
        bwg::store_part<NACC, WC * 32>(mine, acc);
        if constexpr (kDeferred) continue;
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        __shared__ int last;
        if (threadIdx.x == 0) last = (split_ticket(counters + wk.out_tile) == S - 1);  // kernels/split.cuh
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        // uniform over the consumers; thread 0 writes `last` again only after the next item's first
        // barrier, which every consumer reaches after reading it here
        if (!last) release_last();
#ifdef MATE_PROBE
        if (probe != nullptr && threadIdx.x == 0 && item == 0 && !last) {
          probe[6] = probe[7] = bwg::probe_clock();
          probe[8] = bwg::probe_gtime();
          probe[9] = 0;
        }
#endif
        if (!last) continue;
        sum_parts(part, counters, wk, acc);
#ifdef MATE_PROBE
        if (threadIdx.x == 0 && item == 0) probe[9] = 1;
#endif
      } else if (wk.ce < C) {
        // A contributor (the head of this CTA's last tile, or a middle range): its slot, then the
        // signal; the tile's owner finishes it.
        float* mine = part + static_cast<int64_t>(b) * kTile;
        bwg::store_part<NACC, WC * 32>(mine, acc);
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        if (threadIdx.x == 0) split_arrive(counters + wk.out_tile);
        release_last();
#ifdef MATE_PROBE
        if (probe != nullptr && threadIdx.x == 0 && item == 0) {
          probe[6] = probe[7] = bwg::probe_clock();
          probe[8] = bwg::probe_gtime();
          probe[9] = 0;
        }
#endif
        continue;
      } else if (wk.cb > 0) {
        // The owner of a tile that earlier CTAs share: its own part plus their slots in CTA order
        // (a slot's loads all in flight at once: per-element loops over the slots serialize the
        // L2 round trips, 2x slower end to end).
        const int first = sk.cta_of(static_cast<int64_t>(wk.r - D) * SPT);
        if (threadIdx.x == 0) split_wait(counters + wk.out_tile, b - first);
        MATE_PROBE_AT(15, threadIdx.x == 0)  // a stream-K owner's wait done (its last such item)
#ifdef MATE_PROBE
        if (threadIdx.x == 0 && item == n_items - 1 && item == 0) probe[9] = 2;
#endif
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        for (int c = first; c < b; ++c) bwg::add_part<NACC, WC * 32>(part + static_cast<int64_t>(c) * kTile, acc);
      }
    }
    MATE_PROBE_AT(6, threadIdx.x == 0 && item == 0)
    // Epilogue: the tile goes through the last stage's x boxes (TM rows of 256 bytes: 16-byte
    // pieces swizzled by row so both the stmatrix rows and the row reads are conflict-free), then
    // out in whole 16-byte pieces. Stored straight from the fragment, every 2-byte store wrote
    // half a sector (features g and g + 8 of one token are in one lane): 1.7 / 4 us of a 128 /
    // 256-token tile's ~16 / 25 us (bench/lab/probe_bwg.py, bench/NOTES.md session 9). The
    // 16-64-token tiles (4-16 KB) keep the direct stores: staged, Llama-8B gate_up at M = 32 ran
    // 8 % slower.
    static_assert(TN * 2 <= CH * 128, "the output tile must fit the stage's x boxes");
    if constexpr (kStagedOut) {
      const int n = warp * 16 + g;  // this lane's features in the tile: n, n + 8
      float b0 = 0.f, b1 = 0.f;
      if (bias != nullptr) {
        b0 = Num<T>::to_f(bias[wk.tile * TN + n]);
        b1 = Num<T>::to_f(bias[wk.tile * TN + n + 8]);
      }
      const uint32_t ep = sbase + last_slot * kStage + kX;
      // both warpgroups' wgmma reads of these boxes have retired (each waited for its own)
      asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
      const int k = lane >> 3, j = lane & 7;  // this lane addresses row j of matrix k
#pragma unroll
      for (int i = 0; i < TM / 8; i += 2) {
        if (i < q0 || i >= q1) continue;  // (q0, q1 even)
        // matrices (i, features g), (i, g + 8), (i + 1, g), (i + 1, g + 8); tokens 8i + 2ci, +1
        const uint32_t r[4] = {bwg::pack2<T>(acc[4 * i] + b0, acc[4 * i + 1] + b0), bwg::pack2<T>(acc[4 * i + 2] + b1, acc[4 * i + 3] + b1),
                               bwg::pack2<T>(acc[4 * i + 4] + b0, acc[4 * i + 5] + b0), bwg::pack2<T>(acc[4 * i + 6] + b1, acc[4 * i + 7] + b1)};
        const int row = 8 * (i + (k >> 1)) + j, piece = warp * 2 + (k & 1);
        bwg::stmatrix_x4_trans(ep + row * 256 + ((piece ^ (row & 7)) << 4), r);
      }
      if constexpr (kStoreWarps) {
        release_last();  // its empty phase for the producer's count; the tile stays until `stored`
        mbar_arrive(staged0 + 8 * last_slot);  // the store warps take it from here (each lane's stmatrix, then its arrive)
      } else {
        asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
        // box rows [lo, hi): this tile's tokens (from x0; the rows below mt * TM are the previous
        // m-tile's) of this CTA's pieces
        T* const dst = out + static_cast<int64_t>(wk.x0) * N + wk.tile * TN;
        const int lo = max(8 * q0, wk.mt * TM - wk.x0), hi = min(8 * q1, M - wk.x0);
#pragma unroll 4
        for (int c = lo * 16 + threadIdx.x; c < hi * 16; c += WC * 32) {
          const int row = c >> 4, piece = c & 15;
          *reinterpret_cast<uint4*>(dst + static_cast<int64_t>(row) * N + piece * 8) = bwg::lds128(ep + row * 256 + ((piece ^ (row & 7)) << 4));
        }
        release_last();
      }
    } else {
      store_direct(wk, acc);
    }
#ifdef MATE_PROBE
    if (probe != nullptr && threadIdx.x == 0 && item == 0) {
      probe[7] = bwg::probe_clock();
      probe[8] = bwg::probe_gtime();
    }
#endif
  }  // items
  MATE_PROBE_AT(14, threadIdx.x == 0)  // every item done (the consumers' side)
  if constexpr (kDeferred) {
    // Every part of this CTA's items is stored: now each item's ticket; the last arriver of a
    // tile sums its S parts in split order and stores it (the same sums and order as taking the
    // ticket right after the part).
    const float* const part = ws_partials(p.workspace);
    int* const counters = ws_tickets(p.workspace);
    // kSliced (split = 4 / 5 in kernels/variants.def, planned where the tile's partials pass
    // 128 KB: src/plan/bwg.rs bwg_sliced): every part sums a slice of the tile instead
    // (bwg::sliced_sum), where every part is its own CTA (so all are resident) and a part's rows
    // fit the ring; else (a forced variant on other plans) the ticket below. Its own variants:
    // compiled into every split tile, the plans that keep the ticket ran 2-5 % slower (Llama-8B
    // o, Llama-70B o / down at M = 16-64; bench/NOTES.md session 21).
    if constexpr (kSliced) {
      constexpr int kPieces = WC * (NACC / 4), kRows = P * kStage / 512;
      if (ctas == NT * S && (kPieces / S + 1) * S <= kRows) {
        const Item wk = item_of(0);
        bwg::sliced_sum<T, TM, TN, WC>(part + static_cast<int64_t>(wk.out_tile) * S * (TM * TN), counters + wk.out_tile, wk.z, S,
                                              wk.tile * TN, wk.mt * TM, M, N, out, bias, sbase);
        return;
      }
    }
    for (int item = 0; item < n_items; ++item) {
      const Item wk = item_of(item);
      asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");  // the parts stored, `last` read
      __shared__ int last;
      if (threadIdx.x == 0) last = (split_ticket(counters + wk.out_tile) == S - 1);  // kernels/split.cuh
      asm volatile("bar.sync 1, %0;" ::"n"(WC * 32) : "memory");
#ifdef MATE_PROBE
      if (probe != nullptr && threadIdx.x == 0 && item == 0) {
        probe[6] = bwg::probe_clock();
        probe[9] = last ? 1 : 0;
      }
#endif
      if (!last) continue;
      float acc[NACC];
      sum_parts(part, counters, wk, acc);
      store_direct(wk, acc);
    }
#ifdef MATE_PROBE
    if (probe != nullptr && threadIdx.x == 0) {
      probe[7] = bwg::probe_clock();
      probe[8] = bwg::probe_gtime();
    }
#endif
  }
  // Warpgroup 1's last arrival on barrier 2 has no wait of warpgroup 0's behind it: take it.
  if constexpr (kPingPong) {
    if (wgi == 0 && issued > 0) asm volatile("bar.sync 2, 256;" ::: "memory");
  }
#else
  __trap();  // the planner never selects this family below sm_90a
#endif
}

}  // namespace mate
