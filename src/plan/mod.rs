//! The planner: which compiled variant serves a problem, with what grid, and how much workspace.

pub mod variants;

use crate::call::Problem;
use crate::error::{Error, Result};
pub use variants::{Family, Variant, VARIANTS};

/// A launch decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Index into [`VARIANTS`].
    pub variant: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
}

fn serves(v: &Variant, p: &Problem) -> bool {
    let (k, n, g) = (p.k(), p.n(), p.meta.group());
    v.dtype == p.dtype
        && v.zeros == p.meta.has_zeros
        && n % v.tile_n as i64 == 0
        && k % v.tile_k as i64 == 0
        && g % v.tile_k as i64 == 0
}

pub fn plan(p: &Problem) -> Result<Plan> {
    let (idx, v) = VARIANTS
        .iter()
        .enumerate()
        .find(|(_, v)| v.family == Family::Wmma && serves(v, p))
        .ok_or_else(|| Error::Internal(format!("no compiled variant serves {p:?}; the shape envelope and kernels/variants.def disagree")))?;
    let tiles_m = (p.m + v.tile_m as i64 - 1) / v.tile_m as i64;
    let tiles_n = p.n() / v.tile_n as i64;
    if tiles_m > i32::MAX as i64 || tiles_n > 65535 {
        return Err(crate::error::arg_err(
            "x",
            format!("M = {}, N = {}", p.m, p.n()),
            "too many tiles for one launch (M/64 < 2^31, N/64 <= 65535)",
        ));
    }
    Ok(Plan { variant: idx, grid: [tiles_m as u32, tiles_n as u32, 1], block: [v.threads, 1, 1], dynamic_smem: 0 })
}

/// Workspace bytes a problem needs. The whole-K family needs none.
pub fn workspace_bytes(_p: &Problem) -> Result<i64> {
    Ok(0)
}
