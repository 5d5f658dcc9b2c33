//! The plan of every problem on a grid of decode shapes, for checking that a planner refactor
//! changes no plan (sessions 44-45 did this with throw-away copies of this file). Ignored by
//! default; run it before and after a change and compare the two outputs:
//!   cargo test --release --test plan_table -- --ignored --nocapture | grep '^M=' > before.txt

use mate::call::{Device, Problem};
use mate::frame::FrameMeta;
use mate::plan::{plan, Caps, VARIANTS};
use mate::tensor::DType;

#[test]
#[ignore = "a table for comparing planner changes, not a check: run with --ignored --nocapture"]
fn plan_table() {
    let ks = [1536i64, 2048, 3072, 3584, 4096, 5120, 7168, 8192, 8960, 14336, 18944, 27648, 28672];
    let ns = [1536i64, 2048, 2560, 3072, 3584, 4096, 4608, 5120, 6144, 7168, 8192, 10240, 14336, 17920, 28672, 37888, 55296, 57344];
    for sms in [132i64, 120] {
        let caps = Caps::uniform(sms, 2);
        for m in (1..=16).chain([24, 32, 40, 48, 56, 64, 128, 256, 1024]) {
            for &k in &ks {
                for &n in &ns {
                    for (g, zp) in [(128i64, false), (128, true), (32, false)] {
                        for overlap in [true, false] {
                            let dtype = if zp { DType::BF16 } else { DType::F16 };
                            let meta = FrameMeta::new(k, n, g, zp, false).unwrap();
                            let p = Problem { m, meta, dtype, device: Device::Cuda(0), x_row_stride: k, has_bias: false, num_sms: None, overlap };
                            let pl = plan(&p, &caps).unwrap();
                            println!(
                                "M={m} K={k} N={n} g={g} zp={zp} overlap={overlap} sms={sms} {} grid={:?} split={} ws={}{}",
                                VARIANTS[pl.variant].symbol,
                                pl.grid,
                                pl.total_warps,
                                pl.workspace_bytes,
                                if pl.alone { " alone" } else { "" }
                            );
                        }
                    }
                }
            }
        }
    }
}
