//! The CPU implementation of the op: dequantize the frame to f32 (the format's definition in
//! src/frame), gather the activation (act order), one f32 GEMM through libtorch (tch), add the
//! bias in f32, round once to the activation dtype. It is a serving fallback and the CPU half of
//! the tests; the tests' ground truth is a separate float64 dequantizer in tests/.

use crate::call::Problem;
use crate::error::{arg_err, Error, Result};
use crate::ffi::bridge::GemmCall;
use crate::tensor::DType;
use half::{bf16, f16};

fn to_f32(dtype: DType, bits: u16) -> f32 {
    match dtype {
        DType::F16 => f16::from_bits(bits).to_f32(),
        _ => bf16::from_bits(bits).to_f32(),
    }
}

fn from_f32(dtype: DType, v: f32) -> u16 {
    match dtype {
        DType::F16 => f16::from_f32(v).to_bits(),
        _ => bf16::from_f32(v).to_bits(),
    }
}

/// W[k, n] in f32, row-major [K, N], from the frame (layout in src/frame/mod.rs).
fn dequantize(p: &Problem, call: &GemmCall) -> Vec<f32> {
    let (k, n) = (p.k() as usize, p.n() as usize);
    let g = p.meta.group() as usize;
    // SAFETY: validate() checked dtype, shape, contiguity and device (host) of each tensor.
    let words = unsafe { std::slice::from_raw_parts(call.qweight.data as *const i32, k / 8 * n) };
    let s = unsafe { std::slice::from_raw_parts(call.scales.data as *const u16, k / g * n) };
    let z = call
        .zeros
        .present
        .then(|| unsafe { std::slice::from_raw_parts(call.zeros.data as *const i32, k / g * n / 8) });
    let q = crate::frame::unpack_qweight(words, k, n);
    let mut w = vec![0f32; k * n];
    for row in 0..k {
        let grp = row / g;
        for col in 0..n {
            let scale = to_f32(p.dtype, s[grp * n + col]);
            let zero = match z {
                Some(z) => ((z[grp * (n / 8) + col / 8] as u32 >> (4 * (col % 8))) & 0xF) as f32,
                None => 8.0,
            };
            w[row * n + col] = (q[row * n + col] as f32 - zero) * scale;
        }
    }
    w
}

/// x as f32 [M, K], gathered through the act-order permutation. x itself has `x_cols` columns
/// (K, or fewer for a shard frame, whose perm maps its K rows into them: src/frame/mod.rs).
fn gather_x(p: &Problem, call: &GemmCall) -> Result<Vec<f32>> {
    let (m, k, x_cols) = (p.m as usize, p.k() as usize, p.meta.x_cols as usize);
    let stride = p.x_row_stride as usize;
    let x = unsafe { std::slice::from_raw_parts(call.x.data as *const u16, (m - 1) * stride + x_cols) };
    let perm = if call.perm.present {
        let perm = unsafe { std::slice::from_raw_parts(call.perm.data as *const i32, k) };
        if let Some((i, &v)) = perm.iter().enumerate().find(|(_, &v)| v < 0 || v as usize >= x_cols) {
            let bound = if p.meta.is_shard() { "x_cols" } else { "K" };
            return Err(arg_err("perm", format!("perm[{i}] = {v}"), format!("entries must lie in [0, {bound} = {x_cols})")));
        }
        Some(perm)
    } else {
        None
    };
    let mut out = vec![0f32; m * k];
    for row in 0..m {
        let src = &x[row * stride..row * stride + x_cols];
        let dst = &mut out[row * k..(row + 1) * k];
        match perm {
            Some(perm) => dst.iter_mut().zip(perm).for_each(|(d, &c)| *d = to_f32(p.dtype, src[c as usize])),
            None => dst.iter_mut().zip(src).for_each(|(d, &b)| *d = to_f32(p.dtype, b)),
        }
    }
    Ok(out)
}

pub fn run(p: &Problem, call: &GemmCall) -> Result<()> {
    let (m, k, n) = (p.m as usize, p.k() as usize, p.n() as usize);
    let xs = gather_x(p, call)?;
    let w = dequantize(p, call);
    let tch_err = |e: tch::TchError| Error::Internal(format!("libtorch f32 GEMM failed: {e}"));
    let xt = tch::Tensor::f_from_slice(&xs).and_then(|t| t.f_view([m as i64, k as i64])).map_err(tch_err)?;
    let wt = tch::Tensor::f_from_slice(&w).and_then(|t| t.f_view([k as i64, n as i64])).map_err(tch_err)?;
    let prod = xt.f_matmul(&wt).map_err(tch_err)?;
    let acc: Vec<f32> = Vec::<f32>::try_from(prod.f_contiguous().map_err(tch_err)?.f_view([-1]).map_err(tch_err)?)
        .map_err(tch_err)?;
    let bias = call
        .bias
        .present
        .then(|| unsafe { std::slice::from_raw_parts(call.bias.data as *const u16, n) });
    // SAFETY: validate() checked out's dtype, shape [.., N], contiguity, device and non-overlap.
    let out = unsafe { std::slice::from_raw_parts_mut(call.out.data as *mut u16, m * n) };
    for row in 0..m {
        for col in 0..n {
            let mut v = acc[row * n + col];
            if let Some(b) = bias {
                v += to_f32(p.dtype, b[col]);
            }
            out[row * n + col] = from_f32(p.dtype, v);
        }
    }
    Ok(())
}
