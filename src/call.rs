//! One op call: validate the descriptors into a [`Problem`], then route it to the CPU
//! implementation or the CUDA planner and launcher by the tensors' device.

use crate::error::{arg_err, ensure, Result};
use crate::ffi::bridge::{GemmCall, TensorDesc};
use crate::frame::{guards, FrameMeta};
use crate::tensor::{device_name, expect_dtype, DType, DEVICE_CPU, DEVICE_CUDA};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda(i32),
}

/// A validated GEMM: `out[M, N] = x[M, K] @ W + bias`.
#[derive(Clone, Copy, Debug)]
pub struct Problem {
    pub m: i64,
    pub meta: FrameMeta,
    pub dtype: DType,
    pub device: Device,
    /// Elements between consecutive rows of the flattened activation.
    pub x_row_stride: i64,
    pub has_bias: bool,
    /// The SM-count override of this call, if any (validated > 0).
    pub num_sms: Option<i64>,
    /// The launch context: whether a programmatic launch here would overlap its predecessor (one
    /// of mate's triggering kernels, or an eager stream: crate::device::launch_overlaps). Plans may
    /// differ by it (src/plan/mod.rs); true where nothing tells (the CPU, a workspace query, which
    /// answers for both).
    pub overlap: bool,
}

impl Problem {
    pub fn n(&self) -> i64 {
        self.meta.n
    }
    pub fn k(&self) -> i64 {
        self.meta.k
    }
    /// The same call on x gathered by the act-order permutation into a contiguous M x K copy
    /// (kernels/gather.cuh): no permutation, x as wide as the frame, row stride K.
    pub fn on_gathered_x(&self) -> Problem {
        Problem { meta: FrameMeta { has_perm: false, x_cols: self.meta.k, ..self.meta }, x_row_stride: self.k(), ..*self }
    }
}

/// What `validate` returns to the functional overload: N for the output allocation.
pub struct Validated {
    pub problem: Problem,
    pub n: i64,
}

/// x's alignment rule (16-byte vector loads of 8 elements on the GPU path; the CPU path keeps the
/// same envelope so a call that works on one device works on the other).
const X_ALIGN_ELEMS: i64 = 8;

fn device_of(t: &TensorDesc) -> Result<Device> {
    match t.device_type {
        DEVICE_CPU => Ok(Device::Cpu),
        DEVICE_CUDA => Ok(Device::Cuda(t.device_index)),
        _ => Err(arg_err("x", format!("a tensor on {}", device_name(t)), "must be on a CPU or CUDA device")),
    }
}

/// Flattens x's leading dims; returns (M, row stride in elements). x has `meta.x_cols` columns
/// (K, or fewer for a shard frame: src/frame/mod.rs).
fn flatten_x(x: &TensorDesc, meta: &FrameMeta) -> Result<(i64, i64)> {
    let k = meta.x_cols;
    let dims = x.dims();
    let strides = x.stride_vec();
    ensure!(!dims.is_empty(), "x", "a 0-dim tensor", "must have at least one dim ([..., K])")?;
    let last = dims.len() - 1;
    ensure!(
        dims[last] == k,
        "x",
        format!("a tensor of shape {}", x.shape_str()),
        if meta.is_shard() {
            format!("its last dim must equal the shard frame's x_cols = {k} (the frame has {} rows)", meta.k)
        } else {
            format!("its last dim must equal the frame's K = {k}")
        }
    )?;
    ensure!(
        strides[last] == 1,
        "x",
        format!("a tensor with strides {strides:?}"),
        "must have unit stride along K (the last dim)",
    )?;
    let m: i64 = dims[..last].iter().product();
    if m == 0 {
        return Ok((0, k));
    }
    // Leading dims must collapse into one row index with a single stride.
    let mut row_stride = k;
    let mut expect: Option<i64> = None;
    for i in (0..last).rev() {
        if dims[i] == 1 {
            continue;
        }
        match expect {
            None => row_stride = strides[i],
            Some(e) => ensure!(
                strides[i] == e,
                "x",
                format!("a tensor of shape {} with strides {strides:?}", x.shape_str()),
                "leading dims must flatten to one row stride (make it contiguous, or pass a 2-D view)",
            )?,
        }
        expect = Some(strides[i] * dims[i]);
    }
    if m > 1 {
        ensure!(
            row_stride >= k && row_stride % X_ALIGN_ELEMS == 0,
            "x",
            format!("a row stride of {row_stride} elements"),
            &format!("rows must not overlap and the row stride must be a multiple of {X_ALIGN_ELEMS} elements (16 bytes)"),
        )?;
    }
    {
        ensure!(
            x.data % 16 == 0,
            "x",
            format!("data at address {:#x}", x.data),
            "must be 16-byte aligned (a view starting mid-vector is not served; call .contiguous())",
        )?;
    }
    Ok((m, row_stride))
}

fn same_device(arg: &'static str, t: &TensorDesc, x: &TensorDesc) -> Result<()> {
    if t.present && (t.device_type != x.device_type || (x.device_type == DEVICE_CUDA && t.device_index != x.device_index)) {
        return Err(arg_err(
            arg,
            format!("a tensor on {}", device_name(t)),
            format!("must be on x's device {}", device_name(x)),
        ));
    }
    Ok(())
}

/// Validates a call. `with_out` also checks the output (the `.out` overload, or the functional
/// overload's second pass after allocation).
pub fn validate(call: &GemmCall, frame_meta: &[i64], with_out: bool) -> Result<Validated> {
    let meta = FrameMeta::parse(frame_meta)?;
    let x = &call.x;
    let dtype = expect_dtype("x", x, &[DType::F16, DType::BF16], "must be torch.float16 or torch.bfloat16")?;
    let device = device_of(x)?;
    let (m, x_row_stride) = flatten_x(x, &meta)?;
    ensure!(
        call.group_size == meta.group_size,
        "group_size",
        call.group_size,
        &format!("must equal the frame's group size {} (frame_meta)", meta.group_size),
    )?;
    let named = [
        ("qweight", &call.qweight),
        ("scales", &call.scales),
        ("zeros", &call.zeros),
        ("perm", &call.perm),
        ("bias", &call.bias),
        ("workspace", &call.workspace),
        ("out", &call.out),
    ];
    for (arg, t) in named {
        same_device(arg, t, x)?;
    }
    guards::check_frame_tensors(&meta, dtype, &call.qweight, &call.scales, &call.zeros, &call.perm)?;
    for (arg, t) in [("qweight", &call.qweight), ("scales", &call.scales), ("zeros", &call.zeros)] {
        ensure!(
            !t.present || t.data % 16 == 0,
            arg,
            format!("data at address {:#x}", t.data),
            "must be 16-byte aligned (kernels copy it in 4- and 16-byte pieces; call .contiguous() on a fresh tensor)",
        )?;
    }
    if call.bias.present {
        let b = &call.bias;
        expect_dtype("bias", b, &[dtype], "must have the activation's dtype")?;
        ensure!(
            b.dims() == [meta.n] && b.is_contiguous(),
            "bias",
            format!("a tensor of shape {}", b.shape_str()),
            &format!("must be a contiguous 1-D tensor of shape [{}] (N)", meta.n),
        )?;
    }
    let num_sms = if call.has_num_sms {
        ensure!(call.num_sms > 0, "num_sms", call.num_sms, "must be a positive SM count, or None for the device's")?;
        Some(call.num_sms)
    } else {
        None
    };
    let problem = Problem { m, meta, dtype, device, x_row_stride, has_bias: call.bias.present, num_sms, overlap: true };

    if call.workspace.present {
        let w = &call.workspace;
        expect_dtype("workspace", w, &[DType::U8], "must be a torch.uint8 byte buffer")?;
        ensure!(w.ndim == 1 && w.is_contiguous(), "workspace", format!("a tensor of shape {}", w.shape_str()), "must be a contiguous 1-D tensor")?;
    }
    if with_out {
        check_out(call, &problem, dtype)?;
    }
    Ok(Validated { problem, n: meta.n })
}

fn check_out(call: &GemmCall, p: &Problem, dtype: DType) -> Result<()> {
    let out = &call.out;
    ensure!(out.present, "out", "None", "the .out overload needs an output tensor")?;
    expect_dtype("out", out, &[dtype], "must have the activation's dtype")?;
    let xd = call.x.dims();
    let mut want: Vec<i64> = xd[..xd.len() - 1].to_vec();
    want.push(p.n());
    ensure!(
        out.dims() == want.as_slice(),
        "out",
        format!("a tensor of shape {}", out.shape_str()),
        &format!("must have shape {want:?} (x's leading dims, then N)"),
    )?;
    ensure!(out.is_contiguous(), "out", format!("a tensor with strides {:?}", out.stride_vec()), "must be contiguous")?;
    ensure!(
        out.data % 16 == 0,
        "out",
        format!("data at address {:#x}", out.data),
        "must be 16-byte aligned (kernels store 16-byte pieces; a view starting mid-vector is not served)",
    )?;
    if let Some((lo, hi)) = out.byte_extent(dtype.size()) {
        let inputs = [
            ("x", &call.x, dtype.size()),
            ("qweight", &call.qweight, 4),
            ("scales", &call.scales, 2),
            ("zeros", &call.zeros, 4),
            ("perm", &call.perm, 4),
            ("bias", &call.bias, 2),
            ("workspace", &call.workspace, 1),
        ];
        for (name, t, elem) in inputs {
            if let Some((a, b)) = t.byte_extent(elem) {
                ensure!(
                    hi <= a || b <= lo,
                    "out",
                    format!("memory [{lo:#x}, {hi:#x})"),
                    &format!("must not overlap input `{name}` [{a:#x}, {b:#x})"),
                )?;
            }
        }
    }
    Ok(())
}

/// Validates and computes one call. Returns 0, or — launching nothing — the bytes of zeroed
/// workspace the call needs when the caller passed none and `own_workspace` is false (the raw
/// entry's contract). With `own_workspace` (the op) such a call uses the op's own buffer
/// (src/device/workspace.rs) and always returns 0.
pub fn run(call: &GemmCall, frame_meta: &[i64], own_workspace: bool) -> Result<i64> {
    let mut p = validate(call, frame_meta, true)?.problem;
    if p.m == 0 {
        return Ok(0);
    }
    match p.device {
        Device::Cpu => crate::reference::run(&p, call).map(|_| 0),
        Device::Cuda(index) => {
            p.overlap = crate::device::launch_overlaps(index, call.stream)?;
            let plan = crate::plan::plan(&p, &crate::device::registry::device(index)?.caps)?;
            if plan.workspace_bytes > 0 {
                if !call.workspace.present {
                    if !own_workspace {
                        return Ok(plan.workspace_bytes);
                    }
                    let mut with = *call;
                    with.workspace = crate::device::workspace::owned(index, call.stream, plan.workspace_bytes)?;
                    crate::device::launch(&p, &plan, &with)?;
                    return Ok(0);
                }
                let have = call.workspace.numel();
                ensure!(
                    have >= plan.workspace_bytes,
                    "workspace",
                    format!("{have} bytes"),
                    &format!(
                        "this call needs {} zero-initialised bytes (torch.ops.mate.w4a16_workspace_size)",
                        plan.workspace_bytes
                    ),
                )?;
            }
            crate::device::launch(&p, &plan, call)?;
            Ok(0)
        }
    }
}

/// Workspace bytes for `torch.ops.mate.w4a16_workspace_size`.
pub fn workspace_bytes(x: &TensorDesc, frame_meta: &[i64], num_sms: Option<i64>) -> Result<i64> {
    let meta = FrameMeta::parse(frame_meta)?;
    let dtype = expect_dtype("x", x, &[DType::F16, DType::BF16], "must be torch.float16 or torch.bfloat16")?;
    let device = device_of(x)?;
    let (m, x_row_stride) = flatten_x(x, &meta)?;
    if let Some(s) = num_sms {
        ensure!(s > 0, "num_sms", s, "must be a positive SM count, or None for the device's")?;
    }
    let p = Problem { m, meta, dtype, device, x_row_stride, has_bias: false, num_sms, overlap: true };
    match device {
        Device::Cpu => Ok(0),
        _ if m == 0 => Ok(0),
        Device::Cuda(index) => {
            // the call's launch context is not known here: the larger of its two plans' needs
            let caps = &crate::device::registry::device(index)?.caps;
            let plain = Problem { overlap: false, ..p };
            Ok(crate::plan::plan(&p, caps)?.workspace_bytes.max(crate::plan::plan(&plain, caps)?.workspace_bytes))
        }
    }
}
