//! Reading a [`TensorDesc`]: dtype and device codes (c10's numbering), shapes, contiguity, extents.

use crate::error::{arg_err, Result};
use crate::ffi::bridge::TensorDesc;

/// `c10::ScalarType` codes the library uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    U8,
    I32,
    I64,
    F16,
    F32,
    BF16,
}

impl DType {
    pub fn from_code(code: i32) -> Option<DType> {
        Some(match code {
            0 => DType::U8,
            3 => DType::I32,
            4 => DType::I64,
            5 => DType::F16,
            6 => DType::F32,
            15 => DType::BF16,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            DType::U8 => 1,
            DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 => 8,
        }
    }
}

/// torch's name for a `c10::ScalarType` code, for error messages.
pub fn dtype_name(code: i32) -> String {
    const NAMES: [&str; 30] = [
        "torch.uint8", "torch.int8", "torch.int16", "torch.int32", "torch.int64", "torch.float16",
        "torch.float32", "torch.float64", "torch.complex32", "torch.complex64", "torch.complex128",
        "torch.bool", "torch.qint8", "torch.quint8", "torch.qint32", "torch.bfloat16",
        "torch.quint4x2", "torch.quint2x4", "torch.bits1x8", "torch.bits2x4", "torch.bits4x2",
        "torch.bits8", "torch.bits16", "torch.float8_e5m2", "torch.float8_e4m3fn",
        "torch.float8_e5m2fnuz", "torch.float8_e4m3fnuz", "torch.uint16", "torch.uint32", "torch.uint64",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("ScalarType({code})"))
}

pub const DEVICE_CPU: i32 = 0;
pub const DEVICE_CUDA: i32 = 1;

pub fn device_name(t: &TensorDesc) -> String {
    match t.device_type {
        DEVICE_CPU => "cpu".into(),
        DEVICE_CUDA => format!("cuda:{}", t.device_index),
        14 => "meta".into(),
        other => format!("DeviceType({other}):{}", t.device_index),
    }
}

impl TensorDesc {
    pub fn dims(&self) -> &[i64] {
        &self.sizes[..self.ndim.clamp(0, 8) as usize]
    }

    pub fn stride_vec(&self) -> &[i64] {
        &self.strides[..self.ndim.clamp(0, 8) as usize]
    }

    pub fn numel(&self) -> i64 {
        self.dims().iter().product()
    }

    /// Row-major contiguous (size-1 dims may carry any stride).
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expect = 1i64;
        for (&s, &st) in self.dims().iter().zip(self.stride_vec()).rev() {
            if s != 1 && st != expect {
                return false;
            }
            expect *= s;
        }
        true
    }

    /// Byte range [lo, hi) this view can touch; empty tensors touch nothing.
    pub fn byte_extent(&self, elem: usize) -> Option<(usize, usize)> {
        if !self.present || self.numel() == 0 {
            return None;
        }
        let mut last = 0i64;
        for (&s, &st) in self.dims().iter().zip(self.stride_vec()) {
            last += (s - 1) * st.max(0);
        }
        Some((self.data, self.data + (last as usize + 1) * elem))
    }

    pub fn shape_str(&self) -> String {
        format!("{:?}", self.dims())
    }
}

/// Checks `t` has one of the allowed dtypes and returns it.
pub fn expect_dtype(arg: &'static str, t: &TensorDesc, allowed: &[DType], rule: &str) -> Result<DType> {
    match DType::from_code(t.dtype) {
        Some(d) if allowed.contains(&d) => Ok(d),
        _ => Err(arg_err(arg, format!("a tensor of dtype {}", dtype_name(t.dtype)), rule)),
    }
}
