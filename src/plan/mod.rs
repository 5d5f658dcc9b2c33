//! The planner: which compiled variant serves a problem, with what grid, and how much workspace.
//! Families are routed by M and size: on Hopper `Bwg` (bulk copies feeding wgmma, persistent grid)
//! wherever [`prefer_bwg`] says (M > 64, M = 17-32 on layers of 2^23 weights or more, M = 33-64 on
//! most of them, some small layers at M = 2-16; act order only above 64 tokens, through a gathered
//! x); then `Wg` (wgmma,
//! token tile and K split from the cost model in [`cost`]) wherever [`prefer_wgmma`] says (M > 64, or M > 16 on layers of 2^23 weights
//! or more); on Hopper at M <= 16 `Bulk` (bulk copies, persistent grid) wherever [`prefer_bulk`] says;
//! elsewhere, for M <= 64, the decode families (`Dect`, CTA tiles, where its CTAs fill the
//! SMs — [`prefer_cta_tiles`]; else `Dec`, persistent warps with an optional split); above 64 on
//! devices without wgmma, `Wmma`. Tile and split are chosen against the SM count this launch really gets
//! ([`resolve_sms`]).
//!
//! Here: the plan (its cache, overrides and SM count), the decode families' sizing and the family
//! order of `choose`; the bulk and bwg families' rules live in `bulk.rs` and `bwg.rs` (re-exported
//! here), the wg cost model in [`cost`], the variant table in [`variants`].

mod bulk;
mod bwg;
pub mod cost;
pub mod variants;

use crate::call::Problem;
use crate::device::params::WORKSPACE_TICKET_BYTES;
use crate::error::{arg_err, Error, Result};
use once_cell::sync::{Lazy, OnceCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::RwLock;
pub use bulk::*;
pub use bwg::*;
pub use variants::{Family, Variant, VARIANTS};

/// Largest M the decode family serves (its biggest token tile).
pub const DEC_MAX_M: i64 = 64;

/// What the planner knows of a device: its SM count and each variant's resident CTAs per SM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caps {
    pub sm_count: i64,
    /// Indexed like [`VARIANTS`].
    pub occupancy: Vec<i32>,
    /// The device runs sm_90a code (wgmma): the `Wg` family is available.
    pub wgmma: bool,
}

impl Caps {
    /// Caps of a Hopper-like device for tests and tools: `blocks` CTAs per SM for every variant.
    pub fn uniform(sm_count: i64, blocks: i32) -> Caps {
        Caps { sm_count, occupancy: vec![blocks; VARIANTS.len()], wgmma: true }
    }
}

/// Whether the device described by `caps` can run variant `v` at all.
pub fn runs_on(v: &Variant, caps: &Caps) -> bool {
    !matches!(v.family, Family::Wg | Family::Bulk | Family::Bwg) || caps.wgmma
}

/// A launch decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Index into [`VARIANTS`].
    pub variant: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
    /// The SM count the plan was sized for.
    pub sms: i64,
    /// dec: warps sharing the units; partial slots per stripe group.
    pub total_warps: i64,
    pub max_seg: i64,
    /// Zero-initialised bytes the launch needs (0: none).
    pub workspace_bytes: i64,
    /// What the launch log reports as the split: dec's warps sharing the units, wg's CTAs along K
    /// (grid.z), bulk's and bwg's CTAs per tile (rounded up where stream-K ranges span tiles), 1
    /// for whole-K plans.
    pub split: i64,
    /// bwg with act order: the byte offset in the workspace of the gathered copy of x (M x K,
    /// kernels/gather.cuh), which the launcher fills before the GEMM and passes as its x.
    pub x_gather_at: Option<i64>,
    /// CTAs per thread-block cluster of the launch (1: none). 2: bwg's paired even split
    /// ([`bwg_paired`]), whose cluster's two CTAs are the two parts of one tile.
    pub cluster: u32,
    /// The launch takes an SM's whole shared memory (src/device/registry.rs `alone_smem`), so no
    /// other CTA, of this kernel or of the next ones, shares an SM with one of its CTAs: bwg's
    /// one-CTA-an-SM split ([`bwg_one_an_sm`]).
    pub alone: bool,
}

/// The workspace of a split plan with `tickets` tickets (one per tile or stripe group) and
/// `partial_bytes` of fp32 partials (kernels/params.cuh, "Workspace layout"): the tickets always
/// sit in the first WORKSPACE_TICKET_BYTES, the partials after them. A workspace shared by calls
/// with different plans (W4A16Linear's) then never puts one call's tickets where another left
/// its partials: every call leaves its tickets zero, and partials are written before they are read.
fn split_workspace(tickets: i64, partial_bytes: i64) -> Result<i64> {
    if tickets * 4 > WORKSPACE_TICKET_BYTES {
        return Err(Error::Internal(format!(
            "a split plan with {tickets} tiles: the workspace holds at most {} tickets (kernels/params.cuh); \
             plan this shape without a split",
            WORKSPACE_TICKET_BYTES / 4
        )));
    }
    Ok(WORKSPACE_TICKET_BYTES + (partial_bytes + 255) / 256 * 256)
}

/// dec: a warp should stream at least this many units, or its fixed costs dominate.
const DEC_MIN_UNITS_PER_WARP: i64 = 4;

/// Benchmark override of the split: `MATE_DEC_WARPS=<n>` sets the total warps of split decode
/// plans. Read once, at the first plan; a malformed value fails that call (and every later one)
/// with a named error, never silently ignored.
pub const DEC_WARPS_ENV: &str = "MATE_DEC_WARPS";
static DEC_WARPS: EnvOverride = OnceCell::new();

pub fn parse_dec_warps(value: Option<&str>) -> std::result::Result<Option<i64>, String> {
    match value {
        None => Ok(None),
        Some(v) => match v.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(v.to_string()),
        },
    }
}

type EnvOverride = OnceCell<std::result::Result<Option<i64>, String>>;

/// A benchmark override read from `var` once (the first plan); errors name it as `arg`, and `what`
/// says what the value sets.
fn env_override(cell: &EnvOverride, var: &str, arg: &'static str, what: &str) -> Result<Option<i64>> {
    cell.get_or_init(|| parse_dec_warps(std::env::var(var).ok().as_deref()))
        .clone()
        .map_err(|v| arg_err(arg, format!("{v:?}"), format!("must be a positive integer ({what}), or unset")))
}

/// The value of an override already read by [`plan`] (None: unset).
fn env_value(cell: &EnvOverride) -> Option<i64> {
    cell.get().and_then(|r| r.clone().ok()).flatten()
}

/// Benchmark override of the persistent families' split: `MATE_BULK_SPLIT=<n>` makes every bwg plan
/// split K over n CTAs per tile (clamped to the K chunks); bulk: [`bulk_split`]. Read once, at the first plan; a
/// malformed value fails that call (and every later one) with a named error.
pub const BULK_SPLIT_ENV: &str = "MATE_BULK_SPLIT";
static BULK_SPLIT: EnvOverride = OnceCell::new();

/// What a plan depends on. Planning scans the variant table; the cache makes a repeated call a
/// hash lookup under a read lock (shared by all threads and streams; plans are pure values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    m: i64,
    k: i64,
    n: i64,
    group: i64,
    zeros: bool,
    dtype: crate::tensor::DType,
    sms: i64,
    device_sms: i64,
    occupancy_sum: i64,
    wgmma: bool,
    has_perm: bool,
    overlap: bool,
}

static CACHE: Lazy<RwLock<HashMap<PlanKey, Plan>>> = Lazy::new(|| RwLock::new(HashMap::new()));
const CACHE_LIMIT: usize = 8192;

/// Process-wide SM limit (`torch.ops.mate.set_num_sms`); 0 = none.
static SM_LIMIT: AtomicI64 = AtomicI64::new(0);
/// Test-only: a variant symbol every launch must use.
static FORCED: RwLock<Option<String>> = RwLock::new(None);
/// Test / lab: the split of every bulk and bwg plan (`torch.ops.mate._force_split`); 0 = none.
static FORCED_SPLIT: AtomicI64 = AtomicI64::new(0);

/// Test / lab: whether bwg's even splits may run paired ([`bwg_paired`]; `torch.ops.mate._pairs`).
static PAIRS: AtomicBool = AtomicBool::new(true);

/// Test / lab: `false` plans bwg's paired splits unpaired (no clusters: the ticket or the sliced
/// exchange through L2), so a test can compare the two forms of one plan bit for bit and a
/// benchmark can time both in one process; `true` (the default) restores planning.
pub fn allow_pairs(allow: bool) {
    PAIRS.store(allow, Ordering::Relaxed);
}

/// A process-wide override's stored value: a positive `value`, or 0 for None (cleared); else the
/// named error (`arg`, the value, `rule`).
fn positive_or_cleared(value: Option<i64>, arg: &'static str, rule: &str) -> Result<i64> {
    match value {
        None => Ok(0),
        Some(n) if n > 0 => Ok(n),
        Some(n) => Err(arg_err(arg, n, rule)),
    }
}

pub fn set_num_sms(limit: Option<i64>) -> Result<()> {
    let v = positive_or_cleared(limit, "num_sms", "must be a positive SM count, or None to clear the limit")?;
    SM_LIMIT.store(v, Ordering::Relaxed);
    Ok(())
}

/// The SM count a launch gets: the call's override, then the process-wide limit, then the device
/// (a limit above the device's count is clamped to it).
pub fn resolve_sms(call_override: Option<i64>, device_sms: i64) -> i64 {
    let limit = SM_LIMIT.load(Ordering::Relaxed);
    let wanted = call_override.unwrap_or(if limit > 0 { limit } else { device_sms });
    wanted.clamp(1, device_sms.max(1))
}

/// Test-only: force every launch to use the variant named `symbol` (None restores planning).
pub fn force_variant(symbol: Option<&str>) -> Result<()> {
    if let Some(s) = symbol {
        if !VARIANTS.iter().any(|v| v.symbol == s) {
            let known: Vec<_> = VARIANTS.iter().map(|v| v.symbol).collect();
            return Err(arg_err("variant", s, format!("is not a compiled variant; known: {known:?}")));
        }
    }
    *FORCED.write().unwrap() = symbol.map(str::to_string);
    Ok(())
}

/// Test / lab: every bulk and bwg plan takes this split (CTAs per tile, read as
/// `MATE_BULK_SPLIT`, which it overrides; None restores planning), so a benchmark can time two
/// splits of one layer in one process: between processes identical plans move up to 10 % at
/// 128-512 tokens (bench/NOTES.md session 22), and the environment variable is read once.
pub fn force_split(split: Option<i64>) -> Result<()> {
    let v = positive_or_cleared(split, "split", "must be a positive number of CTAs per tile (bulk and bwg plans), or None to restore planning")?;
    FORCED_SPLIT.store(v, Ordering::Relaxed);
    Ok(())
}

/// The split override of the bulk and bwg plans: [`force_split`], then `MATE_BULK_SPLIT`.
fn split_override() -> Option<i64> {
    match FORCED_SPLIT.load(Ordering::Relaxed) {
        0 => env_value(&BULK_SPLIT),
        n => Some(n),
    }
}

/// Whether `v` can compute `p` (dtype, zero points, shape divisibility, token tile).
pub fn serves(v: &Variant, p: &Problem) -> bool {
    // wg: a last tile of 64 features leaves its second warpgroup idle (kernels/wg.cuh).
    let n_step = if v.family == Family::Wg { v.tn as i64 / 2 } else { v.tn as i64 };
    let basic = v.dtype == p.dtype && v.zeros == p.meta.has_zeros && p.n() % n_step == 0;
    basic
        && match v.family {
            // The post-scale path needs whole 64-deep chunks per group.
            Family::Dec => p.m <= v.tm as i64 && (v.pre || p.meta.group() % 64 == 0),
            Family::Dect => p.m <= v.tm as i64,
            // Activation rows are bulk-copied (a gather is not): no act order, no shard frames.
            Family::Bulk => p.m <= v.tm as i64 && !p.meta.has_perm && (v.pre || p.meta.group() % 64 == 0),
            // x arrives in TMA boxes; act order above the decode sizes through a gathered copy
            // (Plan::x_gather_at). Pre-scale serves every group size, post-scale whole 64-deep
            // chunks per group; a stage's layout holds the scale rows it meets
            // (variants::bwg_stage_holds_group: the 40-token tile of three stages, groups >= 128).
            Family::Bwg => {
                (!p.meta.has_perm || p.m > DEC_MAX_M)
                    && (v.pre || p.meta.group() % 64 == 0)
                    && variants::bwg_stage_holds_group(v.tm, v.tn, v.p, (p.meta.group_size != -1).then(|| p.meta.group()))
            }
            Family::Wmma | Family::Wg => true,
        }
}

/// x rows of one band of the wg raster: the kernel walks bands of m-tiles across every n-tile,
/// so a band's activation rows stay in L2 (60 MB) beside the streamed weights.
const WG_BAND_BYTES: i64 = 16 << 20;

/// wg: m-tiles per raster band (kernels/wg.cuh; passed in `total_warps`).
fn wg_band(p: &Problem, v: &Variant, m_tiles: i64) -> i64 {
    let row_bytes = p.k() * p.dtype.size() as i64 * v.tm as i64;
    (WG_BAND_BYTES / row_bytes.max(1)).clamp(1, m_tiles.max(1))
}

/// wg: the token tile and split with the least estimated time ([`cost::WG_COST`]); a forced
/// variant keeps its tile and gets the best split its instantiation allows.
fn wg_shape(p: &Problem, caps: &Caps, sms: i64, only: Option<usize>) -> Option<(usize, i64)> {
    let chunks = p.k() / 64;
    let mut best: Option<(usize, i64, f64)> = None;
    for (i, v) in VARIANTS.iter().enumerate() {
        if v.family != Family::Wg || !serves(v, p) || only.is_some_and(|o| o != i) {
            continue;
        }
        let tm = v.tm as i64;
        let tiles = (p.m + tm - 1) / tm * ((p.n() + v.tn as i64 - 1) / v.tn as i64);
        let slots = sms * caps.occupancy[i].max(1) as i64;
        let c = &cost::WG_COST;
        let (s, t) = if v.split {
            (2..=cost::WG_MAX_SPLIT.min(chunks).max(2))
                .map(|s| (s.min(chunks), c.estimate(tm, tiles, s.min(chunks), chunks, slots)))
                .fold((1, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b })
        } else {
            (1, c.estimate(tm, tiles, 1, chunks, slots))
        };
        if best.map_or(true, |b| t < b.2) {
            best = Some((i, s, t));
        }
    }
    best.map(|(i, s, _)| (i, s))
}

/// dec sizing for variant `v`: (total warps, CTAs, estimated units on the busiest warp).
fn dec_shape(v: &Variant, p: &Problem, sms: i64, occupancy: i32) -> (i64, i64, i64) {
    let c = p.k() / 64;
    let groups = p.n() / v.tn as i64;
    let units = groups * c;
    let slots = sms * occupancy.max(1) as i64 * v.wk as i64;
    let env_warps = if v.split { env_value(&DEC_WARPS) } else { None };
    if let Some(w) = env_warps {
        let w = w.min(units);
        return (w, (w + v.wk as i64 - 1) / v.wk as i64, (units + w - 1) / w);
    }
    let wanted = if v.split { (units / DEC_MIN_UNITS_PER_WARP).max(1) } else { groups };
    let warps = wanted.min(slots).max(1);
    let ctas = (warps + v.wk as i64 - 1) / v.wk as i64;
    let busiest = if v.split { (units + warps - 1) / warps } else { (groups + warps - 1) / warps * c };
    (warps, ctas, busiest)
}

/// The order of dect's feature tiles for one token tile (lower first); each CTA owns `tn`
/// features, so N / tn CTAs. Up to 8 tokens: the widest tile that still gives every SM a CTA (the
/// activation loads are shared across more stripes), else the narrowest (most CTAs). At 16 tokens:
/// the narrowest tile whose CTAs fit one CTA an SM, else the widest. Measured on the H200:
/// Llama-8B o at M = 16 32 features 8.4 vs 16's 11.8 us (128 against 256 CTAs,
/// results/2026-11-29-decode-wide-sweep.json); Qwen2-1.5B qkv / o (64 / 48 CTAs of 32 features)
/// 16 features 2.03 / 1.92 vs 2.08 / 2.04 us at M = 1 and 2.69 / 2.55 vs 3.12 / 3.08 at M = 16,
/// and by 0.4-0.8 us more without a programmatic launch, as in a model
/// (results/2026-12-04-s36-qwen-dect-tiles.json).
pub fn dect_tile_rank(v: &Variant, p: &Problem, sms: i64) -> (u8, i64) {
    let ctas = p.n() / v.tn as i64;
    let tn = v.tn as i64;
    if v.tm < 16 {
        if ctas >= sms { (0, -tn) } else { (1, tn) }
    } else if ctas <= sms {
        (0, tn)
    } else {
        (1, -tn)
    }
}

/// Whether the CTA-tiled decode family serves `p` better than the persistent one. Measured on the
/// H200 (bench/NOTES.md, v1 vs final): CTA tiles win wherever their 16-feature CTAs fill at least
/// half the SMs and K is moderate, or fill all SMs; the persistent split family wins when few,
/// long CTAs would leave SMs idle (Qwen2-1.5B down: N = 1536, K = 8960), except with 16-token
/// tiles (M = 9-16), where the CTA tiles win there too (Qwen2-1.5B down M = 16: dect 15.6 vs dec
/// 17.5 us; at M = 8 dec 10.8 vs 13.6; forced sweep, results/2026-11-29-decode-wide-sweep.json).
pub fn prefer_cta_tiles(p: &Problem, sms: i64) -> bool {
    let ctas = p.n() / 16;
    ctas >= sms || (2 * ctas >= sms && (p.k() <= 8192 || (9..=16).contains(&p.m)))
}

/// bulk, bwg: CTAs of the persistent grid for `tiles` output tiles split `split` ways (at most
/// `per_sm` per SM, at most one per item).
fn persistent_ctas(tiles: i64, split: i64, sms: i64, per_sm: i64) -> i64 {
    (tiles * split).min(sms * per_sm).max(1)
}

/// Largest M the decode families keep on Hopper whatever the shape.
pub const WG_MIN_M: i64 = 17;
/// Weights (K x N elements) from which the wgmma family wins for 16 < M <= 64.
pub const WG_MIN_WEIGHTS: i64 = 1 << 23;

/// Whether the wgmma family serves `p` better than the decode families (Hopper only). Measured on
/// the H200 (bench/NOTES.md, "routing M = 17-64"): above M = 16 wgmma wins on every layer of at
/// least 2^23 weights (Llama 8B/70B, Qwen2-1.5B gate_up and down: 1.2-2.1x at M = 32), the decode
/// families on the small Qwen2-1.5B qkv and o (2x); above M = 64 only wgmma serves.
pub fn prefer_wgmma(p: &Problem) -> bool {
    p.m > DEC_MAX_M || (p.m >= WG_MIN_M && p.k() * p.n() >= WG_MIN_WEIGHTS)
}

/// Whether dect's 32-feature CTAs fill at most one wave of the SMs over a K of at most 4096: there
/// dect stays faster than bwg at M = 2-16 ([`prefer_bwg`]).
fn dect_one_wave(p: &Problem, sms: i64) -> bool {
    p.n() / 32 <= sms && p.k() <= 4096
}

fn choose(p: &Problem, caps: &Caps, sms: i64) -> Option<usize> {
    let candidates = VARIANTS.iter().enumerate().filter(|(_, v)| serves(v, p) && runs_on(v, caps));
    if caps.wgmma && prefer_bwg(p, sms) {
        // bwg_tile_tokens' tile, post-scale where the group allows it; the split instantiation
        // only where the plan splits.
        let bwg = || candidates.clone().filter(|(_, v)| v.family == Family::Bwg);
        // The 256-feature tile where bwg_wide_features_tile names one and the frame has its
        // planned form, else bwg_tile_tokens' 128-feature tile.
        let wide = bwg_wide_features_tile(p).map(|tm| (tm, 256));
        for (tm, tn) in wide.into_iter().chain([(bwg_tile_tokens(p, sms), 128)]) {
            let Some((_, t)) = bwg().filter(|(_, v)| v.tm == tm && v.tn == tn).min_by_key(|(_, v)| v.pre) else { continue };
            let s = bwg_split(p, sms, t);
            let split = s.split != 1;
            // the 32-token stream-K tile for a stream-K plan of 32 tokens; the ring-first split tile
            // where parts are short and the tile has one (bwg_ring_first); its sliced-sum form where
            // the partials pass BWG_SLICED_ABOVE_BYTES and the tile has one (bwg_sliced)
            let sk = s.split == 0 && t.tm < BWG_STREAMK_MIN_TM;
            let pick = |ring: bool, sliced: bool| {
                bwg().find(|(_, v)| {
                    v.tm == t.tm && v.tn == t.tn && v.pre == t.pre && v.split == split && v.ring_first == ring && v.stream_k == sk && v.sliced == sliced
                })
            };
            let ring = split && bwg_ring_first(p, sms, t);
            let sliced = split && bwg_sliced(p, sms, t);
            // a tile without a ring-first form keeps its sliced sum (the 64-token tile; before
            // session 42 its short parts fell back to the plain split: 4096 x 2048 / 3072, 8192 x
            // 1536 at M = 33-64 0.55-0.79x with it, H100, bench/NOTES.md session 42)
            if let Some((i, _)) = pick(ring, sliced).or_else(|| pick(ring, false)).or_else(|| pick(false, sliced)).or_else(|| pick(false, false)) {
                return Some(i);
            }
        }
    }
    if caps.wgmma && prefer_wgmma(p) {
        return wg_shape(p, caps, sms, None).map(|(i, _)| i);
    }
    if p.m > DEC_MAX_M {
        return candidates.filter(|(_, v)| v.family == Family::Wmma).map(|(i, _)| i).next();
    }
    if caps.wgmma && prefer_bulk(p, sms) {
        // The smallest token tile that holds M in bulk_tile_features' width; post-scale where the
        // group allows it; the split instantiation only where the plan splits.
        let tn = bulk_tile_features(p, sms);
        let bulk = candidates.clone().filter(|(_, v)| v.family == Family::Bulk);
        // (bulk_m1_eight: the 8-token tile at M = 1, in the form it names)
        let eight = bulk_m1_eight(p, sms);
        if let Some((_, t)) = bulk.clone().filter(|(_, v)| v.tn == tn && (eight.is_none() || v.tm == 8)).min_by_key(|(_, v)| (v.tm, v.pre)) {
            let split = match eight {
                Some(EightForm::StreamK) => true,
                Some(EightForm::Whole) => false,
                _ => bulk_split(p, sms, t.tm, t.tn, t.pre).unit > 0 && !bulk_m1_narrow_whole(p, sms) && !bulk_plain_whole(p, sms) && !bulk_plain_balanced(p, sms) && !bulk_wide_balanced(p, sms) && !bulk_m2_4_narrow_whole(p, sms),
            };
            let pick = |tm: u32, tn: u32| bulk.clone().find(|(_, v)| v.tm == tm && v.tn == tn && v.pre == t.pre && v.split == split);
            // whole tiles: the 8 / 16-token tile (bulk_whole_tile_tokens) in bulk_whole_tile's
            // width where this frame has that variant (post-scale: groups >= 64), else as wide
            // as planned where the frame has that token tile of that width
            let tm = bulk_whole_tile_tokens(p);
            let whole = bulk_whole_tile(p, sms, t.tn, split);
            let best = whole.and_then(|w| pick(tm, w).or_else(|| pick(tm, t.tn))).or_else(|| pick(t.tm, t.tn));
            if let Some((i, _)) = best {
                return Some(i);
            }
        }
    }
    if prefer_cta_tiles(p, sms) {
        // The smallest token tile that holds M, then its feature width: dect_tile_rank.
        let best = candidates.clone().filter(|(_, v)| v.family == Family::Dect).min_by_key(|(_, v)| (v.tm, dect_tile_rank(v, p, sms)));
        if let Some((i, _)) = best {
            return Some(i);
        }
    }
    // Decode: the smallest token tile that holds M; then the tile and split with the least
    // estimated time on the busiest warp: its units times the stripes a unit streams, a wider unit
    // costing 20 % less per stripe (it shares the activation loads; measured 0.77-0.86x on the
    // Llama-8B shapes at M = 1, bench/results/2026-11-29-decode-v5-sweep-3cta.json), plus two
    // units for a split's partial write and reduction. Post-scale before pre-scale.
    let tm = candidates.clone().filter(|(_, v)| v.family == Family::Dec).map(|(_, v)| v.tm).min()?;
    candidates
        .filter(|(_, v)| v.family == Family::Dec && v.tm == tm)
        .min_by_key(|(i, v)| {
            let (_, _, busiest) = dec_shape(v, p, sms, caps.occupancy[*i]);
            let ns = (v.tn / 16) as i64;
            let per_stripe = if ns > 1 { 4 } else { 5 };
            (v.pre, (busiest * ns * per_stripe) + if v.split { 10 } else { 0 }, std::cmp::Reverse(v.tn))
        })
        .map(|(i, _)| i)
}

pub fn plan(p: &Problem, caps: &Caps) -> Result<Plan> {
    env_override(&DEC_WARPS, DEC_WARPS_ENV, "MATE_DEC_WARPS (environment)", "total warps of split decode plans")?;
    env_override(&BULK_SPLIT, BULK_SPLIT_ENV, "MATE_BULK_SPLIT (environment)", "CTAs per tile of bulk plans")?;
    let sms = resolve_sms(p.num_sms, caps.sm_count);
    let forced = FORCED.read().unwrap().clone();
    let key = PlanKey {
        m: p.m,
        k: p.k(),
        n: p.n(),
        group: p.meta.group(),
        zeros: p.meta.has_zeros,
        dtype: p.dtype,
        sms,
        device_sms: caps.sm_count,
        occupancy_sum: caps.occupancy.iter().map(|&o| o as i64).sum(),
        wgmma: caps.wgmma,
        has_perm: p.meta.has_perm,
        overlap: p.overlap,
    };
    // forced plans (a variant, a split, no pairs) bypass the cache both ways
    let cacheable = forced.is_none() && FORCED_SPLIT.load(Ordering::Relaxed) == 0 && PAIRS.load(Ordering::Relaxed);
    if cacheable {
        if let Some(hit) = CACHE.read().unwrap().get(&key) {
            return Ok(*hit);
        }
    }
    let planned = plan_uncached(p, caps, sms, forced)?;
    if cacheable {
        let mut cache = CACHE.write().unwrap();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, planned);
    }
    Ok(planned)
}

/// Act order, the gather-first plans: whether the element-parallel gather of x is launched
/// programmatically (perm loaded before its griddepcontrol.wait, x read and the copy stored after;
/// it triggers its dependent at once, so the GEMM behind it starts its weight prologue during the
/// gather). Measured on the H200 (results/2026-11-30-act-gather-pdl-ab.json, two alternated
/// rounds): 0.68-0.90x at M = 1-4 (Qwen2-1.5B down M = 1 8.9 -> 6.1 us, Llama-8B qkv M = 4 12.7 ->
/// 10.2), 0.86-0.93x at M = 16 on layers below 2^26 weights; on the Llama-70B layers at M >= 16
/// and at M = 64 it lost or tied (70B down M = 16 53 -> 58 us, 70B o +5 %), as did a trigger
/// after the stores (1.08x overall). So: M <= 8, or M <= 16 below 2^26 weights.
pub fn gather_programmatic(p: &Problem) -> bool {
    p.m <= 8 || (p.m <= 16 && p.k() * p.n() < 1 << 26)
}

/// Act order on Hopper: layers below this many weights (K x N) keep the in-loop gather up to
/// [`ACT_IN_LOOP_MAX_M`] tokens (Qwen2-1.5B qkv and o measured at M = 1, 2, 4, 8 and 16:
/// results/2026-11-30-act-order-gather-first.json).
pub const ACT_IN_LOOP_BELOW_WEIGHTS: i64 = 1 << 23;
pub const ACT_IN_LOOP_MAX_M: i64 = 8;

fn plan_uncached(call_p: &Problem, caps: &Caps, sms: i64, forced: Option<String>) -> Result<Plan> {
    // Hopper, act order, a routed call: the plan of the same layer without act order, on x
    // gathered by the permutation into the workspace first (kernels/gather.cuh; Plan::x_gather_at):
    // 1.2-13x faster than the families' in-loop gathers at M = 1-64 (bench/NOTES.md "Session
    // 11"), except on the small layers at the fewest tokens, where the gather's own launch
    // (~3 us) outweighs dect's in-loop gather (Qwen2-1.5B qkv M = 1: 3.9 vs 5.3 us, M = 8: 5.5 vs
    // 5.7; at M = 16 9.0 vs 6.5). A forced variant keeps its own path (the in-loop gathers stay
    // tested; they serve devices without wgmma).
    let gather_first = forced.is_none()
        && caps.wgmma
        && call_p.meta.has_perm
        && !(call_p.m <= ACT_IN_LOOP_MAX_M && call_p.k() * call_p.n() < ACT_IN_LOOP_BELOW_WEIGHTS);
    let plain = call_p.on_gathered_x();
    let p = if gather_first { &plain } else { call_p };
    let idx = match forced {
        Some(sym) => {
            let i = VARIANTS.iter().position(|v| v.symbol == sym).unwrap();
            if !serves(&VARIANTS[i], p) {
                return Err(arg_err("variant", sym, format!("the forced variant cannot serve this call ({p:?})")));
            }
            if !runs_on(&VARIANTS[i], caps) {
                return Err(arg_err("variant", sym, "the forced variant needs wgmma (sm_90a); this device has none"));
            }
            i
        }
        None => choose(p, caps, sms).ok_or_else(|| {
            Error::Internal(format!("no compiled variant serves {p:?}; the shape envelope and kernels/variants.def disagree"))
        })?,
    };
    let v = &VARIANTS[idx];
    let tiles_n = p.n() / v.tn as i64;
    let mut cluster = 1;
    let mut alone = false;
    let (grid, total_warps, max_seg, workspace_bytes, split) = match v.family {
        Family::Dec => {
            let (warps, ctas, _) = dec_shape(v, p, sms, caps.occupancy[idx]);
            let (max_seg, ws) = if v.split {
                let c = p.k() / 64;
                let min_units = (tiles_n * c / warps).max(1);
                let max_seg = (c / min_units + 2).min(warps);
                let slot = (v.tn / 16 * v.tm / 8) as i64 * 32 * 16;
                (max_seg, split_workspace(tiles_n, tiles_n * max_seg * slot)?)
            } else {
                (0, 0)
            };
            ([ctas, 1, 1], warps, max_seg, ws, warps)
        }
        Family::Dect => ([tiles_n, 1, 1], 0, 0, 0, 1),
        Family::Bulk => {
            // Persistent: whole tiles over at most the resident slots, or stream-K over its CTAs
            // (kernels/split.cuh: the tickets, then fp32 partial slots [ctas][tm * tn]).
            // total_warps only reports CTAs per tile (the launch log's split); the kernel takes
            // its ranges from the grid.
            if v.split {
                // A forced split variant where the rule says whole: stream-K over stages on every slot.
                let s = bulk_split(p, sms, v.tm, v.tn, v.pre);
                let s = if s.unit > 0 { s } else { bulk_streamk_stages(p, sms, v.tm, v.tn, v.pre) };
                let ws = split_workspace(tiles_n, s.ctas * (v.tm * v.tn) as i64 * 4)?;
                let per_tile = (s.ctas + tiles_n - 1) / tiles_n;
                ([s.ctas, 1, 1], per_tile, s.unit, ws, per_tile)
            } else {
                ([persistent_ctas(tiles_n, 1, sms, v.ctas_per_sm() as i64), 1, 1], 1, 0, 0, 1)
            }
        }
        Family::Bwg => {
            // kernels/bwg.cuh: the split mode travels in total_warps (CTAs per tile of the even
            // split; 0: stream-K), the raster band (m-tiles) in max_seg. Workspace: fp32 partial
            // tiles (even split: [tile][split]; stream-K: one per CTA), then one counter per tile.
            // A forced split variant where the rule says whole: stream-K on every slot (16/32-token
            // tiles: an even split in two where K has two stages; the same where the rule says the
            // 32-token stream-K tile, which has the stream-K code).
            let tiles = bwg_tiles(p, v);
            let s = if v.stream_k {
                bwg_streamk(p, sms, v) // the stream-K tile always runs stream-K (also where forced)
            } else if v.split {
                let s = bwg_split(p, sms, v);
                if s.split > 1 {
                    s
                } else if v.tm >= BWG_STREAMK_MIN_TM {
                    bwg_streamk(p, sms, v)
                } else {
                    let s = (p.k() / 64 / variants::bwg_chunks_per_stage(v.tm, v.tn, v.p) as i64).clamp(1, 2);
                    BwgSplit { ctas: persistent_ctas(tiles, s, sms, v.ctas_per_sm() as i64), split: s }
                }
            } else {
                BwgSplit { ctas: persistent_ctas(tiles, 1, sms, v.ctas_per_sm() as i64), split: 1 }
            };
            let slots = if s.split == 0 { s.ctas } else { tiles * s.split };
            let paired = bwg_paired(v, tiles, s); // its partials never leave the pair: no workspace
            let ws = if v.split && !paired { split_workspace(tiles, slots * (v.tm * v.tn) as i64 * 4)? } else { 0 };
            let m_tiles = (p.m + v.tm as i64 - 1) / v.tm as i64;
            let per_tile = if s.split == 0 { (s.ctas + tiles - 1) / tiles } else { s.split };
            if paired {
                cluster = 2;
            }
            alone = v.split && !v.stream_k && s.ctas == slots && bwg_one_an_sm(p, v, tiles, sms, p.k() / 64) == Some(s.split);
            ([s.ctas, 1, 1], s.split, wg_band(p, v, m_tiles), ws, per_tile)
        }
        Family::Wmma => ([(p.m + v.tm as i64 - 1) / v.tm as i64, tiles_n, 1], 0, 0, 0, 1),
        Family::Wg => {
            let (_, split) = wg_shape(p, caps, sms, Some(idx))
                .ok_or_else(|| Error::Internal(format!("wg variant {} has no shape for {p:?}", v.symbol)))?;
            let tiles = [(p.m + v.tm as i64 - 1) / v.tm as i64, (p.n() + v.tn as i64 - 1) / v.tn as i64];
            // kernels/wg.cuh: the tickets, then fp32 partial tiles [tile][split][tm * tn].
            let ws = if v.split {
                let n_tiles = tiles[0] * tiles[1];
                split_workspace(n_tiles, n_tiles * split * (v.tm * v.tn) as i64 * 4)?
            } else {
                0
            };
            ([tiles[0], tiles[1], split], wg_band(p, v, tiles[0]), 0, ws, split)
        }
    };
    // x gathered into the workspace after the split's region: the gather-first plans above, and
    // a forced bwg variant's (it reads x by TMA boxes, which cannot gather).
    let (workspace_bytes, x_gather_at) = if gather_first || (v.family == Family::Bwg && p.meta.has_perm) {
        // Above the tickets: never where a later call's tickets sit (split_workspace).
        let at = (workspace_bytes.max(WORKSPACE_TICKET_BYTES) + 255) / 256 * 256;
        (at + (p.m * p.k() * p.dtype.size() as i64 + 255) / 256 * 256, Some(at))
    } else {
        (workspace_bytes, None)
    };
    if grid[0] > i32::MAX as i64 || grid[1] > 65535 || grid[2] > 65535 {
        return Err(arg_err("x", format!("M = {}, N = {}", p.m, p.n()), "too many tiles for one launch"));
    }
    Ok(Plan {
        variant: idx,
        grid: [grid[0] as u32, grid[1] as u32, grid[2] as u32],
        block: [v.threads(), 1, 1],
        dynamic_smem: v.dynamic_smem(),
        sms,
        total_warps,
        max_seg,
        workspace_bytes,
        split,
        x_gather_at,
        cluster,
        alone,
    })
}
