//! The frame builder's `cxx` bridge (a second bridge beside `src/ffi.rs`; the GEMM path keeps
//! plain descriptors). cpp/frame_ops.cpp registers the ops and calls these entries.
//!
//! Tensors cross as owned handles: the C++ side passes `new at::Tensor(t)` (a shallow clone, one
//! refcount) as an address, and Rust takes ownership with `tch::Tensor::from_ptr` at once, before
//! any check, so nothing leaks on an error. Built tensors come back the same way in reverse: Rust
//! forgets its `tch::Tensor`, C++ moves out of the `at::Tensor*` and deletes it. Errors come back
//! as `Err(String)` (argument errors start "mate: argument", others "mate runtime error"); a panic
//! never crosses (each entry runs under `catch_unwind`).

use crate::error::Error;
use crate::frame::build_guards::Input;
use crate::frame::builder::build;
use crate::frame::conventions::{awq, compressed, gptq, marlin, Layer};
use crate::frame::pack::Frame;
use crate::frame::shard::{regroup, Shard, Style};

#[cxx::bridge(namespace = "mate::frame_ffi")]
pub mod bridge {
    /// One optional tensor argument: `ptr` is a heap `at::Tensor*` Rust now owns, 0 for `None`.
    #[derive(Clone, Copy, Debug)]
    pub struct TensorArg {
        pub ptr: usize,
        /// `c10::ScalarType` code.
        pub dtype: i32,
        /// `c10::DeviceType` code (0 CPU, 1 CUDA).
        pub device_type: i32,
        pub device_index: i32,
    }

    /// A built frame: heap `at::Tensor*`s the C++ side now owns (0 = absent), and the metadata.
    pub struct BuiltFrame {
        pub qweight: usize,
        pub scales: usize,
        pub zeros: usize,
        pub perm: usize,
        pub meta: Vec<i64>,
    }

    extern "Rust" {
        fn build_gptq(
            qweight: TensorArg,
            scales: TensorArg,
            qzeros: TensorArg,
            g_idx: TensorArg,
            group_size: i64,
            sym: bool,
            desc_act: bool,
            checkpoint_format: &str,
            shard: &str,
            rank: i64,
            world: i64,
        ) -> Result<BuiltFrame>;
        fn build_awq(
            qweight: TensorArg,
            scales: TensorArg,
            qzeros: TensorArg,
            group_size: i64,
            shard: &str,
            rank: i64,
            world: i64,
        ) -> Result<BuiltFrame>;
        fn build_compressed(
            weight_packed: TensorArg,
            weight_scale: TensorArg,
            weight_zero_point: TensorArg,
            weight_g_idx: TensorArg,
            weight_shape: &[i64],
            group_size: i64,
            symmetric: bool,
            actorder: &str,
            shard: &str,
            rank: i64,
            world: i64,
        ) -> Result<BuiltFrame>;
        fn build_marlin(
            qweight: TensorArg,
            scales: TensorArg,
            zeros: TensorArg,
            g_idx: TensorArg,
            perm: TensorArg,
            group_size: i64,
            sym: bool,
            desc_act: bool,
            zero_layout: &str,
            shard: &str,
            rank: i64,
            world: i64,
        ) -> Result<BuiltFrame>;
    }
}

use bridge::{BuiltFrame, TensorArg};

/// Takes ownership of the handle (if any).
fn take(name: &'static str, a: TensorArg) -> Option<Input> {
    (a.ptr != 0).then(|| Input {
        name,
        // SAFETY: the shim passes a heap at::Tensor* made for this call and never touches it again.
        t: unsafe { tch::Tensor::from_ptr(a.ptr as *mut torch_sys::C_tensor) },
        dtype: a.dtype,
        device_type: a.device_type,
        device_index: a.device_index,
    })
}

fn present(name: &'static str, t: Option<Input>) -> Result<Input, Error> {
    t.ok_or_else(|| crate::error::arg_err(name, "None", "is required"))
}

fn give(t: Option<tch::Tensor>) -> usize {
    match t {
        Some(mut t) => {
            let p = t.as_mut_ptr() as usize;
            std::mem::forget(t);
            p
        }
        None => 0,
    }
}

fn hand_over(f: Frame) -> BuiltFrame {
    let meta = f.meta.encode();
    BuiltFrame { qweight: give(Some(f.qweight)), scales: give(Some(f.scales)), zeros: give(f.zeros), perm: give(f.perm), meta }
}

fn guarded(f: impl FnOnce() -> Result<Layer, Error>) -> Result<BuiltFrame, String> {
    let run = || -> Result<BuiltFrame, Error> {
        // Load-time work on plain data: never recorded by autograd (loader tensors are often
        // Parameters), whatever the caller's grad mode.
        let _no_grad = tch::no_grad_guard();
        Ok(hand_over(build(f()?)?))
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(p) => {
            let what = crate::error::panic_message(p.as_ref());
            Err(Error::Internal(format!("panic inside the mate frame builder: {what}")).to_string())
        }
    }
}

/// (rows, columns) of a 2-D input, if it is one (for the shard rules, checked before decoding;
/// a malformed tensor is left to its convention's own guard).
fn dims2(t: &Option<Input>) -> Option<(i64, i64)> {
    t.as_ref().map(|i| i.dims()).filter(|d| d.len() == 2).map(|d| (d[0], d[1]))
}

/// Whether this slice is a row-parallel act-order one ("K not full"), after checking the slice's
/// alignment rule (`shard.rs`). `kn`: the slice's (K, N), when the tensor shapes say.
fn k_not_full(shard: Option<Shard>, kn: Option<(i64, i64)>, group_size: i64, act_order: bool) -> Result<bool, Error> {
    match (shard, kn) {
        (Some(s), Some((k, n))) => {
            s.check(k, n, group_size, act_order)?;
            Ok(s.style == Style::Row && act_order)
        }
        (Some(s), None) => Ok(s.style == Style::Row && act_order),
        (None, _) => Ok(false),
    }
}

#[allow(clippy::too_many_arguments)]
fn build_gptq(
    qweight: TensorArg,
    scales: TensorArg,
    qzeros: TensorArg,
    g_idx: TensorArg,
    group_size: i64,
    sym: bool,
    desc_act: bool,
    checkpoint_format: &str,
    shard: &str,
    rank: i64,
    world: i64,
) -> Result<BuiltFrame, String> {
    let (qw, s, z, g) = (take("qweight", qweight), take("scales", scales), take("qzeros", qzeros), take("g_idx", g_idx));
    guarded(|| {
        let format = gptq::Format::parse(checkpoint_format)?;
        let sh = Shard::parse(shard, rank, world)?;
        let kn = dims2(&qw).map(|(r, c)| (r * 8, c));
        let (qw, s) = (present("qweight", qw)?, present("scales", s)?);
        if k_not_full(sh, kn, group_size, desc_act)? {
            return regroup(gptq::held_rows(qw, s, z, g, group_size, sym, format)?, &sh.unwrap());
        }
        gptq::layer(qw, s, z, g, group_size, sym, desc_act, format)
    })
}

fn build_awq(
    qweight: TensorArg,
    scales: TensorArg,
    qzeros: TensorArg,
    group_size: i64,
    shard: &str,
    rank: i64,
    world: i64,
) -> Result<BuiltFrame, String> {
    let (qw, s, z) = (take("qweight", qweight), take("scales", scales), take("qzeros", qzeros));
    guarded(|| {
        // AWQ has no act order: every slice is an ordinary layer.
        let sh = Shard::parse(shard, rank, world)?;
        k_not_full(sh, dims2(&qw).map(|(r, c)| (r, c * 8)), group_size, false)?;
        let z = z.ok_or_else(|| {
            crate::error::arg_err("qzeros", "None", "is required: AWQ checkpoints always carry zero points")
        })?;
        awq::layer(present("qweight", qw)?, present("scales", s)?, z, group_size)
    })
}

#[allow(clippy::too_many_arguments)]
fn build_compressed(
    weight_packed: TensorArg,
    weight_scale: TensorArg,
    weight_zero_point: TensorArg,
    weight_g_idx: TensorArg,
    weight_shape: &[i64],
    group_size: i64,
    symmetric: bool,
    actorder: &str,
    shard: &str,
    rank: i64,
    world: i64,
) -> Result<BuiltFrame, String> {
    let wp = take("weight_packed", weight_packed);
    let ws = take("weight_scale", weight_scale);
    let wz = take("weight_zero_point", weight_zero_point);
    let wg = take("weight_g_idx", weight_g_idx);
    guarded(|| {
        let sh = Shard::parse(shard, rank, world)?;
        let act = compressed::reads_g_idx(actorder)?;
        let kn = (weight_shape.len() == 2).then(|| (weight_shape[1], weight_shape[0]));
        if k_not_full(sh, kn, group_size, act)? {
            let (wp, ws) = (present("weight_packed", wp)?, present("weight_scale", ws)?);
            return regroup(compressed::held_rows(wp, ws, wz, wg, weight_shape, group_size, symmetric)?, &sh.unwrap());
        }
        compressed::layer(
            present("weight_packed", wp)?,
            present("weight_scale", ws)?,
            wz,
            wg,
            weight_shape,
            group_size,
            symmetric,
            actorder,
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn build_marlin(
    qweight: TensorArg,
    scales: TensorArg,
    zeros: TensorArg,
    g_idx: TensorArg,
    perm: TensorArg,
    group_size: i64,
    sym: bool,
    desc_act: bool,
    zero_layout: &str,
    shard: &str,
    rank: i64,
    world: i64,
) -> Result<BuiltFrame, String> {
    let (qw, s, z) = (take("qweight", qweight), take("scales", scales), take("zeros", zeros));
    let (g, p) = (take("g_idx", g_idx), take("perm", perm));
    guarded(|| {
        let sh = Shard::parse(shard, rank, world)?;
        let kn = dims2(&qw).map(|(r, c)| (r * 16, c / 2));
        let (qw, s) = (present("qweight", qw)?, present("scales", s)?);
        if k_not_full(sh, kn, group_size, desc_act)? {
            return regroup(marlin::held_rows(qw, s, z, g, p, group_size, sym, zero_layout)?, &sh.unwrap());
        }
        marlin::layer(qw, s, z, g, p, group_size, sym, desc_act, zero_layout)
    })
}
