//! Planner structure: the variant table (generated from kernels/variants.def) covers every
//! configuration the frame envelope admits, and the grid covers the output exactly.

use mate::call::{Device, Problem};
use mate::frame::{FrameMeta, GROUP_SIZES};
use mate::plan::{plan, resolve_sms, set_num_sms, Family, DEC_MAX_M, VARIANTS};
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
                    for m in [1, 8, 9, 16, 17, 33, 64, 65, 4096] {
                        let p = problem(m, k, n, g, zeros, dtype);
                        let pl = plan(&p, 132).unwrap();
                        let v = &VARIANTS[pl.variant];
                        let family = if m <= DEC_MAX_M { Family::Dec } else { Family::Wmma };
                        assert_eq!((v.dtype, v.zeros, v.family), (dtype, zeros, family));
                        assert_eq!(pl.block[0], v.threads());
                        // The grid covers M and N exactly once.
                        match v.family {
                            Family::Dec => {
                                assert!(m <= v.tm as i64);
                                assert_eq!(pl.grid[0] as i64 * v.tn as i64, n);
                            }
                            Family::Wmma => {
                                assert_eq!(pl.grid[1] as i64 * v.tn as i64, n);
                                let covered = pl.grid[0] as i64 * v.tm as i64;
                                assert!(covered >= m && covered - m < v.tm as i64);
                            }
                        }
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

#[test]
fn decode_token_tile_is_the_smallest_that_holds_m() {
    for (m, tm) in [(1, 8), (8, 8), (9, 16), (16, 16), (17, 32), (32, 32), (33, 64), (64, 64)] {
        let pl = plan(&problem(m, 4096, 4096, 128, false, DType::F16), 132).unwrap();
        assert_eq!(VARIANTS[pl.variant].tm, tm, "M = {m}");
    }
}

#[test]
fn sm_count_resolution_order() {
    // call override, then process-wide limit, then the device; clamped to the device.
    assert_eq!(resolve_sms(None, 132), 132);
    assert_eq!(resolve_sms(Some(60), 132), 60);
    assert_eq!(resolve_sms(Some(500), 132), 132);
    set_num_sms(Some(48)).unwrap();
    assert_eq!(resolve_sms(None, 132), 48);
    assert_eq!(resolve_sms(Some(60), 132), 60);
    set_num_sms(None).unwrap();
    assert_eq!(resolve_sms(None, 132), 132);
    assert!(set_num_sms(Some(0)).is_err());
}
