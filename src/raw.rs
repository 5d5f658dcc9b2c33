//! The raw path: one C ABI entry that validates, plans and launches without the torch dispatcher,
//! for microbenchmarks of host cost and device time (bench/raw_path.py) and for hosts that hold
//! plain pointers. It takes the same descriptor the C++ shim builds ([`GemmCall`], `#[repr(C)]`:
//! mirrored by bench/raw_path.py's ctypes structs) and runs the same code as the op.
//!
//! ```c
//! int64_t mate_gemm_raw(const GemmCall* call, const int64_t* frame_meta, size_t meta_len,
//!                       char* err, size_t err_len);
//! ```
//! Returns 0 when the call ran; a positive count of zeroed workspace bytes the call needs when
//! `call.workspace` is absent (nothing ran: pass one and call again); -1 on an error, whose message
//! (the same named-argument text the op raises) is copied NUL-terminated into `err`.

use crate::ffi::bridge::GemmCall;
use std::os::raw::c_char;

/// # Safety
/// `call` must point to a valid `GemmCall` whose tensors are live for the call (device tensors
/// until the launch completes on `call.stream`); `frame_meta` to `meta_len` integers; `err` to
/// `err_len` writable bytes, or be null.
#[no_mangle]
pub unsafe extern "C" fn mate_gemm_raw(
    call: *const GemmCall,
    frame_meta: *const i64,
    meta_len: usize,
    err: *mut c_char,
    err_len: usize,
) -> i64 {
    let outcome = std::panic::catch_unwind(|| {
        if call.is_null() || (frame_meta.is_null() && meta_len > 0) {
            return Err("mate_gemm_raw: null call or frame_meta pointer".to_string());
        }
        let meta = if meta_len == 0 { &[][..] } else { std::slice::from_raw_parts(frame_meta, meta_len) };
        crate::call::run(&*call, meta, false).map_err(|e| e.to_string())
    });
    let message = match outcome {
        Ok(Ok(v)) => return v,
        Ok(Err(m)) => m,
        Err(p) => format!("mate runtime error (internal): panic inside mate: {}", crate::error::panic_message(p.as_ref())),
    };
    if !err.is_null() && err_len > 0 {
        let n = message.len().min(err_len - 1);
        std::ptr::copy_nonoverlapping(message.as_ptr(), err as *mut u8, n);
        *err.add(n) = 0;
    }
    -1
}
