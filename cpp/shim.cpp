// The C++ shim: op schemas and registrations (CPU, CUDA, Meta), and at::Tensor -> descriptor.
// It holds no decisions: every check, plan and launch happens in Rust (src/ffi.rs).
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "call_rust.h"
#include "rust/cxx.h"
#include "mate/src/ffi.rs.h"

namespace {

using mate::ffi::GemmCall;
using mate::ffi::TensorDesc;
using OptTensor = std::optional<at::Tensor>;

constexpr int64_t kMaxDims = 8;

TensorDesc describe(const char* arg, const at::Tensor& t, bool with_data = true) {
  TensorDesc d{};
  d.present = true;
  TORCH_CHECK_VALUE(t.dim() <= kMaxDims, "mate: argument `", arg, "` = a tensor of ", t.dim(),
                    " dims: at most ", kMaxDims, " dims are supported");
  d.data = with_data ? reinterpret_cast<size_t>(t.data_ptr()) : 0;
  d.dtype = static_cast<int32_t>(t.scalar_type());
  d.device_type = static_cast<int32_t>(t.device().type());
  d.device_index = t.device().index();
  d.ndim = static_cast<int32_t>(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

TensorDesc describe(const char* arg, const OptTensor& t) {
  return t.has_value() ? describe(arg, *t) : TensorDesc{};
}

using mate::call_rust;

GemmCall make_call(const at::Tensor& x, const at::Tensor& qweight, const at::Tensor& scales,
                   const OptTensor& zeros, const OptTensor& perm, const OptTensor& bias,
                   int64_t group_size, std::optional<int64_t> num_sms, const OptTensor& workspace) {
  GemmCall c{};
  c.x = describe("x", x);
  c.qweight = describe("qweight", qweight);
  c.scales = describe("scales", scales);
  c.zeros = describe("zeros", zeros);
  c.perm = describe("perm", perm);
  c.bias = describe("bias", bias);
  c.workspace = describe("workspace", workspace);
  c.group_size = group_size;
  c.has_num_sms = num_sms.has_value();
  c.num_sms = num_sms.value_or(0);
  if (x.is_cuda()) {
    c.stream = reinterpret_cast<size_t>(
        c10::impl::getDeviceGuardImpl(x.device().type())->getStream(x.device()).native_handle());
  }
  return c;
}

rust::Slice<const int64_t> slice(c10::IntArrayRef v) { return {v.data(), v.size()}; }

// Runs the call. A split-K call without a workspace uses the op's own (src/device/workspace.rs),
// so Rust never asks the op for one.
void run(GemmCall& c, c10::IntArrayRef frame_meta) {
  const int64_t need = call_rust([&] { return mate::ffi::gemm_run(c, slice(frame_meta)); });
  TORCH_INTERNAL_ASSERT(need == 0, "mate: the op was asked for ", need, " bytes of workspace");
}

void gemm_out(const at::Tensor& x, const at::Tensor& qweight, c10::IntArrayRef frame_meta,
                     const at::Tensor& scales, const OptTensor& zeros, const OptTensor& perm,
                     const OptTensor& bias, int64_t group_size, std::optional<int64_t> num_sms,
                     const OptTensor& workspace, at::Tensor& out) {
  c10::OptionalDeviceGuard guard;
  if (x.is_cuda()) guard.reset_device(x.device());
  GemmCall c = make_call(x, qweight, scales, zeros, perm, bias, group_size, num_sms, workspace);
  c.out = describe("out", out);
  run(c, frame_meta);
}

at::Tensor gemm(const at::Tensor& x, const at::Tensor& qweight, c10::IntArrayRef frame_meta,
                const at::Tensor& scales, const OptTensor& zeros, const OptTensor& perm,
                const OptTensor& bias, int64_t group_size, std::optional<int64_t> num_sms,
                const OptTensor& workspace) {
  c10::OptionalDeviceGuard guard;
  if (x.is_cuda()) guard.reset_device(x.device());
  GemmCall c = make_call(x, qweight, scales, zeros, perm, bias, group_size, num_sms, workspace);
  const int64_t n = call_rust([&] { return mate::ffi::gemm_out_cols(c, slice(frame_meta)); });
  auto sizes = x.sizes().vec();
  sizes.back() = n;
  at::Tensor out = at::empty(sizes, x.options());
  c.out = describe("out", out);
  run(c, frame_meta);
  return out;
}

// Meta: shapes only (symbolic under torch.compile); N comes from the frame metadata.
at::Tensor gemm_meta(const at::Tensor& x, const at::Tensor&, c10::IntArrayRef frame_meta,
                     const at::Tensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                     int64_t, std::optional<int64_t>, const OptTensor&) {
  const int64_t n = call_rust([&] { return mate::ffi::meta_out_cols(slice(frame_meta)); });
  auto sizes = x.sym_sizes().vec();
  TORCH_CHECK_VALUE(!sizes.empty(), "mate: argument `x` = a 0-dim tensor: must have at least one dim ([..., K])");
  sizes.back() = n;
  return at::empty_symint(sizes, x.options());
}

void gemm_out_meta(const at::Tensor&, const at::Tensor&, c10::IntArrayRef frame_meta,
                   const at::Tensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                   int64_t, std::optional<int64_t>, const OptTensor&, at::Tensor&) {
  call_rust([&] { return mate::ffi::meta_out_cols(slice(frame_meta)); });
}

int64_t workspace_size(const at::Tensor& x, c10::IntArrayRef frame_meta, std::optional<int64_t> num_sms) {
  const TensorDesc d = describe("x", x, /*with_data=*/false);
  return call_rust([&] {
    return mate::ffi::workspace_bytes(d, slice(frame_meta), num_sms.has_value(), num_sms.value_or(0));
  });
}

std::vector<int64_t> frame_meta(int64_t k, int64_t n, int64_t group_size, bool has_zeros, bool has_perm,
                                std::optional<int64_t> x_cols) {
  rust::Vec<int64_t> v = call_rust([&] {
    return mate::ffi::frame_meta(k, n, group_size, has_zeros, has_perm, x_cols.has_value(), x_cols.value_or(0));
  });
  return std::vector<int64_t>(v.begin(), v.end());
}

void set_num_sms(std::optional<int64_t> n) {
  call_rust([&] { mate::ffi::set_num_sms(n.has_value(), n.value_or(0)); });
}

void force_variant(std::optional<std::string> symbol) {
  const std::string s = symbol.value_or("");
  call_rust([&] { mate::ffi::force_variant(rust::Str(s.data(), s.size())); });
}

void force_split(std::optional<int64_t> n) {
  call_rust([&] { mate::ffi::force_split(n.has_value(), n.value_or(0)); });
}

void allow_pairs(bool allow) { mate::ffi::allow_pairs(allow); }

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& v : mate::ffi::variant_names()) out.emplace_back(std::string(v));
  return out;
}

void force_wg_x(std::optional<std::string> path) {
  const std::string s = path.value_or("");
  call_rust([&] { mate::ffi::force_wg_x(rust::Str(s.data(), s.size())); });
}

std::vector<std::string> launch_log(bool enable) {
  std::vector<std::string> out;
  for (const auto& r : mate::ffi::launch_log(enable)) out.emplace_back(std::string(r));
  return out;
}

}  // namespace

// The schemas are frozen: later work adds variants and kernels, not arguments. The .out overload
// returns nothing (the caller holds `out`): a custom op that returns an alias of a mutated input
// cannot be functionalized by torch.compile.
TORCH_LIBRARY(mate, m) {
  m.def(
      "w4a16_gemm(Tensor x, Tensor qweight, int[] frame_meta, Tensor scales, Tensor? zeros=None, "
      "Tensor? perm=None, Tensor? bias=None, int group_size=-1, int? num_sms=None, "
      "Tensor? workspace=None) -> Tensor");
  m.def(
      "w4a16_gemm.out(Tensor x, Tensor qweight, int[] frame_meta, Tensor scales, Tensor? zeros=None, "
      "Tensor? perm=None, Tensor? bias=None, int group_size=-1, int? num_sms=None, "
      "Tensor? workspace=None, *, Tensor(a!) out) -> ()");
  m.def("w4a16_workspace_size(Tensor x, int[] frame_meta, int? num_sms=None) -> int", &workspace_size);
  // x_cols (keyword, optional): a shard frame's x columns (src/frame/mod.rs, the shard invariant).
  m.def("frame_meta(int K, int N, int group_size, bool has_zeros, bool has_perm, *, int? x_cols=None) -> int[]",
        &frame_meta);
  m.def("set_num_sms(int? num_sms) -> ()", &set_num_sms);
  // Test-only hooks (leading underscore): force a kernel variant, list the compiled variants.
  m.def("_force_variant(str? symbol) -> ()", &force_variant);
  m.def("_variants() -> str[]", &variant_names);
  // Test / lab: the split of every bulk and bwg plan (CTAs per tile, as MATE_BULK_SPLIT, which it
  // overrides); None restores planning.
  m.def("_force_split(int? split) -> ()", &force_split);
  // Test / lab: False plans bwg's paired even splits unpaired (no 2-CTA clusters); True restores.
  m.def("_pairs(bool allow) -> ()", &allow_pairs);
  // Debug hook: _launch_log(True) starts recording launches, _launch_log(False) stops; each call
  // returns the records since the previous one ("kernel=... grid=x,y,z ... sms=... split=...").
  m.def("_launch_log(bool enable) -> str[]", &launch_log);
  // Test-only: force the wg family's x path ("cp_async": the per-thread fallback; "tma"; None: the
  // rule in src/device/tma.rs), so a test can run the fallback that no validated call needs today.
  m.def("_force_wg_x(str? path) -> ()", &force_wg_x);
}

TORCH_LIBRARY_IMPL(mate, CPU, m) {
  m.impl("w4a16_gemm", &gemm);
  m.impl("w4a16_gemm.out", &gemm_out);
}

TORCH_LIBRARY_IMPL(mate, CUDA, m) {
  m.impl("w4a16_gemm", &gemm);
  m.impl("w4a16_gemm.out", &gemm_out);
}

TORCH_LIBRARY_IMPL(mate, Meta, m) {
  m.impl("w4a16_gemm", &gemm_meta);
  m.impl("w4a16_gemm.out", &gemm_out_meta);
}
