//! compressed-tensors "pack-quantized" (what llm-compressor writes; int4, `group` or `channel`
//! strategy). Definitions from compressed-tensors' `compressors/pack_quantized` (`pack_to_int32`
//! adds `1 << (bits - 1)` = 8 to the signed values before packing, for weights and zero points):
//!
//! * `weight_packed` int32 `[N, K/8]`, packed along K: nibble `j` of word `(n, c)` is
//!   `v[n, 8c + j] + 8`, `v` the signed int4 value;
//! * `weight_scale` `[N, K/group]` (`[N, 1]` for the channel strategy, `group_size = -1`);
//! * `weight_zero_point` (asymmetric configs only) int32 `[N/8, K/group]`, packed along N:
//!   nibble `j` of word `(r, g)` is `zp[8r + j, g] + 8`;
//! * `weight_shape` `[N, K]`;
//! * `weight_g_idx` `[K]`, read only when the config's `actorder` is `"group"` (alias `"dynamic"`).
//!
//! `W[k, n] = (v - zp) * s = (stored_v - stored_zp) * s`, so the stored nibbles are the frame's `q`
//! and exact zeros as they are; a symmetric config has zp = 0, i.e. stored zero 8, the frame's
//! symmetric zero.

use tch::Tensor;

use super::{check_group_size, frame_rows, held_groups, Layer};
use crate::error::{arg_err, ensure, Result};
use crate::frame::shard::HeldRows;
use crate::frame::act_order::perm_from_g_idx;
use crate::frame::build_guards::{packed, required, scales, Input};
use crate::frame::canonical::{unpack_cols, SEQUENTIAL};
use crate::frame::FrameMeta;
use crate::tensor::DType;

/// (N, K) from the checkpoint's `weight_shape`, which must be 2-D: `what` says whose shape it is.
fn layer_nk(weight_shape: &[i64], what: &str) -> Result<(i64, i64)> {
    ensure!(weight_shape.len() == 2, "weight_shape", format!("{weight_shape:?}"), format!("must be {what}"))?;
    Ok((weight_shape[0], weight_shape[1]))
}

/// The config's `actorder`: does it read `weight_g_idx`?
pub fn reads_g_idx(actorder: &str) -> Result<bool> {
    match actorder {
        "" | "none" | "weight" | "static" => Ok(false),
        "group" | "dynamic" => Ok(true),
        other => Err(arg_err(
            "actorder",
            format!("{other:?}"),
            "must be the config's actorder: None, \"weight\" / \"static\" (no g_idx) or \"group\" / \"dynamic\" (weight_g_idx is read)",
        )),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn layer(
    weight_packed: Input,
    weight_scale: Input,
    weight_zero_point: Option<Input>,
    weight_g_idx: Option<Input>,
    weight_shape: &[i64],
    group_size: i64,
    symmetric: bool,
    actorder: &str,
) -> Result<Layer> {
    let act = reads_g_idx(actorder)?;
    let device = weight_packed.device()?;
    let (n, k) = layer_nk(weight_shape, "the layer's [N, K] (the checkpoint's weight_shape)")?;
    let meta = FrameMeta::new(k, n, group_size, !symmetric, act)?;
    let groups = meta.groups();
    weight_packed.dtype_in(&[DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
    weight_packed.ndim(2, "[N, K/8]")?;
    packed(&weight_packed, &[n, k / 8], "[N, K/8] for weight_shape [N, K], packed along K")?;
    weight_scale.same_device(&weight_packed)?;
    let scale_kind = scales(&weight_scale, &[n, groups], "[N, K/group]")?;

    let zeros = if symmetric {
        None // symmetric: weight_zero_point is not read
    } else {
        Some(decode_zeros(&weight_zero_point, &weight_packed, groups, n)?)
    };
    let perm = if act {
        let g = required(&weight_g_idx, "weight_g_idx", "the config's actorder is \"group\" (act order)")?;
        g.same_device(&weight_packed)?;
        Some(perm_from_g_idx(g, &meta)?)
    } else {
        None
    };

    let words = weight_packed.t.shallow_clone();
    let p = perm.as_ref().map(|p| p.shallow_clone());
    Ok(Layer {
        meta,
        scale_kind,
        device,
        scales: weight_scale.t.tr().contiguous(),
        zeros,
        perm,
        // rows n0..n0+nb of [N, K/8] unpack to [nb, K]; transposed: [K, nb].
        q: Box::new(move |n0, nb| {
            frame_rows(unpack_cols(&words.narrow(0, n0, nb), &SEQUENTIAL).tr(), p.as_ref()).contiguous()
        }),
    })
}

/// Exact zero points (uint8 `[groups, N]`) from `weight_zero_point` (`[N/8, groups]`, along N).
fn decode_zeros(weight_zero_point: &Option<Input>, weight_packed: &Input, groups: i64, n: i64) -> Result<Tensor> {
    let z = required(weight_zero_point, "weight_zero_point", "the config is asymmetric (symmetric=False)")?;
    z.same_device(weight_packed)?;
    packed(z, &[n / 8, groups], "[N/8, K/group], packed along N")?;
    // [N/8, G] packed along dim 0 -> transposed it is [G, N/8] packed along columns.
    Ok(unpack_cols(&z.t.tr(), &SEQUENTIAL))
}

/// Row-parallel act order (`shard.rs`, "K not full"): the rank's columns of `weight_packed`
/// (`[N, K_s/8]`, `weight_shape` the rank's `[N, K_s]`) and of `weight_g_idx` (`[K_s]`), and every
/// group's `weight_scale` / `weight_zero_point` (`[N, K/group]`, `[N/8, K/group]`).
#[allow(clippy::too_many_arguments)]
pub fn held_rows(
    weight_packed: Input,
    weight_scale: Input,
    weight_zero_point: Option<Input>,
    weight_g_idx: Option<Input>,
    weight_shape: &[i64],
    group_size: i64,
    symmetric: bool,
) -> Result<HeldRows> {
    let device = weight_packed.device()?;
    let (n, k) = layer_nk(weight_shape, "the rank's [N, K_s] (the checkpoint's weight_shape, K narrowed to the rank's rows)")?;
    check_group_size(group_size)?;
    weight_packed.dtype_in(&[DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
    packed(&weight_packed, &[n, k / 8], "[N, K_s/8] for weight_shape [N, K_s], packed along K")?;
    weight_scale.same_device(&weight_packed)?;
    let s_cols = weight_scale.ndim(2, "[N, K/group]: every group of the layer")?[1];
    let scale_kind = scales(&weight_scale, &[n, s_cols], "[N, K/group]: every group of the layer (row-parallel act order)")?;
    let zeros = if symmetric { None } else { Some(decode_zeros(&weight_zero_point, &weight_packed, s_cols, n)?) };
    let g = required(&weight_g_idx, "weight_g_idx", "the config's actorder is \"group\" (act order)")?;
    g.same_device(&weight_packed)?;
    let groups = held_groups(g, k, s_cols)?;
    let words = weight_packed.t.shallow_clone();
    Ok(HeldRows {
        n,
        group_size,
        scale_kind,
        device,
        scales: weight_scale.t.tr().contiguous(),
        zeros,
        groups,
        x_col: None,
        q: Box::new(move |n0, nb| unpack_cols(&words.narrow(0, n0, nb), &SEQUENTIAL).tr().contiguous()),
    })
}
