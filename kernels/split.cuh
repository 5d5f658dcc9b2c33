// The split-K ticket every family's reduction takes (bulk, bwg, wg, dec): the parts of one
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

namespace mate {

// Part z of `parts` of a tile's K: chunks [cb, ce) of the `chunks` (of 64), in nst stages of
// `per_stage` chunks (the last may be partial). The persistent families (bulk, bwg) split this
// way; their planner splits into at most chunks / per_stage parts, so every part has a stage
// (tests/plan.rs).
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

// Takes the ticket of `counter` and returns its previous value (the part is the last of `parts`
// when it returns parts - 1).
__device__ __forceinline__ int split_ticket(int* counter) {
  int old;
  asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

}  // namespace mate
