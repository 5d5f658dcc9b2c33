//! Checkpoint conventions: each turns one layer's checkpoint tensors (as the caller's quantization
//! config describes them) into a [`Layer`] in canonical form (`canonical.rs`). The convention is
//! always named by the caller and every choice in it (zero points, act order, zero-point offset)
//! comes from the config it passes, never from which tensors happen to be present.
//!
//! Validation happens in each constructor, before anything is decoded: device, dtype and shape of
//! every tensor the config says is read, the shape envelope (`FrameMeta::new`), and the value
//! rules (`build_guards.rs`, `act_order.rs`).

pub mod awq;
pub mod compressed;
pub mod gptq;
pub mod marlin;

use tch::{Device, Kind, Tensor};

use super::FrameMeta;

/// One layer in canonical form, except `q`, which is decoded block by block on demand.
pub struct Layer {
    pub meta: FrameMeta,
    pub scale_kind: Kind,
    pub device: Device,
    /// `[G, N]`, the frame's dtype.
    pub scales: Tensor,
    /// uint8 `[G, N]` exact zero points; `None` when the config is symmetric.
    pub zeros: Option<Tensor>,
    /// int64 `[K]` when the config says act order: frame row `k` is input column `perm[k]`.
    pub perm: Option<Tensor>,
    /// `(n0, n)` -> uint8 `[K, n]`: q of columns `[n0, n0 + n)`, rows in frame order.
    pub q: Box<dyn Fn(i64, i64) -> Tensor>,
}

/// Rows of `q` in frame order: gathered through `perm` when the layer is act-ordered.
pub(crate) fn frame_rows(q: Tensor, perm: Option<&Tensor>) -> Tensor {
    match perm {
        Some(p) => q.index_select(0, p),
        None => q,
    }
}

/// The declared group size is one the kernels serve (checked up front where no `FrameMeta` of the
/// layer's own shape is built: the K-not-full shard).
pub(crate) fn check_group_size(group_size: i64) -> crate::error::Result<()> {
    crate::error::ensure!(
        super::GROUP_SIZES.contains(&group_size),
        "group_size",
        group_size,
        "must be one of -1 (per channel), 32, 64, 128",
    )
}

/// A rank's `g_idx` slice (`[K_s]`) as int64, every value a group of the layer's `groups`.
pub(crate) fn held_groups(g: &super::build_guards::Input, k: i64, groups: i64) -> crate::error::Result<Tensor> {
    let v = super::build_guards::index_vector(g, k, "[K_s]: the group of each of this rank's rows")?;
    super::build_guards::in_range(g.name, &v, groups, "group indices of the layer (the scales' rows)")?;
    Ok(v)
}
