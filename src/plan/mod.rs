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

pub mod cost;
pub mod variants;

use crate::call::Problem;
use crate::device::params::WORKSPACE_TICKET_BYTES;
use crate::error::{arg_err, Error, Result};
use once_cell::sync::{Lazy, OnceCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::RwLock;
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
            // chunks per group.
            Family::Bwg => (!p.meta.has_perm || p.m > DEC_MAX_M) && (v.pre || p.meta.group() % 64 == 0),
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

/// Largest M the bulk-copy decode family serves (its largest token tile).
pub const BULK_MAX_M: i64 = 16;
/// Weights (K x N elements) from which the bulk family can win at M = 1 ([`prefer_bulk`]).
pub const BULK_MIN_WEIGHTS: i64 = 1 << 23;

/// Whether the bulk-copy family serves `p` better than the other decode families (Hopper only).
/// Measured on the H200 (bench/NOTES.md, "bulk"): at M = 1 it wins on every layer of more than
/// 2^24 weights (1.3-2x faster than dect on the Llama shapes), and from 2^23 where the CTA-tiled
/// decode family would not fill the SMs (Qwen2-1.5B down: 6.9 vs 10.4 us), and on layers of 2^24
/// weights where dect would fill them (Llama-8B o: 5.3 vs 6.0 us since session 12,
/// results/2026-11-30-bulk-narrow-routed.json; it lost in session 4, 7.1 vs 6.5); it loses on
/// the small Qwen2-1.5B qkv/o (2.6 vs 2.05 us). Since session 43 also from 2^23 weights where
/// dect's 32-feature CTAs would not fit one wave over a K of at most 4096 ([`dect_one_wave`]):
/// 3584 x 4608 (Qwen2-7B qkv) ran dect's 144 CTAs of 32 features in 10.7 us against bulk's
/// 5.3 (H100, both orders, MATE_PDL 1 / 0: 0.49x / 0.56x; bench/NOTES.md session 43). At M = 2-16
/// (128-feature tiles) it wins on layers of more than 2^24 weights (lab, bench/NOTES.md "Session
/// 4"), and at M = 2-8 in 32-feature tiles where [`bulk_narrow_multi`] says (from 2^23 weights).
/// No act order.
pub fn prefer_bulk(p: &Problem, sms: i64) -> bool {
    let weights = p.k() * p.n();
    let big = weights > 2 * BULK_MIN_WEIGHTS;
    let m1 = p.m == 1
        && weights >= BULK_MIN_WEIGHTS
        && (weights >= 2 * BULK_MIN_WEIGHTS || !prefer_cta_tiles(p, sms) || !dect_one_wave(p, sms) || bulk_m1_dect_wave(p, sms));
    p.m <= BULK_MAX_M && !p.meta.has_perm && (big || m1 || bulk_narrow_multi(p, sms))
}

/// M = 1 on symmetric post-scale layers of 2^23-2^24 weights where dect's 32-feature CTAs fit one
/// wave over 2048 < K <= 4096 ([`dect_one_wave`]): bulk, in a tile chosen by the launch context
/// (Problem::overlap): behind one of mate's kernels (a programmatic launch overlaps) the
/// 128-feature split, else whole 32-feature tiles ([`bulk_tile_features`], [`bulk_m1_narrow_whole`]).
/// Forced on the H100 (bench/NOTES.md session 43, both orders): 4096 x 3072 / 3584 x 3584, the
/// 128-feature split 0.79x / 0.91x of dect with PDL but 1.04x / 1.12x without; the whole 8 x 32
/// tile 0.83x / 0.83x without, 0.98x / 1.01x with. dect keeps K <= 2048 (2048 x 4096: 1.03-1.09x).
pub fn bulk_m1_dect_wave(p: &Problem, sms: i64) -> bool {
    let weights = p.k() * p.n();
    p.m == 1
        && (BULK_MIN_WEIGHTS..2 * BULK_MIN_WEIGHTS).contains(&weights)
        && dect_one_wave(p, sms)
        && p.k() > 2048
        && !p.meta.has_zeros
        && p.meta.group() % 64 == 0
        && p.n() % 128 == 0
}

/// Without overlap (Problem::overlap false), at M = 2-8: whether `tiles` 32-feature tiles fill
/// between a third and all of the slots; there the 8 x 32 tiles run whole ([`bulk_plain_whole`]),
/// at M = 5-8 also where dect's CTAs would not fit one wave ([`bulk_narrow_multi`]). Forced on the
/// H100 (bench/NOTES.md session 43, bench/lab/context_diff.py): without PDL whole 8 x 32 tiles
/// 0.87x / 0.90x of the routed splits on 7168 x 4096 at M = 4 / 8, 0.88x on 3584 x 4608 and 0.98x
/// on 5120 x 7168 and Llama-70B o at M = 8, each 1.03-1.15x with PDL; at M = 2 / 4 0.80-0.90x on
/// 3584 x 3584, 4096 x 3072 (one order); 8192 x 2560 (80 tiles, 30 % of the slots) keeps its
/// split in both, and so does Llama-8B down over K = 14336 (whole 1.06x / 1.09x at M = 4 / 8
/// without PDL): K <= 8192.
fn bulk_plain_fill(p: &Problem, sms: i64, tiles: i64) -> bool {
    let slots = sms * BULK_CTAS_PER_SM;
    !p.overlap && (2..=8).contains(&p.m) && p.k() <= 8192 && tiles <= slots && 3 * tiles >= slots
}

/// The 32-feature tiles of [`bulk_plain_fill`] run whole (symmetric post-scale frames: the
/// 8-token tile's whole form).
pub fn bulk_plain_whole(p: &Problem, sms: i64) -> bool {
    !p.meta.has_zeros && p.meta.group() % 64 == 0 && bulk_narrow_multi(p, sms) && bulk_plain_fill(p, sms, p.n() / 32)
}

/// Weights (K x N elements) up to which the 8-token x 32-feature bulk tile serves ([`bulk_narrow_multi`]);
/// with zero points, up to the second.
pub const BULK_NARROW_MAX_WEIGHTS: i64 = 1 << 26;
pub const BULK_NARROW_ZP_MAX_WEIGHTS: i64 = 1 << 25;
/// At M = 2-4 the 8 x 32 tiles also serve up to these weights where they fit half of the slots
/// (so split; [`bulk_narrow_multi`]): 18944 x 3584 (Qwen2-7B down, 2^26.02 weights, 112 tiles) at M =
/// 2 / 4 0.86x / 0.93x of the 128-feature split without PDL, 0.89x / 0.93x with (routing sweep,
/// H100, bench/NOTES.md session 44); Llama-8B gate_up (896 tiles) and Llama-70B down (2^27.8)
/// keep the 128-feature tiles.
pub const BULK_NARROW_DEEP_MAX_WEIGHTS: i64 = 1 << 27;

/// bulk: whether M = 2-8 tokens go in 8-token x 32-feature tiles (the one-token tile's 16-chunk
/// stages, every consumer warp a chunk phase of both stripes) rather than 128-feature tiles or the
/// other families. Measured on the H200 (forced beside the routed plans,
/// results/2026-11-30-bulk-narrow-m2-8.json): at M = 2 on every layer of 2^23-2^26 weights
/// (Llama-8B qkv 6.2 vs 8.7 us, Qwen2-1.5B down 5.1 vs 8.5, Llama-70B o 12.1 vs 13.4, Llama-8B o
/// 5.6 vs dect's 6.1, Qwen2-1.5B gate_up 6.9 vs 7.9); the staged activation rows (2 KB a token a
/// stage beside 16 KB of weights) cost more with every token: at M = 3-4 only where the tiles fit
/// one round of the slots (Qwen2-1.5B gate_up's 560 tiles lose there, 8.5 vs 8.1), at M = 5-8 only
/// where a quarter of the slots holds them (Qwen2-1.5B down's 48: 6.0 vs 8.5; Llama-8B qkv and
/// down tie, Llama-70B o loses, 15.3 vs 14.1). Above 2^26 weights the 128-feature tiles win
/// (Llama-8B gate_up M = 2 19.6 vs 22.8, Llama-70B down 36.6 vs 39.0). Post-scale frames only
/// (group 32's pre-scaled narrow tile lost 16-22 % on Llama-8B o / down and 70B o, bf16, and is not
/// built), and with zero points only up to 2^25 weights (the stage's zero-point rows: Llama-70B o
/// lost 7-9 %, 8B down 2 %; Qwen2-1.5B down won 0.74x, Llama-8B qkv 0.82-0.88x;
/// results/2026-11-30-bulk-narrow-routed.json).
pub fn bulk_narrow_multi(p: &Problem, sms: i64) -> bool {
    let weights = p.k() * p.n();
    let tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    let deep = p.m <= 4 && 2 * tiles <= slots && (BULK_NARROW_MAX_WEIGHTS..BULK_NARROW_DEEP_MAX_WEIGHTS).contains(&weights);
    ((BULK_MIN_WEIGHTS..=BULK_NARROW_MAX_WEIGHTS).contains(&weights) || deep)
        && p.meta.group() % 64 == 0
        && (!p.meta.has_zeros || weights <= BULK_NARROW_ZP_MAX_WEIGHTS)
        && match p.m {
            2 => true,
            3..=4 => tiles <= slots,
            // since session 43 also, where dect's 32-feature CTAs would not fit one wave (dect
            // keeps those: 4096 x 3072, Llama-8B o), half the slots below 2^25 weights (8192 x
            // 2560 0.68-0.75x, 7168 x 4096 0.92-1.0x), or all of them over K <= 4096 up to 2^24
            // weights, where bwg's 16-token split served (2048 x 8192 0.78-0.82x, 3584 x 4608
            // 0.80-0.99x). Not on the larger Llama-8B qkv / down (their 128-feature splits): per
            // call 0.85-1.04x / 0.98-1.01x, but the Llama-8B step at M = 8 (all of mate's calls
            // overlapping by PDL) 1.5-3 % slower with them (bench/NOTES.md session 43); where a
            // programmatic launch would not overlap (Problem::overlap), the K <= 4096 arm at any
            // size (Llama-8B qkv without PDL: 0.85x / 0.92x at M = 6 / 8); since session 44 without
            // overlap also on dect's one-wave layers over K > 3072, symmetric (whole 8 x 32 tiles
            // 0.87-0.92x of dect on 4096 x 3072 / 3584 x 3584 / Llama-8B o at M = 5 / 8, library
            // A/B on the H100, bench/NOTES.md session 44; 1.06-1.15x with PDL, so not there;
            // 3072 x 4096 0.98x / 1.04x; whole tiles over K <= 2048 not measured: dect keeps K <= 3072)
            5..=8 => {
                4 * tiles <= slots
                    || (bulk_plain_fill(p, sms, tiles) && (!dect_one_wave(p, sms) || (p.k() > 3072 && !p.meta.has_zeros)))
                    || (tiles <= slots
                        && !dect_one_wave(p, sms)
                        && ((2 * tiles <= slots && weights < 4 * BULK_MIN_WEIGHTS) || (p.k() <= 4096 && (weights <= 2 * BULK_MIN_WEIGHTS || !p.overlap))))
            }
            _ => false,
        }
}

/// Weights (K x N elements) from which the bulk family streams one token in 128-feature tiles.
pub const BULK_WIDE_M1_WEIGHTS: i64 = 1 << 25;

/// bulk: features per tile. At M = 2-8, 32 where [`bulk_narrow_multi`] says, else 128 (also at
/// M = 9-16); at M = 1, 128 on layers
/// of >= 2^25 weights with N % 128 == 0, else 32. Measured on the H200 (forced tiles in one run,
/// results/2026-11-29-m1-tiles.json, bench/NOTES.md "Session 6"): 128 features beat 32 on every
/// Llama layer of >= 2^25 weights (70b qkv 17.5 vs 20.9 us, 8b gate_up 21.7 vs 23.7, 70b down
/// 36.7 vs 39.9, 8b down 13.0 vs 13.3) and lose below it (8b qkv 8.8 vs 7.5, Qwen2-1.5B gate_up
/// and down): a 32-feature tile's warps split its chunks and reduce across warps per item, a
/// 128-feature tile's warps each own a stripe. Except where whole 32-feature tiles make one round
/// of at least 90 % of the resident slots over a K of at most 8192: no split at all (Llama-70B o:
/// 256 tiles on 264 slots, 12.4 vs 14.3 us split 4 ways in 128-feature tiles; over Llama-70B
/// down's K = 28672 the split tiles stay faster, 37.7 vs 39.5; results/2026-11-30-bulk-streamk-*.json).
pub fn bulk_tile_features(p: &Problem, sms: i64) -> u32 {
    if p.m > 1 {
        return if bulk_narrow_multi(p, sms) { 32 } else { 128 };
    }
    if bulk_m1_dect_wave(p, sms) {
        return if p.overlap { 128 } else { 32 };
    }
    let narrow_tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    let one_round = narrow_tiles <= slots && 10 * narrow_tiles >= 9 * slots && p.k() <= 8192;
    if p.k() * p.n() >= BULK_WIDE_M1_WEIGHTS && p.n() % 128 == 0 && !one_round && !bulk_m1_narrow_whole(p, sms) {
        128
    } else {
        32
    }
}

/// bulk at M = 1: whole 32-feature tiles (the 8-token tile, [`bulk_whole_tile`]) where the
/// 128-feature tiles would be fewer than the SMs (so split) and the 32-feature tiles fill at least
/// half of their last round of the slots, over K <= 8192; symmetric, post-scale frames (the 8-token
/// tile's whole form). Measured on the H100 (both orders, MATE_PDL 1 / 0, bench/NOTES.md session
/// 43): 4096 x 14336 (448 tiles) 0.84x / 0.89x of the 128-feature split, 5120 x 7168 (224) 0.81x /
/// 0.81x, 8192 x 14336 0.92x / 0.95x; Llama-70B qkv (320 tiles: a last round of 56) 1.20x / 1.01x,
/// so not there.
pub fn bulk_m1_narrow_whole(p: &Problem, sms: i64) -> bool {
    let tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    let last_round = tiles - (tiles - 1) / slots * slots;
    p.m == 1
        && !p.meta.has_zeros
        && p.meta.group() % 64 == 0
        && ((p.n() / 128 < sms && p.k() <= 8192 && 2 * last_round >= slots) || (!p.overlap && bulk_m1_dect_wave(p, sms)))
}

/// bulk: the tile width for whole tiles (None: not such a plan). At 1-8 tokens they run the
/// 8-token tile, also at M = 1 (the one-token tile's whole form measured slower: Llama-8B gate_up
/// 21.1 vs 19.1 us in 128-feature tiles, Llama-70B qkv / down / gate_up forced whole 1.01-1.08x;
/// in symmetric 32-feature tiles Llama-8B qkv 6.60 vs 6.00, Llama-70B o 12.5 vs 11.8, Qwen2-1.5B
/// gate_up 7.07 vs 6.69-6.97, with zero points 1.02-1.06x slower, so not there; its split form
/// stays, the 8-token split tiles measuring 0.99-1.13x of it; bench/NOTES.md session 19); at 9-16
/// tokens the 16-token tile. Where the 128-feature tiles outnumber the SMs (two CTAs on some,
/// one on the rest, and an SM running two takes up to 1.6x as long: bench/NOTES.md session 18), a
/// width that balances them, where the frame has it (post-scale, groups >= 64):
/// - 160 features (ten stripes, one CTA an SM) where those tiles fit one round of the SMs
///   (Qwen2-1.5B gate_up, 112 tiles: 0.80-0.87x at M = 4-8, 0.81-0.83x at M = 9-16, tied at
///   M = 1 with its 32-feature plan; results/2026-12-01-lab-bulk-n160.json);
/// - else 112 features (seven stripes) where those fit the resident slots: two CTAs on nearly
///   every SM instead of 256 features on some and 128 on the rest, with no stream-K fix-up
///   (Llama-8B gate_up, 256 tiles: 0.85 / 0.89 / 0.92x at M = 1 / 4 / 8, 0.97x at M = 12-16;
///   Qwen2-1.5B gate_up, 160 tiles: 0.97-1.0x at M = 4-8; results/2026-12-01-lab-bulk-n112-*.json).
pub fn bulk_whole_tile(p: &Problem, sms: i64, tn: u32, split: bool) -> Option<u32> {
    if split {
        return None;
    }
    if tn != 128 {
        // 32-feature tiles (1-8 tokens) with zero points: the 8-token tile measured 1.02-1.06x
        // slower at M = 1
        return if p.meta.has_zeros { None } else { Some(tn) };
    }
    if bulk_plain_balanced(p, sms) {
        return Some(BULK_BALANCED_TN);
    }
    let between = p.n() / 128 > sms;
    let fits = |w: u32, per_sm: i64| p.n() % w as i64 == 0 && p.n() / w as i64 <= sms * per_sm;
    Some(if between && fits(BULK_ONE_ROUND_TN, 1) {
        BULK_ONE_ROUND_TN
    } else if between && fits(BULK_BALANCED_TN, BULK_CTAS_PER_SM) {
        BULK_BALANCED_TN
    } else {
        128
    })
}

/// Without overlap (Problem::overlap false), at M = 4-16 on symmetric post-scale layers of
/// 2^24-2^27 weights over K <= 8192 whose 128-feature tiles are fewer than the SMs: whole
/// 112-feature tiles where they make one round of at least 90 % of the SMs (one CTA each, no
/// split, no partial sums) instead of the split 128-feature tiles (bulk at M <= 8, bwg's 16-token
/// split at 9-16). Routing sweep on the H100 (bench/NOTES.md session 44): 4096 x 14336 (128 tiles)
/// 0.86x / 0.86x / 0.89x at M = 4 / 8 / 16 without PDL, 8192 x 14336 0.93x / 0.92x / 0.93x; with
/// PDL the splits win (the same tiles 1.02-1.18x), so only without overlap; at M = 2 1.00-1.05x.
pub fn bulk_plain_balanced(p: &Problem, sms: i64) -> bool {
    let weights = p.k() * p.n();
    let tiles = p.n() / BULK_BALANCED_TN as i64;
    !p.overlap
        && (4..=BULK_MAX_M).contains(&p.m)
        && !p.meta.has_perm
        && !p.meta.has_zeros
        && p.meta.group() % 64 == 0
        && (2 * BULK_MIN_WEIGHTS + 1..1 << 27).contains(&weights)
        && p.k() <= 8192
        && p.n() / 128 < sms
        && p.n() % BULK_BALANCED_TN as i64 == 0
        && tiles <= sms
        && 10 * tiles >= 9 * sms
}

/// bulk: the ten-stripe (one CTA an SM) and seven-stripe tile widths of [`bulk_whole_tile`].
pub const BULK_ONE_ROUND_TN: u32 = 160;
pub const BULK_BALANCED_TN: u32 = 112;

/// bulk: the token tile of whole tiles ([`bulk_whole_tile`]): 8 tokens at M <= 8, else 16.
pub fn bulk_whole_tile_tokens(p: &Problem) -> u32 {
    if p.m <= 8 {
        8
    } else {
        16
    }
}

/// bulk: how a plan shares the K ranges of its tiles between the CTAs of the persistent grid
/// (kernels/split.cuh stream-K; the kernel's ranges follow from the grid and the unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkSplit {
    /// CTAs of the grid.
    pub ctas: i64,
    /// Chunks (of 64) per stream-K unit; 0 = whole tiles (no split).
    pub unit: i64,
}

/// bulk: whole tiles, an even split of every tile, or stream-K over stages. Measured on the H200
/// (bench/NOTES.md "Session 7", results/2026-11-30-bulk-streamk-*.json):
/// - fewer tiles than resident slots (two per SM): each tile split evenly over S = slots / tiles
///   CTAs (one range of one tile per CTA: the rule before stream-K), whole tiles where S = 1;
///   stream-K over stages lost there (Qwen2-1.5B down M = 1 5.5 vs 4.8 us, Llama-8B qkv 7.4 vs
///   6.7): a CTA with two short ranges pays two epilogues, and an owner's sum ends the kernel.
/// - more tiles than slots: stream-K over whole stages, every slot a CTA, where it takes at
///   least two stages off the busiest CTA (Llama-70B gate_up M = 1: 27-28 stages instead of 32,
///   70.3 vs 75.5 us), else whole tiles (Qwen2-1.5B gate_up: 7.1 vs 8.3 us).
/// - 1-8 tokens in 128-feature tiles, more tiles than SMs but fewer than slots (no even split
///   fits): whole tiles would put two CTAs on some SMs and one on the rest, and an SM running two
///   takes up to twice as long; the same stream-K rule then. Measured (bench/lab/n_sweep.py,
///   results/2026-12-01-bulk-m1-streamk-between-ab.json, -bulk-m2-8-streamk-between-ab.json): one token, K = 8192,
///   140-231 tiles 0.69-0.93x of whole tiles (Llama-70B gate_up at TP = 2, 224 tiles: 0.91x),
///   K = 4096, 140-180 tiles 0.79-0.88x; 2-8 tokens, K = 8192, 140-224 tiles 0.72-0.99x, K =
///   4096, 140-160 tiles 0.88-0.91x; the margin leaves K = 4096 from 200 tiles whole (stream-K
///   there 0.94-1.07x). Not at 16 tokens, whose stream-K fix-up costs more (K = 4096, 180-224
///   tiles: 1.10-1.14x slower), nor in 32-feature tiles (not measured there).
/// `MATE_BULK_SPLIT=<n>` (or [`force_split`]): whole tiles (n = 1), an even split n ways where the
/// tiles x n CTAs fit the slots, else stream-K over stages on every slot.
pub fn bulk_split(p: &Problem, sms: i64, tm: u32, tn: u32, pre: bool) -> BulkSplit {
    let tiles = p.n() / tn as i64;
    let slots = sms * BULK_CTAS_PER_SM;
    let chunks = p.k() / 64;
    let ch = variants::bulk_chunks_per_stage(tm, tn, pre) as i64;
    let stages = (chunks + ch - 1) / ch; // per tile
    let whole = BulkSplit { ctas: tiles.min(slots).max(1), unit: 0 };
    if tiles * chunks >= 1 << 31 {
        return whole; // kernels/bulk.cuh counts the split's units in 32 bits
    }
    if let Some(s) = split_override() {
        return match s {
            1 => whole,
            s if tiles * s <= slots => BulkSplit { ctas: tiles * s.min(chunks), unit: 1 },
            _ => bulk_streamk_stages(p, sms, tm, tn, pre),
        };
    }
    if tiles < slots {
        let s = (slots / tiles.max(1)).min((chunks / ch).max(1)); // every part at least a stage deep
        if s > 1 {
            return BulkSplit { ctas: tiles * s, unit: 1 };
        }
        if tm > 8 || tn != 128 {
            return whole;
        }
    }
    let busiest_whole = (tiles + slots - 1) / slots * stages;
    let busiest_streamk = (tiles * stages + slots - 1) / slots;
    if busiest_whole >= busiest_streamk + 2 {
        bulk_streamk_stages(p, sms, tm, tn, pre)
    } else {
        whole
    }
}

/// bulk: stream-K over whole stages on every resident slot (at most one CTA per stage).
pub fn bulk_streamk_stages(p: &Problem, sms: i64, tm: u32, tn: u32, pre: bool) -> BulkSplit {
    let ch = variants::bulk_chunks_per_stage(tm, tn, pre) as i64;
    let stages = p.n() / tn as i64 * ((p.k() / 64 + ch - 1) / ch);
    BulkSplit { ctas: (sms * BULK_CTAS_PER_SM).min(stages).max(1), unit: ch }
}

/// bwg: how a plan shares its tiles' K between the CTAs of the persistent grid (kernels/bwg.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwgSplit {
    /// CTAs of the grid.
    pub ctas: i64,
    /// CTAs per tile of the even split (1: whole tiles); 0: stream-K over stages (the kernel's
    /// ranges follow from the grid). Travels in GemmParams.total_warps.
    pub split: i64,
}

/// bwg: whole tiles, an even split of every tile, or (128-256-token tiles) stream-K over stages
/// after the whole rounds of [`bwg_streamk_whole_tiles`]. The even split: where the tiles alone
/// cannot give every resident slot an item, as many CTAs per tile as keep all items in one round,
/// each at least two stages deep. Stream-K where it takes at least a tenth of the stages off the
/// busiest CTA: the tile counts that leave SMs idle or a last round part-empty. Measured on the H200 (bench/NOTES.md "Session 8", results/2026-11-30-bwg-
/// streamk-ab.json): Llama-70B qkv M = 128, 80 tiles on 132 SMs, 64 -> 39 stages, 73.4 -> 50.4 us;
/// 70b gate_up M = 128-256 0.86x, Llama-8B qkv M = 128-1024 0.87-0.89x; where it saved 3 % of
/// the stages it lost up to 5 % (8b down M = 4096, 70b down / o M = 1024: a contributor's partial
/// is a 64-128 KB round trip through L2). The 16/32-token tiles keep the even split (stream-K
/// there: Qwen2-1.5B gate_up M = 32 0.95x, Llama-8B gate_up 1.06x, 70b gate_up 1.0x).
/// `MATE_BULK_SPLIT=<n>` (or [`force_split`]): whole tiles (n = 1), an even split n ways where
/// tiles x n CTAs fit the slots, else stream-K on every slot (the 16/32-token tiles: the even split, clamped).
pub fn bwg_split(p: &Problem, sms: i64, v: &Variant) -> BwgSplit {
    bwg_split_with(p, sms, v, split_override())
}

/// [`bwg_split`] with the override `over` (None: the planned split, as the tile chooser needs it).
fn bwg_split_with(p: &Problem, sms: i64, v: &Variant, over: Option<i64>) -> BwgSplit {
    let tiles = bwg_tiles(p, v);
    let slots = sms * v.ctas_per_sm() as i64;
    let chunks = p.k() / 64;
    let ch = variants::bwg_chunks_per_stage(v.tm) as i64;
    let spt = (chunks + ch - 1) / ch; // stages per tile
    let whole = BwgSplit { ctas: tiles.min(slots).max(1), split: 1 };
    let even = |s: i64| BwgSplit { ctas: (tiles * s).min(slots), split: s };
    let sk_tile = v.tm < BWG_STREAMK_MIN_TM && bwg_streamk_tile(v); // a 32/64-token `_sk` variant
    let streamk_ok = (v.tm >= BWG_STREAMK_MIN_TM || sk_tile) && tiles * spt < 1 << 31; // kernels/bwg.cuh counts units in 32 bits
    if let Some(s) = over {
        return match s.min(chunks / ch).max(1) {
            1 => whole,
            s if tiles * s <= slots || !streamk_ok => even(s),
            _ => bwg_streamk(p, sms, v),
        };
    }
    let (plain, busiest) = if tiles < slots {
        // every part at least two stages deep: Qwen2-1.5B down at M = 2-16 (12 tiles of 35
        // stages) 8.4-8.9 us split 11-16 ways, 9.2-9.4 split 22 ways (1.6 stages a part);
        // Llama-8B o at M = 24-32 (32 tiles of 16) keeps 8 (9.3 us; 5 ways 11.0);
        // results/2026-11-30-bwg-split-depth.json
        let s = (slots / tiles.max(1)).min((spt / 2).max(1));
        let per_part = (chunks + s - 1) / s; // kernels/split.cuh k_range
        (if s > 1 { even(s) } else { whole }, (per_part + ch - 1) / ch)
    } else {
        (whole, (tiles + slots - 1) / slots * spt)
    };
    if !streamk_ok {
        return plain;
    }
    let streamk = bwg_streamk(p, sms, v);
    let g = streamk.ctas;
    let d = bwg_streamk_whole_tiles(tiles, g);
    let busiest_streamk = d / g * spt + ((tiles - d) * spt + g - 1) / g;
    // the 32/64-token tiles: only instead of whole tiles, their fix-up costing more of a part
    // (BWG_SK_SMALL_MAX_RATIO_PCT); the 64-token tile only where whole tiles take more than one
    // round of the slots (Qwen2-1.5B gate_up, 140 tiles of 12 stages: 1.03-1.05x slower)
    let small_ok = plain.split == 1 && (v.tm < 64 || tiles > slots);
    // the 32-token tile also instead of an even split whose parts are deep
    // (BWG_SK_DEEP_PART_STAGES): there a part's partial is small beside the stages it saves
    let deep_even = v.tm == 32 && plain.split > 1 && busiest >= BWG_SK_DEEP_PART_STAGES;
    let pct = if v.tm >= BWG_STREAMK_MIN_TM {
        90
    } else if small_ok {
        BWG_SK_SMALL_MAX_RATIO_PCT
    } else if deep_even {
        BWG_SK_DEEP_MAX_RATIO_PCT
    } else {
        0
    };
    if 100 * busiest_streamk <= pct * busiest {
        streamk
    } else {
        plain
    }
}

/// bwg: split parts of at most this many stages take the ring-first tile ([`bwg_ring_first`]).
pub const BWG_RING_FIRST_MAX_STAGES: i64 = 3;

/// Whether `p`'s split on `v`'s tile makes parts of at most [`BWG_RING_FIRST_MAX_STAGES`] stages,
/// where the ring-first variant of the tile (built for the 32-token post-scale split tile:
/// `Variant::ring_first`, kernels/variants.def split = 2) serves it: its producer issues the first
/// ring's weights (up to P = 3 stages) before waiting for the previous kernel, so such a part's
/// weights stream during that kernel's tail. Measured on the H200 (bench/NOTES.md session 17,
/// results/2026-12-01-bwg-ring-first-*.json): 2-3-stage parts 0.93-0.96x (Llama-8B o, Qwen2-1.5B
/// down at M = 24-32); 4-stage parts 0.99-1.10x (the first x boxes queue behind three stages of
/// weights); in the plain split tile the same producer code cost the deep plans 1-2 % (ptxas
/// rescheduled the consumer), hence a variant of its own.
pub fn bwg_ring_first(p: &Problem, sms: i64, v: &Variant) -> bool {
    let s = bwg_split(p, sms, v).split;
    let per_part = (p.k() / 64 + s - 1) / s.max(1); // the deepest part (kernels/split.cuh k_range)
    let ch = variants::bwg_chunks_per_stage(v.tm) as i64;
    s > 1 && (per_part + ch - 1) / ch <= BWG_RING_FIRST_MAX_STAGES
}

/// bwg: an even split whose tile's fp32 partials (S parts of tm x tn) pass this many bytes takes
/// the sliced-sum variant of its tile where there is one ([`bwg_sliced`]).
pub const BWG_SLICED_ABOVE_BYTES: i64 = 128 << 10;

/// Whether `p`'s plan on `v`'s tile is an even split, one CTA a part, whose tile's partials pass
/// [`BWG_SLICED_ABOVE_BYTES`]: there the parts sum a slice of the tile each (`Variant::sliced`,
/// kernels/variants.def split = 4 / 5, kernels/bwg.cuh bwg::sliced_sum) rather than the last
/// arriver reading all S partials through one SM. Measured on the H200 (bench/NOTES.md session
/// 21, every part summing a slice against the ticket, bit-identical sums): above 128 KB
/// 0.88-0.91x on Qwen2-1.5B down at M = 24-32 (17 parts of 16 KB; its step at M = 32 0.92x) and
/// 0.94-0.965x on Llama-8B down at M = 48-64 (8 parts of 32 KB; its step at M = 64 0.98x);
/// 0.97-1.0x on Qwen2-1.5B down at M = 9-16 and 33-64, where its step at M = 16 ran 2.5 % slower,
/// so the 16-token tile has no sliced variant; the 32-token plain split tile has one since
/// session 43, where 9-33 parts of deep narrow layers (TP-sharded down projections) sum 144-528 KB
/// at M = 17-32: 0.71-0.86x on 28672 x 1024, 18944 x 1536, 14336 x 2048, 0.89-0.97x on 28672 x
/// 2048, 8960 x 3072, 7168 x 3584, 27648 x 2560 (H100, libraries A B B A, MATE_PDL 1 / 0,
/// bench/NOTES.md session 43); at 64-128 KB
/// 1.01-1.11x slower (Llama-8B o / qkv / down, Llama-70B o / down): a part that waits for the last
/// arrival notices it a poll late, and the parts that leave at once free their slots for the next
/// kernel's programmatic start.
pub fn bwg_sliced(p: &Problem, sms: i64, v: &Variant) -> bool {
    let s = bwg_split(p, sms, v);
    s.split > 1 && s.ctas == bwg_tiles(p, v) * s.split && s.split * (v.tm * v.tn) as i64 * 4 > BWG_SLICED_ABOVE_BYTES
}

/// Whether a bwg plan of `v`'s tile with split `s` over `tiles` output tiles runs paired: an even
/// split in two parts, one CTA a part, on a 128-256-token tile with three or more ring stages
/// (kernels/bwg.cuh: the staged epilogue, a slot to receive the partner's half). The launch then
/// groups CTAs b, b ^ 1 (a tile's two parts) in 2-CTA clusters, which
/// sum their partials through distributed shared memory, each storing half the tile, instead of
/// the last arriver reading both through L2 (the same sums, bit for bit). Measured on the H200
/// (bench/NOTES.md session 24, in one process against the same plans unpaired, sustained, both
/// orders): Llama-70B o M = 128 / 256 0.975 / 0.943x, Llama-70B down 0.966 / 0.958x; Llama-8B qkv
/// at M = 256 forced into two parts paired 28.92 us, its routed stream-K plan 28.91. In four parts
/// (a pair step, then the sliced exchange through L2) 1.0-1.08x slower than the sliced exchange
/// alone (Llama-8B o / down at M = 128-256), and with only the partner's slice through
/// distributed shared memory beside the L2 stores of the others (the same bits) 0.99-1.05x, so
/// not there.
pub fn bwg_paired(v: &Variant, tiles: i64, s: BwgSplit) -> bool {
    PAIRS.load(Ordering::Relaxed) && v.family == Family::Bwg && v.split && !v.stream_k && v.tm >= BWG_STREAMK_MIN_TM && v.p >= 3 && s.split == 2 && s.ctas == tiles * 2
}

/// bwg: the smallest token tile whose split variant has stream-K (kernels/bwg.cuh kStreamK); the
/// 32/64-token tiles have stream-K variants of their own (`_sk`, Variant::stream_k).
pub const BWG_STREAMK_MIN_TM: u32 = 128;

/// bwg: whether `v`'s tile (its tokens and scale form) has a stream-K variant of its own
/// (kernels/variants.def split = 3): the variant list decides, not a rule kept beside it.
pub fn bwg_streamk_tile(v: &Variant) -> bool {
    VARIANTS.iter().any(|w| w.family == Family::Bwg && w.stream_k && w.tm == v.tm && w.pre == v.pre)
}

/// bwg's 32/64-token tiles take stream-K instead of whole tiles (never instead of an even split;
/// the 64-token tile only where whole tiles fill the slots more than once) where it leaves the
/// busiest CTA at most this percentage of the stages (the 128-256-token tiles: 90 % of whole tiles
/// or the even split). The 64-token tile (session 19, results/2026-12-01-bwg-m64-streamk-ab.json):
/// Llama-70B gate_up at M = 33-64 (448 tiles, 109 of 128 stages) 0.94-0.97x of wg (bf16 with zero
/// points 0.89-0.96x), Qwen2-1.5B gate_up (140 tiles, 7 of 12) 1.03-1.05x, Llama-8B gate_up forced
/// (224 tiles, 28 of 32) 1.04-1.08x. The 32-token tile: measured on the H200 (bench/NOTES.md session 18, a lab
/// build with stream-K in the split tile): Llama-70B gate_up at M = 17-32 (448 tiles, 55 of 64
/// stages: 86 %) 0.92-0.97x, Qwen2-1.5B gate_up (140 tiles, 4 of 6) 0.96-0.97x, K = 4096 140 / 160
/// / 200 tiles (9 / 10 / 13 of 16) 0.74 / 0.80 / 0.95x; Llama-8B gate_up (224 tiles, 14 of 16: 88
/// %) 1.01-1.03x and 224-240 tiles at K = 4096 1.0x (the fix-up costs what it saves); instead of
/// even splits: Qwen2-1.5B down 1.05x, Llama-8B qkv 0.98-0.99x.
pub const BWG_SK_SMALL_MAX_RATIO_PCT: i64 = 87;

/// bwg's 32-token tile takes stream-K instead of an even split whose parts are at least this many
/// stages deep, where stream-K leaves the busiest CTA at most [`BWG_SK_DEEP_MAX_RATIO_PCT`] % of
/// the even split's stages. Measured on the H200 (bench/NOTES.md session 36, both orders,
/// results/2026-12-04-s36-routing-sweep.json): Llama-70B qkv at M = 24 / 32 (80 tiles split 3
/// ways, 11 stages a part, against 10 on 264 stream-K CTAs) 21.9 / 22.0 vs 23.5 / 23.8 us
/// (0.93x); session 37, libraries A B B A (results/2026-12-04-s37-sk-*.json), M = 24 / 32:
/// K x N = 4096 x 14336 0.98x, 5120 x 13824 0.96x, 8192 x 14336 0.94x, 14336 x 12288 0.85x
/// (28672 x 11264 keeps its even split: 264 CTAs already busy). Shallow parts stay on the even split (Llama-8B qkv, 4 stages: 0.98-0.99x; Qwen2-1.5B
/// down, 3: 1.05x, session 18), and so does the 64-token tile (Llama-70B down at M = 64, 56
/// against 55 stages: stream-K 1.055x slower).
pub const BWG_SK_DEEP_PART_STAGES: i64 = 8;
/// See [`BWG_SK_DEEP_PART_STAGES`].
pub const BWG_SK_DEEP_MAX_RATIO_PCT: i64 = 95;

/// bwg: stream-K over stages on every resident slot (at most one CTA per stage).
pub fn bwg_streamk(p: &Problem, sms: i64, v: &Variant) -> BwgSplit {
    let ch = variants::bwg_chunks_per_stage(v.tm) as i64;
    let stages = bwg_tiles(p, v) * ((p.k() / 64 + ch - 1) / ch);
    BwgSplit { ctas: (sms * v.ctas_per_sm() as i64).min(stages).max(1), split: 0 }
}

/// bwg stream-K: tiles taken whole, in persistent rounds, before the shared ranges: every full
/// round of the grid but the last (kernels/bwg.cuh sk_whole_tiles, the same rule).
pub fn bwg_streamk_whole_tiles(tiles: i64, ctas: i64) -> i64 {
    if tiles >= 2 * ctas {
        (tiles / ctas - 1) * ctas
    } else {
        0
    }
}

/// bwg: output tiles of variant `v` (m-tiles x 128-feature tiles).
fn bwg_tiles(p: &Problem, v: &Variant) -> i64 {
    (p.m + v.tm as i64 - 1) / v.tm as i64 * (p.n() / v.tn as i64)
}

/// bulk, bwg: CTAs of the persistent grid for `tiles` output tiles split `split` ways (at most
/// `per_sm` per SM, at most one per item).
fn persistent_ctas(tiles: i64, split: i64, sms: i64, per_sm: i64) -> i64 {
    (tiles * split).min(sms * per_sm).max(1)
}

/// bulk: resident CTAs per SM the kernels are built for but the 160-feature tiles' one
/// (kernels/bulk.cuh bulk_min_blocks, Variant::ctas_per_sm; every bulk variant's shared memory
/// allows its count: tests/plan.rs).
pub const BULK_CTAS_PER_SM: i64 = 2;

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

/// Whether the bulk-fed wgmma family serves `p` better than the others (Hopper only). Measured
/// on the H200 (forced sweeps, bench/NOTES.md "Session 5", results/2026-11-29-bwg-sweep*.json):
/// at M = 17-32 it beats wg by 1.2-1.3x on every Llama shape and Qwen2-1.5B gate_up, and by 1.6x on
/// Qwen2-1.5B down since its split rules (10.7 vs 17.5 us; session 5 had it at 16.1 vs 14.0); at
/// M = 33-64 on the same layers, in the token tile of [`bwg_m33_64_tile`] (Llama-8B o 12.3-12.5 vs
/// 14.3-14.6 us, Qwen2-1.5B down 12.7 vs 17.3, results/2026-11-30-m24-64-sweep.json; Llama-8B down
/// 26.5 vs 27.9 us, Llama-70B down 83 vs 94, o 27.7 vs 29.2 at M = 48,
/// results/2026-11-30-bwg-m64-ab.json; since session 41 the wide ones of K >= 4096 too, where wg's
/// 64-token tile had tied bwg's before its pre-scaled and sliced forms: Llama-8B qkv / gate_up,
/// Llama-70B qkv 0.88-1.02x of wg with PDL, 0.85-0.97x without); at M = 9-16 it beats the bulk and CTA-tiled
/// decode families on layers of 2^23-2^26 weights with few 128-feature tiles (Llama-8B qkv
/// 12.6 vs 14.7 us, Qwen2-1.5B down 11.9 vs 15.5 us, results/2026-11-29-decode-s5-bwg.json;
/// Llama-8B o and down since session 12, results/2026-11-30-m9-16-sweep.json; Llama-70B o ties),
/// where the bulk family's 8-chunk stages leave its split items shallow (since session 36 up to
/// 2^27 weights in fewer 128-feature tiles than SMs: Llama-70B qkv); at M = 2-8 on layers of
/// 2^23-2^25 weights where neither the bulk family serves nor dect's CTAs fill one wave over a
/// shallow K (none of the benchmark's layers since bulk's narrow tile, session 12). Above 64 tokens (128-256-token
/// tiles, results/2026-11-29-prefill-bwg-sweep.json, -bwg-sweep-m48-96.json) it beats wg by up to
/// 1.3x at M = 96-256 (Llama-70B down M = 96: 119 vs 155 us; Llama-8B o M = 128: 18.0 vs 22.3)
/// and is within +-10 % of it at M = 1024-4096 (geomean 0.99x of wg's time). Act order reaches
/// it as the plain problem on a gathered copy of x (plan_uncached); a forced bwg variant with act
/// order, only above 64 tokens (the gathered copy too).
pub fn prefer_bwg(p: &Problem, sms: i64) -> bool {
    let weights = p.k() * p.n();
    (!p.meta.has_perm || p.m > DEC_MAX_M)
        && p.n() % 128 == 0
        && match p.m {
            2..=8 => {
                // dect's 32-feature CTAs in one wave over a shallow K stay faster (Llama-8B o);
                // the bulk family wherever it serves (Llama-8B qkv 8.5 vs 9.7 us)
                (WG_MIN_WEIGHTS..=1 << 25).contains(&weights) && p.n() / 128 < sms / 2 && !dect_one_wave(p, sms) && !prefer_bulk(p, sms)
            }
            // since session 12 also 8B down (18.1 vs bulk's 19.1), results/2026-11-30-m9-16-sweep.json;
            // since session 36 up to 2^27 weights in fewer tiles than SMs (Llama-70B qkv, 80 tiles:
            // 22.0-22.6 vs bulk's 22.4-23.7 us, results/2026-12-04-s36-routing-sweep.json), not
            // Llama-70B down (2^27.8: bulk 46.4 vs 50.4) nor Qwen2-1.5B gate_up (140 tiles: 8.7 vs
            // 11.2). Since session 42 as at M = 2-8 not where dect's 32-feature CTAs fill one wave
            // over K <= 4096 (dect_tile_rank's tiles since session 36): libraries A B B A on the
            // H100, both orders, MATE_PDL = 1 / 0, 0.63-0.69x / 0.73-0.79x (2048 x 4096), 0.82-0.89x
            // (3584 x 3584, 3584 x 2560, 4096 x 2048), 0.88-0.98x (4096 x 3072), Llama-8B o
            // 0.96-1.0x / 0.88-0.94x (bench/NOTES.md session 42)
            9..=16 => {
                (WG_MIN_WEIGHTS..1 << 27).contains(&weights) && p.n() / 128 < sms && !dect_one_wave(p, sms) && !bulk_plain_balanced(p, sms)
            }
            17..=32 => weights >= WG_MIN_WEIGHTS,
            33..=64 => bwg_m33_64_tile(p, sms).is_some(),
            m => m > DEC_MAX_M,
        }
}

/// Whether dect's 32-feature CTAs fill at most one wave of the SMs over a K of at most 4096: there
/// dect stays faster than bwg at M = 2-16 ([`prefer_bwg`]).
fn dect_one_wave(p: &Problem, sms: i64) -> bool {
    p.n() / 32 <= sms && p.k() <= 4096
}

/// Weights (K x N elements) up to which bwg's 32-token tile serves M = 33-64 on layers at least as
/// wide as deep (see [`bwg_m33_64_tile`]).
pub const BWG_M33_64_MAX_WEIGHTS: i64 = 1 << 24;

/// The least K at which a layer wider than deep (K < N) above [`BWG_M33_64_MAX_WEIGHTS`] takes
/// bwg's 64-token tile at M = 33-64 ([`bwg_m33_64_tile`]).
pub const BWG_M64_WIDE_MIN_K: i64 = 4096;

/// bwg's token tile at M = 33-64 (the one statement of that rule), `None` where wg serves: on
/// layers of 2^23 weights or more, 32-token m-tiles on those of at most [`BWG_M33_64_MAX_WEIGHTS`]
/// with K <= N (Llama-8B o: the 64-token tile measured 1.3x slower there, session 16); the
/// 64-token tile on the deeper ones (K > N) and on the larger wide ones with K of at least
/// [`BWG_M64_WIDE_MIN_K`] (or whose 64-token plan is stream-K, [`bwg_split`]: Llama-70B gate_up).
/// Since session 41 that takes Llama-8B qkv / gate_up and Llama-70B qkv from wg and Qwen2-1.5B down
/// from the 32-token tile: 0.85-0.97x of those plans with plain launches, 0.88-1.02x with PDL, in
/// fp16 group 128, bf16 with zero points and group 32 (H100, bench/NOTES.md session 41). The shallow
/// wide Qwen2-1.5B gate_up (K = 1536) did not take the 64-token tile (0.91-1.03x with plain
/// launches, 0.94-1.10x with PDL, group 32 1.04-1.10x); since session 42 the shallow wide layers
/// take the 32-token tile where its plan is stream-K over at most 1.5 rounds of the slots
/// ([`bwg_m32_streamk`]: Qwen2-1.5B gate_up), else wg.
fn bwg_m33_64_tile(p: &Problem, sms: i64) -> Option<u32> {
    let weights = p.k() * p.n();
    if weights < WG_MIN_WEIGHTS {
        None
    } else if p.k() <= p.n() && weights <= BWG_M33_64_MAX_WEIGHTS {
        Some(32)
    } else if p.k() > p.n() || p.k() >= BWG_M64_WIDE_MIN_K || bwg_m64_streamk(p, sms) {
        Some(64)
    } else if bwg_m32_streamk(p, sms) {
        Some(32)
    } else {
        None
    }
}

/// The shallow wide layers' 32-token tiles at M = 33-64 (two m-tiles) may take at most this
/// percentage of the slots ([`bwg_m32_streamk`]).
pub const BWG_M32_STREAMK_MAX_SLOTS_PCT: i64 = 150;

/// Whether the shallow wide layers (K < [`BWG_M64_WIDE_MIN_K`], K <= N, more than
/// [`BWG_M33_64_MAX_WEIGHTS`]) take the 32-token tile's two m-tiles at M = 33-64 instead of wg:
/// where its plan ([`bwg_split`] on the tile [`choose`] would take) is stream-K over at most
/// [`BWG_M32_STREAMK_MAX_SLOTS_PCT`] % of the slots in tiles. Measured on the H100 (bench/NOTES.md
/// session 42, libraries A B B A, both arm orders; MATE_PDL = 1 / 0, M = 33 / 48 / 64): stream-K
/// over 280-296 tiles 0.92-0.95x / 0.89-0.90x (Qwen2-1.5B gate_up 1536 x 17920), 0.81-0.85x /
/// 0.81-0.84x (3584 x 18944; bf16 with zero points 0.78-0.86x), over 216 tiles 0.94-0.98x /
/// 0.91-0.95x (3072 x 13824), 172 tiles 0.98-1.02x / 0.95-0.99x (2048 x 11008), K = 1024 (4
/// stages a tile) 0.99-1.07x / 0.98-0.99x; over 448 tiles 1.12-1.15x / 1.04-1.17x (2560 x 28672),
/// so not there. Not its whole tiles (1536 x 28672 1.14-1.26x with PDL; group 32, whose
/// pre-scaled tile has no stream-K form, 1.10-1.23x) nor its even splits: f16 0.84-0.97x on four
/// layers but 3584 x 6144 1.0-1.05x, and in bf16 with zero points 1.02-1.15x, at group 32
/// 1.10-1.22x there.
fn bwg_m32_streamk(p: &Problem, sms: i64) -> bool {
    let tile = VARIANTS.iter().filter(|v| v.family == Family::Bwg && v.tm == 32 && serves(v, p)).min_by_key(|v| v.pre);
    tile.is_some_and(|v| {
        let slots = sms * v.ctas_per_sm() as i64;
        bwg_tiles(p, v) * 100 <= slots * BWG_M32_STREAMK_MAX_SLOTS_PCT && bwg_split(p, sms, v).split == 0
    })
}

/// Whether the 64-token tile's plan for `p` is stream-K ([`bwg_split`] on its `_sk_pre` variant):
/// where whole 64-token tiles fall unevenly on the SMs, the wide layers (K < N) take it instead of
/// wg (its whole tiles tie wg there: Llama-70B gate_up, bench/NOTES.md session 16).
fn bwg_m64_streamk(p: &Problem, sms: i64) -> bool {
    VARIANTS.iter().find(|v| v.family == Family::Bwg && v.tm == 64 && v.stream_k).is_some_and(|v| bwg_split(p, sms, v).split == 0)
}

/// bwg: the token tile for `p`: the smallest that holds M up to 128 tokens, but the
/// 32-token tile at M = 33-64 on small layers at least as wide as deep ([`bwg_m33_64_tile`]),
/// and the 128-token tile above 128 tokens where the
/// 256-token tile's split parts are shallow ([`bwg_m256_shallow`]); otherwise above 128 tokens
/// a 272-320-token tile (steps of 16) where it saves an m-tile ([`bwg_wide_tile`]), else the smallest
/// 144-256-token tile with as few m-tiles as the 256-token one ([`bwg_large_tile`]).
pub fn bwg_tile_tokens(p: &Problem, sms: i64) -> u32 {
    match p.m {
        ..=16 => 16,
        17..=32 => 32,
        33..=64 => bwg_m33_64_tile(p, sms).unwrap_or(32),
        65..=128 => 128,
        _ if bwg_m256_shallow(p, sms) => 128,
        _ => bwg_wide_tile(p, sms).unwrap_or_else(|| bwg_large_tile(p)),
    }
}

/// bwg wide tiles: the plan's CTAs must get at least this many 64-deep chunks each on average
/// ([`bwg_wide_tile`]).
pub const BWG_WIDE_MIN_CTA_CHUNKS: i64 = 48;

/// bwg above 128 tokens (unless [`bwg_m256_shallow`]): the smallest wide tile (272-320 tokens in steps of 16,
/// two wgmma a step from one dequantization: kernels/bwg.cuh x_halves) that covers M in one m-tile
/// fewer than [`bwg_large_tile`]'s tile, where that tile takes two or three m-tiles and the wide
/// tile's plan ([`bwg_split`]) gives its CTAs at least [`BWG_WIDE_MIN_CTA_CHUNKS`] chunks each:
/// M = 257-320 and 513-640 on layers deep or wide enough. Measured on the H200 (bench/NOTES.md
/// session 31): forced against the routed plan in one process (results/2026-12-03-s31-lab-wide-
/// forced.json), 0.86-0.96x at M = 272-320 where the CTAs get 56-108 chunks (Llama-8B gate_up /
/// down, Llama-70B), slower (1.03-1.11x) where they get 16-32 (Llama-8B qkv / o: the split's sums
/// outweigh the dequantization saved); routed against the previous library, libraries A B B A
/// (-wide-routed-ab.json): 0.86-0.97x at M = 272-320 and 0.875-1.0x at M = 576 / 640 on those six
/// layers. At M = 4096 (13 m-tiles of 320 against 16 of 256) 1.0-1.05x forced: a wide chunk costs
/// ~6 % more a token than the rows-per-chunk fit predicts, which pays only where the m-tile saved
/// is a third or half of them. The steps of 16 (272 / 304 beside 288 / 320: session 32,
/// results/2026-12-03-s32-wide-steps-of-16.json) ran 0.94-1.01x (geomean 0.97) of the 288 / 320
/// tile at M = 264-304 and 528-608 on the same six layers; one fewer of four m-tiles (M = 800 / 900,
/// 3 x 272 / 304 against 4 x 208 / 240) 1.03-1.15x slower but on Llama-70B gate_up (0.94-0.97x):
/// not routed.
fn bwg_wide_tile(p: &Problem, sms: i64) -> Option<u32> {
    let m_tiles = |tm: u32| (p.m + tm as i64 - 1) / tm as i64;
    let narrow = m_tiles(bwg_large_tile(p));
    if !(2..=3).contains(&narrow) {
        return None;
    }
    // the split variant's planned split (every wide tile has one): whole tiles where it says so
    let v = VARIANTS
        .iter()
        .filter(|v| v.family == Family::Bwg && variants::bwg_x_halves(v.tm) > 1 && v.split && !v.stream_k && m_tiles(v.tm) == narrow - 1)
        .min_by_key(|v| v.tm)?;
    let ctas = bwg_split_with(p, sms, v, None).ctas;
    (bwg_tiles(p, v) * (p.k() / 64) >= BWG_WIDE_MIN_CTA_CHUNKS * ctas).then_some(v.tm)
}

/// bwg above 128 tokens (unless [`bwg_m256_shallow`] or [`bwg_wide_tile`]): the smallest built
/// one-wgmma token tile (144-256 in steps of 16) that covers M in as few m-tiles as the largest, the 256-token tile: the same
/// tiles and splits, fewer padded rows (the last m-tile's rows past M are computed in full; its
/// boxes start at M - tm, kernels/bwg.cuh Item::x0). So 144 tokens at M = 129-144 and 257-288,
/// 160 at 145-160 and 289-320, ..., 256 at 241-256 and 481-512; 176 at 513-528, 192 up to 576,
/// and so on. Measured on the H200 with the tiles in steps of 32 (bench/NOTES.md session 27, in
/// one process, every tile at its planned split): routed against the best of the forced 192- and
/// 256-token plans 0.86-1.00x at M = 144 / 200 / 288 / 416 on seven Llama layers
/// (results/2026-12-02-s27-t160-t224-routed.json); the 192-token tile against the best of the
/// 128- and 256-token plans 0.84-0.90x at M = 160 and 0.86-0.97x at M = 320 / 384
/// (-t192-routed.json). The steps of 16: bench/NOTES.md session 28. Before these tiles the
/// 128-token tile's three m-tiles beat the 256-token tile's two at M = 257-384 (0.70-0.985x) but
/// lost at 448 (1.05-1.28x, four against two) and tied at 513-640 (-m257-448-tile-sweep.json,
/// -m513-640-tile-sweep.json), so more m-tiles of a smaller tile are not taken.
fn bwg_large_tile(p: &Problem) -> u32 {
    // the token tiles kernels/variants.def builds decide; smaller ones never match the count
    let m_tiles = |tm: u32| (p.m + tm as i64 - 1) / tm as i64;
    let tiles = || VARIANTS.iter().filter(|v| v.family == Family::Bwg && variants::bwg_x_halves(v.tm) == 1).map(|v| v.tm);
    let largest = tiles().max().unwrap_or(256);
    tiles().filter(|&tm| m_tiles(tm) == m_tiles(largest)).min().unwrap_or(largest)
}

/// bwg above 128 tokens: where the 256-token tile's planned split ([`bwg_split`], no override)
/// has three or more parts of at most this many 64-deep chunks, the 128-token tile serves instead.
pub const BWG_M256_SHALLOW_PART_CHUNKS: i64 = 16;

/// bwg above 128 tokens: the 128-token tile only where its last m-tile holds at least this many
/// tokens (or all 128). With fewer the tile ran slower than the 256-token plan, whose one m-tile's
/// x boxes hold exactly M rows where the 128-token tile computes two whole m-tiles: Llama-8B o at
/// M = 136 / 160 1.05 / 1.04x, Llama-8B qkv 1.12 / 1.12x (results/2026-12-02-s26-tail-boxes-
/// ab.json). Measured before the last m-tile's boxes ended at M (kernels/bwg.cuh Item::x0) it was
/// 1.25 / 1.09x on Llama-8B o (M = 176: 0.99x, 192: 0.96x; results/2026-12-02-s26-m256-tile-
/// mscan.json); the rule was not re-swept after that change.
pub const BWG_M128_LAST_TILE_MIN_TOKENS: i64 = 64;

/// Whether `p` (M > 128) takes the 128-token tile: the 256-token tile's plan splits K into three
/// or more parts a tile (the even split's ticket sums S - 1 partials of 128 KB in one CTA;
/// stream-K: on average) of at most [`BWG_M256_SHALLOW_PART_CHUNKS`] chunks, and the 128-token
/// tile's last m-tile is at least half full ([`BWG_M128_LAST_TILE_MIN_TOKENS`]). There the
/// 128-token plan has half as many parts of half the bytes, and the sum costs more than the
/// 256-token tile's cheaper chunk saves. Measured on the H200 (bench/NOTES.md session 26,
/// results/2026-12-02-s26-m256-tile-sweep*.json, -m128-routed-check.json; the 128-token tile
/// against the 256-token plan in one process): where this rule takes it, 0.65-0.96x (Qwen2-1.5B o
/// 1536 x 1536 at M = 192-512, five / six parts of 4-5 chunks: 0.65-0.81x; K = 4096 x N = 2048 /
/// 3072, K = 2048 x N = 4096, Qwen2-1.5B down: 0.71-0.87x; Llama-8B o, four parts of 16: 0.96x at
/// M = 192-256); parts of 21-56 chunks 1.01-1.18x slower (K = 6144-14336 at N = 4096, Llama-8B
/// qkv); a paired 256-token plan (two parts) against whole 128-token tiles 1.15x slower (K = 2048
/// x N = 4096 at M = 512).
fn bwg_m256_shallow(p: &Problem, sms: i64) -> bool {
    if p.m % 128 != 0 && p.m % 128 < BWG_M128_LAST_TILE_MIN_TOKENS {
        return false;
    }
    let tile256 = VARIANTS.iter().find(|v| v.family == Family::Bwg && v.tm == 256 && v.split && !v.stream_k);
    tile256.is_some_and(|v| {
        // CTAs a tile and chunks a CTA, of the even split or (on average) of stream-K
        let (tiles, ctas) = (bwg_tiles(p, v), bwg_split_with(p, sms, v, None).ctas);
        ctas >= 3 * tiles && (tiles * (p.k() / 64) + ctas - 1) / ctas <= BWG_M256_SHALLOW_PART_CHUNKS
    })
}

fn choose(p: &Problem, caps: &Caps, sms: i64) -> Option<usize> {
    let candidates = VARIANTS.iter().enumerate().filter(|(_, v)| serves(v, p) && runs_on(v, caps));
    if caps.wgmma && prefer_bwg(p, sms) {
        // bwg_tile_tokens' tile, post-scale where the group allows it; the split instantiation
        // only where the plan splits.
        let bwg = || candidates.clone().filter(|(_, v)| v.family == Family::Bwg);
        let tile = bwg().filter(|(_, v)| v.tm == bwg_tile_tokens(p, sms)).min_by_key(|(_, v)| v.pre);
        if let Some((_, t)) = tile {
            let s = bwg_split(p, sms, t);
            let split = s.split != 1;
            // the 32-token stream-K tile for a stream-K plan of 32 tokens; the ring-first split tile
            // where parts are short and the tile has one (bwg_ring_first); its sliced-sum form where
            // the partials pass BWG_SLICED_ABOVE_BYTES and the tile has one (bwg_sliced)
            let sk = s.split == 0 && t.tm < BWG_STREAMK_MIN_TM;
            let pick = |ring: bool, sliced: bool| {
                bwg().find(|(_, v)| {
                    v.tm == t.tm && v.pre == t.pre && v.split == split && v.ring_first == ring && v.stream_k == sk && v.sliced == sliced
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
        if let Some((_, t)) = bulk.clone().filter(|(_, v)| v.tn == tn).min_by_key(|(_, v)| (v.tm, v.pre)) {
            let split = bulk_split(p, sms, t.tm, t.tn, t.pre).unit > 0 && !bulk_m1_narrow_whole(p, sms) && !bulk_plain_whole(p, sms) && !bulk_plain_balanced(p, sms);
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
                    let s = (p.k() / 64 / variants::bwg_chunks_per_stage(v.tm) as i64).clamp(1, 2);
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
    })
}
