//! Canonical tensors -> frame tensors. The only code of the builder that knows the frame's packed
//! layout (the current version, written down in `mod.rs`, whose `pack_qweight` is the scalar
//! statement of the same map); a new frame version changes this file and nothing else in the
//! builder.
//!
//! The builder hands columns over in blocks (`write`), so a layer's unpacked canonical form never
//! exists whole: peak extra memory is the frame itself plus one block's temporaries.

use tch::{Device, Kind, Tensor};

use super::canonical::Columns;
use super::FrameMeta;

/// Column blocks start and end on multiples of this: a frame qweight stripe spans 16 columns and a
/// zero-point word 8; 64 also keeps every layout the conventions read (e.g. Marlin's 64-column
/// tiles) aligned.
pub const COLUMN_QUANTUM: i64 = 64;

/// A built frame: the tensors the GEMM op takes, and their metadata.
pub struct Frame {
    pub meta: FrameMeta,
    pub qweight: Tensor,
    pub scales: Tensor,
    pub zeros: Option<Tensor>,
    pub perm: Option<Tensor>,
}

/// Writes a frame of the current version, block of columns by block of columns.
pub struct FrameWriter {
    meta: FrameMeta,
    qweight: Tensor,
    scales: Tensor,
    zeros: Option<Tensor>,
    perm: Option<Tensor>,
}

/// Frame v2 qweight of columns `[n0, n0 + n)`: uint8 `q [K, n]` -> int32 words written into `dst`
/// (the frame's stripes `n0/16 ..`, `[n/16, K/64, 128]`). With `k = 64c + 16ci + 4j + 2b + e` and
/// `n = 16s + 8h + gi`, nibble `p = h + 2b + 4e` of word `j` of lane `4gi + ci` in block `(s, c)` is
/// `q[k, n]` (mod.rs). The words are assembled in `q`'s own order (8 strided nibble planes), and
/// only the 8x smaller word tensor is permuted into place.
fn pack_qweight_block(dst: &mut Tensor, q: &Tensor) {
    let (k, n) = q.size2().expect("pack: 2-D");
    let v = q.reshape([k / 64, 4, 4, 2, 2, n / 16, 2, 8]); // c ci j b e s h gi
    let mut words = Tensor::zeros([k / 64, 4, 4, n / 16, 8], (Kind::Int, q.device())); // c ci j s gi
    for e in 0..2 {
        for b in 0..2 {
            for h in 0..2 {
                let p = h + 2 * b + 4 * e;
                let plane = v.select(6, h).select(4, e).select(3, b);
                let part = plane.to_kind(Kind::Int).bitwise_left_shift_tensor_scalar(4 * p);
                let _ = words.bitwise_or_tensor_(&part);
            }
        }
    }
    // [c, ci, j, s, gi] -> [s, c, gi, ci, j] = [n/16, K/64, lane = 4gi + ci, j].
    dst.view([n / 16, k / 64, 8, 4, 4]).copy_(&words.permute([3, 0, 4, 1, 2]));
}

/// uint8 `[R, 8C]` -> int32 `[R, C]`, nibble `j` of word `(r, c)` = column `8c + j` (zero points).
fn pack_cols(z: &Tensor) -> Tensor {
    let (r, n) = z.size2().expect("pack: 2-D");
    let z = z.view([r, n / 8, 8]);
    let mut out = Tensor::zeros([r, n / 8], (Kind::Int, z.device()));
    for j in 0..8 {
        let part = z.select(2, j).to_kind(Kind::Int).bitwise_left_shift_tensor_scalar(4 * j);
        let _ = out.bitwise_or_tensor_(&part);
    }
    out
}

impl FrameWriter {
    /// Allocates the frame on `device`; `perm` (int64 `[K]`, frame row -> input column) when the
    /// frame is act-ordered.
    pub fn new(meta: FrameMeta, scale_kind: Kind, device: Device, perm: Option<&Tensor>) -> FrameWriter {
        assert_eq!(meta.has_perm, perm.is_some(), "pack: perm presence must follow the metadata");
        let (k, n, g) = (meta.k, meta.n, meta.groups());
        FrameWriter {
            meta,
            qweight: Tensor::empty([n / 16, k / 64, 128], (Kind::Int, device)),
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
        pack_qweight_block(&mut self.qweight.narrow(0, n0 / 16, n / 16), &cols.q);
        self.scales.narrow(1, n0, n).copy_(&cols.scales);
        if let (Some(zeros), Some(z)) = (self.zeros.as_mut(), cols.zeros.as_ref()) {
            zeros.narrow(1, n0 / 8, n / 8).copy_(&pack_cols(z));
        }
    }

    pub fn finish(self) -> Frame {
        Frame { meta: self.meta, qweight: self.qweight, scales: self.scales, zeros: self.zeros, perm: self.perm }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::canonical::{unpack_cols, SEQUENTIAL};

    #[test]
    fn pack_agrees_with_the_layout_definition_across_blocks() {
        let (k, n) = (128i64, 128i64);
        let meta = FrameMeta::new(k, n, 64, true, false).unwrap();
        let q = Tensor::randint(16, [k, n], (Kind::Int64, Device::Cpu)).to_kind(Kind::Uint8);
        let z = Tensor::randint(16, [2, n], (Kind::Int64, Device::Cpu)).to_kind(Kind::Uint8);
        let s = Tensor::rand([2, n], (Kind::Half, Device::Cpu));
        let mut w = FrameWriter::new(meta, Kind::Half, Device::Cpu, None);
        // Two blocks, written out of order.
        for n0 in [64i64, 0] {
            let cols = Columns { q: q.narrow(1, n0, 64), zeros: Some(z.narrow(1, n0, 64)), scales: s.narrow(1, n0, 64) };
            w.write(n0, &cols);
        }
        let f = w.finish();
        // The words are exactly mod.rs's scalar pack_qweight of q.
        let qv: Vec<u8> = Vec::<u8>::try_from(q.reshape([-1])).unwrap();
        let want = crate::frame::pack_qweight(&qv, k as usize, n as usize);
        let got: Vec<i32> = Vec::<i32>::try_from(f.qweight.reshape([-1])).unwrap();
        assert_eq!(got, want);
        assert!(unpack_cols(f.zeros.as_ref().unwrap(), &SEQUENTIAL).equal(&z));
        assert!(f.scales.equal(&s));
    }
}
