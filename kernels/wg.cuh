// Family "wg": Hopper warpgroup MMA (wgmma, sm_90a) for M above the decode tiles. Computes the
// transposed product out^T = W^T x^T so the int4 weights are the register operand A: each warp of
// a warpgroup owns one 16-feature stripe, exactly the rows of one frame-v2 block, and dequantizes
// them in registers; the activation tile is operand B, read by the tensor cores from shared
// memory (128-byte swizzle, K-major: x's natural row-major layout). One wgmma m64nTMk16 per 16 k.
//
// CTA: WK = 8 warps = 2 warpgroups, TN = 128 features (2 x 64; when N % 128 == 64 the last tile's
// second warpgroup computes on zero-filled weights and stores nothing), TM tokens (wgmma n). A ring of P
// shared-memory stages, each one 64-deep K chunk: the x tile, the 8 weight blocks, the scales and
// zero points of the chunk's groups, all filled with cp.async by every thread. P - 2 stages are in
// flight while one is consumed and one may still be read by the previous chunk's wgmma.
//
// Frame v2 pairs a lane's activation k range [16ci, 16ci+16) with its weights (the decode layout);
// wgmma step j needs the k range [16j, 16j+16) from every lane instead. Each lane assembles its
// step-j word from two 32-bit words of lane (gi, j) with one byte permute (PRMT), reading the block
// from shared memory where lane (gi, ci)'s 16 bytes sit at slot 8ci + gi (conflict-free reads).
//
// kSplit == false: whole K per CTA, the output is written from the accumulators. kSplit == true:
// grid.z CTAs split the K chunks of one output tile; each stores its fp32 partial tile in the
// workspace and takes a ticket; the last arriver sums the partials in split order (deterministic,
// no atomic adds), writes the output and resets the ticket.
#pragma once
#include "dec.cuh"
#include "wgmma_ops.cuh"

namespace mate {

template <int TM>
constexpr int wg_min_blocks = 1;

// Bytes of one ring stage (x tile, 8 weight blocks, 2 groups of scales and zero points), a multiple
// of 1024 so every x tile stays aligned for the 128-byte swizzle. Mirrored by
// Variant::dynamic_smem in src/plan/variants.rs (plus 1024 bytes of alignment slack).
template <int TM>
__host__ __device__ constexpr int wg_stage_bytes() {
  return TM * 128 + 5 * 1024;
}

namespace wg {

// Shared-memory matrix descriptor of a K-major tile with 128-byte swizzle: 8-row atoms of
// 128-byte rows, atoms 1024 bytes apart (stride byte offset); the leading offset is unused.
__device__ __forceinline__ uint64_t desc_sw128(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
__device__ __forceinline__ void wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

// 16-byte async copy; src_bytes = 0 zero-fills the destination (tokens past M).
__device__ __forceinline__ void cp16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes));
}

}  // namespace wg

template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void wg_body(const GemmParams& p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace wg;
  using dec::Deq;
  using dec::cp_async_commit;
  static_assert(TN == 128 && WK == 8 && P >= 3 && kPre, "wg: 2 warpgroups x 64 features, pre-scale");
  constexpr int kStage = wg_stage_bytes<TM>();
  constexpr int kW = TM * 128;          // weight blocks: 8 x 512 bytes
  constexpr int kS = kW + 4096;         // scales: 2 groups x TN halves
  constexpr int kZ = kS + 2 * TN * 2;   // zero points: 2 groups x TN/8 words
  constexpr int NACC = TM / 2;

  extern __shared__ unsigned char smem_raw[];
  const uint32_t smem0 = (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, ci = lane & 3;
  const int m0 = blockIdx.x * TM;
  const int n0 = blockIdx.y * TN;
  const int C = p.K >> 6;
  int c_begin = 0, c_end = C;
  if constexpr (kSplit) {
    c_begin = static_cast<int>((static_cast<int64_t>(blockIdx.z) * C) / gridDim.z);
    c_end = static_cast<int>((static_cast<int64_t>(blockIdx.z + 1) * C) / gridDim.z);
  }
  const int G = p.group_size;
  const T* __restrict__ x = static_cast<const T*>(p.x);
  const uint4* __restrict__ wq = reinterpret_cast<const uint4*>(p.qweight);
  const T* __restrict__ sc = static_cast<const T*>(p.scales);

  // One stage's copies. x: TM rows x 8 pieces of 16 bytes; weights: one piece per thread.
  auto load = [&](int slot, int ch) {
    const uint32_t st = smem0 + slot * kStage;
    const int k0 = ch << 6;
#pragma unroll
    for (int piece = tid; piece < TM * 8; piece += WK * 32) {
      const int r = piece >> 3, q = piece & 7;
      const int tok = m0 + r;
      const uint32_t dst = st + r * 128 + ((q ^ (r & 7)) << 4);
      if (p.perm == nullptr) {
        const T* src = x + static_cast<int64_t>(tok < p.M ? tok : 0) * p.x_row_stride + k0 + q * 8;
        cp16(dst, src, tok < p.M ? 16 : 0);
      } else {  // act order: gather the chunk's columns through perm (synchronous)
        uint4 v = make_uint4(0, 0, 0, 0);
        if (tok < p.M) {
          T e[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) e[j] = x[static_cast<int64_t>(tok) * p.x_row_stride + __ldg(p.perm + k0 + q * 8 + j)];
          v = *reinterpret_cast<uint4*>(e);
        }
        asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
      }
    }
    {
      const int b = tid >> 5, L = tid & 31;  // block b (stripe n0/16 + b), lane piece L = 4gi + ci
      const int stripe = (n0 >> 4) + b;  // past N (N % 128 == 64): zero-filled, never stored
      const uint4* src = wq + (static_cast<int64_t>(stripe < (p.N >> 4) ? stripe : 0) * C + ch) * 32 + L;
      cp16(st + kW + b * 512 + ((L & 3) * 8 + (L >> 2)) * 16, src, stripe < (p.N >> 4) ? 16 : 0);
    }
    if (tid < 32) {  // scales of the chunk's first group (tid < 16) and its second (G = 32)
      const int half = tid >> 4;
      if (half == 0 || G < 64) {
        const int grp = (k0 + half * 32) / G;
        const int n = n0 + (tid & 15) * 8;
        cp16(st + kS + half * TN * 2 + (tid & 15) * 16, sc + static_cast<int64_t>(grp) * p.N + (n < p.N ? n : 0), n < p.N ? 16 : 0);
      }
    } else if (kZeros && tid < 40) {
      const int half = (tid - 32) >> 2;
      if (half == 0 || G < 64) {
        const int grp = (k0 + half * 32) / G;
        const int w = (n0 >> 3) + (tid & 3) * 4;
        cp16(st + kZ + half * 64 + (tid & 3) * 16, p.zeros + static_cast<int64_t>(grp) * (p.N >> 3) + (w < (p.N >> 3) ? w : 0),
             w < (p.N >> 3) ? 16 : 0);
      }
    }
  };

  // No zero fill: the first chunk's first wgmma ignores the accumulator (scale-d = 0); writing
  // the registers outside wgmma would make ptxas serialize the wgmma pipeline.
  float acc[NACC];

  const int wi = warp & 3;                 // warp within its warpgroup: rows 16 wi .. 16 wi + 15
  const int b = warp;                      // this warp's weight block (stripe) in the tile
  const uint32_t sel = (ci & 1) ? 0x7351u : 0x6240u;

  const int nch = c_end - c_begin;
#pragma unroll
  for (int i = 0; i < P - 2; ++i) {
    if (i < nch) load(i, c_begin + i);
    cp_async_commit();
  }
  // One chunk: copies for chunk it + P - 2, dequantize chunk it into `cur`, issue its wgmma, then
  // wait until at most this chunk's group is in flight. wgmma reads its register operand
  // asynchronously: the next chunk dequantizes into the other register set (loop unrolled by 2).
  auto chunk = [&](int it, uint32_t (&cur)[4][4]) {
    const int slot = it % P;
    asm volatile("cp.async.wait_group %0;" ::"n"(P - 3));
    // cp.async writes through the generic proxy; wgmma reads through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();  // stage it landed; every warp is past chunk it-2's wgmma
    if (it + P - 2 < nch) load((it + P - 2) % P, c_begin + it + P - 2);
    cp_async_commit();

    const uint32_t st = smem0 + slot * kStage;
    // Shared-memory reads first: they overlap the previous chunk's wgmma.
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t wrow = st + kW + b * 512 + (8 * j + g) * 16;
      w[j] = prmt(lds32(wrow + (ci >> 1) * 4), lds32(wrow + (2 + (ci >> 1)) * 4), sel);
    }
    unsigned short sv[2][2];
    int zv[2][2] = {{8, 8}, {8, 8}};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (h == 1 && G >= 64) break;
      const uint32_t s_addr = st + kS + h * TN * 2 + (b * 16 + g) * 2;
      asm volatile("ld.shared.u16 %0, [%1];" : "=h"(sv[h][0]) : "r"(s_addr));
      asm volatile("ld.shared.u16 %0, [%1];" : "=h"(sv[h][1]) : "r"(s_addr + 16));
      if constexpr (kZeros) {
        const uint32_t z_addr = st + kZ + h * 64 + (b * 2) * 4;
        zv[h][0] = (lds32(z_addr) >> (4 * g)) & 0xF;
        zv[h][1] = (lds32(z_addr + 4) >> (4 * g)) & 0xF;
      }
    }
    // ptxas serializes wgmma whose register operand is written while any wgmma is in flight, so
    // the dequantization into `cur` waits for the previous chunk (the other warpgroup overlaps).
    wait0();
    Deq<T> dq;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int h = (G < 64 && j >= 2) ? 1 : 0;
      if (j == 0 || (G < 64 && j == 2))
        dq.set(*reinterpret_cast<const T*>(&sv[h][0]), *reinterpret_cast<const T*>(&sv[h][1]), zv[h][0], zv[h][1]);
      dq(w[j], cur[j]);
    }
    fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) Wgmma<T, TM>::run(acc, cur[j], desc_sw128(st + j * 32), (it > 0 || j > 0) ? 1 : 0);
    commit();
  };
  uint32_t a0[4][4];
  for (int it = 0; it < nch; ++it) chunk(it, a0);
  wait0();
  asm volatile("cp.async.wait_all;" ::: "memory");

  // Accumulator fragment: acc[4i + r] is feature row 16 wi + g (+8 for r >= 2) of warp `warp`'s
  // stripe, token 8i + 2ci (+1 for odd r).
  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  const int nrow = n0 + b * 16 + g;
  const bool rows_in = nrow < p.N;  // N % 128 == 64: the second warpgroup's rows lie past N
  float bias0 = 0.f, bias1 = 0.f;
  if (bias != nullptr && rows_in) {
    bias0 = Num<T>::to_f(bias[nrow]);
    bias1 = Num<T>::to_f(bias[nrow + 8]);
  }
  (void)wi;
  if constexpr (kSplit) {
    // Partial tile of this split: [TM/8][4][256 threads] floats, thread-major for coalescing.
    const int tiles = gridDim.x * gridDim.y;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    float* part = static_cast<float*>(p.workspace);
    int* tickets = reinterpret_cast<int*>(part + static_cast<int64_t>(tiles) * gridDim.z * (TM * TN));
    float* mine = part + (static_cast<int64_t>(tile) * gridDim.z + blockIdx.z) * (TM * TN);
#pragma unroll
    for (int i = 0; i < NACC; ++i) mine[i * (WK * 32) + tid] = acc[i];
    __threadfence();
    __syncthreads();
    __shared__ int last;
    if (tid == 0) last = (atomicAdd(tickets + tile, 1) == static_cast<int>(gridDim.z) - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    const float* all = part + static_cast<int64_t>(tile) * gridDim.z * (TM * TN);
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = 0.f;
    for (int z = 0; z < static_cast<int>(gridDim.z); ++z) {
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[i] += __ldcg(all + static_cast<int64_t>(z) * (TM * TN) + i * (WK * 32) + tid);
    }
    if (tid == 0) tickets[tile] = 0;
  }
#pragma unroll
  for (int i = 0; i < TM / 8; ++i) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int tok = m0 + 8 * i + 2 * ci + (r & 1);
      const int n = nrow + ((r >> 1) << 3);
      if (tok < p.M && rows_in) out[static_cast<int64_t>(tok) * p.N + n] = Num<T>::from_f(acc[4 * i + r] + ((r >> 1) ? bias1 : bias0));
    }
  }
#else
  __trap();  // the planner never selects this family below sm_90a
#endif
}

}  // namespace mate
