//! Debug hook: records each kernel launch (test-only op `torch.ops.mate._launch_log`), so tests
//! can check what the launcher really passed — the kernel, its grid, and the SM count and split
//! the plan was sized for, and for wg how x reached shared memory (`x=tma`, `x=gather`, or
//! `x=cp_async:<reason>` when TMA is not used: M short of one tile, or x it cannot describe:
//! src/device/tma.rs). Off by default; when off a launch pays one relaxed atomic load.

use super::tma::XPath;
use crate::plan::{Plan, VARIANTS};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static ENABLED: AtomicBool = AtomicBool::new(false);
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Turns recording on or off; returns (and clears) what was recorded so far.
pub fn swap(enable: bool) -> Vec<String> {
    let mut log = LOG.lock().unwrap_or_else(|e| e.into_inner());
    ENABLED.store(enable, Ordering::Relaxed);
    std::mem::take(&mut *log)
}

/// One record per launch, `key=value` fields separated by spaces; `x` is the wg and bwg families'
/// x path (`x=-` for the other families, which have one); `pdl` 1 where the launch let the kernel
/// overlap the previous one in the stream (programmatic dependent launch, src/device/mod.rs); `cluster`
/// the CTAs per thread-block cluster (1: none; src/plan/mod.rs Plan::cluster); `smem` the dynamic
/// shared memory the launch asked for and `alone` 1 where that was an SM's worth (Plan::alone).
pub fn record(plan: &Plan, smem: u32, x: Option<XPath>, pdl: bool) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let v = &VARIANTS[plan.variant];
    let line = format!(
        "kernel={} grid={},{},{} block={} smem={} sms={} split={} workspace={} x={} pdl={} cluster={} alone={}",
        v.symbol,
        plan.grid[0],
        plan.grid[1],
        plan.grid[2],
        plan.block[0],
        smem,
        plan.sms,
        plan.split,
        plan.workspace_bytes,
        x.map_or_else(|| "-".to_string(), |p| p.log_name()),
        u8::from(pdl),
        plan.cluster,
        u8::from(plan.alone)
    );
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(line);
}
