//! AWQ (AutoAWQ "gemm" packing, `quant_method = "awq"`, always with zero points):
//!
//! * `qweight` int32 `[K, N/8]`: nibble `j` of word `(k, c)` is column `8c + [0,2,4,6,1,3,5,7][j]`;
//! * `qzeros` int32 `[K/group, N/8]`, packed the same way, exact zero points (no offset);
//! * `scales` `[K/group, N]`.
//!
//! No act order. (vLLM's AWQ paths also require zero points: `awq_marlin` serves AWQ as
//! `uint4` with runtime zero points only.)

use super::Layer;
use crate::error::Result;
use crate::frame::build_guards::{packed, scales, Input};
use crate::frame::canonical::{unpack_cols, AWQ_ORDER};
use crate::frame::FrameMeta;
use crate::tensor::DType;

pub fn layer(qweight: Input, scale_t: Input, qzeros: Input, group_size: i64) -> Result<Layer> {
    let device = qweight.device()?;
    qweight.dtype_in(&[DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
    let dims = qweight.ndim(2, "AWQ qweight is [K, N/8]")?;
    let (k, n) = (dims[0], dims[1] * 8);
    let meta = FrameMeta::new(k, n, group_size, true, false)?;
    let groups = meta.groups();
    scale_t.same_device(&qweight)?;
    let scale_kind = scales(&scale_t, &[groups, n], "[K/group, N]")?;
    qzeros.same_device(&qweight)?;
    packed(&qzeros, &[groups, n / 8], "[K/group, N/8], AWQ-interleaved zero points along N")?;
    let zeros = unpack_cols(&qzeros.t, &AWQ_ORDER);
    let words = qweight.t.shallow_clone();
    Ok(Layer {
        meta,
        scale_kind,
        device,
        scales: scale_t.t.contiguous(),
        zeros: Some(zeros),
        perm: None,
        q: Box::new(move |n0, nb| unpack_cols(&words.narrow(1, n0 / 8, nb / 8), &AWQ_ORDER)),
    })
}
