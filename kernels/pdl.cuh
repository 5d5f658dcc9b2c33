// Programmatic dependent launch. src/device/mod.rs launches the families that include this header
// (Variant::programmatic_launch in src/plan/variants.rs: bulk, bwg) with programmatic stream
// serialization, so such a kernel's CTAs may start while the previous kernel in the stream is
// still running: its producer streams the first stage's weights, scales and zero points (nothing on
// the device writes them) while the previous kernel finishes, and waits with pdl_wait() before its
// first copy of x, which the previous kernel may write. Every global write of these kernels
// (output, split partials and tickets) comes after a consumer used a stage holding x, so after the
// wait too. pdl_trigger() lets the next kernel in the stream start once every CTA of this one has
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
