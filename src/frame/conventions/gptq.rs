//! GPTQ (AutoGPTQ / GPTQModel, `quant_method = "gptq"`):
//!
//! * `qweight` int32 `[K/8, N]`: nibble `j` of word `(r, n)` is `q[8r + j, n]`;
//! * `scales` `[K/group, N]`;
//! * `qzeros` int32 `[K/group, N/8]`: nibble `j` of word `(g, c)` is column `8c + j`.
//!   `checkpoint_format = "gptq"` (v1) stores `zero - 1`, `"gptq_v2"` the exact zero.
//!   Never read when the config is symmetric (`sym = True`, zero 8), even when present;
//! * `g_idx` int32 `[K]`: the group of each row; read only when `desc_act = True` (otherwise it
//!   may be uninitialised memory).

use tch::Tensor;

use super::{check_group_size, frame_rows, held_groups, Layer};
use crate::error::{arg_err, Result};
use crate::frame::shard::HeldRows;
use crate::frame::act_order::perm_from_g_idx;
use crate::frame::build_guards::{first_true, packed, required, scales, Input};
use crate::frame::canonical::{unpack_cols, unpack_rows, SEQUENTIAL};
use crate::frame::FrameMeta;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// v1: `qzeros` holds zero - 1.
    V1,
    /// v2: `qzeros` holds the exact zero.
    V2,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "gptq" => Ok(Format::V1),
            "gptq_v2" => Ok(Format::V2),
            other => Err(arg_err(
                "checkpoint_format",
                format!("{other:?}"),
                "must be \"gptq\" (v1: qzeros store zero - 1) or \"gptq_v2\" (exact zeros), as the \
                 checkpoint's quantization config says",
            )),
        }
    }
}

pub fn layer(
    qweight: Input,
    scale_t: Input,
    qzeros: Option<Input>,
    g_idx: Option<Input>,
    group_size: i64,
    sym: bool,
    desc_act: bool,
    format: Format,
) -> Result<Layer> {
    let device = qweight.device()?;
    let dims = {
        qweight.dtype_in(&[crate::tensor::DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
        qweight.ndim(2, "GPTQ qweight is [K/8, N]")?
    };
    let (k, n) = (dims[0] * 8, dims[1]);
    let meta = FrameMeta::new(k, n, group_size, !sym, desc_act)?;
    let groups = meta.groups();

    scale_t.same_device(&qweight)?;
    let scale_kind = scales(&scale_t, &[groups, n], "[K/group, N]")?;

    let zeros = if sym {
        None // the config is symmetric: qzeros is not read, whatever it holds
    } else {
        Some(decode_zeros(&qzeros, &qweight, groups, n, format)?)
    };

    let perm = if desc_act {
        let g = required(&g_idx, "g_idx", "the config says desc_act=True (act order)")?;
        g.same_device(&qweight)?;
        Some(perm_from_g_idx(g, &meta)?)
    } else {
        None // not act order: g_idx is not read, whatever it holds
    };

    let words = qweight.t.shallow_clone();
    let p = perm.as_ref().map(|p| p.shallow_clone());
    Ok(Layer {
        meta,
        scale_kind,
        device,
        scales: scale_t.t.contiguous(),
        zeros,
        perm,
        q: Box::new(move |n0, nb| frame_rows(unpack_rows(&words.narrow(1, n0, nb)), p.as_ref())),
    })
}

/// Exact zero points (uint8 `[groups, N]`) from `qzeros` (`[groups, N/8]`, v1: zero - 1).
fn decode_zeros(qzeros: &Option<Input>, qweight: &Input, groups: i64, n: i64, format: Format) -> Result<Tensor> {
    let z = required(qzeros, "qzeros", "the config is asymmetric (sym=False)")?;
    z.same_device(qweight)?;
    packed(z, &[groups, n / 8], "[K/group, N/8], 8 zero points per word along N")?;
    let mut zero = unpack_cols(&z.t, &SEQUENTIAL);
    if format == Format::V1 {
        if let Some(i) = first_true(&zero.eq(15)) {
            let (g, c) = (i / n, i % n);
            return Err(arg_err(
                "qzeros",
                format!("a stored zero of 15 at group {g}, column {c}"),
                "checkpoint_format \"gptq\" (v1) stores zero - 1, so 15 means zero 16, outside the \
                 4-bit range a frame holds (was the checkpoint v2? then say checkpoint_format=\"gptq_v2\")",
            ));
        }
        zero = zero + 1;
    }
    Ok(zero.to_kind(tch::Kind::Uint8))
}

/// Row-parallel act order (`shard.rs`, "K not full"): the rank's rows of `qweight`
/// (`[K_s/8, N]`) and `g_idx` (`[K_s]`, the layer's group ids), and every group's `scales` /
/// `qzeros` (`[K/group, N]`, `[K/group, N/8]`), as every rank keeps them.
#[allow(clippy::too_many_arguments)]
pub fn held_rows(
    qweight: Input,
    scale_t: Input,
    qzeros: Option<Input>,
    g_idx: Option<Input>,
    group_size: i64,
    sym: bool,
    format: Format,
) -> Result<HeldRows> {
    let device = qweight.device()?;
    qweight.dtype_in(&[crate::tensor::DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
    let dims = qweight.ndim(2, "GPTQ qweight of a rank's rows is [K_s/8, N]")?;
    let (k, n) = (dims[0] * 8, dims[1]);
    check_group_size(group_size)?;
    scale_t.same_device(&qweight)?;
    let s_rows = scale_t.ndim(2, "[K/group, N]: every group of the layer")?[0];
    let scale_kind = scales(&scale_t, &[s_rows, n], "[K/group, N]: every group of the layer (row-parallel act order)")?;
    let zeros = if sym { None } else { Some(decode_zeros(&qzeros, &qweight, s_rows, n, format)?) };
    let g = required(&g_idx, "g_idx", "the config says desc_act=True (act order)")?;
    g.same_device(&qweight)?;
    let groups = held_groups(g, k, s_rows)?;
    let words = qweight.t.shallow_clone();
    Ok(HeldRows {
        n,
        group_size,
        scale_kind,
        device,
        scales: scale_t.t.contiguous(),
        zeros,
        groups,
        x_col: None,
        q: Box::new(move |n0, nb| unpack_rows(&words.narrow(1, n0, nb))),
    })
}
