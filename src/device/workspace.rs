//! The op's own workspace, for split-K calls that pass none (the functional overload, as
//! W4A16Linear.forward, torch.compile, mate.adapter and mate.marlin_compat call it): one zeroed
//! device buffer per (device, stream), reused by every such call (each leaves its tickets at zero,
//! kernels/params.cuh), so a call costs neither an allocation nor a memset. Allocated with the
//! driver, outside torch's allocator: torch.compile's CUDA-graph trees route even their eager
//! warm-up allocations into a graph's pool, whose bytes go to other graphs' tensors. Never freed,
//! since CUDA graphs captured with a buffer keep its address: a larger need allocates one of at
//! least twice the size and keeps the old.
//!
//! A buffer first needed while its stream captures a graph is allocated then too, as torch's own
//! allocator does during capture (cuMemAlloc in relaxed capture mode: it is not a stream operation,
//! so the graph records nothing), and zeroed on a stream of its own outside the capture, waited
//! for before the launch is captured: a memset on the capturing stream would be replayed with
//! every replay of the graph.

use super::driver::{check, driver, CuStream, Driver, CU_STREAM_CAPTURE_MODE_RELAXED, CU_STREAM_NON_BLOCKING};
use super::registry;
use crate::error::Result;
use crate::ffi::bridge::TensorDesc;
use crate::tensor::DEVICE_CUDA;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::Mutex;

/// (device index, stream) -> (address, bytes) of the live buffer.
static OWNED: Lazy<Mutex<HashMap<(i32, usize), (u64, i64)>>> = Lazy::new(|| Mutex::new(HashMap::new()));
/// Device index -> the non-blocking stream that zeroes buffers allocated during a capture.
static ZEROING: Lazy<Mutex<HashMap<i32, usize>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// A zeroed workspace of at least `need` bytes for `device`'s `stream`, as a 1-D uint8 descriptor.
pub fn owned(device: i32, stream: usize, need: i64) -> Result<TensorDesc> {
    let mut live = OWNED.lock().unwrap_or_else(|e| e.into_inner());
    let (ptr, bytes) = match live.get(&(device, stream)) {
        Some(&(ptr, bytes)) if bytes >= need => (ptr, bytes),
        old => {
            let bytes = old.map_or(need, |&(_, b)| need.max(2 * b)); // the old one stays allocated
            let ptr = allocate_zeroed(device, stream, bytes)?;
            live.insert((device, stream), (ptr, bytes));
            (ptr, bytes)
        }
    };
    let mut t = TensorDesc { present: true, data: ptr as usize, dtype: 0 /* uint8 */, device_type: DEVICE_CUDA, device_index: device, ndim: 1, sizes: [0; 8], strides: [0; 8] };
    t.sizes[0] = bytes;
    t.strides[0] = 1;
    Ok(t)
}

fn allocate_zeroed(device: i32, stream: usize, bytes: i64) -> Result<u64> {
    let d = driver()?;
    registry::device(device)?.make_current(d)?;
    let capturing = super::driver::stream_capturing(stream)?;
    // Relaxed for this thread: cuMemAlloc and a stream sync are refused while it captures (and, in
    // global mode, while any thread does), though neither touches the captured stream.
    let mut mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    check(d, unsafe { (d.cuThreadExchangeStreamCaptureMode)(&mut mode) }, "cuThreadExchangeStreamCaptureMode")?;
    let r = alloc_and_zero(d, device, stream, bytes, capturing);
    check(d, unsafe { (d.cuThreadExchangeStreamCaptureMode)(&mut mode) }, "cuThreadExchangeStreamCaptureMode (restore)")?;
    r
}

fn alloc_and_zero(d: &Driver, device: i32, stream: usize, bytes: i64, capturing: bool) -> Result<u64> {
    let mut ptr = 0u64;
    check(d, unsafe { (d.cuMemAlloc)(&mut ptr, bytes as usize) }, "cuMemAlloc (the op's workspace)")?;
    if !capturing {
        check(d, unsafe { (d.cuMemsetD8Async)(ptr, 0, bytes as usize, stream as CuStream) }, "cuMemsetD8Async")?;
        return Ok(ptr);
    }
    let z = zeroing_stream(d, device)? as CuStream;
    check(d, unsafe { (d.cuMemsetD8Async)(ptr, 0, bytes as usize, z) }, "cuMemsetD8Async (outside the capture)")?;
    check(d, unsafe { (d.cuStreamSynchronize)(z) }, "cuStreamSynchronize (the workspace's zeroing)")?;
    Ok(ptr)
}

fn zeroing_stream(d: &Driver, device: i32) -> Result<usize> {
    let mut streams = ZEROING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = streams.get(&device) {
        return Ok(s);
    }
    let mut s: CuStream = std::ptr::null_mut();
    check(d, unsafe { (d.cuStreamCreate)(&mut s, CU_STREAM_NON_BLOCKING) }, "cuStreamCreate (the workspace's zeroing)")?;
    streams.insert(device, s as usize);
    Ok(s as usize)
}
