//! The CUDA driver API, loaded at run time with `dlopen` (no cudart, no link-time CUDA dependency:
//! the library loads on machines without a GPU). A port to another vendor's driver API that mirrors
//! CUDA's (MUSA's `mu*` calls) replaces this file's symbol names.

use crate::error::{Error, Result};
use once_cell::sync::OnceCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

pub type CuResult = c_int;
pub type CuDevice = c_int;
pub type CuContext = *mut c_void;
pub type CuModule = *mut c_void;
pub type CuFunction = *mut c_void;
pub type CuStream = *mut c_void;
pub type CuGraphNode = *mut c_void;
/// `CUresult cuStreamGetCaptureInfo_v3(CUstream, CUstreamCaptureStatus*, cuuint64_t* id, CUgraph*,
/// const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* ndeps)`.
pub type CuStreamGetCaptureInfo =
    unsafe extern "C" fn(CuStream, *mut c_int, *mut u64, *mut *mut c_void, *mut *const CuGraphNode, *mut *const c_void, *mut usize) -> CuResult;
/// `cuGraphNodeGetType(CUgraphNode, CUgraphNodeType*)` and `cuGraphKernelNodeGetParams_v2(CUgraphNode,
/// CUDA_KERNEL_NODE_PARAMS_v2*)` (its first field: the CUfunction).
pub type CuGraphNodeGetType = unsafe extern "C" fn(CuGraphNode, *mut c_int) -> CuResult;
pub type CuGraphKernelNodeGetParams = unsafe extern "C" fn(CuGraphNode, *mut [u64; 16]) -> CuResult;
pub const CU_GRAPH_NODE_TYPE_KERNEL: c_int = 0;

pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
pub const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: c_int = 81;
pub const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
pub const CU_STREAM_CAPTURE_MODE_RELAXED: c_int = 2;
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;

#[allow(non_snake_case)]
pub struct Driver {
    pub cuInit: unsafe extern "C" fn(c_uint) -> CuResult,
    pub cuDeviceGet: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    pub cuDeviceGetAttribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    pub cuDevicePrimaryCtxRetain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    pub cuCtxGetCurrent: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    pub cuCtxSetCurrent: unsafe extern "C" fn(CuContext) -> CuResult,
    pub cuModuleLoadData: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    pub cuModuleGetFunction: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    #[allow(clippy::type_complexity)]
    pub cuLaunchKernel: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        CuStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    pub cuGetErrorString: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    pub cuOccupancyMaxActiveBlocksPerMultiprocessor: unsafe extern "C" fn(*mut c_int, CuFunction, c_int, usize) -> CuResult,
    pub cuFuncSetAttribute: unsafe extern "C" fn(CuFunction, c_int, c_int) -> CuResult,
    pub cuFuncGetAttribute: unsafe extern "C" fn(*mut c_int, c_int, CuFunction) -> CuResult,
    /// `CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus*)` (0 = not capturing).
    pub cuStreamIsCapturing: unsafe extern "C" fn(CuStream, *mut c_int) -> CuResult,
    /// `CUresult cuMemAlloc(CUdeviceptr*, size_t)`, `cuMemsetD8Async(CUdeviceptr, unsigned char,
    /// size_t, CUstream)`, `cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode*)`,
    /// `cuStreamCreate(CUstream*, unsigned)` and `cuStreamSynchronize(CUstream)`: the op's own
    /// workspace (src/device/workspace.rs).
    pub cuMemAlloc: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
    pub cuMemsetD8Async: unsafe extern "C" fn(u64, u8, usize, CuStream) -> CuResult,
    pub cuThreadExchangeStreamCaptureMode: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub cuStreamCreate: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
    pub cuStreamSynchronize: unsafe extern "C" fn(CuStream) -> CuResult,
    /// The wg family's x tensor map (src/device/tma.rs). Optional: a driver older than CUDA 12 has
    /// no TMA and serves wg through its cp.async x path instead of failing to load at all.
    pub cuTensorMapEncodeTiled: Option<CuTensorMapEncodeTiled>,
    /// Launches with attributes (programmatic dependent launch, src/device/mod.rs). Optional: a
    /// driver older than CUDA 12 launches every kernel with cuLaunchKernel.
    pub cuLaunchKernelEx: Option<CuLaunchKernelEx>,
    /// A capture's dependencies (src/device/mod.rs behind_triggers). Optional: without them
    /// every programmatic variant launches programmatically, as before.
    pub cuStreamGetCaptureInfo: Option<CuStreamGetCaptureInfo>,
    pub cuGraphNodeGetType: Option<CuGraphNodeGetType>,
    pub cuGraphKernelNodeGetParams: Option<CuGraphKernelNodeGetParams>,
}

/// `CUlaunchAttribute`: a `CUlaunchAttributeID` (C int), padding to 8 bytes, and the 64-byte
/// `CUlaunchAttributeValue` union.
#[repr(C, align(8))]
pub struct LaunchAttribute {
    pub id: c_int,
    pub pad: [u8; 4],
    pub value: [u8; 64],
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct LaunchConfig {
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared_mem_bytes: c_uint,
    pub stream: CuStream,
    pub attrs: *mut LaunchAttribute,
    pub num_attrs: c_uint,
}

/// `CUresult cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void** kernelParams, void** extra)`.
pub type CuLaunchKernelEx = unsafe extern "C" fn(*const LaunchConfig, CuFunction, *mut *mut c_void, *mut *mut c_void) -> CuResult;

/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: value (a C int) 1 lets the grid start
/// while the previous kernel in the stream runs; the kernel waits for it itself (griddepcontrol).
pub const CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: c_int = 6;
/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`: value three C unsigned ints, the cluster's CTAs along
/// x, y, z (the grid a multiple of them).
pub const CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: c_int = 4;

/// `CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType, cuuint32_t rank,
/// void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides (rank - 1,
/// bytes), const cuuint32_t* boxDim, const cuuint32_t* elementStrides, CUtensorMapInterleave,
/// CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill)`; the enums are C ints.
pub type CuTensorMapEncodeTiled = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    *mut c_void,
    *const u64,
    *const u64,
    *const u32,
    *const u32,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
) -> CuResult;

pub const CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: c_int = 1;
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

unsafe impl Send for Driver {}
unsafe impl Sync for Driver {}

static DRIVER: OnceCell<std::result::Result<Driver, String>> = OnceCell::new();

unsafe fn sym<T>(lib: *mut c_void, name: &str) -> std::result::Result<T, String> {
    let c = CString::new(name).unwrap();
    let p = libc::dlsym(lib, c.as_ptr());
    if p.is_null() {
        return Err(format!("libcuda.so.1 has no symbol {name}"));
    }
    Ok(std::mem::transmute_copy::<*mut c_void, T>(&p))
}

fn load() -> std::result::Result<Driver, String> {
    unsafe {
        let name = CString::new("libcuda.so.1").unwrap();
        let lib = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if lib.is_null() {
            let why = libc::dlerror();
            let why = if why.is_null() { "unknown".into() } else { CStr::from_ptr(why).to_string_lossy().into_owned() };
            return Err(format!("could not dlopen libcuda.so.1 (the NVIDIA driver): {why}"));
        }
        let d = Driver {
            cuInit: sym(lib, "cuInit")?,
            cuDeviceGet: sym(lib, "cuDeviceGet")?,
            cuDeviceGetAttribute: sym(lib, "cuDeviceGetAttribute")?,
            cuDevicePrimaryCtxRetain: sym(lib, "cuDevicePrimaryCtxRetain")?,
            cuCtxGetCurrent: sym(lib, "cuCtxGetCurrent")?,
            cuCtxSetCurrent: sym(lib, "cuCtxSetCurrent")?,
            cuModuleLoadData: sym(lib, "cuModuleLoadData")?,
            cuModuleGetFunction: sym(lib, "cuModuleGetFunction")?,
            cuLaunchKernel: sym(lib, "cuLaunchKernel")?,
            cuGetErrorString: sym(lib, "cuGetErrorString")?,
            cuOccupancyMaxActiveBlocksPerMultiprocessor: sym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor")?,
            cuFuncSetAttribute: sym(lib, "cuFuncSetAttribute")?,
            cuFuncGetAttribute: sym(lib, "cuFuncGetAttribute")?,
            cuStreamIsCapturing: sym(lib, "cuStreamIsCapturing")?,
            cuMemAlloc: sym(lib, "cuMemAlloc_v2")?,
            cuMemsetD8Async: sym(lib, "cuMemsetD8Async")?,
            cuThreadExchangeStreamCaptureMode: sym(lib, "cuThreadExchangeStreamCaptureMode")?,
            cuStreamCreate: sym(lib, "cuStreamCreate")?,
            cuStreamSynchronize: sym(lib, "cuStreamSynchronize")?,
            cuTensorMapEncodeTiled: sym(lib, "cuTensorMapEncodeTiled").ok(),
            cuLaunchKernelEx: sym(lib, "cuLaunchKernelEx").ok(),
            cuStreamGetCaptureInfo: sym(lib, "cuStreamGetCaptureInfo_v3").ok(),
            cuGraphNodeGetType: sym(lib, "cuGraphNodeGetType").ok(),
            cuGraphKernelNodeGetParams: sym(lib, "cuGraphKernelNodeGetParams_v2").ok(),
        };
        let rc = (d.cuInit)(0);
        if rc != 0 {
            return Err(format!("cuInit failed with CUresult {rc}"));
        }
        Ok(d)
    }
}

pub fn driver() -> Result<&'static Driver> {
    DRIVER.get_or_init(load).as_ref().map_err(|e| Error::Cuda(e.clone()))
}

/// Turns a CUresult into a named error.
pub fn check(d: &Driver, rc: CuResult, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let mut msg: *const c_char = std::ptr::null();
    let text = unsafe {
        if (d.cuGetErrorString)(rc, &mut msg) == 0 && !msg.is_null() {
            CStr::from_ptr(msg).to_string_lossy().into_owned()
        } else {
            "unknown error".into()
        }
    };
    Err(Error::Cuda(format!("{what} failed: CUresult {rc} ({text})")))
}

/// Whether `stream` (a `cudaStream_t`) is capturing a CUDA graph.
pub fn stream_capturing(stream: usize) -> Result<bool> {
    let d = driver()?;
    let mut status: c_int = 0;
    check(d, unsafe { (d.cuStreamIsCapturing)(stream as CuStream, &mut status) }, "cuStreamIsCapturing")?;
    Ok(status != 0)
}
