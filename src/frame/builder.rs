//! The frame builder: a [`Layer`] (any convention, canonical form) -> a [`Frame`], block of
//! columns by block of columns, then the frame's own invariants (`guards.rs`, the same check a
//! GEMM call makes) on the result.

use tch::{Device, Kind, Tensor};

use super::canonical::Columns;
use super::conventions::Layer;
use super::guards::check_frame_tensors;
use super::pack::{Frame, FrameWriter, COLUMN_QUANTUM};
use crate::error::{Error, Result};
use crate::ffi::bridge::TensorDesc;
use crate::ffi::MAX_DIMS;
use crate::tensor::DType;

/// Unpacked elements (`K * columns`) per block: bounds the builder's temporaries (a few bytes per
/// element) to tens of MB whatever the layer's size.
pub const BLOCK_ELEMS: i64 = 4 << 20;

/// Columns per block for a K-row layer: a multiple of [`COLUMN_QUANTUM`], at least one quantum.
pub fn block_columns(k: i64, n: i64) -> i64 {
    let cols = (BLOCK_ELEMS / k.max(1)) / COLUMN_QUANTUM * COLUMN_QUANTUM;
    cols.clamp(COLUMN_QUANTUM, n.max(COLUMN_QUANTUM))
}

pub fn build(layer: Layer) -> Result<Frame> {
    let _no_grad = tch::no_grad_guard();
    let meta = layer.meta;
    let mut w = FrameWriter::new(meta, layer.scale_kind, layer.device, layer.perm.as_ref());
    let step = block_columns(meta.k, meta.n);
    let mut n0 = 0;
    while n0 < meta.n {
        let nb = step.min(meta.n - n0);
        let cols = Columns {
            q: (layer.q)(n0, nb),
            zeros: layer.zeros.as_ref().map(|z| z.narrow(1, n0, nb)),
            scales: layer.scales.narrow(1, n0, nb),
        };
        w.write(n0, &cols);
        n0 += nb;
    }
    let frame = w.finish();
    self_check(&frame)?;
    Ok(frame)
}

fn dtype_code(kind: Kind) -> i32 {
    match kind {
        Kind::Uint8 => 0,
        Kind::Int => 3,
        Kind::Int64 => 4,
        Kind::Half => 5,
        Kind::Float => 6,
        Kind::BFloat16 => 15,
        _ => -1,
    }
}

/// A descriptor of a built tensor, so the frame passes the very guard every GEMM call applies.
pub fn describe(t: Option<&Tensor>) -> TensorDesc {
    let mut d = TensorDesc {
        present: false,
        data: 0,
        dtype: 0,
        device_type: 0,
        device_index: -1,
        ndim: 0,
        sizes: [0; MAX_DIMS],
        strides: [0; MAX_DIMS],
    };
    if let Some(t) = t {
        d.present = true;
        d.data = t.data_ptr() as usize;
        d.dtype = dtype_code(t.kind());
        (d.device_type, d.device_index) = match t.device() {
            Device::Cuda(i) => (1, i as i32),
            _ => (0, -1),
        };
        let (sizes, strides) = (t.size(), t.stride());
        d.ndim = sizes.len() as i32;
        d.sizes[..sizes.len()].copy_from_slice(&sizes);
        d.strides[..strides.len()].copy_from_slice(&strides);
    }
    d
}

fn self_check(f: &Frame) -> Result<()> {
    let act = if f.scales.kind() == Kind::Half { DType::F16 } else { DType::BF16 };
    check_frame_tensors(
        &f.meta,
        act,
        &describe(Some(&f.qweight)),
        &describe(Some(&f.scales)),
        &describe(f.zeros.as_ref()),
        &describe(f.perm.as_ref()),
    )
    .map_err(|e| Error::Internal(format!("the builder produced a frame its own guard refuses: {e}")))
}
