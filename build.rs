//! Build: (1) cxx generates and compiles the bridge's C++ half; (2) CMake builds the shim against
//! torch's headers and the kernels' fatbin with nvcc; (3) the variant list in kernels/variants.def
//! becomes Rust code for the planner. Torch and nvcc are found through the Python environment
//! (`MATE_PYTHON`, default `python3`), or `MATE_NVCC` for nvcc. `MATE_KERNEL_FLAGS`: extra nvcc flags
//! for lab builds (bench/lab/), never for the library that ships.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every kernel is built for Hopper (sm_90a, what the H200 runs) and for sm_80 (compile-only fallback).
const GENCODE: &str = "-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=sm_80";

fn python() -> String {
    env::var("MATE_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn py(code: &str) -> String {
    let out = Command::new(python())
        .args(["-c", code])
        .output()
        .unwrap_or_else(|e| panic!("mate build: cannot run `{}` (set MATE_PYTHON to the venv's python): {e}", python()));
    if !out.status.success() {
        panic!(
            "mate build: `{} -c ...` failed; is torch==2.11.0 installed there? (run scripts/setup.sh)\n{}",
            python(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn find_nvcc() -> PathBuf {
    if let Ok(p) = env::var("MATE_NVCC") {
        return PathBuf::from(p);
    }
    let wheel = py("import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'bin', 'nvcc'))");
    let wheel = PathBuf::from(wheel);
    if wheel.exists() {
        return wheel;
    }
    panic!(
        "mate build: nvcc not found at {} (install the CUDA 13.0 compiler wheels: scripts/setup.sh) \
         and MATE_NVCC is not set",
        wheel.display()
    );
}

/// kernels/variants.def -> OUT_DIR/variants.rs (the planner's table).
fn generate_variants(out_dir: &Path) {
    let text = std::fs::read_to_string("kernels/variants.def").expect("read kernels/variants.def");
    let mut rs = String::from("pub static VARIANTS: &[Variant] = &[\n");
    let mut count = 0;
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("MATE_VARIANT(")) {
        let inner = line.trim_start_matches("MATE_VARIANT(").trim_end_matches(')');
        let f: Vec<&str> = inner.split(',').map(str::trim).collect();
        assert_eq!(f.len(), 10, "kernels/variants.def: expected 10 fields in `{line}`");
        let family = match f[1] {
            "dec" => "Family::Dec",
            "dect" => "Family::Dect",
            "wmma" => "Family::Wmma",
            "wg" => "Family::Wg",
            "bulk" => "Family::Bulk",
            "bwg" => "Family::Bwg",
            other => panic!("kernels/variants.def: family `{other}` has no Family in src/plan/variants.rs"),
        };
        let dtype = match f[2] {
            "f16" => "DType::F16",
            "bf16" => "DType::BF16",
            other => panic!("kernels/variants.def: unknown dtype `{other}`"),
        };
        let flag = |i: usize, name: &str| match f[i] {
            "0" => "false",
            "1" => "true",
            other => panic!("kernels/variants.def: {name} must be 0 or 1 (split: 2-5 for bwg), got `{other}`"),
        };
        // split 2-5 (bwg only): split, with the first ring's weights before pdl_wait (2, 5), by
        // stream-K (3), the even split's sum sliced over its parts (4, 5)
        let (ring_first, stream_k, sliced) = (f[8] == "2" || f[8] == "5", f[8] == "3", f[8] == "4" || f[8] == "5");
        let bwg_only = ring_first || stream_k || sliced;
        assert!(!bwg_only || f[1] == "bwg", "kernels/variants.def: split = 2-5 is bwg's only, in `{line}`");
        let (zeros, split, pre) = (flag(3, "zeros"), if bwg_only { "true" } else { flag(8, "split") }, flag(9, "pre"));
        writeln!(
            rs,
            "    Variant {{ symbol: \"{}\", family: {family}, dtype: {dtype}, zeros: {zeros}, \
             tm: {}, tn: {}, wk: {}, p: {}, split: {split}, ring_first: {ring_first}, stream_k: {stream_k}, sliced: {sliced}, pre: {pre} }},",
            f[0], f[4], f[5], f[6], f[7]
        )
        .unwrap();
        count += 1;
    }
    assert!(count > 0, "kernels/variants.def lists no variant");
    rs.push_str("];\n");
    std::fs::write(out_dir.join("variants.rs"), rs).unwrap();
}

/// The planner's measured constants (written by bench/calibrate.py on the GPU, checked in).
const CALIBRATION: &str = "src/plan/calibration-h200.txt";
const CALIBRATION_KEYS: [&str; 5] =
    ["wg.fixed_ns", "wg.mma_ns_per_token", "wg.issue_ns", "wg.hbm_bytes_per_ns", "wg.reduce_ns_per_token"];

/// CALIBRATION -> OUT_DIR/calibration.rs (`WG_COST`); a missing or malformed value fails the build.
fn generate_calibration(out_dir: &Path) {
    let text = std::fs::read_to_string(CALIBRATION).expect("read src/plan/calibration-h200.txt");
    let mut values = std::collections::HashMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (k, v) = line.split_once('=').unwrap_or_else(|| panic!("{CALIBRATION}: `{line}` is not `key = value`"));
        values.insert(k.trim().to_string(), v.trim().to_string());
    }
    let mut rs = String::from("pub const WG_COST: WgCost = WgCost {\n");
    for key in CALIBRATION_KEYS {
        let v = values.get(key).unwrap_or_else(|| panic!("{CALIBRATION}: missing `{key}`"));
        let x: f64 = v.parse().unwrap_or_else(|_| panic!("{CALIBRATION}: `{key} = {v}` is not a number"));
        assert!(x.is_finite() && x >= 0.0, "{CALIBRATION}: `{key} = {v}` must be finite and >= 0");
        writeln!(rs, "    {}: {x:?},", key.trim_start_matches("wg.")).unwrap();
    }
    rs.push_str("};\n");
    std::fs::write(out_dir.join("calibration.rs"), rs).unwrap();
}

fn main() {
    for p in ["build.rs", "CMakeLists.txt", "cpp", "kernels", "src/ffi.rs", "src/frame/ffi.rs", CALIBRATION] {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rerun-if-env-changed=MATE_PYTHON");
    println!("cargo:rerun-if-env-changed=MATE_NVCC");
    println!("cargo:rerun-if-env-changed=MATE_KERNEL_FLAGS");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    generate_variants(&out_dir);
    generate_calibration(&out_dir);

    cxx_build::bridges(["src/ffi.rs", "src/frame/ffi.rs"]).std("c++17").flag_if_supported("-O2").compile("mate_bridge");

    let torch = py(
        "import torch, os; from torch.utils.cpp_extension import include_paths, library_paths; \
         print(';'.join(include_paths())); print(library_paths()[0]); print(torch.__version__)",
    );
    let mut lines = torch.lines();
    let includes = lines.next().unwrap().to_string();
    let torch_lib = lines.next().unwrap().to_string();
    let version = lines.next().unwrap_or("");
    if !version.starts_with("2.11.") {
        println!("cargo:warning=mate is pinned to torch 2.11.0; building against torch {version}");
    }
    let nvcc = find_nvcc();

    let dst = cmake::Config::new(".")
        .define("MATE_TORCH_INCLUDES", &includes)
        .define("MATE_CXXBRIDGE_INCLUDE", out_dir.join("cxxbridge/include"))
        .define("MATE_NVCC", &nvcc)
        .define("MATE_GENCODE", GENCODE)
        // lab builds only (e.g. -DMATE_PROBE: kernels/bwg.cuh's phase probe); empty otherwise
        .define("MATE_KERNEL_FLAGS", env::var("MATE_KERNEL_FLAGS").unwrap_or_default())
        .define("CMAKE_BUILD_TYPE", "Release")
        .build();
    let lib = dst.join("lib");
    println!("cargo:rustc-env=MATE_FATBIN_PATH={}", lib.join("mate_kernels.fatbin").display());
    println!("cargo:rustc-link-search=native={}", lib.display());
    // whole-archive: the shim's TORCH_LIBRARY registrations are static initializers nothing references.
    println!("cargo:rustc-link-lib=static:+whole-archive=mate_shim");
    println!("cargo:rustc-link-search=native={torch_lib}");
    for l in ["torch", "torch_cpu", "c10"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{torch_lib}");
}
