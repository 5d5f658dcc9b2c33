//! mate: W4A16 GEMM (int4 weights x fp16/bf16 activations) for PyTorch.
//!
//! Layout of the crate, in the order a call flows:
//! - [`ffi`]: the `cxx` bridge the C++ shim (cpp/) calls with plain tensor descriptors;
//! - [`call`]: validation of one call into a [`call::Problem`], and routing by device;
//! - [`frame`]: the weight frame layout (versioned) and its invariants;
//! - [`plan`]: which compiled kernel variant serves a problem (`kernels/variants.def` is the list);
//! - [`device`]: the CUDA driver (dlopen), the embedded kernels, the launch;
//! - [`reference`]: the CPU implementation;
//! - [`raw`]: the C ABI entry without the torch dispatcher (microbenchmarks, plain-pointer hosts).

pub mod call;
pub mod device;
pub mod error;
pub mod ffi;
pub mod frame;
pub mod plan;
pub mod raw;
pub mod reference;
pub mod tensor;
