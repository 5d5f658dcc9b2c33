// Family "wg": Hopper warpgroup MMA (wgmma, sm_90a) for M above the decode tiles. Computes the
// transposed product out^T = W^T x^T so the int4 weights are the register operand A: each warp of
// a warpgroup owns one 16-feature stripe, exactly the rows of one frame-v2 block, and dequantizes
// them in registers; the activation tile is operand B, read by the tensor cores from shared
// memory (128-byte swizzle, K-major: x's natural row-major layout). One wgmma m64nTMk16 per 16 k.
//
// CTA: WK warps = WK/4 warpgroups (the variants use 2), TN = 16 WK features (64 per warpgroup; in
// a last tile past N the idle warpgroups compute on zero-filled weights and store nothing), TM
// tokens (wgmma n). A ring of P shared-memory stages, each one 64-deep K chunk: the x tile, the WK
// weight blocks, the scales and zero points of the chunk's groups. The weights, scales and zero
// points are filled with cp.async by every thread; the x tile by one 2-D tensor copy (TMA) issued
// by one thread and completing on the slot's mbarrier, where the launcher could describe x with a
// tensor map (src/device/tma.rs), else by every thread's cp.async as well (act order: a gather).
// P - 2 stages are in flight while one is consumed and one may still be read by the previous
// chunk's wgmma. The output tile leaves through shared memory in 16-byte row pieces.
//
// wgmma reads its register operand asynchronously and ptxas does not protect it: writing the
// next chunk's A registers while a wgmma is in flight gave wrong results (bench/NOTES.md, "wg").
// So each warpgroup dequantizes only after `wgmma.wait_group 0`; its shared-memory reads go first.
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
#include "mbarrier.cuh"
#include "pdl.cuh"
#include "split.cuh"
#include "wgmma_ops.cuh"

namespace mate {

template <int TM, int TN>
constexpr int wg_min_blocks = 1;

// Bytes of one ring stage: the x tile (TM x 128), WK weight blocks (512 each), 2 groups of TN
// scales (2 bytes) and of TN/8 zero-point words, rounded up to 1024 so every x tile stays aligned
// for the 128-byte swizzle. Mirrored by Variant::dynamic_smem in src/plan/variants.rs (plus 1024
// bytes of alignment slack).
template <int TM, int WK>
__host__ __device__ constexpr int wg_stage_bytes() {
  return TM * 128 + (WK * (512 + 4 * 16 + 16) + 1023) / 1024 * 1024;
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

// How a chunk's x tile reaches shared memory. Chosen once per launch, outside the K loop: the
// main loop is instantiated once per mode, so no chunk pays a branch on it.
enum class XMode { kCpAsync, kTma, kGather };
template <XMode M>
struct XTag {
  static constexpr XMode value = M;
};

// The family's second kernel parameter (kernels/mate_kernels.cu; src/device/tma.rs WgXArg mirrors
// it): x's tensor map, encoded per launch (x's address changes every call), and whether the
// launcher could encode one. The flag rides beside the map rather than in GemmParams so the decode
// families' parameter block stays 96 bytes (24 extra bytes cost 2.6 % on small kernels), and the
// one struct carries both halves of one decision.
struct alignas(64) XArg {
  unsigned long long map[16];  // CUtensorMap (cuda.h): 128 bytes, 64-byte aligned; unset when tma == 0
  int32_t tma;                 // 1: x tiles by TMA through map; 0: per-thread cp.async (or act order)
};
static_assert(sizeof(XArg) == 192 && alignof(XArg) == 64, "XArg layout must match src/device/tma.rs");

// One box of the map (64 k x TM rows, 128-byte swizzle: the layout desc_sw128 reads and the
// cp.async path writes by hand) to `dst`, counted on `bar`. Rows past M arrive as zeros (the map's
// OOB fill), so a last m-tile needs no special case.
__device__ __forceinline__ void tma_x(uint32_t dst, const XArg& xa, int k0, int m0, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&xa.map[0])), "r"(k0), "r"(m0), "r"(bar)
      : "memory");
}

}  // namespace wg

template <typename T, bool kZeros, int TM, int TN, int WK, int P, bool kSplit, bool kPre>
__device__ __forceinline__ void wg_body(const GemmParams& p, const wg::XArg& xa) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace wg;
  using dec::Deq;
  using dec::cp_async_commit;
  static_assert(WK % 4 == 0 && TN == 16 * WK && P >= 3 && kPre, "wg: warpgroups of 64 features, pre-scale");
  constexpr int kStage = wg_stage_bytes<TM, WK>();
  constexpr int kThreads = WK * 32;
  constexpr int kW = TM * 128;          // weight blocks: WK x 512 bytes
  constexpr int kS = kW + WK * 512;     // scales: 2 groups x TN halves
  constexpr int kZ = kS + 2 * TN * 2;   // zero points: 2 groups x TN/8 words
  constexpr int NACC = TM / 2;

  extern __shared__ unsigned char smem_raw[];
  const uint32_t smem0 = (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023u) & ~1023u;
  // TMA mode: one mbarrier per ring slot (arrival count 1: the issuing thread's expect_tx).
  __shared__ __align__(8) unsigned long long xbar[P];
  const uint32_t xbar0 = static_cast<uint32_t>(__cvta_generic_to_shared(xbar));

  const int tid = threadIdx.x;
  pdl_trigger();
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, ci = lane & 3;
  // Raster: CTAs run in launch order, so walk the (m-tile, n-tile) grid in bands of p.total_warps
  // m-tiles (the planner sizes a band's x rows to stay in L2): within a band every n-tile, and
  // within an n-tile the band's m-tiles, so the weights stream once per band and x stays hot.
  // One band holding every m-tile is the launch order itself: skip the divisions (measured 2-3 %
  // at M = 128, where they delayed every CTA's first copies).
  const int mtiles = gridDim.x;
  int m_tile = blockIdx.x, n_tile = blockIdx.y;
  if (p.total_warps < mtiles) {
    const int linear = blockIdx.y * gridDim.x + blockIdx.x;
    const int band = max(1, p.total_warps);
    const int band_start = (linear / (band * gridDim.y)) * band;
    const int band_rows = min(band, mtiles - band_start);
    const int in_band = linear - band_start * gridDim.y;
    m_tile = band_start + in_band % band_rows;
    n_tile = in_band / band_rows;
  }
  const int m0 = m_tile * TM;
  const int n0 = n_tile * TN;
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

  // Each thread's copies are fixed for the whole K loop; only the chunk offset moves. x: TM rows x
  // 8 pieces of 16 bytes, piece tid + kThreads i = row r0 + kRows i, column piece q (kRows is a
  // multiple of 8: one swizzle phase per thread); weights: one 16-byte lane piece per thread;
  // scales (TN/8 pieces per group) and zero points (TN/64 per group): the first threads. Groups
  // are powers of two or the whole K (per channel: group 0 throughout). A zero-filled copy
  // (src-size 0) reads nothing, so its source address is not clamped.
  constexpr int kRows = kThreads / 8;
  constexpr int XP = (TM + kRows - 1) / kRows;
  static_assert(kRows % 8 == 0, "wg: x rows per pass must keep the swizzle phase");
  const int q = tid & 7, r0 = tid >> 3;
  const uint32_t x_dst = r0 * 128 + ((q ^ (r0 & 7)) << 4);
  const int64_t x_step = static_cast<int64_t>(kRows) * p.x_row_stride;
  const T* x_src = x + static_cast<int64_t>(m0 + r0) * p.x_row_stride + q * 8;
  uint32_t x_valid = 0;
#pragma unroll
  for (int i = 0; i < XP; ++i) x_valid |= (r0 + kRows * i < TM && m0 + r0 + kRows * i < p.M ? 1u : 0u) << i;
  const int gshift = G >= p.K ? 31 : __ffs(G) - 1;
  const int wb = tid >> 5, wl = tid & 31;  // weight block (stripe n0/16 + wb), lane piece 4gi + ci
  const bool w_in = (n0 >> 4) + wb < (p.N >> 4);  // past N: zero-filled, never stored
  const uint4* w_src = wq + static_cast<int64_t>((n0 >> 4) + wb) * C * 32 + wl;
  const uint32_t w_dst = kW + wb * 512 + ((wl & 3) * 8 + (wl >> 2)) * 16;
  constexpr int kSP = TN / 8, kZP = TN / 32;  // 16-byte scale / zero-point pieces per group
  const bool s_thread = tid < 2 * kSP, z_thread = kZeros && tid >= 2 * kSP && tid < 2 * kSP + 2 * kZP;
  const int sz_half = s_thread ? tid / kSP : (tid - 2 * kSP) / kZP;  // which of the chunk's two groups
  const int s_col = (s_thread ? tid % kSP : (tid - 2 * kSP) % kZP);
  const int s_n = n0 + s_col * 8, z_w = (n0 >> 3) + s_col * 4;
  const bool sz_copy = (s_thread || z_thread) && (sz_half == 0 || G < 64);
  const bool sz_in = s_thread ? s_n < p.N : z_w < (p.N >> 3);
  const uint32_t sz_dst = s_thread ? kS + sz_half * TN * 2 + s_col * 16 : kZ + sz_half * (TN / 2) + s_col * 16;

  // A chunk's copies: x (load_x: the previous kernel in the stream may write it, so the prologue
  // issues it after pdl_wait) and the weights, scales and zero points (load_w).
  auto load_x = [&](int slot, int ch, auto mode_tag) {
    constexpr XMode kMode = decltype(mode_tag)::value;
    const uint32_t st = smem0 + slot * kStage;
    const int k0 = ch << 6;
    if constexpr (kMode == XMode::kTma) {
      if (tid == 0) {  // expect before the copy: the phase cannot complete before its bytes land
        const uint32_t bar = xbar0 + 8 * slot;
        mbar_expect_tx(bar, TM * 128);  // the whole box, zero-filled rows included
        tma_x(st, xa, k0, m0, bar);
      }
    } else if constexpr (kMode == XMode::kCpAsync) {
      const T* src = x_src + k0;
#pragma unroll
      for (int i = 0; i < XP; ++i) {
        if (kRows * (i + 1) > TM && r0 + kRows * i >= TM) break;  // partial last pass (TM % kRows)
        cp16(st + x_dst + i * (kRows * 128), src + i * x_step, ((x_valid >> i) & 1u) << 4);
      }
    } else {  // act order: gather the chunk's columns through perm (synchronous loads)
      int col[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) col[j] = __ldg(p.perm + k0 + q * 8 + j);
#pragma unroll
      for (int i = 0; i < XP; ++i) {
        if (kRows * (i + 1) > TM && r0 + kRows * i >= TM) break;
        uint4 v = make_uint4(0, 0, 0, 0);
        if ((x_valid >> i) & 1u) {
          const T* row = x_src - q * 8 + i * x_step;
          T e[8];
#pragma unroll
          for (int j = 0; j < 8; ++j)  // a perm entry outside [0, K) yields NaN, as in the other families
            e[j] = static_cast<unsigned>(col[j]) < static_cast<unsigned>(p.K) ? row[col[j]]
                                                                             : Num<T>::from_f(__int_as_float(0x7fc00000));
          v = *reinterpret_cast<uint4*>(e);
        }
        asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" ::"r"(st + x_dst + i * (kRows * 128)), "r"(v.x), "r"(v.y),
                     "r"(v.z), "r"(v.w));
      }
    }
  };
  auto load_w = [&](int slot, int ch) {
    const uint32_t st = smem0 + slot * kStage;
    const int k0 = ch << 6;
    cp16(st + w_dst, w_src + ch * 32, w_in ? 16 : 0);
    if (sz_copy) {  // scales / zero points of the chunk's first group and of its second (G = 32)
      const int grp = (k0 + sz_half * 32) >> gshift;
      const void* src = s_thread ? static_cast<const void*>(sc + static_cast<int64_t>(grp) * p.N + s_n)
                                 : static_cast<const void*>(p.zeros + static_cast<int64_t>(grp) * (p.N >> 3) + z_w);
      cp16(st + sz_dst, src, sz_in ? 16 : 0);
    }
  };
  auto load = [&](int slot, int ch, auto mode_tag) {
    load_x(slot, ch, mode_tag);
    load_w(slot, ch);
  };

  // No zero fill: the first chunk's first wgmma ignores the accumulator (scale-d = 0); writing
  // the registers outside wgmma would make ptxas serialize the wgmma pipeline.
  float acc[NACC];

  const int wi = warp & 3;                 // warp within its warpgroup: rows 16 wi .. 16 wi + 15
  const int b = warp;                      // this warp's weight block (stripe) in the tile
  const uint32_t sel = (ci & 1) ? 0x7351u : 0x6240u;

  // Each x mode is its own copy of the loop (no per-chunk branch on the mode).
  auto mainloop = [&](auto mode_tag) {
  constexpr XMode kMode = decltype(mode_tag)::value;
  const int nch = c_end - c_begin;
  if constexpr (kMode == XMode::kTma) {
    if (tid == 0) {
#pragma unroll
      for (int i = 0; i < P; ++i) mbar_init(xbar0 + 8 * i, 1);
      // make the initialized barriers visible to the async proxy (the TMA's complete_tx)
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
  }
  // Programmatic dependent launch (kernels/pdl.cuh): the first P - 2 chunks' weights, scales and
  // zero points are issued before pdl_wait, uncommitted, so they join chunk 0's commit group (the
  // cp.async.wait_group count per chunk is unchanged); x after the wait, one group per chunk.
#pragma unroll
  for (int i = 0; i < P - 2; ++i)
    if (i < nch) load_w(i, c_begin + i);
  pdl_wait();
#pragma unroll
  for (int i = 0; i < P - 2; ++i) {
    if (i < nch) load_x(i, c_begin + i, mode_tag);
    cp_async_commit();
  }
  // One chunk: copies for chunk it + P - 2; shared-memory reads of chunk it's weights and scales;
  // wait for chunk it - 1's wgmma (they read `cur` asynchronously: see the rule below); dequantize
  // chunk it into `cur`; issue its four wgmma. The other warpgroup overlaps this one's wait.
  //
  // TMA mode: slot s's mbarrier completes one phase per use, so chunk `it` waits for parity
  // `phase` = (it / P) & 1. A thread cannot fall a whole phase behind: the slot is refilled only
  // after the __syncthreads of chunk it + 2, which every thread reaches after its wait in chunk it.
  // The refill overwrites what chunk it - 2's wgmma read (async proxy after async proxy), ordered
  // by the wgmma wait before that same __syncthreads.
  auto chunk = [&](int it, int slot, int lslot, uint32_t phase, uint32_t (&cur)[4][4], auto mode_tag) {
    asm volatile("cp.async.wait_group %0;" ::"n"(P - 3));
    // cp.async (and the gather's st.shared) write x through the generic proxy; wgmma reads it
    // through the async proxy. A TMA-written x tile is already in the async proxy.
    if constexpr (kMode != XMode::kTma) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();  // stage it landed (TMA mode: its weights and scales); every warp is past chunk it-2's wgmma
    if (it + P - 2 < nch) load(lslot, c_begin + it + P - 2, mode_tag);
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
        const uint32_t z_addr = st + kZ + h * (TN / 2) + (b * 2) * 4;
        zv[h][0] = (lds32(z_addr) >> (4 * g)) & 0xF;
        zv[h][1] = (lds32(z_addr + 4) >> (4 * g)) & 0xF;
      }
    }
    // The register-operand rule (file comment): chunk it - 1's wgmma must be done before `cur`
    // is rewritten.
    wait0();
    Deq<T> dq;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int h = (G < 64 && j >= 2) ? 1 : 0;
      if (j == 0 || (G < 64 && j == 2))
        dq.set(*reinterpret_cast<const T*>(&sv[h][0]), *reinterpret_cast<const T*>(&sv[h][1]), zv[h][0], zv[h][1]);
      dq(w[j], cur[j]);
    }
    // Only the wgmma reads the x tile: wait for it as late as possible (behind the dequantization).
    if constexpr (kMode == XMode::kTma) mbar_wait(xbar0 + 8 * slot, phase);
    fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) Wgmma<T, TM>::run(acc, cur[j], desc_sw128(st + j * 32), (it > 0 || j > 0) ? 1 : 0);
    commit();
  };
  uint32_t a0[4][4];
  // ring slots of the chunk consumed (it % P) and of the chunk loaded ((it + P - 2) % P); the
  // consumed slot's mbarrier parity flips each lap of the ring
  uint32_t phase = 0;
  for (int it = 0, slot = 0, lslot = P - 2; it < nch; ++it) {
    chunk(it, slot, lslot, phase, a0, mode_tag);
    if (++slot == P) {
      slot = 0;
      phase ^= 1u;
    }
    lslot = lslot + 1 == P ? 0 : lslot + 1;
  }
  };
  // The launcher sets xa.tma only for calls without act order (src/device/tma.rs); perm decides first.
  if (p.perm != nullptr) mainloop(XTag<XMode::kGather>{});
  else if (xa.tma != 0) mainloop(XTag<XMode::kTma>{});
  else mainloop(XTag<XMode::kCpAsync>{});
  wait0();
  asm volatile("cp.async.wait_all;" ::: "memory");

  // Accumulator fragment: acc[4i + r] is feature row 16 wi + g (+8 for r >= 2) of warp `warp`'s
  // stripe, token 8i + 2ci (+1 for odd r).
  T* __restrict__ out = static_cast<T*>(p.out);
  const T* __restrict__ bias = static_cast<const T*>(p.bias);
  const int nrow = n0 + b * 16 + g;
  const bool rows_in = nrow < p.N;  // a last tile past N: these rows are not stored
  float bias0 = 0.f, bias1 = 0.f;  // (their results are staged below but never stored)
  if (bias != nullptr && rows_in) {
    bias0 = Num<T>::to_f(bias[nrow]);
    bias1 = Num<T>::to_f(bias[nrow + 8]);
  }
  (void)wi;
  if constexpr (kSplit) {
    // Partial tile of this split: [TM/8][4][256 threads] floats, thread-major for coalescing.
    const int tiles = gridDim.x * gridDim.y;
    const int tile = n_tile * mtiles + m_tile;
    float* part = ws_partials(p.workspace);
    int* tickets = ws_tickets(p.workspace);
    float* mine = part + (static_cast<int64_t>(tile) * gridDim.z + blockIdx.z) * (TM * TN);
#pragma unroll
    for (int i = 0; i < NACC; ++i) mine[i * (WK * 32) + tid] = acc[i];
    __syncthreads();
    __shared__ int last;
    if (tid == 0) last = (split_ticket(tickets + tile) == static_cast<int>(gridDim.z) - 1);  // kernels/split.cuh
    __syncthreads();
    if (!last) return;
    const float* all = part + static_cast<int64_t>(tile) * gridDim.z * (TM * TN);
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = 0.f;
    for (int z = 0; z < static_cast<int>(gridDim.z); ++z) {
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[i] += __ldcg(all + static_cast<int64_t>(z) * (TM * TN) + i * (WK * 32) + tid);
    }
    if (tid == 0) tickets[tile] = 0;
  }
  // Store through shared memory (the ring is idle now): the fragment puts one token's features 8
  // rows apart, so write the tile as [token][feature] halves, then copy whole 16-byte row pieces.
  constexpr int kPitch = TN * 2 + 16;  // bytes per token row; the pad spreads banks
  static_assert(TM * kPitch <= P * kStage, "wg: output tile must fit in the ring");
  __syncthreads();
#pragma unroll
  for (int i = 0; i < TM / 8; ++i) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const T v = Num<T>::from_f(acc[4 * i + r] + ((r >> 1) ? bias1 : bias0));
      const uint32_t addr = smem0 + (8 * i + 2 * ci + (r & 1)) * kPitch + (b * 16 + g + ((r >> 1) << 3)) * 2;
      asm volatile("st.shared.b16 [%0], %1;" ::"r"(addr), "h"(*reinterpret_cast<const unsigned short*>(&v)));
    }
  }
  __syncthreads();
  const int rows = min(TM, p.M - m0);
#pragma unroll
  for (int i = 0; i < TM * (TN / 8) / kThreads; ++i) {
    const int piece = i * WK * 32 + tid;
    const int row = piece / (TN / 8), col = (piece % (TN / 8)) * 8;
    if (row < rows && n0 + col < p.N) {
      uint4 v;
      asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(smem0 + row * kPitch + col * 2));
      *reinterpret_cast<uint4*>(out + static_cast<int64_t>(m0 + row) * p.N + n0 + col) = v;
    }
  }
#else
  __trap();  // the planner never selects this family below sm_90a
#endif
}

}  // namespace mate
