// Kernel parameter block. Mirrored byte for byte by src/device/params.rs (GemmParams);
// both sides assert the size, so a field added on one side only fails the build.
#pragma once
#include <cstdint>

namespace mate {

struct GemmParams {
  const void* x;          // activation [M, K], unit stride along K, row stride x_row_stride
  const int32_t* qweight; // frame v2: int32 [N/16, K/64, 128] in MMA-fragment order (src/frame/mod.rs)
  const void* scales;     // [K/group, N], activation dtype
  const int32_t* zeros;   // [K/group, N/8] packed int4 exact zero points, or null (symmetric: 8)
  const int32_t* perm;    // [K] act-order gather (x column perm[k] feeds frame row k), or null
  const void* bias;       // [N], activation dtype, or null
  void* out;              // [M, N] contiguous, activation dtype
  int64_t x_row_stride;   // elements
  int32_t M;
  int32_t N;
  int32_t K;
  int32_t group_size;     // effective group (K for per-channel)
  // Split plans: the tickets, then the fp32 partials (kWorkspaceTicketBytes below). Null when the
  // plan needs no workspace.
  void* workspace;
  int32_t total_warps;    // dec: warps sharing the flattened (stripe group, K chunk) units;
                          // wg: m-tiles per band of the CTA raster (kernels/wg.cuh);
                          // bulk: CTAs per tile (reported only; kernels/bulk.cuh);
                          // bwg: CTAs per tile of the even split, 0 = stream-K (kernels/bwg.cuh)
  int32_t max_seg;        // dec: partial slots per stripe group; bulk: chunks per stream-K unit;
                          // bwg: m-tiles per band of the raster
};

// Workspace layout of every split plan (src/plan/mod.rs split_workspace; src/device/params.rs
// WORKSPACE_TICKET_BYTES): the int32 tickets (one per tile or stripe group: zero at entry, left
// zero at exit) in the first kWorkspaceTicketBytes, the fp32 partials after them (written before
// they are read, left as they are). One workspace serves calls with different plans in turn
// (W4A16Linear shares one per stream): a call's tickets never land on another's stale partials.
constexpr int64_t kWorkspaceTicketBytes = 65536;

static_assert(sizeof(GemmParams) == 96, "GemmParams layout must match src/device/params.rs");

}  // namespace mate
