//! The bulk family's rules (Hopper, M <= 16: bulk copies, persistent grid, mma.sync): where it
//! serves, its tile width and token tile, whole tiles or the split. Each rule carries the
//! measurement it came from; `choose` in the parent module applies them.

use super::*;

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
    !p.overlap && (1..=8).contains(&p.m) && p.k() <= 8192 && tiles <= slots && 3 * tiles >= slots
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
            // (not on dect's one-wave layers over K <= 2048, symmetric: 2048 x 4096 at M = 3 ran dect's
            // 16-feature CTAs in 0.74x / 0.95x of bulk's 8 x 32 tiles with / without overlap,
            // routing sweep on the H100, one order, bench/NOTES.md session 45)
            2..=4 if dect_one_wave(p, sms) && p.k() <= 2048 && !p.meta.has_zeros => false,
            2 => true,
            3..=4 => tiles <= slots || bulk_m2_4_narrow_whole(p, sms),
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
    if bulk_m1_eight(p, sms).is_some() {
        return 32;
    }
    if bulk_m1_zp_wide(p) {
        return 128;
    }
    if p.k() * p.n() >= BULK_WIDE_M1_WEIGHTS && p.n() % 128 == 0 && !narrow_one_round(p, sms) && !bulk_m1_narrow_whole(p, sms) {
        128
    } else {
        32
    }
}

/// bulk at M = 1 with zero points, with overlap, on layers of 2^24-2^25 weights over K >= 4096
/// and N >= 4096 (N % 128 == 0): the one-token 128-feature split rather than 32-feature tiles.
/// Library A/B on the H100 (bf16, group 128, bench/NOTES.md session 45), overlap / plain:
/// Llama-8B qkv 0.947x / 1.113x, 7168 x 4096 0.942x / 1.017x, 5120 x 5120 0.841x / 0.992x;
/// 2048 x 8192 1.21x / 1.27x (so K >= 4096), Qwen2-1.5B gate_up (K = 1536) 0.99x / 1.01x.
/// Overlap only. The zero-point Llama-8B step at M = 1 (decode_step.py --dtype bfloat16 --zp,
/// A B B A, session 46): 0.973x with overlap (1638 / 1647 -> 1597 / 1599 us), 1.00x --between.
pub fn bulk_m1_zp_wide(p: &Problem) -> bool {
    let weights = p.k() * p.n();
    p.m == 1
        && p.overlap
        && p.meta.has_zeros
        && p.meta.group() % 64 == 0
        && p.k() >= 4096
        && p.n() >= 4096 // measured there only; narrower layers would split 11-22 ways
        && (2 * BULK_MIN_WEIGHTS..BULK_WIDE_M1_WEIGHTS).contains(&weights)
        && p.n() % 128 == 0
}

/// bulk at M = 1 on symmetric post-scale layers of at least [`BULK_WIDE_M1_WEIGHTS`] whose
/// 32-feature tiles fit one round of the slots: the 8-token 32-feature tile (split or whole as
/// [`bulk_split`] says) instead of the one-token 128-feature split. Routing sweep on the H100, one
/// order each, MATE_PDL 0 / 1 (bench/NOTES.md session 44): Llama-8B down 0.91x / 0.94x (split),
/// 18944 x 3584 0.93x / 0.96x (split), Llama-70B down 0.90x / 0.93x (whole). Not yet where the
/// tiles make more rounds: Llama-70B qkv (320 tiles, the 8 x 32 stream-K 0.97x / 0.97x), and the
/// wider 3584 x 37888, 5120 x 55296, Llama-70B gate_up (whole 8 x 32 0.93-0.97x, but bulk_split
/// would pick stream-K there). The tiles (or their even split's parts) must fill >= 80 % of the
/// slots: 27648 x 5120's 160 whole tiles on 264 slots (61 %) took 1.24x / 1.18x (session 45).
/// Since session 45 [`EightForm::StreamK`] and [`EightForm::Whole`] widen it (below); None: the
/// layer keeps the other M = 1 rules.
pub fn bulk_m1_eight(p: &Problem, sms: i64) -> Option<EightForm> {
    let tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    if p.m != 1 || p.meta.has_zeros || p.meta.group() % 64 != 0 || p.k() * p.n() < BULK_WIDE_M1_WEIGHTS {
        return None;
    }
    if tiles <= slots && 5 * tiles * (slots / tiles.max(1)) >= 4 * slots {
        Some(EightForm::Rule)
    } else if tiles < 2 * slots && !narrow_one_round(p, sms) && !bulk_m1_narrow_whole(p, sms) && !bulk_wide_balanced(p, sms) {
        Some(EightForm::StreamK)
    } else if tiles >= 4 * slots && p.k() <= 8192 && !bulk_wide_balanced(p, sms) {
        Some(EightForm::Whole)
    } else {
        None
    }
}

/// Whether whole 32-feature tiles make one round of at least 90 % of the slots over K <= 8192
/// (at M = 1 they run whole there: [`bulk_tile_features`]).
fn narrow_one_round(p: &Problem, sms: i64) -> bool {
    let tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    tiles <= slots && 10 * tiles >= 9 * slots && p.k() <= 8192
}

/// How [`bulk_m1_eight`]'s 8-token 32-feature tile runs at M = 1.
/// - `Rule`: as [`bulk_split`] says (the tiles or their even split's parts fill >= 80 % of the
///   slots: whole or evenly split);
/// - `StreamK`: fewer than two rounds of tiles that fill them unevenly: stream-K over stages on
///   every slot. Library A/B on the H100 (A B B A, bench/NOTES.md session 45), without / with
///   overlap, of the one-token 128-feature split: Llama-70B qkv (320 tiles) 0.986x / 0.983x,
///   27648 x 5120 (160) 0.963x / 0.987x, 14336 x 6144 (192) 0.933x / 0.968x, 4096 x 10240 (320)
///   0.930x / 0.942x;
/// - `Whole`: at least four rounds over K <= 8192, whole tiles (bulk_split would pick stream-K):
///   3584 x 37888 0.931x / 0.985x, 5120 x 55296 0.952x / 1.008x, 1536 x 37888 0.815x / 0.887x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EightForm {
    Rule,
    StreamK,
    Whole,
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
    p.m == 1 && (narrow_last_round_fills(p, sms) || (!p.overlap && !p.meta.has_zeros && p.meta.group() % 64 == 0 && (bulk_m1_dect_wave(p, sms) || bulk_plain_fill(p, sms, tiles))))
}

/// [`bulk_m1_narrow_whole`]'s first rule at M = 2-4 too (where [`bulk_narrow_multi`]'s weights
/// allow the 8 x 32 tile): whole 32-feature tiles where the 128-feature tiles would be fewer than
/// the SMs and the 32-feature tiles fill at least half their last round over K <= 8192,
/// symmetric post-scale, in both contexts. Routing sweep on the H100 (one order, bench/NOTES.md
/// session 45): 4096 x 14336 at M = 3 0.88x / 0.87x (plain / overlap) of the 128-feature split.
/// Without overlap at M = 4 [`bulk_plain_balanced`]'s 112-feature tiles keep such layers.
pub fn bulk_m2_4_narrow_whole(p: &Problem, sms: i64) -> bool {
    (2..=4).contains(&p.m)
        && (BULK_MIN_WEIGHTS..=BULK_NARROW_MAX_WEIGHTS).contains(&(p.k() * p.n()))
        && narrow_last_round_fills(p, sms)
        && !bulk_plain_balanced(p, sms)
}

fn narrow_last_round_fills(p: &Problem, sms: i64) -> bool {
    let tiles = p.n() / 32;
    let slots = sms * BULK_CTAS_PER_SM;
    let last_round = tiles - (tiles - 1) / slots * slots;
    !p.meta.has_zeros && p.meta.group() % 64 == 0 && p.n() / 128 < sms && p.k() <= 8192 && 2 * last_round >= slots
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
    if bulk_plain_balanced(p, sms) || bulk_wide_balanced(p, sms) {
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

/// At M <= 16 on post-scale layers over K <= 8192 whose 112-feature tiles make between
/// one and two rounds of the slots with the last round >= 90 % full (where the 128-feature tiles
/// would not): whole 112-feature tiles instead of the 128-feature stream-K split, in both launch
/// contexts. Library A/B on the H100 (A B B A, bench/NOTES.md session 45), without / with
/// overlap: Llama-70B gate_up (512 tiles on 264 slots) 0.93x / 0.94-0.95x at M = 1, 0.95-0.97x /
/// 0.97-0.99x at M = 2-8, 0.93-0.95x / 0.93-0.98x at M = 12-16; 4096 x 57344 0.87-0.90x /
/// 0.89-0.94x. Over K = 14336 (14336 x 57344) 0.97-1.0x, once 1.04x: not there. With zero points
/// (bf16, group 128) Llama-70B gate_up 0.94x / 0.94x at M = 1, 0.93x / 0.97x at M = 16.
pub fn bulk_wide_balanced(p: &Problem, sms: i64) -> bool {
    let slots = sms * BULK_CTAS_PER_SM;
    let tiles = p.n() / BULK_BALANCED_TN as i64;
    let last = tiles - (tiles - 1) / slots * slots;
    p.m <= BULK_MAX_M
        && !p.meta.has_perm
        && p.meta.group() % 64 == 0
        && p.k() <= 8192
        && p.n() % BULK_BALANCED_TN as i64 == 0
        && tiles > slots
        && tiles <= 2 * slots
        && 10 * last >= 9 * slots
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

/// bulk: resident CTAs per SM the kernels are built for but the 160-feature tiles' one
/// (kernels/bulk.cuh bulk_min_blocks, Variant::ctas_per_sm; every bulk variant's shared memory
/// allows its count: tests/plan.rs).
pub const BULK_CTAS_PER_SM: i64 = 2;
