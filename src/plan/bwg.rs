//! The bwg family's rules (Hopper, bulk copies feeding wgmma, persistent grid): where it serves,
//! its token tile, the even split, stream-K, ring-first, the sliced sum and the cluster pair.
//! Each rule carries the measurement it came from; `choose` in the parent module applies them.

use super::*;

/// bwg at M = 41-64: the 256-feature tiles ([`bwg_wide_features_tile`]) need at least this many
/// features (24 tiles) ...
pub const BWG_N256_MIN_N: i64 = 6144;
/// ... and at least this many weights (K x N elements).
pub const BWG_N256_MIN_WEIGHTS: i64 = 1 << 25;

/// bwg at M = 41-64: the 256-feature token tile (the smallest of 48 / 56 / 64 tokens that holds
/// M) where the layer has at least [`BWG_N256_MIN_N`] features and [`BWG_N256_MIN_WEIGHTS`]
/// weights. Such a tile runs one CTA of 20 warps an SM (four consumer warpgroups of 64 features sharing each stage's x
/// boxes, which at 48-64 tokens outweigh a 128-feature stage's weights), so stages of four chunks
/// x 3 fit where two 128-feature CTAs an SM could not (kernels/bwg.cuh chunks_per_stage).
/// Measured on the H100 forced against the routed plan in one process (bench/NOTES.md session 54,
/// results/2026-12-07-s54-n256-forced-h100.json.gz; best form of each tile): M = 41-48 Llama-8B
/// gate_up 0.855-0.86x, Llama-70B qkv 0.86-0.88x, gate_up 0.87-0.90x, o 0.91-0.93x, down 0.92x,
/// 3584 x 18944 0.74x, 7168 x 7168 / 8192 x 6144 / 5120 x 13824 0.92-0.95x; M = 52-64 0.88-0.97x
/// on the same layers (7168 x 7168 at M = 52 1.02x). Slower on smaller or narrower layers: 4096 x
/// 4096 / 2048 x 8192 1.12-1.36x, Llama-8B qkv 1.0-1.05x, down 0.97x (M = 48) / 1.03x (64),
/// 28672 x 2560 0.95x (48) / 1.05-1.11x (52-64). Routed, against the 128-feature plans (libraries
/// A B B A with PDL, H100, results/2026-12-07-s54-n256-routed-ab-h100.json.gz): M = 44 / 48 0.85-
/// 0.93x on Llama-70B qkv / o / gate_up / down and Llama-8B gate_up, 0.92-0.94x on 7168 x 7168,
/// 8192 x 6144, 5120 x 13824, 0.74x / 0.85x on 3584 x 18944 / 3072 x 13824 (their 32-token m-tiles
/// before); M = 64 0.86-0.97x on all ten; M = 56 (the 64-token tile against the 56-token one)
/// 0.87-0.98x, but 7168 x 7168 1.03x and 5120 x 13824 1.0x; bf16 with zero points 0.83-0.905x
/// (Llama-70B qkv / o, 8B gate_up, M = 48 / 64). The 56-token tile at M = 49-56 against the
/// 64-token one (routed, libraries A B B A with PDL, H100, bench/NOTES.md session 56,
/// results/2026-12-07-s56-m56-sk40-ab-h100.json.gz): 0.91-0.95x on all seven layers measured
/// (Llama-70B qkv / o / gate_up / down, Llama-8B gate_up, 7168 x 7168, 5120 x 13824).
pub fn bwg_wide_features_tile(p: &Problem) -> Option<u32> {
    let wide = p.n() >= BWG_N256_MIN_N && p.k() * p.n() >= BWG_N256_MIN_WEIGHTS;
    match p.m {
        41..=48 if wide => Some(48),
        49..=56 if wide => Some(56),
        57..=64 if wide => Some(64),
        _ => None,
    }
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
/// each at least two stages deep (at 16-64 tokens [`bwg_one_an_sm`] may take fewer). Stream-K where it takes at least a tenth of the stages off the busiest CTA: the tile counts that leave SMs idle or a last round part-empty. Measured on the H200 (bench/NOTES.md "Session 8", results/2026-11-30-bwg-
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

/// The deepest part (in 64-row chunks of K) that [`bwg_one_an_sm`] gives one CTA an SM in the 16 /
/// 32-token tiles (4 of their stages), and in the 40-64-token tiles (7 of their stages; plain only).
pub const BWG_ONE_AN_SM_MAX_CHUNKS: i64 = 16;
pub const BWG_ONE_AN_SM_MAX_CHUNKS_M64: i64 = 14;
/// With overlap, [`bwg_one_an_sm`] needs at least this many parts a tile.
pub const BWG_ONE_AN_SM_OVERLAP_MIN_PARTS: i64 = 3;

/// bwg's 16 / 32 / 40-64-token even split: as many parts as put one CTA on each SM (not the two that
/// fit), where such a part is at most [`BWG_ONE_AN_SM_MAX_CHUNKS`] deep (40-64 tokens: without
/// overlap, [`BWG_ONE_AN_SM_MAX_CHUNKS_M64`]; the 48-token tile as measured forced in session 48,
/// Qwen2-1.5B down plain 0.93-0.96x of the 64-token plan) and those CTAs fill >= 90 % of the SMs: a second
/// CTA on an SM then adds parts for the last arriver to sum rather than bytes in flight. Such a
/// plan runs alone on its SMs (Plan::alone: the launch takes an SM's shared memory), so the next
/// kernels' CTAs, started early by the programmatic launch, do not share them.
/// Measured on the H100 (bench/NOTES.md sessions 46-47), forced splits, plain: Qwen2-1.5B down at
/// M = 16 (12 tiles of 140 chunks) 11 parts (132 CTAs) 9.20 us against the slots' 17 (204 CTAs)
/// 10.66; at M = 24 / 32 (32-token tile) 11 parts 9.87 against 11.67, at M = 48 / 64 (64-token
/// tile) 12.7 against 13.0-13.2; 8192 x 1536 at M = 48 / 64 11 parts 12.0 against 12.9-13.0;
/// Llama-8B o at M = 24 / 32 4 parts (128 CTAs of 16 chunks) 9.5 against 12.2-12.5; 7168 x 2048 8
/// parts 9.5 against 11.5 (M = 24 / 32), 12.6 against 12.8 (M = 48 / 64); 3072 x 4096 0.88x,
/// 8192 x 1536 (32-token tile) 0.97x. Library A/B of the 16-token rule (A B B A, M = 9-16), plain:
/// Qwen2-1.5B down 0.85x, 8192 x 1536 0.84-0.86x, 7168 x 2048 0.84x, 5120 x 2560 0.90x, 2048 x
/// 5120 / 1536 x 8192 0.88-0.90x, 2048 x 8192 0.97x (f16, bf16 zp, group 32 alike; the 32-token
/// tile 0.77-0.89x in all three); its Qwen2-1.5B step --between 0.948x, e2e B = 12 / 16 0.99x.
/// With overlap and without the SM to itself the same plans ran 0.91-1.31x per call and the
/// overlapping Qwen2-1.5B step 1.03x slower: the next layer's qkv (dect, triggering at entry)
/// started its CTAs beside down's; with it (a lab build, session 47) the qkv + down step ran
/// 0.895x and the whole step 0.986x. Library A/B with overlap (session 47, A B B A): Qwen2-1.5B
/// down 0.97x (M = 12-32), 8192 x 1536 0.97x, 7168 x 2048 0.88x (16 tokens) / 0.96x (32),
/// 5120 x 2560 0.97x, 2048 x 5120 0.955x, 3072 x 4096 0.94-0.96x, Llama-8B o 0.84-0.85x (its step
/// at M = 32 0.981x; Qwen2-1.5B's at M = 16 0.993x, at M = 32 1.006x); but 2048 x 8192 (2 parts)
/// 1.09-1.13x, hence [`BWG_ONE_AN_SM_OVERLAP_MIN_PARTS`]; the 64-token tile 1.05-1.11x (all but
/// 4096 x 2048 0.94x), hence plain only there, where it ran (16 / 32 tokens: alone or not, 1.00x)
/// Qwen2-1.5B down 0.97-0.99x, 8192 x 1536 0.94-0.955x, 3584 x 2560 0.95x, 4096 x 2048 0.89-0.90x,
/// 7168 x 2048 (14 chunks) 0.99-1.01x, but 8192 x 2048 / 5120 x 3072 (16 chunks) 1.04-1.06x.
/// Where one CTA an SM takes deeper parts it loses: Llama-8B down at M = 16 4 parts of 56 chunks
/// 24.2 us against 8 parts 15.7, at M = 48 31.8 against 25.7; Llama-70B o at M = 48 2 parts of 64
/// chunks 34.7 against 28.3; where it fills 73 % of the SMs too: Llama-8B qkv at M = 24 2 parts
/// 13.5 against 12.8 (the fill bound).
pub fn bwg_one_an_sm(p: &Problem, v: &Variant, tiles: i64, sms: i64, chunks: i64) -> Option<i64> {
    let s = sms / tiles.max(1);
    let per_part = (chunks + s.max(1) - 1) / s.max(1);
    let fills = 10 * tiles * s >= 9 * sms;
    let deep_ok = match v.tm {
        16..=32 => per_part <= BWG_ONE_AN_SM_MAX_CHUNKS && (!p.overlap || s >= BWG_ONE_AN_SM_OVERLAP_MIN_PARTS),
        33..=64 => !p.overlap && per_part <= BWG_ONE_AN_SM_MAX_CHUNKS_M64,
        _ => false,
    };
    (s > 1 && deep_ok && fills).then_some(s)
}

/// [`bwg_split`] with the override `over` (None: the planned split, as the tile chooser needs it).
fn bwg_split_with(p: &Problem, sms: i64, v: &Variant, over: Option<i64>) -> BwgSplit {
    let tiles = bwg_tiles(p, v);
    let slots = sms * v.ctas_per_sm() as i64;
    let chunks = p.k() / 64;
    let ch = variants::bwg_chunks_per_stage(v.tm, v.tn, v.p) as i64;
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
        let mut s = (slots / tiles.max(1)).min((spt / 2).max(1));
        if let Some(s1) = bwg_one_an_sm(p, v, tiles, sms, chunks) {
            s = s.min(s1);
        }
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
    // (BWG_SK_SMALL_MAX_RATIO_PCT); the 40-64-token tiles only where whole tiles take more than one
    // round of the slots (Qwen2-1.5B gate_up, 140 tiles of 12 stages: 1.03-1.05x slower)
    // (the 256-feature tiles also where whole tiles leave SMs idle: BWG_SK_N256_M64_MAX_RATIO_PCT)
    let small_ok = plain.split == 1 && (v.tm <= 32 || v.tn > 128 || tiles > slots);
    // the 32-56-token tiles also instead of an even split whose parts are deep
    // (BWG_SK_DEEP_PART_STAGES): there a part's partial is small beside the stages it saves
    // (the 128-feature 40-56-token tiles count the part in stages of BWG_SK_DEEP_STAGE_CHUNKS_M40_56
    // chunks, whatever their own, unless the even split sums its partials sliced)
    let deep = if v.tn == 128 && (40..=56).contains(&v.tm) && !sliced_sum(v, tiles, plain) {
        let part = (chunks + plain.split - 1) / plain.split.max(1);
        (part + BWG_SK_DEEP_STAGE_CHUNKS_M40_56 - 1) / BWG_SK_DEEP_STAGE_CHUNKS_M40_56 >= BWG_SK_DEEP_PART_STAGES
    } else {
        busiest >= BWG_SK_DEEP_PART_STAGES
    };
    let deep_even = v.tm >= 24 && v.tm < 64 && plain.split > 1 && deep;
    let pct = if v.tm >= BWG_STREAMK_MIN_TM {
        90
    } else if small_ok && v.tn > 128 && v.tm > 56 {
        BWG_SK_N256_M64_MAX_RATIO_PCT
    } else if small_ok {
        BWG_SK_SMALL_MAX_RATIO_PCT
    } else if deep_even {
        if v.tm <= 32 {
            BWG_SK_DEEP_MAX_RATIO_PCT
        } else {
            BWG_SK_DEEP_MAX_RATIO_PCT_M40_56
        }
    } else {
        0
    };
    // the 128 / 256-token tiles against their even split of two (summed in cluster pairs, no workspace):
    // a saving of at least the fix-up's stages
    let fixup = if plain.split == 2 { bwg_sk_fixup_stages(v.tm) } else { 0 };
    if 100 * busiest_streamk <= pct * busiest && busiest_streamk + fixup <= busiest {
        streamk
    } else {
        plain
    }
}

/// bwg's 128 / 256-token tiles take stream-K instead of an even split of two only where it takes
/// at least this many stages (of `bwg_chunks_per_stage`: three chunks at 128 tokens, two at 256)
/// off the busiest CTA: a contributor stores its 64 / 128 KB partial and an owner waits for and
/// sums them. A probe of Llama-8B qkv at M = 256
/// (bench/lab/probe_bwg.py, H100) put that at ~3.2 us for a contributor and ~6 us for an owner,
/// against ~1.3 us a stage. Forced on the H100 (bench/NOTES.md session 60), the even split of two
/// against stream-K at M = 256: 3584 x 7168 0.90x, 4096 x 7168 0.94x, 5120 x 7168 0.95x,
/// 4096 x 6144 0.97-0.985x (busiest 16 stages, stream-K 12); stream-K kept at 8192 x 6144 (32
/// against 24: the split 1.06x slower) and 14336 x 6144 (1.10x). Library A/B (A B B A, H100,
/// results/2026-12-07-s60-sk-fixup-h100.json.gz), every moved plan: M = 256 0.75-0.98x (K = 1536-8192,
/// N = 6144 / 7168), M = 1024 on N = 1536 0.77-0.96x (K = 1536-4096), 5120 x 1536 1.01x. The
/// 192-token tile's split did not win (0.99-1.05x). The 128-token tile (64 KB partials) takes 3
/// stages: library A/B at M = 128 (A B B A, H100, bench/NOTES.md session 61,
/// results/2026-12-07-s61-sk-fixup-m128-h100.json.gz), every plan it moves at M = 128: 1536 x 6144
/// 0.91x, 2048 x 7168 0.93x, 3072 x 7168 0.95x, 2048 x 6144 0.96x, 3072 x 6144 0.97x, 3584 x 7168
/// 0.98x, 5120 x 7168 0.98x, 7168 x 7168 1.014x (the boundary; kept rather than a second rule).
/// It also moves M = 256 on N = 3072 / 3584 (K <= 4096), where the 128-token tile serves: 0.90-0.99x
/// (1536 x 3072 0.90x, 4096 x 3072 0.99x; results/2026-12-07-s61-m256-prefill-h100.json.gz).
pub fn bwg_sk_fixup_stages(tm: u32) -> i64 {
    match tm {
        128 => 3,
        256 => 5,
        _ => 0,
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
    let ch = variants::bwg_chunks_per_stage(v.tm, v.tn, v.p) as i64;
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
    sliced_sum(v, bwg_tiles(p, v), bwg_split(p, sms, v))
}

fn sliced_sum(v: &Variant, tiles: i64, s: BwgSplit) -> bool {
    s.split > 1 && s.ctas == tiles * s.split && s.split * (v.tm * v.tn) as i64 * 4 > BWG_SLICED_ABOVE_BYTES
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
    VARIANTS.iter().any(|w| w.family == Family::Bwg && w.stream_k && w.tm == v.tm && w.tn == v.tn && w.pre == v.pre)
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

/// The 256-feature tiles take stream-K instead of whole tiles at [`BWG_SK_SMALL_MAX_RATIO_PCT`]
/// (48 / 56 tokens), the 64-token one at this bound: its partials (64 KB a contributor) cost
/// more. The 56-token tile forced on the H100 (bench/NOTES.md session 56, one process): Llama-70B
/// gate_up at M = 52 / 56 stream-K 123.0 / 126.0 us against whole tiles 136.8 / 139.3 (0.90x);
/// Llama-8B gate_up (87.5 %, stays whole) 1.03x / 1.0x. Routed (libraries A B B A with PDL,
/// results/2026-12-07-s56-planner-ring4-ab-h100.json.gz), M = 52 / 56: Llama-70B gate_up
/// 0.887 / 0.903x, 14336 x 28672 0.886 / 0.939x, 3584 x 57344 0.944 / 0.958x, 5120 / 7168 x 28672
/// 0.97-0.995x.
/// Measured on the H100 (bench/NOTES.md session 54, forced, M = 44-64): 3584 x 18944 (74 tiles on
/// 132 SMs, 8 of 14 stages: 57 %) stream-K 0.77x of whole tiles at 48 tokens, 0.86-0.88x at 64;
/// Llama-70B gate_up (224 tiles, 55 of 64 stages: 86 %) 0.87-0.90x at 48, 1.03-1.16x at 64;
/// Llama-8B gate_up (112 tiles, 14 of 16: 87.5 %) 1.11x at 48, 1.13x at 64.
pub const BWG_SK_N256_M64_MAX_RATIO_PCT: i64 = 75;

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
/// The 128-feature 40 / 48 / 56-token tiles count [`BWG_SK_DEEP_PART_STAGES`] in stages of this
/// many chunks (theirs before session 52 gave the 40-token exact tile four-chunk ones): measured on the
/// H100 (bench/NOTES.md session 54, forced in one process with PDL, M = 33 / 40), stream-K on that
/// tile ran 0.95x / 0.885x of the routed even split on 8192 x 6144 (26-chunk parts: 7 of its own
/// stages, 13 two-chunk ones) and 0.98x / 0.98x on 7168 x 7168 (28 chunks), which the count in
/// its own stages had left on the split.
/// Routed, libraries A B B A with PDL (H100, bench/NOTES.md session 56,
/// results/2026-12-07-s56-m56-sk40-ab-h100.json.gz), M = 33 / 40: 7168 x 7168 0.965 / 0.965x,
/// 8192 x 6144 0.956 / 0.961x, 4096 x 10240 0.978 / 0.967x, 8192 x 5120 0.983 / 0.978x; but
/// 14336 x 3584, whose 9-way split sums its partials sliced ([`bwg_sliced`]), 1.019 / 1.031x:
/// such splits keep counting in their own stages.
pub const BWG_SK_DEEP_STAGE_CHUNKS_M40_56: i64 = 2;
/// The same rule for the 40 / 48 / 56-token tiles (not the 64-token one, above), with this bound:
/// their partials are larger, and at 95 % the deep narrow 28672 x 2560 (20 tiles split 13 ways,
/// 18 stages a part against 17) took stream-K and lost 1.04x. Measured on an H100 (bench/NOTES.md
/// session 50, results/2026-12-06-s50-m40-56-sk-h100.json.gz, stream-K against the even split, with
/// overlap / plain, M = 40 / 48 / 56): Llama-70B qkv 0.91-0.94x / 0.91-0.92x, 7168 x 7168
/// 0.92-0.95x / 0.92-0.95x, 14336 x 5120 0.92-0.95x / 0.93-0.96x, 5120 x 14336 0.90-0.93x /
/// 0.91-0.93x, 4096 x 7168 (8 stages a part against 7) 0.95-0.99x / 0.97-1.02x; 8192 x 6144 (13
/// against 12, 92.3 %) and 28672 x 2560 keep the even split. Since session 52 the 40-token exact
/// tile's stages are four chunks, so its parts count half the stages: 7168 x 7168 (7 a part) no
/// longer passed BWG_SK_DEEP_PART_STAGES at M = 33-40, though stream-K measured 0.97x of its even
/// split there and 0.92-0.96x on 8192 x 6144 (H100, bench/NOTES.md session 52): hence
/// [`BWG_SK_DEEP_STAGE_CHUNKS_M40_56`] since session 56.
pub const BWG_SK_DEEP_MAX_RATIO_PCT_M40_56: i64 = 92;

/// bwg: stream-K over stages on every resident slot (at most one CTA per stage).
pub fn bwg_streamk(p: &Problem, sms: i64, v: &Variant) -> BwgSplit {
    let ch = variants::bwg_chunks_per_stage(v.tm, v.tn, v.p) as i64;
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
pub(super) fn bwg_tiles(p: &Problem, v: &Variant) -> i64 {
    (p.m + v.tm as i64 - 1) / v.tm as i64 * (p.n() / v.tn as i64)
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

/// Weights (K x N elements) up to which bwg's 32-token tile serves M = 33-64 on layers at least as
/// wide as deep (see [`bwg_m33_64_tile`]).
pub const BWG_M33_64_MAX_WEIGHTS: i64 = 1 << 24;

/// The token tile that serves M = 33-64 where [`bwg_m33_64_tile`] takes a tile wider than 32: the
/// smallest built one (40 / 48 / 56 / 64, kernels/variants.def) that holds M. Each is built in
/// every kind of the 64-token tile, with the same stages, so split and plan stay the same; a
/// narrower tile spends fewer tensor-core rows a chunk on padding tokens. The 48-token tile forced
/// against the routed 64-token plan in one process (H100, bench/NOTES.md session 48, M = 33 / 40
/// / 48, the same kind of plan), with overlap / plain: Llama-8B qkv 0.92-0.94x / 0.91-0.94x,
/// gate_up 0.87-0.92x / 0.90-0.93x, down 0.95-0.96x / 0.95-0.96x, Llama-70B qkv 0.96-0.97x /
/// 0.95-1.0x, o 0.93-0.94x / 0.93-0.95x, gate_up (stream-K) 0.88-0.93x / 0.85-0.95x, down
/// 0.92-0.98x / 0.93-0.97x, Qwen2-1.5B down 0.94-0.96x / 0.93-0.96x; bf16 with zero points
/// (overlap) 0.92-0.99x. The 40 / 56-token tiles routed against the 48 / 64-token ones (H100,
/// session 50, results/2026-12-06-s50-m40-56-tiles-h100.json.gz, libraries A B B A, with overlap /
/// plain), M = 33-40: Llama-8B qkv 0.96x / 0.97x, gate_up 0.97-0.98x / 0.97-0.98x, down
/// 0.97-0.98x / 0.98-0.99x, Llama-70B qkv 0.98x / 0.98x, o 0.97-0.98x / 0.97-0.98x, gate_up
/// 0.94-0.97x / 0.95-0.96x, down 0.96x / 0.96-0.98x, Qwen2-1.5B down 0.93-0.94x / 0.97-0.98x;
/// M = 49-56: 0.96-0.97x / 0.96-0.97x, 0.93-0.94x / 0.93x, 0.97-0.98x / 0.97x, 0.97-0.98x /
/// 0.98-0.99x, 0.95-0.96x / 0.96x, 0.91-0.93x / 0.90-0.95x, 0.96x / 0.93-0.96x, Qwen2-1.5B down
/// 0.99-1.0x / 1.0x; bf16 with zero points (overlap, M = 40 / 56) 0.94-0.99x / 0.98-1.03x.
pub fn bwg_m33_64_tokens(m: i64) -> u32 {
    bwg_smallest_tile_in(33, 64, m)
}

/// The smallest built 17-32-token tile that holds M (24 / 32): at M = 17-24 the 24-token tile,
/// every kind of the 32-token one at wgmma n = 24, 0.91-0.98x of it (bench/NOTES.md session 51).
pub fn bwg_m17_32_tokens(m: i64) -> u32 {
    bwg_smallest_tile_in(17, 32, m)
}

/// The smallest built bwg token tile of `lo..=hi` tokens that holds M (read from VARIANTS, so
/// kernels/variants.def stays the one list); `hi` where none does.
fn bwg_smallest_tile_in(lo: u32, hi: u32, m: i64) -> u32 {
    VARIANTS.iter().filter(|v| v.family == Family::Bwg && (lo..=hi).contains(&v.tm) && v.tm as i64 >= m).map(|v| v.tm).min().unwrap_or(hi)
}

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
/// ([`bwg_m32_streamk`]: Qwen2-1.5B gate_up), else wg. Which tile wider than 32 tokens:
/// [`bwg_m33_64_tokens`].
fn bwg_m33_64_tile(p: &Problem, sms: i64) -> Option<u32> {
    let weights = p.k() * p.n();
    if weights < WG_MIN_WEIGHTS {
        None
    } else if p.k() <= p.n() && weights <= BWG_M33_64_MAX_WEIGHTS {
        Some(32)
    } else if p.k() > p.n() || p.k() >= BWG_M64_WIDE_MIN_K || bwg_m64_streamk(p, sms) {
        Some(bwg_m33_64_tokens(p.m))
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
        17..=32 => bwg_m17_32_tokens(p.m),
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
