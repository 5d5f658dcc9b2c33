//! Planner structure: the variant table (generated from kernels/variants.def) covers every
//! configuration the frame envelope admits, and the grid covers the output exactly.

use mate::call::{Device, Problem};
use mate::frame::{FrameMeta, GROUP_SIZES};
use mate::plan::{
    bulk_m1_eight, bulk_streamk_stages, bulk_wide_balanced, EightForm, bulk_m1_narrow_whole, bulk_split, bulk_tile_features, bulk_whole_tile, dect_tile_rank, bulk_whole_tile_tokens, bwg_m33_64_tokens, bwg_ring_first, bwg_wide_features_tile, bwg_sliced, bwg_split, bwg_tile_tokens, gather_programmatic, bwg_streamk_whole_tiles, plan, prefer_bulk, prefer_bwg, prefer_cta_tiles, prefer_wgmma, Caps, Family, BWG_SLICED_ABOVE_BYTES, ACT_IN_LOOP_BELOW_WEIGHTS, ACT_IN_LOOP_MAX_M, DEC_MAX_M, VARIANTS,
};
use mate::plan::variants::{bulk_chunks_per_stage, bwg_chunks_per_stage};
use mate::device::params::WORKSPACE_TICKET_BYTES;
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
        overlap: true,
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
                        let pl = plan(&p, &Caps::uniform(132, 2)).unwrap();
                        let v = &VARIANTS[pl.variant];
                        assert_eq!((v.dtype, v.zeros), (dtype, zeros));
                        let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 2) };
                        let v80 = &VARIANTS[plan(&p, &sm80).unwrap().variant];
                        let cta = prefer_cta_tiles(&p, 132);
                        let decode = if cta { Family::Dect } else { Family::Dec };
                        if prefer_bwg(&p, 132) {
                            assert_eq!(v.family, Family::Bwg, "M={m} K={k} N={n}");
                        } else if prefer_wgmma(&p) {
                            assert_eq!(v.family, Family::Wg, "M={m} K={k} N={n}");
                        } else if prefer_bulk(&p, 132) {
                            assert_eq!(v.family, Family::Bulk, "M={m} K={k} N={n}");
                        } else {
                            assert_eq!(v.family, decode, "M={m} K={k} N={n}");
                        }
                        // without wgmma: the decode families up to their largest tile, then WMMA
                        assert_eq!(v80.family, if m <= DEC_MAX_M { decode } else { Family::Wmma }, "sm80 M={m}");
                        assert_eq!(pl.block[0], v.threads());
                        // The grid covers M and N exactly once.
                        match v.family {
                            Family::Dec => {
                                assert!(m <= v.tm as i64);
                                // every warp of the grid has work; whole-K plans need no workspace
                                let cap = pl.grid[0] as i64 * v.wk as i64;
                                assert!(pl.total_warps <= cap && pl.total_warps > cap - v.wk as i64);
                                let units = n / v.tn as i64 * (k / 64);
                                assert!(pl.total_warps <= if v.split { units } else { n / v.tn as i64 });
                                assert_eq!(pl.workspace_bytes == 0, !v.split);
                            }
                            Family::Dect => {
                                assert!(m <= v.tm as i64);
                                assert_eq!(pl.grid[0] as i64 * v.tn as i64, n);
                                assert_eq!(pl.workspace_bytes, 0);
                            }
                            Family::Wmma => {
                                assert_eq!(pl.grid[1] as i64 * v.tn as i64, n);
                                let covered = pl.grid[0] as i64 * v.tm as i64;
                                assert!(covered >= m && covered - m < v.tm as i64);
                            }
                            Family::Bulk => {
                                // a persistent grid of at most two CTAs per SM: whole tiles (at most
                                // one CTA per tile), or a split (every CTA at least a stage deep,
                                // the stream-K unit in max_seg)
                                assert!(m <= v.tm as i64);
                                let split = pl.total_warps;
                                let tiles = n / v.tn as i64;
                                let ctas = pl.grid[0] as i64;
                                let ch = bulk_chunks_per_stage(v.tm, v.tn, v.pre) as i64;
                                // the split is decided on the planned tile (below), whatever width
                                // whole tiles then take
                                let tn0 = bulk_tile_features(&p, 132);
                                let eight = bulk_m1_eight(&p, 132);
                                let tm0 = if m == 1 && eight.is_none() { 1 } else if m <= 8 { 8 } else { 16 };
                                let rule = bulk_split(&p, 132, tm0, tn0, v.pre);
                                let want_split = match eight {
                                    Some(EightForm::StreamK) => true,
                                    Some(EightForm::Whole) => false,
                                    _ => rule.unit > 0 && !bulk_m1_narrow_whole(&p, 132),
                                };
                                assert_eq!(v.split, want_split);
                                // (a split where the rule says whole: stream-K over stages on every slot)
                                let rule = if rule.unit > 0 { rule } else { bulk_streamk_stages(&p, 132, tm0, tn0, v.pre) };
                                assert!(ctas >= 1 && ctas <= 2 * 132);
                                if v.split {
                                    assert_eq!((ctas, pl.max_seg), (rule.ctas, rule.unit));
                                    assert!(rule.unit == 1 || rule.unit == ch);
                                    if rule.unit == 1 {
                                        assert!(ctas % tiles == 0 && (ctas / tiles) * ch <= k / 64, "an even split, a stage per part");
                                    } else {
                                        assert!(ctas <= tiles * ((k / 64 + ch - 1) / ch), "a stage per CTA");
                                    }
                                } else {
                                    assert_eq!(ctas, tiles.min(v.ctas_per_sm() as i64 * 132));
                                }
                                assert_eq!(split, (ctas + tiles - 1) / tiles, "the log's split: CTAs per tile");
                                // the smallest token tile that holds M: at M = 1 in bulk_tile_features'
                                // width (pinned below); 128 above; whole tiles: the 8 / 16-token
                                // tile, bulk_whole_tile's width where this frame has a variant of it
                                // (pinned below)
                                let tmw = bulk_whole_tile_tokens(&p);
                                let has = |w: u32| VARIANTS.iter().any(|x| x.family == Family::Bulk && x.tm == tmw && x.tn == w && x.zeros == v.zeros && x.pre == v.pre && x.dtype == v.dtype);
                                let want = match bulk_whole_tile(&p, 132, tn0, v.split) {
                                    Some(w) if has(w) => (tmw, w),
                                    Some(_) if has(tn0) => (tmw, tn0),
                                    _ => (tm0, tn0),
                                };
                                assert_eq!((v.tm, v.tn), want, "M={m} K={k} N={n}");
                                assert_eq!((pl.grid[1], pl.grid[2]), (1, 1));
                                assert_eq!(v.pre, g == 32, "post-scale wherever the group allows it");
                                if v.split {
                                    // kernels/split.cuh: one fp32 partial slot per CTA, one counter per tile
                                    assert!(pl.workspace_bytes >= ctas * (v.tm * v.tn) as i64 * 4 + tiles * 4);
                                } else {
                                    assert_eq!(pl.workspace_bytes, 0);
                                }
                            }
                            Family::Bwg => {
                                // bulk's persistent grid; bwg_tile_tokens' tile (the smallest that
                                // holds M, above 128 tokens a 128-256-token tile: pinned in
                                // bwg_routing_is_pinned); whole tiles, an even split (every part a
                                // stage deep) or stream-K (every CTA a stage)
                                // (at M = 41-64 on wide layers the 256-feature tile where the frame
                                // has its planned form: bwg_wide_features_tile, pinned in
                                // bwg_routing_is_pinned)
                                let want = match bwg_wide_features_tile(&p) {
                                    Some(tm) if v.tn == 256 => (tm, 256),
                                    _ => (bwg_tile_tokens(&p, 132), 128),
                                };
                                assert_eq!((v.tm, v.tn), want, "M={m} K={k} N={n}");
                                // (and at M = 33-64 the 32-token tile in two m-tiles: bwg_routing_is_pinned)
                                assert!((m <= v.tm as i64 && (m > v.tm as i64 / 2 || v.tm == 16)) || (m > 128 && v.tm >= 128) || ((33..=64).contains(&m) && v.tm == 32));
                                // post-scale wherever the group allows it, in the 16-48-token tiles
                                // (the 40-token tile's four-chunk stages hold groups of 128 or more)
                                assert_eq!(v.pre, g == 32 || v.tm > 48 || (v.tm == 40 && g == 64), "bwg post-scale: M={m} group {g}");
                                let tiles = (m + v.tm as i64 - 1) / v.tm as i64 * (n / v.tn as i64); // m-tiles x tiles
                                let slots = v.ctas_per_sm() as i64 * 132;
                                let ctas = pl.grid[0] as i64;
                                let ch = bwg_chunks_per_stage(v.tm, v.tn, v.p) as i64;
                                let rule = bwg_split(&p, 132, v);
                                assert_eq!(v.split, rule.split != 1);
                                assert_eq!((ctas, pl.total_warps), (rule.ctas, rule.split));
                                assert!(ctas >= 1 && ctas <= slots);
                                assert!(pl.max_seg >= 1, "the raster band");
                                assert_eq!((pl.grid[1], pl.grid[2]), (1, 1));
                                let tile_bytes = (v.tm * v.tn) as i64 * 4;
                                match rule.split {
                                    0 => {
                                        assert!(ctas <= tiles * ((k / 64 + ch - 1) / ch), "a stage per CTA");
                                        assert!(pl.workspace_bytes >= ctas * tile_bytes + tiles * 4);
                                        assert_eq!(pl.split, (ctas + tiles - 1) / tiles);
                                    }
                                    1 => {
                                        assert_eq!(ctas, tiles.min(slots));
                                        assert_eq!((pl.workspace_bytes, pl.split), (0, 1));
                                    }
                                    s => {
                                        assert!(ctas == tiles * s && s * ch <= k / 64, "an even split, a stage per part");
                                        assert!(pl.workspace_bytes >= tiles * s * tile_bytes + tiles * 4);
                                        assert_eq!(pl.split, s);
                                    }
                                }
                            }
                            Family::Wg => {
                                // tiles cover M and N once (a last half tile when N % 128 == 64)
                                let covered = pl.grid[0] as i64 * v.tm as i64;
                                assert!(covered >= m && covered - m < v.tm as i64);
                                let cn = pl.grid[1] as i64 * v.tn as i64;
                                assert!(cn >= n && cn - n < v.tn as i64);
                                // every split CTA gets at least one chunk; whole K: one CTA per tile
                                let split = pl.grid[2] as i64;
                                assert!(split >= 1 && split <= k / 64);
                                assert_eq!(split > 1 || v.split, v.split);
                                let tiles = pl.grid[0] as i64 * pl.grid[1] as i64;
                                // the raster band: at least one m-tile, at most all of them
                                assert!(pl.total_warps >= 1 && pl.total_warps <= pl.grid[0] as i64);
                                if v.split {
                                    assert!(pl.workspace_bytes >= tiles * split * (v.tm * v.tn) as i64 * 4 + tiles * 4);
                                } else {
                                    assert_eq!(pl.workspace_bytes, 0);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn split_workspace_holds_every_segment() {
    // For split plans, max_seg slots per stripe group must cover the most warps that can meet
    // one group: check by enumerating the kernel's own partition.
    for (m, k, n) in [(1, 4096, 4096), (16, 8960, 1536), (1, 1536, 1536), (8, 28672, 8192), (3, 64, 64)] {
        let p = problem(m, k, n, 64, false, DType::F16);
        let pl = plan(&p, &Caps { wgmma: false, ..Caps::uniform(132, 2) }).unwrap(); // the dec family's split
        let v = &VARIANTS[pl.variant];
        if !v.split {
            continue;
        }
        let (c, groups, wt) = (k / 64, n / v.tn as i64, pl.total_warps);
        let u = groups * c;
        let warp_of = |x: i64| ((x + 1) * wt + u - 1) / u - 1;
        for w in 0..wt {
            let (u0, u1) = (w * u / wt, (w + 1) * u / wt);
            assert!(u0 < u1, "warp {w} has no work");
            assert_eq!(warp_of(u0), w);
            assert_eq!(warp_of(u1 - 1), w);
        }
        for g in 0..groups {
            let segs = warp_of(g * c + c - 1) - warp_of(g * c) + 1;
            assert!(segs <= pl.max_seg, "group {g}: {segs} segments > {}", pl.max_seg);
        }
        let slot = (v.tn / 16 * v.tm / 8) as i64 * 512;
        assert!(groups * 4 <= WORKSPACE_TICKET_BYTES);
        assert!(pl.workspace_bytes >= WORKSPACE_TICKET_BYTES + groups * pl.max_seg * slot);
    }
}

#[test]
fn workspace_ticket_head_matches_the_kernels_and_holds_every_routed_split() {
    // kernels/params.cuh states the layout the planner sizes (src/plan/mod.rs split_workspace).
    let cuh = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/params.cuh")).unwrap();
    let line = cuh.lines().find(|l| l.contains("constexpr int64_t kWorkspaceTicketBytes")).expect("kWorkspaceTicketBytes in params.cuh");
    let c_value: i64 = line.split('=').nth(1).unwrap().trim().trim_end_matches(';').parse().unwrap();
    assert_eq!(c_value, WORKSPACE_TICKET_BYTES);
    // Every routed plan, decode to long prefill, on small and full SM counts, plans (a split plan
    // with more tiles than the head holds tickets is an Internal error) and puts its partials and
    // a gathered x above the head.
    let shapes = [(4096, 6144), (4096, 28672), (14336, 4096), (8192, 57344), (28672, 8192), (1536, 1536), (8960, 1536), (64, 64), (128, 65536)];
    let mut splits = 0;
    for (k, n) in shapes {
        for m in (1..=64).chain((65..=16384).step_by(61)).chain((16384..=131072).step_by(9973)) {
            for sms in [132, 16, 1] {
                let mut p = problem(m, k, n, 128.min(k), false, DType::F16);
                p.num_sms = Some(sms);
                let pl = plan(&p, &Caps::uniform(132, 2)).unwrap_or_else(|e| panic!("m {m} k {k} n {n} sms {sms}: {e}"));
                if pl.workspace_bytes > 0 {
                    splits += 1;
                    assert!(pl.workspace_bytes > WORKSPACE_TICKET_BYTES, "m {m} k {k} n {n}: {pl:?}");
                }
                if let Some(at) = pl.x_gather_at {
                    assert!(at >= WORKSPACE_TICKET_BYTES);
                }
            }
        }
    }
    assert!(splits > 100, "{splits} split plans: the sweep no longer reaches the split rules");
}

#[test]
fn decode_token_tile_is_the_smallest_that_holds_m() {
    for (m, tm) in [(1, 8), (8, 8), (9, 16), (16, 16), (17, 32), (32, 32), (33, 64), (64, 64)] {
        let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 2) };
        let pl = plan(&problem(m, 4096, 4096, 128, false, DType::F16), &sm80).unwrap();
        assert_eq!(VARIANTS[pl.variant].tm, tm, "M = {m}");
    }
}

#[test]
fn wg_tile_and_split_follow_the_cost_model() {
    // Small grids split K to fill the SMs; big M takes the big token tile and no split.
    let caps = Caps::uniform(132, 1);
    let small = plan(&problem(128, 4096, 4096, 128, false, DType::F16), &caps).unwrap();
    assert!(small.grid[0] as i64 * small.grid[1] as i64 * small.grid[2] as i64 >= 64, "{small:?}");
    let big = plan(&problem(4096, 8192, 57344, 128, false, DType::F16), &caps).unwrap();
    assert_eq!(VARIANTS[big.variant].tm, 256);
    assert_eq!(big.grid[2], 1);
    // Fewer SMs (the launch's resolved count) never means a larger split.
    let p = problem(256, 8192, 8192, 128, false, DType::F16);
    let (wide, narrow) = (plan(&p, &Caps::uniform(132, 1)).unwrap(), plan(&p, &Caps::uniform(16, 1)).unwrap());
    assert!(narrow.grid[2] <= wide.grid[2], "{narrow:?} vs {wide:?}");
}

#[test]
fn decode_family_routing_is_pinned() {
    // The measured routing: CTA tiles on the Llama shapes and the small Qwen2 projections,
    // the persistent split family on Qwen2-1.5B down (few long CTAs) up to 8 tokens.
    // Without wgmma/bulk copies (sm_80), and on Hopper for act-order frames (bulk serves neither).
    let caps = Caps { wgmma: false, ..Caps::uniform(132, 2) };
    for (k, n, family) in [
        (4096, 6144, Family::Dect),
        (4096, 4096, Family::Dect),
        (4096, 28672, Family::Dect),
        (14336, 4096, Family::Dect),
        (28672, 8192, Family::Dect),
        (1536, 2048, Family::Dect),
        (1536, 1536, Family::Dect),
        (8960, 1536, Family::Dec),
    ] {
        for m in [1, 8, 16] {
            let pl = plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap();
            let want = if (k, n, m) == (8960, 1536, 16) { Family::Dect } else { family };
            assert_eq!(VARIANTS[pl.variant].family, want, "M={m} K={k} N={n}");
        }
    }
    // dect's feature tile on Llama-8B o (N / 32 = 128 CTAs, just short of 132 SMs): 16 features
    // up to 8 tokens, 32 at 16 tokens (measured 8.4 vs 11.8 us, bench/NOTES.md "Session 4").
    for (m, tn) in [(1, 16), (8, 16), (16, 32)] {
        let v = &VARIANTS[plan(&problem(m, 4096, 4096, 128, false, DType::F16), &caps).unwrap().variant];
        assert_eq!((v.family, v.tn), (Family::Dect, tn), "M={m}");
    }
}

#[test]
fn dect_feature_tile_on_small_layers_is_pinned() {
    // Qwen2-1.5B qkv / o on Hopper (dect at M = 1-16): no tile gives 132 SMs a CTA, so the
    // narrowest (128 / 96 CTAs), which measured 2-17 % faster than 32 features
    // (bench/NOTES.md session 36); Llama-8B o at M = 16 keeps 32 features (one CTA an SM).
    let caps = Caps::uniform(132, 1);
    for (k, n) in [(1536, 2048), (1536, 1536)] {
        for m in [1, 2, 4, 8, 9, 16] {
            let v = &VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant];
            assert_eq!((v.family, v.tn), (Family::Dect, 16), "M={m} K={k} N={n}");
        }
    }
    let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 1) };
    let v = &VARIANTS[plan(&problem(16, 4096, 4096, 128, false, DType::F16), &sm80).unwrap().variant];
    assert_eq!((v.family, v.tn), (Family::Dect, 32));
    // dect_tile_rank itself: the boundary at one CTA an SM, on a token tile of 16
    let (n16, n32) = (VARIANTS.iter().find(|v| v.family == Family::Dect && v.tm == 16 && v.tn == 16).unwrap(), VARIANTS.iter().find(|v| v.family == Family::Dect && v.tm == 16 && v.tn == 32).unwrap());
    let p = problem(16, 1536, 2112, 128, false, DType::F16); // 132 CTAs of 16
    assert!(dect_tile_rank(n16, &p, 132) < dect_tile_rank(n32, &p, 132));
    let p = problem(16, 1536, 2176, 128, false, DType::F16); // 136 CTAs of 16, 68 of 32
    assert!(dect_tile_rank(n32, &p, 132) < dect_tile_rank(n16, &p, 132));
}

#[test]
fn wgmma_routing_above_m16_is_pinned() {
    // Measured (bench/NOTES.md, "routing M = 17-64"): wgmma from M = 17 on every Llama projection
    // and Qwen2-1.5B gate_up/down; the decode families keep Qwen2-1.5B qkv and o up to M = 64.
    // Since session 5 the bulk-fed wgmma family takes M = 17-32 where bwg_routing_is_pinned says.
    let caps = Caps::uniform(132, 2);
    for (k, n, wg) in [
        (4096, 6144, true),
        (4096, 4096, true),
        (4096, 28672, true),
        (14336, 4096, true),
        (8192, 10240, true),
        (28672, 8192, true),
        (1536, 17920, true),
        (8960, 1536, true),
        (1536, 2048, false),
        (1536, 1536, false),
    ] {
        for m in [17, 32, 33, 64] {
            let p = problem(m, k, n, 128, false, DType::F16);
            let f = VARIANTS[plan(&p, &caps).unwrap().variant].family;
            assert_eq!(f == Family::Wg, wg && !prefer_bwg(&p, 132), "M={m} K={k} N={n}: {f:?}");
        }
        // above 64 tokens: bwg wherever it serves (bwg_routing_is_pinned), else wg
        let f = VARIANTS[plan(&problem(65, k, n, 128, false, DType::F16), &caps).unwrap().variant].family;
        assert_eq!(f, Family::Bwg, "M=65 K={k} N={n}");
        // act order above 64 tokens: bwg on a copy of x gathered into the workspace (after the
        // split's slots), measured 10-15x faster than wg's in-loop gather (bench/NOTES.md session 9)
        let mut act = problem(65, k, n, 128, false, DType::F16);
        act.meta = FrameMeta::new(k, n, 128, false, true).unwrap();
        let pa = plan(&act, &caps).unwrap();
        assert_eq!(VARIANTS[pa.variant].family, Family::Bwg, "act order M=65 K={k} N={n}");
        let at = pa.x_gather_at.expect("act-order bwg plans gather x");
        let plain = plan(&problem(65, k, n, 128, false, DType::F16), &caps).unwrap();
        assert_eq!(plain.x_gather_at, None);
        assert_eq!(at, (plain.workspace_bytes.max(WORKSPACE_TICKET_BYTES) + 255) / 256 * 256, "the gathered copy follows the split's workspace, above the tickets");
        assert_eq!(pa.workspace_bytes, at + (65 * k * 2 + 255) / 256 * 256, "K={k} N={n}");
    }
    // where bwg does not serve (N % 128 != 0) act order runs wg on the gathered copy too
    // (act_order_plans_are_the_plain_plans_on_gathered_x)
    let mut act = problem(65, 4096, 320, 128, false, DType::F16);
    act.meta = FrameMeta::new(4096, 320, 128, false, true).unwrap();
    let pa = plan(&act, &caps).unwrap();
    assert_eq!((VARIANTS[pa.variant].family, pa.x_gather_at.is_some()), (Family::Wg, true), "act order M=65 N=320");
}

#[test]
fn act_order_plans_are_the_plain_plans_on_gathered_x() {
    // Hopper: a routed act-order call is planned as the same layer without act order, on x
    // gathered into the workspace after the plain plan's region (src/plan/mod.rs plan_uncached;
    // the in-loop gathers measured 2.7-24x the read at M = 1-16, bench/NOTES.md "Session 11").
    // Without wgmma (and for a forced variant) the families gather in their loops (no copy).
    let caps = Caps::uniform(132, 2);
    let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 2) };
    for (k, n) in [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096), (8960, 1536), (1536, 2048), (1536, 1536), (4096, 320), (28672, 8192)] {
        for m in [1, 2, 4, 8, 9, 16, 17, 32, 33, 64, 65, 300, 4096] {
            let plain = problem(m, k, n, 128, false, DType::F16);
            let mut act = plain;
            act.meta = FrameMeta::new(k, n, 128, false, true).unwrap();
            let pa = plan(&act, &caps).unwrap();
            if m <= ACT_IN_LOOP_MAX_M && k * n < ACT_IN_LOOP_BELOW_WEIGHTS {
                // small layers at the fewest tokens: a decode family's in-loop gather (Qwen2-1.5B qkv, o)
                assert_eq!(pa.x_gather_at, None, "M={m} K={k} N={n}");
                assert!(matches!(VARIANTS[pa.variant].family, Family::Dect | Family::Dec), "M={m} K={k} N={n}");
                continue;
            }
            let pp = plan(&plain, &caps).unwrap();
            assert_eq!((pa.variant, pa.grid, pa.total_warps, pa.max_seg), (pp.variant, pp.grid, pp.total_warps, pp.max_seg), "M={m} K={k} N={n}");
            let at = pa.x_gather_at.expect("act order gathers x");
            assert_eq!(pp.x_gather_at, None);
            assert_eq!(at, (pp.workspace_bytes.max(WORKSPACE_TICKET_BYTES) + 255) / 256 * 256, "the gathered copy follows the plan's workspace, above the tickets");
            assert_eq!(pa.workspace_bytes, at + (m * k * 2 + 255) / 256 * 256, "M={m} K={k} N={n}");
            if m <= DEC_MAX_M {
                let p80 = plan(&act, &sm80).unwrap();
                assert_eq!(p80.x_gather_at, None, "sm80 M={m}: the decode families gather in their loops");
            }
        }
    }
    // (a forced variant keeps its own path: tests/python/test_wg_x_path.py, on the GPU; forcing
    // here would race the other tests' plans, which share the process-wide override)
}

#[test]
fn plan_cache_is_fast_consistent_and_thread_safe() {
    let caps = Caps::uniform(132, 2);
    let p = problem(7, 4096, 6144, 128, true, DType::BF16);
    let first = plan(&p, &caps).unwrap();
    let t0 = std::time::Instant::now();
    let n = 20_000;
    for _ in 0..n {
        assert_eq!(plan(&p, &caps).unwrap(), first);
    }
    let per_call = t0.elapsed().as_secs_f64() / n as f64;
    assert!(per_call < 1e-6, "cached plan lookup took {:.0} ns", per_call * 1e9);
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let caps = caps.clone();
            std::thread::spawn(move || {
                for m in 1..=64 {
                    let p = problem(m, 1536 * (1 + t % 2), 2048, 64, t % 2 == 0, DType::F16);
                    let a = plan(&p, &caps).unwrap();
                    assert_eq!(a, plan(&p, &caps).unwrap());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn split_override_parses_or_names_the_rule() {
    use mate::plan::parse_dec_warps;
    assert_eq!(parse_dec_warps(None), Ok(None));
    assert_eq!(parse_dec_warps(Some("528")), Ok(Some(528)));
    assert_eq!(parse_dec_warps(Some(" 64 ")), Ok(Some(64)));
    for bad in ["0", "-3", "four", "", "1.5"] {
        assert_eq!(parse_dec_warps(Some(bad)), Err(bad.to_string()), "{bad:?}");
    }
}

#[test]
fn bwg_sliced_sum_is_pinned() {
    // The sliced-sum tiles (Variant::sliced, bwg_sliced): even splits, one CTA a part, whose
    // tile's partials pass BWG_SLICED_ABOVE_BYTES, on the tiles that have the variant (the
    // 32-token ring-first and (since session 43) plain split tiles, the 64-token pre-scaled split
    // tile). Qwen2-1.5B down at M = 17-32
    // (17 parts of 16 KB) and Llama-8B down at M = 33-64 (8 of 32 KB) take it; Llama-8B o at
    // M = 17-32 (8 of 16 KB: 128 KB) and Llama-70B o / down at M = 33-64 (4 of 32 KB) do not, nor
    // Qwen2-1.5B down at M = 9-16 (17 of 8 KB: the 16-token tile has none). Since session 41
    // Qwen2-1.5B down and Llama-8B qkv at M = 33-64 take the 64-token tile and its sliced sum (22
    // and 5 parts of 32 KB), Llama-70B qkv does not (3 parts). Since session 42 the 64-token tile
    // keeps the sliced sum where its parts are short enough for the ring-first rule (8192 x 1536:
    // 22 parts of 3 stages).
    let caps = Caps::uniform(132, 2);
    for (m, k, n, g, sliced, tm) in [
        (17, 8960, 1536, 128, true, 24),
        (24, 8960, 1536, -1, true, 24),
        (32, 8960, 1536, 64, true, 32),
        (33, 14336, 4096, 128, true, 40),
        (48, 14336, 4096, 32, true, 48),
        (64, 14336, 4096, 128, true, 64),
        (24, 4096, 4096, 128, false, 24),
        (32, 4096, 4096, 128, false, 32),
        (48, 8192, 8192, 128, false, 48),
        (64, 28672, 8192, 128, false, 64),
        (16, 8960, 1536, 128, false, 16),
        (48, 8960, 1536, 128, true, 48),
        (64, 8960, 1536, 32, true, 64),
        (33, 4096, 6144, 128, false, 40),
        (48, 8192, 10240, 128, false, 48),
        (32, 4096, 6144, 128, false, 32),
        // parts of at most 3 stages (bwg_ring_first says ring, the 64-token tile has no ring form):
        // still sliced (session 42: they fell back to the plain split before)
        (33, 8192, 1536, 128, true, 40),
        (64, 4096, 3072, 128, true, 64),
        (48, 4096, 2048, 128, true, 48),
        // since session 43 the 32-token plain split tile has a sliced form too: deep narrow layers
        // at M = 17-32 whose parts are too deep for the ring-first rule (9-33 parts of 16 KB)
        (24, 28672, 1024, 128, true, 24),
        (17, 14336, 2048, -1, true, 24),
        (32, 8960, 3072, 64, true, 32),
    ] {
        for (zp, dt) in [(false, DType::F16), (true, DType::BF16)] {
            let p = problem(m, k, n, g, zp, dt);
            let pl = plan(&p, &caps).unwrap();
            let v = &VARIANTS[pl.variant];
            assert_eq!((v.family, v.tm, v.sliced), (Family::Bwg, tm, sliced), "M={m} K={k} N={n} g={g} zp={zp}: {}", v.symbol);
            let s = bwg_split(&p, 132, v);
            let bytes = s.split * (v.tm * v.tn) as i64 * 4;
            assert_eq!(bwg_sliced(&p, 132, v), s.split > 1 && bytes > BWG_SLICED_ABOVE_BYTES, "M={m} K={k} N={n}");
            if v.sliced {
                // every part its own CTA (kernels/bwg.cuh sums sliced only then), the same plan as
                // the tile's ticket form
                assert_eq!(pl.grid[0] as i64, s.ctas, "M={m} K={k} N={n}");
                assert_eq!(s.ctas, (m + v.tm as i64 - 1) / v.tm as i64 * (n / v.tn as i64) * s.split, "M={m} K={k} N={n}");
                assert!(v.split && !v.stream_k, "{}", v.symbol);
            }
        }
    }
    // a sliced variant's twin (the same tile with the ticket) exists for every sliced variant
    for v in VARIANTS.iter().filter(|v| v.sliced) {
        assert!(
            VARIANTS.iter().any(|w| !w.sliced && w.family == v.family && (w.dtype, w.zeros, w.tm, w.tn, w.wk, w.p, w.pre, w.ring_first)
                == (v.dtype, v.zeros, v.tm, v.tn, v.wk, v.p, v.pre, v.ring_first) && w.split && !w.stream_k),
            "{} has no ticket twin",
            v.symbol
        );
        assert_eq!(v.dynamic_smem(), VARIANTS.iter().find(|w| w.symbol == v.symbol.trim_end_matches("_sl")).unwrap().dynamic_smem());
    }
}

#[test]
fn bwg_pairs_are_pinned() {
    // The paired even split (bwg_paired, Plan::cluster = 2): the 128-256-token tiles' even splits
    // in two parts, one CTA each. Llama-70B o / down at M = 128-256 (64 tiles x 2), Llama-8B o at
    // M = 256 (the 128-token tile, bwg_tile_tokens: 64 tiles x 2); not the four-part splits
    // (Llama-8B o at M = 128, down at M = 128-256: 32 tiles x 4), stream-K plans (Llama-8B
    // qkv at M = 128, gate_up, Llama-70B qkv at M = 128-256), whole tiles (M >= 1024 on o / down)
    // or the tiles below 128 tokens; grids of whole pairs. Where stream-K would save fewer stages
    // than its fix-up costs (bwg_sk_fixup_stages) the pair serves: Llama-8B qkv at M = 256 (16
    // stages against 12); stream-K stays at 8192 x 6144 (M = 256: 32 against 24). The 128-token
    // tile's pair serves 2048 x 6144 at M = 128 (6 stages of 3 chunks against stream-K's 4 + 3);
    // Llama-8B qkv at M = 128 stays stream-K (11 against 8 + 3).
    let caps = Caps::uniform(132, 2);
    for (m, k, n, paired) in [
        (128, 8192, 8192, true),
        (256, 8192, 8192, true),
        (128, 28672, 8192, true),
        (256, 28672, 8192, true),
        (128, 4096, 4096, false),
        (256, 4096, 4096, true),
        (256, 14336, 4096, false),
        (128, 14336, 4096, false),
        (256, 4096, 6144, true),
        (128, 4096, 6144, false),
        (256, 8192, 6144, false),
        (128, 2048, 6144, true),
        (128, 4096, 28672, false),
        (256, 8192, 10240, false),
        (1024, 4096, 4096, false),
        (4096, 8192, 8192, false),
        (64, 14336, 4096, false),
        (32, 8960, 1536, false),
    ] {
        for (zp, dt) in [(false, DType::F16), (true, DType::BF16)] {
            let p = problem(m, k, n, 128, zp, dt);
            let pl = plan(&p, &caps).unwrap();
            let v = &VARIANTS[pl.variant];
            assert_eq!(pl.cluster == 2, paired, "M={m} K={k} N={n} zp={zp}: {} split {}", v.symbol, pl.split);
            assert!(pl.cluster == 1 || pl.cluster == 2, "M={m} K={k} N={n}");
            if paired {
                let s = bwg_split(&p, 132, v);
                assert!(v.tm >= 128 && s.split == 2 && pl.grid[0] % 2 == 0, "M={m} K={k} N={n}");
                assert_eq!(pl.workspace_bytes, 0, "M={m} K={k} N={n}: the pairs' partials stay in shared memory");
                assert_eq!(s.ctas, (m + v.tm as i64 - 1) / v.tm as i64 * (n / v.tn as i64) * s.split, "M={m} K={k} N={n}");
            }
        }
    }
}

#[test]
fn bwg_routing_is_pinned() {
    // Hopper: bulk-fed wgmma at M = 17-32 on layers of >= 2^23 weights (every Llama shape, Qwen2-1.5B
    // gate_up and down), at M = 33-64 on the same layers (32-token m-tiles on those of 2^23-2^24
    // weights with K <= N: Llama-8B o; 64-token tiles on the deeper ones and, since session 41, on
    // the larger wide ones of K >= 4096 wg had served: Llama-8B qkv / gate_up, 70B qkv; since
    // session 42 the shallow wide ones whose 32-token plan is stream-K over at most 1.5 rounds of
    // the slots take its two m-tiles: Qwen2-1.5B gate_up; wg keeps the rest), and at M = 9-16 on layers of 2^23 to under 2^27 weights with fewer
    // tiles than SMs (Llama-8B qkv, down, Qwen2-1.5B down; session 12 added down, session 36
    // Llama-70B qkv; not where dect's 32-feature CTAs fill one wave over K <= 4096: Llama-8B o
    // since session 42); at M = 2-8 on
    // 2^23-2^25 weights unless dect fills one wave over K <= 4096, where bulk does not serve (none of these layers since
    // bulk's 8-token x 32-feature tiles took Qwen2-1.5B down, session 12), and above
    // M = 64 wherever N % 128 == 0; measured, bench/NOTES.md "Session 5", "Session 8", "Session 11".
    // M = 1 and devices without wgmma never (act order: act_order_plans_are_the_plain_plans_on_gathered_x).
    let caps = Caps::uniform(132, 2);
    let fam = |m, k, n| VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant].family;
    for (k, n, m2_8, m9_16, m17_32, m33_64) in [
        (4096, 6144, false, true, true, true),
        (4096, 4096, false, false, true, true),
        (4096, 28672, false, false, true, true),
        (14336, 4096, false, true, true, true),
        (8192, 10240, false, true, true, true),
        (8192, 8192, false, true, true, true),
        (8192, 57344, false, false, true, true),
        (28672, 8192, false, false, true, true),
        (1536, 17920, false, false, true, true),
        (8960, 1536, false, true, true, true),
        (1536, 2048, false, false, false, false),
        (1536, 1536, false, false, false, false),
    ] {
        for m in [1, 2, 8, 9, 16, 17, 24, 32, 33, 64, 65, 128, 129, 4096] {
            let want = match m {
                2..=8 => m2_8,
                9..=16 => m9_16,
                17..=32 => m17_32,
                33..=64 => m33_64,
                1 => false,
                _ => true,
            };
            assert_eq!(fam(m, k, n) == Family::Bwg, want, "M={m} K={k} N={n}");
        }
    }
    // M = 9-16 where dect's 32-feature CTAs fill one wave over K <= 4096: dect, not bwg (session 42);
    // deeper or wider layers keep bwg
    for (m, k, n, fam) in [
        (9, 2048, 4096, Family::Dect),
        (16, 4096, 4096, Family::Dect),
        (16, 4096, 3072, Family::Dect),
        (16, 8192, 4096, Family::Bwg),
        (16, 4096, 4608, Family::Bwg),
    ] {
        let v = &VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant];
        assert_eq!(v.family, fam, "M={m} K={k} N={n}: {}", v.symbol);
    }
    // the shallow wide layers at M = 33-64: the 32-token tile where its plan is stream-K over at
    // most 1.5 rounds of the slots (bwg_m32_streamk), wg where it would be stream-K over more
    // (2560 x 28672: 448 tiles), an even split (3072 x 8192, 3584 x 6144) or whole tiles (1536 x
    // 28672; group 32, whose pre-scaled 32-token tile has no stream-K form: Qwen2-1.5B gate_up)
    for (m, k, n, g, kind) in [
        (48, 1536, 17920, 128, "sk"),
        (33, 3584, 18944, 128, "sk"),
        (64, 3072, 13824, 128, "n256"),
        (48, 2560, 28672, 128, "wg"),
        (48, 3072, 8192, 128, "wg"),
        (48, 3584, 6144, 128, "wg"),
        (48, 1536, 28672, 128, "wg"),
        (48, 3072, 16384, 128, "wg"),
        (48, 1536, 17920, 32, "wg"),
    ] {
        let v = &VARIANTS[plan(&problem(m, k, n, g, false, DType::F16), &caps).unwrap().variant];
        let got = match (v.family, v.tm, v.stream_k, v.split) {
            (Family::Wg, _, _, _) => "wg",
            (Family::Bwg, _, _, _) if v.tn == 256 => "n256",
            (Family::Bwg, 32, true, _) => "sk",
            (Family::Bwg, 32, false, true) => "split",
            _ => "other",
        };
        assert_eq!(got, kind, "M={m} K={k} N={n} group {g}: {}", v.symbol);
    }
    // M = 41-64 on layers of >= 6144 features and >= 2^25 weights: the 256-feature tile (48 tokens
    // up to M = 48, 56 up to 56, else 64, bwg_wide_features_tile) in the form bwg_split plans (whole tiles, the
    // even split or stream-K; the 256-feature tiles take stream-K instead of whole tiles that leave
    // SMs idle, at most 87 % of the stages at 48 / 56 tokens, 75 % at 64); fp16 or bf16, with or without zero
    // points, groups >= 64 at 48 / 56 tokens (exact form; group 32 pre-scaled at 56), all at 64
    // (pre-scaled); elsewhere the
    // 128-feature tiles
    for (m, k, n, g, zeros, dtype, want) in [
        (41, 8192, 10240, 128, false, DType::F16, "m48_n256_sk"),
        (48, 4096, 28672, 128, false, DType::F16, "m48_n256_whole"),
        (48, 3584, 18944, 128, false, DType::F16, "m48_n256_sk"),
        (44, 8192, 8192, 128, false, DType::F16, "m48_n256_split"),
        (48, 8192, 57344, 128, false, DType::F16, "m48_n256_sk"),
        (48, 8192, 57344, -1, false, DType::F16, "m48_n256_sk"),
        (49, 8192, 8192, 128, false, DType::F16, "m56_n256_split"),
        (56, 8192, 10240, 128, false, DType::F16, "m56_n256_sk"),
        (56, 8192, 10240, 32, false, DType::F16, "m56_n256_sk_pre"),
        (57, 8192, 8192, 128, false, DType::F16, "m64_n256_split_pre"),
        (64, 8192, 57344, 128, false, DType::F16, "m64_n256_whole_pre"),
        (64, 8192, 57344, 64, false, DType::F16, "m64_n256_whole_pre"),
        (56, 4096, 28672, 128, false, DType::F16, "m56_n256_whole"), // 14 of 16 stages: 87.5 %
        (52, 8192, 57344, 128, false, DType::F16, "m56_n256_sk"), // 55 of 64: 86 %
        (60, 4096, 28672, 128, false, DType::F16, "m64_n256_whole_pre"),
        (64, 3584, 18944, 128, false, DType::F16, "m64_n256_sk_pre"),
        (48, 8192, 8192, 128, true, DType::F16, "m48_n256_split"),
        // not: narrow or small layers, group 32 at 48 tokens (no pre-scaled 48-token 256-feature
        // tile), M = 33-40
        (48, 4096, 6144, 128, false, DType::F16, "m48_n128_split"),
        (48, 14336, 4096, 128, false, DType::F16, "m48_n128_split_sl"),
        (48, 28672, 2560, 128, false, DType::F16, "m48_n128_split_sl"),
        (48, 8192, 10240, 32, false, DType::F16, "m48_n128_sk_pre"),
        (48, 8192, 10240, 128, false, DType::BF16, "m48_n256_sk"),
        (48, 8192, 10240, 128, true, DType::F16, "m48_n256_sk"),
        (64, 8192, 10240, 64, true, DType::BF16, "m64_n256_split_pre"),
        (64, 8192, 10240, 32, true, DType::BF16, "m64_n256_split_pre"),
        (40, 8192, 10240, 128, false, DType::F16, "m40_n128_"),
    ] {
        let v = &VARIANTS[plan(&problem(m, k, n, g, zeros, dtype), &caps).unwrap().variant];
        assert!(v.family == Family::Bwg && v.symbol.contains(want), "M={m} K={k} N={n} group {g} zeros {zeros} {dtype:?}: {} (want {want})", v.symbol);
    }
    // the smallest token tile that holds M, but at M = 33-64 32-token m-tiles up to 2^24 weights
    // with K <= N or where the 32-token plan is stream-K on shallow wide layers, the 64-token tile on
    // deeper layers and larger ones of K >= 4096 (and above 128 tokens in steps of 16 tokens)
    for (m, k, n, tm) in [
        (9, 4096, 6144, 16),
        (16, 4096, 6144, 16),
        (17, 4096, 6144, 24),
        (24, 4096, 6144, 24),
        (25, 4096, 6144, 32),
        (32, 4096, 6144, 32),
        (33, 4096, 4096, 32),
        (64, 4096, 4096, 32),
        (33, 2048, 4096, 32),
        (48, 8960, 1536, 48),
        (33, 1536, 17920, 32),
        (64, 4096, 2048, 64),
        (33, 4096, 6144, 40),
        (40, 4096, 6144, 40),
        (41, 4096, 6144, 48),
        (48, 4096, 6144, 48),
        (49, 4096, 6144, 56),
        (56, 4096, 6144, 56),
        (57, 4096, 6144, 64),
        (64, 4096, 6144, 64),
        (64, 14336, 4096, 64),
        (65, 4096, 6144, 128),
        (128, 4096, 6144, 128),
        (129, 4096, 6144, 144),
        (4096, 4096, 6144, 256),
    ] {
        let v = &VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant];
        assert_eq!((v.family, v.tm), (Family::Bwg, tm), "M={m} K={k} N={n}");
    }
    // above 128 tokens the 128-token tile where the 256-token tile's planned split makes parts of
    // at most 16 chunks and the last 128-token m-tile is at least half full (bwg_m256_shallow):
    // Llama-8B o at M = 192-256 (4 parts of 16), Qwen2-1.5B
    // o / qkv / down and K = 4096 layers of 2048 / 3072 features (6-11 parts of 3-13); not
    // Llama-8B qkv / down, K >= 6144 at N = 4096 (parts of 21-56), the whole or paired 256-token
    // plans (Llama-8B gate_up, Llama-70B, M = 512 on Llama-8B o and on K = 2048 x N = 4096: two
    // 256-token parts of 16 chunks). Elsewhere above 128 tokens a wide tile (272-320) where it
    // saves one of two or three m-tiles and its CTAs get 48 chunks or more (bwg_wide_tile: not
    // Llama-8B qkv / o at M = 257-320 or o at 513-640), else the smallest tile (144-256 in steps
    // of 16) with as few m-tiles as the 256-token tile (bwg_large_tile)
    for (m, k, n, tm) in [
        (129, 4096, 6144, 144),
        (144, 4096, 6144, 144),
        (145, 4096, 6144, 160),
        (160, 4096, 4096, 160),
        (161, 4096, 6144, 176),
        (177, 4096, 6144, 192),
        (192, 4096, 28672, 192),
        (193, 4096, 6144, 208),
        (209, 4096, 6144, 224),
        (225, 4096, 6144, 240),
        (241, 4096, 6144, 256),
        (257, 4096, 6144, 144),
        (288, 4096, 28672, 288),
        (288, 4096, 4096, 144),
        (288, 8192, 8192, 288),
        (289, 4096, 6144, 160),
        (320, 4096, 28672, 320),
        (300, 14336, 4096, 304),
        (272, 4096, 28672, 272),
        (264, 8192, 8192, 272),
        (273, 14336, 4096, 288),
        (304, 4096, 28672, 304),
        (305, 8192, 8192, 320),
        (340, 8192, 28672, 176),
        (340, 4096, 6144, 176),
        (321, 4096, 6144, 176),
        (353, 4096, 6144, 192),
        (384, 8192, 10240, 192),
        (384, 8192, 8192, 192),
        (385, 4096, 6144, 208),
        (417, 4096, 6144, 224),
        (448, 4096, 28672, 224),
        (449, 4096, 28672, 240),
        (481, 4096, 28672, 256),
        (513, 8192, 8192, 272),
        (544, 8192, 8192, 272),
        (545, 8192, 8192, 288),
        (600, 8192, 8192, 304),
        (576, 8192, 8192, 288),
        (576, 4096, 4096, 192),
        (640, 8192, 8192, 320),
        (704, 8192, 28672, 240),
        (640, 4096, 28672, 320),
        (705, 8192, 28672, 240),
        (4096, 8192, 28672, 256),
        (800, 8192, 8192, 208),
        (900, 8192, 8192, 240),
        (1024, 8192, 8192, 256),
        (256, 4096, 4096, 128),
        (192, 4096, 4096, 128),
        (176, 4096, 4096, 176), // the last 128-token m-tile under half full
        (160, 2048, 4096, 160),
        (320, 1536, 1536, 128),
        (256, 1536, 1536, 128),
        (256, 1536, 2048, 128),
        (256, 8960, 1536, 128),
        (256, 4096, 2048, 128),
        (256, 4096, 3072, 128),
        (256, 4096, 6144, 256),
        (256, 14336, 4096, 256),
        (256, 6144, 4096, 256),
        (256, 4096, 28672, 256),
        (256, 8192, 8192, 256),
        (256, 28672, 8192, 256),
        (512, 4096, 4096, 256),
        (512, 2048, 4096, 256),
        (512, 1536, 1536, 128),
        (1024, 4096, 6144, 256),
    ] {
        for (zp, dt) in [(false, DType::F16), (true, DType::BF16)] {
            let p = problem(m, k, n, 128, zp, dt);
            let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
            assert_eq!((v.family, v.tm), (Family::Bwg, tm), "M={m} K={k} N={n} zp={zp}");
        }
    }
    // (the 64-token tile's plan is stream-K, `_sk_pre`, only where whole tiles fall unevenly on
    // the SMs: Llama-70B gate_up, 448 tiles, bwg_split; since session 41 also the wide layers of
    // K >= 4096, Llama-8B qkv / gate_up, 70B qkv, and Qwen2-1.5B down; since session 48 the
    // 48-token tile up to 48 tokens, since session 50 the 40 / 56-token tiles up to 40 / 56 tokens
    // (bwg_m33_64_tokens), with the same plans, but for Llama-70B qkv: stream-K instead of its deep
    // even split on the 40-56-token tiles, as on the 32-token one (BWG_SK_DEEP_MAX_RATIO_PCT_M40_56:
    // 20 against 22 stages); Llama-70B down (55 against 56), o (16 / 16) and 8B down (14 / 14) keep
    // their even splits)
    for m in [33, 40, 41, 48, 49, 56, 57, 64] {
        for (k, n, sk) in [
            (14336, 4096, false),
            (8192, 8192, false),
            (28672, 8192, false),
            (8192, 57344, true),
            (4096, 6144, false),
            (4096, 28672, false),
            (8192, 10240, m <= 56),
            (8960, 1536, false),
            // the bound's edge: 7168 x 7168 12 against 14 stages; 8192 x 6144 12 / 13 (92.3 %) and
            // 28672 x 2560 17 / 18 stay (the latter measured 1.04x slower on stream-K). Since
            // session 52 the 40-token exact tile's stages are four chunks; its parts count in
            // two-chunk stages (BWG_SK_DEEP_STAGE_CHUNKS_M40_56), so 7168 x 7168 (28 chunks a part)
            // and 8192 x 6144 (26: 6 of its own stages on stream-K against 7) take stream-K at M = 33-40
            (7168, 7168, m <= 56),
            (8192, 6144, m <= 40),
            // ... but not where the even split sums its partials sliced (bwg_sliced): 14336 x 3584
            // (9 parts) measured 1.02-1.03x slower on stream-K at M = 33 / 40
            (14336, 3584, false),
            (28672, 2560, false),
        ] {
            for (zp, dt) in [(false, DType::F16), (true, DType::BF16)] {
                let p = problem(m, k, n, 128, zp, dt);
                let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
                if v.tn == 256 {
                    // the 256-feature tiles (f16 symmetric, wide layers): pinned above
                    assert!(bwg_wide_features_tile(&p).is_some(), "M={m} K={k} N={n}");
                    continue;
                }
                let tm = [40, 48, 56, 64][(m as usize - 33) / 8];
                assert_eq!(tm, bwg_m33_64_tokens(m), "M={m}");
                assert_eq!((v.family, v.tm, v.stream_k), (Family::Bwg, tm, sk), "M={m} K={k} N={n}");
                assert_eq!(v.stream_k, bwg_split(&p, 132, v).split == 0, "M={m} K={k} N={n}");
            }
        }
    }
    // The 32-token tile's variants. Ring-first where a split part is at most 3 stages
    // (bwg_ring_first): 2048 x 6144 (5 parts of 2 stages; 48 tiles, too few for bwg_one_an_sm);
    // not Llama-8B o and Qwen2-1.5B down at M = 17-32 (one CTA an SM: 4 stages a part), Llama-8B
    // qkv (4), 8B down (7), 70B o (8), the M = 33-64 m-tiles of 8B o (4), whole
    // tiles (gate_up). Stream-K (`_sk`) instead of whole tiles that fall unevenly on the SMs
    // (bwg_split, BWG_SK_SMALL_MAX_RATIO_PCT): Llama-70B gate_up (448 tiles) and Qwen2-1.5B gate_up
    // (140) at M = 17-32; not Llama-8B gate_up (224 tiles: 14 of 16 stages). Instead of an even
    // split only where its parts are deep (BWG_SK_DEEP_PART_STAGES, BWG_SK_DEEP_MAX_RATIO_PCT):
    // Llama-70B qkv (3 parts of 11 stages vs 10), K x N = 4096 x 14336, 8192 x 14336, 14336 x 12288
    // (session 37, 0.85-0.98x); not Llama-8B qkv / down (4 / 7 stages), 70B o (8 vs 8) or
    // 28672 x 11264 (an even split fills the slots). Neither at group 32 (the pre-scaled tile has
    // none). f16 / bf16 with zero points.
    for (m, k, n, g, ring, sk) in [
        (24, 2048, 6144, 128, true, false),
        (17, 4096, 4096, 128, false, false),
        (24, 4096, 4096, 128, false, false),
        (32, 4096, 4096, -1, false, false),
        (17, 8960, 1536, 128, false, false),
        (32, 8960, 1536, 64, false, false),
        (32, 4096, 6144, 128, false, false),
        (32, 14336, 4096, 128, false, false),
        (32, 8192, 8192, 128, false, false),
        (48, 4096, 4096, 128, false, false),
        (64, 4096, 4096, 128, false, false),
        (32, 4096, 28672, 128, false, false),
        (32, 4096, 4096, 32, false, false),
        (17, 8192, 57344, 128, false, true),
        (32, 8192, 57344, 128, false, true),
        (24, 1536, 17920, -1, false, true),
        (32, 1536, 17920, 64, false, true),
        (32, 8192, 57344, 32, false, false),
        (24, 8192, 10240, 128, false, true),
        (32, 8192, 10240, 128, false, true),
        (32, 4096, 14336, 128, false, true),
        (32, 8192, 14336, 128, false, true),
        (32, 14336, 12288, 128, false, true),
        (32, 28672, 11264, 128, false, false),
        (32, 8192, 10240, 32, false, false),
    ] {
        for (zp, dt) in [(false, DType::F16), (true, DType::BF16)] {
            let p = problem(m, k, n, g, zp, dt);
            let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
            // M = 17-24 on the 24-token tile, which has every kind of the 32-token one
            let tm = if m <= 24 { 24 } else { 32 };
            assert_eq!((v.family, v.tm, v.ring_first, v.stream_k), (Family::Bwg, tm, ring, sk), "M={m} K={k} N={n} g={g} zp={zp}");
            assert_eq!(v.ring_first, v.split && !v.pre && bwg_ring_first(&p, 132, v), "M={m} K={k} N={n}");
            assert_eq!(v.stream_k, bwg_split(&p, 132, v).split == 0, "M={m} K={k} N={n}");
        }
    }
    let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 2) };
    assert_ne!(VARIANTS[plan(&problem(32, 4096, 28672, 128, false, DType::F16), &sm80).unwrap().variant].family, Family::Bwg);
    // The split (bwg_split): an even split where the tiles leave resident slots free (S = slots /
    // tiles CTAs per tile, each a stage deep); in the 128-256-token tiles stream-K over stages on
    // every slot where it takes >= 10 % of the stages off the busiest CTA, after all full rounds
    // but the last taken whole (the 32-token tile: instead of whole tiles, >= 13 %, or of an even
    // split whose parts are >= 8 stages deep, >= 5 %); else
    // whole tiles.
    let split = |m, k, n| {
        let p = problem(m, k, n, 128, false, DType::F16);
        let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
        let s = bwg_split(&p, 132, v);
        (s.ctas, s.split)
    };
    assert_eq!(split(128, 8192, 10240), (132, 0)); // 80 tiles of 64 stages: 39 not 64
    assert_eq!(split(128, 4096, 6144), (132, 0)); // 48 tiles, 2 each: 16 stages; stream-K 12
    assert_eq!(split(128, 4096, 28672), (132, 0)); // 224 tiles: 2 rounds of 32 stages vs 55
    assert_eq!(split(1024, 8192, 10240), (132, 0)); // 320 tiles: 3 rounds of 64 vs 64 + 92
    assert_eq!(split(128, 4096, 4096), (128, 4)); // 32 tiles, 4 each: 8 stages; stream-K 8
    assert_eq!(split(128, 28672, 8192), (128, 2)); // 64 tiles, 2 each: 112 stages; stream-K 109
    assert_eq!(split(1024, 4096, 4096), (128, 1)); // 4 x 32 tiles on 132 slots: one round
    assert_eq!(split(4096, 4096, 28672), (132, 1)); // 3584 tiles: 896 stages vs 869
    assert_eq!(split(32, 4096, 28672), (224, 1)); // 32-token tiles: whole (224 tiles, stream-K 14 of 16 stages)
    assert_eq!(split(32, 8192, 57344), (264, 0)); // 448 tiles: stream-K 55 of 64 stages
    assert_eq!(split(32, 1536, 17920), (264, 0)); // 140 tiles: stream-K 4 of 6 stages
    assert_eq!(split(32, 8192, 10240), (264, 0)); // 80 tiles split 3 ways: 11 stages; stream-K 10
    assert_eq!(split(32, 28672, 11264), (264, 3)); // 88 tiles, 3 each: every slot busy
    assert_eq!(split(16, 4096, 6144), (240, 5)); // 48 tiles, 5 each: 4 stages
    // one CTA an SM (bwg_one_an_sm), those plans alone on their SMs (Plan::alone): the 16 / 32-token
    // tiles where such parts are <= 16 chunks deep and fill >= 90 % of the SMs (with overlap, from
    // 3 parts a tile); the 64-token tile without overlap only, <= 14 chunks; else the slots' split
    let ctx = |m, k, n, overlap| {
        let p = Problem { overlap, ..problem(m, k, n, 128, false, DType::F16) };
        let a = plan(&p, &caps).unwrap();
        let s = bwg_split(&p, 132, &VARIANTS[a.variant]);
        (s.ctas, s.split, a.alone)
    };
    let both = |m, k, n| {
        let (a, b) = (ctx(m, k, n, true), ctx(m, k, n, false));
        assert_eq!(a, b, "M = {m}, K = {k}, N = {n}: the same split in both launch contexts");
        a
    };
    assert_eq!(both(16, 8960, 1536), (132, 11, true)); // Qwen2-1.5B down: 13 chunks a part (the slots' 17 parts: 9)
    assert_eq!(both(12, 7168, 2048), (128, 8, true)); // 16 tiles: 14 chunks a part
    assert_eq!(both(16, 4096, 6144), (240, 5, false)); // 48 tiles: 2 a CTA would leave 36 SMs idle
    assert_eq!(both(16, 14336, 4096), (256, 8, false)); // 32 tiles: 4 parts of 56 chunks
    assert_eq!(both(24, 4096, 4096), (128, 4, true)); // the 32-token tile: Llama-8B o, 4 parts of 16 chunks
    assert_eq!(both(32, 8960, 1536), (132, 11, true));
    assert_eq!(both(24, 4096, 6144).2, false); // 48 tiles: the fill bound
    assert_eq!(ctx(16, 2048, 8192, false), (128, 2, true)); // 64 tiles: 2 parts of 16 chunks
    assert_eq!(ctx(16, 2048, 8192, true), (256, 4, false)); // with overlap 2 parts lost 1.09-1.13x
    // the 64-token tile
    assert_eq!(ctx(48, 8960, 1536, false), (132, 11, true)); // Qwen2-1.5B down
    assert_eq!(ctx(48, 8960, 1536, true), (264, 22, false)); // with overlap the slots' split
    assert_eq!(ctx(64, 8192, 1536, false), (132, 11, true));
    assert_eq!(ctx(64, 7168, 2048, false), (128, 8, true)); // 14 chunks
    assert_eq!(ctx(64, 8192, 2048, false).2, false); // 16 chunks: 1.04-1.05x
    assert_eq!(both(48, 14336, 4096), (256, 8, false)); // Llama-8B down: 4 parts of 56 chunks lose (31.8 us against 25.7)
    assert!(!both(64, 8192, 8192).2); // Llama-70B o: 2 parts of 64 chunks lose (34.7 us against 28.3)
    assert_eq!((bwg_streamk_whole_tiles(3584, 132), bwg_streamk_whole_tiles(263, 132), bwg_streamk_whole_tiles(264, 132)), (3432, 0, 132));
}

#[test]
fn bulk_routing_is_pinned() {
    // Hopper: the bulk-copy family at M = 1 on layers of >= 2^24 weights, and from 2^23 where dect
    // would not fill the SMs (measured, bench/NOTES.md "bulk", "Session 12"); at M = 2-16 (128-feature tiles)
    // on layers of > 2^24 weights (bench/NOTES.md "Session 4"); at M = 2-8 in 8-token x 32-feature
    // tiles where bulk_narrow_multi says (Qwen2-1.5B down too; bench/NOTES.md "Session 12"). The small Qwen2-1.5B qkv/o, M > 16 and act-order frames stay on the other
    // families.
    let caps = Caps::uniform(132, 2);
    // (M = 9-16 on Llama-8B qkv goes to bwg since session 5: bwg_routing_is_pinned.)
    for (k, n, m1, m2, m8, m9_16) in [
        (4096, 6144, true, true, true, false),
        (4096, 4096, true, true, false, false),
        (4096, 28672, true, true, true, true),
        (14336, 4096, true, true, true, false),
        (8192, 57344, true, true, true, true),
        (28672, 8192, true, true, true, true),
        (1536, 17920, true, true, true, true),
        (8960, 1536, true, true, true, false),
        // 2^23-2^24 weights at M = 1 (since session 43): bulk where dect's 32-feature CTAs would
        // not fit one wave over K <= 4096 (3584 x 4608: 144 CTAs) or fit it over K > 2048, dect
        // where they fit it over K <= 2048
        (3584, 4608, true, true, true, false),
        (4096, 3072, true, true, false, false), // (bulk_m1_dect_wave, launch_context_routing_is_pinned)
        (2048, 4096, false, false, false, false), // (M = 2-4 dect since session 45: bulk_narrow_multi)
        (1536, 2048, false, false, false, false),
        (1536, 1536, false, false, false, false),
    ] {
        for m in [1, 2, 8, 9, 16, 17] {
            let v = &VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant];
            let want = match m {
                1 => m1,
                2 => m2,
                8 => m8,
                9..=16 => m9_16,
                _ => false,
            };
            assert_eq!(v.family == Family::Bulk, want, "M={m} K={k} N={n}");
        }
    }
    // M = 2-8: 8-token x 32-feature tiles on layers of 2^23-2^26 weights at M = 2, at M = 3-4
    // where the tiles fit one round of the slots, at M = 5-8 a quarter of it, or (since session
    // 43) where dect's 32-feature CTAs would not fit one wave, half of it below 2^25 weights
    // (8192 x 2560, 7168 x 4096) or all of it over K <= 4096 up to 2^24 weights (2048 x 8192,
    // 3584 x 4608); not Llama-8B qkv / down (the Llama-8B step at M = 8 ran slower with them);
    // else 128 features.
    // (whole 128-feature tiles between the SMs and the slots run 160 or 112 features: bulk_whole_tile)
    for (m, k, n, tn, tiled) in [(2, 4096, 6144, 32, 32), (4, 4096, 6144, 32, 32), (5, 4096, 6144, 128, 128), (8, 4096, 6144, 128, 128),
                          (8, 14336, 4096, 128, 128), (8, 8192, 2560, 32, 32), (8, 7168, 4096, 32, 32), (8, 2048, 8192, 32, 32), (6, 3584, 4608, 32, 32), (2, 4096, 4096, 32, 32),
                          (4, 8192, 8192, 32, 32), (8, 8192, 8192, 128, 128), (2, 4096, 28672, 128, 112), (2, 8192, 10240, 128, 128),
                          (2, 1536, 17920, 32, 32), (4, 1536, 17920, 128, 160), (8, 8960, 1536, 32, 32), (2, 14336, 4096, 32, 32)] {
        let v = &VARIANTS[plan(&problem(m, k, n, 128, false, DType::F16), &caps).unwrap().variant];
        assert_eq!((v.family, v.tm, v.tn), (Family::Bulk, 8, tiled), "M={m} K={k} N={n}");
        assert_eq!(bulk_tile_features(&problem(m, k, n, 128, false, DType::F16), 132), tn, "M={m} K={k} N={n}");
        // group 32 (pre-scale): never the narrow tile (not built)
        let v = &VARIANTS[plan(&problem(m, k, n, 32, false, DType::BF16), &caps).unwrap().variant];
        assert!(!(v.family == Family::Bulk && v.tn == 32), "M={m} K={k} N={n} group 32: {}", v.symbol);
    }
    // zero points: the narrow tile up to 2^25 weights only (Llama-8B qkv yes; 8B down, 70B o no)
    for (k, n, tn) in [(4096, 6144, 32), (8960, 1536, 32), (14336, 4096, 128), (8192, 8192, 128)] {
        let v = &VARIANTS[plan(&problem(2, k, n, 128, true, DType::F16), &caps).unwrap().variant];
        assert_eq!((v.family, v.tn, v.zeros), (Family::Bulk, tn, true), "zp M=2 K={k} N={n}");
    }
    // M = 1: 128-feature tiles from 2^25 weights (bulk_tile_features), else 32; 32 also where
    // whole 32-feature tiles make one round of >= 90 % of the slots over K <= 8192 (Llama-70B o:
    // 256 on 264; not 70B down, K = 28672), and (since session 43, bulk_m1_narrow_whole) whole
    // where 128-feature tiles would be fewer than the SMs and the 32-feature tiles fill at least
    // half their last round (4096 x 14336, 5120 x 7168; not Llama-70B qkv: 320 tiles, 56 in the
    // last round).
    // (whole tiles run the 8-token tile, Llama-8B gate_up's 112 features wide: bulk_whole_tile,
    // below; split plans the one-token tile)
    // (since session 44's bulk_m1_eight, Llama-70B down and Llama-8B down in the 8-token
    // 32-feature tile; since session 45 Llama-70B qkv too, its stream-K form)
    for (k, n, tn, tiled) in [(4096, 28672, 128, (8, 112)), (8192, 10240, 32, (8, 32)), (14336, 4096, 32, (8, 32)),
                       (28672, 8192, 32, (8, 32)), (8192, 8192, 32, (8, 32)), (4096, 6144, 32, (8, 32)), (4096, 4096, 32, (1, 32)),
                       (1536, 17920, 32, (8, 32)), (8960, 1536, 32, (1, 32))] {
        let v = &VARIANTS[plan(&problem(1, k, n, 128, false, DType::F16), &caps).unwrap().variant];
        assert_eq!((v.family, v.tm, v.tn), (Family::Bulk, tiled.0, tiled.1), "M=1 K={k} N={n}");
        assert_eq!(bulk_tile_features(&problem(1, k, n, 128, false, DType::F16), 132), tn, "M=1 K={k} N={n}");
        let v = &VARIANTS[plan(&problem(1, k, n, 32, false, DType::BF16), &caps).unwrap().variant];
        // (bulk_m1_eight is for post-scale frames: group 32 keeps the 128-feature split there)
        let tn32 = if [(14336, 4096), (28672, 8192), (8192, 10240)].contains(&(k, n)) { 128 } else { tn };
        assert_eq!((v.family, v.tn, v.pre), (Family::Bulk, tn32, true), "M=1 K={k} N={n} group 32");
    }
    // bulk_m1_narrow_whole: symmetric post-scale frames only (group 32 and zero points keep the
    // 128-feature split)
    for (k, n) in [(4096, 14336), (5120, 7168), (8192, 14336)] {
        let pl = plan(&problem(1, k, n, 128, false, DType::F16), &caps).unwrap();
        let v = &VARIANTS[pl.variant];
        assert_eq!((v.family, v.tm, v.tn, v.split, pl.split), (Family::Bulk, 8, 32, false, 1), "M=1 K={k} N={n}");
        for (g, zeros) in [(32, false), (128, true)] {
            let v = &VARIANTS[plan(&problem(1, k, n, g, zeros, DType::BF16), &caps).unwrap().variant];
            assert_eq!((v.family, v.tn, v.split), (Family::Bulk, 128, true), "M=1 K={k} N={n} g{g} zp {zeros}");
        }
    }
    let sm80 = Caps { wgmma: false, ..Caps::uniform(132, 2) };
    assert_ne!(VARIANTS[plan(&problem(1, 4096, 28672, 128, false, DType::F16), &sm80).unwrap().variant].family, Family::Bulk);
    // 256 tiles on 240 slots: no longer one round (so not the whole one-round tile); since session
    // 45 bulk_m1_eight's stream-K form (fewer than two uneven rounds), not the 128-feature split
    assert_eq!(bulk_m1_eight(&problem(1, 8192, 8192, 128, false, DType::F16), 120), Some(EightForm::StreamK), "256 tiles: two rounds of 240 slots");
    let v = &VARIANTS[plan(&problem(1, 8192, 8192, 128, false, DType::F16), &Caps::uniform(120, 2)).unwrap().variant];
    assert_eq!((v.tm, v.tn, v.split), (8, 32, true));
    // The split (bulk_split): fewer tiles than slots (two per SM): an even split of each tile
    // (unit 1 chunk, S = slots / tiles CTAs per tile, each a stage deep); more (and 1-8 tokens in
    // 128-feature tiles where no even split fits): stream-K over stages on every slot where it
    // takes >= 2 stages off the busiest CTA; else whole tiles.
    let split = |m, k, n, sms, tm, tn| {
        let s = bulk_split(&problem(m, k, n, 128, false, DType::F16), sms, tm, tn, false);
        (s.ctas, s.unit)
    };
    assert_eq!(split(1, 8960, 1536, 132, 1, 32), (240, 1)); // 48 tiles: 5 CTAs each
    assert_eq!(split(1, 4096, 6144, 132, 1, 32), (192, 0)); // 192 tiles: whole
    assert_eq!(split(1, 1536, 1536, 132, 1, 32), (48, 0)); // K = 1.5 stages: no split
    assert_eq!(split(1, 28672, 8192, 132, 1, 128), (256, 1)); // 64 tiles: 4 CTAs each
    assert_eq!(split(1, 4096, 28672, 132, 1, 128), (224, 0)); // 224 tiles on 264 slots: whole
    assert_eq!(split(1, 8192, 57344, 132, 1, 128), (264, 8)); // 448 tiles of 16 stages: 28 not 32
    assert_eq!(split(16, 8192, 57344, 132, 16, 128), (264, 8));
    assert_eq!(split(1, 1536, 17920, 132, 1, 32), (264, 0)); // 560 tiles of 2 stages: 5 vs 6, whole
    assert_eq!(split(1, 4096, 4096, 33, 1, 32), (66, 0)); // 128 tiles of 4 stages on 66 slots: 8 vs 8
    assert_eq!(split(1, 4096, 8448, 132, 1, 32), (264, 0)); // 264 tiles: one each
    // 1-8 tokens in 128-feature tiles between SMs and slots (two on some SMs, one on the rest):
    // the same stream-K rule (bench/NOTES.md session 18); 16 tokens and 32-feature tiles stay whole.
    assert_eq!(split(1, 8192, 17920, 132, 1, 128), (264, 8)); // 140 tiles of 16 stages: 9 vs 16
    assert_eq!(split(1, 8192, 28672, 132, 1, 128), (264, 8)); // 224 tiles of 16 stages: 14 vs 16
    assert_eq!(split(1, 4096, 23040, 132, 1, 128), (264, 8)); // 180 tiles of 8 stages: 6 vs 8
    assert_eq!(split(1, 4096, 25600, 132, 1, 128), (200, 0)); // 200 tiles of 8 stages: 7 vs 8, whole
    assert_eq!(split(8, 8192, 28672, 132, 8, 128), (264, 8)); // 2-8 tokens too
    assert_eq!(split(8, 4096, 28672, 132, 8, 128), (224, 0));
    assert_eq!(split(16, 8192, 17920, 132, 16, 128), (140, 0));
    assert_eq!(split(1, 8192, 4480, 132, 1, 32), (140, 0));
    // Whole 128-feature tiles (bulk_whole_tile): the 8-token tile at 1-8 tokens, also at M = 1, the
    // 16-token tile above; where the 128-feature tiles outnumber the SMs, 160 features where those
    // fit one round of the SMs, else 112 where those fit the slots, in the frames that have such a
    // variant (post-scale); not a split plan (bench/NOTES.md sessions 19-20).
    for (m, k, n, g, zp, dt, want) in [
        (1, 4096, 28672, 128, false, DType::F16, (8, 112, false)), // Llama-8B gate_up: 256 tiles on 264 slots
        (8, 4096, 28672, -1, false, DType::BF16, (8, 112, false)),
        (4, 1536, 17920, 64, false, DType::F16, (8, 160, false)), // Qwen2-1.5B gate_up: 112 tiles of 160
        (16, 1536, 17920, 128, false, DType::F16, (16, 160, false)),
        (12, 1536, 17920, -1, true, DType::BF16, (16, 160, false)), // zero points too
        (4, 8192, 17920, 128, false, DType::F16, (8, 128, true)), // 140 tiles of 16 stages: stream-K
        (1, 4096, 28672, 128, true, DType::F16, (8, 112, false)), // zero points too (an even tile count)
        (1, 2048, 28672, 32, false, DType::BF16, (8, 128, false)), // group 32 (pre-scaled): none either
        (1, 4096, 28672, 32, false, DType::BF16, (1, 128, true)), // (its 4-chunk stages: 16 a tile, stream-K)
        (1, 4096, 25600, 128, false, DType::F16, (8, 128, false)), // 200 whole tiles; N % 112 != 0
        (16, 4096, 28672, 128, false, DType::F16, (16, 112, false)), // 16 tokens too
        (9, 4096, 28672, 128, true, DType::BF16, (16, 112, false)),
        (12, 2048, 29568, 128, true, DType::BF16, (16, 112, false)), // tests/python/test_launch_log.py's
        (4, 1536, 21120, 128, false, DType::F16, (8, 160, false)),  // shapes
        (1, 8192, 57344, 128, false, DType::F16, (8, 112, false)), // Llama-70B gate_up: bulk_wide_balanced
        (1, 8192, 28672, 128, false, DType::F16, (1, 128, true)), // 224 tiles of 16 stages: stream-K
    ] {
        let p = problem(m, k, n, g, zp, dt);
        let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
        assert_eq!((v.family, v.tm, v.tn, v.split), (Family::Bulk, want.0, want.1, want.2), "M={m} K={k} N={n} g={g} zp={zp}");
    }
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 28672, 128, false, DType::F16), 132, 128, false), Some(112));
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 28672, 128, false, DType::F16), 120, 128, false), Some(128)); // 256 > 240 slots
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 28672, 128, false, DType::F16), 132, 128, true), None);
    assert_eq!(bulk_whole_tile(&problem(4, 1536, 17920, 128, false, DType::F16), 132, 128, false), Some(160));
    assert_eq!(bulk_whole_tile(&problem(4, 1536, 17920, 128, false, DType::F16), 100, 128, false), Some(112)); // 112 > 100 SMs
    assert_eq!(bulk_whole_tile(&problem(4, 1536, 17920, 128, false, DType::F16), 140, 128, false), Some(128)); // 140 tiles: one an SM
    assert_eq!(bulk_whole_tile_tokens(&problem(8, 1536, 17920, 128, false, DType::F16)), 8);
    assert_eq!(bulk_whole_tile_tokens(&problem(9, 1536, 17920, 128, false, DType::F16)), 16);
    // group 32 (pre-scaled): no 112 / 160-feature tile
    for m in [4, 16] {
        let v = &VARIANTS[plan(&problem(m, 1536, 17920, 32, false, DType::F16), &caps).unwrap().variant];
        assert!(v.family == Family::Bulk && v.tn == 128 && v.pre, "M={m} group 32: {}", v.symbol);
    }
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 14336, 128, false, DType::F16), 132, 128, false), Some(128)); // 112 tiles: one an SM
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 6144, 128, false, DType::F16), 132, 32, false), Some(32)); // 32-feature tiles keep their width
    assert_eq!(bulk_whole_tile(&problem(1, 4096, 6144, 128, true, DType::F16), 132, 32, false), None); // with zero points: not there
    // ... the one-token 32-feature tiles without overlap; with it, the one-token 128-feature split
    // (bulk_m1_zp_wide: 2^24-2^25 zero-point weights over K >= 4096), not over K = 2048
    let zp_pick = |k, n, overlap| {
        let p = Problem { overlap, ..problem(1, k, n, 128, true, DType::BF16) };
        let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
        (v.family, v.tm, v.tn, v.split)
    };
    assert_eq!(zp_pick(4096, 6144, false), (Family::Bulk, 1, 32, false));
    assert_eq!(zp_pick(4096, 6144, true), (Family::Bulk, 1, 128, true));
    assert_eq!(zp_pick(4096, 4096, true), (Family::Bulk, 1, 128, true));
    assert_ne!(zp_pick(2048, 8192, true), (Family::Bulk, 1, 128, true));
    // a seven-stripe tile with zero points relies on its last tile being odd (kernels/bulk.cuh
    // z_row_bytes): frames hold N % 64 == 0, so a count of 112-feature tiles is a multiple of 4
    assert!(FrameMeta::new(4096, 336, 128, true, false).is_err());
    // group 32 at M = 1 in whole 32-feature tiles: no pre-scaled 8-token 32-feature tile, the one-token one
    let v = &VARIANTS[plan(&problem(1, 4096, 6144, 32, false, DType::F16), &caps).unwrap().variant];
    assert_eq!((v.family, v.tm, v.tn, v.split, v.pre), (Family::Bulk, 1, 32, false, true));
}

#[test]
fn bulk_variants_fit_their_ctas_per_sm() {
    // kernels/bulk.cuh and bwg.cuh are built for Variant::ctas_per_sm resident CTAs (bulk_min_blocks,
    // bwg_min_blocks) and the planner sizes their persistent grids for them: each variant's shared
    // memory must allow it on the H200 (228 KB per SM, 1 KB reserved per CTA, at most 128 bytes of
    // static shared memory (ptxas -v)).
    for v in VARIANTS.iter().filter(|v| matches!(v.family, Family::Bulk | Family::Bwg)) {
        let per_cta = v.dynamic_smem() as i64 + 1024 + 128;
        let ctas = v.ctas_per_sm() as i64;
        assert!(per_cta * ctas <= 228 * 1024, "{}: {} bytes per CTA", v.symbol, per_cta);
        assert!(v.dynamic_smem() <= 227 * 1024, "{}: over the per-CTA limit", v.symbol);
    }
}

#[test]
fn programmatic_gather_is_pinned() {
    // The act-order gather launches programmatically at M <= 8, and at M = 9-16 below 2^26
    // weights (measured: bench/NOTES.md "Session 12"); the Llama-70B layers at M >= 16 and every
    // layer at M > 16 keep the plain launch.
    for (m, k, n, want) in [(1, 28672, 8192, true), (8, 8192, 8192, true), (16, 4096, 28672, false), (16, 4096, 14336, true),
                            (16, 8960, 1536, true), (16, 8192, 8192, false), (17, 1536, 1536, false), (64, 4096, 4096, false)] {
        assert_eq!(gather_programmatic(&problem(m, k, n, 128, false, DType::F16)), want, "M={m} K={k} N={n}");
    }
}

#[test]
fn random_problems_plan_within_their_variant() {
    // Beyond the pinned shapes: 4000 pseudo-random problems of the frame envelope (K, N multiples
    // of 64 up to 32768 x 65536, every group size, both dtypes, zero points, M from 1 to 4096, SM
    // counts from 1 to 132, sm_90 and sm_80) plan without error, deterministically, into a variant
    // of their own configuration whose tile holds M where the family does not take m-tiles, with
    // a grid that fits the launch limits and a workspace wherever the variant splits K.
    let mut s: u64 = 0x5eed_2026_1206;
    let mut next = |n: u64| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    let ms = [1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 32, 33, 40, 48, 64, 65, 96, 128, 144, 200, 256, 300, 512, 1000, 4096];
    for _ in 0..4000 {
        let g = GROUP_SIZES[next(GROUP_SIZES.len() as u64) as usize];
        let unit = if g == -1 { 64 } else { g.max(64) };
        let k = unit * (1 + next((32768 / unit) as u64) as i64);
        let n = 64 * (1 + next(1024) as i64);
        let m = ms[next(ms.len() as u64) as usize];
        let zeros = next(2) == 1;
        let dtype = if next(2) == 1 { DType::BF16 } else { DType::F16 };
        let sms = [132, 132, 100, 66, 33, 7, 1][next(7) as usize];
        let caps = Caps { wgmma: next(5) != 0, ..Caps::uniform(sms, 2) };
        let overlap = next(2) == 1;
        let p = Problem { overlap, ..problem(m, k, n, g, zeros, dtype) };
        let what = format!("M={m} K={k} N={n} g={g} zp={zeros} {dtype:?} sms={sms} wgmma={} overlap={overlap}", caps.wgmma);
        let pl = plan(&p, &caps).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(plan(&p, &caps).unwrap().variant, pl.variant, "{what}: deterministic");
        let v = &VARIANTS[pl.variant];
        assert_eq!((v.dtype, v.zeros), (dtype, zeros), "{what}: {}", v.symbol);
        assert!(caps.wgmma || !matches!(v.family, Family::Wg | Family::Bulk | Family::Bwg), "{what}: {} needs wgmma", v.symbol);
        if g == 32 && matches!(v.family, Family::Bulk | Family::Bwg | Family::Dect) {
            assert!(v.pre, "{what}: group 32 is pre-scaled ({})", v.symbol);
        }
        if matches!(v.family, Family::Dec | Family::Dect | Family::Bulk) {
            assert!(m <= v.tm as i64, "{what}: {} holds M", v.symbol);
        }
        assert_eq!(pl.block[0], v.threads(), "{what}");
        assert!(pl.grid.iter().all(|&d| d >= 1) && pl.grid[1] <= 65535 && pl.grid[2] <= 65535, "{what}: grid {:?}", pl.grid);
        if matches!(v.family, Family::Bulk | Family::Bwg) {
            assert!(pl.grid[0] as i64 <= v.ctas_per_sm() as i64 * sms.max(1) * 2, "{what}: {} grid {:?}", v.symbol, pl.grid);
        }
        if v.split && pl.split > 1 && pl.cluster == 1 {
            // (a paired split's two parts sum through distributed shared memory: no workspace)
            assert!(pl.workspace_bytes > 0, "{what}: {} splits K without a workspace", v.symbol);
        }
        assert!(pl.workspace_bytes >= 0 && pl.sms == sms, "{what}");
    }
}

#[test]
fn launch_context_routing_is_pinned() {
    // Problem::overlap: behind one of mate's kernels a programmatic launch overlaps (the split
    // plans start early), else whole tiles win (bench/NOTES.md session 43). M = 1, 2^23-2^24
    // weights where dect's CTAs fit one wave over 2048 < K <= 4096 (bulk_m1_dect_wave): the
    // 128-feature split with overlap, whole 8 x 32 tiles without; dect over K <= 2048 and with
    // zero points in both. M = 5-8: Llama-8B qkv in whole 8 x 32 tiles only without overlap.
    // Session 44's rules below (library A/B on the H100, bench/NOTES.md session 44).
    let caps = Caps::uniform(132, 2);
    let pick = |m, k, n, zp, overlap| {
        let p = Problem { overlap, ..problem(m, k, n, 128, zp, if zp { DType::BF16 } else { DType::F16 }) };
        let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
        (v.family, v.tm, v.tn, v.split)
    };
    for (k, n) in [(4096, 3072), (3584, 3584)] {
        assert_eq!(pick(1, k, n, false, true), (Family::Bulk, 1, 128, true), "M=1 K={k} N={n} overlap");
        assert_eq!(pick(1, k, n, false, false), (Family::Bulk, 8, 32, false), "M=1 K={k} N={n} plain");
        for overlap in [true, false] {
            assert_eq!(pick(1, k, n, true, overlap).0, Family::Dect, "M=1 K={k} N={n} zp");
        }
    }
    for overlap in [true, false] {
        assert_eq!(pick(1, 2048, 4096, false, overlap).0, Family::Dect);
        assert_eq!(pick(1, 3584, 4608, false, overlap), (Family::Bulk, 8, 32, false), "not context-dependent");
    }
    for m in [5, 8] {
        assert_eq!(pick(m, 4096, 6144, false, true), (Family::Bulk, 8, 128, true), "M={m} Llama-8B qkv overlap");
        assert_eq!(pick(m, 4096, 6144, false, false), (Family::Bulk, 8, 32, false), "M={m} Llama-8B qkv plain");
    }
    // M = 2-8 without overlap: whole 8 x 32 tiles where they fill a third of the slots or more
    // (bulk_plain_fill); 8192 x 2560 (80 tiles) keeps its split; 4096 x 3072 whole at M = 4, and
    // since session 44 at M = 5-8 too (dect's one-wave layers over K > 3072, symmetric; dect with
    // overlap, over K <= 3072 and with zero points)
    assert_eq!(pick(4, 4096, 3072, false, false), (Family::Bulk, 8, 32, false));
    assert_eq!(pick(4, 4096, 3072, false, true), (Family::Bulk, 8, 32, true));
    for (k, n) in [(4096, 3072), (3584, 3584), (4096, 4096)] {
        for m in [5, 8] {
            assert_eq!(pick(m, k, n, false, false), (Family::Bulk, 8, 32, false), "M={m} K={k} N={n} plain");
            assert_eq!(pick(m, k, n, false, true).0, Family::Dect, "M={m} K={k} N={n} overlap");
            assert_eq!(pick(m, k, n, true, false).0, Family::Dect, "M={m} K={k} N={n} zp plain");
        }
    }
    assert_eq!(pick(8, 3072, 4096, false, false).0, Family::Dect, "3072 x 4096: K <= 3072");
    // without overlap at M = 4-16, whole 112-feature tiles where they make one round of >= 90 % of
    // the SMs (bulk_plain_balanced: 4096 x 14336, 128 tiles); the splits with overlap
    for m in [4, 8, 12, 16] {
        let tm = if m <= 8 { 8 } else { 16 };
        for k in [4096, 8192] {
            assert_eq!(pick(m, k, 14336, false, false), (Family::Bulk, tm, 112, false), "M={m} K={k} N=14336 plain");
            // (with overlap the split, but bulk_m2_4_narrow_whole's whole 8 x 32 tiles at M = 4 on
            // 4096 x 14336, below)
            if (m, k) != (4, 4096) {
                assert_eq!(pick(m, k, 14336, false, true).3, true, "M={m} K={k} N=14336 overlap");
            }
        }
    }
    // M = 2-4 (session 45): bulk_m2_4_narrow_whole, whole 8 x 32 tiles where the 128-feature tiles
    // are fewer than the SMs and the 32-feature ones fill half their last round over K <= 8192 (up
    // to 2^26 weights: 4096 x 14336, 2048 x 14336; not 8192 x 14336), in both contexts but where
    // bulk_plain_balanced's 112-feature tiles serve (M = 4 without overlap)
    for overlap in [true, false] {
        for k in [2048, 4096] {
            for m in [2, 3, 4] {
                let want = if m == 4 && !overlap { (Family::Bulk, 8, 112, false) } else { (Family::Bulk, 8, 32, false) };
                assert_eq!(pick(m, k, 14336, false, overlap), want, "M={m} K={k} N=14336 overlap={overlap}");
            }
        }
        assert_eq!(pick(3, 8192, 14336, false, overlap).2, 128, "8192 x 14336: 2^26.8 weights");
        assert_eq!(pick(3, 4096, 14336, true, overlap).2, 128, "zero points keep the 128-feature tiles");
        // dect on its one-wave layers over K <= 2048 at M = 2-4 (2048 x 4096), symmetric
        for m in [2, 3, 4] {
            assert_eq!(pick(m, 2048, 4096, false, overlap).0, Family::Dect, "M={m} 2048 x 4096");
            assert_eq!(pick(m, 3072, 4096, false, overlap).0, Family::Bulk, "M={m} 3072 x 4096: K > 2048");
        }
    }
    assert_eq!(pick(2, 4096, 14336, false, false).2, 32, "M = 2 keeps its 32-feature tiles");
    // M = 2-4 on deep layers above 2^26 weights whose 8 x 32 tiles fit half the slots: split 8 x 32
    // tiles in both contexts (18944 x 3584); 14336 x 8192 (256 tiles) keeps 128-feature tiles
    for overlap in [true, false] {
        for m in [2, 4] {
            assert_eq!(pick(m, 18944, 3584, false, overlap), (Family::Bulk, 8, 32, true), "M={m} 18944 x 3584");
            assert_eq!(pick(m, 14336, 8192, false, overlap).2, 128, "M={m} 14336 x 8192");
        }
        assert_eq!(pick(8, 18944, 3584, false, overlap).2, 128, "M=8 18944 x 3584");
    }
    assert_eq!(pick(4, 14336, 4096, false, false), (Family::Bulk, 8, 32, true), "Llama-8B down: K > 8192");
    for m in [4, 8] {
        assert_eq!(pick(m, 7168, 4096, false, true), (Family::Bulk, 8, 32, true), "M={m} 7168 x 4096 overlap");
        assert_eq!(pick(m, 7168, 4096, false, false), (Family::Bulk, 8, 32, false), "M={m} 7168 x 4096 plain");
        assert_eq!(pick(m, 8192, 2560, false, false), (Family::Bulk, 8, 32, true), "M={m} 8192 x 2560 plain");
    }
    assert_eq!(pick(8, 8192, 8192, false, true), (Family::Bulk, 8, 128, true), "Llama-70B o M=8 overlap");
    assert_eq!(pick(8, 8192, 8192, false, false), (Family::Bulk, 8, 32, false), "Llama-70B o M=8 plain");
    // the plain problem is cached apart from the overlapping one
    let a = plan(&problem(1, 4096, 3072, 128, false, DType::F16), &caps).unwrap();
    let b = plan(&Problem { overlap: false, ..problem(1, 4096, 3072, 128, false, DType::F16) }, &caps).unwrap();
    assert_ne!(a.variant, b.variant);
}

#[test]
fn m1_eight_token_tiles_are_pinned() {
    // M = 1 (bench/NOTES.md session 44, lab patch): without overlap, whole 8 x 32 tiles where they
    // fill a third of the slots to one round over K <= 8192 (bulk_plain_fill: Llama-8B o, 7168 x
    // 4096), the one-token 32-feature split with overlap; on symmetric layers of >= 2^25 weights
    // whose 32-feature tiles fit one round of the slots, the 8-token 32-feature tile in
    // both contexts (bulk_m1_eight), split or whole as bulk_split says; since session 45 its
    // stream-K form below two uneven rounds, its whole form from four rounds over K <= 8192.
    let caps = Caps::uniform(132, 2);
    let pick = |k, n, zp, overlap| {
        let p = Problem { overlap, ..problem(1, k, n, 128, zp, if zp { DType::BF16 } else { DType::F16 }) };
        let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
        (v.family, v.tm, v.tn, v.split)
    };
    for (k, n) in [(4096, 4096), (7168, 4096)] {
        assert_eq!(pick(k, n, false, false), (Family::Bulk, 8, 32, false), "K={k} N={n} plain");
        assert_eq!(pick(k, n, false, true), (Family::Bulk, 1, 32, true), "K={k} N={n} overlap");
    }
    for overlap in [true, false] {
        assert_eq!(pick(14336, 4096, false, overlap), (Family::Bulk, 8, 32, true), "Llama-8B down");
        assert_eq!(pick(18944, 3584, false, overlap), (Family::Bulk, 8, 32, true), "18944 x 3584");
        assert_eq!(pick(8192, 10240, false, overlap), (Family::Bulk, 8, 32, true), "Llama-70B qkv: 320 tiles, stream-K");
        assert_eq!(bulk_m1_eight(&Problem { overlap, ..problem(1, 8192, 10240, 128, false, DType::F16) }, 132), Some(EightForm::StreamK));
        assert_eq!(pick(3584, 37888, false, overlap), (Family::Bulk, 8, 32, false), "3584 x 37888: 1184 tiles, whole");
        assert_eq!(pick(14336, 37888, false, overlap), (Family::Bulk, 1, 128, true), "K = 14336: not the whole form");
        assert_eq!(pick(4096, 28672, false, overlap), (Family::Bulk, 8, 112, false), "Llama-8B gate_up: 3.4 rounds, bulk_whole_tile's 112");
        assert_eq!(pick(28672, 8192, false, overlap), (Family::Bulk, 8, 32, false), "Llama-70B down");
        assert_eq!(pick(8192, 57344, false, overlap), (Family::Bulk, 8, 112, false), "Llama-70B gate_up: bulk_wide_balanced");
        assert_eq!(pick(14336, 4096, true, overlap).2, 128, "zero points keep the 128-feature split");
        assert_eq!(pick(8192, 2560, false, overlap), (Family::Bulk, 1, 32, true), "8192 x 2560: 80 tiles");
        assert_eq!(pick(27648, 5120, false, overlap), (Family::Bulk, 8, 32, true), "27648 x 5120: 160 tiles fill 61 % of the slots: stream-K");
    }
}

#[test]
fn wide_balanced_tiles_are_pinned() {
    // Llama-70B gate_up (bench/NOTES.md session 45): 512 whole 112-feature tiles (two rounds of
    // 264 slots, the last 94 % full) at M = 1-16 in both contexts instead of the 128-feature
    // stream-K split, with zero points too; not at group 32, nor on 120 SMs (240 slots: more than two rounds),
    // nor where the 112-feature tiles fit one round (Llama-8B gate_up: bulk_whole_tile's case).
    let caps = Caps::uniform(132, 2);
    for m in [1, 4, 8, 9, 16] {
        for overlap in [true, false] {
            let p = Problem { overlap, ..problem(m, 8192, 57344, 128, false, DType::F16) };
            let v = &VARIANTS[plan(&p, &caps).unwrap().variant];
            let tm = if m <= 8 { 8 } else { 16 };
            assert_eq!((v.family, v.tm, v.tn, v.split), (Family::Bulk, tm, 112, false), "M={m} overlap={overlap}");
            assert!(bulk_wide_balanced(&p, 132));
            assert!(!bulk_wide_balanced(&p, 120), "M={m}: 512 tiles on 240 slots");
        }
        let zp = &VARIANTS[plan(&problem(m, 8192, 57344, 128, true, DType::BF16), &caps).unwrap().variant];
        assert_eq!((zp.tn, zp.zeros, zp.split), (112, true, false), "M={m}: with zero points too (session 45)");
        let g32 = &VARIANTS[plan(&problem(m, 8192, 57344, 32, false, DType::F16), &caps).unwrap().variant];
        assert_eq!(g32.tn, 128, "M={m}: group 32 (pre-scaled) keeps the 128-feature tiles");
        assert!(!bulk_wide_balanced(&problem(m, 4096, 28672, 128, false, DType::F16), 132), "one round");
        assert!(!bulk_wide_balanced(&problem(m, 14336, 57344, 128, false, DType::F16), 132), "K = 14336");
    }
}
