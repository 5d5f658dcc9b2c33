// The split-K ticket the split reductions take (wg, dec, bulk's and bwg's even split; their stream-K below): the parts of one
// output tile each store their fp32 partial, one thread per part takes a ticket, and the last
// arriver reads every partial and sums them in split order (deterministic, no atomic adds).
//
// Protocol, per part: every thread stores its partial; a barrier over the part's threads
// (bar.sync, or __syncwarp for a warp); one thread calls split_ticket; a barrier (or shuffle +
// __syncwarp) hands its answer to the others, who then read the other parts' partials from L2
// (ld.global.cg). The ticket is one acq_rel atomic: its release covers the partials the other
// threads stored before the barrier (release is cumulative), its acquire orders the other parts'
// partials before the reads after the barrier. It replaces a __threadfence per thread on both
// sides: fence.sc.gpu is MEMBAR.SC.GPU plus an L1 invalidate in SASS, and a split plan paid it per
// item (bench/NOTES.md, session 6).
#pragma once
#include <cstdint>

#include "params.cuh"

namespace mate {

// The two regions of a split plan's workspace (kernels/params.cuh kWorkspaceTicketBytes).
__device__ __forceinline__ int* ws_tickets(void* ws) { return static_cast<int*>(ws); }
__device__ __forceinline__ float* ws_partials(void* ws) {
  return reinterpret_cast<float*>(static_cast<char*>(ws) + kWorkspaceTicketBytes);
}

// Part z of `parts` of a tile's K: chunks [cb, ce) of the `chunks` (of 64), in nst stages of
// `per_stage` chunks (the last may be partial). bwg splits this way; its planner splits into at
// most chunks / per_stage parts, so every part has a stage (tests/plan.rs).
struct KRange {
  int cb, ce, nst;
};
__device__ __forceinline__ KRange k_range(int z, int parts, int chunks, int per_stage) {
  KRange r;
  r.cb = (z * chunks) / parts;
  r.ce = ((z + 1) * chunks) / parts;
  r.nst = (r.ce - r.cb + per_stage - 1) / per_stage;
  return r;
}

// Stream-K (bulk, bwg): the persistent grid's G CTAs share the U = tiles x stages units of work
// evenly; CTA b takes units [start(b), start(b + 1)) (b * U / G, so every CTA gets U / G or one
// more), i.e. whole tiles plus at most a tile's tail at its start and a tile's head at its end.
// A tile whose chunks span several CTAs is finished by its owner, the CTA holding its last chunk
// (the highest index of them): the others store their fp32 partial in their own slot (one per
// CTA: a CTA's only partial segment that is not an owner's is the head of its last tile) and
// signal with split_arrive; the owner waits for them (split_wait) and sums the slots in CTA order,
// then its own part (deterministic, no atomic adds). A CTA walks its tiles from the last to the
// first, so a head (a contributor's part) is done early and a tail (the owner's part) late, and
// an owner only ever waits for lower-index CTAs: no deadlock while CTAs are dispatched in index
// order, whatever fits on the GPU at once (the grid is sized to be resident anyway).
struct StreamK {
  int64_t units;  // tiles x stages
  int ctas;       // G
  __device__ __forceinline__ int64_t start(int b) const { return static_cast<int64_t>(b) * units / ctas; }
  // The CTA whose range holds unit u: the largest b with start(b) <= u.
  __device__ __forceinline__ int cta_of(int64_t u) const { return static_cast<int>(((u + 1) * ctas - 1) / units); }
};

// A contributor's signal: its partial (stored by all its threads before a barrier) is released
// with the increment (cumulative over the barrier), without waiting for a reply.
__device__ __forceinline__ void split_arrive(int* counter) {
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(counter) : "memory");
}
// The owner's wait for `parts` contributors: acquire loads until the counter reaches them (a
// barrier after it orders the other threads' partial reads), then the counter is reset to zero
// for the next call (every contributor has arrived, so nothing else touches it in this launch).
__device__ __forceinline__ void split_wait(int* counter, int parts) {
  int seen;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    if (seen >= parts) break;
    __nanosleep(64);
  }
  *counter = 0;
}

// The sliced even split (bwg's 128-256-token tiles, every part its own resident CTA): each part
// stores its partial and arrives (split_arrive), waits for all `parts` arrivals (split_wait_all),
// sums its slice of the tile from every part's slot in split order and stores that slice, then
// leaves (split_leave): the last to leave resets the counter for the next call. The parts wait
// for each other, so they must all be resident: the caller checks that the grid has one CTA per
// part (no co-residency beyond what the grid size gives).
__device__ __forceinline__ void split_wait_all(const int* counter, int parts) {
  int seen;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    if (seen >= parts) break;
    __nanosleep(32);
  }
}
__device__ __forceinline__ void split_leave(int* counter, int parts) {
  int old;
  asm volatile("atom.relaxed.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  if (old == 2 * parts - 1) *counter = 0;  // every part has arrived, waited and left
}

// Takes the ticket of `counter` and returns its previous value (the part is the last of `parts`
// when it returns parts - 1).
__device__ __forceinline__ int split_ticket(int* counter) {
  int old;
  asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

}  // namespace mate
