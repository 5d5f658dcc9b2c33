//! The device layer: driver symbols, the registry of embedded kernels per device, and the launch.
//! Everything vendor-specific sits in this module.

pub mod driver;
pub mod launch_log;
pub mod params;
pub mod registry;
pub mod tma;
pub mod workspace;

use crate::call::{Device, Problem};
use crate::error::{Error, Result};
use crate::ffi::bridge::{GemmCall, TensorDesc};
use crate::plan::{Family, Plan, VARIANTS};
use params::GemmParams;
use std::ffi::c_void;

fn ptr(t: &TensorDesc) -> *const c_void {
    if t.present {
        t.data as *const c_void
    } else {
        std::ptr::null()
    }
}

/// Launches `plan` for `p` on the caller's stream. No allocation, no synchronization.
pub fn launch(p: &Problem, plan: &Plan, call: &GemmCall) -> Result<()> {
    let Device::Cuda(index) = p.device else {
        return Err(Error::Internal("device::launch called for a CPU problem".into()));
    };
    let dev = registry::device(index)?;
    let d = driver::driver()?;
    dev.make_current(d)?;
    let mut params = GemmParams {
        x: ptr(&call.x),
        qweight: ptr(&call.qweight) as *const i32,
        scales: ptr(&call.scales),
        zeros: ptr(&call.zeros) as *const i32,
        perm: ptr(&call.perm) as *const i32,
        bias: ptr(&call.bias),
        out: call.out.data as *mut c_void,
        x_row_stride: p.x_row_stride,
        m: i32::try_from(p.m).map_err(|_| crate::error::arg_err("x", format!("M = {}", p.m), "M must be below 2^31"))?,
        n: p.n() as i32,
        k: p.k() as i32,
        group_size: p.meta.group() as i32,
        workspace: if plan.workspace_bytes > 0 { call.workspace.data as *mut c_void } else { std::ptr::null_mut() },
        total_warps: plan.total_warps as i32,
        max_seg: plan.max_seg as i32,
    };
    // Act order with Plan::x_gather_at: x gathered by the permutation into the workspace first
    // (gather_x; the GEMM's programmatic launch overlaps its prologue with the gather), and the
    // GEMM reads that copy (row stride K) as its x.
    let gathered;
    let p = if let Some(at) = plan.x_gather_at {
        let dst = (call.workspace.data as usize + at as usize) as *mut c_void;
        gather_x(d, dev, p, &params, dst, call.stream as driver::CuStream)?;
        params.x = dst;
        params.x_row_stride = p.k();
        params.perm = std::ptr::null();
        gathered = p.on_gathered_x();
        &gathered
    } else {
        p
    };
    // Arguments per family (kernels/mate_kernels.cu MATE_ARGS_*): wg and bwg also take x's
    // tensor map.
    let v = &VARIANTS[plan.variant];
    let (mut x_arg, x_path) = match v.family {
        Family::Wg => {
            let gathered = plan.x_gather_at.is_some();
            let (a, path) = tma::wg_x_arg(d, p, params.x, call.perm.present && !gathered, v.tm)?;
            let path = if gathered && path == tma::XPath::Tma { tma::XPath::GatheredTma } else { path };
            (Some(a), Some(path))
        }
        Family::Bwg => {
            let path = if plan.x_gather_at.is_some() { tma::XPath::GatheredTma } else { tma::XPath::Tma };
            (Some(tma::bwg_x_arg(d, p, params.x, v.tm)?), Some(path))
        }
        _ => (None, plan.x_gather_at.map(|_| tma::XPath::Gathered)),
    };
    let mut args = [&mut params as *mut GemmParams as *mut c_void, std::ptr::null_mut()];
    if let Some(a) = x_arg.as_mut() {
        args[1] = a as *mut tma::WgXArg as *mut c_void;
    }
    // the call's launch context (call::run asked launch_overlaps before planning); behind a
    // gather, the GEMM's own predecessor is the gather
    let overlaps = if plan.x_gather_at.is_some() { overlaps_here(d, dev, call.stream)? } else { p.overlap };
    let pdl = v.programmatic_launch() && overlaps;
    if plan.cluster > 1 && d.cuLaunchKernelEx.is_none() {
        return Err(Error::Internal(format!(
            "{} is planned in clusters of {} CTAs, which need cuLaunchKernelEx (CUDA 12 driver or newer); this driver has none",
            v.symbol, plan.cluster
        )));
    }
    let ex = pdl || plan.cluster > 1; // launch attributes: cuLaunchKernelEx
    let smem = dev.launch_smem(plan);
    let rc = unsafe {
        if ex {
            launch_ex(d, dev.function(plan.variant), plan.grid, plan.block, smem, call.stream as driver::CuStream, args.as_mut_ptr(), pdl, plan.cluster)
        } else {
            (d.cuLaunchKernel)(
                dev.function(plan.variant),
                plan.grid[0],
                plan.grid[1],
                plan.grid[2],
                plan.block[0],
                plan.block[1],
                plan.block[2],
                smem,
                call.stream as driver::CuStream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    };
    driver::check(d, rc, if ex { "cuLaunchKernelEx" } else { "cuLaunchKernel" })?;
    launch_log::record(plan, smem, x_path, pdl);
    Ok(())
}

/// kernels/gather.cuh gather_x_rows: the largest K (perm and two rows in the H200's 227 KB of
/// shared memory a CTA; its 16-bit perm indices would allow up to 65534).
pub const GATHER_ROWS_MAX_K: i64 = 37888;
/// kernels/gather.cuh gather_x_rows' shared-memory layout: dynamic bytes for `k`.
pub const fn gather_rows_smem(k: i64) -> i64 {
    6 * k + 16
}

/// kernels/gather.cuh: dst[m][k] = x[m][perm[k]] for the call's M x K activations (2-byte
/// elements); a perm entry outside [0, K) gives NaN, as the in-loop gathers of the other families.
/// Above the decode sizes (M > 64), through shared memory where K, x's and perm's alignment and
/// the device allow (gather_x_rows:
/// persistent CTAs, several a SM: a CTA a row up to the SM count, then max(SMs, M / 4) CTAs;
/// four rows a CTA from the start measured 1.05-1.10x slower at M = 128-256), else one thread per
/// 8 elements from global memory (gather_x_body).
fn gather_x(d: &driver::Driver, dev: &registry::DeviceState, p: &Problem, params: &GemmParams, dst: *mut c_void, stream: driver::CuStream) -> Result<()> {
    const THREADS: u32 = 256;
    let smem = gather_rows_smem(p.k());
    // (gather_rows_smem_max caps K at GATHER_ROWS_MAX_K; 0 where the kernel cannot run)
    // A CTA a row leaves most SMs idle at decode sizes (and each pays the whole perm load):
    // there the element-parallel kernel spreads the perm over K / 2048 CTAs.
    let rows_ok = p.m > crate::plan::DEC_MAX_M
        && smem <= dev.gather_rows_smem_max
        && params.x as usize % 16 == 0
        && p.x_row_stride % 8 == 0
        && params.perm as usize % 16 == 0;
    let (func, blocks, smem) = if rows_ok {
        let per_sm = (dev.smem_per_sm / (smem + 1024)).clamp(1, 8); // 1 KB a CTA reserved by the driver
        let sms = dev.caps.sm_count;
        (dev.gather_x_rows, p.m.min(sms.max((p.m + 3) / 4)).min(sms * per_sm) as u32, smem as u32)
    } else {
        let pieces = p.m * (p.k() / 8);
        let blocks = u32::try_from((pieces + THREADS as i64 - 1) / THREADS as i64)
            .map_err(|_| crate::error::arg_err("x", format!("M = {}, K = {}", p.m, p.k()), "too many elements to gather for act order"))?;
        (dev.gather_x, blocks, 0)
    };
    let mut x = params.x;
    let mut stride = params.x_row_stride;
    let mut perm = params.perm;
    let mut dst = dst;
    let mut m = params.m;
    let mut k = params.k;
    // a quiet NaN of the activation dtype (the frame's dtypes: fp16, bf16)
    let mut nan: u32 = if p.dtype == crate::tensor::DType::BF16 { 0x7FC0 } else { 0x7E00 };
    let mut args: [*mut c_void; 7] = [
        &mut x as *mut _ as *mut c_void,
        &mut stride as *mut _ as *mut c_void,
        &mut perm as *mut _ as *mut c_void,
        &mut dst as *mut _ as *mut c_void,
        &mut m as *mut _ as *mut c_void,
        &mut k as *mut _ as *mut c_void,
        &mut nan as *mut _ as *mut c_void,
    ];
    // The element-parallel gather launches programmatically where crate::plan::gather_programmatic
    // says (kernels/gather.cuh: perm before its griddepcontrol.wait, x and the stores after); the
    // rows kernel keeps a plain launch (session 10: slower so).
    let pdl = !rows_ok && crate::plan::gather_programmatic(p) && dev.capability.0 >= 9 && d.cuLaunchKernelEx.is_some() && pdl_enabled()? && behind_triggers(d, dev, stream as usize)?;
    let rc = unsafe {
        if pdl {
            launch_ex(d, func, [blocks, 1, 1], [THREADS, 1, 1], smem, stream, args.as_mut_ptr(), true, 1)
        } else {
            (d.cuLaunchKernel)(func, blocks, 1, 1, THREADS, 1, 1, smem, stream, args.as_mut_ptr(), std::ptr::null_mut())
        }
    };
    driver::check(d, rc, if rows_ok { "cuLaunchKernel(mate_gather_x_rows)" } else { "cuLaunchKernel(mate_gather_x)" })
}

/// Launches with attributes: `pdl`, programmatic stream serialization (the grid may start while
/// the previous kernel in the stream finishes; its kernels wait for it before reading x:
/// kernels/pdl.cuh; in a CUDA graph the launch becomes a programmatic dependency edge), and
/// `cluster` > 1, thread-block clusters of that many CTAs along x (kernels/cluster.cuh).
#[allow(clippy::too_many_arguments)]
unsafe fn launch_ex(
    d: &driver::Driver,
    f: driver::CuFunction,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_smem: u32,
    stream: driver::CuStream,
    args: *mut *mut c_void,
    pdl: bool,
    cluster: u32,
) -> driver::CuResult {
    let none = || driver::LaunchAttribute { id: 0, pad: [0; 4], value: [0; 64] };
    let mut attrs = [none(), none()];
    let mut n = 0;
    if pdl {
        attrs[n].id = driver::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[n].value[..4].copy_from_slice(&1i32.to_ne_bytes()); // programmaticStreamSerializationAllowed
        n += 1;
    }
    if cluster > 1 {
        attrs[n].id = driver::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        for (i, dim) in [cluster, 1, 1].iter().enumerate() {
            attrs[n].value[4 * i..4 * i + 4].copy_from_slice(&dim.to_ne_bytes()); // clusterDim.x, .y, .z
        }
        n += 1;
    }
    let config = driver::LaunchConfig {
        grid,
        block,
        shared_mem_bytes: dynamic_smem,
        stream,
        attrs: attrs.as_mut_ptr(),
        num_attrs: n as u32,
    };
    let launch_ex = d.cuLaunchKernelEx.expect("checked by the caller");
    launch_ex(&config, f, args, std::ptr::null_mut())
}

/// The launch context of a call on `stream` (Problem::overlap): whether a programmatic launch
/// there would overlap its predecessor: Hopper, the driver's cuLaunchKernelEx, `MATE_PDL` not 0,
/// and [`behind_triggers`].
pub fn launch_overlaps(index: i32, stream: usize) -> Result<bool> {
    overlaps_here(driver::driver()?, registry::device(index)?, stream)
}

fn overlaps_here(d: &driver::Driver, dev: &registry::DeviceState, stream: usize) -> Result<bool> {
    Ok(dev.capability.0 >= 9 && d.cuLaunchKernelEx.is_some() && pdl_enabled()? && behind_triggers(d, dev, stream)?)
}

/// Whether a programmatic launch on `stream` can overlap its predecessor. Behind a kernel that
/// does not trigger (torch's, between a model's GEMMs) a programmatic launch measured ~0.4 us a
/// call slower than a plain one (bench/NOTES.md session 35), so while the stream captures a graph,
/// only where every node the launch will depend on is one of mate's triggering kernels. Eager
/// launches cannot see their predecessor and stay programmatic.
fn behind_triggers(d: &driver::Driver, dev: &registry::DeviceState, stream: usize) -> Result<bool> {
    let (Some(info), Some(node_type), Some(params)) = (d.cuStreamGetCaptureInfo, d.cuGraphNodeGetType, d.cuGraphKernelNodeGetParams) else {
        return Ok(true);
    };
    let (mut status, mut id, mut graph, mut deps, mut edges, mut n) = (0, 0u64, std::ptr::null_mut(), std::ptr::null(), std::ptr::null(), 0usize);
    driver::check(d, unsafe { info(stream as driver::CuStream, &mut status, &mut id, &mut graph, &mut deps, &mut edges, &mut n) }, "cuStreamGetCaptureInfo")?;
    if status != 1 {
        return Ok(true); // CU_STREAM_CAPTURE_STATUS_ACTIVE = 1; not capturing
    }
    if n == 0 || deps.is_null() {
        return Ok(false);
    }
    for &node in unsafe { std::slice::from_raw_parts(deps, n) } {
        let mut t = -1;
        driver::check(d, unsafe { node_type(node, &mut t) }, "cuGraphNodeGetType")?;
        if t != driver::CU_GRAPH_NODE_TYPE_KERNEL {
            return Ok(false);
        }
        let mut kp = [0u64; 16];
        driver::check(d, unsafe { params(node, &mut kp) }, "cuGraphKernelNodeGetParams")?;
        if !dev.triggers(kp[0] as driver::CuFunction) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Benchmark switch of programmatic dependent launch: `MATE_PDL=0` launches every kernel after
/// the previous one completes (for A/B timing), `MATE_PDL=1` or unset lets the families that wait
/// for it themselves overlap it. Read once, at the first launch; any other value fails that launch
/// (and every later one) with a named error.
pub const PDL_ENV: &str = "MATE_PDL";
static PDL: once_cell::sync::OnceCell<std::result::Result<bool, String>> = once_cell::sync::OnceCell::new();

fn pdl_enabled() -> Result<bool> {
    PDL.get_or_init(|| parse_pdl(std::env::var(PDL_ENV).ok().as_deref())).clone().map_err(|v| {
        crate::error::arg_err("MATE_PDL (environment)", format!("{v:?}"), "must be 0 or 1, or unset")
    })
}

/// `MATE_PDL`'s value: unset or "1" on, "0" off, anything else returned as the error.
fn parse_pdl(v: Option<&str>) -> std::result::Result<bool, String> {
    match v {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdl_switch_parses_strictly() {
        assert_eq!(parse_pdl(None), Ok(true));
        assert_eq!(parse_pdl(Some("1")), Ok(true));
        assert_eq!(parse_pdl(Some("0")), Ok(false));
        for bad in ["", "yes", "2", " 1", "true"] {
            assert_eq!(parse_pdl(Some(bad)), Err(bad.to_string()));
        }
    }

    #[test]
    fn launch_structs_match_cuda_h() {
        // CUlaunchAttribute: id (4) + pad (4) + the 64-byte value union; CUlaunchConfig: seven
        // unsigned ints, then hStream at 32, attrs at 40, numAttrs at 48 (56 with padding).
        use driver::{LaunchAttribute, LaunchConfig};
        assert_eq!((std::mem::size_of::<LaunchAttribute>(), std::mem::align_of::<LaunchAttribute>()), (72, 8));
        assert_eq!(std::mem::offset_of!(LaunchAttribute, value), 8);
        assert_eq!(std::mem::size_of::<LaunchConfig>(), 56);
        assert_eq!(std::mem::offset_of!(LaunchConfig, stream), 32);
        assert_eq!(std::mem::offset_of!(LaunchConfig, attrs), 40);
        assert_eq!(std::mem::offset_of!(LaunchConfig, num_attrs), 48);
    }
}
