//! The `cxx` bridge: descriptor structs shared with the C++ shim, and the Rust entry points it calls.
//!
//! The shim turns `at::Tensor`s into [`bridge::TensorDesc`]s (pointer, sizes, strides, dtype, device)
//! and calls these functions; every decision is made on this side. Errors come back as `Err(String)`,
//! which cxx throws as `rust::Error`; the shim re-raises them as Python exceptions. A panic must never
//! cross the bridge (cxx would abort the serving process), so each entry runs under `catch_unwind`.

use crate::error::Error;

#[cxx::bridge(namespace = "mate::ffi")]
pub mod bridge {
    /// One tensor argument as plain numbers. `present == false` stands for `None`.
    #[derive(Clone, Copy, Debug)]
    pub struct TensorDesc {
        pub present: bool,
        /// Address of the first element (`data_ptr()`), host or device.
        pub data: usize,
        /// `c10::ScalarType` code.
        pub dtype: i32,
        /// `c10::DeviceType` code (0 CPU, 1 CUDA, 14 Meta).
        pub device_type: i32,
        pub device_index: i32,
        pub ndim: i32,
        /// Sizes and strides (in elements); dims past `ndim` are unused. Tensors of more than
        /// `MAX_DIMS` dims are refused by the shim's describe step with a named error.
        pub sizes: [i64; 8],
        pub strides: [i64; 8],
    }

    /// Every argument of `mate::w4a16_gemm(.out)`, except the frame metadata list.
    #[derive(Clone, Copy, Debug)]
    pub struct GemmCall {
        pub x: TensorDesc,
        pub qweight: TensorDesc,
        pub scales: TensorDesc,
        pub zeros: TensorDesc,
        pub perm: TensorDesc,
        pub bias: TensorDesc,
        pub workspace: TensorDesc,
        /// Absent (`present == false`) in the functional overload's first call.
        pub out: TensorDesc,
        pub group_size: i64,
        pub has_num_sms: bool,
        pub num_sms: i64,
        /// The caller's current stream (`cudaStream_t`) for CUDA tensors, 0 otherwise.
        pub stream: usize,
    }

    extern "Rust" {
        /// Validates everything but `out` and returns N, the output's last dim.
        fn gemm_out_cols(call: &GemmCall, frame_meta: &[i64]) -> Result<i64>;
        /// Validates every argument and computes `out` (CPU or CUDA by the tensors' device). A
        /// split-K call without a workspace uses the op's own (src/device/workspace.rs), so it
        /// returns 0 (the raw entry, src/raw.rs, is the caller that gets a workspace need back).
        fn gemm_run(call: &GemmCall, frame_meta: &[i64]) -> Result<i64>;
        /// N from the frame metadata alone (Meta kernels: no data, possibly symbolic shapes).
        fn meta_out_cols(frame_meta: &[i64]) -> Result<i64>;
        /// Bytes of workspace a call with this activation and frame needs (0: none).
        fn workspace_bytes(x: &TensorDesc, frame_meta: &[i64], has_num_sms: bool, num_sms: i64) -> Result<i64>;
        /// The metadata list of a frame of this shape and configuration (current version);
        /// `has_x_cols`: x has `x_cols` columns (a shard frame when below K).
        fn frame_meta(
            k: i64,
            n: i64,
            group_size: i64,
            has_zeros: bool,
            has_perm: bool,
            has_x_cols: bool,
            x_cols: i64,
        ) -> Result<Vec<i64>>;
        /// Process-wide SM limit for planning (`has == false` clears it).
        fn set_num_sms(has: bool, n: i64) -> Result<()>;
        /// Test-only: force every launch onto the named variant ("" restores planning).
        fn force_variant(symbol: &str) -> Result<()>;
        /// Test / lab: the split of every bulk and bwg plan (`has == false` restores planning).
        fn force_split(has: bool, n: i64) -> Result<()>;
        /// Test / lab: whether bwg's even splits may run paired (2-CTA clusters; default true).
        fn allow_pairs(allow: bool);
        /// The compiled variants' symbols, in kernels/variants.def order.
        fn variant_names() -> Vec<String>;
        /// Test-only: turn launch recording on/off; returns the records since the last call.
        fn launch_log(enable: bool) -> Vec<String>;
        /// Test-only: force the wg family's x path ("cp_async" or "tma"; "" restores the rule).
        fn force_wg_x(path: &str) -> Result<()>;
    }
}

pub const MAX_DIMS: usize = 8;

fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(p) => {
            let what = crate::error::panic_message(p.as_ref());
            Err(Error::Internal(format!("panic inside mate: {what}")).to_string())
        }
    }
}

fn gemm_out_cols(call: &bridge::GemmCall, frame_meta: &[i64]) -> Result<i64, String> {
    guarded(|| Ok(crate::call::validate(call, frame_meta, false)?.n as i64))
}

fn gemm_run(call: &bridge::GemmCall, frame_meta: &[i64]) -> Result<i64, String> {
    guarded(|| crate::call::run(call, frame_meta, true))
}

fn meta_out_cols(frame_meta: &[i64]) -> Result<i64, String> {
    guarded(|| Ok(crate::frame::FrameMeta::parse(frame_meta)?.n as i64))
}

fn workspace_bytes(
    x: &bridge::TensorDesc,
    frame_meta: &[i64],
    has_num_sms: bool,
    num_sms: i64,
) -> Result<i64, String> {
    guarded(|| crate::call::workspace_bytes(x, frame_meta, has_num_sms.then_some(num_sms)))
}

fn frame_meta(
    k: i64,
    n: i64,
    group_size: i64,
    has_zeros: bool,
    has_perm: bool,
    has_x_cols: bool,
    x_cols: i64,
) -> Result<Vec<i64>, String> {
    guarded(|| {
        let meta = crate::frame::FrameMeta::new(k, n, group_size, has_zeros, has_perm)?;
        let meta = if has_x_cols { meta.with_x_cols(x_cols)? } else { meta };
        Ok(meta.encode())
    })
}

fn set_num_sms(has: bool, n: i64) -> Result<(), String> {
    guarded(|| crate::plan::set_num_sms(has.then_some(n)))
}

fn force_variant(symbol: &str) -> Result<(), String> {
    guarded(|| crate::plan::force_variant((!symbol.is_empty()).then_some(symbol)))
}

fn force_split(has: bool, n: i64) -> Result<(), String> {
    guarded(|| crate::plan::force_split(has.then_some(n)))
}

fn allow_pairs(allow: bool) {
    crate::plan::allow_pairs(allow)
}

fn force_wg_x(path: &str) -> Result<(), String> {
    guarded(|| crate::device::tma::force_x_path((!path.is_empty()).then_some(path)))
}

fn launch_log(enable: bool) -> Vec<String> {
    crate::device::launch_log::swap(enable)
}

fn variant_names() -> Vec<String> {
    crate::plan::VARIANTS.iter().map(|v| v.symbol.to_string()).collect()
}
