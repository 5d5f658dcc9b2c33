//! The planner: which compiled variant serves a problem, with what grid, and how much workspace.
//! Families are routed by M (decode `Dec` for M <= 64, `Wmma` above); within a family the tile
//! is chosen against the SM count this launch really gets (see [`resolve_sms`]).

pub mod variants;

use crate::call::Problem;
use crate::error::{arg_err, Error, Result};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::RwLock;
pub use variants::{Family, Variant, VARIANTS};

/// Largest M the decode family serves (its biggest token tile).
pub const DEC_MAX_M: i64 = 64;

/// A launch decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Index into [`VARIANTS`].
    pub variant: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
    /// The SM count the plan was sized for.
    pub sms: i64,
}

/// Process-wide SM limit (`torch.ops.mate.set_num_sms`); 0 = none.
static SM_LIMIT: AtomicI64 = AtomicI64::new(0);
/// Test-only: a variant symbol every launch must use.
static FORCED: RwLock<Option<String>> = RwLock::new(None);

pub fn set_num_sms(limit: Option<i64>) -> Result<()> {
    let v = match limit {
        None => 0,
        Some(n) if n > 0 => n,
        Some(n) => return Err(arg_err("num_sms", n, "must be a positive SM count, or None to clear the limit")),
    };
    SM_LIMIT.store(v, Ordering::Relaxed);
    Ok(())
}

/// The SM count a launch gets: the call's override, then the process-wide limit, then the device
/// (a limit above the device's count is clamped to it).
pub fn resolve_sms(call_override: Option<i64>, device_sms: i64) -> i64 {
    let limit = SM_LIMIT.load(Ordering::Relaxed);
    let wanted = call_override.unwrap_or(if limit > 0 { limit } else { device_sms });
    wanted.clamp(1, device_sms.max(1))
}

/// Test-only: force every launch to use the variant named `symbol` (None restores planning).
pub fn force_variant(symbol: Option<&str>) -> Result<()> {
    if let Some(s) = symbol {
        if !VARIANTS.iter().any(|v| v.symbol == s) {
            let known: Vec<_> = VARIANTS.iter().map(|v| v.symbol).collect();
            return Err(arg_err("variant", s, format!("is not a compiled variant; known: {known:?}")));
        }
    }
    *FORCED.write().unwrap() = symbol.map(str::to_string);
    Ok(())
}

/// Whether `v` can compute `p` (dtype, zero points, shape divisibility, token tile).
pub fn serves(v: &Variant, p: &Problem) -> bool {
    let basic = v.dtype == p.dtype && v.zeros == p.meta.has_zeros && p.n() % v.tn as i64 == 0;
    basic
        && match v.family {
            Family::Dec => p.m <= v.tm as i64,
            Family::Wmma => true,
        }
}

fn choose(p: &Problem, sms: i64) -> Option<usize> {
    let candidates = VARIANTS.iter().enumerate().filter(|(_, v)| serves(v, p));
    if p.m > DEC_MAX_M {
        return candidates.filter(|(_, v)| v.family == Family::Wmma).map(|(i, _)| i).next();
    }
    // Decode: the smallest token tile that holds M; the wider feature tile only when it still
    // gives every SM a CTA (fewer, fuller CTAs reuse the activation across more stripes).
    candidates
        .filter(|(_, v)| v.family == Family::Dec)
        .min_by_key(|(_, v)| {
            let ctas = p.n() / v.tn as i64;
            (v.tm, if ctas >= sms { 0 } else { 1 }, std::cmp::Reverse(v.tn))
        })
        .map(|(i, _)| i)
}

pub fn plan(p: &Problem, device_sms: i64) -> Result<Plan> {
    let sms = resolve_sms(p.num_sms, device_sms);
    let forced = FORCED.read().unwrap().clone();
    let idx = match forced {
        Some(sym) => {
            let i = VARIANTS.iter().position(|v| v.symbol == sym).unwrap();
            if !serves(&VARIANTS[i], p) {
                return Err(arg_err("variant", sym, format!("the forced variant cannot serve this call ({p:?})")));
            }
            i
        }
        None => choose(p, sms).ok_or_else(|| {
            Error::Internal(format!("no compiled variant serves {p:?}; the shape envelope and kernels/variants.def disagree"))
        })?,
    };
    let v = &VARIANTS[idx];
    let tiles_n = p.n() / v.tn as i64;
    let grid = match v.family {
        Family::Dec => [tiles_n, 1, 1],
        Family::Wmma => [(p.m + v.tm as i64 - 1) / v.tm as i64, tiles_n, 1],
    };
    if grid[0] > i32::MAX as i64 || grid[1] > 65535 {
        return Err(arg_err("x", format!("M = {}, N = {}", p.m, p.n()), "too many tiles for one launch"));
    }
    Ok(Plan {
        variant: idx,
        grid: [grid[0] as u32, grid[1] as u32, grid[2] as u32],
        block: [v.threads(), 1, 1],
        dynamic_smem: v.dynamic_smem(),
        sms,
    })
}

/// Workspace bytes a problem needs. No family uses one yet.
pub fn workspace_bytes(_p: &Problem) -> Result<i64> {
    Ok(0)
}
