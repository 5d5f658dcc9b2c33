// Expands kernels/variants.def into extern "C" kernels (stable names the Rust registry looks up).
#include "params.cuh"
#include "dec.cuh"
#include "dect.cuh"
#include "wmma.cuh"
#include "wg.cuh"
#include "bulk.cuh"
#include "bwg.cuh"
#include "gather.cuh"

#define MATE_DT_f16 __half
#define MATE_DT_bf16 __nv_bfloat16

// Kernel parameters per family: every family takes the 96-byte GemmParams; wg also takes its x
// tensor map (kernels/wg.cuh XArg; bwg too, __grid_constant__ so the TMA can address it in parameter
// space). Only wg pays for the extra 192 bytes: a larger parameter block measured 2.6 % slower on
// the small decode kernels. src/device/mod.rs passes the matching argument list per family.
#define MATE_ARGS_dec const mate::GemmParams p
#define MATE_ARGS_dect const mate::GemmParams p
#define MATE_ARGS_wmma const mate::GemmParams p
#define MATE_ARGS_bulk const mate::GemmParams p
#define MATE_ARGS_wg const mate::GemmParams p, const __grid_constant__ mate::wg::XArg xa
#define MATE_ARGS_bwg const mate::GemmParams p, const __grid_constant__ mate::wg::XArg xa
#define MATE_PASS_dec p
#define MATE_PASS_dect p
#define MATE_PASS_wmma p
#define MATE_PASS_bulk p
#define MATE_PASS_wg p, xa
#define MATE_PASS_bwg p, xa

// bwg's extra template arguments: split = 2, the first ring's weights before pdl_wait; split = 3,
// the 32/64-token stream-K tiles; split = 4 / 5, the sliced even-split sum (5: with the ring first).
#define MATE_EXTRA_dec(split)
#define MATE_EXTRA_dect(split)
#define MATE_EXTRA_wmma(split)
#define MATE_EXTRA_bulk(split)
#define MATE_EXTRA_wg(split)
#define MATE_EXTRA_bwg(split) , (split) == 2 || (split) == 5, (split) == 3, (split) >= 4

#define MATE_VARIANT(sym, family, dt, zeros, tm, tn, wk, pf, split, pre)                                     \
  extern "C" __global__ void __launch_bounds__((wk) * 32, mate::family##_min_blocks<tm, tn>)                    \
      sym(MATE_ARGS_##family) {                                                                                 \
    mate::family##_body<MATE_DT_##dt, (zeros) != 0, tm, tn, wk, pf, (split) != 0, (pre) != 0 MATE_EXTRA_##family(split)>( \
        MATE_PASS_##family);                                                                                     \
  }
#include "variants.def"
#undef MATE_VARIANT

// Not variants: the act-order gathers of x that precede a launch on the gathered copy
// (kernels/gather.cuh; src/device/mod.rs launches one of them, 256 threads a block).
extern "C" __global__ void __launch_bounds__(256) mate_gather_x(const uint16_t* x, int64_t x_row_stride, const int32_t* perm, uint16_t* dst,
                                                               int M, int K, uint32_t nan_bits) {
  mate::gather_x_body(x, x_row_stride, perm, dst, M, K, nan_bits);
}
// The same through shared memory (kernels/gather.cuh gather_x_rows), where K and x's alignment allow.
extern "C" __global__ void __launch_bounds__(256) mate_gather_x_rows(const uint16_t* x, int64_t x_row_stride, const int32_t* perm,
                                                                    uint16_t* dst, int M, int K, uint32_t nan_bits) {
  mate::gather_x_rows(x, x_row_stride, perm, dst, M, K, nan_bits);
}
