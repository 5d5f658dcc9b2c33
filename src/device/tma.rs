//! The wg family's activation tensor map: kernels/wg.cuh copies each chunk's x tile (64 k x TM
//! tokens, 128-byte swizzle) with one TMA 2-D copy described by a `CUtensorMap`, encoded here per
//! launch (x's address changes every call, so a map is never cached). Where TMA cannot describe x
//! the kernel falls back to every thread's 16-byte cp.async; the launch log says which path ran.
//! The bwg family (kernels/bwg.cuh) takes x only by TMA, in boxes of [`box_rows`] rows.

use super::driver::{self, Driver};
use crate::call::Problem;
use crate::error::{arg_err, Error, Result};
use crate::tensor::DType;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

/// The wg kernels' second parameter, byte for byte `mate::wg::XArg` in kernels/wg.cuh.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct WgXArg {
    /// A `CUtensorMap` (128 bytes, 64-byte aligned: cuda.h); unset unless `tma == 1`.
    pub map: [u64; 16],
    /// 1: the kernel copies x tiles through `map`; 0: per-thread cp.async (and always under act order).
    pub tma: i32,
}

// Must equal the static_assert in kernels/wg.cuh.
const _: () = assert!(std::mem::size_of::<WgXArg>() == 192 && std::mem::align_of::<WgXArg>() == 64);

/// How a launch brings x in: for wg and bwg the path into shared memory; for the other families
/// only whether act order gathered x first (else the log says `-`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XPath {
    /// One TMA tensor copy per chunk.
    Tma,
    /// Every thread's cp.async, because TMA could not be used; the reason is one word for the log.
    CpAsync(&'static str),
    /// Act order: the columns are gathered through perm (no TMA, no cp.async).
    Gather,
    /// Act order (bwg, wg): x gathered into the workspace by a kernel of its own, then TMA boxes
    /// of that copy (src/device/mod.rs).
    GatheredTma,
    /// Act order (the decode families): x gathered into the workspace first, then read as a plain x.
    Gathered,
}

impl XPath {
    /// The launch log's `x=` value.
    pub fn log_name(&self) -> String {
        match self {
            XPath::Tma => "tma".into(),
            XPath::CpAsync(why) => format!("cp_async:{why}"),
            XPath::Gather => "gather".into(),
            XPath::GatheredTma => "gathered+tma".into(),
            XPath::Gathered => "gathered".into(),
        }
    }
}

/// TMA's rules for this map (cuTensorMapEncodeTiled in cuda.h): the global address 16-byte
/// aligned; the row stride, in bytes, a multiple of 16 and below 2^40, and no shorter than a row;
/// every dimension in [1, 2^32]. `Err` names the broken rule in one word (the log's reason).
///
/// Today's validation of x (src/call.rs: 16-byte aligned data, row stride a multiple of 8
/// elements) already implies all of them, because the cp.async path needs the same 16-byte
/// alignment; the rule stays here so that a relaxed validation or another dtype cannot hand TMA a
/// map the driver refuses: it falls back instead, visibly.
pub fn tma_can_describe(addr: u64, row_stride_bytes: i64, row_bytes: i64, m: i64, k: i64) -> std::result::Result<(), &'static str> {
    const DIM_MAX: i64 = 1 << 32;
    if addr % 16 != 0 {
        return Err("address");
    }
    if row_stride_bytes % 16 != 0 || row_stride_bytes >= 1 << 40 || row_stride_bytes < row_bytes {
        return Err("stride");
    }
    if !(1..=DIM_MAX).contains(&m) || !(1..=DIM_MAX).contains(&k) {
        return Err("dims");
    }
    Ok(())
}

const FORCE_NONE: u8 = 0;
const FORCE_CP_ASYNC: u8 = 1;
const FORCE_TMA: u8 = 2;
/// Test-only (`torch.ops.mate._force_wg_x`): override the rule for every wg launch.
static FORCED: AtomicU8 = AtomicU8::new(FORCE_NONE);

/// Test-only: `Some("cp_async")` routes every wg launch without act order through the cp.async x
/// path (the fallback no validated call reaches today: see [`tma_can_describe`]); `Some("tma")`
/// encodes a map even where the rule says no (the driver's verdict then surfaces as an error);
/// `None` restores the rule.
pub fn force_x_path(path: Option<&str>) -> Result<()> {
    let v = match path {
        None => FORCE_NONE,
        Some("cp_async") => FORCE_CP_ASYNC,
        Some("tma") => FORCE_TMA,
        Some(other) => return Err(arg_err("path", format!("{other:?}"), "must be \"tma\", \"cp_async\" or None")),
    };
    FORCED.store(v, Ordering::Relaxed);
    Ok(())
}

// cuda.h enum values (CUDA 12.0+, unchanged in 13.0).
const CU_TENSOR_MAP_DATA_TYPE_FLOAT16: u32 = 6;
const CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: u32 = 9;
const CU_TENSOR_MAP_INTERLEAVE_NONE: u32 = 0;
const CU_TENSOR_MAP_SWIZZLE_128B: u32 = 3;
const CU_TENSOR_MAP_L2_PROMOTION_L2_128B: u32 = 2;
/// "NONE" fills out-of-bounds elements with zeros: the rows of a last m-tile past M.
const CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: u32 = 0;

/// K elements per box row: one 128-byte swizzle row of 2-byte elements (kernels/wg.cuh's chunk).
const BOX_K: u32 = 64;

/// Whether a launch of token tile `tm` on `m` rows takes x by TMA: only when M fills at least one
/// tile. Measured on the H200 (bench/NOTES.md, session 4, results/2026-11-29-wg-tma-small-m-ab.json):
/// TMA is 3-6 % faster wherever M >= the tile (and up to 10-20 % at M = 128 on 64-token tiles),
/// but up to 25 % slower at M = 32 on the 64-token tile (Llama-8B gate_up 57.4 vs 45.7 us), where
/// half of every box is out of bounds and the copy engine zero-fills it; cp.async skips those rows.
pub fn tma_pays(m: i64, tm: u32) -> bool {
    m >= tm as i64
}

/// The wg kernels' x argument for this launch and the path it selects. `tm` is the variant's
/// token tile (the box's rows).
pub fn wg_x_arg(d: &Driver, p: &Problem, x: *const c_void, has_perm: bool, tm: u32) -> Result<(WgXArg, XPath)> {
    let mut arg = WgXArg { map: [0; 16], tma: 0 };
    if has_perm {
        return Ok((arg, XPath::Gather));
    }
    let forced = FORCED.load(Ordering::Relaxed);
    if forced == FORCE_CP_ASYNC {
        return Ok((arg, XPath::CpAsync("forced")));
    }
    let Some(encode) = d.cuTensorMapEncodeTiled else {
        return Ok((arg, XPath::CpAsync("driver")));
    };
    if forced != FORCE_TMA && !tma_pays(p.m, tm) {
        return Ok((arg, XPath::CpAsync("partial")));
    }
    let elem = p.dtype.size() as i64;
    let stride_bytes = p.x_row_stride.saturating_mul(elem);
    if forced != FORCE_TMA {
        if let Err(why) = tma_can_describe(x as u64, stride_bytes, p.k() * elem, p.m, p.k()) {
            return Ok((arg, XPath::CpAsync(why)));
        }
    }
    encode_x(d, encode, &mut arg, p, x, stride_bytes, tm, "wg")?;
    arg.tma = 1;
    Ok((arg, XPath::Tma))
}

/// Rows of the bwg family's x box for `m` tokens on a `tm`-token tile: M rounded up to a whole
/// 8-row swizzle atom, at most the tile (its half where it takes x in two boxes a chunk:
/// kernels/bwg.cuh computes the same from p.M). A box of the whole tile would make the copy
/// engine zero-fill rows past M, which measured up to 25 % slower in the wg family (see
/// [`tma_pays`]).
pub fn box_rows(m: i64, tm: u32) -> u32 {
    (((m + 7) / 8 * 8) as u32).min(tm / crate::plan::variants::bwg_x_halves(tm))
}

/// The bwg kernels' x argument: always a tensor map (the family has no other x path). Validated
/// calls always satisfy [`tma_can_describe`]; a driver without cuTensorMapEncodeTiled (before
/// CUDA 12.0, which no Hopper-capable torch build runs on) is an error, not a fallback.
pub fn bwg_x_arg(d: &Driver, p: &Problem, x: *const c_void, tm: u32) -> Result<WgXArg> {
    let mut arg = WgXArg { map: [0; 16], tma: 0 };
    let Some(encode) = d.cuTensorMapEncodeTiled else {
        return Err(Error::Internal("the bwg kernels need cuTensorMapEncodeTiled (a CUDA 12.0+ driver); this driver has none".into()));
    };
    let stride_bytes = p.x_row_stride.saturating_mul(p.dtype.size() as i64);
    encode_x(d, encode, &mut arg, p, x, stride_bytes, box_rows(p.m, tm), "bwg")?;
    arg.tma = 1;
    Ok(arg)
}

/// Encodes x (M x K, row stride `stride_bytes`) into `arg.map` with boxes of 64 k x `rows` tokens
/// and 128-byte swizzle; `family` names the kernel in an error.
fn encode_x(
    d: &Driver,
    encode: driver::CuTensorMapEncodeTiled,
    arg: &mut WgXArg,
    p: &Problem,
    x: *const c_void,
    stride_bytes: i64,
    rows: u32,
    family: &str,
) -> Result<()> {
    let (m, k) = (p.m, p.k());
    let dtype = match p.dtype {
        DType::F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DType::BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        other => return Err(Error::Internal(format!("{family} launch with x dtype {other:?}"))),
    };
    let dims: [u64; 2] = [k as u64, m as u64];
    let strides: [u64; 1] = [stride_bytes as u64];
    let bx: [u32; 2] = [BOX_K, rows];
    let unit: [u32; 2] = [1, 1];
    let rc = unsafe {
        encode(
            arg.map.as_mut_ptr().cast(),
            dtype,
            2,
            x as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            bx.as_ptr(),
            unit.as_ptr(),
            CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    driver::check(
        d,
        rc,
        &format!(
            "cuTensorMapEncodeTiled (x of the {family} kernel: {:?} at {x:p}, M = {m}, K = {k}, row stride {stride_bytes} bytes, box {BOX_K} x {rows})",
            p.dtype
        ),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_and_padded_rows_are_described() {
        // fp16, K = 4096: contiguous rows, rows padded to a 16-byte multiple, a single row.
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 8192, 8192, 300, 4096), Ok(()));
        assert_eq!(tma_can_describe(0x7f00_0000_0010, 8192 + 16, 8192, 300, 4096), Ok(()));
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 8192, 8192, 1, 4096), Ok(()));
    }

    #[test]
    fn what_tma_cannot_describe_falls_back_with_a_reason() {
        // An x view starting mid-vector (2 elements in).
        assert_eq!(tma_can_describe(0x7f00_0000_0004, 8192, 8192, 300, 4096), Err("address"));
        // Row stride of K + 4 elements (a slice of wider rows): not a multiple of 16 bytes.
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 8200, 8192, 300, 4096), Err("stride"));
        // Overlapping rows, and a stride past TMA's 2^40-byte limit.
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 4096, 8192, 300, 4096), Err("stride"));
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 1 << 40, 8192, 300, 4096), Err("stride"));
        // Dimensions outside [1, 2^32].
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 8192, 8192, 0, 4096), Err("dims"));
        assert_eq!(tma_can_describe(0x7f00_0000_0000, 8192, 8192, (1 << 32) + 1, 4096), Err("dims"));
    }

    #[test]
    fn tma_only_where_m_fills_a_tile() {
        assert!(!tma_pays(32, 64) && tma_pays(64, 64) && tma_pays(300, 256) && !tma_pays(255, 256));
    }

    #[test]
    fn bwg_boxes_cover_m_in_whole_swizzle_atoms() {
        assert_eq!([box_rows(1, 16), box_rows(9, 16), box_rows(16, 16)], [8, 16, 16]);
        assert_eq!([box_rows(17, 32), box_rows(33, 64), box_rows(64, 64), box_rows(60, 64)], [24, 40, 64, 64]);
    }

    #[test]
    fn the_force_accepts_only_known_paths() {
        assert!(force_x_path(Some("cp_async")).is_ok());
        assert!(force_x_path(None).is_ok());
        let e = force_x_path(Some("bulk")).unwrap_err().to_string();
        assert!(e.contains("`path`") && e.contains("cp_async"), "{e}");
        assert!(force_x_path(None).is_ok());
    }
}
