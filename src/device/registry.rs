//! The embedded kernels (one fatbin: sm_90a and sm_80 code for every variant), loaded once per
//! device into its primary context, with every variant's function handle resolved up front.

use super::driver::{self, CuContext, CuDevice, CuFunction, CuModule, Driver};
use crate::error::{arg_err, Error, Result};
use crate::plan::{Caps, Family, Plan, VARIANTS};
use once_cell::sync::OnceCell;
use std::ffi::CString;

#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

/// nvcc's fatbin for all variants, embedded at build time (build.rs sets the path).
static FATBIN: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("MATE_FATBIN_PATH")));

pub struct DeviceState {
    ctx: CuContext,
    _module: CuModule,
    functions: Vec<CuFunction>,
    /// Per variant, the dynamic shared memory of a launch that keeps its SMs to itself
    /// (Plan::alone; bwg variants, the variant's own elsewhere).
    alone_smem: Vec<u32>,
    /// kernels/gather.cuh: act-order x gathered into the workspace ahead of a launch that reads
    /// it as a plain x (Plan::x_gather_at), from global memory (any K, any row stride) or through
    /// shared memory (gather_x_rows).
    pub gather_x: CuFunction,
    pub gather_x_rows: CuFunction,
    /// Shared memory per SM, and gather_x_rows' dynamic shared memory limit (0: not usable here).
    pub smem_per_sm: i64,
    pub gather_rows_smem_max: i64,
    pub caps: Caps,
    pub capability: (i32, i32),
}

// Handles are process-wide driver objects, immutable after load.
unsafe impl Send for DeviceState {}
unsafe impl Sync for DeviceState {}

const MAX_DEVICES: usize = 64;
static DEVICES: [OnceCell<DeviceState>; MAX_DEVICES] = [const { OnceCell::new() }; MAX_DEVICES];

impl DeviceState {
    pub fn function(&self, variant: usize) -> CuFunction {
        self.functions[variant]
    }

    /// The dynamic shared memory a launch of `plan` asks for: the variant's, or where the plan
    /// runs alone on its SMs (Plan::alone) all an SM has left for one CTA.
    pub fn launch_smem(&self, plan: &Plan) -> u32 {
        if plan.alone {
            self.alone_smem[plan.variant]
        } else {
            plan.dynamic_smem
        }
    }

    /// Whether `f` is one of this device's kernels that trigger their dependents' programmatic
    /// launch (kernels/pdl.cuh pdl_trigger: the programmatic families and the gathers).
    pub fn triggers(&self, f: CuFunction) -> bool {
        f == self.gather_x || f == self.gather_x_rows || self.functions.iter().zip(VARIANTS).any(|(&g, v)| g == f && v.programmatic_launch())
    }

    /// Makes this device's primary context current on the calling thread (torch's own context).
    pub fn make_current(&self, d: &Driver) -> Result<()> {
        let mut cur: CuContext = std::ptr::null_mut();
        driver::check(d, unsafe { (d.cuCtxGetCurrent)(&mut cur) }, "cuCtxGetCurrent")?;
        if cur != self.ctx {
            driver::check(d, unsafe { (d.cuCtxSetCurrent)(self.ctx) }, "cuCtxSetCurrent")?;
        }
        Ok(())
    }
}

fn load(index: i32) -> Result<DeviceState> {
    let d = driver::driver()?;
    let mut dev: CuDevice = 0;
    driver::check(d, unsafe { (d.cuDeviceGet)(&mut dev, index) }, "cuDeviceGet")?;
    let attr = |a| -> Result<i32> {
        let mut v = 0;
        driver::check(d, unsafe { (d.cuDeviceGetAttribute)(&mut v, a, dev) }, "cuDeviceGetAttribute")?;
        Ok(v)
    };
    let sm_count = attr(driver::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let capability = (
        attr(driver::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attr(driver::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    if capability.0 < 8 {
        return Err(arg_err(
            "x",
            format!("a tensor on cuda:{index} (compute capability {}.{})", capability.0, capability.1),
            "mate's kernels need compute capability 8.0 or newer (sm_80 code; sm_90a on Hopper)",
        ));
    }
    let mut ctx: CuContext = std::ptr::null_mut();
    driver::check(d, unsafe { (d.cuDevicePrimaryCtxRetain)(&mut ctx, dev) }, "cuDevicePrimaryCtxRetain")?;
    let mut prev: CuContext = std::ptr::null_mut();
    driver::check(d, unsafe { (d.cuCtxGetCurrent)(&mut prev) }, "cuCtxGetCurrent")?;
    driver::check(d, unsafe { (d.cuCtxSetCurrent)(ctx) }, "cuCtxSetCurrent")?;
    let mut module: CuModule = std::ptr::null_mut();
    driver::check(
        d,
        unsafe { (d.cuModuleLoadData)(&mut module, FATBIN.0.as_ptr().cast()) },
        "cuModuleLoadData (mate's embedded kernels; if this runs inside CUDA graph capture, call the op once before capturing)",
    )?;
    let mut functions = Vec::with_capacity(VARIANTS.len());
    let mut occupancy = Vec::with_capacity(VARIANTS.len());
    let mut alone_smem = Vec::with_capacity(VARIANTS.len());
    let optin = attr(driver::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
    for v in VARIANTS {
        let name = CString::new(v.symbol).map_err(|_| Error::Internal(format!("bad symbol {}", v.symbol)))?;
        let mut f: CuFunction = std::ptr::null_mut();
        driver::check(d, unsafe { (d.cuModuleGetFunction)(&mut f, module, name.as_ptr()) }, "cuModuleGetFunction")?;
        // Plan::alone (bwg only): the per-CTA opt-in limit less the kernel's static shared memory
        // leaves an SM less than the driver's 1 KB reservation of another CTA
        let alone = if v.family == Family::Bwg {
            let mut fixed = 0;
            driver::check(
                d,
                unsafe { (d.cuFuncGetAttribute)(&mut fixed, driver::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) },
                "cuFuncGetAttribute(SHARED_SIZE_BYTES)",
            )?;
            (optin - fixed).max(v.dynamic_smem() as i32)
        } else {
            v.dynamic_smem() as i32
        };
        if alone > 48 * 1024 {
            driver::check(
                d,
                unsafe { (d.cuFuncSetAttribute)(f, driver::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, alone) },
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            )?;
        }
        alone_smem.push(alone as u32);
        let mut blocks = 0;
        driver::check(
            d,
            unsafe {
                (d.cuOccupancyMaxActiveBlocksPerMultiprocessor)(&mut blocks, f, v.threads() as i32, v.dynamic_smem() as usize)
            },
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        )?;
        functions.push(f);
        occupancy.push(blocks.max(1));
    }
    let mut gather_x: CuFunction = std::ptr::null_mut();
    driver::check(d, unsafe { (d.cuModuleGetFunction)(&mut gather_x, module, c"mate_gather_x".as_ptr()) }, "cuModuleGetFunction(mate_gather_x)")?;
    let mut gather_x_rows: CuFunction = std::ptr::null_mut();
    driver::check(
        d,
        unsafe { (d.cuModuleGetFunction)(&mut gather_x_rows, module, c"mate_gather_x_rows".as_ptr()) },
        "cuModuleGetFunction(mate_gather_x_rows)",
    )?;
    let smem_per_sm = attr(driver::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as i64;
    // gather_x_rows needs sm_90 (bulk copies); its shared memory grows with K (6 K bytes)
    let gather_rows_smem_max = if capability.0 >= 9 {
        let limit = (optin as i64).min(crate::device::gather_rows_smem(crate::device::GATHER_ROWS_MAX_K));
        driver::check(
            d,
            unsafe { (d.cuFuncSetAttribute)(gather_x_rows, driver::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit as i32) },
            "cuFuncSetAttribute(mate_gather_x_rows, MAX_DYNAMIC_SHARED_SIZE_BYTES)",
        )?;
        limit
    } else {
        0
    };
    if prev != ctx && !prev.is_null() {
        driver::check(d, unsafe { (d.cuCtxSetCurrent)(prev) }, "cuCtxSetCurrent")?;
    }
    Ok(DeviceState { ctx, _module: module, functions, alone_smem, gather_x, gather_x_rows, smem_per_sm, gather_rows_smem_max, caps: Caps { sm_count: sm_count as i64, occupancy, wgmma: capability == (9, 0) }, capability })
}

/// The loaded state of CUDA device `index` (loads on first use).
pub fn device(index: i32) -> Result<&'static DeviceState> {
    let slot = usize::try_from(index)
        .ok()
        .and_then(|i| DEVICES.get(i))
        .ok_or_else(|| arg_err("x", format!("a tensor on cuda:{index}"), format!("device index must be below {MAX_DEVICES}")))?;
    slot.get_or_try_init(|| load(index))
}
