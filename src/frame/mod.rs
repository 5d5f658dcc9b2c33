//! The weight frame: the one layout every kernel family and the CPU path read, for every M.
//!
//! # Frame layout, version 2 (the single written definition; kernels/params.cuh points here)
//!
//! A W4A16 linear layer computes `out[m, n] = sum_k x[m, k] * W[k, n] (+ bias[n])` with
//! `W[k, n] = (q[k, n] - z[g(k), n]) * s[g(k), n]`, where `q` and `z` are unsigned 4-bit values
//! and `g(k) = k / G` for the effective group size `G` (`G = K` for per-channel, `group_size = -1`).
//!
//! | tensor    | dtype                | shape              | content                                             |
//! |-----------|----------------------|--------------------|-----------------------------------------------------|
//! | `qweight` | int32                | `[N/16, K/64, 128]`| `q`, in MMA-fragment order (below)                  |
//! | `scales`  | activation dtype     | `[K/G, N]`         | `s[g, n]`                                           |
//! | `zeros`   | int32, or absent     | `[K/G, N/8]`       | nibble `j` of word `(g, c)` is `z[g, 8c + j]`, exact |
//! | `perm`    | int32, or absent     | `[K]`              | act order: frame row `k` multiplies `x[:, perm[k]]` |
//! | `bias`    | activation dtype     | `[N]`              | (a call argument, not part of the frame)            |
//!
//! `qweight[s, c, :]` holds the 16 x 64 block of rows `n in [16s, 16s+16)` and `k in [64c, 64c+64)`
//! as 32 lanes x 4 words (16 bytes per lane, the decode kernel's one load). Word `j` of lane
//! `L = 4*gi + ci` is the A fragment of MMA step `j` for the lane: its nibble `p` (bits 4p..4p+3) is
//! `q[k, n]` with `n = 16s + gi + 8*(p & 1)` and `k = 64c + 16*ci + 4*j + 2*((p >> 1) & 1) + (p >> 2)`.
//! So a lane's four words cover rows `gi, gi+8` and the 16 consecutive `k` of `[16ci, 16ci+16)`,
//! and nibbles (0,4), (1,5), (2,6), (3,7) are the half2 registers a0..a3 (lower half = lower k).
//! [`pack_qweight`] and [`unpack_qweight`] implement this map; the frame builder's `pack.rs` is its
//! tensor-op twin (on the checkpoint's device), tested word for word against [`pack_qweight`].
//!
//! All tensors are contiguous and on the activation's device. A symmetric frame has no `zeros`
//! (the zero is 8 for every group); that is a property of the frame, recorded in its metadata,
//! never inferred from whether a tensor was passed. With `perm`, the frame's rows are already
//! sorted into groups, so row `k` still belongs to group `k / G`, and the GEMM gathers
//! `x[:, perm]`: `x[:, perm] @ W_frame == x @ W_checkpoint`.
//!
//! # Metadata (`frame_meta`, an `int[]` the op receives)
//!
//! `[FRAME_MAGIC + version, K, N, group_size, flags]`, flags bit 0 = has zero points,
//! bit 1 = has act-order permutation, bit 2 = a shard frame whose x has fewer columns than the
//! frame has rows; only then a sixth element follows: `x_cols` (below). `group_size` is the
//! declared one (-1 = per channel). It is produced only by [`FrameMeta::encode`] (exposed as
//! `torch.ops.mate.frame_meta`).
//!
//! # The two invariants: whole layer, and row-parallel act-order shard ("K not full")
//!
//! **Whole layer** (every frame without flag bit 2): x has `K` columns, the frame has `K` rows;
//! row `k` is in group `k / G`; with `perm`, `perm` is a permutation of `0..K`.
//!
//! **Shard** (flag bit 2, `x_cols < K`): a tensor-parallel rank's K slice of an act-order layer
//! (`shard.rs`). x has `x_cols` columns (the rank's slice of the input features); the frame has
//! `K >= x_cols` rows, still row `k` in group `k / G` (so every kernel reads it unchanged), and
//! `perm` (required) maps each frame row to an x column: every value lies in `[0, x_cols)`, every
//! x column appears at least once (exactly once among the real rows). The rows the frame adds
//! are padding whose weight is exactly 0 (`q` = the group's zero point); they gather some valid
//! x column, so they add `0 * x` (0 for finite x; NaN where that x is inf or NaN, an input the
//! layer's output is not finite for anyway). The GEMM validates x against `x_cols`, the frame's
//! tensors against `K`. The kernels read x only through `perm` here (`x[m * x_row_stride +
//! perm[k]]`), so they serve shard frames unchanged; their poisoning of an out-of-range `perm`
//! entry bounds it by `K`, not `x_cols`, so `perm < x_cols` is the builder's guarantee on CUDA
//! (the CPU path checks it per call).
//!
//! # Building frames (`torch.ops.mate.frame_from_*`)
//!
//! Checkpoint tensors become a frame in two steps: a convention (`conventions/`: GPTQ v1/v2, AWQ,
//! compressed-tensors, vLLM-Marlin-repacked) decodes them into the canonical form
//! (`canonical.rs`: unpacked q in frame row order, exact zeros, scales, act-order permutation),
//! and `pack.rs` alone turns canonical columns into this layout. `builder.rs` drives the two block
//! by block and checks the result with `guards.rs`; `build_guards.rs` and `act_order.rs` hold the
//! rules for the inputs. `ffi.rs` is the builder's `cxx` bridge (cpp/frame_ops.cpp). `shard.rs`
//! builds a tensor-parallel rank's frame from its slice (column, row, and the K-not-full
//! regrouping of a row-parallel act-order slice into the shard invariant above).

pub mod act_order;
pub mod build_guards;
pub mod builder;
pub mod canonical;
pub mod conventions;
pub mod ffi;
pub mod guards;
pub mod pack;
pub mod shard;

use crate::error::{arg_err, ensure, Result};

/// The frame layout version this build reads and writes.
pub const FRAME_VERSION: i64 = 2;
/// Distinguishes a mate frame list from an arbitrary int list.
pub const FRAME_MAGIC: i64 = 0x4D41_5445_0000; // "MATE" << 16
pub const META_LEN: usize = 5;
/// Length of a shard frame's list (flag bit 2): `x_cols` follows the flags.
pub const META_LEN_SHARD: usize = 6;
/// Declared group sizes the kernels serve.
pub const GROUP_SIZES: [i64; 4] = [-1, 32, 64, 128];
/// Shape envelope of every kernel family: K and N multiples of this.
pub const K_ALIGN: i64 = 64;
pub const N_ALIGN: i64 = 64;

const FLAG_ZEROS: i64 = 1;
const FLAG_PERM: i64 = 2;
const FLAG_X_COLS: i64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameMeta {
    pub k: i64,
    pub n: i64,
    /// Declared group size (-1 = per channel).
    pub group_size: i64,
    pub has_zeros: bool,
    pub has_perm: bool,
    /// Columns of x (the layer's input features as this frame sees them): `k` for a whole layer,
    /// fewer for a row-parallel act-order shard (the shard invariant above).
    pub x_cols: i64,
}

impl FrameMeta {
    /// A frame description, checked against the shape envelope.
    pub fn new(k: i64, n: i64, group_size: i64, has_zeros: bool, has_perm: bool) -> Result<FrameMeta> {
        let meta = FrameMeta { k, n, group_size, has_zeros, has_perm, x_cols: k };
        meta.check()?;
        Ok(meta)
    }

    /// The same frame read by an x of `x_cols` columns (a shard frame when `x_cols < K`).
    pub fn with_x_cols(self, x_cols: i64) -> Result<FrameMeta> {
        let meta = FrameMeta { x_cols, ..self };
        meta.check()?;
        Ok(meta)
    }

    /// A shard frame: x has fewer columns than the frame has rows.
    pub fn is_shard(&self) -> bool {
        self.x_cols != self.k
    }

    /// Effective group size (K for per-channel).
    pub fn group(&self) -> i64 {
        if self.group_size == -1 {
            self.k
        } else {
            self.group_size
        }
    }

    pub fn groups(&self) -> i64 {
        self.k / self.group()
    }

    pub fn encode(&self) -> Vec<i64> {
        let flags = (self.has_zeros as i64) * FLAG_ZEROS
            | (self.has_perm as i64) * FLAG_PERM
            | (self.is_shard() as i64) * FLAG_X_COLS;
        let mut v = vec![FRAME_MAGIC + FRAME_VERSION, self.k, self.n, self.group_size, flags];
        if self.is_shard() {
            v.push(self.x_cols);
        }
        v
    }

    pub fn parse(meta: &[i64]) -> Result<FrameMeta> {
        let shown = || format!("{meta:?}");
        let want_len = match meta.get(4) {
            Some(f) if f & FLAG_X_COLS != 0 => META_LEN_SHARD,
            _ => META_LEN,
        };
        if meta.len() != want_len || meta[0] & !0xFFFF != FRAME_MAGIC {
            return Err(arg_err(
                "frame_meta",
                shown(),
                format!(
                    "must be the list torch.ops.mate.frame_meta() returns ([magic+version, K, N, \
                     group_size, flags], and x_cols after the flags when flag bit 2 is set)"
                ),
            ));
        }
        let version = meta[0] - FRAME_MAGIC;
        if version != FRAME_VERSION {
            return Err(arg_err(
                "frame_meta",
                format!("a version-{version} frame"),
                format!("this build reads frame version {FRAME_VERSION} only; rebuild the frame from the checkpoint"),
            ));
        }
        let flags = meta[4];
        ensure!(flags & !(FLAG_ZEROS | FLAG_PERM | FLAG_X_COLS) == 0, "frame_meta", shown(), "flags hold unknown bits")?;
        let whole = FrameMeta::new(meta[1], meta[2], meta[3], flags & FLAG_ZEROS != 0, flags & FLAG_PERM != 0)?;
        if flags & FLAG_X_COLS == 0 {
            return Ok(whole);
        }
        ensure!(
            meta[5] < meta[1],
            "frame_meta",
            shown(),
            "flag bit 2 (shard) is set only when x_cols is below the frame's K",
        )?;
        whole.with_x_cols(meta[5])
    }

    /// The shape envelope: the rules every frame obeys.
    fn check(&self) -> Result<()> {
        ensure!(
            GROUP_SIZES.contains(&self.group_size),
            "group_size",
            self.group_size,
            "must be one of -1 (per channel), 32, 64, 128",
        )?;
        ensure!(
            self.k >= K_ALIGN && self.k % K_ALIGN == 0,
            "K",
            self.k,
            &format!("the input features K must be a positive multiple of {K_ALIGN}"),
        )?;
        ensure!(
            self.n >= N_ALIGN && self.n % N_ALIGN == 0,
            "N",
            self.n,
            &format!("the output features N must be a positive multiple of {N_ALIGN}"),
        )?;
        ensure!(
            self.k % self.group() == 0,
            "group_size",
            self.group_size,
            &format!("K = {} must be a multiple of the group size", self.k),
        )?;
        ensure!(self.k <= i32::MAX as i64 && self.n <= i32::MAX as i64 / 8, "K/N", format!("{}x{}", self.k, self.n), "too large for 32-bit kernel indexing")?;
        if self.is_shard() {
            ensure!(
                self.x_cols >= 1 && self.x_cols < self.k,
                "x_cols",
                self.x_cols,
                &format!("a shard frame's x has between 1 and K - 1 = {} columns (K is the frame's rows)", self.k - 1),
            )?;
            ensure!(
                self.has_perm,
                "x_cols",
                self.x_cols,
                "a shard frame (x_cols < K) maps its rows to x columns through perm: it must have one",
            )?;
        }
        Ok(())
    }
}

/// (n, k) of nibble `p` of word `j` of lane `lane` in block (stripe `s`, chunk `c`).
#[inline]
pub fn nibble_position(s: usize, c: usize, lane: usize, j: usize, p: usize) -> (usize, usize) {
    let (gi, ci) = (lane / 4, lane % 4);
    (16 * s + gi + 8 * (p & 1), 64 * c + 16 * ci + 4 * j + 2 * ((p >> 1) & 1) + (p >> 2))
}

/// Packs `q` (row-major `[K, N]`, values 0..=15) into frame words (`[N/16, K/64, 128]` flattened).
pub fn pack_qweight(q: &[u8], k: usize, n: usize) -> Vec<i32> {
    let mut out = vec![0i32; k * n / 8];
    for (w, word) in out.iter_mut().enumerate() {
        let (blk, within) = (w / 128, w % 128);
        let (s, c) = (blk / (k / 64), blk % (k / 64));
        let (lane, j) = (within / 4, within % 4);
        let mut v = 0u32;
        for p in 0..8 {
            let (row, col) = nibble_position(s, c, lane, j, p);
            v |= ((q[col * n + row] & 0xF) as u32) << (4 * p);
        }
        *word = v as i32;
    }
    out
}

/// Inverse of [`pack_qweight`]: frame words -> `q` row-major `[K, N]`.
pub fn unpack_qweight(words: &[i32], k: usize, n: usize) -> Vec<u8> {
    let mut q = vec![0u8; k * n];
    for (w, &word) in words.iter().enumerate() {
        let (blk, within) = (w / 128, w % 128);
        let (s, c) = (blk / (k / 64), blk % (k / 64));
        let (lane, j) = (within / 4, within % 4);
        for p in 0..8 {
            let (row, col) = nibble_position(s, c, lane, j, p);
            q[col * n + row] = ((word as u32 >> (4 * p)) & 0xF) as u8;
        }
    }
    q
}

#[cfg(test)]
mod tests {
    #[test]
    fn pack_unpack_round_trip_and_every_position_once() {
        let (k, n) = (128, 32);
        let q: Vec<u8> = (0..k * n).map(|i| ((i * 7 + i / 13) % 16) as u8).collect();
        let words = super::pack_qweight(&q, k, n);
        assert_eq!(words.len(), k * n / 8);
        assert_eq!(super::unpack_qweight(&words, k, n), q);
        let mut seen = vec![false; k * n];
        for s in 0..n / 16 {
            for c in 0..k / 64 {
                for lane in 0..32 {
                    for j in 0..4 {
                        for p in 0..8 {
                            let (row, col) = super::nibble_position(s, c, lane, j, p);
                            assert!(!seen[col * n + row]);
                            seen[col * n + row] = true;
                        }
                    }
                }
            }
        }
        assert!(seen.iter().all(|&b| b));
    }

    use super::*;

    #[test]
    fn encode_parse_round_trip() {
        let m = FrameMeta::new(4096, 6144, 128, true, false).unwrap();
        assert_eq!(FrameMeta::parse(&m.encode()).unwrap(), m);
        let p = FrameMeta::new(1536, 1536, -1, false, true).unwrap();
        assert_eq!(p.group(), 1536);
        assert_eq!(FrameMeta::parse(&p.encode()).unwrap(), p);
    }

    #[test]
    fn refuses_other_versions_and_shapes() {
        let mut v = FrameMeta::new(128, 128, 64, false, false).unwrap().encode();
        v[0] = FRAME_MAGIC; // version 0
        assert!(FrameMeta::parse(&v).unwrap_err().to_string().contains("version-0"));
        assert!(FrameMeta::new(96, 128, 32, false, false).unwrap_err().to_string().contains("multiple of 64"));
        assert!(FrameMeta::new(128, 100, 32, false, false).unwrap_err().to_string().contains("N"));
        assert!(FrameMeta::new(192, 128, 128, false, false).unwrap_err().to_string().contains("multiple of the group"));
        assert!(FrameMeta::new(128, 128, 16, false, false).unwrap_err().to_string().contains("32, 64, 128"));
        assert!(FrameMeta::parse(&[1, 2, 3]).unwrap_err().to_string().contains("frame_meta"));
    }

    #[test]
    fn shard_meta_round_trips_and_keeps_whole_layers_at_five_elements() {
        let whole = FrameMeta::new(256, 128, 32, true, true).unwrap();
        assert_eq!(whole.encode().len(), META_LEN);
        let shard = whole.with_x_cols(200).unwrap();
        let v = shard.encode();
        assert_eq!((v.len(), v[4] & FLAG_X_COLS, v[5]), (META_LEN_SHARD, FLAG_X_COLS, 200));
        assert_eq!(FrameMeta::parse(&v).unwrap(), shard);
        assert_eq!(whole.with_x_cols(256).unwrap().encode(), whole.encode());
        // A shard frame needs perm, and x_cols in [1, K).
        let plain = FrameMeta::new(256, 128, 32, true, false).unwrap();
        assert!(plain.with_x_cols(200).unwrap_err().to_string().contains("perm"));
        assert!(whole.with_x_cols(300).unwrap_err().to_string().contains("x_cols"));
        let mut bad = v.clone();
        bad[5] = 256;
        assert!(FrameMeta::parse(&bad).unwrap_err().to_string().contains("below the frame's K"));
        assert!(FrameMeta::parse(&v[..5]).unwrap_err().to_string().contains("frame_meta"));
    }
}
