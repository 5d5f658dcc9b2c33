//! The cost model of the wgmma family: picks the token tile and the K split together.
//!
//! A CTA of token tile `tm` streams `ceil(C / s)` chunks of 64 k (C = K / 64) for one 128-feature
//! tile; `s` CTAs split one tile's K. Estimated time, in nanoseconds:
//!
//! ```text
//! waves * (fixed + chunks * chunk(tm, resident))  +  (s > 1) * s * reduce(tm)
//! waves = ceil(tiles * s / (sms * occupancy)),  resident = min(tiles * s, sms * occupancy)
//! chunk = max(mma_per_token * tm, weight_bytes_per_chunk * resident / hbm_bytes_per_ns) + issue
//! ```
//!
//! Wave quantization, the fixed cost per CTA (pipeline fill, epilogue) and the reduction's cost
//! (each split writes and the last arriver reads an fp32 tile) are the three terms lesson 5 of
//! `../shared/DESIGN.md` names. The constants are measured on the H200 by `bench/calibrate.py`,
//! which writes `src/plan/calibration-h200.txt` (checked in, with GPU, date and commit); build.rs
//! turns that file into [`WG_COST`] (a missing or malformed value fails the build).

/// Constants of the model, in nanoseconds and bytes.
#[derive(Clone, Copy, Debug)]
pub struct WgCost {
    /// Fixed cost of one CTA: filling the ring, the epilogue.
    pub fixed_ns: f64,
    /// Tensor-core time per chunk per token of the tile (2 warpgroups x 4 wgmma m64nTMk16).
    pub mma_ns_per_token: f64,
    /// Instruction overhead per chunk (dequantization, barriers, copies issued).
    pub issue_ns: f64,
    /// HBM bytes per nanosecond shared by all resident CTAs.
    pub hbm_bytes_per_ns: f64,
    /// Per split and per token of the tile: writing and reading back an fp32 partial.
    pub reduce_ns_per_token: f64,
}

include!(concat!(env!("OUT_DIR"), "/calibration.rs"));

/// Bytes of weights (int4 + scales) one CTA streams per chunk: 128 features x 64 k / 2 + scales.
const WEIGHT_BYTES_PER_CHUNK: f64 = 4096.0 + 256.0;

/// Largest split considered (more CTAs per tile than this only add reduction traffic).
pub const WG_MAX_SPLIT: i64 = 16;

impl WgCost {
    /// Estimated nanoseconds for `tiles` output tiles of token tile `tm`, K split `s` ways, with
    /// `chunks` K chunks per tile, on `slots` resident CTAs (SMs x occupancy).
    pub fn estimate(&self, tm: i64, tiles: i64, s: i64, chunks: i64, slots: i64) -> f64 {
        let ctas = tiles * s;
        let waves = ((ctas + slots - 1) / slots) as f64;
        let resident = ctas.min(slots) as f64;
        let per_chunk =
            (self.mma_ns_per_token * tm as f64).max(WEIGHT_BYTES_PER_CHUNK * resident / self.hbm_bytes_per_ns) + self.issue_ns;
        let per_cta = self.fixed_ns + ((chunks + s - 1) / s) as f64 * per_chunk;
        let reduce = if s > 1 { s as f64 * self.reduce_ns_per_token * tm as f64 } else { 0.0 };
        waves * per_cta + reduce
    }

    /// The split (1 = whole K) with the least estimated time for one token tile.
    pub fn best_split(&self, tm: i64, tiles: i64, chunks: i64, slots: i64) -> (i64, f64) {
        (1..=WG_MAX_SPLIT.min(chunks).max(1))
            .map(|s| (s, self.estimate(tm, tiles, s, chunks, slots)))
            .fold((1, f64::INFINITY), |best, cur| if cur.1 < best.1 { cur } else { best })
    }
}
