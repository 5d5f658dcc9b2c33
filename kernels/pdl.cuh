// Programmatic dependent launch. src/device/mod.rs launches the families that include this header
// (Variant::programmatic_launch in src/plan/variants.rs: bulk, bwg, dect, wg) with programmatic
// stream serialization, so such a kernel's CTAs may start while the previous kernel in the stream
// is still running: they load the first weights, scales and zero points (nothing on the device
// writes them) while the previous kernel finishes, and wait with pdl_wait() before their first read
// of x, which the previous kernel may write (bulk, bwg: the producer, before its first x copy;
// dect, wg: every thread, after issuing its first chunks' weights). Every global write of these kernels (output, split partials and tickets)
// comes after x was read, so after the wait too. pdl_trigger() lets the next kernel in the stream start once every CTA of this one has
// issued it (or exited).
#pragma once

namespace mate {

__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the grids this one depends on have completed and their writes are visible (returns
// at once when the launch had no programmatic dependency).
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace mate
