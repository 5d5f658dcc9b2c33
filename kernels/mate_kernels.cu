// Expands kernels/variants.def into extern "C" kernels (stable names the Rust registry looks up).
#include "params.cuh"
#include "dec.cuh"
#include "dect.cuh"
#include "wmma.cuh"
#include "wg.cuh"
#include "bulk.cuh"

#define MATE_DT_f16 __half
#define MATE_DT_bf16 __nv_bfloat16

#define MATE_VARIANT(sym, family, dt, zeros, tm, tn, wk, pf, split, pre)                      \
  extern "C" __global__ void __launch_bounds__((wk) * 32, mate::family##_min_blocks<tm>)          \
      sym(const mate::GemmParams p) {                                                            \
    mate::family##_body<MATE_DT_##dt, (zeros) != 0, tm, tn, wk, pf, (split) != 0, (pre) != 0>(p); \
  }
#include "variants.def"
#undef MATE_VARIANT
