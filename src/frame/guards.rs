//! The frame's invariants, checked per GEMM call from what the host knows without a device sync:
//! dtypes, shapes, contiguity and presence against the metadata. (Building a frame checks values
//! too; that lives with the frame builder.)

use super::FrameMeta;
use crate::error::{arg_err, Result};
use crate::ffi::bridge::TensorDesc;
use crate::tensor::{expect_dtype, DType};

fn expect_shape(arg: &'static str, t: &TensorDesc, want: &[i64], what: &str) -> Result<()> {
    if t.dims() != want {
        return Err(arg_err(arg, format!("a tensor of shape {}", t.shape_str()), format!("must have shape {want:?} ({what})")));
    }
    if !t.is_contiguous() {
        return Err(arg_err(
            arg,
            format!("a tensor with strides {:?}", t.stride_vec()),
            "must be contiguous (call .contiguous())",
        ));
    }
    Ok(())
}

/// Checks the frame tensors of one call against `meta`; `act` is the activation dtype.
pub fn check_frame_tensors(
    meta: &FrameMeta,
    act: DType,
    qweight: &TensorDesc,
    scales: &TensorDesc,
    zeros: &TensorDesc,
    perm: &TensorDesc,
) -> Result<()> {
    let (k, n, groups) = (meta.k, meta.n, meta.groups());
    expect_dtype("qweight", qweight, &[DType::I32], "must be torch.int32 (8 int4 values per word)")?;
    expect_shape("qweight", qweight, &[n / 16, k / 64, 128], "[N/16, K/64, 128] for the frame's K and N (frame v2)")?;

    if DType::from_code(scales.dtype) != Some(act) {
        let act_name = if act == DType::F16 { "torch.float16" } else { "torch.bfloat16" };
        expect_dtype("scales", scales, &[act], &format!("must have the activation's dtype {act_name}"))?;
    }
    expect_shape("scales", scales, &[groups, n], "[K/group, N]")?;

    match (meta.has_zeros, zeros.present) {
        (true, true) => {
            expect_dtype("zeros", zeros, &[DType::I32], "must be torch.int32 (8 packed int4 zero points per word)")?;
            expect_shape("zeros", zeros, &[groups, n / 8], "[K/group, N/8]")?;
        }
        (true, false) => {
            return Err(arg_err("zeros", "None", "the frame was built with zero points (frame_meta flags); pass them"))
        }
        (false, true) => {
            return Err(arg_err(
                "zeros",
                "a tensor",
                "the frame is symmetric (frame_meta flags): zero points are not read, pass None",
            ))
        }
        (false, false) => {}
    }
    match (meta.has_perm, perm.present) {
        (true, true) => {
            expect_dtype("perm", perm, &[DType::I32], "must be torch.int32")?;
            expect_shape("perm", perm, &[k], "[K]")?;
        }
        (true, false) => {
            return Err(arg_err("perm", "None", "the frame was built for act order (frame_meta flags); pass its permutation"))
        }
        (false, true) => {
            return Err(arg_err("perm", "a tensor", "the frame has no act-order permutation (frame_meta flags); pass None"))
        }
        (false, false) => {}
    }
    Ok(())
}
