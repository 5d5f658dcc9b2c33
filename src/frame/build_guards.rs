//! Build-time guards: what a checkpoint tensor must be before the frame builder reads it.
//!
//! The sibling `guards.rs` states the frame's own invariants (checked on every GEMM call and, by
//! the builder, on every frame it produces). This module states the rules for the *inputs* of a
//! build: device, dtype, shape per argument, and the value rules (act-order indices, permutations,
//! GPTQ-v1 zero points), each refused with the argument, its value and the rule named.
//! Packed nibbles need no value check: every 4-bit pattern is a valid value.

use tch::{Device, Kind, Tensor};

use crate::error::{arg_err, ensure, Result};
use crate::tensor::{dtype_name, DType, DEVICE_CPU, DEVICE_CUDA};

/// One checkpoint tensor handed to the builder (a shallow clone of the caller's `at::Tensor`),
/// with the dtype and device codes the shim read from it (c10 numbering).
pub struct Input {
    pub name: &'static str,
    pub t: Tensor,
    pub dtype: i32,
    pub device_type: i32,
    pub device_index: i32,
}

impl Input {
    pub fn device_str(&self) -> String {
        match self.device_type {
            DEVICE_CPU => "cpu".into(),
            DEVICE_CUDA => format!("cuda:{}", self.device_index),
            14 => "meta".into(),
            other => format!("DeviceType({other}):{}", self.device_index),
        }
    }

    pub fn dims(&self) -> Vec<i64> {
        self.t.size()
    }

    fn shown_shape(&self) -> String {
        format!("a tensor of shape {:?}", self.dims())
    }

    /// Checks the dtype is one of `allowed`.
    pub fn dtype_in(&self, allowed: &[DType], rule: &str) -> Result<DType> {
        match DType::from_code(self.dtype) {
            Some(d) if allowed.contains(&d) => Ok(d),
            _ => Err(arg_err(self.name, format!("a tensor of dtype {}", dtype_name(self.dtype)), rule)),
        }
    }

    /// Checks the number of dims and returns the sizes.
    pub fn ndim(&self, n: usize, what: &str) -> Result<Vec<i64>> {
        let d = self.dims();
        ensure!(d.len() == n, self.name, self.shown_shape(), &format!("must be {n}-D ({what})"))?;
        Ok(d)
    }

    pub fn shape(&self, want: &[i64], what: &str) -> Result<()> {
        ensure!(self.dims() == want, self.name, self.shown_shape(), &format!("must have shape {want:?} ({what})"))
    }

    /// Checks this tensor lives on `dev` (the device of the layer's first tensor, named `of`).
    pub fn same_device(&self, of: &Input) -> Result<()> {
        ensure!(
            self.device_type == of.device_type && self.device_index == of.device_index,
            self.name,
            format!("a tensor on {}", self.device_str()),
            &format!("must be on the same device as `{}` ({})", of.name, of.device_str()),
        )
    }

    /// The tch device, refusing anything but CPU and CUDA.
    pub fn device(&self) -> Result<Device> {
        match self.device_type {
            DEVICE_CPU => Ok(Device::Cpu),
            DEVICE_CUDA => Ok(Device::Cuda(self.device_index.max(0) as usize)),
            _ => Err(arg_err(self.name, format!("a tensor on {}", self.device_str()), "must be on a CPU or CUDA device")),
        }
    }
}

/// Packed words: int32, exactly `shape`.
pub fn packed(t: &Input, shape: &[i64], what: &str) -> Result<()> {
    t.dtype_in(&[DType::I32], "must be torch.int32 (8 packed int4 values per word)")?;
    t.ndim(shape.len(), what)?;
    t.shape(shape, what)
}

/// Scales: fp16 or bf16 (the frame's activation dtype), exactly `shape`.
pub fn scales(t: &Input, shape: &[i64], what: &str) -> Result<Kind> {
    let d = t.dtype_in(&[DType::F16, DType::BF16], "must be torch.float16 or torch.bfloat16 (the activation dtype)")?;
    t.ndim(shape.len(), what)?;
    t.shape(shape, what)?;
    Ok(if d == DType::F16 { Kind::Half } else { Kind::BFloat16 })
}

/// A required tensor the config calls for.
pub fn required<'a>(t: &'a Option<Input>, name: &'static str, why: &str) -> Result<&'a Input> {
    t.as_ref().ok_or_else(|| arg_err(name, "None", format!("is required: {why}")))
}

/// An index vector: int32 or int64, shape `[len]`; returned as int64.
pub fn index_vector(t: &Input, len: i64, what: &str) -> Result<Tensor> {
    t.dtype_in(&[DType::I32, DType::I64], "must be torch.int32 or torch.int64")?;
    t.ndim(1, what)?;
    t.shape(&[len], what)?;
    Ok(t.t.to_kind(Kind::Int64))
}

/// First index where `mask` (bool) is true, if any. (One device sync, load time only.)
pub fn first_true(mask: &Tensor) -> Option<i64> {
    let flat = mask.reshape([-1]);
    if !bool::try_from(flat.any()).unwrap_or(false) {
        return None;
    }
    Some(flat.to_kind(Kind::Int).argmax(0, false).int64_value(&[]))
}

/// Every value of `v` (int64) lies in `[0, hi)`; names the first offender.
pub fn in_range(name: &'static str, v: &Tensor, hi: i64, rule: &str) -> Result<()> {
    let bad = v.lt(0).logical_or(&v.ge(hi));
    if let Some(i) = first_true(&bad) {
        let val = v.int64_value(&[i]);
        return Err(arg_err(name, format!("{name}[{i}] = {val}"), format!("{rule}: values must lie in [0, {hi})")));
    }
    Ok(())
}

/// A permutation of `0..len` (int64 `[len]`): every value once.
pub fn permutation(name: &'static str, v: &Tensor, len: i64) -> Result<()> {
    in_range(name, v, len, "must be a permutation of 0..K")?;
    let counts = v.bincount::<Tensor>(None, len);
    if let Some(val) = first_true(&counts.ne(1)) {
        let c = counts.int64_value(&[val]);
        return Err(arg_err(
            name,
            format!("a vector in which {val} appears {c} times"),
            "must be a permutation of 0..K (every row index exactly once)",
        ));
    }
    Ok(())
}
