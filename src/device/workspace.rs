//! The op's own workspace, for split-K calls that pass none (the functional overload, as
//! torch.compile, mate.adapter and mate.marlin_compat call it): one zeroed device buffer per
//! (device, stream), reused by every such call (each leaves its tickets at zero,
//! kernels/params.cuh), so a call costs neither an allocation nor a memset. Allocated with the
//! driver, outside torch's allocator: torch.compile's CUDA-graph trees route even their eager
//! warm-up allocations into a graph's pool, whose bytes go to other graphs' tensors. Zeroed on the
//! call's stream, ahead of the launch. Never freed, since CUDA graphs captured with a buffer keep
//! its address: a larger need allocates one of at least twice the size and keeps the old. Never
//! allocated while the stream captures a graph (src/call.rs: the shim then allocates its own).

use super::driver::{check, driver, CuStream};
use super::registry;
use crate::error::Result;
use crate::ffi::bridge::TensorDesc;
use crate::tensor::DEVICE_CUDA;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::Mutex;

/// (device index, stream) -> (address, bytes) of the live buffer.
static OWNED: Lazy<Mutex<HashMap<(i32, usize), (u64, i64)>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// A zeroed workspace of at least `need` bytes for `device`'s `stream`, as a 1-D uint8 descriptor;
/// None when there is none that large and the stream is capturing (asked only then: the reuse
/// path is every such call's).
pub fn owned(device: i32, stream: usize, need: i64) -> Result<Option<TensorDesc>> {
    let mut live = OWNED.lock().unwrap_or_else(|e| e.into_inner());
    let (ptr, bytes) = match live.get(&(device, stream)) {
        Some(&(ptr, bytes)) if bytes >= need => (ptr, bytes),
        _ if super::driver::stream_capturing(stream)? => return Ok(None),
        old => {
            let bytes = old.map_or(need, |&(_, b)| need.max(2 * b)); // the old one stays allocated
            let d = driver()?;
            registry::device(device)?.make_current(d)?;
            let mut ptr = 0u64;
            check(d, unsafe { (d.cuMemAlloc)(&mut ptr, bytes as usize) }, "cuMemAlloc (the op's workspace)")?;
            check(d, unsafe { (d.cuMemsetD8Async)(ptr, 0, bytes as usize, stream as CuStream) }, "cuMemsetD8Async")?;
            live.insert((device, stream), (ptr, bytes));
            (ptr, bytes)
        }
    };
    let mut t = TensorDesc { present: true, data: ptr as usize, dtype: 0 /* uint8 */, device_type: DEVICE_CUDA, device_index: device, ndim: 1, sizes: [0; 8], strides: [0; 8] };
    t.sizes[0] = bytes;
    t.strides[0] = 1;
    Ok(Some(t))
}
