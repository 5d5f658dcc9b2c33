//! Planner structure: the variant table (generated from kernels/variants.def) covers every
//! configuration the frame envelope admits, and the grid covers the output exactly.

use mate::call::{Device, Problem};
use mate::frame::{FrameMeta, GROUP_SIZES};
use mate::plan::{plan, Family, VARIANTS};
use mate::tensor::DType;

fn problem(m: i64, k: i64, n: i64, g: i64, zeros: bool, dtype: DType) -> Problem {
    Problem {
        m,
        meta: FrameMeta::new(k, n, g, zeros, false).unwrap(),
        dtype,
        device: Device::Cuda(0),
        x_row_stride: k,
        has_bias: false,
        num_sms: None,
    }
}

#[test]
fn variant_symbols_are_unique() {
    let mut names: Vec<_> = VARIANTS.iter().map(|v| v.symbol).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), VARIANTS.len());
}

#[test]
fn every_envelope_configuration_has_a_variant() {
    for dtype in [DType::F16, DType::BF16] {
        for zeros in [false, true] {
            for g in GROUP_SIZES {
                for (k, n) in [(64, 64), (1536, 17920), (14336, 4096), (384, 320)] {
                    if g != -1 && k % g != 0 {
                        continue;
                    }
                    for m in [1, 17, 4096] {
                        let p = problem(m, k, n, g, zeros, dtype);
                        let pl = plan(&p).unwrap();
                        let v = &VARIANTS[pl.variant];
                        assert_eq!((v.dtype, v.zeros, v.family), (dtype, zeros, Family::Wmma));
                        // The grid covers M and N exactly once.
                        assert_eq!(pl.grid[1] as i64 * v.tile_n as i64, n);
                        let covered = pl.grid[0] as i64 * v.tile_m as i64;
                        assert!(covered >= m && covered - m < v.tile_m as i64);
                        assert_eq!(pl.block[0], v.threads);
                    }
                }
            }
        }
    }
}

#[test]
fn whole_k_family_needs_no_workspace() {
    let p = problem(16, 4096, 4096, 128, false, DType::F16);
    assert_eq!(mate::plan::workspace_bytes(&p).unwrap(), 0);
}
