// The frame-builder ops: checkpoint tensors -> the frame the GEMM reads (src/frame/). Like the
// shim, this file only converts: every check and every decision is made in Rust
// (src/frame/ffi.rs), which receives owned at::Tensor handles and returns new ones.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "call_rust.h"
#include "rust/cxx.h"
#include "mate/src/frame/ffi.rs.h"

namespace {

using mate::frame_ffi::BuiltFrame;
using mate::frame_ffi::TensorArg;
using OptTensor = std::optional<at::Tensor>;
// (qweight, frame_meta, scales, zeros, perm); zeros / perm are empty placeholders when the frame
// has none (its frame_meta flags say so): a schema cannot return Tensor?.
using FrameTuple = std::tuple<at::Tensor, std::vector<int64_t>, at::Tensor, at::Tensor, at::Tensor>;

// A handle Rust takes ownership of (a shallow clone: one more reference, no copy).
TensorArg arg(const at::Tensor& t) {
  TensorArg a{};
  a.ptr = reinterpret_cast<size_t>(new at::Tensor(t));
  a.dtype = static_cast<int32_t>(t.scalar_type());
  a.device_type = static_cast<int32_t>(t.device().type());
  a.device_index = t.device().index();
  return a;
}

TensorArg arg(const OptTensor& t) { return t.has_value() ? arg(*t) : TensorArg{}; }

// Takes back a handle Rust handed over (0: absent -> an empty int32 placeholder).
at::Tensor take(size_t p, const at::TensorOptions& placeholder) {
  if (p == 0) return at::empty({0}, placeholder.dtype(at::kInt));
  at::Tensor* t = reinterpret_cast<at::Tensor*>(p);
  at::Tensor out = std::move(*t);
  delete t;
  return out;
}

using mate::call_rust;

FrameTuple hand_back(BuiltFrame f, const at::Tensor& like) {
  const auto opts = like.options();
  at::Tensor qweight = take(f.qweight, opts);
  at::Tensor scales = take(f.scales, opts);
  at::Tensor zeros = take(f.zeros, opts);
  at::Tensor perm = take(f.perm, opts);
  return {qweight, std::vector<int64_t>(f.meta.begin(), f.meta.end()), scales, zeros, perm};
}

// The shard keywords (tensor parallelism, src/frame/shard.rs): style None / "column" / "row".
rust::Str style_of(const std::optional<c10::string_view>& shard) {
  return shard.has_value() ? rust::Str(shard->data(), shard->size()) : rust::Str("");
}

FrameTuple from_gptq(const at::Tensor& qweight, const at::Tensor& scales, const OptTensor& qzeros,
                     const OptTensor& g_idx, int64_t group_size, bool sym, bool desc_act,
                     c10::string_view checkpoint_format, std::optional<c10::string_view> shard, int64_t rank,
                     int64_t world) {
  c10::OptionalDeviceGuard g;
  if (qweight.is_cuda()) g.reset_device(qweight.device());
  BuiltFrame f = call_rust([&] {
    return mate::frame_ffi::build_gptq(arg(qweight), arg(scales), arg(qzeros), arg(g_idx), group_size, sym,
                                       desc_act, rust::Str(checkpoint_format.data(), checkpoint_format.size()),
                                       style_of(shard), rank, world);
  });
  return hand_back(std::move(f), qweight);
}

FrameTuple from_awq(const at::Tensor& qweight, const at::Tensor& scales, const OptTensor& qzeros,
                    int64_t group_size, std::optional<c10::string_view> shard, int64_t rank, int64_t world) {
  c10::OptionalDeviceGuard g;
  if (qweight.is_cuda()) g.reset_device(qweight.device());
  BuiltFrame f = call_rust(
      [&] { return mate::frame_ffi::build_awq(arg(qweight), arg(scales), arg(qzeros), group_size, style_of(shard), rank,
                                              world); });
  return hand_back(std::move(f), qweight);
}

FrameTuple from_compressed(const at::Tensor& weight_packed, const at::Tensor& weight_scale,
                           const OptTensor& weight_zero_point, const OptTensor& weight_g_idx,
                           c10::IntArrayRef weight_shape, int64_t group_size, bool symmetric,
                           std::optional<c10::string_view> actorder, std::optional<c10::string_view> shard,
                           int64_t rank, int64_t world) {
  c10::OptionalDeviceGuard g;
  if (weight_packed.is_cuda()) g.reset_device(weight_packed.device());
  const std::string order = actorder.has_value() ? std::string(*actorder) : std::string();
  BuiltFrame f = call_rust([&] {
    return mate::frame_ffi::build_compressed(arg(weight_packed), arg(weight_scale), arg(weight_zero_point),
                                             arg(weight_g_idx),
                                             rust::Slice<const int64_t>(weight_shape.data(), weight_shape.size()),
                                             group_size, symmetric, rust::Str(order), style_of(shard), rank, world);
  });
  return hand_back(std::move(f), weight_packed);
}

FrameTuple from_marlin(const at::Tensor& qweight, const at::Tensor& scales, const OptTensor& zeros,
                       const OptTensor& g_idx, const OptTensor& perm, int64_t group_size, bool sym,
                       bool desc_act, std::optional<c10::string_view> zero_layout,
                       std::optional<c10::string_view> shard, int64_t rank, int64_t world) {
  c10::OptionalDeviceGuard g;
  if (qweight.is_cuda()) g.reset_device(qweight.device());
  const std::string layout = zero_layout.has_value() ? std::string(*zero_layout) : std::string();
  BuiltFrame f = call_rust([&] {
    return mate::frame_ffi::build_marlin(arg(qweight), arg(scales), arg(zeros), arg(g_idx), arg(perm), group_size,
                                         sym, desc_act, rust::Str(layout), style_of(shard), rank, world);
  });
  return hand_back(std::move(f), qweight);
}

}  // namespace

// Load-time ops, one per checkpoint convention. Configuration arguments are keyword-only: the
// caller names the convention it holds (README.md, torch_ops/mate/frame.py).
#define MATE_FRAME_RETURNS " -> (Tensor qweight, int[] frame_meta, Tensor scales, Tensor zeros, Tensor perm)"
#define MATE_SHARD_ARGS ", str? shard=None, int rank=0, int world=1)"
TORCH_LIBRARY_FRAGMENT(mate, m) {
  m.def("frame_from_gptq(Tensor qweight, Tensor scales, Tensor? qzeros, Tensor? g_idx, *, "
        "int group_size, bool sym, bool desc_act, str checkpoint_format" MATE_SHARD_ARGS MATE_FRAME_RETURNS);
  m.def("frame_from_awq(Tensor qweight, Tensor scales, Tensor? qzeros, *, int group_size" MATE_SHARD_ARGS
        MATE_FRAME_RETURNS);
  m.def("frame_from_compressed(Tensor weight_packed, Tensor weight_scale, "
        "Tensor? weight_zero_point, Tensor? weight_g_idx, *, int[] weight_shape, int group_size, "
        "bool symmetric, str? actorder=None" MATE_SHARD_ARGS MATE_FRAME_RETURNS);
  m.def("frame_from_marlin(Tensor qweight, Tensor scales, Tensor? zeros, Tensor? g_idx, "
        "Tensor? perm, *, int group_size, bool sym, bool desc_act, str? zero_layout=None" MATE_SHARD_ARGS
        MATE_FRAME_RETURNS);
}

TORCH_LIBRARY_IMPL(mate, CPU, m) {
  m.impl("frame_from_gptq", &from_gptq);
  m.impl("frame_from_awq", &from_awq);
  m.impl("frame_from_compressed", &from_compressed);
  m.impl("frame_from_marlin", &from_marlin);
}

TORCH_LIBRARY_IMPL(mate, CUDA, m) {
  m.impl("frame_from_gptq", &from_gptq);
  m.impl("frame_from_awq", &from_awq);
  m.impl("frame_from_compressed", &from_compressed);
  m.impl("frame_from_marlin", &from_marlin);
}

// Not differentiable: autograd falls through (no grad_fn on the frame, even from Parameters).
TORCH_LIBRARY_IMPL(mate, Autograd, m) {
  m.impl("frame_from_gptq", torch::CppFunction::makeFallthrough());
  m.impl("frame_from_awq", torch::CppFunction::makeFallthrough());
  m.impl("frame_from_compressed", torch::CppFunction::makeFallthrough());
  m.impl("frame_from_marlin", torch::CppFunction::makeFallthrough());
}

// Meta tensors reach Rust too, which refuses them with the rule named (frames hold data; building
// one is load-time work, not something to trace).
TORCH_LIBRARY_IMPL(mate, Meta, m) {
  m.impl("frame_from_gptq", &from_gptq);
  m.impl("frame_from_awq", &from_awq);
  m.impl("frame_from_compressed", &from_compressed);
  m.impl("frame_from_marlin", &from_marlin);
}
