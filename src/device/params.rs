//! The kernel parameter block, byte for byte the C struct in `kernels/params.cuh`.

use std::ffi::c_void;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GemmParams {
    pub x: *const c_void,
    pub qweight: *const i32,
    pub scales: *const c_void,
    pub zeros: *const i32,
    pub perm: *const i32,
    pub bias: *const c_void,
    pub out: *mut c_void,
    pub x_row_stride: i64,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub group_size: i32,
    pub workspace: *mut c_void,
    pub total_warps: i32,
    pub max_seg: i32,
}

/// kernels/params.cuh kWorkspaceTicketBytes: a split plan's tickets lie in the workspace's first
/// this many bytes, its partials after them (plan::split_workspace; tests/plan.rs reads the C side).
pub const WORKSPACE_TICKET_BYTES: i64 = 65536;

// Must equal the static_assert in kernels/params.cuh.
const _: () = assert!(std::mem::size_of::<GemmParams>() == 96);
