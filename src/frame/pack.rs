//! Canonical tensors -> frame tensors. The only code that knows the frame's packed layout
//! (version 1, written down in `mod.rs`); a new frame version replaces this file and nothing else
//! in the builder.
//!
//! The builder hands columns over in blocks (`write`), so a layer's unpacked canonical form never
//! exists whole: peak extra memory is the frame itself plus one block.

use tch::{Device, Kind, Tensor};

use super::canonical::Columns;
use super::FrameMeta;

/// Column blocks start and end on multiples of this (a frame v1 zero-point word spans 8 columns;
/// 64 keeps every layout the conventions read, e.g. Marlin's 64-column tiles, aligned too).
pub const COLUMN_QUANTUM: i64 = 64;

/// A built frame: the tensors the GEMM op takes, and their metadata.
pub struct Frame {
    pub meta: FrameMeta,
    pub qweight: Tensor,
    pub scales: Tensor,
    pub zeros: Option<Tensor>,
    pub perm: Option<Tensor>,
}

/// Writes a version-1 frame block by block.
pub struct V1Writer {
    meta: FrameMeta,
    qweight: Tensor,
    scales: Tensor,
    zeros: Option<Tensor>,
    perm: Option<Tensor>,
}

/// uint8 `[8R, C]` -> int32 `[R, C]`, nibble `j` of word `(r, c)` = row `8r + j`.
fn pack_rows_into(out: &mut Tensor, q: &Tensor) {
    let (k, n) = q.size2().expect("pack: 2-D");
    let q = q.view([k / 8, 8, n]);
    let _ = out.zero_();
    for j in 0..8 {
        let part = q.select(1, j).to_kind(Kind::Int).bitwise_left_shift_tensor_scalar(4 * j);
        let _ = out.bitwise_or_tensor_(&part);
    }
}

/// uint8 `[R, 8C]` -> int32 `[R, C]`, nibble `j` of word `(r, c)` = column `8c + j`.
fn pack_cols_into(out: &mut Tensor, z: &Tensor) {
    let (r, n) = z.size2().expect("pack: 2-D");
    let z = z.view([r, n / 8, 8]);
    let _ = out.zero_();
    for j in 0..8 {
        let part = z.select(2, j).to_kind(Kind::Int).bitwise_left_shift_tensor_scalar(4 * j);
        let _ = out.bitwise_or_tensor_(&part);
    }
}

impl V1Writer {
    /// Allocates the frame on `device`; `perm` (int64 `[K]`, frame row -> input column) when the
    /// frame is act-ordered.
    pub fn new(meta: FrameMeta, scale_kind: Kind, device: Device, perm: Option<&Tensor>) -> V1Writer {
        assert_eq!(meta.has_perm, perm.is_some(), "pack: perm presence must follow the metadata");
        let (k, n, g) = (meta.k, meta.n, meta.groups());
        V1Writer {
            meta,
            qweight: Tensor::empty([k / 8, n], (Kind::Int, device)),
            scales: Tensor::empty([g, n], (scale_kind, device)),
            zeros: meta.has_zeros.then(|| Tensor::empty([g, n / 8], (Kind::Int, device))),
            perm: perm.map(|p| p.to_kind(Kind::Int).contiguous()),
        }
    }

    /// Packs canonical columns `[n0, n0 + cols.q.size()[1])` into the frame.
    pub fn write(&mut self, n0: i64, cols: &Columns) {
        let n = cols.q.size()[1];
        assert!(n0 % COLUMN_QUANTUM == 0 && n % COLUMN_QUANTUM == 0 && n0 + n <= self.meta.n);
        assert_eq!(self.meta.has_zeros, cols.zeros.is_some(), "pack: zero presence must follow the metadata");
        // Packing into a strided column slice of the frame, through a contiguous block.
        let mut block = Tensor::empty([self.meta.k / 8, n], (Kind::Int, self.qweight.device()));
        pack_rows_into(&mut block, &cols.q);
        self.qweight.narrow(1, n0, n).copy_(&block);
        self.scales.narrow(1, n0, n).copy_(&cols.scales);
        if let (Some(zeros), Some(z)) = (self.zeros.as_mut(), cols.zeros.as_ref()) {
            let mut zblock = Tensor::empty([self.meta.groups(), n / 8], (Kind::Int, z.device()));
            pack_cols_into(&mut zblock, z);
            zeros.narrow(1, n0 / 8, n / 8).copy_(&zblock);
        }
    }

    pub fn finish(self) -> Frame {
        Frame { meta: self.meta, qweight: self.qweight, scales: self.scales, zeros: self.zeros, perm: self.perm }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::canonical::{unpack_cols, unpack_rows, SEQUENTIAL};

    #[test]
    fn pack_round_trips_with_the_documented_readers() {
        let meta = FrameMeta::new(128, 128, 64, true, false).unwrap();
        let q = Tensor::randint(16, [128, 128], (Kind::Int64, Device::Cpu)).to_kind(Kind::Uint8);
        let z = Tensor::randint(16, [2, 128], (Kind::Int64, Device::Cpu)).to_kind(Kind::Uint8);
        let s = Tensor::rand([2, 128], (Kind::Half, Device::Cpu));
        let mut w = V1Writer::new(meta, Kind::Half, Device::Cpu, None);
        // Two blocks, written out of order.
        for n0 in [64i64, 0] {
            let cols = Columns {
                q: q.narrow(1, n0, 64),
                zeros: Some(z.narrow(1, n0, 64)),
                scales: s.narrow(1, n0, 64),
            };
            w.write(n0, &cols);
        }
        let f = w.finish();
        assert!(unpack_rows(&f.qweight).equal(&q));
        assert!(unpack_cols(f.zeros.as_ref().unwrap(), &SEQUENTIAL).equal(&z));
        assert!(f.scales.equal(&s));
        // A top nibble of 15 sets the sign bit; the word still reads back.
        assert_eq!(f.qweight.kind(), Kind::Int);
    }
}
