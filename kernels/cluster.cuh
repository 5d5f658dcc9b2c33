// Thread-block cluster helpers (sm_90): the launch's cluster size, the cluster barrier, and stores
// into a cluster peer's shared memory (distributed shared memory). bwg's paired even split uses
// them (kernels/bwg.cuh): the two CTAs of a 2-CTA cluster are the two parts of one tile.
#pragma once
#include <cstdint>

namespace mate {
namespace cluster {

// CTAs in this CTA's cluster (1 when launched without a cluster dimension).
__device__ __forceinline__ uint32_t size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %cluster_nctarank;" : "=r"(n));
  return n;
}

// Every non-exited thread of the cluster: what this thread wrote before (its own and, through
// release cumulativity, what it observed) is visible to every thread after. Exited threads do not
// hold it up (PTX `exit`), so warps that left early (a producer) are no obstacle.
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address of the same shared-memory offset in cluster CTA `rank`.
__device__ __forceinline__ uint32_t peer(uint32_t local, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}

__device__ __forceinline__ void st128(uint32_t addr, float a, float b, float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

}  // namespace cluster
}  // namespace mate
